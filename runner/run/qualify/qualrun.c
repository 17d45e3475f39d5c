/* qualrun.c -- see qualrun.h. Order of a run: cluster, fixture (limits, identity, /db
 * answering exactly), /stats sampler thread, the load child (server RSS and descriptors
 * sampled by the drive loop), postflight, the gauges' return to zero, the judgement, the
 * evidence, DONE. Every failure before the load becomes the run's preflight reason (a failed
 * qualification, never a crash); an interruption leaves no marker. */
#define _GNU_SOURCE
#include "runner/run/qualify/qualrun.h"
#include "runner/util/evidence.h"
#include "runner/run/fixseries.h"

#include "runner/sandbox/spawn.h"
#include "runner/util/clock.h"
#include "runner/util/paths.h"
#include "runner/util/jfield.h"

#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

int kb_qual_params_from(const struct kb_contract *c, struct kb_qual_params *p, char *err,
                        size_t errlen)
{
    const struct kb_qualification *q = &c->qual;
    memset(p, 0, sizeof(*p));
    if (!q->present) {
        snprintf(err, errlen, "the contract %s has no qualification section", c->path);
        return -1;
    }
    p->rate = q->rate;
    p->duration_s = q->duration_s;
    p->warmup_s = q->warmup_s;
    p->settle_s = q->settle_s;
    p->drain_s = q->drain_s;
    p->threads = q->threads;
    p->connections = q->connections;
    p->db_pool = q->db_pool;
    p->sample_every_s = q->sample_every_s;
    p->stats_every_s = q->stats_every_s;
    p->rest_timeout_s = q->rest_timeout_s;
    p->crit.point = kb_criteria_of(c);
    p->crit.min_stats_per_s = q->min_stats_per_s;
    return 0;
}

int kb_qual_params_check(const struct kb_qual_params *p, char *err, size_t errlen)
{
    if (p->settle_s >= p->duration_s)
        snprintf(err, errlen, "the settling window (%g s) must end inside the measured "
                 "interval (%g s): RSS and descriptors need samples", p->settle_s, p->duration_s);
    else if (p->sample_every_s * 2 > p->duration_s - p->settle_s)
        snprintf(err, errlen, "sampling every %g s leaves fewer than 2 RSS samples in the "
                 "%g s after settling", p->sample_every_s, p->duration_s - p->settle_s);
    else if (p->stats_every_s * p->crit.min_stats_per_s > 1.0)
        snprintf(err, errlen, "/stats every %g s cannot reach the %g reads a second the "
                 "criterion asks", p->stats_every_s, p->crit.min_stats_per_s);
    else
        return 0;
    return -1;
}

static json_t *plan_json(const struct kb_qualrun *q, const struct kb_qual_params *p)
{
    const struct kb_qualification *k = &q->r.c.qual;
    json_t *g = json_array();
    for (size_t i = 0; i < k->zero_gauges.n; i++)
        json_array_append_new(g, json_string(k->zero_gauges.v[i]));
    return json_pack("{s:s,s:s,s:s,s:I,s:f,s:f,s:f,s:f,s:i,s:i,s:i,s:f,s:f,s:f,s:b,s:s,s:s,"
                     "s:{s:f,s:I,s:f,s:I,s:I,s:o}}",
        "kind", "qualification", "runtime", KB_QUAL_RUNTIME, "route", k->route,
        "rate", (json_int_t)p->rate, "duration_s", p->duration_s, "warmup_s", p->warmup_s,
        "settle_s", p->settle_s, "drain_s", p->drain_s, "threads", p->threads,
        "connections", p->connections, "db_pool", p->db_pool,
        "sample_every_s", p->sample_every_s, "stats_every_s", p->stats_every_s,
        "rest_timeout_s", p->rest_timeout_s, "unconstrained", q->r.fx.no_limits,
        "server_cpus", q->r.fx.server_cpus, "client_cpus", q->r.fx.client_cpus,
        "criteria", "min_delivery", p->crit.point.min_delivery,
        "max_p99_us", (json_int_t)p->crit.point.max_p99_us,
        "min_stats_per_s", p->crit.min_stats_per_s,
        "client_lag_p99_max_us", (json_int_t)p->crit.point.client_lag_p99_max_us,
        "client_rx_delay_p99_max_us", (json_int_t)p->crit.point.client_rx_delay_p99_max_us,
        "zero_gauges", g);
}

