/* cmd_knee.c -- `kneebench knee URL`: the knee of an HTTP server the user runs, located to
 * a stated resolution (docs/knee.md). Validates every argument, probes the target, keeps
 * the client off the server's CPUs, and hands the search to runner/run/kneerun.c and the
 * report to runner/report/knee_report.c. The first line on stdout is the answer.
 * Exit 0 located; 1 the search ended on a bound (--max-rate, --min-rate, the client's
 * reach, --max-time), was interrupted, or could not keep its evidence; 2 bad arguments
 * (nothing sent); 3 the target is unreachable. */
#define _GNU_SOURCE
#include "runner/cli/commands.h"

#include <errno.h>
#include <getopt.h>
#include <math.h>
#include <sched.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <time.h>
#include <unistd.h>

#include "fixtures/contract.h"
#include "runner/load/loadgen.h"
#include "runner/load/target.h"
#include "runner/report/knee_report.h"
#include "runner/report/report.h"
#include "runner/run/kneerun.h"
#include "runner/run/run.h"
#include "runner/util/cpulist.h"
#include "runner/util/digest.h"
#include "runner/util/evidence.h"
#include "runner/util/root.h"
#include "runner/util/units.h"

struct knee_args {
    struct kb_target_spec spec;
    const char *run, *contract, *cpus, *cgroup;
    long pid;
    double start, min, max, factor, resolution, max_time, p99_ms, delivery;
    double duration, warmup, drain, timeout;
    long confirm, threads, connections, quantum_us;
    int allow_remote, no_rt, quiet;
};

static void usage(FILE *f)
{
    fprintf(f,
        "usage: kneebench knee [options] URL      (or --url URL)\n"
        "       kneebench knee --pid $(pidof myserver) --cpus 1 http://127.0.0.1:8080/hello\n"
        "  Finds the highest rate a server you run holds with a bounded tail, to a stated\n"
        "  resolution: open-loop samples rising by --factor from --start-rate until one is\n"
        "  not held, then the bracket halved until within --resolution, its two ends\n"
        "  confirmed by repeats. Only for servers you own: it drives the target past its\n"
        "  limit. Loopback only, unless --allow-remote.\n"
        "  -H, --header 'N: V'      a request header, repeatable\n"
        "      --route NAME         check responses against this contract route (default:\n"
        "                           the route whose path is the URL's, if any)\n"
        "      --expect-status S --expect-body FILE --expect-header 'N: V'\n"
        "                           else a right response is these (default: any 2xx)\n"
        "      --pid PID            the server's process (and its descendants): CPU, RSS,\n"
        "                           descriptors sampled, CPU per response reported\n"
        "      --cgroup DIR         or the members of this cgroup v2 directory\n"
        "      --cpus LIST          the client's CPUs (default: those the server's affinity\n"
        "                           leaves free, else all)\n"
        "      --run DIR            the run directory (default runs/knee-<UTC time>); an\n"
        "                           existing one of the same search resumes\n"
        "      --resolution PCT     the bracket's width, hi/lo - 1, in percent (5)\n"
        "      --start-rate R       the first rate (1k); --factor F the rise (2)\n"
        "      --min-rate R --max-rate R   bounds (start / 100, 1M)\n"
        "      --max-time D         stop before a sample would pass this (10m)\n"
        "      --confirm N          samples of each bracket end (the quick profile's, 3)\n"
        "      --max-p99-ms N --min-delivery F   the criterion (the contract's)\n"
        "      --duration D --warmup D --drain D   each sample (the quick profile's)\n"
        "  -t, --threads N  -c, --connections N  -T, --timeout D   the client (the contract's)\n"
        "      --no-rt              load threads not SCHED_FIFO\n"
        "      --allow-remote       load a target outside 127.0.0.0/8 (a server you own)\n"
        "      --contract FILE      --quiet (no progress lines on stderr)\n"
        "exit: 0 located; 1 ended on a bound (--max-rate, --min-rate, the client's reach,\n"
        "      --max-time), interrupted (run again to resume) or its evidence not kept;\n"
        "      2 bad arguments (nothing sent); 3 the target is unreachable.\n");
}

