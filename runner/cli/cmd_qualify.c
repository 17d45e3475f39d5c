/* cmd_qualify.c -- `kneebench qualify`: seed 001's db qualification (docs/protocol.md, "The
 * db qualification") on gray-static into a run directory, and its report.
 *
 * Only the options and what is printed live here: the parameters come from the contract's
 * qualification section (runner/run/qualify/qualrun.h), the run is runner/run/qualify/qualrun.c's, the
 * judgement runner/run/qualjudge.c's and the report runner/report/qualify/report_qualify.c's.
 * SIGINT/SIGTERM only set the flag; every exit goes through kb_qualrun_close(), which stops
 * the load child, the /stats sampler, the fixture (and so its cgroup) and the cluster. */
#define _GNU_SOURCE
#include "runner/cli/commands.h"
#include "runner/util/evidence.h"
#include "runner/report/qualify/report_qualify.h"
#include "runner/run/qualify/qualrun.h"
#include "runner/util/paths.h"
#include "runner/util/jfield.h"
#include "runner/util/opts.h"
#include "runner/util/root.h"
#include "contract/contract.h"

#include <getopt.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

static int usage(FILE *f)
{
    fprintf(f,
        "usage: kneebench qualify --out DIR [options]\n"
        "  --out DIR               the run (made; an existing one must be yours, writable by\n"
        "                          no one else)\n"
        "  The PostgreSQL paper's qualification of " KB_QUAL_RUNTIME "'s /db: one fixed rate for one\n"
        "  duration with its pool (the contract's qualification section) against a\n"
        "  throwaway PostgreSQL cluster, /stats read by its own thread throughout, server\n"
        "  RSS and descriptors sampled after warmup + settle. Passes with delivery and\n"
        "  corrected p99 within the contract's criteria, exact responses, no RSS or\n"
        "  descriptor sample above the first, /stats read at least as often as the\n"
        "  contract asks, and its final sample with every listed gauge at zero. DIR gets\n"
        "  the evidence, verdict.json, report.md and report.json (the paper's figures,\n"
        "  from the contract, beside this run's). It reproduces the paper's readiness\n"
        "  qualification, whose criteria these are, on gray-static's readiness design; the\n"
        "  report shows the paper's later continuation run beside it.\n"
        "  --rate R --duration D   shorten it (default: the contract's; rates 8000, 8k;\n"
        "                          durations 30, 30s, 500ms, 2m)\n"
        "  --warmup D --settle D --drain D --threads N --connections N --db-pool N\n"
        "                          (kneebench load's bounds: 1..256, 1..60000; the pool\n"
        "                          1..10000)\n"
        "  --sample-every D        RSS and descriptor sampling interval\n"
        "  --stats-every D         /stats reading interval\n"
        "  --client-lag-max-us N   the client's send-lag bound (default: the contract's)\n"
        "  --no-limits --server-cpus LIST --client-cpus LIST --build DIR --load-cmd PATH\n"
        "  --controller-cpus LIST  the runner itself (samplers, the /stats reader) pinned\n"
        "                          there, never on a server CPU (default: the client CPUs)\n"
        "  --contract FILE\n"
        "Exit 0 when it passes, 1 when it fails or the client was the limit, 2 for bad\n"
        "arguments (refused, naming the option, before anything starts) or setup, 130 when\n"
        "interrupted (no DONE marker; re-run to redo it).\n");
    return f == stdout ? 1 : 2;
}

enum { O_OUT = 256, O_RATE, O_DURATION, O_WARMUP, O_SETTLE, O_DRAIN, O_THREADS, O_CONNS,
       O_DBPOOL, O_EVERY, O_STATS_EVERY, O_LAGMAX, O_NOLIMITS, O_SCPUS, O_CCPUS, O_BUILD,
       O_LOADCMD, O_CONTRACT, O_CTLCPUS };

static const struct option long_opts[] = {
    { "out", 1, 0, O_OUT }, { "rate", 1, 0, O_RATE }, { "duration", 1, 0, O_DURATION },
    { "warmup", 1, 0, O_WARMUP }, { "settle", 1, 0, O_SETTLE }, { "drain", 1, 0, O_DRAIN },
    { "threads", 1, 0, O_THREADS }, { "connections", 1, 0, O_CONNS },
    { "db-pool", 1, 0, O_DBPOOL }, { "sample-every", 1, 0, O_EVERY },
    { "stats-every", 1, 0, O_STATS_EVERY }, { "client-lag-max-us", 1, 0, O_LAGMAX },
    { "no-limits", 0, 0, O_NOLIMITS }, { "server-cpus", 1, 0, O_SCPUS },
    { "client-cpus", 1, 0, O_CCPUS }, { "build", 1, 0, O_BUILD },
    { "load-cmd", 1, 0, O_LOADCMD }, { "contract", 1, 0, O_CONTRACT },
    { "controller-cpus", 1, 0, O_CTLCPUS }, { "help", 0, 0, 'h' }, { 0, 0, 0, 0 },
};

