/* cmd_curve.c -- `kneebench curve`: the runtime x route x rate comparison into a run directory.
 *
 * Flow: plan (matrix.c) -> per runtime: start it in the sandbox, wait until it accepts,
 * read the limits back, hash its identity, preflight every route -> per point: the load
 * generator as a child pinned to the client CPUs, server samples every second, postflight,
 * identity again, verdict, evidence, completion marker last. A fixture that died is
 * restarted for the next point. Points whose marker exists are kept on a re-run (resume).
 * SIGINT/SIGTERM only set a flag; every exit goes through cleanup(), which stops the load
 * child and the fixture (and so removes its cgroup). The stop flag is the one global.
 *
 * Evidence layout (every file written atomically, tmp + rename):
 *   RUN/plan.json               the plan: parameters, criteria, placement, every point id
 *   RUN/run.json                identity: runner SHA-256, contract SHA-256, host (kernel,
 *                               CPU model, libmicrohttpd), runtime versions, command line,
 *                               limits requested (run-resumed-<t>.json per later invocation)
 *   RUN/fixtures/<rt>[-r<k>]/   limits.json (read back from the cgroup), identity.json
 *                               (SHA-256 per executable and source file; the run's baseline),
 *                               preflight.json, fixture.log, pg/ (db route's cluster)
 *   RUN/points/<rt>-<route>-<rate>[-r<k>]/
 *                               command.json (the point's contract), load.json,
 *                               corrected.hgrm, uncorrected.hgrm, load.log, samples.csv
 *                               (server CPU/RSS/PSS/fds/threads/procs + client CPU, 1/s),
 *                               verdict.json (verdict, reason, load figures, server summary),
 *                               DONE (the completion marker, last)
 *   RUN/report.md, report.csv, report.json, charts/{achieved,p99}-<route>.svg (report) */
#define _GNU_SOURCE
#include "runner/commands.h"
#include "runner/evidence.h"
#include "runner/matrix.h"
#include "runner/pgcluster.h"
#include "runner/preflight.h"
#include "runner/procs.h"
#include "runner/sandbox.h"
#include "runner/verdict.h"
#include "contract.h"

#include <arpa/inet.h>
#include <errno.h>
#include <getopt.h>
#include <jansson.h>
#include <math.h>
#include <netinet/in.h>
#include <sched.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#ifndef KB_ROOT
#define KB_ROOT "."
#endif

static volatile sig_atomic_t g_stop;

static void on_signal(int sig)
{
    g_stop = sig;
}

struct curve {
    struct kb_contract c;
    struct kb_plan plan;
    const struct kb_sandbox_ops *ops;
    const char *run, *build, *backend;
    char load_cmd[4096];
    char server_cpus[64], client_cpus[64];
    cpu_set_t client_set;
    int nclient, no_limits, free_ports, self_load;
    /* the fixture now running */
    struct kb_sandbox *sb;
    const struct kb_runtime *rt;
    int repeat, port, preflight_failed;
    char fixdir[4096], preflight_reason[512];
    json_t *identity;
    struct kb_pgrun pg;        /* the db route's PostgreSQL, started with the fixture */
    pid_t load_pid;
    /* progress */
    size_t finished, ran;
    double run_secs;
};

static double now_s(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (double)ts.tv_sec + ts.tv_nsec / 1e9;
}

static void sleep_s(double s)
{
    struct timespec ts = { (time_t)s, (long)((s - floor(s)) * 1e9) };
    nanosleep(&ts, NULL);
}

/* ---- CPU lists ------------------------------------------------------------------------ */

/* "0", "1-3", "1-" (to the last online CPU), "0,2". -1 when malformed or empty. */
static int parse_cpulist(const char *s, cpu_set_t *set, char *canon, size_t canonlen)
{
    long last = sysconf(_SC_NPROCESSORS_ONLN) - 1;
    size_t len = 0;
    int n = 0;
    CPU_ZERO(set);
    canon[0] = '\0';
    for (const char *p = s; *p;) {
        char *end;
        long a = strtol(p, &end, 10), b = a;
        if (end == p)
            return -1;
        if (*end == '-') {
            p = end + 1;
            b = (*p && *p != ',') ? strtol(p, &end, 10) : last;
            if (*p && *p != ',' && end == p)
                return -1;
            if (!*p || *p == ',')
                end = (char *)p;
        }
        for (long i = a; i <= b && i <= last && i < CPU_SETSIZE; i++, n++)
            CPU_SET((int)i, set);
        if (a <= b && a <= last)
            len += (size_t)snprintf(canon + len, len < canonlen ? canonlen - len : 0, "%s%ld%s",
                                    len ? "," : "", a, "");
        if (b > a && a <= last)
            len += (size_t)snprintf(canon + len, len < canonlen ? canonlen - len : 0, "-%ld",
                                    b < last ? b : last);
        p = *end == ',' ? end + 1 : end;
        if (*end && *end != ',')
            return -1;
    }
    return n > 0 ? n : -1;
}

/* ---- options -------------------------------------------------------------------------- */

static int usage(FILE *f)
{
    fprintf(f,
        "usage: kneebench curve --run DIR [options]\n"
        "  --profile paper|quick   durations from the contract's profile (default paper)\n"
        "  --runtimes a,b --routes a,b --rates r1,r2   narrow the matrix\n"
        "  --duration S --warmup S --drain S --threads N --connections N   override\n"
        "  --repeats N             repeat the matrix, runtime order rotated per repeat\n"
        "  --backend native|docker sandbox backend (default native)\n"
        "  --no-limits             run without cgroups; every point is marked unconstrained\n"
        "  --server-cpus LIST --client-cpus LIST   placement (default: the contract's)\n"
        "  --free-ports            give each fixture a free ephemeral port, not the contract's\n"
        "  --build DIR             where the built fixtures live (default " KB_ROOT "/build)\n"
        "  --load-cmd PATH         the load generator (default: this kneebench, `load`)\n"
        "  --contract FILE\n"
        "Re-running into the same DIR keeps complete points and redoes the rest.\n");
    return f == stdout ? 0 : 2;
}

