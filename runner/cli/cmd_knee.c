/* cmd_knee.c -- `kneebench knee URL`: the knee of an HTTP server the user runs, located to
 * a stated resolution (docs/knee.md). Validates every argument, probes the target, keeps
 * the client off the server's CPUs, and hands the search to runner/run/knee/kneerun.c and the
 * report to runner/report/knee/knee_report.c. The first line on stdout is the answer.
 * Exit 0 located; 1 the search ended on a bound (--max-rate, --min-rate, the client's
 * reach, --max-time), was interrupted, or could not keep its evidence; 2 bad arguments
 * (nothing sent); 3 the target is unreachable; 7 the target answered its first requests
 * wrongly (a status, a body: nothing searched, no run directory). */
#define _GNU_SOURCE
#include "runner/cli/commands.h"
#include "runner/cli/refuse.h"

#include <getopt.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "contract/contract.h"
#include "runner/load/target.h"
#include "runner/report/knee/knee_report.h"
#include "runner/run/knee/kneeinit.h"
#include "runner/report/report.h"
#include "runner/run/knee/kneerun.h"
#include "runner/run/run.h"
#include "runner/util/opts.h"
#include "runner/util/root.h"

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
        "      --pid PID[,PID...]   the server's processes (and their descendants): CPU,\n"
        "                           RSS, descriptors sampled, CPU per response reported;\n"
        "                           several as --pid 12,13 or --pid \"$(pidof nginx)\".\n"
        "                           Default, for a loopback URL: the processes listening\n"
        "                           on its port (as ss -ltnp finds them)\n"
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
        "      --hold D             the held end, once located, must also hold one sample\n"
        "                           this long, after the paper profile's warmup (the paper\n"
        "                           profile's 30 s; 0: no hold): short samples let a rate a\n"
        "                           few percent past the knee through\n"
        "      --dispatch any|per-connection   as `kneebench load --dispatch`\n"
        "      --reconnect, --no-reconnect   a server that closes its connections is\n"
        "                           measured by reconnecting, the connect time in each\n"
        "                           request's latency (default, unless the URL is a\n"
        "                           contract route: the contract's fixtures must keep\n"
        "                           their connections)\n"
        "  -t, --threads N  -c, --connections N  -T, --timeout D   the client (the contract's)\n"
        "      --no-rt              load threads not SCHED_FIFO\n"
        "      --allow-remote       load a target outside 127.0.0.0/8 (a server you own)\n"
        "      --contract FILE      --quiet (no progress lines on stderr)\n"
        "  First, a few requests: their status, body size, Server header and whether the\n"
        "  connection was kept are printed, and a wrong answer stops here, within 5 s.\n"
        "exit: 0 located; 1 ended on a bound (--max-rate, --min-rate, the client's reach,\n"
        "      --max-time), interrupted (run again to resume), its evidence not kept, or,\n"
        "      with --no-reconnect, a server that closes after each response;\n"
        "      2 bad arguments (nothing sent); 3 the target is unreachable; 7 the target\n"
        "      answered its first requests wrongly (a status --expect-status does not allow,\n"
        "      another body, a malformed reply): nothing searched, no run directory.\n");
}

static int bad(const char *fmt, const char *a)
{
    return kb_cli_refuse("knee", fmt, a);
}

enum { O_URL = 256, O_ROUTE, O_ES, O_EB, O_EH, O_PID, O_CGROUP, O_CPUS, O_RUN, O_RES, O_START,
       O_FACTOR, O_MIN, O_MAX, O_MAXTIME, O_CONFIRM, O_P99, O_DEL, O_DUR, O_WARM, O_DRAIN,
       O_HOLD, O_NORT, O_REMOTE, O_CONTRACT, O_QUIET, O_DISPATCH, O_RECONNECT,
       O_NO_RECONNECT };

/* The search's own ranges; the load's are runner/util/opts.h's. */
static const struct kb_bound search_rate = { 1, 1e7, 0, 0 }, resolution = { 0.1, 100, 0, 0 },
    factor = { 1.05, 10, 0, 0 }, max_time = { 1, 86400, 0, 0 },
    confirm = { 1, KB_CONFIRM_MAX, 0, 0 }, sample = { 0.1, 3600, 0, 0 },
    sample_warmup = { 0, 600, 0, 0 }, hold = { 0, 3600, 0, 0 };