/* run.json through the run skeleton: gray-static's version as for curve and soak, and
 * PostgreSQL's, which the qualification depends on as much as on the server. */
static int run_identity(struct kb_qualrun *q, int argc, char **argv, char *err, size_t errlen)
{
    char pg[512];
    char *names[] = { KB_QUAL_RUNTIME };
    kb_run_pg_version(&q->r, pg, sizeof(pg));
    return kb_run_identity(&q->r, argc, argv, "qualification", kb_run_versions(&q->r, names, 1),
                           json_pack("{s:s}", "postgresql", pg), err, errlen);
}

int kb_qualrun_setup(struct kb_qualrun *q, const struct kb_fixture_opts *o,
                     const struct kb_qual_params *p, int argc, char **argv, char *err,
                     size_t errlen)
{
    const struct kb_contract *c = &q->r.c;
    /* the paper qualified its readiness design: the runtime whose db arguments select it */
    if (!(q->r.fx.rt = kb_contract_db_runtime(c, KB_QUAL_RUNTIME, "readiness"))) {
        snprintf(err, errlen, "the contract has no runtime " KB_QUAL_RUNTIME " with db "
                 "arguments for the readiness design (db_mode)");
        return -1;
    }
    if (!kb_contract_route(c, c->qual.route)) {
        snprintf(err, errlen, "the contract has no route '%s'", c->qual.route);
        return -1;
    }
    if (kb_run_setup(&q->r, o, err, errlen) < 0 ||
        kb_run_db_place(&q->r, NULL, err, errlen) < 0 ||
        kb_run_plan_file(q->r.dir, plan_json(q, p), "qualification plan", err, errlen) < 0)
        return -1;
    return run_identity(q, argc, argv, err, errlen);
}

/* ---- the fixture ---------------------------------------------------------------------- */

/* Cluster, fixture, identity, the route answering exactly: the first failure into reason. */
static void start_all(struct kb_qualrun *q, const struct kb_qual_params *p, char **argv,
                      char *reason, size_t reasonlen)
{
    char err[1024], path[KB_PATH_MAX], fixdir[KB_PATH_MAX], pgdir[KB_PATH_MAX];
    const struct kb_route *r = kb_contract_route(&q->r.c, q->r.c.qual.route);
    q->r.fx.port = kb_free_port(err, sizeof(err));
    kb_path(fixdir, sizeof(fixdir), q->r.dir, "fixture");
    kb_path(pgdir, sizeof(pgdir), q->r.dir, "pg");
    if (kb_run_launch(&q->r, fixdir, pgdir, p->db_pool, argv, reason, reasonlen) < 0)
        return;
    if (q->r.fixture_ev.file[0]) {      /* its limits.json, or its directory, not written */
        snprintf(reason, reasonlen, "%.60s: %.150s", q->r.fixture_ev.file,
                 q->r.fixture_ev.reason);
        return;
    }
    kb_path(path, sizeof(path), fixdir, "identity.json");
    if (kb_run_evidence_json(path, q->r.fx.identity, err, sizeof(err)) < 0)
        snprintf(reason, reasonlen, "%.200s", err);
    else if (kb_pgrun_wait_route(q->r.fx.port, r, 15000, kb_fixture_alive, &q->r.fx, err,
                                 sizeof(err)) < 0)
        snprintf(reason, reasonlen, "%s: %.200s", r->path, err);
}

static int write_preflight(struct kb_qualrun *q, const struct kb_point_obs *o, char *err,
                           size_t errlen)
{
    char path[KB_PATH_MAX];
    json_t *pre = json_pack("{s:b,s:s,s:i}", "failed", o->preflight_failed, "reason",
                            o->preflight_reason, "port", q->r.fx.port);
    int rc = kb_run_evidence_json(kb_path(path, sizeof(path), q->r.dir, "fixture/preflight.json"),
                                  pre, err, errlen);
    json_decref(pre);
    return rc;
}

