/* cmd_calibrate.c -- `kneebench calibrate`: prove the client's margin against the control
 * server (runner/run/calibrate.h). Exit 0 when the margin is proven, 1 when the gate trips
 * (margin below factor x --up-to), 2 on bad arguments or when the calibration cannot run. */
#define _POSIX_C_SOURCE 200809L
#include "runner/cli/commands.h"

#include <errno.h>
#include <getopt.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>

#include "runner/run/calibrate.h"
#include "runner/util/paths.h"
#include "runner/util/opts.h"

static int usage(FILE *f)
{
    fprintf(f,
            "usage: kneebench calibrate --out DIR [options]\n"
            "  Drives the control server (build/kb-control, on the server CPUs) from the client\n"
            "  CPUs at rising rates up to FACTOR x the rate to prove. A rung holds when the\n"
            "  client is trusted as the curve judges it (send lag and rx delay p99 within\n"
            "  their bounds, CPU under its guard) and the control server answered >= 0.995\n"
            "  in time with no error. The margin is the highest rung with every rung below it\n"
            "  held; every rung is run and reported, rungs held above a miss named as such.\n"
            "  --out DIR            where calibrate.json and each step's load JSON go (made;\n"
            "                       an existing one must be yours, writable by no one else)\n"
            "  --up-to RATE         the highest rate the curve will request (contract's max;\n"
            "                       45000, 45k)\n"
            "  --factor F           margin to prove above it (1.25)\n"
            "  --steps N            rungs of the ladder, evenly spaced up to the top (6; 1..32)\n"
            "  --duration D         measured per step (3s; 3, 3s, 500ms); --warmup D (1s)\n"
            "  --threads T --connections C   (the contract's)\n"
            "  --route NAME         (plaintext)\n"
            "  --server-cpus LIST --client-cpus LIST   (the contract's: 0 and 1-)\n"
            "  --client-cgroup DIR  the load children join DIR/cgroup.procs (repeatable, 3 max)\n"
            "  --stop-at-miss       stop at the first rung that misses (--keep-going, running\n"
            "                       them all, is the default)\n"
            "  --attempts N         tries per step, held when one holds (2; 1..5): one stall\n"
            "                       of a shared host misses the lag gate at any rate\n"
            "  --rt                 load threads SCHED_FIFO (kneebench load --rt), as the curve's\n"
            "  --cpu-max F --lag-p99-max-us N --rx-delay-p99-max-us N --min-delivery F\n"
            "                       the gate's criteria (the contract's, and 0.995)\n"
            "  --contract FILE      (the tree's contract/contract.json)\n"
            "exit: 0 margin proven, 1 not proven, 2 could not run (a bad option is refused,\n"
            "      naming it, before anything starts)\n");
    return f == stdout ? 0 : 2;
}

enum { O_OUT = 256, O_UPTO, O_FACTOR, O_STEPS, O_DURATION, O_WARMUP, O_THREADS, O_CONNS,
       O_ROUTE, O_SCPUS, O_CCPUS, O_CGROUP, O_STOP, O_KEEP, O_ATTEMPTS, O_RT, O_CPUMAX, O_LAG,
       O_RXDELAY, O_MINDEL, O_CONTRACT };

static const struct option long_opts[] = {
    { "out", 1, 0, O_OUT }, { "up-to", 1, 0, O_UPTO }, { "factor", 1, 0, O_FACTOR },
    { "steps", 1, 0, O_STEPS }, { "duration", 1, 0, O_DURATION }, { "warmup", 1, 0, O_WARMUP },
    { "threads", 1, 0, O_THREADS }, { "connections", 1, 0, O_CONNS },
    { "route", 1, 0, O_ROUTE }, { "server-cpus", 1, 0, O_SCPUS },
    { "client-cpus", 1, 0, O_CCPUS }, { "client-cgroup", 1, 0, O_CGROUP },
    { "stop-at-miss", 0, 0, O_STOP }, { "keep-going", 0, 0, O_KEEP },
    { "attempts", 1, 0, O_ATTEMPTS }, { "rt", 0, 0, O_RT }, { "cpu-max", 1, 0, O_CPUMAX },
    { "lag-p99-max-us", 1, 0, O_LAG }, { "rx-delay-p99-max-us", 1, 0, O_RXDELAY },
    { "min-delivery", 1, 0, O_MINDEL }, { "contract", 1, 0, O_CONTRACT },
    { "help", 0, 0, 'h' }, { 0, 0, 0, 0 },
};

/* A number option, read through runner/util/opts.h: the load's own bounds, and the ladder's.
 * A zero in cfg means "the default", so no option may set one. 0, or -1 with e. */