enum { O_PROFILE = 256, O_RUNTIMES, O_ROUTES, O_RATES, O_DURATION, O_WARMUP, O_DRAIN,
       O_THREADS, O_CONNS, O_REPEATS, O_BACKEND, O_NOLIMITS, O_SCPUS, O_CCPUS, O_FREE,
       O_BUILD, O_LOADCMD, O_CONTRACT, O_RUN };

static const struct option long_opts[] = {
    { "profile", 1, 0, O_PROFILE }, { "runtimes", 1, 0, O_RUNTIMES },
    { "routes", 1, 0, O_ROUTES }, { "rates", 1, 0, O_RATES },
    { "duration", 1, 0, O_DURATION }, { "warmup", 1, 0, O_WARMUP }, { "drain", 1, 0, O_DRAIN },
    { "threads", 1, 0, O_THREADS }, { "connections", 1, 0, O_CONNS },
    { "repeats", 1, 0, O_REPEATS }, { "backend", 1, 0, O_BACKEND },
    { "no-limits", 0, 0, O_NOLIMITS }, { "server-cpus", 1, 0, O_SCPUS },
    { "client-cpus", 1, 0, O_CCPUS }, { "free-ports", 0, 0, O_FREE },
    { "build", 1, 0, O_BUILD }, { "load-cmd", 1, 0, O_LOADCMD },
    { "contract", 1, 0, O_CONTRACT }, { "run", 1, 0, O_RUN }, { "help", 0, 0, 'h' },
    { 0, 0, 0, 0 },
};

struct args {
    struct kb_plan_opts plan;
    const char *run, *backend, *build, *load_cmd, *contract, *scpus, *ccpus;
    int no_limits, free_ports;
};

static int parse_args(int argc, char **argv, struct args *a)
{
    int o;
    memset(a, 0, sizeof(*a));
    a->plan.duration_s = a->plan.warmup_s = a->plan.drain_s = -1;
    a->backend = "native";
    optind = 1;
    while ((o = getopt_long(argc, argv, "h", long_opts, NULL)) != -1) {
        switch (o) {
        case O_PROFILE: a->plan.profile = optarg; break;
        case O_RUNTIMES: a->plan.runtimes = optarg; break;
        case O_ROUTES: a->plan.routes = optarg; break;
        case O_RATES: a->plan.rates = optarg; break;
        case O_DURATION: a->plan.duration_s = atof(optarg); break;
        case O_WARMUP: a->plan.warmup_s = atof(optarg); break;
        case O_DRAIN: a->plan.drain_s = atof(optarg); break;
        case O_THREADS: a->plan.threads = atoi(optarg); break;
        case O_CONNS: a->plan.connections = atoi(optarg); break;
        case O_REPEATS: a->plan.repeats = atoi(optarg); break;
        case O_BACKEND: a->backend = optarg; break;
        case O_NOLIMITS: a->no_limits = 1; break;
        case O_SCPUS: a->scpus = optarg; break;
        case O_CCPUS: a->ccpus = optarg; break;
        case O_FREE: a->free_ports = 1; break;
        case O_BUILD: a->build = optarg; break;
        case O_LOADCMD: a->load_cmd = optarg; break;
        case O_CONTRACT: a->contract = optarg; break;
        case O_RUN: a->run = optarg; break;
        case 'h': return usage(stdout) ? 2 : 1;
        default: return usage(stderr);
        }
    }
    if (optind < argc && !a->run)
        a->run = argv[optind++];
    if (!a->run || optind < argc) {
        fprintf(stderr, "kneebench curve: %s\n", a->run ? "unexpected argument" : "--run DIR is required");
        return 2;
    }
    return 0;
}

/* ---- plan file (resume) --------------------------------------------------------------- */

static json_t *plan_json(const struct curve *cv)
{
    const struct kb_plan *p = &cv->plan;
    json_t *pts = json_array(), *rates = json_array(), *rts = json_array(), *rts2 = json_array();
    for (size_t i = 0; i < p->npoints; i++)
        json_array_append_new(pts, json_pack("{s:s,s:s,s:s,s:I,s:i}", "id", p->points[i].id,
            "runtime", p->points[i].runtime, "route", p->points[i].route,
            "rate", (json_int_t)p->points[i].rate, "repeat", p->points[i].repeat));
    for (size_t i = 0; i < p->nrates; i++)
        json_array_append_new(rates, json_integer(p->rates[i]));
    for (size_t i = 0; i < p->runtimes.n; i++)
        json_array_append_new(rts, json_string(p->runtimes.v[i]));
    for (size_t i = 0; i < p->routes.n; i++)
        json_array_append_new(rts2, json_string(p->routes.v[i]));
    return json_pack("{s:s,s:f,s:f,s:f,s:i,s:i,s:i,s:o,s:o,s:o,s:s,s:b,s:s,s:s,"
                     "s:{s:f,s:I,s:f,s:I},s:o}",
        "profile", p->profile, "duration_s", p->duration_s, "warmup_s", p->warmup_s,
        "drain_s", p->drain_s, "threads", p->threads, "connections", p->connections,
        "repeats", p->repeats, "runtimes", rts, "routes", rts2, "rates", rates,
        "backend", cv->backend, "unconstrained", cv->no_limits,
        "server_cpus", cv->server_cpus, "client_cpus", cv->client_cpus,
        "criteria", "min_delivery", cv->c.min_delivery, "max_p99_us", (json_int_t)cv->c.max_p99_us,
        "client_cpu_max_fraction", cv->c.client_cpu_max_fraction, "client_lag_p99_max_us",
        (json_int_t)cv->c.client_lag_p99_max_us, "points", pts);
}

