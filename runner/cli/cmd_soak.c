/* cmd_soak.c -- `kneebench soak`: its options parsed into struct kb_soak_opts, the phases
 * run by the method (runner/run/soakrun.h), and report.md written from their evidence
 * (runner/report/report_soak.c) with the run's marker. */
#define _GNU_SOURCE
#include "runner/cli/commands.h"
#include "runner/report/report.h"
#include "runner/run/soakrun.h"
#include "runner/util/evidence.h"

#include <getopt.h>
#include <jansson.h>
#include <math.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

/* ---- options -------------------------------------------------------------------------- */

static int usage(FILE *f)
{
    fprintf(f,
        "usage: kneebench soak --out DIR [options]\n"
        "  --out DIR               the run (made; an existing one must be yours, writable by\n"
        "                          no one else)\n"
        "  The one-hour qualification on " KB_SOAK_RUNTIME ": sequential phases, routes, rates,\n"
        "  durations and windows from the contract's soak section unless overridden.\n"
        "  --phases a,b (--routes)  which phases, in this order (default: the contract's)\n"
        "  --rates r1,r2           one rate per phase\n"
        "  --duration S --warmup S --settle S --sample-every S --drain S\n"
        "  --threads N --connections N --db-pool N\n"
        "  --min-delivery F        near-exact delivery floor (default 0.995)\n"
        "  --rss-growth-pct P --rss-floor BYTES    RSS growth rule (default 1 %%/h of the mean,\n"
        "                          and a fitted rise over 64 KiB in the window)\n"
        "  --fd-growth-pct P --fd-floor N          descriptors (default 1 %%/h and 1)\n"
        "  --db-mode MODE          the db phase's /db design: blocking (the paper's original\n"
        "                          route, gray-static-blocking) or readiness (default: the\n"
        "                          contract's soak.db_mode, blocking, as the paper ran it)\n"
        "  --window-max S          decay windows of S seconds, or a tenth of the phase when\n"
        "                          shorter (default: the contract's, 300)\n"
        "  --max-rate-drop F       the last window's achieved may fall by this fraction of the\n"
        "                          first's (default: the contract's, 0.005)\n"
        "  --p99-growth X --p99-growth-floor-ms N   the last window's corrected p99 may not\n"
        "                          exceed X times the first's by more than N ms (default:\n"
        "                          the contract's, 2 and 10)\n"
        "  --client-cpu-max F --client-lag-max-us N   client trust (default: the contract's)\n"
        "  --backend native|docker --no-limits --server-cpus LIST --client-cpus LIST\n"
        "  --build DIR --load-cmd PATH --contract FILE\n"
        "A phase fails its decay gate when throughput fell or the tail grew beyond those from its\n"
        "first window to its last.\n"
        "Exit 0 when every phase passes, 1 when one does not or its evidence could not be\n"
        "written completely (its incomplete.json says which file; re-run to redo it), 2 for\n"
        "bad arguments/setup.\n");
    return f == stdout ? 1 : 2;
}

enum { O_OUT = 256, O_PHASES, O_RATES, O_DURATION, O_WARMUP, O_SETTLE, O_EVERY, O_DRAIN,
       O_THREADS, O_CONNS, O_DBPOOL, O_MINDEL, O_RSSPCT, O_RSSFLOOR, O_FDPCT, O_FDFLOOR,
       O_BACKEND, O_NOLIMITS, O_SCPUS, O_CCPUS, O_BUILD, O_LOADCMD, O_CONTRACT, O_CCPUMAX,
       O_LAGMAX, O_DBMODE, O_WINMAX, O_RATEDROP, O_P99GROWTH, O_P99FLOOR };