static int write_command(struct kb_qualrun *q, const struct kb_qual_params *p, char **argv,
                         char *err, size_t errlen)
{
    const struct kb_route *r = kb_contract_route(&q->r.c, q->r.c.qual.route);
    char path[KB_PATH_MAX];
    json_t *fx = json_array(), *j;
    int rc;
    for (size_t i = 0; argv[i]; i++)
        json_array_append_new(fx, json_string(argv[i]));
    j = json_pack("{s:s,s:s,s:I,s:s,s:i,s:f,s:f,s:f,s:i,s:i,s:o,s:s}", "runtime",
                  KB_QUAL_RUNTIME, "route", r->name, "rate", (json_int_t)p->rate, "url_path",
                  r->path, "port", q->r.fx.port, "duration_s", p->duration_s, "warmup_s",
                  p->warmup_s, "drain_s", p->drain_s, "threads", p->threads, "connections",
                  p->connections, "fixture_argv", fx, "load_generator", q->r.fx.load_cmd);
    rc = kb_run_evidence_json(kb_path(path, sizeof(path), q->r.dir, "command.json"), j, err,
                              errlen);
    json_decref(j);
    return rc;
}

/* ---- sampling ------------------------------------------------------------------------- */

struct rsamples {
    struct kb_qualrun *q;
    struct kb_afile *csv;
    double t0;                 /* the load's start: the sampler's origin too */
    struct kb_fixseries fs;    /* the fixture's samples, seconds from the load's start */
};

/* The drive loop's callback: server RSS and descriptors, into samples.csv and the series. */
static void sample_server(void *arg, double t0, double now)
{
    struct rsamples *s = arg;
    struct kb_proc_sample srv;
    double t = now - s->t0;
    (void)t0;
    kb_fixture_sample_server(&s->q->r.fx, &srv);
    /* a failed write stays in the stream's error flag, which kb_run_csv_close() reads */
    fprintf(s->csv->f, "%.3f,%.2f,%lld,%lld,%ld,%ld,%zu\n", t, srv.cpu_seconds, srv.rss_bytes,
            srv.pss_bytes, srv.fds, srv.threads, srv.nprocs);
    fflush(s->csv->f);
    kb_fixseries_add(&s->fs, t, &srv);
}

/* After the load: the sampler goes on until a sample read after the load's end has every
 * gauge at zero (at a low rate one taken between two requests may read zero too), or
 * rest_timeout_s. */
struct rest {
    struct kb_qualrun *q;
    double ended;              /* the load's end, on the sampler's clock */
};

static int at_rest(void *p)
{
    struct rest *w = p;
    const struct kb_strlist *g = &w->q->r.c.qual.zero_gauges;
    char why[256];
    double t = -1;
    json_t *j = kb_stats_sampler_latest(w->q->sampler, &t);
    int zero = j && t >= w->ended && kb_qual_gauges_zero(j, g->v, g->n, why, sizeof(why));
    json_decref(j);
    return zero;
}

static int rest_worth_waiting(void *p)
{
    struct rest *w = p;
    return !(w->q->r.fx.stop && *w->q->r.fx.stop) && kb_fixture_alive(&w->q->r.fx);
}

static void wait_for_rest(struct kb_qualrun *q, const struct kb_qual_params *p, double t0)
{
    struct rest w = { q, kb_fixture_now_s() - t0 };
    kb_poll_until(at_rest, rest_worth_waiting, &w, (long)(p->rest_timeout_s * 1000),
                  (long)(p->stats_every_s * 1000) + 1);
}