static int bad(const char *fmt, const char *a)
{
    fprintf(stderr, "kneebench knee: ");
    fprintf(stderr, fmt, a);
    fprintf(stderr, " (kneebench knee --help)\n");
    return 2;
}

static int whole(const char *s, long lo, long hi, long *out)
{
    char *end;
    errno = 0;
    *out = strtol(s, &end, 10);
    return errno || end == s || *end || *out < lo || *out > hi ? -1 : 0;
}

static int positive(const char *s, double lo, double hi, double *out)
{
    char *end;
    errno = 0;
    *out = strtod(s, &end);
    if (end > s && *end == '%')
        end++;
    return errno || end == s || *end || !isfinite(*out) || *out < lo || *out > hi ? -1 : 0;
}

enum { O_URL = 256, O_ROUTE, O_ES, O_EB, O_EH, O_PID, O_CGROUP, O_CPUS, O_RUN, O_RES, O_START,
       O_FACTOR, O_MIN, O_MAX, O_MAXTIME, O_CONFIRM, O_P99, O_DEL, O_DUR, O_WARM, O_DRAIN,
       O_NORT, O_REMOTE, O_CONTRACT, O_QUIET };

/* Options with a number. 0, or bad()'s 2. */
static int number_opt(int o, const char *v, struct knee_args *a)
{
    switch (o) {
    case O_PID: return whole(v, 1, 4194304, &a->pid) ? bad("--pid must be a process ID, not '%s'", v) : 0;
    case O_RES: return positive(v, 0.1, 100, &a->resolution) ? bad("--resolution must be a percentage in [0.1, 100], not '%s'", v) : 0;
    case O_START: return kb_parse_rate(v, 1, 1e7, &a->start) ? bad("--start-rate must be a rate in [1, 10M], not '%s'", v) : 0;
    case O_MIN: return kb_parse_rate(v, 1, 1e7, &a->min) ? bad("--min-rate must be a rate in [1, 10M], not '%s'", v) : 0;
    case O_MAX: return kb_parse_rate(v, 1, 1e7, &a->max) ? bad("--max-rate must be a rate in [1, 10M], not '%s'", v) : 0;
    case O_FACTOR: return positive(v, 1.05, 10, &a->factor) ? bad("--factor must be in [1.05, 10], not '%s'", v) : 0;
    case O_MAXTIME: return kb_parse_duration(v, 1, 86400, &a->max_time) ? bad("--max-time must be a duration in [1s, 24h], not '%s'", v) : 0;
    case O_CONFIRM: return whole(v, 1, KB_CONFIRM_MAX, &a->confirm) ? bad("--confirm must be 1..9, not '%s'", v) : 0;
    case O_P99: return positive(v, 0.001, 3600000, &a->p99_ms) ? bad("--max-p99-ms must be a positive number of ms, not '%s'", v) : 0;
    case O_DEL: return positive(v, 1e-6, 1, &a->delivery) ? bad("--min-delivery must be a fraction in (0, 1], not '%s'", v) : 0;
    case O_DUR: return kb_parse_duration(v, 0.1, 3600, &a->duration) ? bad("--duration must be a duration in [100ms, 1h], not '%s'", v) : 0;
    case O_WARM: return kb_parse_duration(v, 0, 600, &a->warmup) ? bad("--warmup must be a duration in [0, 10m], not '%s'", v) : 0;
    case O_DRAIN: return kb_parse_duration(v, 0, 600, &a->drain) ? bad("--drain must be a duration in [0, 10m], not '%s'", v) : 0;
    case 'T': return kb_parse_duration(v, 1e-3, 3600, &a->timeout) ? bad("-T/--timeout must be a duration in [1ms, 1h], not '%s'", v) : 0;
    case 't': return whole(v, 1, 256, &a->threads) ? bad("-t/--threads must be 1..256, not '%s'", v) : 0;
    default: return whole(v, 1, 60000, &a->connections) ? bad("-c/--connections must be 1..60000, not '%s'", v) : 0;
    }
}

