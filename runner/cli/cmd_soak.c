/* cmd_soak.c -- `kneebench soak`: the one-hour qualification (docs/protocol.md, "The
 * one-hour qualification") on gray-static, into a run directory.
 *
 * Flow per phase (contract.soak, in order): for the db phase start a throwaway cluster in
 * the phase's directory (gray-static/pgcluster.sh via runner/sandbox/pgcluster.c) and add the
 * runtime's db_command_extra; the other phases run gray-static without --db, as the paper
 * did. Start the fixture in the sandbox (the curve's limits and CPU split), read the limits
 * back, hash it, preflight the route; then the load generator as a child pinned to the
 * client CPUs for warmup + duration; after warmup + settle, server RSS and descriptors (and
 * /stats in the db phase) every sample_every seconds until the measured interval ends.
 * Postflight, identity again, /stats back at rest (db), fits and verdict (runner/run/soak.c),
 * completion marker last. Then report.md from the phases' evidence, and the run's marker.
 * SIGINT/SIGTERM only set the one global flag; every exit goes through cleanup(), which
 * stops the load child, the fixture (and so its cgroup) and the cluster. Starting the
 * fixture, its limits and identity, the load child and the server samples are
 * runner/run/server.c's, shared with `kneebench curve`. */
#define _GNU_SOURCE
#include "runner/sandbox/capture.h"
#include "runner/util/clock.h"
#include "runner/cli/commands.h"
#include "runner/util/digest.h"
#include "runner/util/evidence.h"
#include "runner/run/server.h"
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

#include <errno.h>
#include <getopt.h>
#include <jansson.h>
#include <math.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#define RUNTIME "gray-static"
#define MAX_PHASES 16
#define MAX_SAMPLES 100000

static volatile sig_atomic_t g_stop;

static void on_signal(int sig)
{
    g_stop = sig;
}

struct phase {
    char route[64];
    long rate;
    char dir[4096];            /* <run>/phases/<NN>-<route> */
};

struct soak {
    struct kb_contract c;
    const struct kb_runtime *rt;
    struct kb_srv fx;           /* placement, sandbox, the fixture now running, the load child */
    const char *run, *backend;
    struct phase ph[MAX_PHASES];
    size_t nph;
    double duration_s, warmup_s, settle_s, every_s, drain_s;
    int threads, connections, db_pool;
    struct kb_soak_criteria crit;
    struct kb_pgrun pg;        /* the db phase's cluster, for cleanup() */
};

/* ---- options -------------------------------------------------------------------------- */

static int usage(FILE *f)
{
    fprintf(f,
        "usage: kneebench soak --out DIR [options]\n"
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
        "  --client-cpu-max F --client-lag-max-us N   client trust (default: the contract's)\n"
        "  --backend native|docker --no-limits --server-cpus LIST --client-cpus LIST\n"
        "  --build DIR --load-cmd PATH --contract FILE\n"
        "Exit 0 when every phase passes, 1 when one does not, 2 for bad arguments/setup.\n");
    return f == stdout ? 1 : 2;
}

enum { O_OUT = 256, O_PHASES, O_RATES, O_DURATION, O_WARMUP, O_SETTLE, O_EVERY, O_DRAIN,
       O_THREADS, O_CONNS, O_DBPOOL, O_MINDEL, O_RSSPCT, O_RSSFLOOR, O_FDPCT, O_FDFLOOR,
       O_BACKEND, O_NOLIMITS, O_SCPUS, O_CCPUS, O_BUILD, O_LOADCMD, O_CONTRACT, O_CCPUMAX,
       O_LAGMAX };

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
    { "contract", 1, 0, O_CONTRACT }, { "help", 0, 0, 'h' }, { 0, 0, 0, 0 },
};

struct args {
    const char *out, *phases, *rates, *backend, *scpus, *ccpus, *build, *load_cmd, *contract;
    const char *image;
    double duration, warmup, settle, every, drain, min_delivery;
    double rss_pct, rss_floor, fd_pct, fd_floor, client_cpu_max, client_lag_max_us;
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
    const struct kb_contract *c = &s->c;
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
        snprintf(s->ph[i].dir, sizeof(s->ph[i].dir), "%s/phases/%02zu-%s", s->run, i + 1,
                 s->ph[i].route);
    }
    if (!s->nph || s->duration_s <= 0 || s->every_s <= 0) {
        snprintf(err, errlen, "nothing to run (no phases, or no duration / sampling interval)");
        return -1;
    }
    return 0;
}

