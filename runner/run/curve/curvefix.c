/* curvefix.c -- the curve's fixture: started per runtime (and per repeat), its limits read
 * back, its identity held to the run's first, every planned route preflighted; a failure is
 * recorded as the preflight reason of every point it would serve, never fatal to the run
 * (curve.h). */
#define _GNU_SOURCE
#include "runner/run/curve/curve.h"
#include "runner/util/evidence.h"

#include <jansson.h>
#include <math.h>
#include <signal.h>
#include <stdio.h>
#include <string.h>

#include "contract/contract.h"
#include "runner/load/preflight.h"
#include "runner/run/fixture.h"
#include "runner/sandbox/pgcluster.h"
#include "runner/sandbox/sandbox.h"
#include "runner/sandbox/spawn.h"
#include "runner/util/paths.h"

/* How long each route is driven, unmeasured, to prime a fixture started above its lowest
 * rate, and how long that load waits for its last answers: a second is thousands of requests
 * at any planned rate, enough for node's JIT to compile the route (docs/protocol.md,
 * "Confirming the answer", measures what a cold start costs). */
#define PRIME_S 1.0
#define PRIME_DRAIN_S 0.5

void kb_curve_stop_fixture(struct kb_curve *cv)
{
    kb_run_stop_fixture(&cv->r);
    cv->r.fx.rt = NULL;
}

/* The plan's lowest rate for runtime on route, 0 when it has none there. */
static long lowest_rate(const struct kb_curve *cv, const char *runtime, const char *route)
{
    long low = 0;
    for (size_t i = 0; i < cv->plan.npoints; i++) {
        const struct kb_point *p = &cv->plan.points[i];
        if (!strcmp(p->runtime, runtime) && !strcmp(p->route, route) && (!low || p->rate < low))
            low = p->rate;
    }
    return low;
}

/* 1 when the plan has points of runtime on route (a variant, or a design --db-mode left
 * out, has none on some routes its runtime serves). */
int kb_curve_plan_has(const struct kb_curve *cv, const char *runtime, const char *route)
{
    return lowest_rate(cv, runtime, route) > 0;
}

