/* cmd_load.c -- `kneebench load`: validate every argument, probe the target, run the load
 * (runner/load/loadgen.c) and write the summary, the JSON and the .hgrm files (runner/load/loadout.c).
 * What is sent and what counts as a right response is runner/load/target.c's. Exit 0 when
 * the run completed and every response was as expected; 4 when it completed with responses
 * that were not (the figures are written all the same); 2 for bad arguments; 3 when the
 * target cannot be reached; 1 when the run or its output failed. Nothing is sent before
 * every argument has been checked and the target has accepted a connection. */
#define _GNU_SOURCE
#include "runner/cli/commands.h"

#include <arpa/inet.h>
#include <errno.h>
#include <getopt.h>
#include <math.h>
#include <netdb.h>
#include <sched.h>
#include <sys/resource.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "fixtures/contract.h"
#include "runner/util/clock.h"
#include "runner/util/cpulist.h"
#include "runner/util/atomicfile.h"
#include "runner/util/evidence.h"
#include "runner/load/loadgen.h"
#include "runner/load/loadjson.h"
#include "runner/load/loadout.h"
#include "runner/load/target.h"
#include "runner/run/verdict.h"
#include "runner/util/root.h"
#include "runner/util/units.h"

struct load_args {
    struct kb_target_spec spec;    /* the URL, --route, -H and --expect-* */
    const char *json, *hgrm, *uhgrm, *contract, *cpus, *hlog, *series_csv, *requests_log;
    double rate, duration, warmup, drain;
    int threads, connections, quiet, latency;
    long timeout_ms;
    long spin_us;
    long slack_us;
    long quantum_us;
    int have_quantum;
    int eager_rx;
    int rt;
    int exact_threads;
    enum kb_load_timer timer;
    long requests_log_max;
    int have_requests_log_max;
    int have_rate, have_duration, have_warmup, have_drain;
};

static void usage(FILE *f)
{
    fprintf(f,
        "usage: kneebench load [options] URL      (or --url URL)\n"
        "       kneebench load -t4 -c256 -d10s -R20k http://127.0.0.1:8080/plaintext\n"
        "  Drives one route open-loop at a fixed rate; latency counts from each request's\n"
        "  intended send time. Durations take a unit (500ms, 10s, 2m, 1h; bare: seconds) and\n"
        "  rates a metric suffix (20k, 1.5k, 2M; bare: per second).\n"
        "  -R, --rate RATE          requests per second (required)\n"
        "  -d, --duration D         measured interval (required)\n"
        "  -t, --threads N          at most N threads (default: the contract's)\n"
        "  -c, --connections N      connections, all opened before the warmup (the contract's)\n"
        "      --url URL            http://HOST[:PORT]/PATH, IPv4; any server you own\n"
        "  -H, --header 'N: V'      a request header, repeatable (not Connection,\n"
        "                           Content-Length or Transfer-Encoding: the client's own)\n"
        "      --route NAME         check every response against this contract route, byte\n"
        "                           for byte (default: the route whose path is the URL's)\n"
        "  Otherwise, or given any of these three, a right response is what they say:\n"
        "      --expect-status S    2xx (the default) or one code 200..299\n"
        "      --expect-body FILE   exactly these bytes (default: any body)\n"
        "      --expect-header 'N: V'   a header every response carries, with this value\n"
        "      --warmup D           at the same rate, discarded (default 0, as in wrk2)\n"
        "      --drain D            late responses still counted (the contract's)\n"
        "  -T, --timeout D          a request unanswered this long is a timeout (10s);\n"
        "      --timeout-ms N       the same in milliseconds\n"
        "  -L, --latency            the whole corrected percentile spectrum, as wrk2 -L\n"
        "                           prints it, with mean, stdev and Requests/sec\n"
        "      --json FILE --hgrm FILE --uncorrected-hgrm FILE --hlog FILE --series-csv FILE\n"
        "                           outputs (runner/README-load.md)\n"
        "      --requests-log FILE [--requests-log-max N]   one line per request, bounded\n"
        "      --cpus LIST          client CPUs, e.g. 1-3\n"
        "      --exact-threads      run --threads as asked: by default at most one thread per\n"
        "                           CPU the client may use (--cpus, affinity, cgroup quota),\n"
        "                           since threads sharing a CPU multiply its wake-ups\n"
        "      --rt                 load threads SCHED_FIFO\n"
        "      --send-quantum-us N --spin-us N --timer-slack-us N --eager-rx   client tuning\n"
        "      --timer auto|epoll_pwait2|timerfd   how a thread sleeps to its next send\n"
        "                           (auto: epoll_pwait2 where the kernel has it, Linux 5.11+)\n"
        "      --contract FILE      (the tree's fixtures/contract.json, else the installed\n"
        "                           BIN/../share/kneebench/contract.json)\n"
        "      --quiet              no summary\n"
        "A warning goes to stderr when the client's own lateness could have changed the\n"
        "point's verdict under the contract's criteria: the figures then describe the host.\n"
        "exit: 0 the run completed and every response was right (timeouts and socket errors\n"
        "      are data); 4 it completed, but responses were not right (non-2xx, or not what\n"
        "      the route or the expectation asks): counted and written as for 0;\n"
        "      1 the run itself or its output failed; 2 bad arguments (nothing sent); 3 the\n"
        "      target is unreachable.\n");
}