static json_t *plan_json(const struct soak *s)
{
    json_t *ph = json_array();
    for (size_t i = 0; i < s->nph; i++)
        json_array_append_new(ph, json_pack("{s:s,s:I,s:s}", "route", s->ph[i].route, "rate",
                                            (json_int_t)s->ph[i].rate, "dir", s->ph[i].dir));
    return json_pack("{s:s,s:o,s:f,s:f,s:f,s:f,s:f,s:i,s:i,s:i,s:s,s:b,s:s,s:s,"
                     "s:{s:f,s:f,s:I,s:I,s:{s:f,s:f},s:{s:f,s:f}}}",
        "runtime", RUNTIME, "phases", ph, "duration_s", s->duration_s, "warmup_s", s->warmup_s,
        "settle_s", s->settle_s, "sample_every_s", s->every_s, "drain_s", s->drain_s,
        "threads", s->threads, "connections", s->connections, "db_pool", s->db_pool,
        "backend", s->backend, "unconstrained", s->fx.no_limits, "server_cpus", s->fx.server_cpus,
        "client_cpus", s->fx.client_cpus, "criteria", "min_delivery", s->crit.min_delivery,
        "client_cpu_max_fraction", s->crit.client_cpu_max_fraction, "client_lag_p99_max_us",
        (json_int_t)s->crit.client_lag_p99_max_us, "min_samples", (json_int_t)s->crit.min_samples,
        "rss_growth", "pct_of_mean_per_hour", s->crit.rss.pct_per_hour, "floor_bytes",
        s->crit.rss.floor, "fd_growth", "pct_of_mean_per_hour", s->crit.fds.pct_per_hour,
        "floor_descriptors", s->crit.fds.floor);
}

/* A run directory holds one plan: a re-run must ask for the same one to resume it. */
static int write_or_check_plan(struct soak *s, char *err, size_t errlen)
{
    return kb_srv_plan_file(s->run, plan_json(s), "soak plan", err, errlen);
}

/* ---- identity ------------------------------------------------------------------------- */

static void version_line(char *const *argv, char *out, size_t outlen)
{
    if (kb_capture_line(argv, out, outlen) < 0 && !out[0])
        snprintf(out, outlen, "unavailable");
}

static int write_run_identity(struct soak *s, int argc, char **argv, char *err, size_t errlen)
{
    char hex[KB_SHA256_HEX], chex[KB_SHA256_HEX], when[64], gs[512], pg[512];
    char *gsv[16] = { 0 };
    char *pgv[] = { "sh", "-c", "d=$(ls -d /usr/lib/postgresql/*/bin 2>/dev/null | sort -V | "
                    "tail -n 1) && \"$d/postgres\" --version", NULL };
    json_t *args = json_array(), *run, *extra;
    const char *known;
    time_t t = time(NULL);
    int rc;
    /* what the sandbox adds (an image's identity: then it, not the host's builds, runs) */
    if (!(extra = kb_sandbox_run_evidence(s->fx.sandbox, err, errlen))) {
        json_decref(args);
        return -1;
    }
    known = kb_sandbox_runtime_version(s->fx.sandbox, RUNTIME);
    strftime(when, sizeof(when), "%Y-%m-%dT%H:%M:%SZ", gmtime(&t));
    for (int i = 0; i < argc; i++)
        json_array_append_new(args, json_string(argv[i]));
    if (kb_sha256_file("/proc/self/exe", hex, err, errlen) < 0)
        snprintf(hex, sizeof(hex), "unknown");
    if (kb_sha256_file(s->c.path, chex, err, errlen) < 0)
        snprintf(chex, sizeof(chex), "unknown");
    for (size_t i = 0; i < s->rt->version.n && i < 15; i++)
        gsv[i] = kb_srv_expand(&s->fx, s->rt->version.v[i], NULL);
    if (known)
        snprintf(gs, sizeof(gs), "%s", known);
    else
        version_line(gsv, gs, sizeof(gs));
    version_line(pgv, pg, sizeof(pg));
    for (size_t i = 0; i < 16; i++)
        free(gsv[i]);
    run = json_pack("{s:s,s:s,s:o,s:s,s:s,s:s,s:o,s:{s:s,s:s},s:s,s:b,s:{s:i,s:I,s:i,s:s,s:s}}",
        "kind", "soak", "started", when, "command_line", args, "runner_sha256", hex,
        "contract", s->c.path, "contract_sha256", chex, "host", kb_host_identity(),
        "runtime_versions", RUNTIME, gs, "postgresql", pg, "backend", s->backend,
        "unconstrained", s->fx.no_limits, "limits_requested", "cpus", s->c.cpus, "memory_bytes",
        (json_int_t)s->c.memory_bytes, "pids", s->c.pids, "server_cpus", s->fx.server_cpus,
        "client_cpus", s->fx.client_cpus);
    if (run)
        json_object_update(run, extra);
    json_decref(extra);
    json_object_set_new(run, "libmicrohttpd",
                        kb_fixture_mhd_version(json_object_get(run, "runtime_versions")));
    rc = kb_srv_run_file(s->run, run, t, err, errlen);
    json_decref(run);
    return rc;
}

