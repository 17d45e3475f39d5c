/* cmd_curve.c -- `kneebench curve`: the runtime x route x rate comparison into a run directory.
 *
 * Flow: plan (matrix.c) -> per runtime: start it in the sandbox, wait until it accepts,
 * read the limits back, hash its identity, preflight every route -> per point: the load
 * generator as a child pinned to the client CPUs, server samples every second, postflight,
 * identity again, verdict, evidence, completion marker last. A fixture that died is
 * restarted for the next point. Points whose marker exists are kept on a re-run (resume).
 * The run's skeleton is runner/run/run.c's, shared with `kneebench soak`: the run directory,
 * plan.json and run.json, the interrupt flag (SIGINT/SIGTERM only set it; every exit goes
 * through cleanup(), which stops the load child and the fixture, and so its cgroup), and
 * each point's evidence, every write checked: a point whose files could not all be written
 * gets incomplete.json instead of DONE. Starting a fixture, its limits and identity, the load
 * child and the server samples are runner/run/server.c's; the options, the plan, the
 * preflight, the sampling figures and the verdict are the curve's own, here.
 *
 * Evidence layout (every file written atomically, tmp + rename):
 *   RUN/plan.json               the plan: parameters, criteria, placement, every point id
 *   RUN/run.json                identity: runner SHA-256, contract SHA-256, host (kernel,
 *                               CPU model), runtime versions and gray-static's libmicrohttpd
 *                               from its line, command line,
 *                               limits requested (run-resumed-<t>.json per later invocation),
 *                               and what the sandbox adds (kb_sandbox_run_evidence): for a
 *                               container "image" (what image-identity.py says: ID, digests,
 *                               the base actually used, base_is_pinned, note), for another
 *                               host "target" (host, agent, the agent's identity answer); the
 *                               runtime versions are then the image's own or unknown
 *                               (kb_sandbox_runtime_version), not this host's
 *   RUN/fixtures/<rt>[-r<k>]/   limits.json (read back from the cgroup), identity.json
 *                               (kb_sandbox_identity: SHA-256 per executable and source file,
 *                               or of the image ID or the agent's host and the contract's
 *                               command; the run's baseline),
 *                               preflight.json, fixture.log, pg/ (db route's cluster)
 *   RUN/points/<rt>-<route>-<rate>[-r<k>]/
 *                               command.json (the point's contract), load.json,
 *                               corrected.hgrm, uncorrected.hgrm, load.log, requests.log
 *                               (where --requests-log keeps it), samples.csv
 *                               (server CPU/RSS/PSS/fds/threads/procs + client CPU, 1/s),
 *                               hostclock.json (the server and client CPUs' clock min-max
 *                               and governor at start and end, or "exposed": false),
 *                               verdict.json (verdict, reason, load figures, server summary),
 *                               DONE (the completion marker, last; only when every file
 *                               was written, else incomplete.json: {"file", "reason"})
 *   RUN/requests-logs.json      which points kept their requests.log, which did not, sizes
 *   RUN/report.md, report.csv, report.json, charts/{achieved,p99}-<route>.svg (report) */
#define _GNU_SOURCE
#include "runner/cli/commands.h"
#include "runner/run/calibrate.h"
#include "runner/util/clock.h"
#include "runner/util/evidence.h"
#include "runner/run/run.h"
#include "runner/run/server.h"
#include "runner/run/judgement.h"
#include "runner/run/hostclock.h"
#include "runner/run/refine.h"
#include "runner/run/steal.h"
#include "runner/run/matrix.h"
#include "runner/sandbox/pgcluster.h"
#include "runner/load/preflight.h"
#include "runner/sandbox/procs.h"
#include "runner/util/root.h"
#include "runner/sandbox/sandbox.h"
#include "runner/sandbox/spawn.h"
#include "runner/util/jfield.h"
#include "runner/util/units.h"
#include "runner/run/verdict.h"
#include "runner/report/report.h"
#include "fixtures/contract.h"

#include <dirent.h>
#include <errno.h>
#include <getopt.h>
#include <jansson.h>
#include <math.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

struct curve {
    struct kb_run r;            /* the run directory, contract, server (r.fx: placement,
                                * sandbox, the fixture now running, the load child), its
                                * PostgreSQL, the interrupt flag */
    struct kb_plan plan;
    int free_ports;
    /* the fixture now running */
    int repeat, preflight_failed;
    int harness_error;         /* the harness kept it from starting (preflight_reason says
                                * how): its points are not judged but left to redo */
    char fixdir[4096], preflight_reason[512];
    /* progress: finished of total, in the matrix or (confirming: "confirm ", "refine ") in a
     * round after it */
    size_t finished, ran, total;
    const char *confirming;
    double run_secs;
    struct kb_calibrate_result *cal;   /* --calibrate: the client's proven margin, or NULL */
    int requests_log;          /* --requests-log: enum reqlog */
    double refine;             /* --refine: the resolution in percent, 0 off */
};

/* --requests-log: every point's requests kept (all), kept only at each runtime-route's final
 * boundary (knee, the default), or not recorded (none). */
enum reqlog { RL_KNEE, RL_ALL, RL_NONE };

/* ---- options -------------------------------------------------------------------------- */

static int usage(FILE *f)
{
    fprintf(f,
        "usage: kneebench curve --run DIR [options]\n"
        "  --run DIR               the run (made; an existing one must be yours, writable by\n"
        "                          no one else: a re-run resumes it)\n"
        "  --profile paper|quick   durations from the contract's profile (default paper)\n"
        "                          (paper: the papers' 30 s points; its 5 s warmup and 2 s\n"
        "                          drain are this suite's own)\n"
        "  --profile db-readiness  the PostgreSQL paper's readiness curve: gray-static on /db at\n"
        "                          4k,8k,12k,16k,20k req/s, 15 s points after 3 s warmup, 4\n"
        "                          threads, 256 connections; its report locates the knee\n"
        "                          beside the paper's curve (options below still override)\n"
        "  --profile db-baseline   the first paper's blocking /db route beside the readiness\n"
        "                          design: gray-static-blocking and gray-static on /db at\n"
        "                          4k req/s, 30 s points; its report sets the blocking point\n"
        "                          beside the paper's one-hour db phase\n"
        "  --runtimes a,b --routes a,b --rates r1,r2   narrow the matrix\n"
        "  --duration D --warmup D --drain D --threads N --connections N   override\n"
        "                          (durations: 30, 30s, 500ms, 2m)\n"
        "  --db-mode M             the /db designs the db route's points run: readiness,\n"
        "                          blocking (gray-static-blocking) or both (default: the\n"
        "                          runtimes picked: readiness, both with db-baseline)\n"
        "  --requests-log M        knee (default): record every point's requests (bounded,\n"
        "                          requests.log), keep them at each runtime-route's final\n"
        "                          boundary only (its highest controlled rate and the next);\n"
        "                          all: keep every point's; none: record nothing\n"
        "  --repeats N             repeat the matrix, runtime order rotated per repeat\n"
        "  --confirm N             after the matrix, sample each runtime-route's boundary (its\n"
        "                          highest controlled rate and the next) until it has N\n"
        "                          samples, judged by their median (default: the profile's;\n"
        "                          quick 3, paper 1 = off)\n"
        "  --refine, --refine=PCT  after that, bisect each runtime-route between its highest\n"
        "                          controlled rate and the next until the bracket is within\n"
        "                          PCT %% (default 5), its ends confirmed as above; the first\n"
        "                          table shows the refined knee beside the grid's (off by\n"
        "                          default: it adds about 5 points a cell)\n"
        "  --backend native|docker|remote  sandbox backend (default native)\n"
        "  --agent HOST:PORT       remote: the fixture host's `kneebench serve-agent`\n"
        "  --agent-token FILE      remote: the agent's token (the file the agent was given,\n"
        "                          or the one it wrote; yours alone to read: docs/security.md)\n"
        "  --target IPV4           remote: the fixture host's address for the load, the\n"
        "                          readiness wait and pre/postflight (default: the agent's)\n"
        "  --image IMG             the docker backend's image (default $KB_DOCKER_IMAGE, else\n"
        "                          kneebench:latest)\n"
        "  --no-limits             run without cgroups; every point is marked unconstrained\n"
        "  --server-cpus LIST --client-cpus LIST   placement (default: the contract's)\n"
        "  --db-cpus LIST          the db route's PostgreSQL pinned there (default: CPUs no\n"
        "                          other role has, else the server's); the three sets must be\n"
        "                          disjoint where the host has a CPU per role, else the roles\n"
        "                          that share are named and recorded (plan.json, run.json)\n"
        "  --free-ports            give each fixture a free ephemeral port, not the contract's\n"
        "  --build DIR             where the built fixtures live (default: the tree's build/)\n"
        "  --load-cmd PATH         the load generator (default: this kneebench, `load`)\n"
        "  --client-sched fifo|other  load threads SCHED_FIFO 1 (default) or ordinary\n"
        "  --contract FILE\n"
        "  --calibrate             prove the client's margin first (kneebench calibrate, into\n"
        "                          DIR/calibrate); refuse to run if it is not proven\n"
        "  --force                 with --calibrate: run anyway, points above the margin are\n"
        "                          marked client-limited\n"
        "Re-running into the same DIR keeps complete points and redoes the rest.\n"
        "exit: 0 every point complete, whatever its verdict; 1 some point left without\n"
        "      complete evidence (re-run to redo it); 2 bad options, or the run could not\n"
        "      start (setup, calibration refused); 130 interrupted, complete points kept.\n");
    return f == stdout ? 0 : 2;
}

