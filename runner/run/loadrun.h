/* loadrun.h -- one load as `kneebench load` runs it: the target opened (target.h); the
 * client's CPUs, cgroup quota and descriptor limit fitted; every output checked writable
 * before anything is sent; unless --no-preflight, the server's processes found (--pid, else
 * the loopback port's listeners: serverside.h), the client kept off their CPUs and trial
 * requests sent (trial.h); the load (loadgen.h); its outputs (loadout.h); and the client's
 * trust judged as the curve judges it (verdict.h), for the command's warning.
 *
 * Exit statuses (cli/cmd_load.c): 0 every response right; 1 the run failed; 2 bad arguments,
 * before anything is sent; 3 unreachable; 4 responses not right (KB_LOAD_EXIT_NOT_RIGHT);
 * 6 an output not written (KB_LOAD_EXIT_OUTPUT); 7 wrong answers to the trial requests
 * (KB_LOAD_EXIT_TRIAL). */
#ifndef KB_LOADRUN_H
#define KB_LOADRUN_H

#include "runner/load/loadgen.h"
#include "runner/load/target.h"
#include "runner/util/opts.h"

struct kb_contract;

/* The command line, as parsed; the contract's defaults filled in by the command. */
struct kb_load_args {
    struct kb_target_spec spec;    /* the URL, --route, -H and --expect-* */
    const char *json, *hgrm, *uhgrm, *contract, *cpus, *hlog, *series_csv, *requests_log;
    double rate, duration, warmup, drain;
    int threads, connections, quiet, latency;
    long timeout_ms;
    long spin_us;
    long slack_us;
    long quantum_us;
    int have_quantum;
    int eager_rx;
    int rt;
    int exact_threads;
    enum kb_load_timer timer;
    int per_connection;            /* --dispatch per-connection */
    int64_t stagger_ns;            /* --stagger: 0 wrk2's 5 ms, KB_LOAD_STAGGER_EVEN */
    long requests_log_max;
    int have_requests_log_max;
    int have_rate, have_duration, have_warmup, have_drain;
    long pids[KB_OPT_PIDS_MAX];    /* --pid, one or several */
    int npids;
    int reconnect;                 /* --reconnect 1, --no-reconnect 0; -1: 1 unless a
                                      contract route is checked (the fixtures keep alive) */
    int no_preflight;              /* --no-preflight: the curve preflights its fixtures */
};


/* The whole run. The exit status above. */
int kb_loadrun(struct kb_load_args *a, const struct kb_contract *ct);

#endif
