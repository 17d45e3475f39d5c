/* loadrun.c -- one load as `kneebench load` runs it (loadrun.h). */
#define _GNU_SOURCE
#include "runner/run/loadrun.h"
#include "runner/util/paths.h"

#include <errno.h>
#include <math.h>
#include <sched.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/resource.h>
#include <unistd.h>

#include "contract/contract.h"
#include "runner/load/loadjson.h"
#include "runner/load/loadout.h"
#include "runner/load/trial.h"
#include "runner/run/serverside.h"
#include "runner/run/verdict.h"
#include "runner/util/atomicfile.h"
#include "runner/util/clock.h"
#include "runner/util/cpulist.h"

/* What the command's own refusals look like; 2. */
static int bad(const char *fmt, const char *a)
{
    fprintf(stderr, "kneebench load: ");
    fprintf(stderr, fmt, a);
    fprintf(stderr, " (kneebench load --help)\n");
    return 2;
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
    char err[KB_PATH_MAX + 512];
    if (!path)
        return 0;
    if (kb_afile_probe(path, err, sizeof(err)) < 0)
        return bad("cannot write output: %s", err);
    return 0;
}

/* The threads the client runs: at most one per CPU it may use (the quota rounded up),
 * unless --exact-threads. */
static int fit_threads(const struct kb_load_args *a, const cpu_set_t *cpus, double quota)
{
    int n = CPU_COUNT(cpus);
    if (quota > 0 && quota < n)
        n = (int)ceil(quota);
    if (a->exact_threads || n < 1 || a->threads <= n)
        return a->threads;
    return n;
}

static int write_outputs(const struct kb_load_args *a, const struct kb_load_meta *m,
                         const struct kb_load_result *res)
{
    char err[512] = "";
    int rc = 0;
    /* The requests log first: a JSON that counts its lines never appears without it. */
    if (a->requests_log && kb_loadout_write_requests(a->requests_log, res, err, sizeof(err)))
        rc = -1;
    else if (a->json && kb_loadout_write_json(a->json, m, res, err, sizeof(err)))
        rc = -1;
    else if (a->hgrm && kb_loadout_write_hgrm(a->hgrm, &res->corrected, err, sizeof(err)))
        rc = -1;
    else if (a->uhgrm && kb_loadout_write_hgrm(a->uhgrm, &res->uncorrected, err, sizeof(err)))
        rc = -1;
    if (!rc && (a->hlog || a->series_csv)) {
        if (!res->series)
            snprintf(err, sizeof(err), "no memory for the series");
        if (!res->series || kb_hlog_collector_write(res->series, a->hlog, a->series_csv, err, sizeof(err)))
            rc = -1;
    }
    if (rc)
        fprintf(stderr, "kneebench load: cannot write output: %s\n", err);
    return rc ? KB_LOAD_EXIT_OUTPUT : 0;
}

/* The client's lateness, judged as the curve judges it (runner/run/verdict.h): a warning
 * when the verdict under the contract's criteria could differ without the client's own
 * delay in each request, and then 5; 4 when any response was not right. */
static int afterwards(const struct kb_load_meta *m, const struct kb_load_result *res,
                      const struct kb_contract *ct)
{
    struct kb_criteria crit = kb_criteria_of(ct);
    struct kb_point_load pl;
    char err[256], why[256];
    json_t *j = kb_loadout_json(m, res);
    int untrusted = 0;
    if (!kb_point_load_parse(j, &pl, err, sizeof(err)) && !kb_trust_judge(&pl, &crit, why, sizeof(why))) {
        fprintf(stderr, "kneebench load: warning: the client's own lateness was large enough to "
                "matter: %s. These figures describe this host as much as the server "
                "(runner/README-load.md, \"When the client is late\").\n", why);
        untrusted = 1;
    }
    json_decref(j);
    /* wrong responses fail a point whoever was late, so they are said first */
    /* a malformed response is no more right than a mismatching one: a run of nothing but
     * garbage must not end with 0, "every response was right" */
    if (res->c.non2xx || res->c.mm_total || res->c.errors[KB_ERR_MALFORMED])
        return KB_LOAD_EXIT_NOT_RIGHT;
    return untrusted ? KB_LOAD_EXIT_CLIENT_LIMITED : 0;
}

/* The load's configuration from the arguments and the target. */
static void configure(const struct kb_load_args *a, const struct kb_target *t, const cpu_set_t *cpus,
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
        .timer = a->timer, .per_connection = a->per_connection,
        .stagger_ns = a->stagger_ns, .reconnect = a->reconnect,
    };
}

/* The server found, the client kept off its CPUs, the trial requests: 0, or the exit
 * status with the reason said. Said on stderr, so that stdout stays the summary. */
static int before_load(const struct kb_load_args *a, const struct kb_target *t, cpu_set_t *cpus)
{
    struct kb_server_side s;
    struct kb_trial tr;
    char err[1024], line[512];
    enum kb_trial_rc rc;
    kb_server_find(&s, t, a->pids, a->npids, NULL);
    if (kb_server_client_cpus(&s, a->cpus, cpus, err, sizeof(err)))
        return bad("%s", err);
    rc = kb_trial_run(t, &tr, err, sizeof(err));
    if (rc == KB_TRIAL_REFUSED) {
        fprintf(stderr, "kneebench load: target unreachable, no load sent: %s\n", err);
        return 3;
    }
    if (rc == KB_TRIAL_WRONG) {
        fprintf(stderr, "kneebench load: %s: %s; no load sent\n", a->spec.url, err);
        return KB_LOAD_EXIT_TRIAL;
    }
    kb_trial_describe(&tr, line, sizeof(line));
    if (!a->quiet)
        fprintf(stderr, "kneebench load: first requests: %s%s\n  %s\n  client: CPUs %s\n", line,
                kb_trial_closes(&tr) && a->reconnect ? " (each request reconnects)" : "",
                s.note, s.client);
    if (s.shared[0])
        fprintf(stderr, "  %s\n", s.shared);
    return 0;
}

static int measure(const struct kb_load_args *a, const struct kb_target *t, cpu_set_t *cpus,
                   const struct kb_contract *ct)
{
    struct kb_load_config cfg;
    struct kb_load_meta meta;
    struct kb_load_result res;
    char err[512];
    double quota;
    int rc;
    if (a->no_preflight && kb_load_probe(&t->addr, 2000, err, sizeof(err))) {
        fprintf(stderr, "kneebench load: target unreachable, no load sent: %s\n", err);
        return 3;
    }
    if (!a->no_preflight && (rc = before_load(a, t, cpus)))
        return rc;
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

int kb_loadrun(struct kb_load_args *a, const struct kb_contract *ct)
{
    struct kb_target t;
    cpu_set_t cpus;
    char err[512];
    int rc = 2;
    int opened = kb_target_open(&t, &a->spec, ct, err, sizeof(err)) == 0;
    /* the contract's fixtures (a route checked) keep requiring keep-alive */
    if (opened && a->reconnect < 0)
        a->reconnect = t.route == NULL;
    if (!opened)
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

