/* cmd_soak.c -- `kneebench soak`: the one-hour qualification (docs/protocol.md, "The
 * one-hour qualification") on gray-static, into a run directory.
 *
 * Flow per phase (contract.soak, in order): for the db phase start a throwaway cluster in
 * the phase's directory (gray-static/pgcluster.sh via runner/sandbox/pgcluster.c) and start
 * the runtime of the phase's /db design (soak.db_mode or --db-mode: gray-static-blocking for
 * the paper's blocking route, gray-static for the readiness design) with its db_command_extra;
 * the other phases run gray-static without --db, as the paper did. Start the fixture in the sandbox (the curve's limits and CPU split), read the limits
 * back, hash it, preflight the route; then the load generator as a child pinned to the
 * client CPUs for warmup + duration; after warmup + settle, server RSS and descriptors (and
 * /stats in the db phase) every sample_every seconds until the measured interval ends.
 * Postflight, identity again, /stats back at rest (db: the contract's zero gauges), the
 * phase's windows read back from its own series (runner/run/soakwin.c), fits and verdict
 * (runner/run/soak.c), completion marker last. Then report.md from the phases' evidence (runner/report/
 * report_soak.c), and the run's marker. The run's skeleton is runner/run/run.c's, shared
 * with `kneebench curve`: the run directory, plan.json and run.json, the interrupt flag
 * (SIGINT/SIGTERM only set it; every exit goes through kb_run_close(), which stops the load
 * child, the fixture, and so its cgroup, and the cluster), and each phase's evidence, every
 * write checked: a phase whose files could not all be written gets incomplete.json instead
 * of DONE. Starting the fixture, its limits and identity, the load child and the server
 * samples are runner/run/server.c's. */
#define _GNU_SOURCE
#include "runner/util/clock.h"
#include "runner/cli/commands.h"
#include "runner/util/evidence.h"
#include "runner/run/run.h"
#include "runner/run/server.h"
#include "runner/report/report.h"
#include "runner/util/jfield.h"
#include "runner/sandbox/pgcluster.h"
#include "runner/load/preflight.h"
#include "runner/sandbox/procs.h"
#include "runner/util/root.h"
#include "runner/sandbox/sandbox.h"
#include "runner/run/soak.h"
#include "runner/sandbox/spawn.h"
#include "runner/run/verdict.h"
#include "fixtures/contract.h"

#include <getopt.h>
#include <jansson.h>
#include <math.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#define RUNTIME "gray-static"
#define MAX_PHASES 16
#define MAX_SAMPLES 100000

struct soak {
    struct kb_run r;            /* the run directory, contract, server (r.fx: placement,
                                * sandbox, the fixture now running, the load child), the db
                                * phase's cluster, the interrupt flag */
    const struct kb_runtime *rt;
    const struct kb_runtime *db_rt;    /* the db phase's: the /db design db_mode names */
    const char *db_mode;               /* NULL when no phase is the db route's */
    struct kb_soak_planned ph[MAX_PHASES];
    size_t nph;
    double duration_s, warmup_s, settle_s, every_s, drain_s;
    int threads, connections, db_pool;
    struct kb_soak_criteria crit;
};

/* ---- options -------------------------------------------------------------------------- */