/* A run directory holds one plan: a re-run must ask for the same one to resume it. */
static int write_or_check_plan(struct curve *cv, char *err, size_t errlen)
{
    char path[4200];
    json_t *want = plan_json(cv), *have;
    int rc = 0;
    snprintf(path, sizeof(path), "%s/plan.json", cv->run);
    have = json_load_file(path, 0, NULL);
    if (have && !json_equal(have, want)) {
        snprintf(err, errlen, "%s holds a different plan (profile, matrix, placement or limits); "
                 "resume it with the same options or use a new directory", cv->run);
        rc = -1;
    } else if (!have) {
        rc = kb_write_json_atomic(path, want, err, errlen);
    }
    json_decref(have);
    json_decref(want);
    return rc;
}

/* ---- identity ------------------------------------------------------------------------- */

static char *expand(const struct curve *cv, const char *tmpl, const char *rundir)
{
    char port[16], cpus[16];
    const char *keys[] = { "root", "build", "port", "bind", "rundir", "cpus" };
    const char *vals[] = { KB_ROOT, cv->build, port, "127.0.0.1", rundir ? rundir : "", cpus };
    snprintf(port, sizeof(port), "%d", cv->port);
    snprintf(cpus, sizeof(cpus), "%d", cv->c.cpus);
    return kb_expand(tmpl, keys, vals, 6);
}

static json_t *fixture_identity(const struct curve *cv, const struct kb_runtime *rt, char *err,
                                size_t errlen)
{
    char *exe[32] = { 0 }, *src[32] = { 0 };
    size_t ne = rt->executables.n < 32 ? rt->executables.n : 32;
    size_t ns = rt->sources.n < 32 ? rt->sources.n : 32;
    json_t *id;
    for (size_t i = 0; i < ne; i++)
        exe[i] = expand(cv, rt->executables.v[i], NULL);
    for (size_t i = 0; i < ns; i++) {
        /* relative to the tree's root; an absolute path (a test's own fixture) as is */
        const char *base = rt->sources.v[i][0] == '/' ? "" : KB_ROOT "/";
        char *s = malloc(strlen(base) + strlen(rt->sources.v[i]) + 1);
        sprintf(s, "%s%s", base, rt->sources.v[i]);
        src[i] = s;
    }
    id = kb_fixture_identity(exe, ne, src, ns, err, errlen);
    for (size_t i = 0; i < 32; i++) {
        free(exe[i]);
        free(src[i]);
    }
    return id;
}

static void runner_hash(char hex[KB_SHA256_HEX])
{
    char err[256];
    if (kb_sha256_file("/proc/self/exe", hex, err, sizeof(err)) < 0)
        snprintf(hex, KB_SHA256_HEX, "unknown");
}

static json_t *runtime_versions(struct curve *cv)
{
    json_t *v = json_object();
    for (size_t i = 0; i < cv->plan.runtimes.n; i++) {
        const struct kb_runtime *rt = kb_contract_runtime(&cv->c, cv->plan.runtimes.v[i]);
        char *argv[16] = { 0 }, line[512];
        size_t n = rt->version.n < 15 ? rt->version.n : 15;
        for (size_t j = 0; j < n; j++)
            argv[j] = expand(cv, rt->version.v[j], NULL);
        if (n && kb_capture_line(argv, line, sizeof(line)) < 0 && !line[0])
            snprintf(line, sizeof(line), "unavailable");
        json_object_set_new(v, rt->name, json_string(n ? line : "unknown"));
        for (size_t j = 0; j < n; j++)
            free(argv[j]);
    }
    return v;
}

static int write_run_identity(struct curve *cv, int argc, char **argv, char *err, size_t errlen)
{
    char path[4200], hex[KB_SHA256_HEX], chex[KB_SHA256_HEX];
    json_t *args = json_array(), *run;
    time_t t = time(NULL);
    char when[64];
    int rc;
    strftime(when, sizeof(when), "%Y-%m-%dT%H:%M:%SZ", gmtime(&t));
    for (int i = 0; i < argc; i++)
        json_array_append_new(args, json_string(argv[i]));
    runner_hash(hex);
    if (kb_sha256_file(cv->c.path, chex, err, errlen) < 0)
        snprintf(chex, sizeof(chex), "unknown");
    run = json_pack("{s:s,s:o,s:s,s:s,s:s,s:o,s:o,s:s,s:b,s:{s:i,s:I,s:i,s:s,s:s}}",
        "started", when, "command_line", args, "runner_sha256", hex, "contract", cv->c.path,
        "contract_sha256", chex, "host", kb_host_identity(), "runtime_versions",
        runtime_versions(cv), "backend", cv->backend, "unconstrained", cv->no_limits,
        "limits_requested", "cpus", cv->c.cpus, "memory_bytes", (json_int_t)cv->c.memory_bytes,
        "pids", cv->c.pids, "server_cpus", cv->server_cpus, "client_cpus", cv->client_cpus);
    /* a resumed run keeps the first invocation's identity and records this one beside it */
    snprintf(path, sizeof(path), "%s/run.json", cv->run);
    if (kb_file_exists(path)) {
        snprintf(path, sizeof(path), "%s/run-resumed-%ld.json", cv->run, (long)t);
    }
    rc = kb_write_json_atomic(path, run, err, errlen);
    json_decref(run);
    return rc;
}

/* ---- the fixture ---------------------------------------------------------------------- */

static int free_port(void)
{
    struct sockaddr_in a = { .sin_family = AF_INET };
    socklen_t len = sizeof(a);
    int fd = socket(AF_INET, SOCK_STREAM, 0), port = -1;
    a.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
    if (fd >= 0 && bind(fd, (struct sockaddr *)&a, sizeof(a)) == 0 &&
        getsockname(fd, (struct sockaddr *)&a, &len) == 0)
        port = ntohs(a.sin_port);
    if (fd >= 0)
        close(fd);
    return port;
}