static int bad(const char *fmt, const char *a)
{
    fprintf(stderr, "kneebench load: ");
    fprintf(stderr, fmt, a);
    fprintf(stderr, " (kneebench load --help)\n");
    return 2;
}

static int parse_int(const char *s, long lo, long hi, long *out)
{
    char *end;
    long v;
    errno = 0;
    v = strtol(s, &end, 10);
    if (errno || end == s || *end || v < lo || v > hi)
        return -1;
    *out = v;
    return 0;
}

/* Long-only options get codes past any character, so that no short flag is exposed by
 * accident; -H and -L mean what they mean to wrk2's users: a header and --latency. */
enum { O_URL = 256, O_ROUTE, O_EXPECT_STATUS, O_EXPECT_BODY, O_EXPECT_HEADER, O_WARMUP, O_DRAIN, O_JSON, O_HGRM, O_UHGRM, O_CONTRACT,
       O_TIMEOUT_MS, O_CPUS, O_QUIET, O_HLOG, O_SERIES, O_REQLOG, O_REQLOG_MAX, O_SPIN,
       O_SLACK, O_QUANTUM, O_EAGER, O_RT, O_EXACT, O_TIMER };

/* Numbers with units: rate, durations, the timeout. 0, or bad()'s 2. */
static int unit_opt(int o, const char *v, struct load_args *a)
{
    double s;
    switch (o) {
    case 'R':
        if (kb_parse_rate(v, 1e-3, 1e7, &a->rate))
            return bad("-R/--rate must be a rate in (0, 10M] (45000, 20k, 1.5k), not '%s'", v);
        a->have_rate = 1;
        return 0;
    case 'd':
        if (kb_parse_duration(v, 1e-3, 86400, &a->duration))
            return bad("-d/--duration must be a duration in (0, 24h] (10, 10s, 500ms, 2m), not '%s'", v);
        a->have_duration = 1;
        return 0;
    case O_WARMUP:
        if (kb_parse_duration(v, 0, 3600, &a->warmup))
            return bad("--warmup must be a duration in [0, 1h] (5, 5s, 500ms), not '%s'", v);
        return 0;
    case O_DRAIN:
        if (kb_parse_duration(v, 0, 600, &a->drain))
            return bad("--drain must be a duration in [0, 10m] (2, 2s, 500ms), not '%s'", v);
        a->have_drain = 1;
        return 0;
    default:    /* -T: whole milliseconds, as --timeout-ms */
        if (kb_parse_duration(v, 1e-3, 3600, &s))
            return bad("-T/--timeout must be a duration in [1ms, 1h] (2s, 500ms), not '%s'", v);
        a->timeout_ms = lround(s * 1000);
        return 0;
    }
}

/* Whole-number options. 0, or bad()'s 2. */
static int int_opt(int o, const char *v, struct load_args *a)
{
    long n;
    switch (o) {
    case 't':
        if (parse_int(v, 1, 256, &n)) return bad("-t/--threads must be 1..256, not '%s'", v);
        a->threads = (int)n; return 0;
    case 'c':
        if (parse_int(v, 1, 60000, &n)) return bad("-c/--connections must be 1..60000, not '%s'", v);
        a->connections = (int)n; return 0;
    case O_TIMEOUT_MS:
        if (parse_int(v, 1, 3600000, &a->timeout_ms)) return bad("--timeout-ms must be 1..3600000, not '%s'", v);
        return 0;
    case O_SLACK:
        if (parse_int(v, 0, 1000, &a->slack_us)) return bad("--timer-slack-us must be 0..1000, not '%s'", v);
        return 0;
    case O_QUANTUM:
        if (parse_int(v, 0, 1000, &a->quantum_us)) return bad("--send-quantum-us must be 0..1000, not '%s'", v);
        a->have_quantum = 1; return 0;
    case O_SPIN:
        if (parse_int(v, 0, 1000, &a->spin_us)) return bad("--spin-us must be 0..1000, not '%s'", v);
        return 0;
    default:    /* O_REQLOG_MAX */
        if (parse_int(v, 1, 100000000, &a->requests_log_max)) return bad("--requests-log-max must be 1..100000000 lines, not '%s'", v);
        a->have_requests_log_max = 1; return 0;
    }
}