static const struct option long_opts[] = {
    { "out", 1, 0, O_OUT }, { "run", 1, 0, O_OUT }, { "phases", 1, 0, O_PHASES },
    { "routes", 1, 0, O_PHASES }, { "rates", 1, 0, O_RATES }, { "duration", 1, 0, O_DURATION },
    { "warmup", 1, 0, O_WARMUP }, { "settle", 1, 0, O_SETTLE },
    { "sample-every", 1, 0, O_EVERY }, { "drain", 1, 0, O_DRAIN },
    { "threads", 1, 0, O_THREADS }, { "connections", 1, 0, O_CONNS },
    { "db-pool", 1, 0, O_DBPOOL }, { "min-delivery", 1, 0, O_MINDEL },
    { "rss-growth-pct", 1, 0, O_RSSPCT }, { "rss-floor", 1, 0, O_RSSFLOOR },
    { "fd-growth-pct", 1, 0, O_FDPCT }, { "fd-floor", 1, 0, O_FDFLOOR },
    { "client-cpu-max", 1, 0, O_CCPUMAX }, { "client-lag-max-us", 1, 0, O_LAGMAX },
    { "backend", 1, 0, O_BACKEND }, { "no-limits", 0, 0, O_NOLIMITS },
    { "server-cpus", 1, 0, O_SCPUS }, { "client-cpus", 1, 0, O_CCPUS },
    { "build", 1, 0, O_BUILD }, { "load-cmd", 1, 0, O_LOADCMD },
    { "contract", 1, 0, O_CONTRACT }, { "db-mode", 1, 0, O_DBMODE },
    { "window-max", 1, 0, O_WINMAX }, { "max-rate-drop", 1, 0, O_RATEDROP },
    { "p99-growth", 1, 0, O_P99GROWTH }, { "p99-growth-floor-ms", 1, 0, O_P99FLOOR },
    { "help", 0, 0, 'h' }, { 0, 0, 0, 0 },
};


/* A number option: finite and >= lo, else a usage error. */
static int num_opt(const char *name, const char *s, double lo, double *out)
{
    char *end;
    double v = strtod(s, &end);
    if (end == s || *end || !isfinite(v) || v < lo) {
        fprintf(stderr, "kneebench soak: --%s wants a number >= %g, not '%s'\n", name, lo, s);
        return -1;
    }
    *out = v;
    return 0;
}

static int parse_args(int argc, char **argv, struct kb_soak_opts *a)
{
    double d;
    int o, bad = 0;
    memset(a, 0, sizeof(*a));
    a->duration = a->warmup = a->settle = a->every = a->drain = -1;
    a->client_cpu_max = a->client_lag_max_us = -1;
    a->window_max = a->max_rate_drop = a->p99_growth = a->p99_floor_ms = -1;
    a->min_delivery = 0.995;
    a->rss_pct = 1.0;
    a->rss_floor = 65536;
    a->fd_pct = 1.0;
    a->fd_floor = 1.0;
    a->backend = "native";
    optind = 1;
    while ((o = getopt_long(argc, argv, "h", long_opts, NULL)) != -1) {
        switch (o) {
        case O_OUT: a->out = optarg; break;
        case O_PHASES: a->phases = optarg; break;
        case O_RATES: a->rates = optarg; break;
        case O_DURATION: bad |= num_opt("duration", optarg, 0.001, &a->duration); break;
        case O_WARMUP: bad |= num_opt("warmup", optarg, 0, &a->warmup); break;
        case O_SETTLE: bad |= num_opt("settle", optarg, 0, &a->settle); break;
        case O_EVERY: bad |= num_opt("sample-every", optarg, 0.05, &a->every); break;
        case O_DRAIN: bad |= num_opt("drain", optarg, 0, &a->drain); break;
        case O_THREADS: bad |= num_opt("threads", optarg, 1, &d); a->threads = (int)d; break;
        case O_CONNS: bad |= num_opt("connections", optarg, 1, &d); a->connections = (int)d; break;
        case O_DBPOOL: bad |= num_opt("db-pool", optarg, 1, &d); a->db_pool = (int)d; break;
        case O_MINDEL: bad |= num_opt("min-delivery", optarg, 0, &a->min_delivery); break;
        case O_RSSPCT: bad |= num_opt("rss-growth-pct", optarg, 0, &a->rss_pct); break;
        case O_RSSFLOOR: bad |= num_opt("rss-floor", optarg, 0, &a->rss_floor); break;
        case O_FDPCT: bad |= num_opt("fd-growth-pct", optarg, 0, &a->fd_pct); break;
        case O_FDFLOOR: bad |= num_opt("fd-floor", optarg, 0, &a->fd_floor); break;
        case O_CCPUMAX: bad |= num_opt("client-cpu-max", optarg, 0, &a->client_cpu_max); break;
        case O_LAGMAX: bad |= num_opt("client-lag-max-us", optarg, 0, &a->client_lag_max_us); break;
        case O_DBMODE:
            if (strcmp(optarg, "blocking") && strcmp(optarg, "readiness")) {
                fprintf(stderr, "kneebench soak: --db-mode is blocking or readiness, not "
                        "'%s'\n", optarg);
                bad = 1;
            }
            a->db_mode = optarg;
            break;
        case O_WINMAX: bad |= num_opt("window-max", optarg, 1, &a->window_max); break;
        case O_RATEDROP: bad |= num_opt("max-rate-drop", optarg, 0, &a->max_rate_drop); break;
        case O_P99GROWTH: bad |= num_opt("p99-growth", optarg, 1, &a->p99_growth); break;
        case O_P99FLOOR: bad |= num_opt("p99-growth-floor-ms", optarg, 0, &a->p99_floor_ms); break;
        case O_BACKEND: a->backend = optarg; break;
        case O_NOLIMITS: a->no_limits = 1; break;
        case O_SCPUS: a->scpus = optarg; break;
        case O_CCPUS: a->ccpus = optarg; break;
        case O_BUILD: a->build = optarg; break;
        case O_LOADCMD: a->load_cmd = optarg; break;
        case O_CONTRACT: a->contract = optarg; break;
        case 'h': return usage(stdout);
        default: return usage(stderr);
        }
    }
    if (bad)
        return 2;
    if (!strcmp(a->backend, "docker") && getenv("KB_DOCKER_IMAGE") && *getenv("KB_DOCKER_IMAGE"))
        a->image = getenv("KB_DOCKER_IMAGE");
    if (!a->out || optind < argc) {
        fprintf(stderr, "kneebench soak: %s\n", a->out ? "unexpected argument"
                                                       : "--out DIR is required");
        return 2;
    }
    return 0;
}

