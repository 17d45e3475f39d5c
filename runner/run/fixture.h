/* fixture.h -- one runtime run as a fixture (docs/glossary.md) for `kneebench curve`, `soak`
 * and `qualify`.
 *
 * Owns what the three commands do alike around a fixture: the run's placement (server and
 * client CPUs, overlap refused) and sandbox backend, the fixture's command expanded from
 * the contract, starting it in the sandbox and waiting until it accepts, reading the
 * limits back (limits.json) and hashing its identity, the server's processes sampled,
 * and the load generator as a child pinned to the client CPUs, driven to its end while
 * the caller samples, then its load.json read and the postflight. What differs (which
 * routes are preflighted, the sampling schedule and its figures, the evidence layout, the
 * verdict) stays with the commands. Never prints; errors come back in the caller's buffer.
 *
 * The run's sandbox (runner/sandbox/sandbox.h) is opened by kb_fixture_setup() and closed by
 * kb_fixture_close(); what differs between its backends (where the fixture runs and is reached,
 * how it is sampled, what its identity is made of, whether limits apply) is the sandbox's
 * to answer: the load, the readiness wait and the pre/postflight go to its target. */
#ifndef KB_FIXTURE_H
#define KB_FIXTURE_H

#include "runner/sandbox/pgcluster.h"
#include "runner/util/paths.h"
#include "runner/sandbox/procs.h"
#include "runner/sandbox/sandbox.h"
#include "runner/run/verdict.h"
#include "contract/contract.h"

#include <jansson.h>
#include <sched.h>                 /* cpu_set_t (glibc defines the type without _GNU_SOURCE) */
#include <signal.h>
#include <stddef.h>
#include <sys/types.h>
#include <time.h>

/* What one run asks of every fixture it starts (all strings the caller's). */
struct kb_fixture_opts {
    const char *backend;           /* the sandbox backend's name (--backend) */
    const char *build;             /* where the built fixtures live */
    const char *server_cpus, *client_cpus;   /* placement lists (runner/util/cpulist.h) */
    const char *controller_cpus;   /* the runner's own CPUs (--controller-cpus); NULL: the
                                    * client's */
    const char *load_cmd;          /* NULL: this kneebench, through /proc/self/exe */
    int no_limits;
    int client_other;              /* load threads in SCHED_OTHER instead of SCHED_FIFO 1 */
    const char *image, *target;    /* the backend's, NULL when not given (sandbox.h) */
    const char *docker_host, *docker_context;   /* docker: the engine, NULL: the user's */
};

/* The most records a point's requests.log holds (kneebench load --requests-log-max): at
 * about 30 bytes a line, tens of MiB for a point of tens of thousands of requests a second;
 * its load.json says when the bound cut it (requests_log_truncated). */
#define KB_FIXTURE_REQUESTS_LOG_MAX 1000000

/* The load generator's parameters, the same for every point / phase of a run. */
struct kb_fixture_load {
    double duration_s, warmup_s, drain_s;
    int threads, connections;
    int requests_log;              /* keep dir/requests.log: one line per measured request,
                                    * up to the load generator's bound (runner/README-load.md) */
    int per_connection;            /* --dispatch per-connection */
};

/* Zeroed by the caller, then kb_fixture_setup(); one fixture at a time. */
struct kb_fixture {
    /* the run's, from kb_fixture_setup() */
    const struct kb_contract *c;
    struct kb_sandbox *sandbox;
    const char *build;
    int no_limits;
    int client_rt;                 /* pass --rt to the load generator (kneebench load) */
    char server_cpus[64], client_cpus[64];   /* canonical */
    char controller_cpus[64];      /* where the runner itself runs, read back after pinning */
    int controller_declared;       /* --controller-cpus gave them; else the client's */
    cpu_set_t client_set;
    char load_cmd[KB_PATH_MAX];
    int self_exec;                 /* exec /proc/self/exe: the image the run hashed */
    volatile sig_atomic_t *stop;   /* once *stop: readiness waits give up, the load child is
                                    * killed (NULL: never) */
    /* the fixture now running */
    const struct kb_runtime *rt;
    struct kb_sandbox_fixture *sb;
    int port;
    json_t *identity;              /* kb_fixture_identity() at its start: the baseline */
    char target[64];               /* where it is reached: the sandbox's target */
    double last_exit_check;        /* off this host, the drive loop asks at most 1/s */
    pid_t load_pid;                /* the load child while it runs, else 0 */
    char limits_err[512];          /* why the last start could not write limits.json, or "" */
};

/* The sandbox opened (and checked available unless no_limits; its backend may then decide
 * that limits do not apply), its target, placement and load command; and the runner itself
 * -- the controller: its samplers, preflights, readiness waits and /stats reader, every thread
 * it starts after this -- pinned to o->controller_cpus, or to the client CPUs without them,
 * off the server's either way: a controller list that shares a CPU with the server's is
 * refused (controller_cpus is the kernel's read-back). What it starts for the server's side is placed explicitly (the
 * fixture's cgroup or affinity, PostgreSQL's pinning). 0, or -1; call kb_fixture_close() either
 * way. */
int kb_fixture_setup(struct kb_fixture *fx, const struct kb_contract *c, const struct kb_fixture_opts *o,
                char *err, size_t errlen);