/* Options that name a file or a list, and flags. 0; 1 when the value was refused (said on
 * stderr); -1 for an option this is not. */
static int text_opt(int o, const char *v, struct load_args *a)
{
    switch (o) {
    case O_URL: a->spec.url = v; return 0;
    case O_ROUTE: a->spec.route = v; return 0;
    case O_EXPECT_STATUS: a->spec.expect_status = v; return 0;
    case O_EXPECT_BODY: a->spec.expect_body_file = v; return 0;
    case O_EXPECT_HEADER: a->spec.expect_header = v; return 0;
    case 'H':
        if (a->spec.nheaders == KB_TARGET_HEADERS_MAX) {
            bad("at most 32 -H/--header, not more ('%s')", v);
            return 1;
        }
        a->spec.headers[a->spec.nheaders++] = v;
        return 0;
    case O_JSON: a->json = v; return 0;
    case O_HGRM: a->hgrm = v; return 0;
    case O_UHGRM: a->uhgrm = v; return 0;
    case O_CONTRACT: a->contract = v; return 0;
    case O_CPUS: a->cpus = v; return 0;
    case O_HLOG: a->hlog = v; return 0;
    case O_SERIES: a->series_csv = v; return 0;
    case O_REQLOG: a->requests_log = v; return 0;
    case O_QUIET: a->quiet = 1; return 0;
    case O_EAGER: a->eager_rx = 1; return 0;
    case O_RT: a->rt = 1; return 0;
    case O_EXACT: a->exact_threads = 1; return 0;
    case O_TIMER:
        for (int k = 0; k < 3; k++)
            if (!strcmp(v, kb_load_timer_names[k]) || (k == 0 && !strcmp(v, "auto"))) {
                a->timer = (enum kb_load_timer)k;
                return 0;
            }
        bad("--timer is auto, epoll_pwait2 or timerfd, not '%s'", v);
        return 1;
    case 'L': a->latency = 1; return 0;
    default: return -1;
    }
}

/* What the options alone decide: required ones, the URL given once, combinations. */
static int check_args(int argc, char **argv, struct load_args *a)
{
    if (optind < argc && a->spec.url)
        return bad("the URL is given twice ('%s' and --url)", argv[optind]);
    if (optind < argc)
        a->spec.url = argv[optind++];
    if (optind < argc)
        return bad("unexpected argument '%s'", argv[optind]);
    if (!a->spec.url)
        return bad("%s", "a URL is required (kneebench load [options] URL, or --url URL)");
    if (!a->have_rate || !a->have_duration)
        return bad("%s", "-R/--rate and -d/--duration are required");
    /* the schedule rounds rate x duration to whole requests (runner/load/schedule.h): none
     * would leave delivery without a denominator */
    if (llround(a->rate * a->duration) < 1)
        return bad("%s", "--rate x --duration must schedule at least one request");
    if (a->have_requests_log_max && !a->requests_log)
        return bad("%s", "--requests-log-max needs --requests-log FILE");
    return 0;
}

