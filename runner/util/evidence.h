/* evidence.h -- a run's evidence files written whole: a buffer or a JSON value under its
 * final name atomically (atomicfile.h does it), and a measured figure as JSON. Never prints;
 * errors go to err. The files' names are paths.h's; what identifies a run, identity.h's. */
#ifndef KB_EVIDENCE_H
#define KB_EVIDENCE_H

#include <jansson.h>
#include <stddef.h>

/* Write data to path atomically (atomicfile.h's kb_afile_write). 0 or -1 with err. */
int kb_write_atomic(const char *path, const void *data, size_t len, char *err, size_t errlen);
/* The same for a JSON value (kb_afile_write_json: pretty, keys in insertion order, a
 * trailing newline). */
int kb_write_json_atomic(const char *path, const json_t *v, char *err, size_t errlen);

/* A measured figure as JSON: null where it is not finite (an empty histogram's NAN, which
 * JSON cannot carry), as load.json writes it. */
json_t *kb_json_figure(double v);

/* The most bytes an evidence JSON file may hold: the largest a run writes (a knee's
 * knee.json, a load.json's histograms) is a few hundred KiB; past this a file is not
 * evidence, and reading it whole would cost the time and memory of its size. */
#define KB_EVIDENCE_MAX_BYTES (16u << 20)

/* The JSON document in the evidence file at path, read bounded: a regular file only (opened
 * without blocking and without following a link, so a FIFO or a device is refused at once,
 * never waited on), at most KB_EVIDENCE_MAX_BYTES. NULL with je->text saying why (je may be
 * NULL); errno ENOENT when there is no such file, so a caller may tell absent from bad. */
json_t *kb_evidence_load(const char *path, json_error_t *je);

/* kb_evidence_load, then its schema_version checked (schema.h): what every reader of
 * evidence calls. 0 with *out; KB_EVIDENCE_UNREADABLE (errno ENOENT when absent) or
 * KB_EVIDENCE_REFUSED (a malformed version, or a newer kneebench's file, never read by
 * guessing) with *out NULL and err naming path and why. */
enum { KB_EVIDENCE_UNREADABLE = -1, KB_EVIDENCE_REFUSED = -2 };
int kb_evidence_read(const char *path, json_t **out, char *err, size_t errlen);

/* Whether the load figures o (a load.json, or verdict.json's "load") could have been
 * measured: delivery finite in 0 .. 1 plus the warmup's backlog share (answers to requests
 * sent in the warmup land in the measured window: 1 + warmup_s / duration_s), every latency
 * of every histogram (*_us) and achieved_rps finite and >= 0, the counts whole and >= 0
 * with scheduled == completed + errors.total. A figure absent is left to the reader. 0, or
 * -1 with err naming file and the first figure that is not. */
int kb_evidence_check_load(const json_t *o, const char *file, char *err, size_t errlen);

#endif