enum { O_PROFILE = 256, O_RUNTIMES, O_ROUTES, O_RATES, O_DURATION, O_WARMUP, O_DRAIN,
       O_THREADS, O_CONNS, O_REPEATS, O_BACKEND, O_NOLIMITS, O_SCPUS, O_CCPUS, O_FREE,
       O_BUILD, O_LOADCMD, O_CONTRACT, O_RUN, O_IMAGE, O_CSCHED, O_CALIBRATE, O_FORCE, O_AGENT, O_TARGET,
       O_DBCPUS, O_CONFIRM, O_DBMODE, O_REQLOG, O_REFINE, O_TOKEN };

static const struct option long_opts[] = {
    { "profile", 1, 0, O_PROFILE }, { "runtimes", 1, 0, O_RUNTIMES },
    { "routes", 1, 0, O_ROUTES }, { "rates", 1, 0, O_RATES },
    { "duration", 1, 0, O_DURATION }, { "warmup", 1, 0, O_WARMUP }, { "drain", 1, 0, O_DRAIN },
    { "threads", 1, 0, O_THREADS }, { "connections", 1, 0, O_CONNS },
    { "repeats", 1, 0, O_REPEATS }, { "backend", 1, 0, O_BACKEND },
    { "no-limits", 0, 0, O_NOLIMITS }, { "server-cpus", 1, 0, O_SCPUS },
    { "client-cpus", 1, 0, O_CCPUS }, { "free-ports", 0, 0, O_FREE },
    { "build", 1, 0, O_BUILD }, { "load-cmd", 1, 0, O_LOADCMD },
    { "contract", 1, 0, O_CONTRACT }, { "run", 1, 0, O_RUN }, { "image", 1, 0, O_IMAGE },
    { "calibrate", 0, 0, O_CALIBRATE }, { "force", 0, 0, O_FORCE },
    { "client-sched", 1, 0, O_CSCHED }, { "agent", 1, 0, O_AGENT }, { "target", 1, 0, O_TARGET },
    { "db-cpus", 1, 0, O_DBCPUS }, { "confirm", 1, 0, O_CONFIRM },
    { "db-mode", 1, 0, O_DBMODE }, { "requests-log", 1, 0, O_REQLOG },
    { "refine", 2, 0, O_REFINE }, { "agent-token", 1, 0, O_TOKEN },
    { "help", 0, 0, 'h' },
    { 0, 0, 0, 0 },
};

struct args {
    struct kb_plan_opts plan;
    const char *run, *backend, *build, *load_cmd, *contract, *scpus, *ccpus, *image;
    const char *agent, *target, *agent_token, *db_cpus;
    int no_limits, free_ports, client_other, calibrate, force, requests_log;
    double refine;             /* --refine's resolution in percent; 0: off */
};

/* A duration option (runner/util/units.h: 30, 30s, 500ms, 2m), in seconds within [lo, hi] (lo
 * excluded when open_lo), as kneebench load takes it: a value outside would otherwise fall
 * back to the profile's in silence. */
static int dur_arg(const char *name, const char *s, double lo, int open_lo, double hi,
                   double *out)
{
    if (kb_parse_duration(s, lo, hi, out) || (open_lo && *out == lo)) {
        fprintf(stderr, "kneebench curve: --%s must be a duration in %s%gs, %gs] (30, 30s, "
                "500ms, 2m), not '%s'\n", name, open_lo ? "(" : "[", lo, hi, s);
        return -1;
    }
    return 0;
}

/* An integer option in [lo, hi]. */
static int int_arg(const char *name, const char *s, long lo, long hi, int *out)
{
    char *end;
    long v;
    errno = 0;
    v = strtol(s, &end, 10);
    if (errno || end == s || *end || v < lo || v > hi) {
        fprintf(stderr, "kneebench curve: --%s must be a whole number in %ld..%ld, not '%s'\n",
                name, lo, hi, s);
        return -1;
    }
    *out = (int)v;
    return 0;
}

/* The load generator's own bounds (kneebench load), so a curve never plans a point its
 * load child would refuse. */
static int number_opt(int o, struct args *a)
{
    switch (o) {
    case O_DURATION: return dur_arg("duration", optarg, 0, 1, 86400, &a->plan.duration_s);
    case O_WARMUP: return dur_arg("warmup", optarg, 0, 0, 3600, &a->plan.warmup_s);
    case O_DRAIN: return dur_arg("drain", optarg, 0, 0, 600, &a->plan.drain_s);
    case O_THREADS: return int_arg("threads", optarg, 1, 256, &a->plan.threads);
    case O_CONNS: return int_arg("connections", optarg, 1, 60000, &a->plan.connections);
    case O_CONFIRM: return int_arg("confirm", optarg, 1, KB_CONFIRM_MAX, &a->plan.confirm);
    default: return int_arg("repeats", optarg, 1, 1000, &a->plan.repeats);
    }
}

static int reqlog_mode(const char *s)
{
    if (!strcmp(s, "knee"))
        return RL_KNEE;
    if (!strcmp(s, "all"))
        return RL_ALL;
    if (!strcmp(s, "none"))
        return RL_NONE;
    fprintf(stderr, "kneebench curve: --requests-log is knee, all or none, not '%s'\n", s);
    return -1;
}

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
        case O_DURATION: case O_WARMUP: case O_DRAIN: case O_THREADS: case O_CONNS:
        case O_REPEATS: case O_CONFIRM:
            if (number_opt(o, a) < 0)
                return 2;
            break;
        case O_BACKEND: a->backend = optarg; break;
        case O_NOLIMITS: a->no_limits = 1; break;
        case O_SCPUS: a->scpus = optarg; break;
        case O_CCPUS: a->ccpus = optarg; break;
        case O_DBCPUS: a->db_cpus = optarg; break;
        case O_DBMODE: a->plan.db_mode = optarg; break;   /* checked by the plan */
        case O_REQLOG:
            if ((a->requests_log = reqlog_mode(optarg)) < 0)
                return 2;
            break;
        case O_REFINE:
            if (!optarg) {
                a->refine = 5;
            } else {
                char *end;
                a->refine = strtod(optarg, &end);
                if (end == optarg || (*end && strcmp(end, "%")) || !(a->refine >= 0.1) ||
                    a->refine > 100) {
                    fprintf(stderr, "kneebench curve: --refine=PCT must be a percentage in "
                            "[0.1, 100], not '%s'\n", optarg);
                    return 2;
                }
            }
            break;
        case O_FREE: a->free_ports = 1; break;
        case O_BUILD: a->build = optarg; break;
        case O_LOADCMD: a->load_cmd = optarg; break;
        case O_CONTRACT: a->contract = optarg; break;
        case O_RUN: a->run = optarg; break;
        case O_CALIBRATE: a->calibrate = 1; break;
        case O_FORCE: a->force = 1; break;
        case O_IMAGE: a->image = optarg; break;
        case O_AGENT: a->agent = optarg; break;
        case O_TARGET: a->target = optarg; break;
        case O_TOKEN: a->agent_token = optarg; break;
        case O_CSCHED:
            if (strcmp(optarg, "fifo") && strcmp(optarg, "other")) {
                fprintf(stderr, "kneebench curve: --client-sched is fifo or other, not '%s'\n", optarg);
                return 2;
            }
            a->client_other = !strcmp(optarg, "other");
            break;
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
    if ((a->agent || a->target || a->agent_token) && strcmp(a->backend, "remote") != 0) {
        fprintf(stderr, "kneebench curve: --agent, --target and --agent-token are for "
                "--backend remote\n");
        return 2;
    }
    if (!strcmp(a->backend, "remote") && (!a->agent || !a->agent_token)) {
        fprintf(stderr, "kneebench curve: --backend remote needs --agent HOST:PORT (the fixture "
                "host's kneebench serve-agent) and --agent-token FILE (its token)\n");
        return 2;
    }
    if (a->image && strcmp(a->backend, "docker") != 0) {
        fprintf(stderr, "kneebench curve: --image is for --backend docker; the %s backend runs "
                "the fixtures built on this host\n", a->backend);
        return 2;
    }
    if (!a->image && !strcmp(a->backend, "docker") && getenv("KB_DOCKER_IMAGE") &&
        *getenv("KB_DOCKER_IMAGE"))
        a->image = getenv("KB_DOCKER_IMAGE");
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
    json_t *plan = json_pack("{s:s,s:f,s:f,s:f,s:i,s:i,s:i,s:i,s:o,s:o,s:o,s:s,s:b,s:s,s:s,"
                     "s:{s:f,s:I,s:f,s:I},s:o}",
        "profile", p->profile, "duration_s", p->duration_s, "warmup_s", p->warmup_s,
        "drain_s", p->drain_s, "threads", p->threads, "connections", p->connections,
        "repeats", p->repeats, "confirm_samples", p->confirm_samples, "runtimes", rts, "routes", rts2, "rates", rates,
        "backend", cv->r.backend, "unconstrained", cv->r.fx.no_limits,
        "server_cpus", cv->r.fx.server_cpus, "client_cpus", cv->r.fx.client_cpus,
        "criteria", "min_delivery", cv->r.c.min_delivery,
        "max_p99_us", (json_int_t)cv->r.c.max_p99_us,
        "client_cpu_max_fraction", cv->r.c.client_cpu_max_fraction, "client_lag_p99_max_us",
        (json_int_t)cv->r.c.client_lag_p99_max_us, "points", pts);
    if (plan && cv->r.c.baseline)
        json_object_set_new(plan, "baseline", json_string(cv->r.c.baseline));
    /* what the sandbox adds: a run resumes only against the same fixture host */
    json_t *keys = kb_sandbox_plan_keys(cv->r.fx.sandbox);
    if (plan && keys)
        json_object_update(plan, keys);
    json_decref(keys);
    if (plan && cv->r.db_on)    /* PostgreSQL's CPUs are part of the placement */
        json_object_update_new(plan, kb_dbplace_json(&cv->r.dbp));
    return plan;
}

