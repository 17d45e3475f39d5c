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

#endif
