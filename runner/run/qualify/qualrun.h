/* qualrun.h -- one db qualification run (`kneebench qualify`; docs/protocol.md, "The db
 * qualification"): gray-static's /db at a fixed rate against its own throwaway PostgreSQL
 * cluster, /stats read densely by its own thread throughout, judged by runner/run/qualjudge.h.
 *
 * Owns the run's flow and its evidence layout in the run directory: plan.json, run.json,
 * pg/ (the cluster, stopped at the end), fixture/ (limits.json, identity.json,
 * preflight.json, fixture.log), command.json, load.json and the histograms, samples.csv
 * (server RSS and descriptors every sample_every_s from warmup + settle to the end of the
 * measured interval), stats.jsonl (every /stats read from the load's start until the gauges
 * are back at zero after it, or rest_timeout_s), verdict.json, then DONE last. Starting the
 * fixture, its limits, identity, the load child and the server samples are
 * runner/run/fixture.h's. Never prints; errors go to the caller's buffer. */
#ifndef KB_QUALRUN_H
#define KB_QUALRUN_H

#include "runner/run/qualjudge.h"
#include "runner/run/run.h"
#include "runner/run/fixture.h"
#include "runner/run/qualify/statsampler.h"
#include "runner/sandbox/pgcluster.h"
#include "contract/contract.h"

#include <jansson.h>
#include <signal.h>
#include <stddef.h>

#define KB_QUAL_RUNTIME "gray-static"

/* What one run does: the contract's qualification section, then the caller's overrides. */
struct kb_qual_params {
    long rate;
    double duration_s, warmup_s, settle_s, drain_s;
    int threads, connections, db_pool;
    double sample_every_s, stats_every_s, rest_timeout_s;
    struct kb_qual_criteria crit;
};

/* From the contract (its qualification section, and comparison.criteria for delivery, the
 * p99 bound and the client's trust). 0, or -1 with err when the section is absent. */
int kb_qual_params_from(const struct kb_contract *c, struct kb_qual_params *p, char *err,
                        size_t errlen);

/* The parameters hold together (settle inside the measured interval, stats read often
 * enough to reach min_stats_per_s...). 0, or -1 with err. */
int kb_qual_params_check(const struct kb_qual_params *p, char *err, size_t errlen);

struct kb_qualrun {
    struct kb_run r;               /* the skeleton: contract, run directory, sandbox and
                                    * placement, the fixture and its cluster, the load child */
    struct kb_stats_sampler *sampler;
};

/* After kb_run_open(&q->r, ...) (zero the rest of q first): the sandbox opened (native
 * backend), the run directory made, plan.json written or checked (a run directory holds one
 * plan) and run.json. The run's interrupt flag (kb_run_signals) ends readiness waits and the
 * load early. 0, or -1 with err; kb_qualrun_close either way. */
int kb_qualrun_setup(struct kb_qualrun *q, const struct kb_fixture_opts *o,
                     const struct kb_qual_params *p, int argc, char **argv, char *err,
                     size_t errlen);

/* The run, into verdict.json and DONE. The verdict (>= 0, enum kb_qual_verdict), or -1 when
 * interrupted (no marker) or its evidence could not be written (err says which). */
int kb_qualrun_exec(struct kb_qualrun *q, const struct kb_qual_params *p, char *err,
                    size_t errlen);

/* Stop whatever still runs (load child, sampler, fixture, cluster), close the sandbox. */
void kb_qualrun_close(struct kb_qualrun *q);

#endif