/* Preflight every route the plan runs this runtime on; the first failure is the reason. */
static void preflight_all(struct kb_curve *cv, json_t *out)
{
    for (size_t i = 0; i < cv->plan.routes.n; i++) {
        const struct kb_route *r = kb_contract_route(&cv->r.c, cv->plan.routes.v[i]);
        char reason[512] = "";
        if (!kb_curve_plan_has(cv, cv->r.fx.rt->name, r->name))
            continue;
        /* the db pool connects after the port opens: give that route time to answer */
        int ok = (cv->r.pg.running && !strcmp(r->name, "db")
                      ? kb_pgrun_wait_route(cv->r.fx.port, r, 15000, kb_fixture_alive, &cv->r.fx,
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
static void check_identity_baseline(struct kb_curve *cv)
{
    char path[KB_PATH_MAX], err[KB_PATH_MAX + 512];
    json_t *first;
    int rc;
    kb_path(path, sizeof(path), cv->fixdir, "identity.json");
    if (!cv->r.fx.identity)
        return;
    /* a newer kneebench's baseline is neither compared by guessing nor overwritten */
    if ((rc = kb_evidence_read(path, &first, err, sizeof(err))) == KB_EVIDENCE_REFUSED) {
        if (!cv->preflight_failed) {
            cv->preflight_failed = 1;
            snprintf(cv->preflight_reason, sizeof(cv->preflight_reason), "%.500s", err);
        }
        return;
    }
    if (rc < 0) {
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

/* The fixture's command line as started: the evidence of its flags (a design's worker or
 * pool size rides on them). */
static json_t *argv_json(char *const *argv)
{
    json_t *a = json_array();
    for (size_t i = 0; i < 63 && argv[i]; i++)
        json_array_append_new(a, json_string(argv[i]));
    return a;
}

/* Start, wait until ready, read the limits back, hash, preflight. Failures are recorded as
 * the preflight reason of every point this fixture would serve, never fatal to the run. */
static void start_fixture(struct kb_curve *cv, const struct kb_runtime *rt, int repeat)
{
    char *argv[64] = { 0 }, err[1024], pgdir[KB_PATH_MAX];
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
                       rt->db_command_extra.n && kb_curve_plan_has(cv, rt->name, "db") ? pgdir : NULL,
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
    json_object_set_new(pre, "argv", argv_json(argv));
    kb_run_write_json(&cv->r.fixture_ev, cv->fixdir, "preflight.json", pre);
    json_decref(pre);
    kb_tmpl_free(argv, 64);
}

static void unsampled(void *arg, double t0, double t)
{
    (void)arg, (void)t0, (void)t;
}

/* One route driven at rate for PRIME_S into dir, nothing sampled or judged; its load's
 * outputs stay there. What it did goes into out. */
static void prime_route(struct kb_curve *cv, const char *route, long rate, const char *dir,
                        json_t *out)
{
    const struct kb_fixture_load ld = { .duration_s = PRIME_S, .warmup_s = 0,
        .drain_s = PRIME_DRAIN_S, .threads = cv->plan.threads,
        .connections = cv->plan.connections, .requests_log = 0 };
    const struct kb_fixture_sampling sp = { .first_s = 0, .every_s = 1.0, .until_s = -1,
        .sample = unsampled, .arg = NULL, .kill_signal = SIGKILL };
    struct kb_point_obs obs = { 0 };
    char err[512] = "";
    int rc = kb_mkdirs(dir, err, sizeof(err));
    if (rc == 0 && (rc = kb_fixture_drive(&cv->r.fx, &ld, route, rate, dir, &sp, &obs)) < 0)
        snprintf(err, sizeof(err), "the load generator did not run to its end%s%.300s",
                 obs.load_problem[0] ? ": " : "", obs.load_problem);
    json_array_append_new(out, json_pack("{s:s,s:I,s:f,s:i,s:s}", "route", route,
        "rate", (json_int_t)rate, "duration_s", PRIME_S,
        "load_exit", rc < 0 ? -1 : obs.load_exit, "error", err));
}

/* The matrix climbs each route from its lowest rate on one start of the server, so by its
 * boundary the runtime has compiled its hot paths (node's JIT), grown its heap and filled its
 * caches. A start whose first point lies above its route's lowest rate (a confirmation or
 * refinement round, a resumed run) would meet that rate cold, and a sample of a rate must be
 * measured as its first one was: so first every planned route is driven at its own lowest
 * rate, its outputs kept in fixtures/<runtime>/primed-for-<point>/. */
static void prime_fixture(struct kb_curve *cv, const struct kb_point *pt)
{
    char dir[KB_PATH_MAX], sub[KB_PATH_MAX];
    json_t *routes, *j;
    /* fixdir is under KB_RUN_DIR_MAX and an id under KB_NAME_MAX: it fits */
    if (pt->rate <= lowest_rate(cv, pt->runtime, pt->route) ||
        snprintf(dir, sizeof(dir), "%s/primed-for-%s", cv->fixdir, pt->id) >= (int)sizeof(dir))
        return;
    routes = json_array();
    for (size_t i = 0; i < cv->plan.routes.n && !kb_run_interrupted(); i++) {
        const char *route = cv->plan.routes.v[i];
        long low = lowest_rate(cv, pt->runtime, route);
        if (low > 0)
            prime_route(cv, route, low, kb_path(sub, sizeof(sub), dir, route), routes);
    }
    j = json_pack("{s:s,s:o}", "point", pt->id, "routes", routes);
    kb_run_write_json(&cv->r.fixture_ev, dir, "primed.json", j);
    json_decref(j);
}

/* ---- fixtures kept up side by side (the interleaved order) --------------------------------- */

/* The running fixture set aside in a free slot, still running; cv->r.fx left empty. 0, or -1
 * when every slot is taken (the caller stops it instead). */
static int park(struct kb_curve *cv)
{
    struct kb_curve_parked *p;
    if (cv->nparked == KB_CURVE_PARKED_MAX)
        return -1;
    p = &cv->parked[cv->nparked++];
    p->rt = cv->r.fx.rt;
    p->sb = cv->r.fx.sb;
    p->port = cv->r.fx.port;
    p->identity = cv->r.fx.identity;
    p->last_exit_check = cv->r.fx.last_exit_check;
    memcpy(p->target, cv->r.fx.target, sizeof(p->target));
    memcpy(p->limits_err, cv->r.fx.limits_err, sizeof(p->limits_err));
    p->repeat = cv->repeat;
    p->preflight_failed = cv->preflight_failed;
    p->harness_error = cv->harness_error;
    memcpy(p->fixdir, cv->fixdir, sizeof(p->fixdir));
    memcpy(p->preflight_reason, cv->preflight_reason, sizeof(p->preflight_reason));
    p->ev = cv->r.fixture_ev;
    cv->r.fx.rt = NULL;
    cv->r.fx.sb = NULL;
    cv->r.fx.identity = NULL;
    return 0;
}

/* Parked slot i made the running fixture again (cv->r.fx must be empty). */
static void unpark(struct kb_curve *cv, size_t i)
{
    struct kb_curve_parked *p = &cv->parked[i];
    cv->r.fx.rt = p->rt;
    cv->r.fx.sb = p->sb;
    cv->r.fx.port = p->port;
    cv->r.fx.identity = p->identity;
    cv->r.fx.last_exit_check = p->last_exit_check;
    memcpy(cv->r.fx.target, p->target, sizeof(p->target));
    memcpy(cv->r.fx.limits_err, p->limits_err, sizeof(p->limits_err));
    cv->repeat = p->repeat;
    cv->preflight_failed = p->preflight_failed;
    cv->harness_error = p->harness_error;
    memcpy(cv->fixdir, p->fixdir, sizeof(cv->fixdir));
    memcpy(cv->preflight_reason, p->preflight_reason, sizeof(cv->preflight_reason));
    cv->r.fixture_ev = p->ev;
    cv->parked[i] = cv->parked[--cv->nparked];
}

static int running_as(const struct kb_curve *cv, const struct kb_runtime *rt, int repeat)
{
    return cv->r.fx.rt == rt && cv->repeat == repeat &&
           (cv->r.fx.sb ? kb_sandbox_alive(cv->r.fx.sb) : cv->preflight_failed);
}

void kb_curve_stop_all(struct kb_curve *cv)
{
    kb_curve_stop_fixture(cv);
    while (cv->nparked) {
        unpark(cv, cv->nparked - 1);
        kb_curve_stop_fixture(cv);
    }
}

/* CPU seconds of one fixture's processes: to the nanosecond where its PIDs are this host's,
 * else as its sandbox samples them. */
static double fixture_cpu(struct kb_sandbox_fixture *sb)
{
    pid_t pids[KB_SANDBOX_MAX_PIDS];
    struct kb_proc_sample s;
    char err[256];
    double cpu;
    if (!sb)
        return 0;
    cpu = kb_procs_cpu_precise(pids, kb_sandbox_pids(sb, pids, KB_SANDBOX_MAX_PIDS));
    if (isfinite(cpu))
        return cpu;
    return kb_sandbox_sample(sb, &s, err, sizeof(err)) == 0 ? s.cpu_seconds : 0;
}

double kb_curve_server_cpu(const struct kb_curve *cv, double *others)
{
    double o = 0;
    for (size_t i = 0; i < cv->nparked; i++)
        o += fixture_cpu(cv->parked[i].sb);
    if (others)
        *others = o;
    return o + fixture_cpu(cv->r.fx.sb);
}

int kb_curve_switch_to(struct kb_curve *cv, const struct kb_runtime *rt, int repeat)
{
    if (running_as(cv, rt, repeat))
        return 0;
    /* another runtime's live fixture waits its turn; a dead one, or this runtime's, goes */
    if (!cv->r.fx.rt || cv->r.fx.rt == rt || !cv->plan.interleaved || park(cv) < 0)
        kb_curve_stop_fixture(cv);
    for (size_t i = 0; i < cv->nparked; i++) {
        if (cv->parked[i].rt != rt)
            continue;
        unpark(cv, i);
        if (running_as(cv, rt, repeat))
            return 0;
        kb_curve_stop_fixture(cv);      /* died while parked, or an earlier repeat's */
        break;
    }
    start_fixture(cv, rt, repeat);
    return 1;
}

void kb_curve_ensure_fixture(struct kb_curve *cv, const struct kb_point *pt)
{
    const struct kb_runtime *rt = kb_contract_runtime(&cv->r.c, pt->runtime);
    /* keep a live fixture; do not retry one that could not start for this runtime */
    if (kb_curve_switch_to(cv, rt, pt->repeat) && cv->r.fx.sb && !cv->preflight_failed &&
        !cv->harness_error)
        prime_fixture(cv, pt);
}