/* The load with both samplers: 0, or -1 when interrupted or the evidence failed. */
static int drive(struct kb_qualrun *q, const struct kb_qual_params *p, struct rsamples *rs,
                 struct kb_qual_obs *o, struct kb_point_load *lr, json_t **load, char *err,
                 size_t errlen)
{
    const struct kb_fixture_load ld = { .duration_s = p->duration_s, .warmup_s = p->warmup_s,
        .drain_s = p->drain_s, .threads = p->threads, .connections = p->connections };
    const struct kb_fixture_sampling sp = { .first_s = p->warmup_s + p->settle_s,
        .every_s = p->sample_every_s, .until_s = p->warmup_s + p->duration_s + 0.05,
        .sample = sample_server, .arg = rs, .kill_signal = SIGTERM };
    struct kb_run_evidence ev = { "", "" };
    char path[KB_PATH_MAX];
    int rc;
    if (!(rs->csv = kb_run_csv_open(&ev, q->r.dir, "samples.csv", "t_s,server_cpu_s,"
                                    "server_rss_bytes,server_pss_bytes,server_fds,"
                                    "server_threads,server_procs\n"))) {
        snprintf(err, errlen, "%s: %s", ev.file, ev.reason);
        return -1;
    }
    rs->t0 = kb_fixture_now_s();
    q->sampler = kb_stats_sampler_start(q->r.fx.target[0] ? q->r.fx.target : NULL, q->r.fx.port,
                                        "/stats", p->stats_every_s, rs->t0,
                                        kb_path(path, sizeof(path), q->r.dir, "stats.jsonl"), err,
                                        errlen);
    rc = q->sampler ? kb_fixture_drive(&q->r.fx, &ld, q->r.c.qual.route, p->rate, q->r.dir, &sp,
                                   &o->point) : -1;
    if (q->sampler && rc < 0 && o->point.load_problem[0])
        snprintf(err, errlen, "the load generator did not start: %.400s", o->point.load_problem);
    if (rc == 0) {
        /* the load's own files unwritten: the harness failed, no verdict on the server */
        if (kb_fixture_read_load(q->r.dir, &o->point, lr, load) < 0) {
            snprintf(err, errlen, "%.600s", o->point.load_problem);
            rc = -1;
        }
        kb_fixture_postflight(&q->r.fx, kb_contract_route(&q->r.c, q->r.c.qual.route), &o->point);
        wait_for_rest(q, p, rs->t0);
    }
    if (q->sampler && kb_stats_sampler_stop(q->sampler, rc == 0, err, errlen) < 0)
        rc = -1;
    if (rc == 0 && kb_run_csv_close(&ev, &rs->csv, "samples.csv") < 0) {
        snprintf(err, errlen, "%s: %s", ev.file, ev.reason);
        rc = -1;
    }
    kb_run_csv_abort(&rs->csv);   /* the run failed first: no samples.csv */
    return q->r.fx.stop && *q->r.fx.stop ? -1 : rc;
}

/* ---- judgement and evidence ----------------------------------------------------------- */

static json_t *growth_json(const struct kb_growth *g, int have)
{
    if (!have)
        return json_pack("{s:I}", "n", (json_int_t)g->n);
    return json_pack("{s:I,s:f,s:f,s:f,s:f,s:f,s:f,s:f}", "n", (json_int_t)g->n, "first",
                     g->first, "last", g->last, "min", g->min, "max", g->max, "rise", g->rise,
                     "window_s", g->window_s, "every_s", g->every_s);
}

/* The measured interval on the samples' clock: the load generator's own (load.json's
 * monotonic interval_start/end, the clock kb_fixture_now_s() reads), else the nominal one. */
static void measured_window(const struct kb_qual_params *p, double t0,
                            const struct kb_point_load *lr, double *from, double *to)
{
    double a = lr->interval_start_mono_s, b = lr->interval_end_mono_s;
    if (a > t0 && b > a) {                 /* NAN when load.json has none */
        *from = a - t0;
        *to = b - t0;
    } else {
        *from = p->warmup_s;
        *to = p->warmup_s + p->duration_s;
    }
}

static json_t *stats_json(const struct kb_stats_summary *s, const struct kb_qual_params *p,
                          double t0, double from, double to, json_t *final)
{
    return json_pack("{s:f,s:s,s:f,s:f,s:f,s:I,s:I,s:I,s:f,s:f,s:f,s:I,s:I,s:b,s:b,s:s,s:O}",
        "every_s", p->stats_every_s, "file", "stats.jsonl", "origin_mono_s", t0,
        "measured_from_s", from, "measured_to_s", to, "samples", (json_int_t)s->samples,
        "ok", (json_int_t)s->ok, "ok_measured", (json_int_t)s->ok_measured, "measured_s",
        s->measured_s, "per_s", s->per_s, "max_gap_s", s->max_gap_s, "suspended_now_max",
        (json_int_t)s->suspended_now_max, "suspended_max_server",
        (json_int_t)s->suspended_max_server, "final_ok", s->final_ok, "final_zero",
        s->final_zero, "final_nonzero", s->final_nonzero, "final", final ? final : json_null());
}

