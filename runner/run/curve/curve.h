/* curve.h -- `kneebench curve`'s method: the runtime x route x rate comparison measured into
 * a run directory (docs/protocol.md; its files: docs/evidence.md). runner/cli/cmd_curve.c
 * parses the options into struct kb_curve_opts and calls these.
 *
 * The plan (matrix.c); each runtime started, limits read back, identity hashed, routes
 * preflighted (curvefix.c), every fixture up side by side when interleaved, the host's floor
 * between rate steps (curvefloor.c); then each point (curvepoint.c): the fixture at rest, the
 * load child on the client CPUs, the fixture sampled each second, postflight, identity again,
 * the verdict, DONE last. A fixture that died is restarted for the next point; a re-run keeps
 * every point with its DONE. The skeleton every command shares is run.c's; the rounds after
 * the matrix that read the run's cells are curve_rounds.h's. */
#ifndef KB_CURVE_H
#define KB_CURVE_H

#include <stddef.h>

#include "runner/util/paths.h"
#include "runner/run/curve/matrix.h"
#include "runner/run/run.h"
#include "runner/sandbox/sandbox.h"

struct kb_calibrate_result;

/* --requests-log: every point's requests kept (all), kept only at each runtime-route's
 * final boundary (knee, the default), or not recorded (none). */
enum kb_reqlog { KB_RL_KNEE, KB_RL_ALL, KB_RL_NONE };

/* What the command line asks for. */
struct kb_curve_opts {
    struct kb_plan_opts plan;
    const char *run, *backend, *build, *load_cmd, *contract, *scpus, *ccpus, *image;
    const char *ctlcpus;           /* --controller-cpus, NULL: the client's */
    const char *docker_host, *docker_context, *target, *db_cpus;
    int no_limits, free_ports, client_other, calibrate, force, requests_log;
    int per_connection;        /* --dispatch per-connection */
    double refine;             /* --refine's resolution in percent; 0: off */
    double hold;               /* --hold: the refined held end's hold sample; <0: default */
    struct kb_rates rates;     /* --rates (plan.rates points here when given) */
};

/* A fixture kept up while another is measured (the interleaved order): what kb_fixture,
 * kb_curve and kb_run hold of the fixture now running, set aside until its turn. */
struct kb_curve_parked {
    const struct kb_runtime *rt;
    struct kb_sandbox_fixture *sb;     /* NULL: it could not start (preflight_failed says) */
    int port, repeat, preflight_failed, harness_error;
    json_t *identity;
    char target[64], limits_err[512];
    double last_exit_check;
    char fixdir[KB_PATH_MAX], preflight_reason[512];
    struct kb_run_evidence ev;
};

/* The runtimes of the plan and the floor: one each, at most. */
#define KB_CURVE_PARKED_MAX (KB_SANDBOX_MAX_FIXTURES - 1)

/* The host's floor (curvefloor.c): kb-control driven at a fixed rate beside the runtimes,
 * its CPU per response the host's speed at that moment. */
struct kb_curve_floor {
    int taken;                  /* samples this invocation took */
    int next;                   /* the next sample's number (RUN/floor/f<next>) */
    double last_t;              /* when the last one was taken (monotonic s) */
    long last_rate;             /* the rate of the last point run */
    char id[16];                /* the latest sample that measured ("" before any) */
    int failed;                 /* the floor's fixture could not start: not tried again */
};

