/* hlogread.h -- reads back a point's interval log (series.hlog, runner/load/hlog.h), so that a
 * run's latency can be had over any stretch of whole intervals, not only per second or over
 * the whole point (the soak's windows, runner/run/soak/soakwin.h).
 *
 * Owns: kb_hlog_decode_add (one V2 compressed payload -- base64, the 8-byte compression
 * header, zlib, the 40-byte encoding header, zigzag LEB128 counts with zero runs as negative
 * numbers, as HdrHistogram_c's hdr_decode_compressed reads them -- added into a histogram
 * of the same layout) and kb_hlog_read (every interval line of a file, in order, handed to
 * the caller). Nothing here prints; errors go to the caller's buffer. */
#ifndef KB_HLOGREAD_H
#define KB_HLOGREAD_H

#include <stddef.h>

#include "runner/load/hist.h"

/* Decode the base64 payload and add its counts into h, whose layout (lowest, highest,
 * significant figures) must be the payload's. 0, or -1 with err. */
int kb_hlog_decode_add(const char *payload, struct kb_hist *h, char *err, size_t errlen);

/* One interval line: its start and length (s, from the log's base time) and its payload. */
typedef int (*kb_hlog_interval_cb)(void *arg, double start_s, double length_s,
                                   const char *payload, char *err, size_t errlen);

/* Every interval of the log at path, in file order (comment and header lines skipped, a
 * "Tag=..." prefix allowed); cb's -1 stops the read. 0, or -1 with err (unreadable file, a
 * malformed line, cb's error). */
int kb_hlog_read(const char *path, kb_hlog_interval_cb cb, void *arg, char *err, size_t errlen);

#endif