/* Growth, /stats summary, verdict; verdict.json, then DONE. The verdict, or -1. */
static int finish(struct kb_qualrun *q, const struct kb_qual_params *p, struct rsamples *rs,
                  struct kb_qual_obs *o, const struct kb_point_load *lr, json_t *load,
                  char *err, size_t errlen)
{
    const struct kb_strlist *g = &q->r.c.qual.zero_gauges;
    const struct kb_stats_sample *ss = NULL;
    size_t nss = 0;
    char path[KB_PATH_MAX], reason[1024];
    json_t *v, *plan = kb_evidence_load(kb_path(path, sizeof(path), q->r.dir,
                                                            "plan.json"), NULL);
    enum kb_qual_verdict verdict;
    double from, to;
    int rc;
    o->have_rss = kb_qual_growth(rs->fs.t, rs->fs.rss, rs->fs.n, &o->rss) == 0;
    o->have_fds = kb_qual_growth(rs->fs.t, rs->fs.fds, rs->fs.n, &o->fds) == 0;
    if (q->sampler)
        ss = kb_stats_sampler_series(q->sampler, &nss);
    measured_window(p, rs->t0, lr, &from, &to);
    kb_qual_stats_summary(ss, nss, from, to, g->v, g->n, &o->stats);
    verdict = kb_qual_judge(lr, o, &p->crit, reason, sizeof(reason));
    v = json_pack("{s:s,s:s,s:I,s:f,s:f,s:f,s:f,s:s,s:s,s:O,s:o,s:o,s:o,s:o,s:s,"
                  "s:{s:s,s:s,s:b}}", "kind", "qualification", "route", q->r.c.qual.route,
        "rate", (json_int_t)p->rate, "duration_s", p->duration_s, "warmup_s", p->warmup_s,
        "settle_s", p->settle_s, "drain_s", p->drain_s,
        "verdict", kb_qual_verdict_name(verdict), "reason", reason,
        "criteria", json_object_get(plan, "criteria"),
        "load", load ? json_incref(load) : json_null(),
        "rss_bytes", growth_json(&o->rss, o->have_rss),
        "fds", growth_json(&o->fds, o->have_fds),
        "stats", stats_json(&o->stats, p, rs->t0, from, to, nss ? ss[nss - 1].stats : NULL),
        "identity_sha256", q->r.fx.identity ? kb_jstr(q->r.fx.identity, "sha256", "") : "",
        "placement", "server_cpus", q->r.fx.server_cpus, "client_cpus", q->r.fx.client_cpus,
        "unconstrained", q->r.fx.no_limits);
    json_decref(plan);
    rc = v ? kb_run_evidence_json(kb_path(path, sizeof(path), q->r.dir, "verdict.json"), v, err,
                                  errlen) : -1;
    json_decref(v);
    if (rc == 0) {
        json_t *m = json_pack("{s:s}", "verdict", kb_qual_verdict_name(verdict));
        rc = kb_run_evidence_json(kb_path(path, sizeof(path), q->r.dir, "DONE"), m, err, errlen);
        json_decref(m);
    }
    return rc < 0 ? -1 : (int)verdict;
}

int kb_qualrun_exec(struct kb_qualrun *q, const struct kb_qual_params *p, char *err,
                    size_t errlen)
{
    char path[KB_PATH_MAX], *argv[64] = { 0 };
    struct kb_qual_obs o;
    struct kb_point_load lr;
    struct rsamples *rs = calloc(1, sizeof(*rs));
    json_t *load = NULL;
    int rc = -1;
    memset(&o, 0, sizeof(o));
    memset(&lr, 0, sizeof(lr));
    if (!rs) {
        snprintf(err, errlen, "out of memory");
        return -1;
    }
    rs->q = q;
    kb_fixseries_init(&rs->fs, 1 << 16);
    /* a re-run redoes the whole run: no marker or verdict of an earlier one may stand */
    unlink(kb_path(path, sizeof(path), q->r.dir, "DONE"));
    unlink(kb_path(path, sizeof(path), q->r.dir, "verdict.json"));
    start_all(q, p, argv, o.point.preflight_reason, sizeof(o.point.preflight_reason));
    o.point.preflight_failed = o.point.preflight_reason[0] != '\0';
    if ((q->r.fx.stop && *q->r.fx.stop) || write_preflight(q, &o.point, err, errlen) < 0 ||
        write_command(q, p, argv, err, errlen) < 0)
        goto out;
    if (!o.point.preflight_failed && drive(q, p, rs, &o, &lr, &load, err, errlen) < 0)
        goto out;
    rc = finish(q, p, rs, &o, &lr, load, err, errlen);
out:
    json_decref(load);
    kb_tmpl_free(argv, 64);
    kb_fixseries_free(&rs->fs);
    free(rs);
    return rc;
}

void kb_qualrun_close(struct kb_qualrun *q)
{
    kb_fixture_kill_load(&q->r.fx, SIGTERM);
    kb_stats_sampler_free(q->sampler);
    q->sampler = NULL;
    kb_run_close(&q->r, SIGTERM);
}