static int usage(FILE *f)
{
    fprintf(f,
        "usage: kneebench soak --out DIR [options]\n"
        "  --out DIR               the run (made; an existing one must be yours, writable by\n"
        "                          no one else)\n"
        "  The one-hour qualification on " RUNTIME ": sequential phases, routes, rates,\n"
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

struct args {
    const char *out, *phases, *rates, *backend, *scpus, *ccpus, *build, *load_cmd, *contract;
    const char *image, *db_mode;
    double duration, warmup, settle, every, drain, min_delivery;
    double rss_pct, rss_floor, fd_pct, fd_floor, client_cpu_max, client_lag_max_us;
    double window_max, max_rate_drop, p99_growth, p99_floor_ms;     /* < 0: the contract's */
    int threads, connections, db_pool, no_limits;
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

static int parse_args(int argc, char **argv, struct args *a)
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

/* ---- the plan ------------------------------------------------------------------------- */

/* Phases from --phases/--rates or the contract; durations and windows from the options or
 * contract.soak. The contract's phase durations must agree unless --duration overrides. */
static int plan(struct soak *s, const struct args *a, char *err, size_t errlen)
{
    char list[1024], rates[1024], *save = NULL, *save2 = NULL, *tok, *rt;
    const struct kb_contract *c = &s->r.c;
    size_t nrates = 0;
    s->duration_s = a->duration > 0 ? a->duration
                  : c->nsoak_phases ? c->soak_phases[0].duration_s : 0;
    s->warmup_s = a->warmup >= 0 ? a->warmup : c->soak_warmup_s;
    s->settle_s = a->settle >= 0 ? a->settle : c->soak_settle_s;
    s->every_s = a->every > 0 ? a->every : c->soak_sample_every_s;
    s->drain_s = a->drain >= 0 ? a->drain : c->drain_s;
    s->threads = a->threads > 0 ? a->threads : c->threads;
    s->connections = a->connections > 0 ? a->connections : c->connections;
    s->db_pool = a->db_pool > 0 ? a->db_pool : c->db_pool_size;
    if (a->phases) {
        snprintf(list, sizeof(list), "%s", a->phases);
        for (tok = strtok_r(list, ",", &save); tok; tok = strtok_r(NULL, ",", &save)) {
            long rate = 0;
            for (size_t i = 0; i < c->nsoak_phases; i++)
                if (!strcmp(c->soak_phases[i].route, tok))
                    rate = c->soak_phases[i].rate;
            const struct kb_route *r = kb_contract_route(c, tok);
            if (!r || !kb_route_served_by(r, RUNTIME)) {
                snprintf(err, errlen, "phase '%s': no such route served by " RUNTIME, tok);
                return -1;
            }
            if (s->nph == MAX_PHASES) {
                snprintf(err, errlen, "more than %d phases", MAX_PHASES);
                return -1;
            }
            snprintf(s->ph[s->nph].route, sizeof(s->ph[0].route), "%s", tok);
            s->ph[s->nph++].rate = rate;
        }
    } else {
        for (size_t i = 0; i < c->nsoak_phases && i < MAX_PHASES; i++) {
            snprintf(s->ph[i].route, sizeof(s->ph[0].route), "%s", c->soak_phases[i].route);
            s->ph[i].rate = c->soak_phases[i].rate;
            if (a->duration <= 0 && c->soak_phases[i].duration_s != s->duration_s) {
                snprintf(err, errlen, "the contract's soak phases differ in duration; "
                         "give --duration");
                return -1;
            }
        }
        s->nph = c->nsoak_phases < MAX_PHASES ? c->nsoak_phases : MAX_PHASES;
    }
    if (a->rates) {
        snprintf(rates, sizeof(rates), "%s", a->rates);
        for (rt = strtok_r(rates, ",", &save2); rt; rt = strtok_r(NULL, ",", &save2), nrates++) {
            char *end;
            long r = strtol(rt, &end, 10);
            if (end == rt || *end || r <= 0 || nrates >= s->nph) {
                snprintf(err, errlen, "--rates: '%s' is not one positive rate per phase", a->rates);
                return -1;
            }
            s->ph[nrates].rate = r;
        }
        if (nrates != s->nph) {
            snprintf(err, errlen, "--rates gives %zu rates for %zu phases", nrates, s->nph);
            return -1;
        }
    }
    for (size_t i = 0; i < s->nph; i++) {
        if (s->ph[i].rate <= 0) {
            snprintf(err, errlen, "phase %s has no rate in the contract; give --rates",
                     s->ph[i].route);
            return -1;
        }
        snprintf(s->ph[i].dir, sizeof(s->ph[i].dir), "%s/phases/%02zu-%s", s->r.dir, i + 1,
                 s->ph[i].route);
    }
    if (!s->nph || s->duration_s <= 0 || s->every_s <= 0) {
        snprintf(err, errlen, "nothing to run (no phases, or no duration / sampling interval)");
        return -1;
    }
    return 0;
}

/* The db phase's /db design and its runtime (--db-mode, else the contract's soak.db_mode,
 * which is the paper's), and the gauges its /stats must bring back to zero: the contract's,
 * the same the db qualification checks. */
static int plan_db(struct soak *s, const struct args *a, char *err, size_t errlen)
{
    const struct kb_contract *c = &s->r.c;
    int db = 0;
    for (size_t i = 0; i < s->nph; i++)
        db |= !strcmp(s->ph[i].route, "db");
    if (!db) {
        if (a->db_mode)
            snprintf(err, errlen, "--db-mode is for the db phase, which this plan does not run");
        return a->db_mode ? -1 : 0;
    }
    s->db_mode = a->db_mode ? a->db_mode : c->soak_db_mode ? c->soak_db_mode : "readiness";
    if (!(s->db_rt = kb_contract_db_runtime(c, RUNTIME, s->db_mode))) {
        snprintf(err, errlen, "the contract has no runtime for " RUNTIME "'s %s /db design "
                 "(runtimes[].db_mode)", s->db_mode);
        return -1;
    }
    if (!c->qual.zero_gauges.n) {
        snprintf(err, errlen, "the contract names no gauges for /stats at rest "
                 "(qualification.zero_gauges)");
        return -1;
    }
    return 0;
}

/* The decay gate's tolerances: the options', else the contract's soak.windows. */
static int plan_decay(struct soak *s, const struct args *a, char *err, size_t errlen)
{
    const struct kb_soak_windows *w = &s->r.c.soak_windows;
    struct kb_decay_rule *d = &s->crit.decay;
    d->max_s = a->window_max > 0 ? a->window_max : w->max_s;
    d->max_rate_drop = a->max_rate_drop >= 0 ? a->max_rate_drop : w->max_rate_drop;
    d->p99_factor = a->p99_growth >= 1 ? a->p99_growth : w->p99_growth_factor;
    d->p99_floor_us = a->p99_floor_ms >= 0 ? a->p99_floor_ms * 1000 : w->p99_growth_floor_us;
    if (d->max_s < 1 || d->max_rate_drop >= 1 || d->p99_factor <= 1 || !w->max_s) {
        snprintf(err, errlen, "the decay gate needs windows of at least 1 s, a rate drop under "
                 "1, a p99 growth factor above 1 and the contract's soak.windows");
        return -1;
    }
    return 0;
}

static json_t *plan_json(const struct soak *s)
{
    json_t *ph = json_array(), *plan;
    for (size_t i = 0; i < s->nph; i++)
        json_array_append_new(ph, json_pack("{s:s,s:I,s:s}", "route", s->ph[i].route, "rate",
                                            (json_int_t)s->ph[i].rate, "dir", s->ph[i].dir));
    plan = json_pack("{s:s,s:o,s:f,s:f,s:f,s:f,s:f,s:i,s:i,s:i,s:s,s:b,s:s,s:s,"
                     "s:{s:f,s:f,s:I,s:I,s:{s:f,s:f},s:{s:f,s:f}}}",
        "runtime", RUNTIME, "phases", ph, "duration_s", s->duration_s, "warmup_s", s->warmup_s,
        "settle_s", s->settle_s, "sample_every_s", s->every_s, "drain_s", s->drain_s,
        "threads", s->threads, "connections", s->connections, "db_pool", s->db_pool,
        "backend", s->r.backend, "unconstrained", s->r.fx.no_limits,
        "server_cpus", s->r.fx.server_cpus,
        "client_cpus", s->r.fx.client_cpus, "criteria", "min_delivery", s->crit.min_delivery,
        "client_cpu_max_fraction", s->crit.client_cpu_max_fraction, "client_lag_p99_max_us",
        (json_int_t)s->crit.client_lag_p99_max_us, "min_samples", (json_int_t)s->crit.min_samples,
        "rss_growth", "pct_of_mean_per_hour", s->crit.rss.pct_per_hour, "floor_bytes",
        s->crit.rss.floor, "fd_growth", "pct_of_mean_per_hour", s->crit.fds.pct_per_hour,
        "floor_descriptors", s->crit.fds.floor);
    json_object_set_new(json_object_get(plan, "criteria"), "decay", json_pack(
        "{s:f,s:I,s:f,s:f,s:f}", "window_max_s", s->crit.decay.max_s, "windows",
        (json_int_t)kb_soakwin_count(s->duration_s, s->crit.decay.max_s), "max_rate_drop",
        s->crit.decay.max_rate_drop, "p99_growth_factor", s->crit.decay.p99_factor,
        "p99_growth_floor_us", s->crit.decay.p99_floor_us));
    json_object_set_new(plan, "db_mode", s->db_mode ? json_string(s->db_mode) : json_null());
    return plan;
}

/* A run directory holds one plan: a re-run must ask for the same one to resume it. */
static int write_or_check_plan(struct soak *s, char *err, size_t errlen)
{
    return kb_run_plan_file(s->r.dir, plan_json(s), "soak plan", err, errlen);
}

/* ---- identity ------------------------------------------------------------------------- */

/* run.json: the skeleton's identity, with gray-static's and PostgreSQL's versions. */
static int write_run_identity(struct soak *s, int argc, char **argv, char *err, size_t errlen)
{
    char *const names[] = { RUNTIME };
    char pg[512];
    json_t *v = kb_run_versions(&s->r, names, 1);
    kb_run_pg_version(&s->r, pg, sizeof(pg));
    json_object_set_new(v, "postgresql", json_string(pg));
    return kb_run_identity(&s->r, argc, argv, "soak", v, NULL, err, errlen);
}

/* ---- the fixture and the cluster ------------------------------------------------------ */

/* Start the cluster (db), the fixture, wait, limits, identity, preflight: the first failure
 * becomes the phase's preflight reason (a failed phase, never a crash of the run). argvs
 * gets the fixture's command. */
static void start_phase(struct soak *s, const struct kb_soak_planned *p, struct kb_soak_obs *o,
                        char *argvs[64])
{
    char err[1024], reason[512] = "", fixdir[4200], pgdir[4300];
    const struct kb_route *r = kb_contract_route(&s->r.c, p->route);
    int db = !strcmp(p->route, "db");
    json_t *pre = json_object();

    s->r.fx.rt = db ? s->db_rt : s->rt;       /* the db phase: its /db design's runtime */
    s->r.fx.port = kb_free_port(err, sizeof(err));
    snprintf(fixdir, sizeof(fixdir), "%s/fixture", p->dir);
    kb_path(pgdir, sizeof(pgdir), p->dir, "pg");
    if (db && !s->db_rt->db_command_extra.n) {
        kb_run_fixture_begin(&s->r, fixdir);
        snprintf(reason, sizeof(reason), "cluster: %s has no db_command_extra in the contract",
                 s->db_rt->name);
    } else if (kb_run_launch(&s->r, fixdir, db ? pgdir : NULL, s->db_pool, argvs, reason,
                             sizeof(reason)) == 0) {
        kb_run_write_json(&s->r.fixture_ev, fixdir, "identity.json", s->r.fx.identity);
        /* the db pool connects after the port opens: give that route time to answer */
        if (kb_pgrun_wait_route(s->r.fx.port, r, db ? 15000 : 2000, kb_srv_alive, &s->r.fx,
                                err, sizeof(err)) < 0)
            snprintf(reason, sizeof(reason), "%s: %.200s", r->path, err);
    }
    snprintf(o->point.preflight_reason, sizeof(o->point.preflight_reason), "%s", reason);
    o->point.preflight_failed = o->point.preflight_reason[0] != '\0';
    json_object_set_new(pre, "failed", json_boolean(o->point.preflight_failed));
    json_object_set_new(pre, "reason", json_string(o->point.preflight_reason));
    json_object_set_new(pre, "port", json_integer(s->r.fx.port));
    json_object_set_new(pre, "db", json_boolean(db));
    kb_run_write_json(&s->r.fixture_ev, fixdir, "preflight.json", pre);
    json_decref(pre);
}

/* ---- sampling ------------------------------------------------------------------------- */

struct samples {
    const struct soak *s;
    int db;                    /* the db phase: /stats too */
    struct kb_afile *csv, *stats;
    double *t, *rss, *fds;
    size_t n, cap;
    long suspended_max, stats_reads, stats_failures;
};

static const char *const stat_keys[] = {
    "suspended_now", "suspended_max", "queries_in_flight", "queued", "pool_idle", "pool_busy",
    "pool_connecting", "pool_down", "pool_size", "retired", "errors", "unavailable",
    "queries_total",
};
#define NSTAT (sizeof(stat_keys) / sizeof(stat_keys[0]))

static json_t *get_stats(const struct soak *s, char *err, size_t errlen)
{
    struct kb_http_reply rep;
    json_error_t je;
    json_t *j;
    if (kb_http_get(s->r.fx.port, "/stats", 2000, &rep, err, errlen) < 0)
        return NULL;
    if (rep.status != 200 || !(j = json_loadb(rep.body, rep.body_len, 0, &je))) {
        snprintf(err, errlen, "/stats answered %d, not JSON", rep.status);
        return NULL;
    }
    return j;
}

static void sample_stats(const struct soak *s, struct samples *sm, double t)
{
    char err[256];
    json_t *j = get_stats(s, err, sizeof(err));
    sm->stats_reads++;
    fprintf(sm->stats->f, "%.3f", t);
    for (size_t i = 0; i < NSTAT; i++) {
        json_t *v = j ? json_object_get(j, stat_keys[i]) : NULL;
        if (v)
            fprintf(sm->stats->f, ",%lld", (long long)json_integer_value(v));
        else
            fprintf(sm->stats->f, ",");
    }
    fprintf(sm->stats->f, "\n");
    if (!j)
        sm->stats_failures++;
    else if (json_integer_value(json_object_get(j, "suspended_max")) > sm->suspended_max)
        sm->suspended_max = (long)json_integer_value(json_object_get(j, "suspended_max"));
    json_decref(j);
}

/* One sample, t seconds after the load started (kb_srv_drive's callback). */
static void sample_once(void *arg, double t0, double now)
{
    struct samples *sm = arg;
    struct kb_proc_sample srv;
    double t = now - t0;
    kb_srv_sample_server(&sm->s->r.fx, &srv);
    fprintf(sm->csv->f, "%.3f,%.2f,%lld,%lld,%ld,%ld,%zu\n", t, srv.cpu_seconds, srv.rss_bytes,
            srv.pss_bytes, srv.fds, srv.threads, srv.nprocs);
    fflush(sm->csv->f);
    if (sm->n == sm->cap && sm->cap < MAX_SAMPLES) {
        size_t cap = sm->cap ? sm->cap * 2 : 512;
        double *a = realloc(sm->t, cap * sizeof(double)), *b, *c;
        if (a)
            sm->t = a;
        b = realloc(sm->rss, cap * sizeof(double));
        if (b)
            sm->rss = b;
        c = realloc(sm->fds, cap * sizeof(double));
        if (c)
            sm->fds = c;
        if (a && b && c)
            sm->cap = cap;
    }
    if (sm->n < sm->cap && srv.nprocs > 0) {
        sm->t[sm->n] = t;
        sm->rss[sm->n] = (double)srv.rss_bytes;
        sm->fds[sm->n] = (double)srv.fds;
        sm->n++;
    }
    if (sm->db)
        sample_stats(sm->s, sm, t);
}

/* The load child to its end, sampling from warmup + settle to the end of the measured
 * interval (the drain is not under the offered load). -1 when interrupted. */
static int drive(struct soak *s, const struct kb_soak_planned *p, struct samples *sm,
                 struct kb_soak_obs *o)
{
    const struct kb_srv_load ld = { s->duration_s, s->warmup_s, s->drain_s, s->threads,
                                   s->connections, 0 };
    const struct kb_srv_sampling sp = { s->warmup_s + s->settle_s, s->every_s,
                                       s->warmup_s + s->duration_s + 0.05, sample_once, sm,
                                       SIGTERM };
    return kb_srv_drive(&s->r.fx, &ld, p->route, p->rate, p->dir, &sp, &o->point);
}

/* The db phase's gauges must come back to zero once the load stops (docs/protocol.md, "The
 * PostgreSQL route": readable under load, back at zero after it): the contract's
 * qualification.zero_gauges, the db qualification's own list. Polled for up to 10 s. */
static json_t *stats_at_rest(struct soak *s, struct kb_soak_obs *o)
{
    char *const *gauges = s->r.c.qual.zero_gauges.v;
    size_t ngauges = s->r.c.qual.zero_gauges.n;
    double until = kb_srv_now_s() + 10.0;
    json_t *j = NULL;
    o->stats_checked = 1;
    for (;;) {
        char err[256];
        size_t off = 0;
        json_decref(j);
        j = get_stats(s, err, sizeof(err));
        o->stats_at_rest = j != NULL;
        o->stats_reason[0] = '\0';
        if (!j)
            snprintf(o->stats_reason, sizeof(o->stats_reason), "%.200s", err);
        for (size_t i = 0; j && i < ngauges; i++) {
            json_int_t v = json_integer_value(json_object_get(j, gauges[i]));
            if (!json_is_integer(json_object_get(j, gauges[i])) || v != 0) {
                o->stats_at_rest = 0;
                off += (size_t)snprintf(o->stats_reason + off, off < sizeof(o->stats_reason)
                                        ? sizeof(o->stats_reason) - off : 0, "%s%s=%lld",
                                        off ? " " : "", gauges[i], (long long)v);
            }
        }
        if (o->stats_at_rest || kb_srv_now_s() >= until || kb_run_interrupted() ||
            !kb_srv_alive(&s->r.fx))
            return j;
        kb_sleep_ms(250);
    }
}

/* ---- evidence and verdict ------------------------------------------------------------- */

static json_t *slope_json(const struct kb_slope *f, int have)
{
    if (!have)
        return json_pack("{s:I,s:n}", "n", (json_int_t)f->n, "slope_per_s");
    return json_pack("{s:I,s:f,s:f,s:f,s:f,s:f,s:f,s:f,s:f,s:f,s:f}", "n", (json_int_t)f->n,
        "first", f->first, "last", f->last, "min", f->min, "max", f->max, "mean", f->mean,
        "slope_per_s", f->slope_per_s, "per_hour", f->per_hour, "rise", f->rise,
        "window_s", f->window_s, "intercept", f->intercept);
}

static json_t *command_json(const struct soak *s, const struct kb_soak_planned *p,
                            char *const *argvs)
{
    const struct kb_route *r = kb_contract_route(&s->r.c, p->route);
    json_t *fx = json_array();
    for (size_t i = 0; argvs[i]; i++)
        json_array_append_new(fx, json_string(argvs[i]));
    return json_pack("{s:s,s:s,s:I,s:s,s:i,s:f,s:f,s:f,s:f,s:f,s:i,s:i,s:s,s:s,s:b,s:o,"
                     "s:{s:i,s:s,s:s?,s:s?},s:s}",
        "runtime", RUNTIME, "route", p->route, "rate", (json_int_t)p->rate, "url_path", r->path,
        "port", s->r.fx.port, "duration_s", s->duration_s, "warmup_s", s->warmup_s, "settle_s",
        s->settle_s, "sample_every_s", s->every_s, "drain_s", s->drain_s, "threads", s->threads,
        "connections", s->connections, "server_cpus", s->r.fx.server_cpus, "client_cpus",
        s->r.fx.client_cpus, "unconstrained", s->r.fx.no_limits, "fixture_argv", fx,
        "expect", "status",
        r->status, "content_type", r->content_type, "body", r->body, "body_regex",
        r->body_regex, "load_generator", s->r.fx.load_cmd);
}

/* The windows as verdict.json keeps them: each window's figures, first against last, the
 * rule and what it found. */
static json_t *windows_json(const struct soak *s, const struct kb_soakwin *w, const char *werr)
{
    struct kb_decay d;
    char why[512];
    json_t *rows = json_array();
    int rc;
    if (!w)
        return json_pack("{s:s,s:s}", "verdict", "unjudged", "reason", werr);
    rc = kb_soakwin_judge(w, &s->crit.decay, &d, why, sizeof(why));
    for (size_t k = 0; k < w->n; k++) {
        const struct kb_soak_window *x = &w->w[k];
        json_array_append_new(rows, json_pack("{s:f,s:f,s:f,s:I,s:I,s:f,s:o,s:b}", "start_s",
            x->start_s, "end_s", x->end_s, "seconds", x->seconds, "completed",
            (json_int_t)x->completed, "bounded", (json_int_t)x->bounded, "achieved_rps",
            x->achieved_rps, "p99_us", isnan(x->p99_us) ? json_null() : json_real(x->p99_us),
            "p99_is_bound", x->p99_bound));
    }
    return json_pack("{s:f,s:I,s:o,s:s,s:s,s:o,s:o,s:o,s:{s:f,s:f,s:f}}", "window_s",
        w->window_s, "n", (json_int_t)w->n, "windows", rows, "verdict",
        rc > 0 ? (d.rate_decays ? "throughput-decayed" : "tail-grew") : rc < 0 ? "unjudged"
                                                                        : "flat",
        "reason", why, "rate_drop", rc < 0 ? json_null() : json_real(d.rate_drop),
        "p99_ratio", rc < 0 || !isfinite(d.p99_ratio) ? json_null() : json_real(d.p99_ratio),
        "p99_growth_us", rc < 0 ? json_null() : json_real(d.p99_growth_us), "rule",
        "max_rate_drop", s->crit.decay.max_rate_drop, "p99_growth_factor",
        s->crit.decay.p99_factor, "p99_growth_floor_us", s->crit.decay.p99_floor_us);
}

/* Fits, verdict, then the marker: written in this order, and the marker only when every
 * file before it was, so a DONE phase is whole. 0 pass, 1 not a pass, -1 with err when the
 * phase's evidence is incomplete. */
static int finish_phase(struct soak *s, const struct kb_soak_planned *p, struct samples *sm,
                        struct kb_soak_obs *o, const struct kb_point_load *lr, json_t *load,
                        json_t *after, double wall, struct kb_run_evidence *ev, char *err,
                        size_t errlen)
{
    char reason[768];
    enum kb_soak_verdict v;
    struct kb_soakwin *w = calloc(1, sizeof(*w));
    json_t *j;
    int rc;
    o->have_rss = kb_soak_fit(sm->t, sm->rss, sm->n, &o->rss) == 0;
    o->have_fds = kb_soak_fit(sm->t, sm->fds, sm->n, &o->fds) == 0;
    if (!w)
        snprintf(o->windows_err, sizeof(o->windows_err), "out of memory");
    else if (kb_soakwin_read(p->dir, s->duration_s, s->crit.decay.max_s, w, o->windows_err,
                             sizeof(o->windows_err)) == 0)
        o->windows = w;
    v = kb_soak_judge(lr, o, &s->crit, reason, sizeof(reason));
    j = json_pack("{s:s,s:I,s:s,s:s,s:f,s:o,s:o,s:o,s:o}", "route", p->route,
        "rate", (json_int_t)p->rate, "verdict", kb_soak_verdict_name(v), "reason", reason,
        "wall_s", wall, "rss_bytes", slope_json(&o->rss, o->have_rss), "fds",
        slope_json(&o->fds, o->have_fds), "load", load ? json_incref(load) : json_null(),
        "identity_sha256", json_string(s->r.fx.identity ? json_string_value(json_object_get(
                                                        s->r.fx.identity, "sha256")) : ""));
    json_object_set_new(j, "decay", windows_json(s, o->windows, o->windows_err));
    if (!strcmp(p->route, "db"))
        json_object_set_new(j, "db_mode", json_string(s->db_mode));
    if (o->stats_checked)
        json_object_set_new(j, "stats", json_pack("{s:I,s:I,s:I,s:b,s:s,s:O}",
            "suspended_max", (json_int_t)sm->suspended_max, "reads", (json_int_t)sm->stats_reads,
            "read_failures", (json_int_t)sm->stats_failures, "at_rest_after", o->stats_at_rest,
            "not_at_rest", o->stats_reason, "after", after ? after : json_null()));
    kb_run_write_json(ev, p->dir, "verdict.json", j);
    json_decref(j);
    rc = kb_run_point_finish(&s->r, ev, p->dir, json_pack("{s:s,s:s}", "phase", p->route,
                             "verdict", kb_soak_verdict_name(v)), err, errlen);
    printf("  %-10s %7ld/s  achieved %9.1f/s  p99 %9.2f ms  RSS %+.0f KiB/h  fds %+.2f/h  "
           "%zu samples  %s: %s\n", p->route, p->rate, lr->achieved_rps,
           lr->corrected.p99 / 1000.0, o->rss.per_hour / 1024.0, o->fds.per_hour, sm->n,
           rc < 0 ? "incomplete" : kb_soak_verdict_name(v),
           rc < 0 ? "its evidence could not be written whole; redone on re-run" : reason);
    fflush(stdout);
    o->windows = NULL;
    free(w);
    return rc < 0 ? -1 : v == KB_SOAK_PASS ? 0 : 1;
}

/* samples.csv (and the db phase's stats.csv) under their temporary names. */
static int open_csvs(const struct kb_soak_planned *p, struct samples *sm,
                     struct kb_run_evidence *ev)
{
    char head[512];
    size_t off;
    sm->csv = kb_run_csv_open(ev, p->dir, "samples.csv", "t_s,server_cpu_s,server_rss_bytes,"
                              "server_pss_bytes,server_fds,server_threads,server_procs\n");
    if (!sm->csv || !sm->db)
        return sm->csv ? 0 : -1;
    off = (size_t)snprintf(head, sizeof(head), "t_s");
    for (size_t i = 0; i < NSTAT && off < sizeof(head); i++)
        off += (size_t)snprintf(head + off, sizeof(head) - off, ",%s", stat_keys[i]);
    if (off < sizeof(head))
        snprintf(head + off, sizeof(head) - off, "\n");
    return (sm->stats = kb_run_csv_open(ev, p->dir, "stats.csv", head)) ? 0 : -1;
}

/* Close the sample files and give them their final names; with ev NULL (interrupted) they
 * are dropped: the phase is redone. */
static void close_csvs(struct samples *sm, struct kb_run_evidence *ev)
{
    if (!ev) {
        kb_run_csv_abort(&sm->csv);
        kb_run_csv_abort(&sm->stats);
        return;
    }
    kb_run_csv_close(ev, &sm->csv, "samples.csv");
    kb_run_csv_close(ev, &sm->stats, "stats.csv");
}

/* The load, sampled; postflight; /stats back at rest (db). -1 with err when it did not run
 * to its end. */
static int measure(struct soak *s, const struct kb_soak_planned *p, struct samples *sm,
                   struct kb_soak_obs *o, struct kb_point_load *lr, json_t **load,
                   json_t **after, char *err, size_t errlen)
{
    if (drive(s, p, sm, o) < 0) {
        snprintf(err, errlen, "phase %s: the load generator did not run to its end%s",
                 p->route, kb_run_interrupted() ? " (interrupted)" : "; left to redo");
        return -1;
    }
    kb_srv_read_load(p->dir, &o->point, lr, load);
    kb_srv_postflight(&s->r.fx, kb_contract_route(&s->r.c, p->route), &o->point);
    if (sm->db && !o->point.fixture_exited)
        *after = stats_at_rest(s, o);
    else if (sm->db)
        o->stats_checked = 1;
    return 0;
}

/* One phase. 0 pass, 1 not a pass, -1 with err when interrupted or its evidence could not
 * be written completely. */
static int run_phase(struct soak *s, const struct kb_soak_planned *p, char *err, size_t errlen)
{
    struct kb_soak_obs o;
    struct kb_point_load lr;
    struct kb_run_evidence ev = { "", "" };
    struct samples sm;
    char *argvs[64] = { 0 };
    json_t *load = NULL, *after = NULL, *j;
    double t0 = kb_srv_now_s();
    int rc = -1;

    memset(&o, 0, sizeof(o));
    memset(&lr, 0, sizeof(lr));
    memset(&sm, 0, sizeof(sm));
    sm.s = s;
    sm.db = !strcmp(p->route, "db");
    if (kb_run_point_begin(p->dir, err, errlen) < 0)
        return -1;
    printf("kneebench soak: phase %s at %ld/s for %g s (+%g s warmup)\n", p->route, p->rate,
           s->duration_s, s->warmup_s);
    fflush(stdout);
    start_phase(s, p, &o, argvs);
    if (kb_run_interrupted()) {
        snprintf(err, errlen, "phase %s interrupted while its fixture started", p->route);
        goto out;          /* no verdict, redone on resume */
    }
    j = command_json(s, p, argvs);
    kb_run_write_json(&ev, p->dir, "command.json", j);
    json_decref(j);
    if (open_csvs(p, &sm, &ev) < 0)
        rc = kb_run_point_finish(&s->r, &ev, p->dir, NULL, err, errlen);
    else if (o.point.preflight_failed ||
             measure(s, p, &sm, &o, &lr, &load, &after, err, errlen) == 0) {
        close_csvs(&sm, &ev);
        rc = finish_phase(s, p, &sm, &o, &lr, load, after, kb_srv_now_s() - t0, &ev, err,
                          errlen);
    }
out:
    close_csvs(&sm, NULL);
    kb_run_stop_fixture(&s->r);
    kb_tmpl_free(argvs, 64);
    free(sm.t);
    free(sm.rss);
    free(sm.fds);
    json_decref(load);
    json_decref(after);
    return kb_run_interrupted() ? -1 : rc;
}

/* ---- setup and the whole run ---------------------------------------------------------- */

static int setup(struct soak *s, const struct args *a, char *err, size_t errlen)
{
    const struct kb_srv_opts fo = { a->backend, a->build ? a->build : kb_root_build(), a->scpus,
                                   a->ccpus, a->load_cmd, a->no_limits, 0, a->image, NULL, NULL, NULL };
    if (kb_run_open(&s->r, "soak", a->out, a->contract, err, errlen) < 0)
        return -1;
    if (!(s->rt = kb_contract_runtime(&s->r.c, RUNTIME))) {
        snprintf(err, errlen, "the contract has no runtime " RUNTIME);
        return -1;
    }
    s->crit.min_delivery = a->min_delivery;
    s->crit.client_cpu_max_fraction = a->client_cpu_max >= 0 ? a->client_cpu_max
                                                               : s->r.c.client_cpu_max_fraction;
    s->crit.client_lag_p99_max_us = a->client_lag_max_us >= 0 ? (long)a->client_lag_max_us
                                                              : s->r.c.client_lag_p99_max_us;
    s->crit.client_rx_delay_p99_max_us = s->r.c.client_rx_delay_p99_max_us;
    s->crit.min_samples = 2;
    s->crit.rss.pct_per_hour = a->rss_pct;
    s->crit.rss.floor = a->rss_floor;
    s->crit.fds.pct_per_hour = a->fd_pct;
    s->crit.fds.floor = a->fd_floor;
    if (plan(s, a, err, errlen) < 0 || plan_db(s, a, err, errlen) < 0 ||
        plan_decay(s, a, err, errlen) < 0)
        return -1;
    s->r.fx.rt = s->rt;
    if (kb_run_setup(&s->r, &fo, err, errlen) < 0)
        return -1;
    for (size_t i = 0; i < s->nph; i++)     /* a db phase: PostgreSQL off the client's CPUs */
        if (!strcmp(s->ph[i].route, "db"))
            return kb_run_db_place(&s->r, NULL, err, errlen);
    return 0;
}

/* Phases in order; one whose marker exists is kept (resume). */
static int run_all(struct soak *s)
{
    char err[1400];
    int bad = 0, rc;
    for (size_t i = 0; i < s->nph && !kb_run_interrupted(); i++) {
        if (kb_run_point_done(s->ph[i].dir)) {
            printf("kneebench soak: phase %s complete, kept\n", s->ph[i].route);
            continue;
        }
        rc = run_phase(s, &s->ph[i], err, sizeof(err));
        if (rc < 0 && !kb_run_interrupted())
            fprintf(stderr, "kneebench soak: %s\n", err);
        bad += rc != 0;
    }
    return bad;
}

/* report.md from the phases' evidence; the run's DONE when every phase is complete. The
 * number of phases passed, -1 when report.md could not be written. */
static int report(struct soak *s)
{
    const struct kb_soak_report in = { s->r.dir, RUNTIME, s->r.backend, s->r.fx.server_cpus,
        s->r.fx.client_cpus, s->r.fx.no_limits, s->connections, s->threads, s->duration_s,
        s->warmup_s, s->settle_s, s->every_s, &s->crit, s->ph, s->nph, s->db_mode,
        &s->r.c.published_soak };
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
    struct soak s;
    struct args a;
    char err[1024];
    int rc = parse_args(argc, argv, &a), passed;
    if (rc)
        return rc == 1 ? 0 : rc;
    memset(&s, 0, sizeof(s));
    kb_run_signals();
    if (setup(&s, &a, err, sizeof(err)) < 0 || write_or_check_plan(&s, err, sizeof(err)) < 0 ||
        write_run_identity(&s, argc, argv, err, sizeof(err)) < 0) {
        fprintf(stderr, "kneebench soak: %s\n", err);
        kb_run_close(&s.r, SIGTERM);
        return 2;
    }
    if (!s.r.fx.no_limits)
        kb_run_sweep(&s.r, NULL);
    printf("kneebench soak: %zu phases of %g s into %s (backend %s%s, server CPUs %s, client "
           "CPUs %s)\n", s.nph, s.duration_s, s.r.dir, s.r.backend,
           s.r.fx.no_limits ? ", UNCONSTRAINED" : "", s.r.fx.server_cpus, s.r.fx.client_cpus);
    fflush(stdout);
    run_all(&s);
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