/* Options with text, and flags. 0, or bad()'s 2. */
static int text_opt(int o, const char *v, struct knee_args *a)
{
    switch (o) {
    case O_URL: a->spec.url = v; return 0;
    case O_ROUTE: a->spec.route = v; return 0;
    case O_ES: a->spec.expect_status = v; return 0;
    case O_EB: a->spec.expect_body_file = v; return 0;
    case O_EH: a->spec.expect_header = v; return 0;
    case 'H':
        if (a->spec.nheaders == KB_TARGET_HEADERS_MAX)
            return bad("at most 32 -H/--header, not more ('%s')", v);
        a->spec.headers[a->spec.nheaders++] = v;
        return 0;
    case O_CGROUP: a->cgroup = v; return 0;
    case O_CPUS: a->cpus = v; return 0;
    case O_RUN: a->run = v; return 0;
    case O_CONTRACT: a->contract = v; return 0;
    case O_NORT: a->no_rt = 1; return 0;
    case O_REMOTE: a->allow_remote = 1; return 0;
    case O_QUIET: a->quiet = 1; return 0;
    default: return bad("unknown or incomplete option '%s'", v ? v : "?");
    }
}

static int parse_args(int argc, char **argv, struct knee_args *a)
{
    static const struct option opts[] = {
        { "url", 1, 0, O_URL }, { "route", 1, 0, O_ROUTE }, { "header", 1, 0, 'H' },
        { "expect-status", 1, 0, O_ES }, { "expect-body", 1, 0, O_EB },
        { "expect-header", 1, 0, O_EH }, { "pid", 1, 0, O_PID }, { "cgroup", 1, 0, O_CGROUP },
        { "cpus", 1, 0, O_CPUS }, { "run", 1, 0, O_RUN }, { "resolution", 1, 0, O_RES },
        { "start-rate", 1, 0, O_START }, { "factor", 1, 0, O_FACTOR }, { "min-rate", 1, 0, O_MIN },
        { "max-rate", 1, 0, O_MAX }, { "max-time", 1, 0, O_MAXTIME },
        { "confirm", 1, 0, O_CONFIRM }, { "max-p99-ms", 1, 0, O_P99 },
        { "min-delivery", 1, 0, O_DEL }, { "duration", 1, 0, O_DUR }, { "warmup", 1, 0, O_WARM },
        { "drain", 1, 0, O_DRAIN }, { "threads", 1, 0, 't' }, { "connections", 1, 0, 'c' },
        { "timeout", 1, 0, 'T' }, { "no-rt", 0, 0, O_NORT }, { "allow-remote", 0, 0, O_REMOTE },
        { "contract", 1, 0, O_CONTRACT }, { "quiet", 0, 0, O_QUIET }, { "help", 0, 0, 'h' },
        { 0, 0, 0, 0 }
    };
    int o, rc;
    optind = 1;
    opterr = 0;
    while ((o = getopt_long(argc, argv, "H:t:c:T:h", opts, NULL)) != -1) {
        if (o == 'h') {
            usage(stdout);
            return 1;
        }
        if (o == '?' || o == ':')
            return bad("unknown or incomplete option '%s'", argv[optind - 1]);
        rc = (o >= O_PID && o <= O_DRAIN && o != O_CGROUP && o != O_CPUS && o != O_RUN) ||
             o == 't' || o == 'c' || o == 'T' ? number_opt(o, optarg, a) : text_opt(o, optarg, a);
        if (rc)
            return rc;
    }
    if (optind < argc && a->spec.url)
        return bad("the URL is given twice ('%s' and --url)", argv[optind]);
    if (optind < argc)
        a->spec.url = argv[optind++];
    if (optind < argc)
        return bad("unexpected argument '%s'", argv[optind]);
    if (!a->spec.url)
        return bad("%s", "a URL is required (kneebench knee [options] URL)");
    if (a->pid && a->cgroup)
        return bad("%s", "--pid and --cgroup name the server twice: give one");
    return 0;
}