static void stop_fixture(struct curve *cv)
{
    char err[512];
    if (cv->sb && cv->ops->stop(cv->sb, err, sizeof(err)) < 0)
        fprintf(stderr, "kneebench curve: %s\n", err);
    cv->sb = NULL;
    cv->rt = NULL;
    if (kb_pgrun_stop(&cv->pg, err, sizeof(err)) < 0)
        fprintf(stderr, "kneebench curve: %s\n", err);
    json_decref(cv->identity);
    cv->identity = NULL;
}

/* Readiness polling gives up on Ctrl-C too; run_point then leaves the point unmarked. */
static int fixture_alive(void *arg)
{
    struct curve *cv = arg;
    return !g_stop && cv->sb && cv->ops->alive(cv->sb);
}

static json_t *limits_json(const struct kb_limits_applied *la)
{
    return json_pack("{s:s,s:i,s:I,s:I,s:f,s:s,s:s,s:I,s:I,s:I,s:s}", "backend", la->backend,
        "cgroup_version", la->cgroup_version, "cpu_quota_us", (json_int_t)la->cpu_quota_us,
        "cpu_period_us", (json_int_t)la->cpu_period_us, "cpus", la->cpus, "cpuset", la->cpuset,
        "cpuset_mems", la->cpuset_mems, "memory_bytes", (json_int_t)la->memory_bytes,
        "memsw_bytes", (json_int_t)la->memsw_bytes, "pids_max", (json_int_t)la->pids_max,
        "paths", la->paths);
}

static void build_spec(struct curve *cv, struct kb_fixture_spec *s, char **argv, char **env,
                       char *log)
{
    const struct kb_runtime *rt = cv->rt;
    size_t i;
    memset(s, 0, sizeof(*s));
    for (i = 0; i < rt->command.n && i < 63; i++)
        argv[i] = expand(cv, rt->command.v[i], cv->fixdir);
    argv[i] = NULL;
    if (cv->pg.running)
        kb_pgrun_args(&cv->pg, rt, cv->c.db_pool_size, argv, i, 64);
    for (i = 0; i < rt->env_keys.n && i < 15; i++) {
        char *v = expand(cv, rt->env_vals.v[i], cv->fixdir);
        env[i] = malloc(strlen(rt->env_keys.v[i]) + strlen(v) + 2);
        sprintf(env[i], "%s=%s", rt->env_keys.v[i], v);
        free(v);
    }
    env[i] = NULL;
    snprintf(log, 4200, "%s/fixture.log", cv->fixdir);
    s->name = rt->name;
    s->argv = argv;
    s->env_add = env;
    s->rundir = cv->fixdir;
    s->log_path = log;
    s->port = cv->port;
    s->no_limits = cv->no_limits;
    s->limits.cpus = cv->c.cpus;
    s->limits.memory_bytes = cv->c.memory_bytes;
    s->limits.pids = cv->c.pids;
    snprintf(s->limits.server_cpuset, sizeof(s->limits.server_cpuset), "%s", cv->server_cpus);
}

/* Preflight every planned route this runtime serves; the first failure is the reason. */
static void preflight_all(struct curve *cv, json_t *out)
{
    for (size_t i = 0; i < cv->plan.routes.n; i++) {
        const struct kb_route *r = kb_contract_route(&cv->c, cv->plan.routes.v[i]);
        char reason[512] = "";
        if (!kb_route_served_by(r, cv->rt->name))
            continue;   /* the plan has no points for it */
        /* the db pool connects after the port opens: give that route time to answer */
        int ok = (cv->pg.running && !strcmp(r->name, "db")
                      ? kb_pgrun_wait_route(cv->port, r, 15000, fixture_alive, cv, reason,
                                            sizeof(reason))
                      : kb_preflight_route(cv->port, r, reason, sizeof(reason))) == 0;
        json_object_set_new(out, r->name, json_pack("{s:b,s:s}", "ok", ok, "reason", reason));
        if (!ok && !cv->preflight_failed) {
            cv->preflight_failed = 1;
            snprintf(cv->preflight_reason, sizeof(cv->preflight_reason), "%s", reason);
        }
    }
}

/* The first start of a runtime in this run directory records its identity; every later
 * start (a restart after a death, a resumed run) must match it, or the points measured
 * from then on would be of different code. */
static void check_identity_baseline(struct curve *cv)
{
    char path[4300], err[512];
    json_t *first;
    kb_path(path, sizeof(path), cv->fixdir, "identity.json");
    if (!cv->identity)
        return;
    if (!(first = json_load_file(path, 0, NULL))) {
        kb_write_json_atomic(path, cv->identity, err, sizeof(err));
        return;
    }
    if (!json_equal(json_object_get(first, "sha256"), json_object_get(cv->identity, "sha256")) &&
        !cv->preflight_failed) {
        cv->preflight_failed = 1;
        snprintf(cv->preflight_reason, sizeof(cv->preflight_reason),
                 "changed fixture identity since this run began (see %.300s)", path);
    }
    json_decref(first);
}

/* Start, wait until ready, read the limits back, hash, preflight. Failures are recorded as
 * the preflight reason of every point this fixture would serve, never fatal to the run. */
