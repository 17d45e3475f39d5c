/* soakrun.h -- `kneebench soak`'s method: the one-hour qualification (docs/protocol.md, "The
 * one-hour qualification") run phase by phase into a run directory. cli/cmd_soak.c parses
 * the options into struct kb_soak_opts, calls these and writes report_soak.c's report.
 *
 * Each phase (contract.soak, in order): gray-static started in the sandbox under the curve's
 * limits -- for the db phase, the runtime of its /db design (soak.db_mode or --db-mode) with
 * a throwaway cluster (pgcluster.c); the load child for warmup + duration; after warmup +
 * settle, RSS, descriptors (and /stats) every sample_every seconds; postflight, identity,
 * /stats back at rest; the windows read back from the phase's series (soakwin.c), the fits
 * and verdict (soak.c), DONE last. soakplan.c plans; the skeleton is run.c's, the fixture
 * and its samples fixture.c's. */
#ifndef KB_SOAKRUN_H
#define KB_SOAKRUN_H

#include <stddef.h>

#include "runner/run/run.h"
#include "runner/run/soak/soak.h"
#include "runner/util/opts.h"

#define KB_SOAK_RUNTIME "gray-static"
#define KB_SOAK_MAX_PHASES 16

/* What the command line asks for (< 0: the contract's). */
struct kb_soak_opts {
    const char *out, *phases, *rates, *backend, *scpus, *ccpus, *build, *load_cmd, *contract;
    const char *ctlcpus;           /* --controller-cpus, NULL: the client's */
    const char *image, *db_mode;
    double duration, warmup, settle, every, drain, min_delivery;
    double rss_pct, rss_floor, fd_pct, fd_floor, client_cpu_max, client_lag_max_us;
    double window_max, max_rate_drop, p99_growth, p99_floor_ms;     /* < 0: the contract's */
    int threads, connections, db_pool, no_limits;
    struct kb_rates rate_list;  /* --rates (rates: as given, NULL when not), one per phase */
};

struct kb_soakrun {
    struct kb_run r;            /* the run directory, contract, server (r.fx: placement,
                                * sandbox, the fixture now running, the load child), the db
                                * phase's cluster, the interrupt flag */
    const struct kb_runtime *rt;
    const struct kb_runtime *db_rt;    /* the db phase's: the /db design db_mode names */
    const char *db_mode;               /* NULL when no phase is the db route's */
    struct kb_soak_planned ph[KB_SOAK_MAX_PHASES];
    size_t nph;
    double duration_s, warmup_s, settle_s, every_s, drain_s;
    int threads, connections, db_pool;
    struct kb_soak_criteria crit;
};


/* The run opened: the directory, the contract, the phases planned (checked against an
 * earlier invocation's plan.json), run.json, stale cgroups swept. 0, or -1 with err;
 * kb_run_close(&s->r, SIGTERM) either way. */
int kb_soakrun_open(struct kb_soakrun *s, const struct kb_soak_opts *a, int argc, char **argv,
                    char *err, size_t errlen);
/* Phases in order; one whose marker exists is kept (resume). The count not complete. */
int kb_soakrun_all(struct kb_soakrun *s);

/* ---- within the method --------------------------------------------------------------------- */
/* plan.json's object (soakplan.c), and the plan from the options and the contract. */
int kb_soakrun_plan(struct kb_soakrun *s, const struct kb_soak_opts *a, char *err, size_t errlen);
int kb_soakrun_write_plan(struct kb_soakrun *s, char *err, size_t errlen);
int kb_soakrun_write_identity(struct kb_soakrun *s, int argc, char **argv, char *err,
                              size_t errlen);

#endif
