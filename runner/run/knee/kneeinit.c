/* kneeinit.c -- a knee search made ready (kneeinit.h). */
#define _GNU_SOURCE
#include "runner/run/knee/kneeinit.h"

#include <errno.h>
#include <jansson.h>
#include <math.h>
#include <sched.h>
#include <stdio.h>
#include <string.h>
#include <signal.h>
#include <time.h>

#include "runner/load/loadgen.h"
#include "runner/run/procwatch.h"
#include "runner/run/run.h"
#include "runner/util/cpulist.h"
#include "runner/util/digest.h"
#include "runner/util/paths.h"
#include "runner/util/identity.h"

/* plan.json: what must match for a re-run to resume this search. */
static json_t *plan_json(const struct kb_knee_args *a, const struct kb_target *t,
                         const struct kb_criteria *c)
{
    json_t *h = json_array();
    for (int i = 0; i < a->spec.nheaders; i++)
        json_array_append_new(h, json_string(a->spec.headers[i]));
    return json_pack("{s:s,s:s,s:o,s:o,s:{s:f,s:I,s:f,s:I,s:I},s:{s:I,s:I,s:I,s:f,s:f,s:i,s:f,s:f},"
                     "s:{s:f,s:f,s:f,s:i,s:i,s:I,s:I,s:s,s:b}}",
        "url", a->spec.url, "expect", t->expectation,
        "route", t->route ? json_string(t->route) : json_null(), "headers", h,
        "criteria", "min_delivery", c->min_delivery, "max_p99_us", (json_int_t)c->max_p99_us,
        "client_cpu_max_fraction", c->client_cpu_max_fraction, "client_lag_p99_max_us",
        (json_int_t)c->client_lag_p99_max_us, "client_rx_delay_p99_max_us",
        (json_int_t)c->client_rx_delay_p99_max_us,
        "search", "start_rate", (json_int_t)llround(a->start), "min_rate",
        (json_int_t)llround(a->min), "max_rate", (json_int_t)llround(a->max), "factor",
        a->factor, "resolution", a->resolution / 100, "confirm", (int)a->confirm,
        "hold_s", a->hold, "hold_warmup_s", a->hold_warmup,
        "point", "warmup_s", a->warmup, "duration_s", a->duration, "drain_s", a->drain,
        "threads", (int)a->threads, "connections", (int)a->connections, "timeout_ms",
        (json_int_t)llround(a->timeout * 1000), "send_quantum_us", (json_int_t)a->quantum_us,
        "dispatch", kb_load_dispatch_names[a->per_connection], "reconnect", a->reconnect);
}

/* run.json: this invocation (a resumed one beside the first's). */
static int identity(const struct kb_knee_ctx *x, int argc, char **argv, char *err,
                    size_t errlen)
{
    char hex[KB_SHA256_HEX], chex[KB_SHA256_HEX], when[64], why[128];
    json_t *args = json_array(), *run, *pids = json_array();
    time_t t = time(NULL);
    int rc;
    for (int i = 0; i < x->srv.npids; i++)
        json_array_append_new(pids, json_integer(x->srv.pids[i]));
    for (int i = 0; i < argc; i++)
        json_array_append_new(args, json_string(argv[i]));
    strftime(when, sizeof(when), "%Y-%m-%dT%H:%M:%SZ", gmtime(&t));
    if (kb_sha256_file("/proc/self/exe", hex, why, sizeof(why)) < 0)
        snprintf(hex, sizeof(hex), "unknown");
    if (kb_sha256_file(x->ct.path, chex, why, sizeof(why)) < 0)
        snprintf(chex, sizeof(chex), "unknown");
    run = json_pack("{s:s,s:s,s:o,s:s,s:s,s:s,s:o,s:{s:o,s:s,s:o,s:s},s:{s:s},s:f}", "kind",
        "knee", "started", when, "command_line", args, "runner_sha256", hex, "contract",
        x->ct.path, "contract_sha256", chex, "host", kb_host_identity(), "server", "pids", pids,
        "found_by", x->srv.by_port ? "port" : x->srv.npids ? "--pid" : "none", "cgroup",
        x->a.cgroup ? json_string(x->a.cgroup) : json_null(), "cpus", x->srv.cpus,
        "client", "cpus", x->srv.client, "max_time_s", x->a.max_time);
    rc = kb_run_identity_file(x->dir, run, t, err, errlen);
    json_decref(run);
    return rc;
}

/* The run directory, absolute: --run, or runs/knee-<UTC time> here. 0, or 2 with err. */
static int run_dir(const struct kb_knee_args *a, char *dir, size_t len, char *err,
                   size_t errlen)
{
    char given[256], why[256];
    time_t t = time(NULL);
    if (a->run)
        snprintf(given, sizeof(given), "%s", a->run);
    else
        strftime(given, sizeof(given), "runs/knee-%Y%m%dT%H%M%SZ", gmtime(&t));
    if (kb_abspath(given, dir, len < KB_RUN_DIR_MAX ? len : KB_RUN_DIR_MAX, why, sizeof(why)) ||
        kb_mkdirs(dir, why, sizeof(why)))
        return snprintf(err, errlen, "--run: %s", why), 2;
    return 0;
}