/* Defaults from the contract and the quick profile, then every combination checked. */
static int settle_args(struct knee_args *a, const struct kb_contract *ct)
{
    const struct kb_profile *q = kb_contract_profile(ct, "quick");
    if (!a->start)
        a->start = 1000;
    if (!a->max)
        a->max = 1e6;
    if (!a->min)
        a->min = fmax(1, floor(a->start / 100));
    if (!a->factor)
        a->factor = 2;
    if (!a->resolution)
        a->resolution = 5;
    if (!a->max_time)
        a->max_time = 600;
    if (!a->confirm)
        a->confirm = q && q->confirm_samples ? q->confirm_samples : 3;
    if (!a->duration)
        a->duration = q ? q->duration_s : 3;
    if (a->warmup < 0)
        a->warmup = q ? q->warmup_s : 1;
    if (a->drain < 0)
        a->drain = q ? q->drain_s : 1;
    if (!a->threads)
        a->threads = ct->threads;
    if (!a->connections)
        a->connections = ct->connections;
    if (!a->timeout)
        a->timeout = 10;
    a->quantum_us = ct->send_quantum_us;
    if (a->min > a->start || a->start > a->max)
        return bad("%s", "the rates must keep --min-rate <= --start-rate <= --max-rate");
    if (a->threads > a->connections)
        return bad("%s", "--connections must be at least --threads");
    if (a->pid && kill((pid_t)a->pid, 0) && errno == ESRCH) {
        char pid[32];
        snprintf(pid, sizeof(pid), "%ld", a->pid);
        return bad("--pid %s: no such process", pid);
    }
    if (a->cgroup) {
        char procs[4300];
        if (!kb_file_exists(kb_path(procs, sizeof(procs), a->cgroup, "cgroup.procs")))
            return bad("--cgroup %s is not a cgroup v2 directory (no cgroup.procs)", a->cgroup);
    }
    return 0;
}

/* The client's CPUs: --cpus; else those the server's affinity leaves free; else all this
 * process may use. The process is kept on them, so that nothing of the client -- the load
 * threads, the sampler, this thread -- takes the server's CPU. */
static int client_cpus(const struct knee_args *a, const char *server, cpu_set_t *set,
                       char *list, size_t len)
{
    cpu_set_t allowed, srv;
    char err[256];
    sched_getaffinity(0, sizeof(allowed), &allowed);
    *set = allowed;
    if (a->cpus) {
        if (kb_cpulist_parse_allowed(a->cpus, set, err, sizeof(err)) < 0)
            return bad("--cpus: %s", err);
    } else if (server[0] && kb_cpulist_parse_raw(server, &srv, err, sizeof(err)) > 0) {
        cpu_set_t rest;
        CPU_XOR(&rest, &allowed, &srv);
        CPU_AND(&rest, &rest, &allowed);
        if (CPU_COUNT(&rest) > 0)
            *set = rest;
    }
    kb_cpulist_format(set, list, len);
    if (sched_setaffinity(0, sizeof(*set), set))
        return bad("cannot keep the client on CPUs %s", list);
    return 0;
}

/* plan.json: what must match for a re-run to resume this search. */
static json_t *plan_json(const struct knee_args *a, const struct kb_target *t,
                         const struct kb_criteria *c)
{
    json_t *h = json_array();
    for (int i = 0; i < a->spec.nheaders; i++)
        json_array_append_new(h, json_string(a->spec.headers[i]));
    return json_pack("{s:s,s:s,s:o,s:o,s:{s:f,s:I,s:f,s:I,s:I},s:{s:I,s:I,s:I,s:f,s:f,s:i},"
                     "s:{s:f,s:f,s:f,s:i,s:i,s:I,s:I}}",
        "url", a->spec.url, "expect", t->expectation,
        "route", t->route ? json_string(t->route) : json_null(), "headers", h,
        "criteria", "min_delivery", c->min_delivery, "max_p99_us", (json_int_t)c->max_p99_us,
        "client_cpu_max_fraction", c->client_cpu_max_fraction, "client_lag_p99_max_us",
        (json_int_t)c->client_lag_p99_max_us, "client_rx_delay_p99_max_us",
        (json_int_t)c->client_rx_delay_p99_max_us,
        "search", "start_rate", (json_int_t)llround(a->start), "min_rate",
        (json_int_t)llround(a->min), "max_rate", (json_int_t)llround(a->max), "factor",
        a->factor, "resolution", a->resolution / 100, "confirm", (int)a->confirm,
        "point", "warmup_s", a->warmup, "duration_s", a->duration, "drain_s", a->drain,
        "threads", (int)a->threads, "connections", (int)a->connections, "timeout_ms",
        (json_int_t)llround(a->timeout * 1000), "send_quantum_us", (json_int_t)a->quantum_us);
}

