/* curve.c -- the curve run as a whole: its plan and identity, the calibration gate, the
 * points in order with their progress lines, and the close (curve.h). */
#define _GNU_SOURCE
#include "runner/run/curve/curve.h"
#include "runner/util/evidence.h"

#include <jansson.h>
#include <math.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "contract/contract.h"
#include "runner/run/calibrate.h"
#include "runner/run/dbplace.h"
#include "runner/run/fixture.h"
#include "runner/run/kneesearch.h"
#include "runner/sandbox/sandbox.h"
#include "runner/util/paths.h"
#include "runner/util/root.h"

/* ---- plan file (resume) --------------------------------------------------------------- */

static json_t *plan_json(const struct kb_curve *cv)
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
    if (plan)
        json_object_set_new(plan, "order", json_string(p->interleaved ? "interleaved"
                                                                       : "sequential"));
    /* only when asked: the plans of runs made before the option resume as they were */
    if (plan && cv->per_connection)
        json_object_set_new(plan, "dispatch", json_string("per-connection"));
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
static int write_or_check_plan(struct kb_curve *cv, char *err, size_t errlen)
{
    return kb_run_plan_file(cv->r.dir, plan_json(cv), "plan (profile, matrix, placement or limits)",
                           err, errlen);
}

/* ---- identity ------------------------------------------------------------------------- */

static int db_planned(const struct kb_curve *cv);

/* run.json: the skeleton's identity, with every planned runtime's version and, where the
 * db route runs, PostgreSQL's: its figures depend on it as much as on the server. */
static int write_run_identity(struct kb_curve *cv, int argc, char **argv, char *err, size_t errlen)
{
    json_t *v = kb_run_versions(&cv->r, cv->plan.runtimes.v, cv->plan.runtimes.n);
    char pg[512];
    if (db_planned(cv)) {
        kb_run_pg_version(&cv->r, pg, sizeof(pg));
        json_object_set_new(v, "postgresql", json_string(pg));
    }
    return kb_run_identity(&cv->r, argc, argv, NULL, v, NULL, err, errlen);
}

