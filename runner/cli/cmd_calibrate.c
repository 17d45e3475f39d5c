/* cmd_calibrate.c -- `kneebench calibrate`: prove the client's margin against the control
 * server (runner/run/calibrate.h). Exit 0 when the margin is proven, 1 when the gate trips
 * (margin below factor x --up-to), 2 on bad arguments or when the calibration cannot run. */
#define _POSIX_C_SOURCE 200809L
#include "runner/cli/commands.h"

#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>

#include "runner/run/calibrate.h"
#include "runner/util/evidence.h"

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
            "  --up-to RATE         the highest rate the curve will request (contract's max)\n"
            "  --factor F           margin to prove above it (1.25)\n"
            "  --steps N            rungs of the ladder, evenly spaced up to the top (6)\n"
            "  --duration S         measured seconds per step (3); --warmup S (1)\n"
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
            "  --contract FILE      (the tree's fixtures/contract.json)\n"
            "exit: 0 margin proven, 1 not proven, 2 could not run\n");
    return f == stdout ? 0 : 2;
}

static int parse_double(const char *s, double *out)
{
    char *end;
    errno = 0;
    *out = strtod(s, &end);
    return errno || end == s || *end ? -1 : 0;
}

/* Fills cfg from argv; 0, 1 for --help, -1 on a bad option. */
static int parse(int argc, char **argv, struct kb_calibrate_cfg *cfg)
{
    size_t ncg = 0;

    for (int i = 1; i < argc; i++) {
        const char *o = argv[i], *v = i + 1 < argc ? argv[i + 1] : NULL;
        double d = 0;
        int bad = 0;
        if (!strcmp(o, "--help") || !strcmp(o, "-h"))
            return 1;
        if (!strcmp(o, "--keep-going")) {
            cfg->stop_at_miss = 0;
            continue;
        }
        if (!strcmp(o, "--stop-at-miss")) {
            cfg->stop_at_miss = 1;
            continue;
        }
        if (!strcmp(o, "--rt")) {
            cfg->client_rt = 1;
            continue;
        }
        if (!v) {
            fprintf(stderr, "kneebench calibrate: %s needs a value\n", o);
            return -1;
        }
        i++;
        if (!strcmp(o, "--out")) cfg->out_dir = v;
        else if (!strcmp(o, "--route")) cfg->route = v;
        else if (!strcmp(o, "--server-cpus")) cfg->server_cpus = v;
        else if (!strcmp(o, "--client-cpus")) cfg->client_cpus = v;
        else if (!strcmp(o, "--contract")) cfg->contract_path = v;
        else if (!strcmp(o, "--client-cgroup") && ncg < 3) cfg->client_cgroup[ncg++] = v;
        else if (parse_double(v, &d) < 0 || d < 0) bad = 1;
        else if (!strcmp(o, "--up-to")) cfg->up_to_rps = d;
        else if (!strcmp(o, "--factor")) cfg->factor = d;
        else if (!strcmp(o, "--steps") && d >= 1 && d == (int)d) cfg->steps = (int)d;
        else if (!strcmp(o, "--attempts") && d >= 1 && d <= 5) cfg->attempts = (int)d;
        else if (!strcmp(o, "--duration") && d > 0) cfg->duration_s = d;
        else if (!strcmp(o, "--warmup")) cfg->warmup_s = d;
        else if (!strcmp(o, "--threads") && d >= 1 && d == (int)d) cfg->threads = (int)d;
        else if (!strcmp(o, "--connections") && d >= 1 && d == (int)d) cfg->connections = (int)d;
        else if (!strcmp(o, "--cpu-max")) cfg->cpu_max_fraction = d;
        else if (!strcmp(o, "--lag-p99-max-us")) cfg->lag_p99_max_us = d;
        else if (!strcmp(o, "--rx-delay-p99-max-us")) cfg->rx_delay_p99_max_us = d;
        else if (!strcmp(o, "--min-delivery")) cfg->min_delivery = d;
        else bad = 1;
        if (bad) {
            fprintf(stderr, "kneebench calibrate: bad option or value: %s %s\n", o, v);
            return -1;
        }
    }
    if (!cfg->out_dir) {
        fprintf(stderr, "kneebench calibrate: --out DIR is required\n");
        return -1;
    }
    if (cfg->factor != 0 && cfg->factor < 1.0) {
        fprintf(stderr, "kneebench calibrate: --factor must be at least 1\n");
        return -1;
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
        return rc > 0 ? usage(stdout) : usage(stderr);
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