/* ---- the fixture and the cluster ------------------------------------------------------ */

static void stop_fixture(struct soak *s)
{
    char err[512];
    if (kb_srv_stop(&s->fx, err, sizeof(err)) < 0)
        fprintf(stderr, "kneebench soak: %s\n", err);
}

static void stop_cluster(struct soak *s)
{
    char err[512];
    if (kb_sandbox_db_stop(s->fx.sandbox, &s->pg, err, sizeof(err)) < 0)
        fprintf(stderr, "kneebench soak: %s\n", err);
}

/* The cluster (db phase), the phase's fixture in fixdir, its identity, the route answering
 * exactly: the first failure goes into reason ("" when all is well). */
static void start_fixture(struct soak *s, const struct phase *p, const char *fixdir,
                          struct kb_fixture_spec *spec, char *reason, size_t reasonlen)
{
    char err[1024], path[4300];
    const struct kb_route *r = kb_contract_route(&s->c, p->route);
    int db = !strcmp(p->route, "db");
    if (kb_srv_start(&s->fx, spec, fixdir, reason, reasonlen) < 0)
        return;
    kb_path(path, sizeof(path), fixdir, "identity.json");
    kb_write_json_atomic(path, s->fx.identity, err, sizeof(err));
    if (kb_pgrun_wait_route(s->fx.port, r, db ? 15000 : 2000, kb_srv_alive, &s->fx, err,
                            sizeof(err)) < 0)
        snprintf(reason, reasonlen, "%s: %.200s", r->path, err);
}

/* Start the cluster (db), the fixture, wait, limits, identity, preflight: the first failure
 * becomes the phase's preflight reason (a failed phase, never a crash of the run). */
static void start_phase(struct soak *s, const struct phase *p, struct kb_soak_obs *o,
                        char *argvs[64])
{
    char err[1024], reason[512] = "", path[4300], fixdir[4200], log[4200], pgdir[4300];
    char *env[16] = { 0 };
    int db = !strcmp(p->route, "db");
    struct kb_fixture_spec spec;
    json_t *pre = json_object();

    s->fx.port = kb_free_port(err, sizeof(err));
    snprintf(fixdir, sizeof(fixdir), "%s/fixture", p->dir);
    kb_mkdirs(fixdir, err, sizeof(err));
    kb_path(pgdir, sizeof(pgdir), p->dir, "pg");
    if (db && !s->rt->db_command_extra.n)
        snprintf(reason, sizeof(reason), "cluster: " RUNTIME " has no db_command_extra in "
                 "the contract");
    else if (db && kb_sandbox_db_start(s->fx.sandbox, &s->pg, pgdir, err, sizeof(err)) < 0)
        snprintf(reason, sizeof(reason), "cluster: %.200s", err);
    kb_srv_spec(&s->fx, fixdir, db ? &s->pg : NULL, s->db_pool, argvs, env, log, &spec);
    if (!reason[0])
        start_fixture(s, p, fixdir, &spec, reason, sizeof(reason));
    snprintf(o->point.preflight_reason, sizeof(o->point.preflight_reason), "%s", reason);
    o->point.preflight_failed = o->point.preflight_reason[0] != '\0';
    json_object_set_new(pre, "failed", json_boolean(o->point.preflight_failed));
    json_object_set_new(pre, "reason", json_string(o->point.preflight_reason));
    json_object_set_new(pre, "port", json_integer(s->fx.port));
    json_object_set_new(pre, "db", json_boolean(db));
    kb_path(path, sizeof(path), fixdir, "preflight.json");
    kb_write_json_atomic(path, pre, err, sizeof(err));
    json_decref(pre);
    for (size_t i = 0; i < 16; i++)
        free(env[i]);
}

/* ---- sampling ------------------------------------------------------------------------- */

