/* cmd_curve.c -- `kneebench curve`: its options parsed into struct kb_curve_opts, then the
 * method (runner/run/curve/curve.h): the matrix and the rounds after it (runner/run/curve/curve_rounds.h). The exit status says whether every point's evidence is complete. */
#define _GNU_SOURCE
#include "runner/cli/commands.h"
#include "runner/run/curve/curve_rounds.h"
#include "runner/run/curve/curve.h"
#include "runner/run/fixture.h"
#include "runner/run/cell.h"
#include "runner/sandbox/sandbox.h"
#include "runner/util/opts.h"
#include "runner/cli/refuse.h"

#include <getopt.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

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
        "                          (durations: 30, 30s, 500ms, 2m; rates: 4000, 4k, 1.5k)\n"
        "  --db-mode M             the /db designs the db route's points run: readiness,\n"
        "                          blocking (gray-static-blocking) or both (default: the\n"
        "                          runtimes picked: readiness, both with db-baseline)\n"
        "  --requests-log M        knee (default): record every point's requests (bounded,\n"
        "                          requests.log), keep them at each runtime-route's final\n"
        "                          boundary only (its highest controlled rate and the next);\n"
        "                          all: keep every point's; none: record nothing\n"
        "  --order interleaved|sequential  interleaved (the default): rate by rate, every\n"
        "                          runtime's fixture up at once and the runtimes measured side\n"
        "                          by side at each rate in a rotating order, with the host's\n"
        "                          floor (kb-control) measured beside them; sequential: runtime\n"
        "                          by runtime (the db route's default)\n"
        "  --dispatch any|per-connection  as `kneebench load --dispatch`: per-connection\n"
        "                          gives each connection its share of the schedule (wrk2's)\n"
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
        "  --hold D                with --refine, the located held end must also hold one\n"
        "                          point this long after the paper profile's warmup (default\n"
        "                          the paper profile's 30 s; 0: none); one that does not moves\n"
        "                          the bracket down\n"
        "  --backend native|docker  sandbox backend (default native)\n"
        "  --docker-host URL       docker: the engine to run the fixtures on, as DOCKER_HOST\n"
        "                          takes it (ssh://user@host for another host's; default: your\n"
        "                          DOCKER_HOST, else your current docker context)\n"
        "  --docker-context NAME   docker: the engine of that docker context instead\n"
        "  --target IPV4           docker on another host: the address the load goes to and\n"
        "                          the fixture binds there (default: the engine's host)\n"
        "  --image IMG             the docker backend's image (default $KB_DOCKER_IMAGE, else\n"
        "                          kneebench:latest)\n"
        "  --no-limits             run without cgroups; every point is marked unconstrained\n"
        "  --server-cpus LIST --client-cpus LIST   placement (default: the contract's)\n"
        "  --controller-cpus LIST  the runner itself (samplers, preflights, readiness waits)\n"
        "                          pinned there, never on a server CPU (default: the client\n"
        "                          CPUs); run.json records the kernel's read-back\n"
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
        "  --force                 with --calibrate: run anyway; a point that misses while\n"
        "                          carrying more than the margin covers is client-limited\n"
        "Re-running into the same DIR keeps complete points and redoes the rest.\n"
        "exit: 0 every point complete, whatever its verdict; 1 some point left without\n"
        "      complete evidence (re-run to redo it); 2 bad options, or the run could not\n"
        "      start (setup, calibration refused); 130 interrupted, complete points kept.\n");
    return f == stdout ? 0 : 2;
}