/* Monotonic seconds: the drive loop's clock, which the commands time their points, phases
 * and polls with too (they sleep with clock.h's kb_sleep_ms). */
double kb_fixture_now_s(void);

/* tmpl with {root} {build} {port} {bind} {rundir} {cpus} filled in with this run's values
 * (spawn.h's kb_tmpl_expand); malloc'd. */
char *kb_fixture_expand(const struct kb_fixture *fx, const char *tmpl, const char *rundir);

/* What runs for fx->rt, as the sandbox identifies it (kb_sandbox_identity) from its
 * executables and sources on this host and the contract's command. NULL with err. */
json_t *kb_fixture_identity(const struct kb_fixture *fx, char *err, size_t errlen);

/* The spec for fx->rt in rundir: argv (64 slots, with the db arguments when pg runs),
 * env (16 slots), log (4200 bytes: rundir/fixture.log) are the caller's, freed with
 * kb_fixture_spec_free(). */
void kb_fixture_spec(const struct kb_fixture *fx, const char *rundir, const struct kb_pgrun *pg,
                int db_pool, char **argv, char **env, char *log, struct kb_fixture_spec *spec);
void kb_fixture_spec_free(char **argv, char **env);

/* Start fx->rt from spec, wait until its port accepts (20 s), read the limits back into
 * rundir/limits.json (fx->limits_err says why when that write failed: an evidence failure,
 * not the fixture's) and hash its identity into fx->identity. 0; or -1 with reason
 * ("start failed: ...", "limits: ...", "identity: ..."), the sandbox stopped when it
 * never became ready; or KB_FX_HARNESS, nothing left running, when the harness and not
 * the fixture stood in the way: the port held before the start (after sweeping a leftover
 * an unconstrained run recorded in spec->rundir), or, once it accepted, answering from a
 * process that is not the fixture's (for a fixture on another host, its engine stopped
 * answering). That reason starts with KB_FX_HARNESS_PREFIX; its points must not be judged. */
#define KB_FX_HARNESS (-2)
#define KB_FX_HARNESS_PREFIX "harness: "
int kb_fixture_start(struct kb_fixture *fx, const struct kb_fixture_spec *spec, const char *rundir,
                char *reason, size_t reasonlen);

/* Sweep what runners that are gone left in every directory under dir (a run's fixtures/):
 * the records of unconstrained fixtures (kb_sandbox_sweep_rundir). How many were swept;
 * note gets what was left running and why, "; " between directories ("" when nothing). */
int kb_fixture_sweep_sessions(struct kb_fixture *fx, const char *dir, char *note, size_t notelen);

/* Stop the fixture (and so its cgroup or container) and forget its identity. 0, or -1 with
 * err; fx->sb is NULL either way. */
int kb_fixture_stop(struct kb_fixture *fx, char *err, size_t errlen);

/* Stop the fixture if one runs and close the sandbox (cleanup; errors are dropped). */
void kb_fixture_close(struct kb_fixture *fx);

/* 1 while the fixture runs (and *stop is not set): the readiness polls' callback. */
int kb_fixture_alive(void *fx);

/* Note in obs the fixture's exit, the first time it is seen dead. */
void kb_fixture_check_exit(struct kb_fixture *fx, struct kb_point_obs *obs);

/* The fixture's processes now (kb_sandbox_sample; zeros when they could not be had). */
void kb_fixture_sample_server(const struct kb_fixture *fx, struct kb_proc_sample *out);

/* How the caller samples while the load child runs: from first_s after its start, every
 * every_s, none after until_s; sample(arg, t0, t) with monotonic seconds. */
struct kb_fixture_sampling {
    double first_s, every_s, until_s;
    void (*sample)(void *arg, double t0, double t);
    void *arg;
    int kill_signal;               /* what the child gets when *stop interrupts it */
};

/* Run `load` for route at rate into dir (load.json, corrected.hgrm, uncorrected.hgrm,
 * load.log, series.hlog, series.csv, and with ld->requests_log requests.log) as a child pinned to the client CPUs, to its end, sampling and watching the
 * fixture. 0 with obs->load_exit; -1 when it could not start (obs->load_problem says why:
 * its CPU affinity, its exec) or *stop interrupted it. */
int kb_fixture_drive(struct kb_fixture *fx, const struct kb_fixture_load *ld, const char *route, long rate,
                const char *dir, const struct kb_fixture_sampling *sp, struct kb_point_obs *obs);

/* Kill a load child still running (cleanup) and reap it. */
void kb_fixture_kill_load(struct kb_fixture *fx, int sig);

/* dir/load.json into *load (NULL when absent or not JSON) and lr, by runner/load/loadjson.h's
 * reader; obs gets have_load or the problem (the exit status with load.log's first line,
 * or the reader's error, which names the file and the field). 0; -1 when the load could
 * not write its own outputs or refused the runner's arguments (KB_LOAD_EXIT_HARNESS;
 * obs->load_problem says why): the harness
 * failed, so the caller leaves the point incomplete rather than judging the server on it. */
int kb_fixture_read_load(const char *dir, struct kb_point_obs *obs, struct kb_point_load *lr,
                         json_t **load);

/* After the load: the fixture alive, the route still answering exactly, the identity
 * unchanged; what is not goes into obs. */
void kb_fixture_postflight(struct kb_fixture *fx, const struct kb_route *r, struct kb_point_obs *obs);

#endif
