/* loadout.h -- what `kneebench load` writes: the --json document (the interface the curve
 * reads; fields documented in runner/README-load.md), the .hgrm files and the human summary.
 * Files are written atomically (runner/util/atomicfile.h). Nothing here measures anything. */
#ifndef KB_LOADOUT_H
#define KB_LOADOUT_H

#include <jansson.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>

#include "runner/load/hist.h"

struct kb_load_result;

/* `kneebench load`'s exit status when the run completed, its outputs are written, and some
 * responses were not right (non-2xx, or not what the route or --expect-* asks). A runner
 * reads the figures as for 0: load.json counts those responses, and the verdict fails them. */
#define KB_LOAD_EXIT_NOT_RIGHT 4

/* ...when it completed with every response right and its outputs written, but the client's
 * own lateness could have decided the verdict (runner/run/verdict.h, kb_trust_judge): the
 * figures describe the host as much as the server. A runner reads them as for 0 and judges
 * the sample client-limited from load.json itself; a script must not take them as the
 * server's. */
#define KB_LOAD_EXIT_CLIENT_LIMITED 5

/* ...when the load ran but one of its own outputs could not be written (a full disk, a
 * read-only directory): the harness's failure, never the server's. A runner must not judge
 * the point on it -- the point is incomplete and redone -- which exit 1 (a load that could
 * not run at all) does not tell it. */
#define KB_LOAD_EXIT_OUTPUT 6

/* ...when the target answered its first requests (runner/load/trial.h) wrongly: a status
 * other than the expected, another body, a malformed or late reply. Nothing was loaded and
 * no output written. (3 stays the unreachable target's.) */
#define KB_LOAD_EXIT_TRIAL 7

/* A runner's reading: 1 when the load's failure is the runner's own, never the server's --
 * an output it could not write (6), or 2, the arguments the runner built or an output it
 * named refused before anything was sent. */
#define KB_LOAD_EXIT_HARNESS(st) ((st) == 2 || (st) == KB_LOAD_EXIT_OUTPUT)

/* A runner's reading of a load's exit status: 1 when the run completed and load.json holds
 * the figures (0, NOT_RIGHT, CLIENT_LIMITED), for the verdict to judge. */
#define KB_LOAD_EXIT_COMPLETED(st) \
    ((st) == 0 || (st) == KB_LOAD_EXIT_NOT_RIGHT || (st) == KB_LOAD_EXIT_CLIENT_LIMITED)

/* What the run was asked to do, echoed into the JSON. */
struct kb_load_meta {
    const char *url;
    const char *route;         /* the contract route checked, or NULL */
    const char *expectation;   /* what a right response is, in words (target.h), or NULL */
    double requested_rps;
    int threads_requested;     /* --threads (or the contract's): an upper bound */
    int threads, connections;  /* threads: what ran, fitted to the client's CPUs */
    double warmup_s, duration_s, drain_s;
    char started_at[32];
    int client_cpus;           /* CPUs the load threads may run on */
    double client_cpu_quota;   /* the cgroup's CPU bandwidth limit in CPUs, 0 when none */
    int rt_asked;              /* --rt was given */
    long send_quantum_us;      /* --send-quantum-us, 0: a wake-up per send */
    const char *requests_log;  /* --requests-log FILE, or NULL */
    uint64_t requests_log_max; /* its bound in lines */
};

/* The --json document (the caller decrefs it). */
json_t *kb_loadout_json(const struct kb_load_meta *m, const struct kb_load_result *r);
/* 0, or -1 with err set. */
int kb_loadout_write_json(const char *path, const struct kb_load_meta *m,
                          const struct kb_load_result *r, char *err, size_t errlen);
/* The --requests-log file: a '#' header, then one line per record (runner/README-load.md). */
int kb_loadout_write_requests(const char *path, const struct kb_load_result *r, char *err, size_t errlen);
/* h (microseconds) as a classic .hgrm in milliseconds, its first line
 * KB_LOADOUT_HGRM_UNIT_LINE. */
#define KB_LOADOUT_HGRM_UNIT_LINE "#[Value unit: milliseconds]"
int kb_loadout_write_hgrm(const char *path, const struct kb_hist *h, char *err, size_t errlen);
void kb_loadout_summary(FILE *f, const struct kb_load_meta *m, const struct kb_load_result *r);
/* wrk2's -L: corrected latency at its usual percentiles, the whole percentile spectrum (ms,
 * with mean and standard deviation) and Requests/sec. */
void kb_loadout_spectrum(FILE *f, const struct kb_load_meta *m, const struct kb_load_result *r);

/* Derived figures, shared by the JSON and the summary. */
double kb_loadout_achieved_rps(const struct kb_load_meta *m, const struct kb_load_result *r);
double kb_loadout_delivery(const struct kb_load_meta *m, const struct kb_load_result *r);
double kb_loadout_cpu_fraction(const struct kb_load_meta *m, const struct kb_load_result *r);
/* Delivery had every response come earlier by the client's own delay in it. */
double kb_loadout_delivery_less_client(const struct kb_load_result *r);
/* The connections each measured request needed: those written first on a new connection
 * over those written (1 when the server closes after every response); -1 when none was. */
double kb_loadout_conns_per_request(const struct kb_load_result *r);

#endif
