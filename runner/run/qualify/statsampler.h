/* statsampler.h -- a server's /stats read on its own thread, densely and apart from the
 * load, for `kneebench qualify` (docs/protocol.md, "The db qualification").
 *
 * One read every every_s on an absolute schedule (a late read skips the ticks it missed,
 * never bursts), all over one kept-open connection: a connection per read would move the
 * descriptor count the run samples. Each sample is kept for the judgement and appended as a
 * JSON line (conn counts the connections opened, so a reconnect shows):
 *   {"t_s":1.25,"utc":"2026-12-02T13:45:01.250Z","read_ms":0.41,"conn":1,"ok":true,"stats":{..}}
 *   {"t_s":1.30,"utc":"...","read_ms":1000.1,"conn":1,"ok":false,"error":"..."}
 * t_s counts from the caller's origin (the load's start, kb_fixture_now_s()'s clock). The file
 * gets its final name when the sampler stops (atomicfile.h). The thread blocks every signal:
 * the command's handler runs on its main thread. Never prints. */
#ifndef KB_STATSAMPLER_H
#define KB_STATSAMPLER_H

#include "runner/run/qualjudge.h"

#include <jansson.h>
#include <stddef.h>

struct kb_stats_sampler;

/* Start reading http://host:port/path (host NULL: 127.0.0.1) every every_s seconds, the
 * samples' times counted from t0 (kb_fixture_now_s()), into path. NULL with err. */
struct kb_stats_sampler *kb_stats_sampler_start(const char *host, int port, const char *path,
                                                double every_s, double t0, const char *out,
                                                char *err, size_t errlen);

/* A copy of the newest successful sample's object (NULL when none yet), for the caller to
 * json_decref, and its t_s. */
json_t *kb_stats_sampler_latest(struct kb_stats_sampler *s, double *t_s);

/* Stop the thread and close the evidence file; keep: give it its final name (else it is
 * removed: a partial series is no evidence). 0, or -1 with err when, keeping it, a line
 * could not be written or the sync or rename failed. The series stays readable. */
int kb_stats_sampler_stop(struct kb_stats_sampler *s, int keep, char *err, size_t errlen);

/* The series (after stop): n samples, oldest first; they belong to the sampler. */
const struct kb_stats_sample *kb_stats_sampler_series(const struct kb_stats_sampler *s,
                                                      size_t *n);

/* Stop if still running (cleanup: errors dropped) and free everything. NULL is a no-op. */
void kb_stats_sampler_free(struct kb_stats_sampler *s);

#endif
