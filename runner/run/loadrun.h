/* loadrun.h -- one load as `kneebench load` runs it: the target opened (runner/load/target.h),
 * the client's CPUs, its cgroup quota and its descriptor limit fitted, every output checked
 * writable before anything is sent, the target probed, the load run (runner/load/loadgen.h),
 * its summary, spectrum and files written (runner/load/loadout.h), and the client's trust
 * judged as the curve judges it (runner/run/verdict.h) for the warning the command gives.
 *
 * The exit statuses are the command's (cli/cmd_load.c): 0 run and every response right; 4
 * run with responses not right (KB_LOAD_EXIT_NOT_RIGHT); 2 bad arguments, said on stderr
 * before anything is sent; 3 the target unreachable; 6 an output could not be written
 * (KB_LOAD_EXIT_OUTPUT); 7 the target answered its first requests wrongly
 * (KB_LOAD_EXIT_TRIAL); 1 the run itself failed.
 *
 * Before the load, unless --no-preflight: the server's processes found (--pid, else those
 * listening on a loopback port: runner/run/serverside.h), the client kept off their CPUs
 * unless --cpus says otherwise, and a few trial requests (runner/load/trial.h), all said
 * on stderr. */
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