static int parse_args(int argc, char **argv, struct load_args *a)
{
    static const struct option opts[] = {
        { "url", 1, 0, O_URL }, { "route", 1, 0, O_ROUTE }, { "rate", 1, 0, 'R' },
        { "duration", 1, 0, 'd' }, { "warmup", 1, 0, O_WARMUP }, { "drain", 1, 0, O_DRAIN },
        { "threads", 1, 0, 't' }, { "connections", 1, 0, 'c' }, { "json", 1, 0, O_JSON },
        { "hgrm", 1, 0, O_HGRM }, { "uncorrected-hgrm", 1, 0, O_UHGRM },
        { "contract", 1, 0, O_CONTRACT }, { "timeout", 1, 0, 'T' },
        { "timeout-ms", 1, 0, O_TIMEOUT_MS }, { "cpus", 1, 0, O_CPUS }, { "quiet", 0, 0, O_QUIET },
        { "hlog", 1, 0, O_HLOG }, { "series-csv", 1, 0, O_SERIES },
        { "requests-log", 1, 0, O_REQLOG }, { "requests-log-max", 1, 0, O_REQLOG_MAX },
        { "spin-us", 1, 0, O_SPIN }, { "timer-slack-us", 1, 0, O_SLACK },
        { "send-quantum-us", 1, 0, O_QUANTUM }, { "eager-rx", 0, 0, O_EAGER }, { "rt", 0, 0, O_RT },
        { "exact-threads", 0, 0, O_EXACT }, { "latency", 0, 0, 'L' },
        { "timer", 1, 0, O_TIMER }, { "header", 1, 0, 'H' },
        { "expect-status", 1, 0, O_EXPECT_STATUS }, { "expect-body", 1, 0, O_EXPECT_BODY },
        { "expect-header", 1, 0, O_EXPECT_HEADER },
        { "help", 0, 0, 'h' }, { 0, 0, 0, 0 }
    };
    int o, rc;
    optind = 1;
    opterr = 0;
    /* GNU getopt permutes, so the URL may come first, last or between options, as in wrk2 */
    while ((o = getopt_long(argc, argv, "R:d:t:c:T:H:Lh", opts, NULL)) != -1) {
        if (o == 'h') {
            usage(stdout);
            return 1;
        }
        if (o == 'R' || o == 'd' || o == 'T' || o == O_WARMUP || o == O_DRAIN)
            rc = unit_opt(o, optarg, a);
        else if (o == 't' || o == 'c' || o == O_TIMEOUT_MS || o == O_SLACK || o == O_QUANTUM ||
                 o == O_SPIN || o == O_REQLOG_MAX)
            rc = int_opt(o, optarg, a);
        else if ((rc = text_opt(o, optarg, a)) >= 0)
            rc = rc ? 2 : 0;
        else
            return bad("unknown or incomplete option '%s'", argv[optind - 1]);
        if (rc)
            return rc;
    }
    return check_args(argc, argv, a);
}

/* The CPU bandwidth quota of this process's cgroup, in CPUs (cgroup v1 cpu.cfs_quota_us /
 * cfs_period_us, or v2 cpu.max), or 0 when there is none. A client held to 0.5 CPU by a
 * quota must see its CPU fraction against 0.5, not against the CPUs it may run on. */
static double cgroup_cpu_quota(void)
{
    FILE *f = fopen("/proc/self/cgroup", "r");
    char line[1024], path[2048];
    double quota = 0;
    if (!f)
        return 0;
    while (fgets(line, sizeof(line), f)) {
        char *ctrl = strchr(line, ':'), *rel = ctrl ? strchr(ctrl + 1, ':') : NULL;
        long long q = 0, period = 0;
        FILE *g;
        if (!rel)
            continue;
        rel[strcspn(rel, "\n")] = '\0';
        *rel++ = '\0';
        ctrl++;
        if (!strcmp(ctrl, "cpu") || strstr(ctrl, "cpu,") == ctrl) {
            snprintf(path, sizeof(path), "/sys/fs/cgroup/%s%s/cpu.cfs_quota_us", ctrl, rel);
            if ((g = fopen(path, "r"))) {
                if (fscanf(g, "%lld", &q) != 1)
                    q = 0;
                fclose(g);
            }
            snprintf(path, sizeof(path), "/sys/fs/cgroup/%s%s/cpu.cfs_period_us", ctrl, rel);
            if ((g = fopen(path, "r"))) {
                if (fscanf(g, "%lld", &period) != 1)
                    period = 0;
                fclose(g);
            }
        } else if (!*ctrl) {
            snprintf(path, sizeof(path), "/sys/fs/cgroup%s/cpu.max", rel);
            if ((g = fopen(path, "r"))) {
                if (fscanf(g, "%lld %lld", &q, &period) != 2)
                    q = period = 0;
                fclose(g);
            }
        }
        if (q > 0 && period > 0 && (quota == 0 || (double)q / (double)period < quota))
            quota = (double)q / (double)period;
    }
    fclose(f);
    return quota;
}

/* Every connection is a descriptor: raise the soft limit as far as allowed, and refuse a
 * connection count the process could never open. */
