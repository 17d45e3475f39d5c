/* kneeinit.h -- a knee search made ready (`kneebench knee`, docs/knee.md): the target opened
 * and held to loopback unless allowed, the criteria, the server's and the client's CPUs (the
 * client kept off the server's, the whole process on its own), the run directory, the
 * target probed; then the search's plan.json and run.json written and runner/run/knee/kneerun.h
 * configured from the arguments. The command (cli/cmd_knee.c) parses into struct
 * kb_knee_args, fills in the contract's defaults, and reports what the search found. */
#ifndef KB_KNEEINIT_H
#define KB_KNEEINIT_H

#include <sched.h>
#include <stddef.h>

#include "runner/util/paths.h"
#include "contract/contract.h"
#include "runner/load/target.h"
#include "runner/load/trial.h"
#include "runner/util/opts.h"
#include "runner/run/knee/kneerun.h"
#include "runner/run/serverside.h"
#include "runner/run/verdict.h"

/* The command line, as parsed, the contract's defaults filled in. */
struct kb_knee_args {
    struct kb_target_spec spec;
    const char *run, *contract, *cpus, *cgroup;
    long pids[KB_OPT_PIDS_MAX];            /* --pid, one or several */
    int npids;
    int reconnect;                         /* 1 --reconnect, 0 --no-reconnect; -1 until
                                              prepared: 1 unless a contract route is checked */
    double start, min, max, factor, resolution, max_time, p99_ms, delivery;
    double duration, warmup, drain, timeout;
    double hold, hold_warmup;              /* the held end's hold sample; hold 0: none */
    int per_connection;                    /* --dispatch per-connection */
    long confirm, threads, connections, quantum_us;
    int allow_remote, no_rt, quiet;
};


struct kb_knee_ctx {
    struct kb_knee_args a;
    struct kb_contract ct;
    struct kb_target t;
    struct kb_criteria crit;
    cpu_set_t cpus;
    struct kb_server_side srv;             /* --pid's, or those listening on the port */
    struct kb_trial trial;                 /* the requests sent before any load */
    char dir[KB_PATH_MAX];
};

/* Exit status of a target that answered, but not rightly (status, body, header, framing):
 * nothing searched, no run directory. 3 stays the unreachable target's. */
#define KB_KNEE_EXIT_TRIAL 7

/* The contract's and the quick profile's defaults for what the command line left out, and
 * the combinations checked (rates in order, a live --pid, a cgroup directory). 0, or 2 with
 * err. */
int kb_knee_defaults(struct kb_knee_args *a, const struct kb_contract *ct, char *err,
                     size_t errlen);

/* Everything before the first sample (x->a and x->ct set): the server's processes (--pid,
 * else for a loopback target those listening on its port), the CPUs, the trial requests
 * (runner/load/trial.h), then the run directory -- made only once the target answered
 * right. 0; 2 with err for an argument that cannot be used (nothing sent); 3 with err when
 * the target does not accept a connection; KB_KNEE_EXIT_TRIAL with err when it answered
 * wrongly. */
int kb_knee_prepare(struct kb_knee_ctx *x, char *err, size_t errlen);

/* k configured from x, plan.json checked or written (a re-run resumes only the same search)
 * and run.json. 0, or -1 with err; k->plan and k->setup are the caller's to json_decref
 * either way. */
int kb_knee_begin(struct kb_knee_ctx *x, struct kb_kneerun *k, int argc, char **argv,
                  char *err, size_t errlen);

#endif
