/* cmd_load.c -- `kneebench load`: every argument validated into struct kb_load_args, the
 * contract's defaults filled in, and the load run (runner/run/loadrun.h). What is sent and
 * what counts as a right response is runner/load/target.c's. Exit 0 when the run completed
 * and every response was as expected; 4 when it completed with responses that were not (the
 * figures are written all the same); 5 when every response was right but the client's own
 * lateness could have decided the verdict (written all the same); 6 when it ran but an output
 * could not be written (the harness's failure: a runner leaves the point incomplete); 2 for
 * bad arguments; 3 when the target cannot be reached; 7 when it answered its first requests
 * wrongly (nothing loaded); 1 when the run itself failed. Nothing is sent before every argument has
 * been checked and the target has accepted a connection. */
#define _GNU_SOURCE
#include "runner/cli/commands.h"
#include "runner/cli/refuse.h"

#include <getopt.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "contract/contract.h"
#include "runner/load/loadgen.h"
#include "runner/run/loadrun.h"
#include "runner/util/opts.h"
#include "runner/util/root.h"

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
        "      --dispatch any|per-connection   a due request takes any free connection\n"
        "                           (default), or waits for its own connection, each with\n"
        "                           its share of the schedule, as wrk2 sends\n"
        "      --stagger MS|even    per-connection: connection i begins its schedule i x MS\n"
        "                           after the first, as wrk2 staggers its connects (default\n"
        "                           5); even: the connections' phases spread evenly\n"
        "      --timer auto|epoll_pwait2|timerfd   how a thread sleeps to its next send\n"
        "                           (auto: epoll_pwait2 where the kernel has it, Linux 5.11+)\n"
        "      --pid PID[,PID...]   the server's processes (--pid 12,13, --pid \"12 13\"):\n"
        "                           the client is kept off their CPUs. Default, for a\n"
        "                           loopback URL: those listening on its port (ss -ltnp)\n"
        "      --reconnect, --no-reconnect   a server that closes its connections is\n"
        "                           measured by reconnecting, the connect time counted in\n"
        "                           each request's latency, as wrk does (default, unless a\n"
        "                           contract route is checked: the fixtures keep alive)\n"
        "      --no-preflight       no trial requests first (the curve preflights its own)\n"
        "      --contract FILE      (the tree's contract/contract.json, else the installed\n"
        "                           BIN/../share/kneebench/contract.json)\n"
        "      --quiet              no summary\n"
        "A warning goes to stderr when the client's own lateness could have changed the\n"
        "point's verdict under the contract's criteria: the figures then describe the host.\n"
        "exit: 0 the run completed and every response was right (timeouts and socket errors\n"
        "      are data); 4 it completed, but responses were not right (non-2xx, malformed,\n"
        "      or not what the route or the expectation asks): written as for 0;\n"
        "      5 it completed with every response right, but the client's own lateness\n"
        "      could have decided the verdict (the warning above): written as for 0;\n"
        "      6 it ran, but an output could not be written (a full disk): the harness's\n"
        "      failure, not the server's; 1 the run itself failed; 2 bad arguments (nothing\n"
        "      sent); 3 the target is unreachable; 7 the target answered its first requests\n"
        "      wrongly (status, body, header, a malformed reply): nothing loaded, nothing\n"
        "      written.\n"
        "First, unless --no-preflight, a few requests: their status, body size, Server\n"
        "header and whether the connection was kept go to stderr, beside the server's PID\n"
        "and CPUs; a wrong answer stops the command within 5 s.\n");
}

static int bad(const char *fmt, const char *a)
{
    return kb_cli_refuse("load", fmt, a);
}

/* Long-only options get codes past any character, so that no short flag is exposed by
 * accident; -H and -L mean what they mean to wrk2's users: a header and --latency. */
enum { O_URL = 256, O_ROUTE, O_EXPECT_STATUS, O_EXPECT_BODY, O_EXPECT_HEADER, O_WARMUP, O_DRAIN, O_JSON, O_HGRM, O_UHGRM, O_CONTRACT,
       O_TIMEOUT_MS, O_CPUS, O_QUIET, O_HLOG, O_SERIES, O_REQLOG, O_REQLOG_MAX, O_SPIN,
       O_SLACK, O_QUANTUM, O_EAGER, O_RT, O_EXACT, O_TIMER, O_DISPATCH, O_PID, O_RECONNECT,
       O_NO_RECONNECT, O_NO_PREFLIGHT, O_STAGGER };

/* Numbers with units: rate, durations, the timeout; bounds from runner/util/opts.h. 0, or
 * bad()'s 2. */