static void start_fixture(struct curve *cv, const struct kb_runtime *rt, int repeat)
{
    char *argv[64] = { 0 }, *env[16] = { 0 }, log[4200], err[1024], path[4300];
    struct kb_fixture_spec spec;
    struct kb_limits_applied la;
    json_t *pre = json_object(), *lim;
    cv->rt = rt;
    cv->repeat = repeat;
    cv->preflight_failed = 0;
    cv->port = cv->free_ports ? free_port() : rt->port;
    snprintf(cv->fixdir, sizeof(cv->fixdir), cv->plan.repeats > 1 ? "%s/fixtures/%s-r%d"
             : "%s/fixtures/%s", cv->run, rt->name, repeat);
    kb_mkdirs(cv->fixdir, err, sizeof(err));
    if (kb_pgrun_wanted(rt, cv->plan.routes.v, cv->plan.routes.n) &&
        kb_pgrun_start(&cv->pg, kb_path(path, sizeof(path), cv->fixdir, "pg"), err,
                       sizeof(err)) < 0) {
        cv->preflight_failed = 1;
        snprintf(cv->preflight_reason, sizeof(cv->preflight_reason), "PostgreSQL: %.400s", err);
        goto out;
    }
    build_spec(cv, &spec, argv, env, log);
    if (!(cv->sb = cv->ops->start(&spec, err, sizeof(err))) ||
        kb_wait_ready(cv->port, 20000, fixture_alive, cv, err, sizeof(err)) < 0) {
        cv->preflight_failed = 1;
        snprintf(cv->preflight_reason, sizeof(cv->preflight_reason), "start failed: %.400s%s%s", err,
                 cv->sb ? " " : "", cv->sb ? cv->ops->exit_reason(cv->sb) : "");
        if (cv->sb && cv->ops->stop(cv->sb, err, sizeof(err)) < 0)
            fprintf(stderr, "kneebench curve: %s\n", err);
        cv->sb = NULL;
        goto out;
    }
    if (cv->ops->limits_applied(cv->sb, &la, err, sizeof(err)) < 0) {
        cv->preflight_failed = 1;
        snprintf(cv->preflight_reason, sizeof(cv->preflight_reason), "limits: %.400s", err);
    }
    lim = limits_json(&la);
    snprintf(path, sizeof(path), "%s/limits.json", cv->fixdir);
    kb_write_json_atomic(path, lim, err, sizeof(err));
    json_decref(lim);
    if (!(cv->identity = fixture_identity(cv, rt, err, sizeof(err))) && !cv->preflight_failed) {
        cv->preflight_failed = 1;
        snprintf(cv->preflight_reason, sizeof(cv->preflight_reason), "identity: %.400s", err);
    }
    check_identity_baseline(cv);
    preflight_all(cv, pre);
out:
    json_object_set_new(pre, "failed", json_boolean(cv->preflight_failed));
    json_object_set_new(pre, "reason", json_string(cv->preflight_reason));
    json_object_set_new(pre, "port", json_integer(cv->port));
    snprintf(path, sizeof(path), "%s/preflight.json", cv->fixdir);
    kb_write_json_atomic(path, pre, err, sizeof(err));
    json_decref(pre);
    for (size_t i = 0; i < 64 && argv[i]; i++)
        free(argv[i]);
    for (size_t i = 0; i < 16 && env[i]; i++)
        free(env[i]);
}

static void ensure_fixture(struct curve *cv, const struct kb_point *pt)
{
    const struct kb_runtime *rt = kb_contract_runtime(&cv->c, pt->runtime);
    /* keep a live fixture; do not retry one that could not start for this runtime */
    if (cv->rt == rt && cv->repeat == pt->repeat &&
        (cv->sb ? cv->ops->alive(cv->sb) : cv->preflight_failed))
        return;
    stop_fixture(cv);
    start_fixture(cv, rt, pt->repeat);
}

/* ---- one point ------------------------------------------------------------------------ */

struct sampler {
    FILE *csv;
    double t0, last_t, last_cpu;
    double cpu_sum_frac, n;
    long long rss_max, pss_max;
    long fds_max, threads_max, procs_max;
};

static void sample_once(struct curve *cv, struct sampler *s, pid_t client)
{
    pid_t pids[KB_SANDBOX_MAX_PIDS];
    struct kb_proc_sample srv, cli;
    size_t n = cv->sb ? cv->ops->pids(cv->sb, pids, KB_SANDBOX_MAX_PIDS) : 0;
    double t = now_s(), frac;
    kb_procs_sample(pids, n, &srv);
    kb_procs_sample(&client, 1, &cli);
    frac = s->n > 0 || s->last_t > 0 ? (srv.cpu_seconds - s->last_cpu) / (t - s->last_t) : 0;
    fprintf(s->csv, "%.3f,%.2f,%.3f,%lld,%lld,%ld,%ld,%zu,%.2f,%lld\n", t - s->t0,
            srv.cpu_seconds, frac, srv.rss_bytes, srv.pss_bytes, srv.fds, srv.threads,
            srv.nprocs, cli.cpu_seconds, cli.rss_bytes);
    if (s->last_t > 0) {
        s->cpu_sum_frac += frac;
        s->n++;
    }
    s->last_t = t;
    s->last_cpu = srv.cpu_seconds;
#define KB_MAX(a, b) ((a) = (b) > (a) ? (b) : (a))
    KB_MAX(s->rss_max, srv.rss_bytes);
    KB_MAX(s->pss_max, srv.pss_bytes);
    KB_MAX(s->fds_max, srv.fds);
    KB_MAX(s->threads_max, srv.threads);
    KB_MAX(s->procs_max, (long)srv.nprocs);
}

static pid_t spawn_load(struct curve *cv, const struct kb_point *pt, const char *dir)
{
    const struct kb_route *r = kb_contract_route(&cv->c, pt->route);
    char url[256], rate[32], dur[32], wu[32], dr[32], th[16], co[16], js[4200], hg[4200],
        uh[4200], log[4200];
    pid_t pid;
    snprintf(url, sizeof(url), "http://127.0.0.1:%d%s", cv->port, r->path);
    snprintf(rate, sizeof(rate), "%ld", pt->rate);
    snprintf(dur, sizeof(dur), "%g", cv->plan.duration_s);
    snprintf(wu, sizeof(wu), "%g", cv->plan.warmup_s);
    snprintf(dr, sizeof(dr), "%g", cv->plan.drain_s);
    snprintf(th, sizeof(th), "%d", cv->plan.threads);
    snprintf(co, sizeof(co), "%d", cv->plan.connections);
    kb_path(js, sizeof(js), dir, "load.json");
    kb_path(hg, sizeof(hg), dir, "corrected.hgrm");
    kb_path(uh, sizeof(uh), dir, "uncorrected.hgrm");
    kb_path(log, sizeof(log), dir, "load.log");
    char *argv[] = { cv->load_cmd, "load", "--url", url, "--route", (char *)pt->route,
                     "--rate", rate, "--duration", dur, "--warmup", wu, "--drain", dr,
                     "--threads", th, "--connections", co, "--json", js, "--hgrm", hg,
                     "--uncorrected-hgrm", uh, "--contract", cv->c.path, NULL };
    unlink(js);
    if ((pid = fork()) == 0) {
        FILE *f = freopen(log, "w", stdout);
        if (f)
            dup2(fileno(stdout), 2);
        sched_setaffinity(0, sizeof(cv->client_set), &cv->client_set);
        /* our own binary by default, through /proc/self/exe: the very image whose hash the
         * run recorded, immune to build/kneebench being relinked meanwhile */
        execv(cv->self_load ? "/proc/self/exe" : cv->load_cmd, argv);
        fprintf(stderr, "could not execute %s: %s\n", cv->load_cmd, strerror(errno));
        _exit(127);
    }
    return pid;
}