/* An option's value: -1 (or NULL) when not given, so the contract's stands. */
struct args {
    const char *out, *scpus, *ccpus, *ctlcpus, *build, *load_cmd, *contract;
    double rate, duration, warmup, settle, drain, every, stats_every, lag_max_us;
    int threads, connections, db_pool;
    int no_limits;
};

/* A number option, read through runner/util/opts.h against the load generator's bounds, so
 * that a value its load child would refuse, or one past an int, never reaches the run. 0, or
 * -1 with e. */
static int number_opt(int o, const char *v, struct args *a, char *e, size_t n)
{
    switch (o) {
    case O_RATE: return kb_opt_rate("--rate", v, KB_BOUND(PLAN_RATE), &a->rate, e, n);
    case O_DURATION:
        return kb_opt_duration("--duration", v, KB_BOUND(DURATION), &a->duration, e, n);
    case O_WARMUP: return kb_opt_duration("--warmup", v, KB_BOUND(WARMUP), &a->warmup, e, n);
    case O_SETTLE: return kb_opt_duration("--settle", v, KB_BOUND(SETTLE), &a->settle, e, n);
    case O_DRAIN: return kb_opt_duration("--drain", v, KB_BOUND(DRAIN), &a->drain, e, n);
    case O_THREADS: return kb_opt_int("--threads", v, KB_BOUND(THREADS), &a->threads, e, n);
    case O_CONNS:
        return kb_opt_int("--connections", v, KB_BOUND(CONNECTIONS), &a->connections, e, n);
    case O_DBPOOL: return kb_opt_int("--db-pool", v, KB_BOUND(DB_POOL), &a->db_pool, e, n);
    case O_EVERY:
        return kb_opt_duration("--sample-every", v, KB_BOUND(INTERVAL), &a->every, e, n);
    case O_STATS_EVERY:
        return kb_opt_duration("--stats-every", v, KB_BOUND(INTERVAL), &a->stats_every, e, n);
    default:    /* O_LAGMAX */
        return kb_opt_number("--client-lag-max-us", v, KB_BOUND(CLIENT_US_MAX), &a->lag_max_us,
                             e, n);
    }
}

static int parse_args(int argc, char **argv, struct args *a)
{
    char e[320];
    int o;
    memset(a, 0, sizeof(*a));
    a->rate = a->duration = a->warmup = a->settle = a->drain = a->every = a->stats_every = -1;
    a->lag_max_us = a->threads = a->connections = a->db_pool = -1;
    optind = 1;
    while ((o = getopt_long(argc, argv, "h", long_opts, NULL)) != -1) {
        switch (o) {
        case O_RATE: case O_DURATION: case O_WARMUP: case O_SETTLE: case O_DRAIN:
        case O_THREADS: case O_CONNS: case O_DBPOOL: case O_EVERY: case O_STATS_EVERY:
        case O_LAGMAX:
            if (number_opt(o, optarg, a, e, sizeof(e))) {
                fprintf(stderr, "kneebench qualify: %s\n", e);
                return 2;
            }
            break;
        case O_OUT: a->out = optarg; break;
        case O_NOLIMITS: a->no_limits = 1; break;
        case O_SCPUS: a->scpus = optarg; break;
        case O_CCPUS: a->ccpus = optarg; break;
        case O_CTLCPUS:
            if (kb_opt_cpulist("--controller-cpus", optarg, e, sizeof(e)) < 0) {
                fprintf(stderr, "kneebench qualify: %s\n", e);
                return 2;
            }
            a->ctlcpus = optarg;
            break;
        case O_BUILD: a->build = optarg; break;
        case O_LOADCMD: a->load_cmd = optarg; break;
        case O_CONTRACT: a->contract = optarg; break;
        case 'h': return usage(stdout);
        default: return usage(stderr);
        }
    }
    if (!a->out || optind < argc) {
        fprintf(stderr, "kneebench qualify: %s\n", a->out ? "unexpected argument"
                                                          : "--out DIR is required");
        return 2;
    }
    return 0;
}

