/* cmd_soak.c -- `kneebench soak`: its options parsed into struct kb_soak_opts, the phases
 * run by the method (runner/run/soak/soakrun.h), and report.md written from their evidence
 * (runner/report/soak/report_soak.c) with the run's marker. */
#define _GNU_SOURCE
#include "runner/cli/commands.h"
#include "runner/report/soak/report_soak.h"
#include "runner/run/soak/soakrun.h"
#include "runner/util/paths.h"
#include "runner/util/opts.h"

#include <getopt.h>
#include <jansson.h>
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
        "  --rates r1,r2           one rate per phase (4000, 4k, 1.5k)\n"
        "  --duration D --warmup D --settle D --sample-every D --drain D\n"
        "                          (durations: 30, 30s, 500ms, 2m, 1h; bare: seconds)\n"
        "  --threads N --connections N --db-pool N   (kneebench load's bounds: 1..256,\n"
        "                          1..60000; the pool 1..10000)\n"
        "  --min-delivery F        near-exact delivery floor (default 0.995)\n"
        "  --rss-growth-pct P --rss-floor BYTES    RSS growth rule (default 1 %%/h of the mean,\n"
        "                          and a fitted rise over 64 KiB in the window)\n"
        "  --fd-growth-pct P --fd-floor N          descriptors (default 1 %%/h and 1)\n"
        "  --db-mode MODE          the db phase's /db design: blocking (the papers' task\n"
        "                          workers parked on libpq, gray-static-blocking) or\n"
        "                          readiness (default: the contract's soak.db_mode,\n"
        "                          blocking, as the paper ran it)\n"
        "  --window-max D          decay windows of D, or a tenth of the phase when\n"
        "                          shorter (default: the contract's, 300)\n"
        "  --max-rate-drop F       the last window's achieved may fall by this fraction of the\n"
        "                          first's (default: the contract's, 0.005)\n"
        "  --p99-growth X --p99-growth-floor-ms N   the last window's corrected p99 may not\n"
        "                          exceed X times the first's by more than N ms (default:\n"
        "                          the contract's, 2 and 10)\n"
        "  --client-cpu-max F --client-lag-max-us N   client trust (default: the contract's)\n"
        "  --backend native|docker --no-limits --server-cpus LIST --client-cpus LIST\n"
        "  --controller-cpus LIST  the runner itself (samplers, the /stats reader) pinned\n"
        "                          there, never on a server CPU (default: the client CPUs)\n"
        "  --build DIR --load-cmd PATH --contract FILE\n"
        "A phase fails its decay gate when throughput fell or the tail grew beyond those from its\n"
        "first window to its last.\n"
        "Exit 0 when every phase passes, 1 when one does not or its evidence could not be\n"
        "written completely (its incomplete.json says which file; re-run to redo it), 2 for\n"
        "bad arguments/setup (a bad option is refused, naming it, before anything starts).\n");
    return f == stdout ? 1 : 2;
}

enum { O_OUT = 256, O_PHASES, O_RATES, O_DURATION, O_WARMUP, O_SETTLE, O_EVERY, O_DRAIN,
       O_THREADS, O_CONNS, O_DBPOOL, O_MINDEL, O_RSSPCT, O_RSSFLOOR, O_FDPCT, O_FDFLOOR,
       O_BACKEND, O_NOLIMITS, O_SCPUS, O_CCPUS, O_BUILD, O_LOADCMD, O_CONTRACT, O_CCPUMAX,
       O_LAGMAX, O_DBMODE, O_WINMAX, O_RATEDROP, O_P99GROWTH, O_P99FLOOR, O_CTLCPUS };

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
    { "controller-cpus", 1, 0, O_CTLCPUS },
    { "build", 1, 0, O_BUILD }, { "load-cmd", 1, 0, O_LOADCMD },
    { "contract", 1, 0, O_CONTRACT }, { "db-mode", 1, 0, O_DBMODE },
    { "window-max", 1, 0, O_WINMAX }, { "max-rate-drop", 1, 0, O_RATEDROP },
    { "p99-growth", 1, 0, O_P99GROWTH }, { "p99-growth-floor-ms", 1, 0, O_P99FLOOR },
    { "help", 0, 0, 'h' }, { 0, 0, 0, 0 },
};


/* The soak's own ranges; the load's and the criteria's are runner/util/opts.h's. */
static const struct kb_bound every = { 0.05, 3600, 0, 0 }, growth_pct = { 0, 1000, 0, 0 },
    bytes = { 0, 1e15, 0, 0 }, fds = { 0, 1e9, 0, 0 }, window = { 1, 86400, 0, 0 },
    p99_factor = { 1, 1000, 1, 0 }, p99_floor_ms = { 0, 3600000, 0, 0 };

/* The options of the phases' load and sampling, read through runner/util/opts.h. 0, or -1
 * with e. */