struct samples {
    const struct soak *s;
    int db;                    /* the db phase: /stats too */
    FILE *csv, *stats;
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
    if (kb_http_get(s->fx.port, "/stats", 2000, &rep, err, errlen) < 0)
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
    fprintf(sm->stats, "%.3f", t);
    for (size_t i = 0; i < NSTAT; i++) {
        json_t *v = j ? json_object_get(j, stat_keys[i]) : NULL;
        if (v)
            fprintf(sm->stats, ",%lld", (long long)json_integer_value(v));
        else
            fprintf(sm->stats, ",");
    }
    fprintf(sm->stats, "\n");
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
    kb_srv_sample_server(&sm->s->fx, &srv);
    fprintf(sm->csv, "%.3f,%.2f,%lld,%lld,%ld,%ld,%zu\n", t, srv.cpu_seconds, srv.rss_bytes,
            srv.pss_bytes, srv.fds, srv.threads, srv.nprocs);
    fflush(sm->csv);
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
static int drive(struct soak *s, const struct phase *p, struct samples *sm,
                 struct kb_soak_obs *o)
{
    const struct kb_srv_load ld = { s->duration_s, s->warmup_s, s->drain_s, s->threads,
                                   s->connections };
    const struct kb_srv_sampling sp = { s->warmup_s + s->settle_s, s->every_s,
                                       s->warmup_s + s->duration_s + 0.05, sample_once, sm,
                                       SIGTERM };
    return kb_srv_drive(&s->fx, &ld, p->route, p->rate, p->dir, &sp, &o->point);
}

/* The db phase's gauges must come back to zero once the load stops (docs/protocol.md, "The
 * PostgreSQL route": readable under load, back at zero after it). Polled for up to 10 s. */
static json_t *stats_at_rest(struct soak *s, struct kb_soak_obs *o)
{
    static const char *const gauges[] = { "suspended_now", "queries_in_flight", "queued",
                                          "pool_busy" };
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
        for (size_t i = 0; j && i < sizeof(gauges) / sizeof(gauges[0]); i++) {
            json_int_t v = json_integer_value(json_object_get(j, gauges[i]));
            if (!json_is_integer(json_object_get(j, gauges[i])) || v != 0) {
                o->stats_at_rest = 0;
                off += (size_t)snprintf(o->stats_reason + off, off < sizeof(o->stats_reason)
                                        ? sizeof(o->stats_reason) - off : 0, "%s%s=%lld",
                                        off ? " " : "", gauges[i], (long long)v);
            }
        }
        if (o->stats_at_rest || kb_srv_now_s() >= until || g_stop || !kb_srv_alive(&s->fx))
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

static json_t *command_json(const struct soak *s, const struct phase *p, char *const *argvs)
{
    const struct kb_route *r = kb_contract_route(&s->c, p->route);
    json_t *fx = json_array();
    for (size_t i = 0; argvs[i]; i++)
        json_array_append_new(fx, json_string(argvs[i]));
    return json_pack("{s:s,s:s,s:I,s:s,s:i,s:f,s:f,s:f,s:f,s:f,s:i,s:i,s:s,s:s,s:b,s:o,"
                     "s:{s:i,s:s,s:s?,s:s?},s:s}",
        "runtime", RUNTIME, "route", p->route, "rate", (json_int_t)p->rate, "url_path", r->path,
        "port", s->fx.port, "duration_s", s->duration_s, "warmup_s", s->warmup_s, "settle_s",
        s->settle_s, "sample_every_s", s->every_s, "drain_s", s->drain_s, "threads", s->threads,
        "connections", s->connections, "server_cpus", s->fx.server_cpus, "client_cpus",
        s->fx.client_cpus, "unconstrained", s->fx.no_limits, "fixture_argv", fx, "expect", "status",
        r->status, "content_type", r->content_type, "body", r->body, "body_regex",
        r->body_regex, "load_generator", s->fx.load_cmd);
}

/* Fits, verdict, then the marker: written in this order so a DONE phase is whole. */
static int finish_phase(struct soak *s, const struct phase *p, struct samples *sm,
                        struct kb_soak_obs *o, const struct kb_point_load *lr, json_t *load,
                        json_t *after, double wall)
{
    char path[4300], err[512], reason[768];
    enum kb_soak_verdict v;
    json_t *j;
    int rc;
    o->have_rss = kb_soak_fit(sm->t, sm->rss, sm->n, &o->rss) == 0;
    o->have_fds = kb_soak_fit(sm->t, sm->fds, sm->n, &o->fds) == 0;
    v = kb_soak_judge(lr, o, &s->crit, reason, sizeof(reason));
    j = json_pack("{s:s,s:I,s:s,s:s,s:f,s:o,s:o,s:o,s:o}", "route", p->route,
        "rate", (json_int_t)p->rate, "verdict", kb_soak_verdict_name(v), "reason", reason,
        "wall_s", wall, "rss_bytes", slope_json(&o->rss, o->have_rss), "fds",
        slope_json(&o->fds, o->have_fds), "load", load ? json_incref(load) : json_null(),
        "identity_sha256", json_string(s->fx.identity ? json_string_value(json_object_get(
                                                        s->fx.identity, "sha256")) : ""));
    if (o->stats_checked)
        json_object_set_new(j, "stats", json_pack("{s:I,s:I,s:I,s:b,s:s,s:O}",
            "suspended_max", (json_int_t)sm->suspended_max, "reads", (json_int_t)sm->stats_reads,
            "read_failures", (json_int_t)sm->stats_failures, "at_rest_after", o->stats_at_rest,
            "not_at_rest", o->stats_reason, "after", after ? after : json_null()));
    kb_path(path, sizeof(path), p->dir, "verdict.json");
    rc = kb_write_json_atomic(path, j, err, sizeof(err));
    json_decref(j);
    j = json_pack("{s:s,s:s}", "phase", p->route, "verdict", kb_soak_verdict_name(v));
    kb_path(path, sizeof(path), p->dir, "DONE");
    if (rc == 0)
        rc = kb_write_json_atomic(path, j, err, sizeof(err));
    json_decref(j);
    if (rc < 0)
        fprintf(stderr, "kneebench soak: %s\n", err);
    printf("  %-10s %7ld/s  achieved %9.1f/s  p99 %9.2f ms  RSS %+.0f KiB/h  fds %+.2f/h  "
           "%zu samples  %s: %s\n", p->route, p->rate, lr->achieved_rps,
           lr->corrected.p99 / 1000.0, o->rss.per_hour / 1024.0, o->fds.per_hour, sm->n,
           kb_soak_verdict_name(v), reason);
    fflush(stdout);
    return rc < 0 ? -1 : v == KB_SOAK_PASS ? 0 : 1;
}

static int open_csvs(const struct phase *p, struct samples *sm, int db)
{
    char path[4300];
    kb_path(path, sizeof(path), p->dir, "samples.csv.tmp");
    if (!(sm->csv = kb_fopen_tmp(path)))
        return -1;
    fprintf(sm->csv, "t_s,server_cpu_s,server_rss_bytes,server_pss_bytes,server_fds,"
                     "server_threads,server_procs\n");
    if (!db)
        return 0;
    kb_path(path, sizeof(path), p->dir, "stats.csv.tmp");
    if (!(sm->stats = kb_fopen_tmp(path)))
        return -1;
    fprintf(sm->stats, "t_s");
    for (size_t i = 0; i < NSTAT; i++)
        fprintf(sm->stats, ",%s", stat_keys[i]);
    fprintf(sm->stats, "\n");
    return 0;
}

/* Close the sample files and give them their final names (the tmp names say "partial"). */
static void close_csvs(const struct phase *p, struct samples *sm)
{
    char a[4300], b[4300];
    if (sm->csv) {
        fclose(sm->csv);
        sm->csv = NULL;
        kb_path(a, sizeof(a), p->dir, "samples.csv.tmp");
        kb_path(b, sizeof(b), p->dir, "samples.csv");
        rename(a, b);
    }
    if (sm->stats) {
        fclose(sm->stats);
        sm->stats = NULL;
        kb_path(a, sizeof(a), p->dir, "stats.csv.tmp");
        kb_path(b, sizeof(b), p->dir, "stats.csv");
        rename(a, b);
    }
}

/* One phase. 0 pass, 1 not a pass, -1 interrupted or its evidence could not be written. */
static int run_phase(struct soak *s, const struct phase *p)
{
    struct kb_soak_obs o;
    struct kb_point_load lr;
    struct samples sm;
    char path[4300], err[512], *argvs[64] = { 0 };
    json_t *load = NULL, *after = NULL, *j;
    double t0 = kb_srv_now_s();
    int rc = -1, db = !strcmp(p->route, "db");

    memset(&o, 0, sizeof(o));
    memset(&lr, 0, sizeof(lr));
    memset(&sm, 0, sizeof(sm));
    sm.s = s;
    sm.db = db;
    if (kb_mkdirs(p->dir, err, sizeof(err)) < 0) {
        fprintf(stderr, "kneebench soak: %s\n", err);
        return -1;
    }
    kb_path(path, sizeof(path), p->dir, "DONE");
    unlink(path);
    printf("kneebench soak: phase %s at %ld/s for %g s (+%g s warmup)\n", p->route, p->rate,
           s->duration_s, s->warmup_s);
    fflush(stdout);
    start_phase(s, p, &o, argvs);
    if (g_stop)
        goto out;          /* interrupted while starting: no verdict, redone on resume */
    j = command_json(s, p, argvs);
    kb_path(path, sizeof(path), p->dir, "command.json");
    kb_write_json_atomic(path, j, err, sizeof(err));
    json_decref(j);
    if (open_csvs(p, &sm, db) < 0)
        goto out;
    if (!o.point.preflight_failed) {
        if (drive(s, p, &sm, &o) < 0)
            goto out;      /* interrupted: no marker, the phase is redone on resume */
        kb_srv_read_load(p->dir, &o.point, &lr, &load);
        kb_srv_postflight(&s->fx, kb_contract_route(&s->c, p->route), &o.point);
        if (db && !o.point.fixture_exited)
            after = stats_at_rest(s, &o);
        else if (db)
            o.stats_checked = 1;
    }
    close_csvs(p, &sm);
    rc = finish_phase(s, p, &sm, &o, &lr, load, after, kb_srv_now_s() - t0);
out:
    close_csvs(p, &sm);
    stop_fixture(s);
    stop_cluster(s);
    for (size_t i = 0; i < 64; i++)
        free(argvs[i]);
    free(sm.t);
    free(sm.rss);
    free(sm.fds);
    json_decref(load);
    json_decref(after);
    return g_stop ? -1 : rc;
}

/* ---- report --------------------------------------------------------------------------- */

/* A string member, "" when absent (never NULL into a format). */
static const char *jstr(json_t *o, const char *k)
{
    return kb_jstr(o, k, "");
}

static void report_header(FILE *f, const struct soak *s)
{
    char path[4300];
    json_t *run;
    fprintf(f, "# kneebench soak -- %s\n\n", RUNTIME);
    fprintf(f, "Sequential phases, %g s each after a %g s warmup; server RSS and open descriptors "
            "sampled every %g s from warmup + %g s settling to the end of the measured interval; "
            "%d connections, %d client threads; backend %s%s, server CPUs %s, client CPUs %s.\n\n",
            s->duration_s, s->warmup_s, s->every_s, s->settle_s, s->connections, s->threads,
            s->backend, s->fx.no_limits ? " (UNCONSTRAINED)" : "", s->fx.server_cpus,
            s->fx.client_cpus);
    fprintf(f, "A phase passes with delivery >= %.3f %%, no socket errors, non-2xx or mismatched "
            "responses, no process exit, a trusted client, and no resource growth: the "
            "least-squares slope of RSS (of descriptors), extrapolated to one hour, must stay "
            "within %.3g %% (%.3g %%) of the series' mean, or its fitted rise over the window "
            "within %.0f bytes (%.3g descriptors). The db phase's /stats gauges must return to "
            "zero after the load. Latency is reported, not judged.\n\n",
            100 * s->crit.min_delivery, s->crit.rss.pct_per_hour, s->crit.fds.pct_per_hour,
            s->crit.rss.floor, s->crit.fds.floor);
    kb_path(path, sizeof(path), s->run, "run.json");
    if ((run = json_load_file(path, 0, NULL))) {
        json_t *host = json_object_get(run, "host");
        json_t *ver = json_object_get(run, "runtime_versions");
        fprintf(f, "Identity (run.json): started %s; runner sha256 %.16s...; %s; %s, %s, %lld "
                "CPUs; %s.\n\n", jstr(run, "started"), jstr(run, "runner_sha256"),
                jstr(ver, RUNTIME), jstr(host, "kernel"), jstr(host, "cpu_model"),
                (long long)json_integer_value(json_object_get(host, "online_cpus")),
                jstr(ver, "postgresql"));
        json_decref(run);
    }
    fprintf(f, "| phase | requested/s | achieved/s | delivery | p50 ms | p99 ms | p99.9 ms | "
            "max ms | RSS first..last KiB | RSS slope KiB/h | fds first..last | fds slope /h | "
            "samples | verdict |\n"
            "|---|---:|---:|---:|---:|---:|---:|---:|---|---:|---|---:|---:|---|\n");
}

/* A complete phase's verdict.json, or NULL (no marker, or no verdict). */
static json_t *phase_verdict(const struct phase *p)
{
    char path[4300];
    kb_path(path, sizeof(path), p->dir, "DONE");
    if (!kb_file_exists(path))
        return NULL;
    kb_path(path, sizeof(path), p->dir, "verdict.json");
    return json_load_file(path, 0, NULL);
}

static void report_row(FILE *f, const struct phase *p, json_t *v)
{
    json_t *load = json_object_get(v, "load"), *rss = json_object_get(v, "rss_bytes");
    json_t *fds = json_object_get(v, "fds");
    if (!v) {
        fprintf(f, "| %s | %ld | | | | | | | | | | | | INCOMPLETE (no marker or verdict) |\n",
                p->route, p->rate);
        return;
    }
    fprintf(f, "| %s | %ld | %.1f | %.3f %% | %.2f | %.2f | %.2f | %.2f | %.0f..%.0f | %+.1f "
            "| %.0f..%.0f | %+.2f | %lld | **%s**: %s |\n", p->route, p->rate,
            kb_jnum(load, "achieved_rps", NULL), 100 * kb_jnum(load, "delivery", NULL),
            kb_jnum(load, "corrected_us", "p50") / 1000,
            kb_jnum(load, "corrected_us", "p99") / 1000,
            kb_jnum(load, "corrected_us", "p999") / 1000,
            kb_jnum(load, "corrected_us", "max") / 1000,
            kb_jnum(rss, "first", NULL) / 1024, kb_jnum(rss, "last", NULL) / 1024,
            kb_jnum(rss, "per_hour", NULL) / 1024, kb_jnum(fds, "first", NULL),
            kb_jnum(fds, "last", NULL), kb_jnum(fds, "per_hour", NULL),
            (long long)json_integer_value(json_object_get(rss, "n")), jstr(v, "verdict"),
            jstr(v, "reason"));
}

/* Below the table: identity and limits read back, and the db phase's counters. */
static void report_notes(FILE *f, size_t i, const struct phase *p, json_t *v)
{
    char path[4300];
    json_t *lim, *st = json_object_get(v, "stats");
    kb_path(path, sizeof(path), p->dir, "fixture/limits.json");
    lim = json_load_file(path, 0, NULL);
    fprintf(f, "- phase %zu (%s, %ld/s): fixture identity %.16s..., limits read back: %g CPU on "
            "cpuset %s, memory %lld bytes, pids %lld (cgroup v%d, %s)", i + 1, p->route, p->rate,
            jstr(v, "identity_sha256"), kb_jnum(lim, "cpus", NULL), jstr(lim, "cpuset"),
            (long long)kb_jnum(lim, "memory_bytes", NULL),
            (long long)kb_jnum(lim, "pids_max", NULL), (int)kb_jnum(lim, "cgroup_version", NULL),
            lim ? jstr(lim, "backend") : "no limits.json");
    if (st)
        fprintf(f, "; /stats: suspended handlers max %lld over %lld reads (%lld failed), gauges "
                "at rest after the load: %s", (long long)kb_jnum(st, "suspended_max", NULL),
                (long long)kb_jnum(st, "reads", NULL),
                (long long)kb_jnum(st, "read_failures", NULL),
                json_is_true(json_object_get(st, "at_rest_after")) ? "yes" : "NO");
    fprintf(f, ".\n");
    json_decref(lim);
}

/* report.md from the phases' verdict.json files (only phases whose marker exists). Returns
 * the number of phases that are complete and passed (-1 when report.md could not be
 * written); *complete gets how many are complete. */
static int write_report(struct soak *s, size_t *complete, char *err, size_t errlen)
{
    char *buf = NULL, path[4300];
    size_t len = 0;
    FILE *f = open_memstream(&buf, &len);
    json_t *v[MAX_PHASES];
    int passed = 0;
    *complete = 0;
    if (!f) {
        snprintf(err, errlen, "open_memstream: %s", strerror(errno));
        return -1;
    }
    report_header(f, s);
    for (size_t i = 0; i < s->nph; i++) {
        v[i] = phase_verdict(&s->ph[i]);
        *complete += v[i] != NULL;
        passed += v[i] && !strcmp(jstr(v[i], "verdict"), "pass");
        report_row(f, &s->ph[i], v[i]);
    }
    fprintf(f, "\n");
    for (size_t i = 0; i < s->nph; i++) {
        if (v[i])
            report_notes(f, i, &s->ph[i], v[i]);
        json_decref(v[i]);
    }
    fprintf(f, "\n%d of %zu phases passed (%zu complete). Evidence per phase under phases/: "
            "command.json, fixture/ (limits.json read back, identity.json, preflight.json, "
            "fixture.log), load.json, corrected/uncorrected .hgrm, samples.csv, stats.csv (db), "
            "verdict.json, DONE.\n", passed, s->nph, *complete);
    fclose(f);
    kb_path(path, sizeof(path), s->run, "report.md");
    if (kb_write_atomic(path, buf, len, err, errlen) < 0)
        passed = -1;
    free(buf);
    return passed;
}

/* ---- setup and the whole run ---------------------------------------------------------- */

static int setup(struct soak *s, const struct args *a, char *err, size_t errlen)
{
    const struct kb_srv_opts fo = { a->backend, a->build ? a->build : kb_root_build(), a->scpus,
                                   a->ccpus, a->load_cmd, a->no_limits, 0, a->image, NULL, NULL };
    s->run = a->out;
    s->backend = a->backend;
    if (kb_contract_load(a->contract ? a->contract : kb_root_contract(), &s->c, err,
                         errlen) < 0)
        return -1;
    if (!(s->rt = kb_contract_runtime(&s->c, RUNTIME))) {
        snprintf(err, errlen, "the contract has no runtime " RUNTIME);
        return -1;
    }
    s->crit.min_delivery = a->min_delivery;
    s->crit.client_cpu_max_fraction = a->client_cpu_max >= 0 ? a->client_cpu_max
                                                               : s->c.client_cpu_max_fraction;
    s->crit.client_lag_p99_max_us = a->client_lag_max_us >= 0 ? (long)a->client_lag_max_us
                                                              : s->c.client_lag_p99_max_us;
    s->crit.client_rx_delay_p99_max_us = s->c.client_rx_delay_p99_max_us;
    s->crit.min_samples = 2;
    s->crit.rss.pct_per_hour = a->rss_pct;
    s->crit.rss.floor = a->rss_floor;
    s->crit.fds.pct_per_hour = a->fd_pct;
    s->crit.fds.floor = a->fd_floor;
    if (plan(s, a, err, errlen) < 0)
        return -1;
    s->fx.rt = s->rt;
    s->fx.stop = &g_stop;       /* the load child and readiness waits end on Ctrl-C */
    if (kb_srv_setup(&s->fx, &s->c, &fo, err, errlen) < 0)
        return -1;
    return kb_mkdirs(s->run, err, errlen);
}

static void cleanup(struct soak *s)
{
    kb_srv_kill_load(&s->fx, SIGTERM);
    stop_fixture(s);
    stop_cluster(s);            /* while the sandbox that may hold it is open */
    kb_srv_close(&s->fx);
    kb_contract_free(&s->c);
}

/* Phases in order; one whose marker exists is kept (resume). */
static int run_all(struct soak *s)
{
    int bad = 0;
    for (size_t i = 0; i < s->nph && !g_stop; i++) {
        char marker[4300];
        kb_path(marker, sizeof(marker), s->ph[i].dir, "DONE");
        if (kb_file_exists(marker)) {
            printf("kneebench soak: phase %s complete, kept\n", s->ph[i].route);
            continue;
        }
        if (run_phase(s, &s->ph[i]) != 0)
            bad++;
    }
    return bad;
}

int cmd_soak(int argc, char **argv)
{
    struct soak s;
    struct args a;
    char err[1024], path[4300];
    size_t complete = 0;
    int rc = parse_args(argc, argv, &a), passed;
    if (rc)
        return rc == 1 ? 0 : rc;
    memset(&s, 0, sizeof(s));
    kb_srv_signals(on_signal);
    if (setup(&s, &a, err, sizeof(err)) < 0 || write_or_check_plan(&s, err, sizeof(err)) < 0 ||
        write_run_identity(&s, argc, argv, err, sizeof(err)) < 0) {
        fprintf(stderr, "kneebench soak: %s\n", err);
        cleanup(&s);
        return 2;
    }
    if (!s.fx.no_limits && kb_sandbox_sweep_stale(s.fx.sandbox) > 0)
        fprintf(stderr, "kneebench soak: removed cgroups left by an earlier run\n");
    printf("kneebench soak: %zu phases of %g s into %s (backend %s%s, server CPUs %s, client "
           "CPUs %s)\n", s.nph, s.duration_s, s.run, s.backend,
           s.fx.no_limits ? ", UNCONSTRAINED" : "", s.fx.server_cpus, s.fx.client_cpus);
    fflush(stdout);
    run_all(&s);
    if (g_stop) {
        cleanup(&s);
        fprintf(stderr, "kneebench soak: interrupted; complete phases are kept, re-run to "
                "resume\n");
        return 130;
    }
    passed = write_report(&s, &complete, err, sizeof(err));
    kb_path(path, sizeof(path), s.run, "DONE");
    unlink(path);
    if (passed < 0) {
        fprintf(stderr, "kneebench soak: %s\n", err);
    } else if (complete == s.nph) {
        json_t *m = json_pack("{s:I,s:I,s:b}", "phases", (json_int_t)s.nph, "passed",
                              (json_int_t)passed, "qualified", (size_t)passed == s.nph);
        if (kb_write_json_atomic(path, m, err, sizeof(err)) < 0)
            fprintf(stderr, "kneebench soak: %s\n", err);
        json_decref(m);
    }
    printf("kneebench soak: %d of %zu phases passed; report %s/report.md\n",
           passed < 0 ? 0 : passed,
           s.nph, s.run);
    cleanup(&s);
    return passed >= 0 && (size_t)passed == s.nph ? 0 : 1;
}