static json_t *command_json(const struct curve *cv, const struct kb_point *pt)
{
    const struct kb_route *r = kb_contract_route(&cv->c, pt->route);
    return json_pack("{s:s,s:s,s:s,s:I,s:i,s:s,s:i,s:f,s:f,s:f,s:i,s:i,s:s,s:s,s:b,s:{s:i,s:s,s:s?,s:s?},s:s,s:s}",
        "point", pt->id, "runtime", pt->runtime, "route", pt->route, "rate", (json_int_t)pt->rate,
        "repeat", pt->repeat, "url_path", r->path, "port", cv->port,
        "duration_s", cv->plan.duration_s, "warmup_s", cv->plan.warmup_s,
        "drain_s", cv->plan.drain_s, "threads", cv->plan.threads,
        "connections", cv->plan.connections, "server_cpus", cv->server_cpus,
        "client_cpus", cv->client_cpus, "unconstrained", cv->no_limits,
        "expect", "status", r->status, "content_type", r->content_type, "body", r->body,
        "body_regex", r->body_regex, "load_generator", cv->load_cmd, "fixture_dir", cv->fixdir);
}

/* Run the load child to its end (or until the stop flag), sampling every second. */
static int drive(struct curve *cv, const struct kb_point *pt, const char *dir,
                 struct sampler *s, struct kb_point_obs *obs)
{
    double next = now_s();
    int st = 0;
    cv->load_pid = spawn_load(cv, pt, dir);
    if (cv->load_pid < 0)
        return -1;
    s->t0 = next;
    for (;;) {
        pid_t w = waitpid(cv->load_pid, &st, WNOHANG);
        if (w == cv->load_pid)
            break;
        if (g_stop) {
            kill(cv->load_pid, SIGKILL);    /* its figures are discarded anyway */
            waitpid(cv->load_pid, &st, 0);
            cv->load_pid = 0;
            return -1;
        }
        if (now_s() >= next) {
            sample_once(cv, s, cv->load_pid);
            next += 1.0;
        }
        if (!obs->fixture_exited && cv->sb && !cv->ops->alive(cv->sb)) {
            obs->fixture_exited = 1;
            snprintf(obs->exit_reason, sizeof(obs->exit_reason), "%s",
                     cv->ops->exit_reason(cv->sb));
        }
        sleep_s(0.02);
    }
    cv->load_pid = 0;
    obs->load_exit = WIFEXITED(st) ? WEXITSTATUS(st) : 128 + WTERMSIG(st);
    return 0;
}

static void read_load(const char *dir, struct kb_point_obs *obs, struct kb_point_load *lr,
                      json_t **load)
{
    char path[4200], err[256];
    kb_path(path, sizeof(path), dir, "load.json");
    *load = json_load_file(path, 0, NULL);
    if (obs->load_exit != 0) {
        char line[200] = "";
        FILE *f;
        kb_path(path, sizeof(path), dir, "load.log");
        if ((f = fopen(path, "r"))) {
            if (!fgets(line, sizeof(line), f))
                line[0] = '\0';
            fclose(f);
        }
        line[strcspn(line, "\n")] = '\0';
        snprintf(obs->load_problem, sizeof(obs->load_problem), "load generator exited %d: %s",
                 obs->load_exit, line);
    } else if (!*load) {
        snprintf(obs->load_problem, sizeof(obs->load_problem), "no load.json");
    } else if (kb_point_load_parse(*load, lr, err, sizeof(err)) < 0) {
        snprintf(obs->load_problem, sizeof(obs->load_problem), "%s", err);
    } else {
        obs->have_load = 1;
    }
}

/* After the load: is the fixture alive, still serving the route, still the same bytes? */
static void postflight(struct curve *cv, const struct kb_point *pt, struct kb_point_obs *obs)
{
    char err[512];
    json_t *now;
    if (!obs->fixture_exited && cv->sb && !cv->ops->alive(cv->sb)) {
        obs->fixture_exited = 1;
        snprintf(obs->exit_reason, sizeof(obs->exit_reason), "%s", cv->ops->exit_reason(cv->sb));
    }
    if (!obs->fixture_exited && cv->sb &&
        kb_preflight_route(cv->port, kb_contract_route(&cv->c, pt->route), err, sizeof(err)) < 0) {
        obs->postflight_failed = 1;
        snprintf(obs->postflight_reason, sizeof(obs->postflight_reason), "%.200s", err);
    }
    now = cv->identity ? fixture_identity(cv, cv->rt, err, sizeof(err)) : NULL;
    if (cv->identity && (!now || !json_equal(json_object_get(now, "sha256"),
                                             json_object_get(cv->identity, "sha256"))))
        obs->identity_changed = 1;
    json_decref(now);
}

/* Before a point: the route must answer correctly again (an overloaded fixture may still be
 * draining the previous point's backlog). Up to 10 s; the time taken is evidence. */