/* The contract's parameters with the options given on top. */
static void apply(const struct args *a, struct kb_qual_params *p)
{
    p->rate = a->rate >= 0 ? (long)a->rate : p->rate;     /* whole: kb_opt_rate checked */
    p->duration_s = a->duration >= 0 ? a->duration : p->duration_s;
    p->warmup_s = a->warmup >= 0 ? a->warmup : p->warmup_s;
    p->settle_s = a->settle >= 0 ? a->settle : p->settle_s;
    p->drain_s = a->drain >= 0 ? a->drain : p->drain_s;
    p->threads = a->threads >= 0 ? a->threads : p->threads;
    p->connections = a->connections >= 0 ? a->connections : p->connections;
    p->db_pool = a->db_pool >= 0 ? a->db_pool : p->db_pool;
    p->sample_every_s = a->every >= 0 ? a->every : p->sample_every_s;
    p->stats_every_s = a->stats_every >= 0 ? a->stats_every : p->stats_every_s;
    if (a->lag_max_us >= 0)
        p->crit.point.client_lag_p99_max_us = (long)a->lag_max_us;
}

/* The verdict's one-line summary, from verdict.json. */
static void print_summary(const char *run)
{
    char path[KB_PATH_MAX];
    json_t *v = kb_evidence_load(kb_path(path, sizeof(path), run, "verdict.json"), NULL);
    json_t *load = json_object_get(v, "load"), *st = json_object_get(v, "stats");
    printf("kneebench qualify: %.1f of %.0f req/s (%.3f %%), corrected p99 %.2f ms, /stats "
           "%.1f/s, up to %.0f handlers suspended; %s: %s\nkneebench qualify: report %s/"
           "report.md\n", kb_jnum(load, "achieved_rps", NULL), kb_jnum(v, "rate", NULL),
           100 * kb_jnum(load, "delivery", NULL), kb_jnum(load, "corrected_us", "p99") / 1000,
           kb_jnum(st, "per_s", NULL), kb_jnum(st, "suspended_now_max", NULL),
           kb_jstr(v, "verdict", "?"), kb_jstr(v, "reason", ""), run);
    json_decref(v);
}

static int run(struct args *a, int argc, char **argv)
{
    const struct kb_fixture_opts fo = { .backend = "native",
        .build = a->build ? a->build : kb_root_build(), .server_cpus = a->scpus,
        .client_cpus = a->ccpus, .controller_cpus = a->ctlcpus, .load_cmd = a->load_cmd, .no_limits = a->no_limits };
    struct kb_qual_params p;
    struct kb_qualrun q;
    char err[1024];
    int v;
    const struct kb_contract *c = &q.r.c;
    memset(&q, 0, sizeof(q));
    if (kb_run_open(&q.r, "qualify", a->out, a->contract, err, sizeof(err)) < 0 ||
        kb_qual_params_from(c, &p, err, sizeof(err)) < 0)
        goto bad_setup;
    apply(a, &p);
    if (kb_qual_params_check(&p, err, sizeof(err)) < 0 ||
        kb_qualrun_setup(&q, &fo, &p, argc, argv, err, sizeof(err)) < 0)
        goto bad_setup;
    if (!q.r.fx.no_limits)
        kb_run_sweep(&q.r, NULL);
    printf("kneebench qualify: reproducing the PostgreSQL paper's %s (%s design); its report "
           "also shows the paper's other runs of it\n", c->qual.reproduces->label,
           q.r.fx.rt->db_mode);
    printf("kneebench qualify: " KB_QUAL_RUNTIME " %s at %ld req/s for %g s (+%g s warmup), "
           "pool %d, /stats every %g s, into %s (server CPUs %s, client CPUs %s%s)\n",
           c->qual.route, p.rate, p.duration_s, p.warmup_s, p.db_pool, p.stats_every_s, a->out,
           q.r.fx.server_cpus, q.r.fx.client_cpus, q.r.fx.no_limits ? ", UNCONSTRAINED" : "");
    fflush(stdout);
    v = kb_qualrun_exec(&q, &p, err, sizeof(err));
    if (v < 0 || kb_qual_report_write(a->out, c, err, sizeof(err)) < 0)
        v = -1;
    kb_qualrun_close(&q);
    if (kb_run_interrupted()) {
        fprintf(stderr, "kneebench qualify: interrupted; no verdict, re-run to redo it\n");
        return 130;
    }
    if (v < 0) {
        fprintf(stderr, "kneebench qualify: %s\n", err);
        return 1;
    }
    print_summary(a->out);
    return v == KB_QUAL_PASS ? 0 : 1;
bad_setup:
    fprintf(stderr, "kneebench qualify: %s\n", err);
    kb_qualrun_close(&q);
    return 2;
}

int cmd_qualify(int argc, char **argv)
{
    struct args a;
    int rc = parse_args(argc, argv, &a);
    if (rc)
        return rc == 1 ? 0 : rc;
    kb_run_signals();
    return run(&a, argc, argv);
}