enum { O_PROFILE = 256, O_RUNTIMES, O_ROUTES, O_RATES, O_DURATION, O_WARMUP, O_DRAIN,
       O_THREADS, O_CONNS, O_REPEATS, O_BACKEND, O_NOLIMITS, O_SCPUS, O_CCPUS, O_FREE,
       O_BUILD, O_LOADCMD, O_CONTRACT, O_RUN, O_IMAGE, O_CSCHED, O_CALIBRATE, O_FORCE, O_DHOST, O_TARGET,
       O_DBCPUS, O_CONFIRM, O_DBMODE, O_REQLOG, O_REFINE, O_DCONTEXT, O_ORDER, O_DISPATCH,
       O_HOLD, O_CTLCPUS };

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
    { "client-sched", 1, 0, O_CSCHED }, { "docker-host", 1, 0, O_DHOST },
    { "target", 1, 0, O_TARGET },
    { "db-cpus", 1, 0, O_DBCPUS }, { "confirm", 1, 0, O_CONFIRM },
    { "db-mode", 1, 0, O_DBMODE }, { "requests-log", 1, 0, O_REQLOG },
    { "refine", 2, 0, O_REFINE }, { "docker-context", 1, 0, O_DCONTEXT },
    { "order", 1, 0, O_ORDER }, { "dispatch", 1, 0, O_DISPATCH }, { "hold", 1, 0, O_HOLD },
    { "controller-cpus", 1, 0, O_CTLCPUS },
    { "help", 0, 0, 'h' },
    { 0, 0, 0, 0 },
};

/* Numbers, read through runner/util/opts.h against the load generator's own bounds (kneebench
 * load's), so a curve never plans a point its load child would refuse; a value outside would
 * otherwise fall back to the profile's in silence. 0, or 2 said on stderr. */
static int number_opt(int o, struct kb_curve_opts *a)
{
    static const struct kb_bound confirm = { 1, KB_CONFIRM_MAX, 0, 0 },
                                 refine = { 0.1, 100, 0, 0 }, hold = { 0, 3600, 0, 0 };
    struct kb_plan_opts *p = &a->plan;
    const char *v = optarg;
    char e[320];
    size_t n = sizeof(e);
    int rc;
    switch (o) {
    case O_DURATION:
        rc = kb_opt_duration("--duration", v, KB_BOUND(DURATION), &p->duration_s, e, n);
        break;
    case O_WARMUP: rc = kb_opt_duration("--warmup", v, KB_BOUND(WARMUP), &p->warmup_s, e, n); break;
    case O_DRAIN: rc = kb_opt_duration("--drain", v, KB_BOUND(DRAIN), &p->drain_s, e, n); break;
    case O_THREADS: rc = kb_opt_int("--threads", v, KB_BOUND(THREADS), &p->threads, e, n); break;
    case O_CONNS:
        rc = kb_opt_int("--connections", v, KB_BOUND(CONNECTIONS), &p->connections, e, n);
        break;
    case O_CONFIRM: rc = kb_opt_int("--confirm", v, &confirm, &p->confirm, e, n); break;
    case O_REPEATS: rc = kb_opt_int("--repeats", v, KB_BOUND(REPEATS), &p->repeats, e, n); break;
    case O_HOLD: rc = kb_opt_duration("--hold", v, &hold, &a->hold, e, n); break;
    case O_RATES:
        rc = kb_opt_rates("--rates", v, KB_BOUND(PLAN_RATE), &a->rates, e, n);
        p->rates = &a->rates;
        break;
    default:    /* --refine: 5 % unless it says */
        a->refine = 5;
        rc = v ? kb_opt_percent("--refine", v, &refine, &a->refine, e, n) : 0;
    }
    if (rc)
        fprintf(stderr, "kneebench curve: %s\n", e);
    return rc ? 2 : 0;
}

static int reqlog_mode(const char *s)
{
    if (!strcmp(s, "knee"))
        return KB_RL_KNEE;
    if (!strcmp(s, "all"))
        return KB_RL_ALL;
    if (!strcmp(s, "none"))
        return KB_RL_NONE;
    fprintf(stderr, "kneebench curve: --requests-log is knee, all or none, not '%s'\n", s);
    return -1;
}