static int unit_opt(int o, const char *v, struct kb_load_args *a)
{
    char err[256];
    double s;
    int rc;
    switch (o) {
    case 'R':
        rc = kb_opt_rate("-R/--rate", v, KB_BOUND(RATE), &a->rate, err, sizeof(err));
        a->have_rate = !rc;
        break;
    case 'd':
        rc = kb_opt_duration("-d/--duration", v, KB_BOUND(DURATION), &a->duration, err,
                             sizeof(err));
        a->have_duration = !rc;
        break;
    case O_WARMUP:
        rc = kb_opt_duration("--warmup", v, KB_BOUND(WARMUP), &a->warmup, err, sizeof(err));
        break;
    case O_DRAIN:
        rc = kb_opt_duration("--drain", v, KB_BOUND(DRAIN), &a->drain, err, sizeof(err));
        a->have_drain = !rc;
        break;
    default:    /* -T: whole milliseconds, as --timeout-ms */
        if (!(rc = kb_opt_duration("-T/--timeout", v, KB_BOUND(TIMEOUT), &s, err, sizeof(err))))
            a->timeout_ms = lround(s * 1000);
    }
    return rc ? bad("%s", err) : 0;
}

/* Whole-number options. 0, or bad()'s 2. */
static int int_opt(int o, const char *v, struct kb_load_args *a)
{
    const struct { int o; const char *name; enum kb_bound_id b; long *into; } longs[] = {
        { O_TIMEOUT_MS, "--timeout-ms", KB_B_TIMEOUT_MS, &a->timeout_ms },
        { O_SLACK, "--timer-slack-us", KB_B_CLIENT_US, &a->slack_us },
        { O_QUANTUM, "--send-quantum-us", KB_B_CLIENT_US, &a->quantum_us },
        { O_SPIN, "--spin-us", KB_B_CLIENT_US, &a->spin_us },
        { O_REQLOG_MAX, "--requests-log-max", KB_B_REQLOG_LINES, &a->requests_log_max },
    };
    char err[256];
    int rc = -1;
    if (o == 't')
        rc = kb_opt_int("-t/--threads", v, KB_BOUND(THREADS), &a->threads, err, sizeof(err));
    else if (o == 'c')
        rc = kb_opt_int("-c/--connections", v, KB_BOUND(CONNECTIONS), &a->connections, err,
                        sizeof(err));
    for (size_t i = 0; i < sizeof(longs) / sizeof(longs[0]); i++)
        if (longs[i].o == o)
            rc = kb_opt_long(longs[i].name, v, &kb_bounds[longs[i].b], longs[i].into, err,
                             sizeof(err));
    if (rc)
        return bad("%s", err);
    a->have_quantum |= o == O_QUANTUM;
    a->have_requests_log_max |= o == O_REQLOG_MAX;
    return 0;
}

/* Options that name a file or a list, and flags. 0; 1 when the value was refused (said on
 * stderr); -1 for an option this is not. */
static int text_opt(int o, const char *v, struct kb_load_args *a)
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
    case O_DISPATCH:
        if (kb_opt_dispatch(v, &a->per_connection) == 0)
            return 0;
        bad("--dispatch is any or per-connection, not '%s'", v);
        return 1;
    case O_STAGGER: {
        char *end;
        double ms = strtod(v, &end);
        if (!strcmp(v, "even")) {
            a->stagger_ns = KB_LOAD_STAGGER_EVEN;
            return 0;
        }
        if (end != v && !*end && ms > 0 && ms <= 1000) {
            a->stagger_ns = (int64_t)(ms * 1e6);
            return 0;
        }
        bad("--stagger is milliseconds in (0, 1000] or even, not '%s'", v);
        return 1;
    }
    case 'L': a->latency = 1; return 0;
    case O_RECONNECT: a->reconnect = 1; return 0;
    case O_NO_RECONNECT: a->reconnect = 0; return 0;
    case O_NO_PREFLIGHT: a->no_preflight = 1; return 0;
    case O_PID: {
        char err[256];
        if (kb_opt_pids(v, a->pids, &a->npids, err, sizeof(err)) == 0)
            return 0;
        bad("%s", err);
        return 1;
    }
    default: return -1;
    }
}

/* What the options alone decide: required ones, the URL given once, combinations. */
static int check_args(int argc, char **argv, struct kb_load_args *a)
{
    int rc = kb_cli_positionals("load", argc, argv, a->pids, &a->npids, &a->spec.url);
    if (rc)
        return rc;
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

static int parse_args(int argc, char **argv, struct kb_load_args *a)
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
        { "timer", 1, 0, O_TIMER }, { "dispatch", 1, 0, O_DISPATCH }, { "header", 1, 0, 'H' },
        { "expect-status", 1, 0, O_EXPECT_STATUS }, { "expect-body", 1, 0, O_EXPECT_BODY },
        { "expect-header", 1, 0, O_EXPECT_HEADER }, { "pid", 1, 0, O_PID },
        { "reconnect", 0, 0, O_RECONNECT }, { "no-reconnect", 0, 0, O_NO_RECONNECT },
        { "no-preflight", 0, 0, O_NO_PREFLIGHT }, { "stagger", 1, 0, O_STAGGER },
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

int cmd_load(int argc, char **argv)
{
    struct kb_load_args a = { .timeout_ms = 10000, .requests_log_max = 1000000,
                              .reconnect = -1 };
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
    rc = kb_loadrun(&a, &ct);
    kb_contract_free(&ct);
    return rc;
}