void kb_curve_progress(struct kb_curve *cv, const struct kb_point *pt, const char *verdict,
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

static void kb_curve_show_kept(struct kb_curve *cv, const struct kb_point *pt, const char *dir)
{
    char path[KB_PATH_MAX], err[KB_PATH_MAX + 512];
    struct kb_point_load lr;
    json_t *v;
    kb_path(path, sizeof(path), dir, "verdict.json");
    /* shown without a verdict when unreadable; the report refuses a newer one by name */
    if (kb_evidence_read(path, &v, err, sizeof(err)) == KB_EVIDENCE_REFUSED)
        fprintf(stderr, "kneebench curve: kept point not read: %s\n", err);
    cv->finished++;
    kb_curve_progress(cv, pt, json_string_value(json_object_get(v, "verdict")),
                      kb_point_load_parse(json_object_get(v, "load"), &lr, err, sizeof(err)) == 0
                          ? &lr : NULL, 1);
    json_decref(v);
}

/* ---- setup and the whole run ---------------------------------------------------------- */

/* 1 when a planned runtime would need the run's PostgreSQL (the db route). */
static int db_planned(const struct kb_curve *cv)
{
    for (size_t i = 0; i < cv->plan.runtimes.n; i++) {
        const struct kb_runtime *rt = kb_contract_runtime(&cv->r.c, cv->plan.runtimes.v[i]);
        if (rt && rt->db_command_extra.n && kb_curve_plan_has(cv, rt->name, "db"))
            return 1;
    }
    return 0;
}

/* The db route's PostgreSQL CPUs beside the server's and client's (runner/run/dbplace.h):
 * what the pgcluster pins it to, and which roles share, said here and recorded. */
static int db_placement(struct kb_curve *cv, const char *db_cpus, char *err, size_t errlen)
{
    if (!db_planned(cv)) {
        if (db_cpus)
            snprintf(err, errlen, "--db-cpus is for the db route, which this plan does not run");
        return db_cpus ? -1 : 0;
    }
    return kb_run_db_place(&cv->r, db_cpus, err, errlen);
}

/* The interleaved order keeps every fixture up at once: a backend that runs one at a time
 * gets the sequential order, said on stderr, unless --order asked for interleaving. */
static int side_by_side(struct kb_curve *cv, const struct kb_curve_opts *a, char *err,
                        size_t errlen)
{
    struct kb_plan_opts po = a->plan;
    if (!cv->plan.interleaved || kb_sandbox_several(cv->r.fx.sandbox))
        return 0;
    if (a->plan.order) {
        snprintf(err, errlen, "--order interleaved: the %s backend runs one fixture at a time",
                 a->backend);
        return -1;
    }
    fprintf(stderr, "kneebench curve: the %s backend runs one fixture at a time: the runtimes "
            "run one after another (--order sequential)\n", a->backend);
    po.order = "sequential";
    kb_plan_free(&cv->plan);
    return kb_matrix_plan(&cv->r.c, &po, &cv->plan, err, errlen);
}

static int setup(struct kb_curve *cv, const struct kb_curve_opts *a, char *err, size_t errlen)
{
    const struct kb_fixture_opts fo = { .backend = a->backend,
        .build = a->build ? a->build : kb_root_build(), .server_cpus = a->scpus,
        .client_cpus = a->ccpus, .controller_cpus = a->ctlcpus, .load_cmd = a->load_cmd, .no_limits = a->no_limits,
        .client_other = a->client_other, .image = a->image,
        .docker_host = a->docker_host, .docker_context = a->docker_context,
        .target = a->target };
    cv->free_ports = a->free_ports;
    cv->requests_log = a->requests_log;
    cv->per_connection = a->per_connection;
    cv->refine = a->refine;
    if (kb_run_open(&cv->r, "curve", a->run, a->contract, err, errlen) < 0)
        return -1;
    /* read from the run's contract, so after it is opened */
    cv->hold_s = a->hold;
    kb_knee_hold_of(&cv->r.c, &cv->hold_s, &cv->hold_warmup_s);
    if (kb_matrix_plan(&cv->r.c, &a->plan, &cv->plan, err, errlen) < 0)
        return -1;
    if (kb_run_setup(&cv->r, &fo, err, errlen) < 0 || side_by_side(cv, a, err, errlen) < 0)
        return -1;
    return db_placement(cv, a->db_cpus, err, errlen);
}

void kb_curve_close(struct kb_curve *cv)
{
    kb_fixture_kill_load(&cv->r.fx, SIGKILL);
    kb_curve_stop_all(cv);
    cv->r.fx.rt = NULL;
    kb_run_close(&cv->r, SIGKILL);
    kb_plan_free(&cv->plan);
    free(cv->cal);
}

/* --calibrate: prove the client's margin over the plan's top rate (reusing a complete
 * DIR/calibrate/calibrate.json on resume). -1 when it cannot run or, without --force, when
 * the margin is not proven. */
static int calibrate_gate(struct kb_curve *cv, const struct kb_curve_opts *a, char *err, size_t errlen)
{
    struct kb_calibrate_cfg cfg = { .warmup_s = -1, .progress = stdout };
    char dir[KB_PATH_MAX], path[KB_PATH_MAX];
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
           !cv->cal->proven && a->force ? "; --force: a point that misses while carrying more "
           "than it covers is client-limited" : "");
    if (!cv->cal->proven && !a->force) {
        snprintf(err, errlen, "the client cannot prove its margin (see %.600s); --force runs "
                 "anyway, a point that misses while carrying more than it covers "
                 "client-limited", path);
        return -1;
    }
    return 0;
}

/* Each point of pts in order, a complete one kept; the count that could not be run. */
int kb_curve_run_points(struct kb_curve *cv, const struct kb_point *pts, size_t n)
{
    char dir[KB_PATH_MAX], err[1400];
    int failures = 0;
    cv->finished = 0;
    cv->total = n;
    for (size_t i = 0; i < n && !kb_run_interrupted(); i++) {
        const struct kb_point *pt = &pts[i];
        snprintf(dir, sizeof(dir), "%s/points/%s", cv->r.dir, pt->id);
        if (kb_run_point_done(dir)) {
            kb_curve_show_kept(cv, pt, dir);
            continue;
        }
        kb_curve_floor_before(cv, pt);
        if (kb_curve_run_point(cv, pt, dir, err, sizeof(err)) < 0 && !kb_run_interrupted()) {
            fprintf(stderr, "kneebench curve: %s\n", err);
            failures++;
        }
    }
    return failures;
}


int kb_curve_open(struct kb_curve *cv, const struct kb_curve_opts *o, int argc, char **argv,
                  char *err, size_t errlen)
{
    char path[KB_PATH_MAX];
    memset(cv, 0, sizeof(*cv));
    if (setup(cv, o, err, errlen) < 0 || write_or_check_plan(cv, err, errlen) < 0 ||
        write_run_identity(cv, argc, argv, err, errlen) < 0)
        return -1;
    /* what a runner killed with -9 left (the cgroups of any run; the unconstrained
     * fixtures this run directory recorded) would hold the ports and the server CPUs */
    kb_run_sweep(&cv->r, kb_path(path, sizeof(path), cv->r.dir, "fixtures"));
    return o->calibrate ? calibrate_gate(cv, o, err, errlen) : 0;
}