static int fit_descriptors(int connections)
{
    struct rlimit rl;
    rlim_t need = (rlim_t)connections + 64;
    if (getrlimit(RLIMIT_NOFILE, &rl))
        return 0;
    if (rl.rlim_cur < need && rl.rlim_cur < rl.rlim_max) {
        rl.rlim_cur = rl.rlim_max < need ? rl.rlim_max : need;
        setrlimit(RLIMIT_NOFILE, &rl);
    }
    if (rl.rlim_cur < need) {
        fprintf(stderr, "kneebench load: --connections %d needs %llu descriptors, the limit is %llu "
                "(kneebench load --help)\n", connections, (unsigned long long)need,
                (unsigned long long)rl.rlim_cur);
        return 2;
    }
    return 0;
}

/* Refuse an unwritable output before the run rather than after it; the probe is the
 * temporary file the output will be written through (runner/util/atomicfile.h), removed. */
static int check_writable(const char *path)
{
    struct kb_afile probe;
    char err[4200];
    if (!path)
        return 0;
    if (kb_afile_open(&probe, path, err, sizeof(err)) < 0)
        return bad("cannot write output '%s'", path);
    kb_afile_abort(&probe);
    return 0;
}

/* The threads the client runs: at most one per CPU it may use (the quota rounded up),
 * unless --exact-threads. */
static int fit_threads(const struct load_args *a, const cpu_set_t *cpus, double quota)
{
    int n = CPU_COUNT(cpus);
    if (quota > 0 && quota < n)
        n = (int)ceil(quota);
    if (a->exact_threads || n < 1 || a->threads <= n)
        return a->threads;
    return n;
}

static int write_outputs(const struct load_args *a, const struct kb_load_meta *m,
                         const struct kb_load_result *res)
{
    char err[512] = "";
    int rc = 0;
    /* The requests log first: a JSON that counts its lines never appears without it. */
    if (a->requests_log && kb_loadout_write_requests(a->requests_log, res, err, sizeof(err)))
        rc = 1;
    else if (a->json && kb_loadout_write_json(a->json, m, res, err, sizeof(err)))
        rc = 1;
    else if (a->hgrm && kb_loadout_write_hgrm(a->hgrm, &res->corrected, err, sizeof(err)))
        rc = 1;
    else if (a->uhgrm && kb_loadout_write_hgrm(a->uhgrm, &res->uncorrected, err, sizeof(err)))
        rc = 1;
    if (!rc && (a->hlog || a->series_csv)) {
        if (!res->series)
            snprintf(err, sizeof(err), "no memory for the series");
        if (!res->series || kb_hlog_collector_write(res->series, a->hlog, a->series_csv, err, sizeof(err)))
            rc = 1;
    }
    if (rc)
        fprintf(stderr, "kneebench load: %s\n", err);
    return rc;
}

/* The client's lateness, judged as the curve judges it (runner/run/verdict.h): a warning
 * when the verdict under the contract's criteria could differ without the client's own
 * delay in each request, and 4 when any response was not right. */
static int afterwards(const struct kb_load_meta *m, const struct kb_load_result *res,
                      const struct kb_contract *ct)
{
    struct kb_criteria crit = kb_criteria_of(ct);
    struct kb_point_load pl;
    char err[256], why[256];
    json_t *j = kb_loadout_json(m, res);
    if (!kb_point_load_parse(j, &pl, err, sizeof(err)) && !kb_trust_judge(&pl, &crit, why, sizeof(why)))
        fprintf(stderr, "kneebench load: warning: the client's own lateness was large enough to "
                "matter: %s. These figures describe this host as much as the server "
                "(runner/README-load.md, \"When the client is late\").\n", why);
    json_decref(j);
    return res->c.non2xx || res->c.mm_total ? 4 : 0;
}

/* The load's configuration from the arguments and the target. */
static void configure(const struct load_args *a, const struct kb_target *t, const cpu_set_t *cpus,
                      struct kb_load_config *cfg)
{
    *cfg = (struct kb_load_config){
        .addr = t->addr, .request = t->request, .request_len = t->request_len,
        .expect = &t->expect, .rate = a->rate, .warmup_s = a->warmup,
        .duration_s = a->duration, .drain_s = a->drain, .connections = a->connections,
        .timeout_ms = a->timeout_ms, .spin_ns = a->spin_us * 1000,
        .timer_slack_ns = a->slack_us * 1000, .send_quantum_ns = a->quantum_us * 1000,
        .rx_timestamps = !a->eager_rx, .rt = a->rt,
        /* untagged: HdrHistogram's HistogramLogProcessor reads only untagged lines by default */
        .series_tag = a->hlog || a->series_csv ? "" : NULL,
        .cpus = a->cpus ? cpus : NULL,
        .requests_log_max = a->requests_log ? (uint64_t)a->requests_log_max : 0,
        .timer = a->timer,
    };
}