static int load_opt(int o, const char *v, struct kb_soak_opts *a, char *e, size_t n)
{
    switch (o) {
    case O_DURATION:
        return kb_opt_duration("--duration", v, KB_BOUND(DURATION), &a->duration, e, n);
    case O_WARMUP: return kb_opt_duration("--warmup", v, KB_BOUND(WARMUP), &a->warmup, e, n);
    case O_SETTLE: return kb_opt_duration("--settle", v, KB_BOUND(SETTLE), &a->settle, e, n);
    case O_EVERY: return kb_opt_duration("--sample-every", v, &every, &a->every, e, n);
    case O_DRAIN: return kb_opt_duration("--drain", v, KB_BOUND(DRAIN), &a->drain, e, n);
    case O_THREADS: return kb_opt_int("--threads", v, KB_BOUND(THREADS), &a->threads, e, n);
    case O_CONNS:
        return kb_opt_int("--connections", v, KB_BOUND(CONNECTIONS), &a->connections, e, n);
    case O_DBPOOL: return kb_opt_int("--db-pool", v, KB_BOUND(DB_POOL), &a->db_pool, e, n);
    default:    /* O_RATES: whole req/s for the plan */
        a->rates = v;
        return kb_opt_rates("--rates", v, KB_BOUND(PLAN_RATE), &a->rate_list, e, n);
    }
}

/* The criteria's options, read through runner/util/opts.h. 0, or -1 with e. */
static int criterion_opt(int o, const char *v, struct kb_soak_opts *a, char *e, size_t n)
{
    switch (o) {
    case O_MINDEL:
        return kb_opt_fraction("--min-delivery", v, KB_BOUND(DELIVERY), &a->min_delivery, e, n);
    case O_RSSPCT: return kb_opt_percent("--rss-growth-pct", v, &growth_pct, &a->rss_pct, e, n);
    case O_RSSFLOOR: return kb_opt_number("--rss-floor", v, &bytes, &a->rss_floor, e, n);
    case O_FDPCT: return kb_opt_percent("--fd-growth-pct", v, &growth_pct, &a->fd_pct, e, n);
    case O_FDFLOOR: return kb_opt_number("--fd-floor", v, &fds, &a->fd_floor, e, n);
    case O_CCPUMAX:
        return kb_opt_fraction("--client-cpu-max", v, KB_BOUND(FRACTION), &a->client_cpu_max,
                               e, n);
    case O_LAGMAX:
        return kb_opt_number("--client-lag-max-us", v, KB_BOUND(CLIENT_US_MAX),
                             &a->client_lag_max_us, e, n);
    case O_WINMAX: return kb_opt_duration("--window-max", v, &window, &a->window_max, e, n);
    case O_RATEDROP:
        return kb_opt_fraction("--max-rate-drop", v, KB_BOUND(FRACTION), &a->max_rate_drop, e, n);
    case O_P99GROWTH: return kb_opt_number("--p99-growth", v, &p99_factor, &a->p99_growth, e, n);
    default:    /* O_P99FLOOR */
        return kb_opt_number("--p99-growth-floor-ms", v, &p99_floor_ms, &a->p99_floor_ms, e, n);
    }
}

static int parse_args(int argc, char **argv, struct kb_soak_opts *a)
{
    char e[320];
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
        case O_RATES: case O_DURATION: case O_WARMUP: case O_SETTLE: case O_EVERY:
        case O_DRAIN: case O_THREADS: case O_CONNS: case O_DBPOOL:
            bad = load_opt(o, optarg, a, e, sizeof(e));
            break;
        case O_MINDEL: case O_RSSPCT: case O_RSSFLOOR: case O_FDPCT: case O_FDFLOOR:
        case O_CCPUMAX: case O_LAGMAX: case O_WINMAX: case O_RATEDROP: case O_P99GROWTH:
        case O_P99FLOOR:
            bad = criterion_opt(o, optarg, a, e, sizeof(e));
            break;
        case O_DBMODE:
            if (strcmp(optarg, "blocking") && strcmp(optarg, "readiness")) {
                snprintf(e, sizeof(e), "--db-mode is blocking or readiness, not '%s'", optarg);
                bad = 1;
            }
            a->db_mode = optarg;
            break;
        case O_BACKEND: a->backend = optarg; break;
        case O_NOLIMITS: a->no_limits = 1; break;
        case O_SCPUS: a->scpus = optarg; break;
        case O_CCPUS: a->ccpus = optarg; break;
        case O_CTLCPUS:
            bad = kb_opt_cpulist("--controller-cpus", optarg, e, sizeof(e)) < 0;
            a->ctlcpus = optarg;
            break;
        case O_BUILD: a->build = optarg; break;
        case O_LOADCMD: a->load_cmd = optarg; break;
        case O_CONTRACT: a->contract = optarg; break;
        case 'h': return usage(stdout);
        default: return usage(stderr);
        }
        /* the first refusal, before anything is made or started */
        if (bad) {
            fprintf(stderr, "kneebench soak: %s\n", e);
            return 2;
        }
    }
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
    char err[1024], path[KB_PATH_MAX];
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