/* A run directory holds one plan: a re-run must ask for the same one to resume it. */
static int write_or_check_plan(struct curve *cv, char *err, size_t errlen)
{
    return kb_run_plan_file(cv->r.dir, plan_json(cv), "plan (profile, matrix, placement or limits)",
                           err, errlen);
}

/* ---- identity ------------------------------------------------------------------------- */

static int db_planned(const struct curve *cv);

/* run.json: the skeleton's identity, with every planned runtime's version and, where the
 * db route runs, PostgreSQL's: its figures depend on it as much as on the server. */
static int write_run_identity(struct curve *cv, int argc, char **argv, char *err, size_t errlen)
{
    json_t *v = kb_run_versions(&cv->r, cv->plan.runtimes.v, cv->plan.runtimes.n);
    char pg[512];
    if (db_planned(cv)) {
        kb_run_pg_version(&cv->r, pg, sizeof(pg));
        json_object_set_new(v, "postgresql", json_string(pg));
    }
    return kb_run_identity(&cv->r, argc, argv, NULL, v, NULL, err, errlen);
}

/* ---- the fixture ---------------------------------------------------------------------- */

static void stop_fixture(struct curve *cv)
{
    kb_run_stop_fixture(&cv->r);
    cv->r.fx.rt = NULL;
}

/* 1 when the plan has points of runtime on route (a variant, or a design --db-mode left
 * out, has none on some routes its runtime serves). */
static int plan_has(const struct curve *cv, const char *runtime, const char *route)
{
    for (size_t i = 0; i < cv->plan.npoints; i++)
        if (!strcmp(cv->plan.points[i].runtime, runtime) &&
            !strcmp(cv->plan.points[i].route, route))
            return 1;
    return 0;
}