/* Defaults from the contract and the quick profile, then every combination checked. */
int kb_knee_defaults(struct kb_knee_args *a, const struct kb_contract *ct, char *err, size_t errlen)
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
    kb_knee_hold_of(ct, &a->hold, &a->hold_warmup);
    if (!a->threads)
        a->threads = ct->threads;
    if (!a->connections)
        a->connections = ct->connections;
    if (!a->timeout)
        a->timeout = 10;
    a->quantum_us = ct->send_quantum_us;
    if (a->min > a->start || a->start > a->max)
        return snprintf(err, errlen, "the rates must keep --min-rate <= --start-rate <= "
                        "--max-rate"), 2;
    if (a->threads > a->connections)
        return snprintf(err, errlen, "--connections must be at least --threads"), 2;
    for (int i = 0; i < a->npids; i++)
        if (kill((pid_t)a->pids[i], 0) && errno == ESRCH)
            return snprintf(err, errlen, "--pid %ld: no such process", a->pids[i]), 2;
    if (a->cgroup) {
        char procs[KB_PATH_MAX];
        if (!kb_file_exists(kb_path(procs, sizeof(procs), a->cgroup, "cgroup.procs")))
            return snprintf(err, errlen, "--cgroup %s is not a cgroup v2 directory (no "
                            "cgroup.procs)", a->cgroup), 2;
    }
    return 0;
}


/* The trial requests: 0, or the command's status with err (nothing searched). */
static int trial(struct kb_knee_ctx *x, char *err, size_t errlen)
{
    char why[512];
    enum kb_trial_rc rc = kb_trial_run(&x->t, &x->trial, why, sizeof(why));
    if (rc == KB_TRIAL_REFUSED)
        return snprintf(err, errlen, "target unreachable, no load sent: %s", why), 3;
    if (rc == KB_TRIAL_WRONG)
        return snprintf(err, errlen, "%s: %s; no load sent, nothing searched", x->a.spec.url,
                        why), KB_KNEE_EXIT_TRIAL;
    return 0;
}

int kb_knee_prepare(struct kb_knee_ctx *x, char *err, size_t errlen)
{
    int rc;
    if (kb_target_open(&x->t, &x->a.spec, &x->ct, err, errlen))
        return 2;
    if (!kb_target_loopback(&x->t) && !x->a.allow_remote)
        return snprintf(err, errlen, "%s is not on loopback (127.0.0.0/8): give --allow-remote "
                        "for a server you own elsewhere", x->t.host), 2;
    /* the contract's fixtures (a route checked) keep requiring keep-alive */
    if (x->a.reconnect < 0)
        x->a.reconnect = x->t.route == NULL;
    x->crit = kb_criteria_of(&x->ct);
    if (x->a.p99_ms)
        x->crit.max_p99_us = llround(x->a.p99_ms * 1000);
    if (x->a.delivery)
        x->crit.min_delivery = x->a.delivery;
    kb_server_find(&x->srv, &x->t, x->a.pids, x->a.npids, x->a.cgroup);
    if ((rc = kb_server_client_cpus(&x->srv, x->a.cpus, &x->cpus, err, errlen)) ||
        (rc = trial(x, err, errlen)))
        return rc;
    /* made once the target answered right: a refused one leaves no run behind */
    return run_dir(&x->a, x->dir, sizeof(x->dir), err, errlen);
}

/* knee.json's "setup": what this invocation found before its first sample. */
static json_t *setup_json(const struct kb_knee_ctx *x)
{
    json_t *pids = json_array();
    for (int i = 0; i < x->srv.npids; i++)
        json_array_append_new(pids, json_integer(x->srv.pids[i]));
    return json_pack("{s:s,s:o,s:s,s:s,s:s,s:o,s:b,s:{s:i,s:I,s:s,s:b,s:i}}", "server",
        x->srv.note, "server_pids", pids, "found_by", x->srv.by_port ? "port"
        : x->srv.npids ? "--pid" : "none", "server_cpus", x->srv.cpus, "client_cpus",
        x->srv.client, "shared_cpus", x->srv.shared[0] ? json_string(x->srv.shared)
        : json_null(), "reconnect", x->a.reconnect, "trial", "status", x->trial.status,
        "body_bytes", (json_int_t)x->trial.body_bytes, "server_header", x->trial.server,
        "kept_alive", x->trial.kept > 0, "closed", x->trial.closed);
}

int kb_knee_begin(struct kb_knee_ctx *x, struct kb_kneerun *k, int argc, char **argv,
                  char *err, size_t errlen)
{
    memset(k, 0, sizeof(*k));
    k->dir = x->dir;
    k->plan = plan_json(&x->a, &x->t, &x->crit);
    k->opts = (struct kb_knee_opts){ .start_rate = llround(x->a.start),
        .min_rate = llround(x->a.min), .max_rate = llround(x->a.max), .factor = x->a.factor,
        .resolution = x->a.resolution / 100, .confirm = (int)x->a.confirm,
        .hold = x->a.hold > 0, .crit = x->crit };
    k->hold_s = x->a.hold;
    k->hold_warmup_s = x->a.hold_warmup;
    k->point = (struct kb_kneepoint_cfg){ .url = x->a.spec.url, .target = &x->t,
        .crit = &x->crit, .warmup_s = x->a.warmup, .duration_s = x->a.duration,
        .drain_s = x->a.drain, .threads = (int)x->a.threads,
        .connections = (int)x->a.connections, .timeout_ms = llround(x->a.timeout * 1000),
        .send_quantum_us = x->a.quantum_us, .client_cpus = &x->cpus, .rt = !x->a.no_rt,
        .per_connection = x->a.per_connection,
        .reconnect = x->a.reconnect,
        .watch = { .pids = x->srv.pids, .npids = x->srv.npids, .cgroup = x->a.cgroup,
                   .server_cpus = x->srv.cpus[0] ? x->srv.cpus : NULL,
                   .client_cpus = x->srv.client, .every_s = 0.25 } };
    k->max_time_s = x->a.max_time;
    k->stopped = kb_run_interrupted;
    k->setup = setup_json(x);
    if (kb_kneerun_plan(x->dir, json_incref(k->plan), err, errlen))
        return -1;
    return identity(x, argc, argv, err, errlen);
}