static double settle(struct curve *cv, const struct kb_point *pt)
{
    const struct kb_route *r = kb_contract_route(&cv->c, pt->route);
    double t0 = now_s();
    char err[512];
    while (!g_stop && cv->sb && cv->ops->alive(cv->sb) &&
           kb_preflight_route(cv->port, r, err, sizeof(err)) < 0 && now_s() - t0 < 10)
        sleep_s(0.1);
    return now_s() - t0;
}

static json_t *verdict_json(const struct curve *cv, const struct kb_point *pt,
                            enum kb_verdict v, const char *reason, json_t *load,
                            const struct sampler *s, double wall)
{
    json_t *j = json_pack("{s:s,s:s,s:s,s:I,s:i,s:s,s:s,s:b,s:f,s:s}", "point", pt->id,
        "runtime", pt->runtime, "route", pt->route, "rate", (json_int_t)pt->rate,
        "repeat", pt->repeat, "verdict", kb_verdict_name(v), "reason", reason,
        "unconstrained", cv->no_limits, "wall_s", wall, "identity_sha256",
        cv->identity ? json_string_value(json_object_get(cv->identity, "sha256")) : "");
    json_object_set_new(j, "server", json_pack("{s:f,s:I,s:I,s:I,s:I,s:I,s:i}",
        "cpu_mean_fraction", s->n > 0 ? s->cpu_sum_frac / s->n : 0.0,
        "rss_max_bytes", (json_int_t)s->rss_max, "pss_max_bytes", (json_int_t)s->pss_max,
        "fds_max", (json_int_t)s->fds_max, "threads_max", (json_int_t)s->threads_max,
        "procs_max", (json_int_t)s->procs_max, "samples", (int)s->n + (s->last_t > 0)));
    json_object_set(j, "load", load ? load : json_null());
    return j;
}

static void progress(struct curve *cv, const struct kb_point *pt, const char *verdict,
                     json_t *load, int kept)
{
    double left = (double)(cv->plan.npoints - cv->finished);
    double per = cv->ran ? cv->run_secs / (double)cv->ran
                         : cv->plan.warmup_s + cv->plan.duration_s + cv->plan.drain_s + 1;
    double eta = left * per;
    json_t *lat = json_object_get(load, "corrected_us");
    printf("[%*zu/%zu] %-12s %-10s %6ld/s  achieved %8.0f/s  p99 %9.2f ms  %-14s %s eta %dm%02ds\n",
           cv->plan.npoints >= 100 ? 3 : 2, cv->finished, cv->plan.npoints, pt->runtime,
           pt->route, pt->rate, json_number_value(json_object_get(load, "achieved_rps")),
           json_number_value(json_object_get(lat, "p99")) / 1000.0, verdict,
           kept ? "(kept)" : "", (int)eta / 60, (int)eta % 60);
    fflush(stdout);
}

static int point_done(const struct curve *cv, const struct kb_point *pt, char *dir, size_t len)
{
    char marker[4300];
    snprintf(dir, len, "%s/points/%s", cv->run, pt->id);
    kb_path(marker, sizeof(marker), dir, "DONE");
    return kb_file_exists(marker);
}

static void show_kept(struct curve *cv, const struct kb_point *pt, const char *dir)
{
    char path[4300];
    json_t *v;
    kb_path(path, sizeof(path), dir, "verdict.json");
    v = json_load_file(path, 0, NULL);
    cv->finished++;
    progress(cv, pt, json_string_value(json_object_get(v, "verdict")),
             json_object_get(v, "load"), 1);
    json_decref(v);
}

/* Evidence in order: command, samples, verdict (with the load figures), marker last. */
static int run_point(struct curve *cv, const struct kb_point *pt, const char *dir)
{
    struct kb_criteria crit = { cv->c.min_delivery, cv->c.max_p99_us,
                                cv->c.client_cpu_max_fraction, cv->c.client_lag_p99_max_us };
    struct kb_point_obs obs = { 0 };
    struct kb_point_load lr;
    struct sampler s = { 0 };
    char path[4300], err[512], reason[768];
    json_t *j, *load = NULL;
    double t0 = now_s(), settle_s = 0;
    enum kb_verdict v;
    int rc = -1;

    memset(&lr, 0, sizeof(lr));
    if (kb_mkdirs(dir, err, sizeof(err)) < 0)
        goto out;
    kb_path(path, sizeof(path), dir, "DONE");
    unlink(path);
    ensure_fixture(cv, pt);
    if (g_stop)
        goto out;       /* interrupted while starting: no verdict, redone on resume */
    j = command_json(cv, pt);
    kb_path(path, sizeof(path), dir, "command.json");
    kb_write_json_atomic(path, j, err, sizeof(err));
    json_decref(j);
    kb_path(path, sizeof(path), dir, "samples.csv.tmp");
    if (!(s.csv = fopen(path, "w")))
        goto out;
    fprintf(s.csv, "t_s,server_cpu_s,server_cpu_fraction,server_rss_bytes,server_pss_bytes,"
                   "server_fds,server_threads,server_procs,client_cpu_s,client_rss_bytes\n");
    if (cv->preflight_failed) {
        obs.preflight_failed = 1;
        snprintf(obs.preflight_reason, sizeof(obs.preflight_reason), "%.200s", cv->preflight_reason);
    } else if ((settle_s = settle(cv, pt)), drive(cv, pt, dir, &s, &obs) < 0) {
        goto out;       /* interrupted: no marker, the point is redone on resume */
    } else {
        read_load(dir, &obs, &lr, &load);
        postflight(cv, pt, &obs);
    }
    fclose(s.csv);
    s.csv = NULL;
    kb_path(reason, sizeof(reason), dir, "samples.csv");
    rename(path, reason);
    v = kb_verdict_judge(&lr, &obs, &crit, reason, sizeof(reason));
    j = verdict_json(cv, pt, v, reason, load, &s, now_s() - t0);
    json_object_set_new(j, "settle_s", json_real(settle_s));
    kb_path(path, sizeof(path), dir, "verdict.json");
    rc = kb_write_json_atomic(path, j, err, sizeof(err));
    json_decref(j);
    j = json_pack("{s:s,s:s}", "point", pt->id, "verdict", kb_verdict_name(v));
    kb_path(path, sizeof(path), dir, "DONE");
    if (rc == 0)
        rc = kb_write_json_atomic(path, j, err, sizeof(err));
    json_decref(j);
    if (rc < 0)
        fprintf(stderr, "kneebench curve: %s\n", err);
    cv->finished++;
    if (!obs.preflight_failed) {    /* only driven points predict the ETA */
        cv->ran++;
        cv->run_secs += now_s() - t0;
    }
    progress(cv, pt, kb_verdict_name(v), load, 0);
out:
    if (s.csv)
        fclose(s.csv);
    json_decref(load);
    return rc;
}