static int parse_args(int argc, char **argv, struct kb_curve_opts *a)
{
    char err[512];
    int o;
    memset(a, 0, sizeof(*a));
    a->plan.duration_s = a->plan.warmup_s = a->plan.drain_s = a->hold = -1;
    a->backend = "native";
    optind = 1;
    while ((o = getopt_long(argc, argv, "h", long_opts, NULL)) != -1) {
        switch (o) {
        case O_PROFILE: a->plan.profile = optarg; break;
        case O_RUNTIMES: a->plan.runtimes = optarg; break;
        case O_ROUTES: a->plan.routes = optarg; break;
        case O_RATES: case O_DURATION: case O_WARMUP: case O_DRAIN: case O_THREADS:
        case O_CONNS: case O_REPEATS: case O_CONFIRM: case O_REFINE: case O_HOLD:
            if (number_opt(o, a))
                return 2;
            break;
        case O_BACKEND: a->backend = optarg; break;
        case O_NOLIMITS: a->no_limits = 1; break;
        case O_SCPUS: a->scpus = optarg; break;
        case O_CCPUS: a->ccpus = optarg; break;
        case O_CTLCPUS:
            if (kb_opt_cpulist("--controller-cpus", optarg, err, sizeof(err)) < 0) {
                fprintf(stderr, "kneebench curve: %s\n", err);
                return 2;
            }
            a->ctlcpus = optarg;
            break;
        case O_DBCPUS: a->db_cpus = optarg; break;
        case O_DBMODE: a->plan.db_mode = optarg; break;   /* checked by the plan */
        case O_ORDER: a->plan.order = optarg; break;      /* checked by the plan */
        case O_DISPATCH:
            if (kb_opt_dispatch(optarg, &a->per_connection)) {
                fprintf(stderr, "kneebench curve: --dispatch is any or per-connection, not "
                        "'%s'\n", optarg);
                return 2;
            }
            break;
        case O_REQLOG:
            if ((a->requests_log = reqlog_mode(optarg)) < 0)
                return 2;
            break;
        case O_FREE: a->free_ports = 1; break;
        case O_BUILD: a->build = optarg; break;
        case O_LOADCMD: a->load_cmd = optarg; break;
        case O_CONTRACT: a->contract = optarg; break;
        case O_RUN: a->run = optarg; break;
        case O_CALIBRATE: a->calibrate = 1; break;
        case O_FORCE: a->force = 1; break;
        case O_IMAGE: a->image = optarg; break;
        case O_DHOST: a->docker_host = optarg; break;
        case O_TARGET: a->target = optarg; break;
        case O_DCONTEXT: a->docker_context = optarg; break;
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
    if (kb_refuse_engine_opts("curve", a->backend, a->docker_host, a->docker_context,
                              a->target))
        return 2;
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

int cmd_curve(int argc, char **argv)
{
    struct kb_curve cv;
    struct kb_curve_opts a;
    char err[1024], where[600];
    double t0 = kb_fixture_now_s();
    int rc = parse_args(argc, argv, &a), failures;
    if (rc)
        return rc == 1 ? 0 : rc;
    kb_run_signals();
    if (kb_curve_open(&cv, &a, argc, argv, err, sizeof(err)) < 0) {
        fprintf(stderr, "kneebench curve: %s\n", err);
        kb_curve_close(&cv);
        return 2;
    }
    kb_sandbox_describe(cv.r.fx.sandbox, where, sizeof(where));
    printf("kneebench curve: %zu points into %s (profile %s, backend %s%s%s, server CPUs %s, "
           "client CPUs %s)\n", cv.plan.npoints, cv.r.dir, cv.plan.profile, cv.r.backend, where,
           cv.r.fx.no_limits ? ", UNCONSTRAINED" : "", cv.r.fx.server_cpus, cv.r.fx.client_cpus);
    fflush(stdout);
    failures = kb_curve_all_rounds(&cv);
    kb_curve_close(&cv);
    if (kb_run_interrupted()) {
        fprintf(stderr, "kneebench curve: interrupted; complete points are kept, re-run to "
                "resume\n");
        return 130;
    }
    kb_run_say_incomplete(&cv.r, "point");
    printf("kneebench curve: done in %.0f s\n", kb_fixture_now_s() - t0);
    return failures ? 1 : 0;
}
