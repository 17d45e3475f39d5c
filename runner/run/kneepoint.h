/* kneepoint.h -- one sample of `kneebench knee`: the load run in this process against the
 * user's server, the server watched beside it (runner/run/procwatch.h), the evidence in the
 * sample's directory, and its verdict, judged as a curve point is (runner/run/judgement.h;
 * no calibration: the could-decide rule alone says whether the client is trusted).
 *
 * Owns the sample's evidence, under the curve's names: load.json, corrected.hgrm,
 * uncorrected.hgrm, series.hlog, series.csv, samples.csv, verdict.json, and DONE last
 * (written only when every other file was); a sample without DONE is measured again. */
#ifndef KB_KNEEPOINT_H
#define KB_KNEEPOINT_H

#include <sched.h>
#include <stddef.h>

#include "runner/load/target.h"
#include "runner/run/kneesearch.h"
#include "runner/run/procwatch.h"
#include "runner/run/verdict.h"

struct kb_kneepoint_cfg {
    const char *url;
    const struct kb_target *target;
    const struct kb_criteria *crit;
    double warmup_s, duration_s, drain_s;
    int threads, connections;
    long timeout_ms, send_quantum_us;
    const cpu_set_t *client_cpus;          /* the load threads' CPUs (one thread each) */
    int rt;                                /* SCHED_FIFO load threads */
    int per_connection;                    /* --dispatch per-connection */
    int reconnect;                         /* a server's closes reconnected (loadgen.h) */
    struct kb_procwatch_cfg watch;         /* the server, and the CPUs whose steal is read */
};

/* Sample `rate` (its k-th sample) into dir, made here; *out gets the figures the search
 * reads. 0, or -1 with err when the load could not run or its evidence could not be
 * written (no DONE then). */
int kb_kneepoint_run(const struct kb_kneepoint_cfg *cfg, long rate, int k, const char *dir,
                     struct kb_knee_sample *out, char *err, size_t errlen);

/* A finished sample read back from dir: 1 with *out set; 0 when dir holds no finished
 * sample (no DONE); -1 with err when its verdict.json is unreadable. */
int kb_kneepoint_read(const char *dir, struct kb_knee_sample *out, char *err, size_t errlen);

#endif