struct kb_curve {
    struct kb_run r;            /* the run directory, contract, server (r.fx: placement,
                                 * sandbox, the fixture now running, the load child), its
                                 * PostgreSQL, the interrupt flag */
    struct kb_plan plan;
    int free_ports;
    /* the fixture now running */
    int repeat, preflight_failed;
    int harness_error;          /* the harness kept it from starting (preflight_reason says
                                 * how): its points are not judged but left to redo */
    char fixdir[KB_PATH_MAX], preflight_reason[512];
    /* progress: finished of total, in the matrix or (confirming: "confirm ", "refine ") in a
     * round after it */
    size_t finished, ran, total;
    const char *confirming;
    double run_secs;
    struct kb_calibrate_result *cal;   /* --calibrate: the client's proven margin, or NULL */
    int requests_log;           /* enum kb_reqlog */
    int per_connection;         /* --dispatch per-connection */
    double hold_s, hold_warmup_s;   /* --refine: the held end's hold sample (kneesearch.h); 0 none */
    double refine;              /* the resolution in percent, 0 off */
    /* the interleaved order: the fixtures not being measured, kept up */
    struct kb_curve_parked parked[KB_CURVE_PARKED_MAX];
    size_t nparked;
    struct kb_curve_floor floor;
};

/* The run opened: the directory, the contract, the plan (checked against an earlier
 * invocation's), run.json, what a runner killed with -9 left swept, and with --calibrate the
 * client's margin proven (or, with --force, recorded). 0, or -1 with err; kb_curve_close()
 * either way. */
int kb_curve_open(struct kb_curve *cv, const struct kb_curve_opts *o, int argc, char **argv,
                  char *err, size_t errlen);
/* Each point of pts in order, a complete one kept; the count that could not be run. */
int kb_curve_run_points(struct kb_curve *cv, const struct kb_point *pts, size_t n);
/* The load child and the fixture stopped, everything freed. */
void kb_curve_close(struct kb_curve *cv);

/* ---- within the method (curvefix.c, curvepoint.c) ----------------------------------------- */

/* 1 when the plan has points of runtime on route. */
int kb_curve_plan_has(const struct kb_curve *cv, const char *runtime, const char *route);
/* The fixture for pt running (the live one kept, a dead one restarted; one that could not
 * start for this runtime is not retried), or its preflight failure recorded. */
void kb_curve_ensure_fixture(struct kb_curve *cv, const struct kb_point *pt);
void kb_curve_stop_fixture(struct kb_curve *cv);
/* Every fixture stopped: the one running and those kept up beside it. */
void kb_curve_stop_all(struct kb_curve *cv);
/* The server CPUs' work now: the CPU seconds of the fixture running and of those kept up
 * beside it (others: theirs alone, NULL: not wanted). */
double kb_curve_server_cpu(const struct kb_curve *cv, double *others);
/* The runtime rt (repeat) made the running fixture: the one running kept, one kept up beside
 * it brought back, else started; 1 when it was started now. */
int kb_curve_switch_to(struct kb_curve *cv, const struct kb_runtime *rt, int repeat);

/* ---- the host's floor (curvefloor.c) --------------------------------------------------------
 * In the interleaved order, before a point that opens a new rate step (at most every
 * KB_FLOOR_MIN_GAP_S, at least every KB_FLOOR_MAX_GAP_S), kb-control is driven at
 * KB_FLOOR_RPS for KB_FLOOR_S on the plan's threads and connections, in its own sandbox on the
 * server CPUs: its CPU per response (to the nanosecond) is the host's speed at that moment.
 * RUN/floor/f<k>/ keeps the load's files and floor.json (written last); each point's
 * verdict.json names the floor sample taken before it ("floor_sample"). */
#define KB_FLOOR_RPS 20000
#define KB_FLOOR_S 1.0
#define KB_FLOOR_MIN_GAP_S 15.0
#define KB_FLOOR_MAX_GAP_S 60.0
/* A floor sample taken now when pt is due one. */
void kb_curve_floor_before(struct kb_curve *cv, const struct kb_point *pt);
/* One point measured into dir, its evidence and marker written. 0, or -1 with err. */
int kb_curve_run_point(struct kb_curve *cv, const struct kb_point *pt, const char *dir,
                       char *err, size_t errlen);
/* The progress line of a point finished (kept: read back from an earlier run); lr NULL:
 * the point has no load figures. */
void kb_curve_progress(struct kb_curve *cv, const struct kb_point *pt, const char *verdict,
                       const struct kb_point_load *lr, int kept);

#endif