static int number_opt(int o, const char *v, struct kb_calibrate_cfg *c, char *e, size_t n)
{
    static const struct kb_bound factor = { 1, 100, 0, 0 },
        steps = { 1, KB_CALIBRATE_MAX_STEPS, 0, 0 }, attempts = { 1, 5, 0, 0 },
        share = { 0, 1, 1, 0 }, us = { 0, 3600e6, 1, 0 };
    switch (o) {
    case O_UPTO: return kb_opt_rate("--up-to", v, KB_BOUND(RATE), &c->up_to_rps, e, n);
    case O_FACTOR: return kb_opt_number("--factor", v, &factor, &c->factor, e, n);
    case O_STEPS: return kb_opt_int("--steps", v, &steps, &c->steps, e, n);
    case O_ATTEMPTS: return kb_opt_int("--attempts", v, &attempts, &c->attempts, e, n);
    case O_DURATION:
        return kb_opt_duration("--duration", v, KB_BOUND(DURATION), &c->duration_s, e, n);
    case O_WARMUP: return kb_opt_duration("--warmup", v, KB_BOUND(WARMUP), &c->warmup_s, e, n);
    case O_THREADS: return kb_opt_int("--threads", v, KB_BOUND(THREADS), &c->threads, e, n);
    case O_CONNS:
        return kb_opt_int("--connections", v, KB_BOUND(CONNECTIONS), &c->connections, e, n);
    case O_CPUMAX: return kb_opt_fraction("--cpu-max", v, &share, &c->cpu_max_fraction, e, n);
    case O_LAG: return kb_opt_number("--lag-p99-max-us", v, &us, &c->lag_p99_max_us, e, n);
    case O_RXDELAY:
        return kb_opt_number("--rx-delay-p99-max-us", v, &us, &c->rx_delay_p99_max_us, e, n);
    default:    /* O_MINDEL */
        return kb_opt_fraction("--min-delivery", v, KB_BOUND(DELIVERY), &c->min_delivery, e, n);
    }
}

static int is_number(int o)
{
    switch (o) {
    case O_UPTO: case O_FACTOR: case O_STEPS: case O_ATTEMPTS: case O_DURATION: case O_WARMUP:
    case O_THREADS: case O_CONNS: case O_CPUMAX: case O_LAG: case O_RXDELAY: case O_MINDEL:
        return 1;
    default:
        return 0;
    }
}

/* Options that name something, and flags. 0, or -1 with e. */
static int text_opt(int o, const char *v, struct kb_calibrate_cfg *c, char *e, size_t n)
{
    size_t ncg = 0;
    switch (o) {
    case O_OUT: c->out_dir = v; return 0;
    case O_ROUTE: c->route = v; return 0;
    case O_SCPUS: c->server_cpus = v; return 0;
    case O_CCPUS: c->client_cpus = v; return 0;
    case O_CONTRACT: c->contract_path = v; return 0;
    case O_STOP: c->stop_at_miss = 1; return 0;
    case O_KEEP: c->stop_at_miss = 0; return 0;
    case O_RT: c->client_rt = 1; return 0;
    default:    /* O_CGROUP, repeatable */
        while (ncg < 3 && c->client_cgroup[ncg])
            ncg++;
        if (ncg == 3) {
            snprintf(e, n, "--client-cgroup: at most 3, not '%s' as well", v);
            return -1;
        }
        c->client_cgroup[ncg] = v;
        return 0;
    }
}

/* Fills cfg from argv; 0, 1 for --help, 2 on a bad option (said on stderr). */
static int parse(int argc, char **argv, struct kb_calibrate_cfg *cfg)
{
    char e[320];
    int o, rc;
    optind = 1;
    while ((o = getopt_long(argc, argv, "h", long_opts, NULL)) != -1) {
        if (o == 'h')
            return 1;
        if (o == '?' || o == ':')
            return usage(stderr);
        rc = is_number(o) ? number_opt(o, optarg, cfg, e, sizeof(e))
                          : text_opt(o, optarg, cfg, e, sizeof(e));
        if (rc) {
            fprintf(stderr, "kneebench calibrate: %s\n", e);
            return 2;
        }
    }
    if (optind < argc) {
        fprintf(stderr, "kneebench calibrate: unexpected argument '%s'\n", argv[optind]);
        return 2;
    }
    if (!cfg->out_dir) {
        fprintf(stderr, "kneebench calibrate: --out DIR is required\n");
        return 2;
    }
    return 0;
}

int cmd_calibrate(int argc, char **argv)
{
    struct kb_calibrate_cfg cfg = { .warmup_s = -1, .progress = stdout };
    struct kb_calibrate_result *r;
    char err[512] = "";
    int rc = parse(argc, argv, &cfg);

    if (rc)
        return rc == 1 ? usage(stdout) : rc;
    if (mkdir(cfg.out_dir, 0755) != 0 && errno != EEXIST) {
        fprintf(stderr, "kneebench calibrate: %s: %s\n", cfg.out_dir, strerror(errno));
        return 2;
    }
    /* its evidence is written inside by name, often as root */
    if (kb_dir_own(cfg.out_dir, 0, err, sizeof(err)) < 0) {
        fprintf(stderr, "kneebench calibrate: --out %s\n", err);
        return 2;
    }
    if (!(r = calloc(1, sizeof(*r))))
        return 2;
    if (kb_calibrate(&cfg, r, err, sizeof(err)) < 0) {
        fprintf(stderr, "kneebench calibrate: %s\n", err);
        free(r);
        return 2;
    }
    if (r->highest_held_rps > r->margin_rps)
        printf("calibrate: held %.0f req/s above a missed rung: not counted (the margin is a "
               "claim about every rate below it)\n", r->highest_held_rps);
    printf("calibrate: margin %.0f req/s (every rung up to it held); required %.0f = %.2f x %.0f: %s\n"
           "calibrate: wrote %s\n", r->margin_rps, r->required_rps, r->factor, r->up_to_rps,
           r->proven ? "PROVEN" : "NOT PROVEN (the client is the limit; curve points above "
           "margin/factor are client-limited)", r->json_path);
    rc = r->proven ? 0 : 1;
    free(r);
    return rc;
}