/* Preflight every route the plan runs this runtime on; the first failure is the reason. */
static void preflight_all(struct curve *cv, json_t *out)
{
    for (size_t i = 0; i < cv->plan.routes.n; i++) {
        const struct kb_route *r = kb_contract_route(&cv->r.c, cv->plan.routes.v[i]);
        char reason[512] = "";
        if (!plan_has(cv, cv->r.fx.rt->name, r->name))
            continue;
        /* the db pool connects after the port opens: give that route time to answer */
        int ok = (cv->r.pg.running && !strcmp(r->name, "db")
                      ? kb_pgrun_wait_route(cv->r.fx.port, r, 15000, kb_srv_alive, &cv->r.fx,
                                            reason, sizeof(reason))
                      : kb_preflight_route_at(cv->r.fx.target, cv->r.fx.port, r, reason,
                                              sizeof(reason))) == 0;
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
    char path[4300];
    json_t *first;
    kb_path(path, sizeof(path), cv->fixdir, "identity.json");
    if (!cv->r.fx.identity)
        return;
    if (!(first = json_load_file(path, 0, NULL))) {
        kb_run_write_json(&cv->r.fixture_ev, cv->fixdir, "identity.json", cv->r.fx.identity);
        return;
    }
    if (!json_equal(json_object_get(first, "sha256"),
                    json_object_get(cv->r.fx.identity, "sha256")) &&
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
    char *argv[64] = { 0 }, err[1024], pgdir[4300];
    json_t *pre = json_object();
    int rc;
    cv->r.fx.rt = rt;
    cv->repeat = repeat;
    cv->preflight_failed = cv->harness_error = 0;
    cv->r.fx.port = cv->free_ports ? kb_free_port(err, sizeof(err)) : rt->port;
    snprintf(cv->fixdir, sizeof(cv->fixdir), cv->plan.repeats > 1 ? "%s/fixtures/%s-r%d"
             : "%s/fixtures/%s", cv->r.dir, rt->name, repeat);
    kb_path(pgdir, sizeof(pgdir), cv->fixdir, "pg");
    rc = kb_run_launch(&cv->r, cv->fixdir,
                       rt->db_command_extra.n && plan_has(cv, rt->name, "db") ? pgdir : NULL,
                       cv->r.c.db_pool_size, argv, cv->preflight_reason,
                       sizeof(cv->preflight_reason));
    cv->harness_error = rc == KB_FX_HARNESS;
    cv->preflight_failed = rc < 0 && !cv->harness_error;
    if (cv->r.fx.sb) {            /* it runs (its limits or identity may have failed) */
        check_identity_baseline(cv);
        preflight_all(cv, pre);
    }
    json_object_set_new(pre, "failed", json_boolean(cv->preflight_failed));
    json_object_set_new(pre, "harness_error", json_boolean(cv->harness_error));
    json_object_set_new(pre, "reason", json_string(cv->preflight_reason));
    json_object_set_new(pre, "port", json_integer(cv->r.fx.port));
    kb_run_write_json(&cv->r.fixture_ev, cv->fixdir, "preflight.json", pre);
    json_decref(pre);
    kb_tmpl_free(argv, 64);
}

static void ensure_fixture(struct curve *cv, const struct kb_point *pt)
{
    const struct kb_runtime *rt = kb_contract_runtime(&cv->r.c, pt->runtime);
    /* keep a live fixture; do not retry one that could not start for this runtime */
    if (cv->r.fx.rt == rt && cv->repeat == pt->repeat &&
        (cv->r.fx.sb ? kb_sandbox_alive(cv->r.fx.sb) : cv->preflight_failed))
        return;
    stop_fixture(cv);
    start_fixture(cv, rt, pt->repeat);
}

/* ---- one point ------------------------------------------------------------------------ */

#define CPU_SAMPLES_MAX 1024

/* The server CPUs are read here only when the fixture runs on this host. */
#define HOSTCLOCK_CPUS(cv) !kb_sandbox_on_this_host((cv)->r.fx.sandbox) ? NULL \
                           : (cv)->r.fx.server_cpus, (cv)->r.fx.client_cpus

struct sampler {
    const struct curve *cv;
    struct kb_afile *csv;
    double t0, last_t, last_cpu;
    double cpu_sum_frac, n;
    long long rss_max, pss_max;
    long fds_max, threads_max, procs_max;
    double cpu_t[CPU_SAMPLES_MAX], cpu_s[CPU_SAMPLES_MAX];   /* monotonic s, server CPU s */
    size_t ncpu;
    struct kb_hostclock clock;   /* the server and client CPUs' clocks and governors */
    int steal_ready;
    struct kb_steal_track steal_srv, steal_cli;   /* what the host withheld from each role */
};

/* The host's theft from both roles' CPUs (the server's only where it runs on this host). */
static void sample_steal(struct sampler *s, double t)
{
    if (!s->steal_ready) {
        kb_steal_track_init(&s->steal_srv, kb_sandbox_on_this_host(s->cv->r.fx.sandbox)
                                           ? s->cv->r.fx.server_cpus : NULL);
        kb_steal_track_init(&s->steal_cli, s->cv->r.fx.client_cpus);
        s->steal_ready = 1;
    }
    kb_steal_track_sample(&s->steal_srv, KB_STEAL_PROCSTAT, t);
    kb_steal_track_sample(&s->steal_cli, KB_STEAL_PROCSTAT, t);
}


/* A fraction with its separator; empty where it is not known (never a 0). */
static void csv_fraction(FILE *f, double v, char sep)
{
    if (isfinite(v))
        fprintf(f, "%.4f%c", v, sep);
    else
        fputc(sep, f);
}

/* Server and load child, once a second from the load's start (kb_srv_drive's callback). */
static void sample_once(void *arg, double t0, double t)
{
    struct sampler *s = arg;
    struct kb_proc_sample srv, cli;
    double frac;
    s->t0 = t0;
    kb_srv_sample_server(&s->cv->r.fx, &srv);
    kb_procs_sample(&s->cv->r.fx.load_pid, 1, &cli);
    frac = s->n > 0 || s->last_t > 0 ? (srv.cpu_seconds - s->last_cpu) / (t - s->last_t) : 0;
    sample_steal(s, t);
    fprintf(s->csv->f, "%.3f,%.2f,%.3f,%lld,%lld,%ld,%ld,%zu,%.2f,%lld,", t - s->t0,
            srv.cpu_seconds, frac, srv.rss_bytes, srv.pss_bytes, srv.fds, srv.threads,
            srv.nprocs, cli.cpu_seconds, cli.rss_bytes);
    csv_fraction(s->csv->f, s->steal_srv.last_fraction, ',');
    csv_fraction(s->csv->f, s->steal_cli.last_fraction, '\n');
    if (s->last_t > 0) {
        s->cpu_sum_frac += frac;
        s->n++;
    }
    s->last_t = t;
    s->last_cpu = srv.cpu_seconds;
    if (s->ncpu < CPU_SAMPLES_MAX) {
        s->cpu_t[s->ncpu] = t;
        s->cpu_s[s->ncpu++] = srv.cpu_seconds;
    }
#define KB_MAX(a, b) ((a) = (b) > (a) ? (b) : (a))
    KB_MAX(s->rss_max, srv.rss_bytes);
    KB_MAX(s->pss_max, srv.pss_bytes);
    KB_MAX(s->fds_max, srv.fds);
    KB_MAX(s->threads_max, srv.threads);
    KB_MAX(s->procs_max, (long)srv.nprocs);
    kb_hostclock_sample_point(&s->clock, HOSTCLOCK_CPUS(s->cv));
}

static json_t *command_json(const struct curve *cv, const struct kb_point *pt)
{
    const struct kb_route *r = kb_contract_route(&cv->r.c, pt->route);
    return json_pack("{s:s,s:s,s:s,s:I,s:i,s:s,s:i,s:f,s:f,s:f,s:i,s:i,s:s,s:s,s:b,s:s,s:{s:i,s:s,s:s?,s:s?},s:s,s:s,s:s}",
        "point", pt->id, "runtime", pt->runtime, "route", pt->route, "rate", (json_int_t)pt->rate,
        "repeat", pt->repeat, "url_path", r->path, "port", cv->r.fx.port,
        "duration_s", cv->plan.duration_s, "warmup_s", cv->plan.warmup_s,
        "drain_s", cv->plan.drain_s, "threads", cv->plan.threads,
        "connections", cv->plan.connections, "server_cpus", cv->r.fx.server_cpus,
        "client_cpus", cv->r.fx.client_cpus, "unconstrained", cv->r.fx.no_limits,
        "client_sched", cv->r.fx.client_rt ? "fifo" : "other", "expect", "status", r->status,
        "content_type", r->content_type, "body", r->body,
        "body_regex", r->body_regex, "load_generator", cv->r.fx.load_cmd, "fixture_dir", cv->fixdir,
        "target", cv->r.fx.target);
}

/* Run the load child to its end (or until the stop flag), sampling every second. */
static int drive(struct curve *cv, const struct kb_point *pt, const char *dir,
                 struct sampler *s, struct kb_point_obs *obs)
{
    const struct kb_srv_load ld = { cv->plan.duration_s, cv->plan.warmup_s, cv->plan.drain_s,
                                   cv->plan.threads, cv->plan.connections,
                                   cv->requests_log != RL_NONE };
    /* killed outright on interrupt: its figures are discarded anyway */
    const struct kb_srv_sampling sp = { 0, 1.0, INFINITY, sample_once, s, SIGKILL };
    s->cv = cv;
    return kb_srv_drive(&cv->r.fx, &ld, pt->route, pt->rate, dir, &sp, obs);
}

/* Before a point: the route must answer correctly again, and the server must have gone
 * quiet (under SETTLE_IDLE_CPU of a CPU over a SETTLE_WINDOW_S window), since an
 * overloaded fixture may still be working off the previous point's backlog and would start
 * the next point already busy. Up to SETTLE_MAX_S in all; the time taken, the last window's
 * server CPU and whether it went quiet are evidence in verdict.json. */
#define SETTLE_MAX_S 10.0
#define SETTLE_WINDOW_S 0.3
#define SETTLE_IDLE_CPU 0.10

struct settled {
    double seconds;
    double server_cpu;     /* CPUs over the last window, -1 when none was measured */
    int quiet;
};

static int settle_alive(const struct curve *cv, double t0)
{
    return !kb_run_interrupted() && cv->r.fx.sb && kb_sandbox_alive(cv->r.fx.sb) &&
           kb_srv_now_s() - t0 < SETTLE_MAX_S;
}

static struct settled settle(struct curve *cv, const struct kb_point *pt)
{
    const struct kb_route *r = kb_contract_route(&cv->r.c, pt->route);
    struct settled st = { 0, -1, 0 };
    struct kb_proc_sample a, b;
    double t0 = kb_srv_now_s(), ta, tb;
    char err[512];
    while (settle_alive(cv, t0) &&
           kb_preflight_route_at(cv->r.fx.target, cv->r.fx.port, r, err, sizeof(err)) < 0)
        kb_sleep_ms(100);
    kb_srv_sample_server(&cv->r.fx, &a);
    ta = kb_srv_now_s();
    while (!st.quiet && settle_alive(cv, t0)) {
        kb_sleep_ms((long)(SETTLE_WINDOW_S * 1000));
        kb_srv_sample_server(&cv->r.fx, &b);
        tb = kb_srv_now_s();
        st.server_cpu = (b.cpu_seconds - a.cpu_seconds) / (tb - ta);
        st.quiet = st.server_cpu < SETTLE_IDLE_CPU;
        a = b;
        ta = tb;
    }
    st.seconds = kb_srv_now_s() - t0;
    return st;
}

/* The server's cumulative CPU at monotonic time t, interpolated between the samples
 * around it; NAN outside them. */
static double cpu_at(const struct sampler *s, double t)
{
    for (size_t i = 1; i < s->ncpu; i++)
        if (s->cpu_t[i - 1] <= t && t <= s->cpu_t[i]) {
            double span = s->cpu_t[i] - s->cpu_t[i - 1];
            double f = span > 0 ? (t - s->cpu_t[i - 1]) / span : 0;
            return s->cpu_s[i - 1] + f * (s->cpu_s[i] - s->cpu_s[i - 1]);
        }
    return NAN;
}

/* The server's cost per response: its CPU over the measured interval (the load reports
 * the interval's ends on the same monotonic clock as the samples) over the responses that
 * ended inside it. Where the knee lies past the client's reach, this still tells runtimes
 * apart: 1 / cost is what one CPU would serve. Nulls when it cannot be measured. */
static void server_cost(json_t *server, const struct sampler *s, const struct kb_point_load *lr)
{
    double a = lr->interval_start_mono_s, b = lr->interval_end_mono_s;
    double n = (double)lr->completed_in_window;
    double cpu = a > 0 && b > a ? cpu_at(s, b) - cpu_at(s, a) : NAN;
    double us = n > 0 && cpu > 0 ? cpu * 1e6 / n : NAN;
    json_object_set_new(server, "cpu_interval_s", kb_json_figure(cpu));
    json_object_set_new(server, "cpu_us_per_response", kb_json_figure(us));
    json_object_set_new(server, "capacity_estimate_rps", isfinite(us) ? json_real(1e6 / us) : json_null());
}

static json_t *verdict_json(const struct curve *cv, const struct kb_point *pt,
                            enum kb_verdict v, const char *reason, json_t *load,
                            const struct kb_point_load *lr, const struct sampler *s, double wall)
{
    json_t *j = json_pack("{s:s,s:s,s:s,s:I,s:i,s:s,s:s,s:b,s:f,s:s}", "point", pt->id,
        "runtime", pt->runtime, "route", pt->route, "rate", (json_int_t)pt->rate,
        "repeat", pt->repeat, "verdict", kb_verdict_name(v), "reason", reason,
        "unconstrained", cv->r.fx.no_limits, "wall_s", wall, "identity_sha256",
        cv->r.fx.identity ? json_string_value(json_object_get(cv->r.fx.identity, "sha256")) : "");
    json_object_set_new(j, "server", json_pack("{s:f,s:I,s:I,s:I,s:I,s:I,s:i}",
        "cpu_mean_fraction", s->n > 0 ? s->cpu_sum_frac / s->n : 0.0,
        "rss_max_bytes", (json_int_t)s->rss_max, "pss_max_bytes", (json_int_t)s->pss_max,
        "fds_max", (json_int_t)s->fds_max, "threads_max", (json_int_t)s->threads_max,
        "procs_max", (json_int_t)s->procs_max, "samples", (int)s->n + (s->last_t > 0)));
    server_cost(json_object_get(j, "server"), s, lr);
    json_object_set(j, "load", load ? load : json_null());
    return j;
}

/* lr NULL: the point has no load figures */
static void progress(struct curve *cv, const struct kb_point *pt, const char *verdict,
                     const struct kb_point_load *lr, int kept)
{
    double left = (double)(cv->total - cv->finished);
    double per = cv->ran ? cv->run_secs / (double)cv->ran
                         : cv->plan.warmup_s + cv->plan.duration_s + cv->plan.drain_s + 1;
    double eta = left * per;
    char p99s[32];
    /* no latency is "-", never 0; a lower bound (unanswered requests) is ">=" */
    if (!lr || !isfinite(lr->corrected.p99))
        snprintf(p99s, sizeof(p99s), "-");
    else
        snprintf(p99s, sizeof(p99s), "%s%.2f", lr->corrected_p99_is_bound ? ">=" : "",
                 lr->corrected.p99 / 1000.0);
    printf("[%s%*zu/%zu] %-12s %-10s %6ld/s  achieved %8.0f/s  p99 %11s ms  %-14s %s eta %dm%02ds\n",
           cv->confirming ? cv->confirming : "", cv->total >= 100 ? 3 : 2, cv->finished, cv->total,
           pt->runtime,
           pt->route, pt->rate, lr ? lr->achieved_rps : 0.0,
           p99s, verdict, kept ? "(kept)" : "", (int)eta / 60, (int)eta % 60);
    fflush(stdout);
}

static void show_kept(struct curve *cv, const struct kb_point *pt, const char *dir)
{
    char path[4300], err[256];
    struct kb_point_load lr;
    json_t *v;
    kb_path(path, sizeof(path), dir, "verdict.json");
    v = json_load_file(path, 0, NULL);
    cv->finished++;
    progress(cv, pt, json_string_value(json_object_get(v, "verdict")),
             kb_point_load_parse(json_object_get(v, "load"), &lr, err, sizeof(err)) == 0 ? &lr
                                                                                       : NULL, 1);
    json_decref(v);
}

#define SAMPLES_HEADER "t_s,server_cpu_s,server_cpu_fraction,server_rss_bytes,server_pss_bytes," \
                       "server_fds,server_threads,server_procs,client_cpu_s,client_rss_bytes," \
                       "server_steal_fraction,client_steal_fraction\n"

/* Why a point could not be measured, or 0 when it can be: interrupted, or a harness error
 * (not the fixture's doing: no verdict charged to it, no marker, redone later). */
static int not_measured(const struct curve *cv, const struct kb_point *pt, char *err,
                        size_t errlen)
{
    if (kb_run_interrupted())
        snprintf(err, errlen, "%s interrupted while its fixture started", pt->id);
    else if (cv->harness_error)
        snprintf(err, errlen, "%s not run, left to redo: %s", pt->id, cv->preflight_reason);
    else
        return 0;
    return -1;
}

/* The verdict, with the settling before the point, into verdict.json (noted in ev). */
/* What the host withheld from both roles during the point, and whether it could have
 * decided the server's verdict (a failed point: no). */
static json_t *host_json(const struct sampler *s, const struct kb_point_load *lr,
                         const struct kb_criteria *crit, const struct kb_judgement *jd)
{
    char why[256] = "not judged: the point failed";
    int could = jd->server != KB_FAILED &&
                kb_steal_could_decide(lr, crit, &s->steal_srv, why, sizeof(why));
    return kb_steal_json(&s->steal_srv, &s->steal_cli, could, why);
}

static void write_verdict(struct curve *cv, const struct kb_point *pt, const char *dir,
                          const struct kb_judgement *jd, const struct kb_point_load *lr,
                          json_t *load, const struct sampler *s,
                          const struct settled *st, const struct kb_point_obs *obs,
                          double wall, struct kb_run_evidence *ev)
{
    struct kb_criteria crit = kb_criteria_of(&cv->r.c);
    json_t *j = verdict_json(cv, pt, jd->verdict, jd->reason, load, lr, s, wall);
    /* judged_by keeps what the judgement read beside load.json: the report re-derives it */
    kb_judgement_record(j, jd, lr, obs, &crit, cv->cal != NULL);
    json_object_set_new(j, "settle_s", json_real(st->seconds));
    json_object_set_new(j, "settle_server_cpu", st->server_cpu < 0 ? json_null()
                                                                   : json_real(st->server_cpu));
    json_object_set_new(j, "settle_quiet", json_boolean(st->quiet));
    json_object_set_new(j, "host", host_json(s, lr, &crit, jd));
    kb_run_write_json(ev, dir, "verdict.json", j);
    json_decref(j);
}

/* Evidence in order: command, samples, host clocks, verdict (with the load figures), marker
 * last, and only when every file before it was written. 0, or -1 with err. */
static int run_point(struct curve *cv, const struct kb_point *pt, const char *dir,
                     char *err, size_t errlen)
{
    struct kb_criteria crit = kb_criteria_of(&cv->r.c);
    struct kb_point_obs obs = { 0 };
    struct kb_point_load lr;
    struct kb_run_evidence ev = { "", "" };
    struct sampler s = { 0 };
    struct settled st = { 0, -1, 0 };
    struct kb_judgement jd;
    char why[512];
    json_t *j, *load = NULL;
    double t0 = kb_srv_now_s();
    int rc;

    memset(&lr, 0, sizeof(lr));
    if (kb_run_point_begin(dir, err, errlen) < 0)
        return -1;
    ensure_fixture(cv, pt);
    if (not_measured(cv, pt, err, errlen) < 0)
        return -1;
    j = command_json(cv, pt);
    kb_run_write_json(&ev, dir, "command.json", j);
    json_decref(j);
    if (!(s.csv = kb_run_csv_open(&ev, dir, "samples.csv", SAMPLES_HEADER)))
        return kb_run_point_finish(&cv->r, &ev, dir, NULL, err, errlen);
    if (cv->preflight_failed) {
        obs.preflight_failed = 1;
        snprintf(obs.preflight_reason, sizeof(obs.preflight_reason), "%.200s", cv->preflight_reason);
    } else if ((st = settle(cv, pt)), drive(cv, pt, dir, &s, &obs) < 0) {
        kb_run_csv_abort(&s.csv);  /* no marker: the point is redone on resume */
        snprintf(err, errlen, "%s: the load generator did not run to its end%s", pt->id,
                 kb_run_interrupted() ? " (interrupted)" : "; left to redo");
        return -1;
    } else {
        /* one sample after the load ended, so the interval's end lies between two */
        if (s.ncpu > 0)
            sample_once(&s, s.t0, kb_srv_now_s());
        kb_srv_read_load(dir, &obs, &lr, &load);
        kb_srv_postflight(&cv->r.fx, kb_contract_route(&cv->r.c, pt->route), &obs);
    }
    /* a remote agent's session lost is the harness's failure: no verdict, redone later */
    if (cv->r.fx.sb && kb_sandbox_lost(cv->r.fx.sb, why, sizeof(why))) {
        kb_run_csv_abort(&s.csv);
        json_decref(load);
        snprintf(err, errlen, "%s: %.400s; left to redo", pt->id, why);
        return -1;
    }
    kb_run_csv_close(&ev, &s.csv, "samples.csv");
    kb_judge_point(&lr, &obs, &crit, cv->cal, (double)pt->rate, &jd);
    if (kb_hostclock_write_point(&s.clock, HOSTCLOCK_CPUS(cv), dir, why, sizeof(why)) < 0)
        kb_run_note(&ev, "hostclock.json", why);
    write_verdict(cv, pt, dir, &jd, &lr, load, &s, &st, &obs, kb_srv_now_s() - t0, &ev);
    rc = kb_run_point_finish(&cv->r, &ev, dir, json_pack("{s:s,s:s}", "point", pt->id,
                             "verdict", kb_verdict_name(jd.verdict)), err, errlen);
    cv->finished++;
    if (!obs.preflight_failed) {    /* only driven points predict the ETA */
        cv->ran++;
        cv->run_secs += kb_srv_now_s() - t0;
    }
    /* a point whose evidence could not be written has no verdict to show: it is redone */
    progress(cv, pt, rc < 0 ? "incomplete" : kb_verdict_name(jd.verdict),
             obs.have_load ? &lr : NULL, 0);
    json_decref(load);
    return rc;
}

/* ---- setup and the whole run ---------------------------------------------------------- */

/* 1 when a planned runtime would need the run's PostgreSQL (the db route). */
static int db_planned(const struct curve *cv)
{
    for (size_t i = 0; i < cv->plan.runtimes.n; i++) {
        const struct kb_runtime *rt = kb_contract_runtime(&cv->r.c, cv->plan.runtimes.v[i]);
        if (rt && rt->db_command_extra.n && plan_has(cv, rt->name, "db"))
            return 1;
    }
    return 0;
}

/* The db route's PostgreSQL CPUs beside the server's and client's (runner/run/dbplace.h):
 * what the pgcluster pins it to, and which roles share, said here and recorded. */
static int db_placement(struct curve *cv, const char *db_cpus, char *err, size_t errlen)
{
    if (!db_planned(cv)) {
        if (db_cpus)
            snprintf(err, errlen, "--db-cpus is for the db route, which this plan does not run");
        return db_cpus ? -1 : 0;
    }
    return kb_run_db_place(&cv->r, db_cpus, err, errlen);
}

static int setup(struct curve *cv, const struct args *a, char *err, size_t errlen)
{
    const struct kb_srv_opts fo = { a->backend, a->build ? a->build : kb_root_build(), a->scpus,
                                   a->ccpus, a->load_cmd, a->no_limits, a->client_other,
                                   a->image, a->agent, a->target, a->agent_token };
    cv->free_ports = a->free_ports;
    cv->requests_log = a->requests_log;
    cv->refine = a->refine;
    if (kb_run_open(&cv->r, "curve", a->run, a->contract, err, errlen) < 0)
        return -1;
    if (kb_matrix_plan(&cv->r.c, &a->plan, &cv->plan, err, errlen) < 0)
        return -1;
    if (kb_run_setup(&cv->r, &fo, err, errlen) < 0)
        return -1;
    /* the run's PostgreSQL runs on this host */
    if (!kb_sandbox_on_this_host(cv->r.fx.sandbox) && db_planned(cv)) {
        snprintf(err, errlen, "--backend %s: the db route needs PostgreSQL beside the "
                 "fixture, which serve-agent does not start; narrow --routes", a->backend);
        return -1;
    }
    return db_placement(cv, a->db_cpus, err, errlen);
}

static void cleanup(struct curve *cv)
{
    cv->r.fx.rt = NULL;
    kb_run_close(&cv->r, SIGKILL);
    kb_plan_free(&cv->plan);
    free(cv->cal);
}

/* --calibrate: prove the client's margin over the plan's top rate (reusing a complete
 * DIR/calibrate/calibrate.json on resume). -1 when it cannot run or, without --force, when
 * the margin is not proven. */
static int calibrate_gate(struct curve *cv, const struct args *a, char *err, size_t errlen)
{
    struct kb_calibrate_cfg cfg = { .warmup_s = -1, .progress = stdout };
    char dir[4200], path[4300];
    double top = 0;

    for (size_t i = 0; i < cv->plan.nrates; i++)
        top = cv->plan.rates[i] > top ? (double)cv->plan.rates[i] : top;
    kb_path(dir, sizeof(dir), cv->r.dir, "calibrate");
    kb_path(path, sizeof(path), dir, "calibrate.json");
    if (!(cv->cal = calloc(1, sizeof(*cv->cal)))) {
        snprintf(err, errlen, "calibration: out of memory");
        return -1;
    }
    if (kb_mkdirs(dir, err, errlen) < 0)
        return -1;
    if (kb_calibrate_read(path, cv->cal, err, errlen) < 0 || cv->cal->up_to_rps < top) {
        cfg.out_dir = dir;
        cfg.contract_path = cv->r.c.path;
        cfg.kneebench = cv->r.fx.load_cmd;
        cfg.build_dir = cv->r.fx.build;
        cfg.server_cpus = cv->r.fx.server_cpus;
        cfg.client_cpus = cv->r.fx.client_cpus;
        cfg.up_to_rps = top;
        cfg.threads = cv->plan.threads;
        cfg.connections = cv->plan.connections;
        cfg.client_rt = cv->r.fx.client_rt;
        if (kb_calibrate(&cfg, cv->cal, err, errlen) < 0)
            return -1;
    }
    printf("kneebench curve: client margin %.0f req/s, %s %.0f (%.2f x %.0f)%s\n",
           cv->cal->margin_rps, cv->cal->proven ? "proves" : "does NOT prove",
           cv->cal->required_rps, cv->cal->factor, top,
           !cv->cal->proven && a->force ? "; --force: points above it are client-limited" : "");
    if (!cv->cal->proven && !a->force) {
        snprintf(err, errlen, "the client cannot prove its margin (see %.600s); --force runs "
                 "anyway and marks the points above it client-limited", path);
        return -1;
    }
    return 0;
}

/* Each point of pts in order, a complete one kept; the count that could not be run. */
static int run_points(struct curve *cv, const struct kb_point *pts, size_t n)
{
    char dir[4200], err[1400];
    int failures = 0;
    cv->finished = 0;
    cv->total = n;
    for (size_t i = 0; i < n && !kb_run_interrupted(); i++) {
        const struct kb_point *pt = &pts[i];
        snprintf(dir, sizeof(dir), "%s/points/%s", cv->r.dir, pt->id);
        if (kb_run_point_done(dir)) {
            show_kept(cv, pt, dir);
        } else if (run_point(cv, pt, dir, err, sizeof(err)) < 0 && !kb_run_interrupted()) {
            fprintf(stderr, "kneebench curve: %s\n", err);
            failures++;
        }
    }
    return failures;
}

/* ---- confirming each cell's boundary -------------------------------------------------- */
/* After the matrix, each runtime-route's boundary -- its highest controlled rate and the
 * next one up, read from the aggregated rows as the report reads them -- is sampled again
 * until each has plan.confirm_samples samples, and the rows' medians decide (docs/protocol.md,
 * "Confirming the answer"). Where that moves the boundary, the new one is confirmed in the
 * next round, at most CONFIRM_ROUNDS rounds. The added points are listed in RUN/confirm.json
 * (written before they run, so a resumed run and the report find them) and kept like the
 * matrix's: points/<rt>-<route>-<rate>-c<k>/, k the sample's number at that rate. */
#define CONFIRM_ROUNDS 4
#define CONFIRM_MAX 512

struct confirm {
    json_t *points;                     /* confirm.json's points, in the order added */
    struct kb_point pts[CONFIRM_MAX];   /* this round's, to run */
    size_t n;
};

/* The plan's own copy of name (point strings must outlive the round), its index in *at. */
static const char *plan_name(const struct kb_strlist *l, const char *name, size_t *at)
{
    for (size_t i = 0; i < l->n; i++)
        if (!strcmp(l->v[i], name)) {
            *at = i;
            return l->v[i];
        }
    return NULL;
}

static int listed(json_t *points, const char *id)
{
    size_t i;
    json_t *p;
    json_array_foreach(points, i, p)
        if (!strcmp(json_string_value(json_object_get(p, "id")), id))
            return 1;
    return 0;
}

/* The samples b's runtime and route still want at side's rate, numbered from its n + 1. */
static void want_samples(struct curve *cv, struct confirm *cf, const struct kb_boundary *b,
                         const struct kb_boundary_rate *side)
{
    long rate = side->rps;
    int have = side->n, k = kb_boundary_wants(side, cv->plan.confirm_samples);
    for (int j = 0; j < k && cf->n < CONFIRM_MAX; j++) {
        struct kb_point *pt = &cf->pts[cf->n];
        size_t rt, ro;
        memset(pt, 0, sizeof(*pt));
        pt->repeat = 1;
        pt->runtime = plan_name(&cv->plan.runtimes, b->runtime, &rt);
        pt->route = plan_name(&cv->plan.routes, b->route, &ro);
        pt->rate = rate;
        if (!pt->runtime || !pt->route)
            return;
        snprintf(pt->id, sizeof(pt->id), "%s-%s-%ld-c%d", pt->runtime, pt->route, rate,
                 have + 1 + j);
        /* the run order's key (by_key): runtime, then the sample's number, then as added */
        pt->index = (rt << 24) | ((size_t)(have + 1 + j) << 16) | cf->n++;
        if (!listed(cf->points, pt->id))
            json_array_append_new(cf->points, json_pack("{s:s,s:s,s:s,s:I,s:i}", "id", pt->id,
                                  "runtime", pt->runtime, "route", pt->route,
                                  "rate", (json_int_t)rate, "sample", have + 1 + j));
    }
}

/* Runtime by runtime in the plan's order (one fixture start each), the boundary's rates
 * alternating within it (sample 2 of each, then sample 3 of each), so that no rate's
 * samples fall in one stretch of time. */
static int by_key(const void *a, const void *b)
{
    const struct kb_point *x = a, *y = b;
    return (x->index > y->index) - (x->index < y->index);
}

/* One round: the boundaries as they stand, and the samples they still want. 0 when none
 * is wanted, -1 when the rows cannot be read. */
static int confirm_plan(struct curve *cv, struct confirm *cf, char *err, size_t errlen)
{
    struct kb_report rep;
    struct kb_boundary b[256];
    size_t nb;
    cf->n = 0;
    if (kb_report_load(cv->r.dir, &rep, err, errlen) < 0)
        return -1;
    nb = kb_report_boundaries(&rep, b, sizeof(b) / sizeof(b[0]));
    for (size_t i = 0; i < nb; i++) {
        want_samples(cv, cf, &b[i], &b[i].held);
        want_samples(cv, cf, &b[i], &b[i].next);
    }
    kb_report_free(&rep);
    qsort(cf->pts, cf->n, sizeof(cf->pts[0]), by_key);
    for (size_t i = 0; i < cf->n; i++)
        cf->pts[i].index = i;
    return cf->n > 0;
}

static int write_confirm(struct curve *cv, const struct confirm *cf, char *err, size_t errlen)
{
    char path[4200];
    json_t *doc = json_pack("{s:i,s:i,s:O}", "schema_version", 1, "samples",
                            cv->plan.confirm_samples, "points", cf->points);
    int rc = kb_run_evidence_json(kb_path(path, sizeof(path), cv->r.dir, "confirm.json"), doc,
                                  err, errlen);
    json_decref(doc);
    return rc;
}

/* The confirmation rounds; the count of points that could not be run, or -1 when the
 * boundaries could not be read or confirm.json written (said on stderr). */
static int confirm_all(struct curve *cv)
{
    struct confirm *cf = calloc(1, sizeof(*cf));
    char err[1024], path[4200];
    json_t *old;
    int failures = 0, rc = 0;
    if (!cf)
        return -1;
    old = json_load_file(kb_path(path, sizeof(path), cv->r.dir, "confirm.json"), 0, NULL);
    cf->points = json_is_array(json_object_get(old, "points"))
                 ? json_incref(json_object_get(old, "points")) : json_array();
    json_decref(old);
    cv->confirming = "confirm ";
    for (int round = 0; round < CONFIRM_ROUNDS && !kb_run_interrupted(); round++) {
        if ((rc = confirm_plan(cv, cf, err, sizeof(err))) <= 0 ||
            (rc = write_confirm(cv, cf, err, sizeof(err))) < 0)
            break;
        printf("kneebench curve: confirming the boundaries, round %d: %zu more sample(s)\n",
               round + 1, cf->n);
        fflush(stdout);
        failures += run_points(cv, cf->pts, cf->n);
    }
    cv->confirming = NULL;
    if (rc < 0)
        fprintf(stderr, "kneebench curve: cannot confirm the boundaries: %s\n", err);
    json_decref(cf->points);
    free(cf);
    return rc < 0 ? -1 : failures;
}

/* ---- refining each cell's knee between its grid rates ---------------------------------- */
/* After the confirmation, each runtime-route whose highest controlled rate has a next grid
 * rate is bisected between the two until the bracket is within --refine's resolution, the
 * bracket's ends confirmed as the boundary was (runner/run/refine.h; docs/protocol.md,
 * "Refined knees"). A round takes each cell's next point, runtime by runtime, so that a
 * fixture starts once a round; RUN/refine.json says each cell's state, written before the
 * round's points run (they are listed there) and after the last. */
#define REFINE_ROUNDS 24

struct refine {
    json_t *cells;                      /* refine.json's cells, as of this round */
    struct kb_point pts[256];
    size_t n;
};

/* This round: every cell's state, and the point each one wants next. -1 when the rows
 * cannot be read. */
static int refine_plan(struct curve *cv, struct refine *rf, char *err, size_t errlen)
{
    struct kb_report rep;
    struct kb_boundary b[256];
    struct kb_knee_opts o = { .factor = 2, .resolution = cv->refine / 100,
                              .confirm = cv->plan.confirm_samples,
                              .crit = kb_criteria_of(&cv->r.c) };
    static struct kb_refine_state st;
    size_t nb;
    rf->n = 0;
    json_decref(rf->cells);
    rf->cells = json_array();
    if (kb_report_load(cv->r.dir, &rep, err, errlen) < 0)
        return -1;
    nb = kb_report_boundaries(&rep, b, sizeof(b) / sizeof(b[0]));
    for (size_t i = 0; i < nb && rf->n < sizeof(rf->pts) / sizeof(rf->pts[0]); i++) {
        struct kb_refine_cell c = { b[i].runtime, b[i].route, b[i].held.rps, b[i].next.rps };
        struct kb_point *pt = &rf->pts[rf->n];
        size_t rt, ro;
        if (!c.grid_lo || !c.grid_hi || strcmp(b[i].held.verdict, "controlled"))
            continue;                   /* nothing held, or held up to the grid's top */
        kb_refine_decide(cv->r.dir, &c, &o, &st);
        json_array_append_new(rf->cells, kb_refine_cell_json(&c, &st));
        if (st.next.step != KB_KNEE_MEASURE || st.at_grid)
            continue;
        memset(pt, 0, sizeof(*pt));
        pt->repeat = 1;
        pt->runtime = plan_name(&cv->plan.runtimes, c.runtime, &rt);
        pt->route = plan_name(&cv->plan.routes, c.route, &ro);
        pt->rate = st.next.rate;
        if (!pt->runtime || !pt->route)
            continue;
        kb_refine_next_id(cv->r.dir, &c, pt->rate, pt->id, sizeof(pt->id));
        json_object_set_new(json_array_get(rf->cells, json_array_size(rf->cells) - 1), "next",
                            json_string(pt->id));
        pt->index = (rt << 24) | rf->n++;
    }
    kb_report_free(&rep);
    qsort(rf->pts, rf->n, sizeof(rf->pts[0]), by_key);
    for (size_t i = 0; i < rf->n; i++)
        rf->pts[i].index = i;
    return rf->n > 0;
}

static int write_refine(struct curve *cv, const struct refine *rf, char *err, size_t errlen)
{
    char path[4200];
    json_t *doc = json_pack("{s:i,s:f,s:i,s:O}", "schema_version", 1, "resolution",
                            cv->refine / 100, "confirm_samples", cv->plan.confirm_samples,
                            "cells", rf->cells);
    int rc = kb_run_evidence_json(kb_path(path, sizeof(path), cv->r.dir, "refine.json"), doc,
                                  err, errlen);
    json_decref(doc);
    return rc;
}

/* The refinement rounds; the count of points that could not be run, or -1 when the rows
 * could not be read or refine.json written (said on stderr). */
static int refine_all(struct curve *cv)
{
    struct refine *rf = calloc(1, sizeof(*rf));
    char err[1024];
    int failures = 0, rc = 0;
    if (!rf)
        return -1;
    cv->confirming = "refine ";
    for (int round = 0; round < REFINE_ROUNDS && !kb_run_interrupted(); round++) {
        rc = refine_plan(cv, rf, err, sizeof(err));
        if (rc >= 0 && write_refine(cv, rf, err, sizeof(err)) < 0)
            rc = -1;
        if (rc <= 0)
            break;
        printf("kneebench curve: refining the knees, round %d: %zu point(s)\n", round + 1,
               rf->n);
        fflush(stdout);
        failures += run_points(cv, rf->pts, rf->n);
    }
    cv->confirming = NULL;
    if (rc < 0)
        fprintf(stderr, "kneebench curve: cannot refine the knees: %s\n", err);
    json_decref(rf->cells);
    free(rf);
    return rc < 0 ? -1 : failures;
}

/* ---- raw request events, kept where they decide --------------------------------------- */
/* Every point records its measured requests while it runs (requests.log, bounded), because which points will decide the answer is
 * known only once the run is complete: each runtime-route's final boundary, its highest
 * controlled rate and the next (report_confirm.c). The bound is KB_SRV_REQUESTS_LOG_MAX. With knee, the logs of every sample at
 * those two rates (the matrix's repeats and the confirmation samples) are kept and the rest
 * removed; RUN/requests-logs.json says which, with their sizes (docs/protocol.md, "Raw
 * request events"). */

/* {id: true} for every sample at a boundary rate, as the report's rows aggregate them; NULL
 * with err when the run cannot be read. */
static json_t *boundary_points(const struct curve *cv, char *err, size_t errlen)
{
    struct kb_report rep;
    struct kb_boundary b[256];
    json_t *ids = json_object(), *id;
    size_t nb, k;
    if (kb_report_load(cv->r.dir, &rep, err, errlen) < 0) {
        json_decref(ids);
        return NULL;
    }
    nb = kb_report_boundaries(&rep, b, sizeof(b) / sizeof(b[0]));
    for (size_t i = 0; i < nb; i++) {
        long rates[2] = { b[i].held.rps, b[i].next.rps };
        for (size_t j = 0; j < 2; j++) {
            const struct kb_report_row *w = rates[j]
                ? kb_report_row(&rep, b[i].runtime, b[i].route, rates[j]) : NULL;
            json_array_foreach(w ? w->point_ids : NULL, k, id)
                json_object_set_new(ids, json_string_value(id), json_true());
        }
    }
    kb_report_free(&rep);
    return ids;
}

/* One point's requests.log kept (into kept) or removed (into removed); its size either way. */
static void settle_one_log(const char *dir, const char *id, int keep, json_t *kept,
                           json_t *removed, long long *bytes)
{
    char path[4400];
    struct stat st;
    snprintf(path, sizeof(path), "%s/points/%s/requests.log", dir, id);
    if (stat(path, &st) < 0)
        return;
    if (!keep && unlink(path) == 0) {
        json_array_append_new(removed, json_pack("{s:s,s:I}", "point", id,
                                                 "bytes", (json_int_t)st.st_size));
        return;
    }
    json_array_append_new(kept, json_pack("{s:s,s:I}", "point", id, "bytes",
                                          (json_int_t)st.st_size));
    bytes[0] += st.st_size;
}

/* What an earlier pass removed and is still gone: a resumed run's record stays whole. */
static void removed_before(const char *dir, json_t *removed)
{
    char path[4400];
    size_t i;
    json_t *old = json_load_file(kb_path(path, sizeof(path), dir, "requests-logs.json"), 0,
                                 NULL), *e;
    json_array_foreach(json_object_get(old, "removed"), i, e) {
        snprintf(path, sizeof(path), "%s/points/%s/requests.log", dir,
                 kb_jstr(e, "point", ""));
        if (kb_jstr(e, "point", "")[0] && !kb_file_exists(path))
            json_array_append(removed, e);
    }
    json_decref(old);
}

/* The complete run's logs settled by its mode and requests-logs.json written. -1 said on
 * stderr when the boundaries could not be read or the record written. */
static int settle_requests_logs(struct curve *cv)
{
    char err[1024], pdir[4200], path[4300];
    json_t *keep = cv->requests_log == RL_KNEE ? boundary_points(cv, err, sizeof(err))
                                               : json_object();
    json_t *kept = json_array(), *removed = json_array(), *doc;
    long long bytes = 0;
    struct dirent *e;
    DIR *d;
    int rc = -1;
    if (keep && (d = opendir(kb_path(pdir, sizeof(pdir), cv->r.dir, "points")))) {
        removed_before(cv->r.dir, removed);
        while ((e = readdir(d)))
            if (e->d_name[0] != '.')
                settle_one_log(cv->r.dir, e->d_name, cv->requests_log == RL_ALL ||
                               json_object_get(keep, e->d_name), kept, removed, &bytes);
        closedir(d);
        doc = json_pack("{s:i,s:s,s:s,s:I,s:I,s:o,s:o}", "schema_version", 1, "mode",
                        cv->requests_log == RL_ALL ? "all" : "knee", "file", "requests.log",
                        "records_max_per_point", (json_int_t)KB_SRV_REQUESTS_LOG_MAX,
                        "bytes_kept", (json_int_t)bytes, "kept", kept, "removed", removed);
        rc = kb_run_evidence_json(kb_path(path, sizeof(path), cv->r.dir, "requests-logs.json"),
                                  doc, err, sizeof(err));
        json_decref(doc);
        kept = removed = NULL;
    } else if (keep) {
        snprintf(err, sizeof(err), "%.900s: %s", pdir, strerror(errno));
    }
    if (rc < 0)
        fprintf(stderr, "kneebench curve: requests logs: %s\n", err);
    json_decref(keep);
    json_decref(kept);
    json_decref(removed);
    return rc;
}

int cmd_curve(int argc, char **argv)
{
    struct curve cv;
    struct args a;
    char err[1024], path[4200], where[600];
    double t0 = kb_srv_now_s();
    int rc = parse_args(argc, argv, &a), failures;
    if (rc)
        return rc == 1 ? 0 : rc;
    memset(&cv, 0, sizeof(cv));
    kb_run_signals();
    if (setup(&cv, &a, err, sizeof(err)) < 0 || write_or_check_plan(&cv, err, sizeof(err)) < 0 ||
        write_run_identity(&cv, argc, argv, err, sizeof(err)) < 0) {
        fprintf(stderr, "kneebench curve: %s\n", err);
        cleanup(&cv);
        return 2;
    }
    /* what a runner killed with -9 left (the cgroups of any run; the unconstrained
     * fixtures this run directory recorded) would hold the ports and the server CPUs */
    kb_run_sweep(&cv.r, kb_path(path, sizeof(path), cv.r.dir, "fixtures"));
    if (a.calibrate && calibrate_gate(&cv, &a, err, sizeof(err)) < 0) {
        fprintf(stderr, "kneebench curve: %s\n", err);
        cleanup(&cv);
        return 2;
    }
    kb_sandbox_describe(cv.r.fx.sandbox, where, sizeof(where));
    printf("kneebench curve: %zu points into %s (profile %s, backend %s%s%s, server CPUs %s, "
           "client CPUs %s)\n", cv.plan.npoints, cv.r.dir, cv.plan.profile, cv.r.backend, where,
           cv.r.fx.no_limits ? ", UNCONSTRAINED" : "", cv.r.fx.server_cpus, cv.r.fx.client_cpus);
    fflush(stdout);
    failures = run_points(&cv, cv.plan.points, cv.plan.npoints);
    if (!kb_run_interrupted() && cv.plan.confirm_samples > 1) {
        int cf = confirm_all(&cv);
        failures += cf < 0 ? 1 : cf;
    }
    if (!kb_run_interrupted() && cv.refine > 0) {
        int rf = refine_all(&cv);
        failures += rf < 0 ? 1 : rf;
    }
    /* only a complete run knows its final boundaries; a resumed one settles them later */
    if (!kb_run_interrupted() && !failures && !cv.r.incomplete && cv.requests_log != RL_NONE)
        failures += settle_requests_logs(&cv) < 0;
    cleanup(&cv);
    if (kb_run_interrupted()) {
        fprintf(stderr, "kneebench curve: interrupted; complete points are kept, re-run to "
                "resume\n");
        return 130;
    }
    kb_run_say_incomplete(&cv.r, "point");
    printf("kneebench curve: done in %.0f s\n", kb_srv_now_s() - t0);
    return failures ? 1 : 0;
}