/* Options with a count or a rate. 0, or -1 with e. */
static int count_opt(int o, const char *v, struct kb_knee_args *a, char *e, size_t n)
{
    switch (o) {
    case O_PID: return kb_opt_pids(v, a->pids, &a->npids, e, n);
    case O_START: return kb_opt_rate("--start-rate", v, &search_rate, &a->start, e, n);
    case O_MIN: return kb_opt_rate("--min-rate", v, &search_rate, &a->min, e, n);
    case O_MAX: return kb_opt_rate("--max-rate", v, &search_rate, &a->max, e, n);
    case O_CONFIRM: return kb_opt_long("--confirm", v, &confirm, &a->confirm, e, n);
    case 't': return kb_opt_long("-t/--threads", v, KB_BOUND(THREADS), &a->threads, e, n);
    default: return kb_opt_long("-c/--connections", v, KB_BOUND(CONNECTIONS), &a->connections,
                                e, n);
    }
}

/* Options with a number. 0, or bad()'s 2. */
static int number_opt(int o, const char *v, struct kb_knee_args *a)
{
    char e[256];
    size_t n = sizeof(e);
    int rc;
    switch (o) {
    case O_RES: rc = kb_opt_percent("--resolution", v, &resolution, &a->resolution, e, n); break;
    case O_FACTOR: rc = kb_opt_number("--factor", v, &factor, &a->factor, e, n); break;
    case O_MAXTIME: rc = kb_opt_duration("--max-time", v, &max_time, &a->max_time, e, n); break;
    case O_P99: rc = kb_opt_number("--max-p99-ms", v, KB_BOUND(P99_MS), &a->p99_ms, e, n); break;
    case O_DEL: rc = kb_opt_fraction("--min-delivery", v, KB_BOUND(DELIVERY), &a->delivery, e, n);
        break;
    case O_DUR: rc = kb_opt_duration("--duration", v, &sample, &a->duration, e, n); break;
    case O_WARM: rc = kb_opt_duration("--warmup", v, &sample_warmup, &a->warmup, e, n); break;
    case O_DRAIN: rc = kb_opt_duration("--drain", v, KB_BOUND(DRAIN), &a->drain, e, n); break;
    case O_HOLD: rc = kb_opt_duration("--hold", v, &hold, &a->hold, e, n); break;
    case 'T': rc = kb_opt_duration("-T/--timeout", v, KB_BOUND(TIMEOUT), &a->timeout, e, n); break;
    default: rc = count_opt(o, v, a, e, n);
    }
    return rc ? bad("%s", e) : 0;
}

/* Options with text, and flags. 0, or bad()'s 2. */
static int text_opt(int o, const char *v, struct kb_knee_args *a)
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
    case O_RECONNECT: a->reconnect = 1; return 0;
    case O_NO_RECONNECT: a->reconnect = 0; return 0;
    case O_DISPATCH:
        if (kb_opt_dispatch(v, &a->per_connection))
            return bad("--dispatch is any or per-connection, not '%s'", v);
        return 0;
    default: return bad("unknown or incomplete option '%s'", v ? v : "?");
    }
}

static int parse_args(int argc, char **argv, struct kb_knee_args *a)
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
        { "drain", 1, 0, O_DRAIN }, { "hold", 1, 0, O_HOLD }, { "dispatch", 1, 0, O_DISPATCH },
        { "threads", 1, 0, 't' }, { "connections", 1, 0, 'c' },
        { "timeout", 1, 0, 'T' }, { "no-rt", 0, 0, O_NORT }, { "allow-remote", 0, 0, O_REMOTE },
        { "contract", 1, 0, O_CONTRACT }, { "quiet", 0, 0, O_QUIET }, { "help", 0, 0, 'h' },
        { "reconnect", 0, 0, O_RECONNECT }, { "no-reconnect", 0, 0, O_NO_RECONNECT },
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
        rc = (o >= O_PID && o <= O_HOLD && o != O_CGROUP && o != O_CPUS && o != O_RUN) ||
             o == 't' || o == 'c' || o == 'T' ? number_opt(o, optarg, a) : text_opt(o, optarg, a);
        if (rc)
            return rc;
    }
    if ((rc = kb_cli_positionals("knee", argc, argv, a->pids, &a->npids, &a->spec.url)))
        return rc;
    if (!a->spec.url)
        return bad("%s", "a URL is required (kneebench knee [options] URL)");
    if (a->npids && a->cgroup)
        return bad("%s", "--pid and --cgroup name the server twice: give one");
    return 0;
}