/* ---- setup and the whole run ---------------------------------------------------------- */

static int setup(struct curve *cv, const struct args *a, char *err, size_t errlen)
{
    cpu_set_t srv;
    char canon[64];
    cv->run = a->run;
    cv->backend = a->backend;
    cv->build = a->build ? a->build : KB_ROOT "/build";
    cv->no_limits = a->no_limits;
    cv->free_ports = a->free_ports;
    if (kb_contract_load(a->contract ? a->contract : kb_contract_default_path(), &cv->c, err,
                         errlen) < 0)
        return -1;
    if (kb_matrix_plan(&cv->c, &a->plan, &cv->plan, err, errlen) < 0)
        return -1;
    if (!(cv->ops = kb_sandbox_backend(a->backend))) {
        snprintf(err, errlen, "unknown or unbuilt sandbox backend '%s'", a->backend);
        return -1;
    }
    if (!cv->no_limits && cv->ops->available(err, errlen) < 0)
        return -1;
    if (parse_cpulist(a->scpus ? a->scpus : cv->c.server_cpus, &srv, cv->server_cpus,
                      sizeof(cv->server_cpus)) < 0 ||
        (cv->nclient = parse_cpulist(a->ccpus ? a->ccpus : cv->c.client_cpus, &cv->client_set,
                                     cv->client_cpus, sizeof(cv->client_cpus))) < 0) {
        snprintf(err, errlen, "server or client CPU list is empty or malformed on this host "
                 "(%ld CPUs online)", sysconf(_SC_NPROCESSORS_ONLN));
        return -1;
    }
    CPU_AND(&srv, &srv, &cv->client_set);
    if (CPU_COUNT(&srv) > 0) {
        snprintf(err, errlen, "server CPUs %s and client CPUs %s overlap", cv->server_cpus,
                 cv->client_cpus);
        return -1;
    }
    (void)canon;
    if (a->load_cmd)
        snprintf(cv->load_cmd, sizeof(cv->load_cmd), "%s", a->load_cmd);
    else if ((cv->self_load = 1) && readlink("/proc/self/exe", cv->load_cmd,
                                               sizeof(cv->load_cmd) - 1) < 0)
        snprintf(cv->load_cmd, sizeof(cv->load_cmd), "%s/kneebench", cv->build);
    return kb_mkdirs(cv->run, err, errlen);
}

static void cleanup(struct curve *cv)
{
    if (cv->load_pid > 0) {
        kill(cv->load_pid, SIGKILL);
        waitpid(cv->load_pid, NULL, 0);
    }
    stop_fixture(cv);
    kb_plan_free(&cv->plan);
    kb_contract_free(&cv->c);
}

static void install_signals(void)
{
    struct sigaction sa;
    memset(&sa, 0, sizeof(sa));
    sa.sa_handler = on_signal;      /* no SA_RESTART: sleeps return early on Ctrl-C */
    sigaction(SIGINT, &sa, NULL);
    sigaction(SIGTERM, &sa, NULL);
    signal(SIGPIPE, SIG_IGN);
}

static int run_all(struct curve *cv)
{
    char dir[4200];
    int failures = 0;
    for (size_t i = 0; i < cv->plan.npoints && !g_stop; i++) {
        const struct kb_point *pt = &cv->plan.points[i];
        if (point_done(cv, pt, dir, sizeof(dir)))
            show_kept(cv, pt, dir);
        else if (run_point(cv, pt, dir) < 0 && !g_stop)
            failures++;
    }
    return failures;
}

int cmd_curve(int argc, char **argv)
{
    struct curve cv;
    struct args a;
    char err[1024];
    double t0 = now_s();
    int rc = parse_args(argc, argv, &a), failures;
    if (rc)
        return rc == 1 ? 0 : rc;
    memset(&cv, 0, sizeof(cv));
    install_signals();
    if (setup(&cv, &a, err, sizeof(err)) < 0 || write_or_check_plan(&cv, err, sizeof(err)) < 0 ||
        write_run_identity(&cv, argc, argv, err, sizeof(err)) < 0) {
        fprintf(stderr, "kneebench curve: %s\n", err);
        cleanup(&cv);
        return 2;
    }
    if (!cv.no_limits && kb_sandbox_sweep_stale() > 0)
        fprintf(stderr, "kneebench curve: removed cgroups left by an earlier run\n");
    printf("kneebench curve: %zu points into %s (profile %s, backend %s%s, server CPUs %s, "
           "client CPUs %s)\n", cv.plan.npoints, cv.run, cv.plan.profile, cv.backend,
           cv.no_limits ? ", UNCONSTRAINED" : "", cv.server_cpus, cv.client_cpus);
    fflush(stdout);
    failures = run_all(&cv);
    cleanup(&cv);
    if (g_stop) {
        fprintf(stderr, "kneebench curve: interrupted; complete points are kept, re-run to "
                "resume\n");
        return 130;
    }
    printf("kneebench curve: done in %.0f s\n", now_s() - t0);
    return failures ? 1 : 0;
}