/* run.json: this invocation (a resumed one beside the first's). */
static int identity(const char *dir, int argc, char **argv, const struct knee_args *a,
                    const char *server_cpus, const char *client, const struct kb_contract *ct,
                    char *err, size_t errlen)
{
    char hex[KB_SHA256_HEX], chex[KB_SHA256_HEX], when[64], why[128];
    json_t *args = json_array(), *run;
    time_t t = time(NULL);
    int rc;
    for (int i = 0; i < argc; i++)
        json_array_append_new(args, json_string(argv[i]));
    strftime(when, sizeof(when), "%Y-%m-%dT%H:%M:%SZ", gmtime(&t));
    if (kb_sha256_file("/proc/self/exe", hex, why, sizeof(why)) < 0)
        snprintf(hex, sizeof(hex), "unknown");
    if (kb_sha256_file(ct->path, chex, why, sizeof(why)) < 0)
        snprintf(chex, sizeof(chex), "unknown");
    run = json_pack("{s:s,s:s,s:o,s:s,s:s,s:s,s:o,s:{s:o,s:o,s:s},s:{s:s},s:f}", "kind", "knee",
        "started", when, "command_line", args, "runner_sha256", hex, "contract", ct->path,
        "contract_sha256", chex, "host", kb_host_identity(), "server", "pid",
        a->pid ? json_integer(a->pid) : json_null(), "cgroup",
        a->cgroup ? json_string(a->cgroup) : json_null(), "cpus", server_cpus, "client",
        "cpus", client, "max_time_s", a->max_time);
    rc = kb_run_identity_file(dir, run, t, err, errlen);
    json_decref(run);
    return rc;
}

static void progress(void *arg, const struct kb_kneerun_step *st, const struct kb_knee_next *nx)
{
    const struct knee_args *a = arg;
    (void)nx;
    if (a->quiet)
        return;
    fprintf(stderr, "  %7ld req/s  sample %d  %-12s delivery %5.1f %%  p99 %9.2f ms  (%s)%s\n",
            st->s.rate, st->sample, kb_verdict_name(st->s.verdict), st->s.delivery * 100,
            st->s.p99_us / 1000, st->why, st->resumed ? " [kept]" : "");
}

/* The run directory, absolute: --run, or runs/knee-<UTC time> here. */
static int run_dir(const struct knee_args *a, char *dir, size_t len)
{
    char given[256], err[256];
    time_t t = time(NULL);
    if (a->run)
        snprintf(given, sizeof(given), "%s", a->run);
    else
        strftime(given, sizeof(given), "runs/knee-%Y%m%dT%H%M%SZ", gmtime(&t));
    if (kb_abspath(given, dir, len, err, sizeof(err)) || kb_mkdirs(dir, err, sizeof(err)))
        return bad("--run: %s", err);
    return 0;
}

struct knee_ctx {
    struct knee_args a;
    struct kb_contract ct;
    struct kb_target t;
    struct kb_criteria crit;
    cpu_set_t cpus;
    char server_cpus[256], client_list[256], dir[4096];
};

