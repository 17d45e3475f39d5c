/* calibrate.h -- proves the client's margin before a curve (docs/protocol.md, "Trusting the
 * client").
 *
 * The control server (contract "control") on the server CPUs, driven by `kneebench load`
 * children on the client CPUs (optionally in a cgroup) at rising rates up to factor x the
 * rate to prove; each step judged by kb_trust_rung (verdict.h); calibrate.json written
 * atomically. The margin is the highest rate held with every lower step held too. A missed
 * step is tried again (cfg->attempts), since one stall of a shared host in a 3 s step misses
 * the lag gate at any rate; every miss is kept. Prints only through cfg->progress. */
#ifndef KB_CALIBRATE_H
#define KB_CALIBRATE_H

#include <stddef.h>
#include <stdio.h>

#define KB_CALIBRATE_MAX_STEPS 32

struct kb_calibrate_cfg {
    const char *contract_path;  /* NULL = kb_root_contract() */
    const char *kneebench;      /* the binary run as `load` children; NULL = this process's */
    const char *build_dir;      /* {build} for the control command; NULL = kneebench's dir */
    const char *out_dir;        /* exists; gets calibrate.json, step-N.json, logs */
    const char *route;          /* NULL = "plaintext" */
    const char *server_cpus;    /* cpu list ("0"); NULL = the contract's */
    const char *client_cpus;    /* cpu list ("1-"); NULL = the contract's */
    const char *client_cgroup[4]; /* cgroup dirs the load children join (NULL-ended), or none */
    double up_to_rps;           /* the highest rate the curve will request; 0 = contract's */
    double factor;              /* prove factor x up_to; 0 = 1.25 */
    int steps;                  /* rungs of the ladder, evenly spaced up to the top; 0 = 6 */
    double duration_s;          /* per step; 0 = 3 */
    double warmup_s;            /* per step; < 0 = 1 */
    int threads, connections;   /* 0 = the contract's */
    double cpu_max_fraction;    /* 0 = the contract's client_cpu_max_fraction */
    double lag_p99_max_us;      /* 0 = the contract's client_lag_p99_max_us */
    double rx_delay_p99_max_us; /* 0 = the contract's client_rx_delay_p99_max_us */
    double min_delivery;        /* 0 = 0.995 */
    int stop_at_miss;           /* 1: stop at the first step that misses (default: the whole
                                   ladder is run and reported, a miss does not hide what the
                                   client held above it) */
    int attempts;               /* tries per step, the step held when one holds; 0 = 2 */
    int client_rt;              /* 1: load children get --rt (SCHED_FIFO), as the curve's do */
    FILE *progress;             /* one line per step, or NULL */
};

struct kb_calibrate_step {
    double rate;
    double achieved_rps, delivery, cpu_fraction, lag_p99_us, rx_delay_p99_us, corrected_p99_us;
    long long errors;           /* socket errors (kb_point_load_socket_errors); requests left
                                   unanswered at the drain's end miss the rung on their own */
    int threads;                /* the load threads that ran (one per client CPU) */
    int held;                   /* every criterion met (by the last attempt) */
    char why[256];              /* the criteria missed, "" when held */
    int attempts;               /* tries made; the figures are the last one's */
    char missed_before[520];    /* the earlier attempts' misses, "" when the first decided */
};

struct kb_calibrate_result {
    double up_to_rps, factor, required_rps;   /* required = factor x up_to */
    double margin_rps;          /* highest rate held with every lower step held; 0 if none */
    double highest_held_rps;    /* highest rate held at all (above margin_rps: a miss lay below) */
    int proven;                 /* margin_rps >= required_rps */
    size_t nsteps;
    struct kb_calibrate_step steps[KB_CALIBRATE_MAX_STEPS];
    char json_path[1024];       /* calibrate.json */
};

/* Runs the ladder and writes calibrate.json. 0 when the calibration ran (whether or not the
 * margin is proven: see out->proven); -1 with err when it could not run (control server
 * would not start, a load child failed to produce its JSON, bad configuration). */
int kb_calibrate(const struct kb_calibrate_cfg *cfg, struct kb_calibrate_result *out,
                 char *err, size_t errlen);

/* 1 when a point requested at rate is covered by the proven margin (rate x factor <=
 * margin_rps), 0 when it must be marked client-limited. */
int kb_calibrate_covers(const struct kb_calibrate_result *r, double rate);

/* Reads a calibrate.json written by kb_calibrate (for a curve reusing a calibration).
 * 0, or -1 with err. */
int kb_calibrate_read(const char *path, struct kb_calibrate_result *out, char *err, size_t errlen);

#endif