static int measure(const struct load_args *a, const struct kb_target *t, cpu_set_t *cpus,
                   const struct kb_contract *ct)
{
    struct kb_load_config cfg;
    struct kb_load_meta meta;
    struct kb_load_result res;
    char err[512];
    double quota;
    int rc;
    if (kb_load_probe(&t->addr, 2000, err, sizeof(err))) {
        fprintf(stderr, "kneebench load: target unreachable, no load sent: %s\n", err);
        return 3;
    }
    configure(a, t, cpus, &cfg);
    if (!a->cpus)
        sched_getaffinity(0, sizeof(*cpus), cpus);
    quota = cgroup_cpu_quota();
    cfg.threads = fit_threads(a, cpus, quota);
    meta = (struct kb_load_meta){ .url = a->spec.url, .route = t->route,
        .expectation = t->expectation, .requested_rps = a->rate,
        .threads_requested = a->threads, .threads = cfg.threads, .connections = a->connections,
        .warmup_s = a->warmup, .duration_s = a->duration, .drain_s = a->drain,
        .client_cpus = CPU_COUNT(cpus), .client_cpu_quota = quota, .rt_asked = a->rt,
        .send_quantum_us = a->quantum_us, .requests_log = a->requests_log,
        .requests_log_max = cfg.requests_log_max };
    kb_clock_iso8601_utc(meta.started_at, sizeof(meta.started_at));
    if (kb_load_run(&cfg, &res, err, sizeof(err))) {
        fprintf(stderr, "kneebench load: %s\n", err);
        return 1;
    }
    if (!a->quiet)
        kb_loadout_summary(stdout, &meta, &res);
    if (!a->quiet && a->latency)
        kb_loadout_spectrum(stdout, &meta, &res);
    rc = write_outputs(a, &meta, &res);
    if (!rc)
        rc = afterwards(&meta, &res, ct);
    kb_load_result_free(&res);
    return rc;
}

static int run(struct load_args *a, const struct kb_contract *ct)
{
    struct kb_target t;
    cpu_set_t cpus;
    char err[512];
    int rc = 2;
    if (kb_target_open(&t, &a->spec, ct, err, sizeof(err)))
        bad("%s", err);
    /* "7-" runs to the last CPU this process may use */
    else if (a->cpus && kb_cpulist_parse_allowed(a->cpus, &cpus, err, sizeof(err)) < 0)
        bad("--cpus: %s", err);
    else if (a->threads > a->connections)
        bad("%s", "--connections must be at least --threads (every thread needs a connection)");
    else if (!check_writable(a->json) && !check_writable(a->hgrm) && !check_writable(a->uhgrm) &&
             !check_writable(a->hlog) && !check_writable(a->series_csv) &&
             !check_writable(a->requests_log) && !fit_descriptors(a->connections))
        rc = measure(a, &t, &cpus, ct);
    kb_target_close(&t);
    return rc;
}

int cmd_load(int argc, char **argv)
{
    struct load_args a = { .timeout_ms = 10000, .requests_log_max = 1000000 };
    struct kb_contract ct;
    char err[512];
    int rc = parse_args(argc, argv, &a);
    if (rc)
        return rc == 1 ? 0 : rc;
    if (!a.contract && !kb_root_contract()) {
        fprintf(stderr, "kneebench load: %s, or name the contract with --contract FILE\n",
                kb_root_error());
        return 2;
    }
    if (kb_contract_load(a.contract ? a.contract : kb_root_contract(), &ct, err, sizeof(err))) {
        fprintf(stderr, "kneebench load: %s\n", err);
        return 2;
    }
    if (!a.threads)
        a.threads = ct.threads;
    if (!a.connections)
        a.connections = ct.connections;
    if (!a.have_drain)
        a.drain = ct.drain_s;
    if (!a.have_quantum)
        a.quantum_us = ct.send_quantum_us;
    rc = run(&a, &ct);
    kb_contract_free(&ct);
    return rc;
}