static int search(struct knee_ctx *x, int argc, char **argv)
{
    static struct kb_kneerun k;
    struct kb_knee_doc d;
    char err[1024], line[512];
    int code;
    memset(&k, 0, sizeof(k));
    k.dir = x->dir;
    k.plan = plan_json(&x->a, &x->t, &x->crit);
    k.opts = (struct kb_knee_opts){ llround(x->a.start), llround(x->a.min), llround(x->a.max),
        x->a.factor, x->a.resolution / 100, (int)x->a.confirm, x->crit };
    k.point = (struct kb_kneepoint_cfg){ .url = x->a.spec.url, .target = &x->t, .crit = &x->crit,
        .warmup_s = x->a.warmup, .duration_s = x->a.duration, .drain_s = x->a.drain,
        .threads = (int)x->a.threads, .connections = (int)x->a.connections,
        .timeout_ms = llround(x->a.timeout * 1000), .send_quantum_us = x->a.quantum_us,
        .client_cpus = &x->cpus, .rt = !x->a.no_rt,
        .watch = { .pid = (pid_t)x->a.pid, .cgroup = x->a.cgroup,
                   .server_cpus = x->server_cpus[0] ? x->server_cpus : NULL,
                   .client_cpus = x->client_list, .every_s = 0.25 } };
    k.max_time_s = x->a.max_time;
    k.stopped = kb_run_interrupted;
    k.progress = progress;
    k.arg = &x->a;
    if (kb_kneerun_plan(x->dir, json_incref(k.plan), err, sizeof(err)) ||
        identity(x->dir, argc, argv, &x->a, x->server_cpus, x->client_list, &x->ct, err,
                 sizeof(err))) {
        json_decref(k.plan);
        fprintf(stderr, "kneebench knee: %s\n", err);
        return 2;
    }
    if (!x->a.quiet)
        fprintf(stderr, "kneebench knee %s: client CPUs %s, server CPUs %s; run %s\n",
                x->a.spec.url, x->client_list, x->server_cpus[0] ? x->server_cpus : "unknown",
                x->dir);
    if (kb_kneerun_search(&k, err, sizeof(err)))
        fprintf(stderr, "kneebench knee: %s\n", err);
    json_decref(k.plan);
    if (kb_knee_doc_load(x->dir, &d, err, sizeof(err))) {
        fprintf(stderr, "kneebench knee: %s\n", err);
        return 1;
    }
    code = kb_knee_headline(&d, line, sizeof(line));
    printf("%s\n", line);
    if (kb_knee_report_write(x->dir, &d, err, sizeof(err))) {
        fprintf(stderr, "kneebench knee: the report: %s\n", err);
        code = 1;
    } else {
        printf("report: %s/report.md\n", x->dir);
    }
    kb_knee_doc_free(&d);
    return k.end == KB_KNEERUN_SEARCH ? code : 1;
}

/* The target, the criteria, the CPUs and the run directory; then the search. */
static int prepare(struct knee_ctx *x, int argc, char **argv)
{
    char err[512];
    if (kb_target_open(&x->t, &x->a.spec, &x->ct, err, sizeof(err)))
        return bad("%s", err);
    if (!kb_target_loopback(&x->t) && !x->a.allow_remote)
        return bad("%s is not on loopback (127.0.0.0/8): give --allow-remote for a server you "
                   "own elsewhere", x->t.host);
    x->crit = kb_criteria_of(&x->ct);
    if (x->a.p99_ms)
        x->crit.max_p99_us = llround(x->a.p99_ms * 1000);
    if (x->a.delivery)
        x->crit.min_delivery = x->a.delivery;
    kb_procwatch_server_cpus((pid_t)x->a.pid, x->a.cgroup, x->server_cpus,
                             sizeof(x->server_cpus));
    if (client_cpus(&x->a, x->server_cpus, &x->cpus, x->client_list, sizeof(x->client_list)) ||
        run_dir(&x->a, x->dir, sizeof(x->dir)))
        return 2;
    if (kb_load_probe(&x->t.addr, 2000, err, sizeof(err))) {
        fprintf(stderr, "kneebench knee: target unreachable, no load sent: %s\n", err);
        return 3;
    }
    kb_run_signals();
    return search(x, argc, argv);
}

int cmd_knee(int argc, char **argv)
{
    static struct knee_ctx x;
    char err[512];
    int rc;
    memset(&x, 0, sizeof(x));
    x.a.warmup = x.a.drain = -1;
    if ((rc = parse_args(argc, argv, &x.a)))
        return rc == 1 ? 0 : rc;
    if (!x.a.contract && !kb_root_contract()) {
        fprintf(stderr, "kneebench knee: %s, or name the contract with --contract FILE\n",
                kb_root_error());
        return 2;
    }
    if (kb_contract_load(x.a.contract ? x.a.contract : kb_root_contract(), &x.ct, err,
                         sizeof(err))) {
        fprintf(stderr, "kneebench knee: %s\n", err);
        return 2;
    }
    rc = settle_args(&x.a, &x.ct);
    if (!rc)
        rc = prepare(&x, argc, argv);
    kb_target_close(&x.t);
    kb_contract_free(&x.ct);
    return rc;
}