/* A line on stderr per sample, taken or read back. */
static void progress(void *arg, const struct kb_kneerun_step *st, const struct kb_knee_next *nx)
{
    const struct kb_knee_args *a = arg;
    char p99[32], conns[32] = "";
    (void)nx;
    if (a->quiet)
        return;
    /* a failed sample may have no latency at all: a dash, never "nan" */
    if (isfinite(st->s.p99_us))
        snprintf(p99, sizeof(p99), "%9.2f", st->s.p99_us / 1000);
    else
        snprintf(p99, sizeof(p99), "%9s", "-");
    /* a server that closes: how many connections each request needed */
    if (isfinite(st->s.conns_per_request))
        snprintf(conns, sizeof(conns), "  %.2f conn/req", st->s.conns_per_request);
    fprintf(stderr, "  %7ld req/s  %s %d  %-12s delivery %5.1f %%  p99 %s ms%s  (%s)%s\n",
            st->s.rate, st->s.hold ? "hold  " : "sample", st->sample,
            kb_verdict_name(st->s.verdict), st->s.delivery * 100, p99, conns, st->why,
            st->resumed ? " [kept]" : "");
}

/* What was found before the first sample: the trial's answer, the server, the CPUs. The
 * shared-CPU sentence is said even with --quiet: it changes what the knee means. */
static void say_setup(const struct kb_knee_ctx *x)
{
    char line[512];
    kb_trial_describe(&x->trial, line, sizeof(line));
    if (!x->a.quiet) {
        fprintf(stderr, "  first requests: %s\n", line);
        if (kb_trial_closes(&x->trial))
            fprintf(stderr, "  %s\n", x->a.reconnect
                    ? "the server closes its connections: each request reconnects "
                      "(--reconnect), the connect time in its latency"
                    : "the server closes its connections, and a contract route's load (or "
                      "--no-reconnect's) requires keep-alive (--reconnect measures it all the "
                      "same)");
        fprintf(stderr, "  %s\n  client: CPUs %s\n", x->srv.note, x->srv.client);
    }
    if (x->srv.shared[0])
        fprintf(stderr, "  %s\n", x->srv.shared);
}

/* The search run, then its answer: the headline first, the report written. */
static int search(struct kb_knee_ctx *x, int argc, char **argv)
{
    static struct kb_kneerun k;
    struct kb_knee_doc d;
    char err[1024], line[512];
    int code;
    if (kb_knee_begin(x, &k, argc, argv, err, sizeof(err))) {
        json_decref(k.plan);
        json_decref(k.setup);
        fprintf(stderr, "kneebench knee: %s\n", err);
        return 2;
    }
    k.progress = progress;
    k.arg = &x->a;
    if (!x->a.quiet)
        fprintf(stderr, "kneebench knee %s: run %s\n", x->a.spec.url, x->dir);
    say_setup(x);
    if (kb_kneerun_search(&k, err, sizeof(err)))
        fprintf(stderr, "kneebench knee: %s\n", err);
    json_decref(k.plan);
    json_decref(k.setup);
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

static int prepare(struct kb_knee_ctx *x, int argc, char **argv)
{
    char err[1024];
    int rc = kb_knee_prepare(x, err, sizeof(err));
    if (rc == 2)
        return bad("%s", err);
    if (rc) {
        fprintf(stderr, "kneebench knee: %s\n", err);
        return rc;
    }
    kb_run_signals();
    return search(x, argc, argv);
}

int cmd_knee(int argc, char **argv)
{
    static struct kb_knee_ctx x;
    char err[512];
    int rc;
    memset(&x, 0, sizeof(x));
    x.a.warmup = x.a.drain = x.a.hold = -1;
    x.a.reconnect = -1;
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
    rc = kb_knee_defaults(&x.a, &x.ct, err, sizeof(err)) ? bad("%s", err) : 0;
    if (!rc)
        rc = prepare(&x, argc, argv);
    kb_target_close(&x.t);
    kb_contract_free(&x.ct);
    return rc;
}