static int report(struct kb_soakrun *s)
{
    const struct kb_soak_report in = { .run = s->r.dir, .runtime = KB_SOAK_RUNTIME,
        .backend = s->r.backend, .server_cpus = s->r.fx.server_cpus,
        .client_cpus = s->r.fx.client_cpus, .unconstrained = s->r.fx.no_limits,
        .connections = s->connections, .threads = s->threads, .duration_s = s->duration_s,
        .warmup_s = s->warmup_s, .settle_s = s->settle_s, .every_s = s->every_s,
        .crit = &s->crit, .ph = s->ph, .nph = s->nph, .db_mode = s->db_mode,
        .paper = &s->r.c.published_soak };
    char err[1024], path[4300];
    size_t complete = 0;
    int passed = kb_report_soak(&in, &complete, err, sizeof(err));
    kb_path(path, sizeof(path), s->r.dir, "DONE");
    unlink(path);
    if (passed < 0) {
        fprintf(stderr, "kneebench soak: %s\n", err);
    } else if (complete == s->nph) {
        json_t *m = json_pack("{s:I,s:I,s:b}", "phases", (json_int_t)s->nph, "passed",
                              (json_int_t)passed, "qualified", (size_t)passed == s->nph);
        if (kb_run_evidence_json(path, m, err, sizeof(err)) < 0)
            fprintf(stderr, "kneebench soak: %s\n", err);
        json_decref(m);
    }
    return passed;
}

int cmd_soak(int argc, char **argv)
{
    struct kb_soakrun s;
    struct kb_soak_opts a;
    char err[1024];
    int rc = parse_args(argc, argv, &a), passed;
    if (rc)
        return rc == 1 ? 0 : rc;
    kb_run_signals();
    if (kb_soakrun_open(&s, &a, argc, argv, err, sizeof(err)) < 0) {
        fprintf(stderr, "kneebench soak: %s\n", err);
        kb_run_close(&s.r, SIGTERM);
        return 2;
    }
    printf("kneebench soak: %zu phases of %g s into %s (backend %s%s, server CPUs %s, client "
           "CPUs %s)\n", s.nph, s.duration_s, s.r.dir, s.r.backend,
           s.r.fx.no_limits ? ", UNCONSTRAINED" : "", s.r.fx.server_cpus, s.r.fx.client_cpus);
    fflush(stdout);
    kb_soakrun_all(&s);
    if (kb_run_interrupted()) {
        kb_run_close(&s.r, SIGTERM);
        fprintf(stderr, "kneebench soak: interrupted; complete phases are kept, re-run to "
                "resume\n");
        return 130;
    }
    passed = report(&s);
    kb_run_say_incomplete(&s.r, "phase");
    printf("kneebench soak: %d of %zu phases passed; report %s/report.md\n",
           passed < 0 ? 0 : passed, s.nph, s.r.dir);
    kb_run_close(&s.r, SIGTERM);
    return passed >= 0 && (size_t)passed == s.nph ? 0 : 1;
}

