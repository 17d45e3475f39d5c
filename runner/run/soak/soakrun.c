/* soakrun.c -- the soak's phases run, sampled and judged, each with its evidence and marker
 * (soakrun.h). */
#define _GNU_SOURCE
#include "runner/run/soak/soakrun.h"
#include "runner/run/fixseries.h"

#include <jansson.h>
#include <math.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "contract/contract.h"
#include "runner/load/preflight.h"
#include "runner/run/fixture.h"
#include "runner/run/qualjudge.h"
#include "runner/run/verdict.h"
#include "runner/sandbox/pgcluster.h"
#include "runner/sandbox/procs.h"
#include "runner/sandbox/sandbox.h"
#include "runner/sandbox/spawn.h"
#include "runner/util/clock.h"
#include "runner/util/paths.h"
#include "runner/util/jfield.h"
#include "runner/util/root.h"

#define KB_SOAK_MAX_SAMPLES 100000

/* ---- the fixture and the cluster ------------------------------------------------------ */

/* Start the cluster (db), the fixture, wait, limits, identity, preflight: the first failure
 * becomes the phase's preflight reason (a failed phase, never a crash of the run). argvs
 * gets the fixture's command. */
static void start_phase(struct kb_soakrun *s, const struct kb_soak_planned *p, struct kb_soak_obs *o,
                        char *argvs[64])
{
    char err[1024], reason[512] = "", fixdir[KB_PATH_MAX], pgdir[KB_PATH_MAX];
    const struct kb_route *r = kb_contract_route(&s->r.c, p->route);
    int db = !strcmp(p->route, "db");
    json_t *pre = json_object();

    s->r.fx.rt = db ? s->db_rt : s->rt;       /* the db phase: its /db design's runtime */
    s->r.fx.port = kb_free_port(err, sizeof(err));
    snprintf(fixdir, sizeof(fixdir), "%s/fixture", p->dir);
    kb_path(pgdir, sizeof(pgdir), p->dir, "pg");
    if (db && !s->db_rt->db_command_extra.n) {
        kb_run_fixture_begin(&s->r, fixdir);
        snprintf(reason, sizeof(reason), "cluster: %s has no db_command_extra in the contract",
                 s->db_rt->name);
    } else if (kb_run_launch(&s->r, fixdir, db ? pgdir : NULL, s->db_pool, argvs, reason,
                             sizeof(reason)) == 0) {
        kb_run_write_json(&s->r.fixture_ev, fixdir, "identity.json", s->r.fx.identity);
        /* the db pool connects after the port opens: give that route time to answer */
        if (kb_pgrun_wait_route(s->r.fx.port, r, db ? 15000 : 2000, kb_fixture_alive, &s->r.fx,
                                err, sizeof(err)) < 0)
            snprintf(reason, sizeof(reason), "%s: %.200s", r->path, err);
    }
    snprintf(o->point.preflight_reason, sizeof(o->point.preflight_reason), "%s", reason);
    o->point.preflight_failed = o->point.preflight_reason[0] != '\0';
    json_object_set_new(pre, "failed", json_boolean(o->point.preflight_failed));
    json_object_set_new(pre, "reason", json_string(o->point.preflight_reason));
    json_object_set_new(pre, "port", json_integer(s->r.fx.port));
    json_object_set_new(pre, "db", json_boolean(db));
    kb_run_write_json(&s->r.fixture_ev, fixdir, "preflight.json", pre);
    json_decref(pre);
}

/* ---- sampling ------------------------------------------------------------------------- */

struct samples {
    const struct kb_soakrun *s;
    int db;                    /* the db phase: /stats too */
    struct kb_afile *csv, *stats;
    struct kb_fixseries fs;    /* the fixture's samples, seconds from the load's start */
    long suspended_max, stats_reads, stats_failures;
};

static const char *const stat_keys[] = {
    "suspended_now", "suspended_max", "queries_in_flight", "queued", "pool_idle", "pool_busy",
    "pool_connecting", "pool_down", "pool_size", "retired", "errors", "unavailable",
    "queries_total",
};
#define NSTAT (sizeof(stat_keys) / sizeof(stat_keys[0]))

static json_t *get_stats(const struct kb_soakrun *s, char *err, size_t errlen)
{
    struct kb_http_reply rep;
    json_error_t je;
    json_t *j;
    if (kb_http_get(s->r.fx.port, "/stats", 2000, &rep, err, errlen) < 0)
        return NULL;
    if (rep.status != 200 || !(j = json_loadb(rep.body, rep.body_len, 0, &je))) {
        snprintf(err, errlen, "/stats answered %d, not JSON", rep.status);
        return NULL;
    }
    return j;
}

static void sample_stats(const struct kb_soakrun *s, struct samples *sm, double t)
{
    char err[256];
    json_t *j = get_stats(s, err, sizeof(err));
    sm->stats_reads++;
    fprintf(sm->stats->f, "%.3f", t);
    for (size_t i = 0; i < NSTAT; i++) {
        json_t *v = j ? json_object_get(j, stat_keys[i]) : NULL;
        if (v)
            fprintf(sm->stats->f, ",%lld", (long long)json_integer_value(v));
        else
            fprintf(sm->stats->f, ",");
    }
    fprintf(sm->stats->f, "\n");
    if (!j)
        sm->stats_failures++;
    else if (json_integer_value(json_object_get(j, "suspended_max")) > sm->suspended_max)
        sm->suspended_max = (long)json_integer_value(json_object_get(j, "suspended_max"));
    json_decref(j);
}

/* One sample, t seconds after the load started (kb_fixture_drive's callback). */
static void sample_once(void *arg, double t0, double now)
{
    struct samples *sm = arg;
    struct kb_proc_sample srv;
    double t = now - t0;
    kb_fixture_sample_server(&sm->s->r.fx, &srv);
    fprintf(sm->csv->f, "%.3f,%.2f,%lld,%lld,%ld,%ld,%zu\n", t, srv.cpu_seconds, srv.rss_bytes,
            srv.pss_bytes, srv.fds, srv.threads, srv.nprocs);
    fflush(sm->csv->f);
    kb_fixseries_add(&sm->fs, t, &srv);
    if (sm->db)
        sample_stats(sm->s, sm, t);
}

/* The load child to its end, sampling from warmup + settle to the end of the measured
 * interval (the drain is not under the offered load). -1 when interrupted. */
static int drive(struct kb_soakrun *s, const struct kb_soak_planned *p, struct samples *sm,
                 struct kb_soak_obs *o)
{
    const struct kb_fixture_load ld = { .duration_s = s->duration_s, .warmup_s = s->warmup_s,
        .drain_s = s->drain_s, .threads = s->threads, .connections = s->connections };
    const struct kb_fixture_sampling sp = { .first_s = s->warmup_s + s->settle_s,
        .every_s = s->every_s, .until_s = s->warmup_s + s->duration_s + 0.05,
        .sample = sample_once, .arg = sm, .kill_signal = SIGTERM };
    return kb_fixture_drive(&s->r.fx, &ld, p->route, p->rate, p->dir, &sp, &o->point);
}

/* The db phase's gauges must come back to zero once the load stops (docs/protocol.md, "The
 * PostgreSQL route": readable under load, back at zero after it): the contract's
 * qualification.zero_gauges, the db qualification's own list. Polled for up to 10 s. */
struct rest {
    struct kb_soakrun *s;
    struct kb_soak_obs *o;
    json_t *last;              /* the newest /stats read */
};

/* /stats read again: its gauges all zero (the qualification's rule, runner/run/qualjudge.h). */
static int at_rest(void *p)
{
    struct rest *w = p;
    const struct kb_strlist *g = &w->s->r.c.qual.zero_gauges;
    char err[256];
    json_decref(w->last);
    if (!(w->last = get_stats(w->s, err, sizeof(err)))) {
        snprintf(w->o->stats_reason, sizeof(w->o->stats_reason), "%.200s", err);
        return w->o->stats_at_rest = 0;
    }
    return w->o->stats_at_rest = kb_qual_gauges_zero(w->last, g->v, g->n, w->o->stats_reason,
                                                     sizeof(w->o->stats_reason));
}

static int rest_worth_waiting(void *p)
{
    struct rest *w = p;
    return !kb_run_interrupted() && kb_fixture_alive(&w->s->r.fx);
}

/* After the load, the gauges back at zero (or 10 s, or the fixture gone): the last read. */
static json_t *stats_at_rest(struct kb_soakrun *s, struct kb_soak_obs *o)
{
    struct rest w = { s, o, NULL };
    o->stats_checked = 1;
    kb_poll_until(at_rest, rest_worth_waiting, &w, 10000, 250);
    return w.last;
}

/* ---- evidence and verdict ------------------------------------------------------------- */

static json_t *slope_json(const struct kb_slope *f, int have)
{
    if (!have)
        return json_pack("{s:I,s:n}", "n", (json_int_t)f->n, "slope_per_s");
    return json_pack("{s:I,s:f,s:f,s:f,s:f,s:f,s:f,s:f,s:f,s:f,s:f}", "n", (json_int_t)f->n,
        "first", f->first, "last", f->last, "min", f->min, "max", f->max, "mean", f->mean,
        "slope_per_s", f->slope_per_s, "per_hour", f->per_hour, "rise", f->rise,
        "window_s", f->window_s, "intercept", f->intercept);
}

static json_t *command_json(const struct kb_soakrun *s, const struct kb_soak_planned *p,
                            char *const *argvs)
{
    const struct kb_route *r = kb_contract_route(&s->r.c, p->route);
    json_t *fx = json_array();
    for (size_t i = 0; argvs[i]; i++)
        json_array_append_new(fx, json_string(argvs[i]));
    return json_pack("{s:s,s:s,s:I,s:s,s:i,s:f,s:f,s:f,s:f,s:f,s:i,s:i,s:s,s:s,s:b,s:o,"
                     "s:{s:i,s:s,s:s?,s:s?},s:s}",
        "runtime", KB_SOAK_RUNTIME, "route", p->route, "rate", (json_int_t)p->rate, "url_path", r->path,
        "port", s->r.fx.port, "duration_s", s->duration_s, "warmup_s", s->warmup_s, "settle_s",
        s->settle_s, "sample_every_s", s->every_s, "drain_s", s->drain_s, "threads", s->threads,
        "connections", s->connections, "server_cpus", s->r.fx.server_cpus, "client_cpus",
        s->r.fx.client_cpus, "unconstrained", s->r.fx.no_limits, "fixture_argv", fx,
        "expect", "status",
        r->status, "content_type", r->content_type, "body", r->body, "body_regex",
        r->body_regex, "load_generator", s->r.fx.load_cmd);
}

/* The windows as verdict.json keeps them: each window's figures, first against last, the
 * rule and what it found. */
static json_t *windows_json(const struct kb_soakrun *s, const struct kb_soakwin *w, const char *werr)
{
    struct kb_decay d;
    char why[512];
    json_t *rows = json_array();
    int rc;
    if (!w)
        return json_pack("{s:s,s:s}", "verdict", "unjudged", "reason", werr);
    rc = kb_soakwin_judge(w, &s->crit.decay, &d, why, sizeof(why));
    for (size_t k = 0; k < w->n; k++) {
        const struct kb_soak_window *x = &w->w[k];
        json_array_append_new(rows, json_pack("{s:f,s:f,s:f,s:I,s:I,s:f,s:o,s:b}", "start_s",
            x->start_s, "end_s", x->end_s, "seconds", x->seconds, "completed",
            (json_int_t)x->completed, "bounded", (json_int_t)x->bounded, "achieved_rps",
            x->achieved_rps, "p99_us", isnan(x->p99_us) ? json_null() : json_real(x->p99_us),
            "p99_is_bound", x->p99_bound));
    }
    return json_pack("{s:f,s:I,s:o,s:s,s:s,s:o,s:o,s:o,s:{s:f,s:f,s:f}}", "window_s",
        w->window_s, "n", (json_int_t)w->n, "windows", rows, "verdict",
        rc > 0 ? (d.rate_decays ? "throughput-decayed" : "tail-grew") : rc < 0 ? "unjudged"
                                                                        : "flat",
        "reason", why, "rate_drop", rc < 0 ? json_null() : json_real(d.rate_drop),
        "p99_ratio", rc < 0 || !isfinite(d.p99_ratio) ? json_null() : json_real(d.p99_ratio),
        "p99_growth_us", rc < 0 ? json_null() : json_real(d.p99_growth_us), "rule",
        "max_rate_drop", s->crit.decay.max_rate_drop, "p99_growth_factor",
        s->crit.decay.p99_factor, "p99_growth_floor_us", s->crit.decay.p99_floor_us);
}

/* Fits, verdict, then the marker: written in this order, and the marker only when every
 * file before it was, so a DONE phase is whole. 0 pass, 1 not a pass, -1 with err when the
 * phase's evidence is incomplete. */
static int finish_phase(struct kb_soakrun *s, const struct kb_soak_planned *p, struct samples *sm,
                        struct kb_soak_obs *o, const struct kb_point_load *lr, json_t *load,
                        json_t *after, double wall, struct kb_run_evidence *ev, char *err,
                        size_t errlen)
{
    char reason[768];
    enum kb_soak_verdict v;
    struct kb_soakwin *w = calloc(1, sizeof(*w));
    json_t *j;
    int rc;
    o->have_rss = kb_soak_fit(sm->fs.t, sm->fs.rss, sm->fs.n, &o->rss) == 0;
    o->have_fds = kb_soak_fit(sm->fs.t, sm->fs.fds, sm->fs.n, &o->fds) == 0;
    if (!w)
        snprintf(o->windows_err, sizeof(o->windows_err), "out of memory");
    else if (kb_soakwin_read(p->dir, s->duration_s, s->crit.decay.max_s, w, o->windows_err,
                             sizeof(o->windows_err)) == 0)
        o->windows = w;
    v = kb_soak_judge(lr, o, &s->crit, reason, sizeof(reason));
    j = json_pack("{s:s,s:I,s:s,s:s,s:f,s:o,s:o,s:o,s:o}", "route", p->route,
        "rate", (json_int_t)p->rate, "verdict", kb_soak_verdict_name(v), "reason", reason,
        "wall_s", wall, "rss_bytes", slope_json(&o->rss, o->have_rss), "fds",
        slope_json(&o->fds, o->have_fds), "load", load ? json_incref(load) : json_null(),
        "identity_sha256", json_string(s->r.fx.identity ? json_string_value(json_object_get(
                                                        s->r.fx.identity, "sha256")) : ""));
    json_object_set_new(j, "decay", windows_json(s, o->windows, o->windows_err));
    if (!strcmp(p->route, "db"))
        json_object_set_new(j, "db_mode", json_string(s->db_mode));
    if (o->stats_checked)
        json_object_set_new(j, "stats", json_pack("{s:I,s:I,s:I,s:b,s:s,s:O}",
            "suspended_max", (json_int_t)sm->suspended_max, "reads", (json_int_t)sm->stats_reads,
            "read_failures", (json_int_t)sm->stats_failures, "at_rest_after", o->stats_at_rest,
            "not_at_rest", o->stats_reason, "after", after ? after : json_null()));
    kb_run_write_json(ev, p->dir, "verdict.json", j);
    json_decref(j);
    rc = kb_run_point_finish(&s->r, ev, p->dir, json_pack("{s:s,s:s}", "phase", p->route,
                             "verdict", kb_soak_verdict_name(v)), err, errlen);
    printf("  %-10s %7ld/s  achieved %9.1f/s  p99 %9.2f ms  RSS %+.0f KiB/h  fds %+.2f/h  "
           "%zu samples  %s: %s\n", p->route, p->rate, lr->achieved_rps,
           lr->corrected.p99 / 1000.0, o->rss.per_hour / 1024.0, o->fds.per_hour, sm->fs.n,
           rc < 0 ? "incomplete" : kb_soak_verdict_name(v),
           rc < 0 ? "its evidence could not be written whole; redone on re-run" : reason);
    fflush(stdout);
    o->windows = NULL;
    free(w);
    return rc < 0 ? -1 : v == KB_SOAK_PASS ? 0 : 1;
}

/* samples.csv (and the db phase's stats.csv) under their temporary names. */
static int open_csvs(const struct kb_soak_planned *p, struct samples *sm,
                     struct kb_run_evidence *ev)
{
    char head[512];
    size_t off;
    sm->csv = kb_run_csv_open(ev, p->dir, "samples.csv", "t_s,server_cpu_s,server_rss_bytes,"
                              "server_pss_bytes,server_fds,server_threads,server_procs\n");
    if (!sm->csv || !sm->db)
        return sm->csv ? 0 : -1;
    off = (size_t)snprintf(head, sizeof(head), "t_s");
    for (size_t i = 0; i < NSTAT && off < sizeof(head); i++)
        off += (size_t)snprintf(head + off, sizeof(head) - off, ",%s", stat_keys[i]);
    if (off < sizeof(head))
        snprintf(head + off, sizeof(head) - off, "\n");
    return (sm->stats = kb_run_csv_open(ev, p->dir, "stats.csv", head)) ? 0 : -1;
}

/* Close the sample files and give them their final names; with ev NULL (interrupted) they
 * are dropped: the phase is redone. */
static void close_csvs(struct samples *sm, struct kb_run_evidence *ev)
{
    if (!ev) {
        kb_run_csv_abort(&sm->csv);
        kb_run_csv_abort(&sm->stats);
        return;
    }
    kb_run_csv_close(ev, &sm->csv, "samples.csv");
    kb_run_csv_close(ev, &sm->stats, "stats.csv");
}

/* The load, sampled; postflight; /stats back at rest (db). -1 with err when it did not run
 * to its end; -2 when it could not write its own files (o->point.load_problem says why). */
static int measure(struct kb_soakrun *s, const struct kb_soak_planned *p, struct samples *sm,
                   struct kb_soak_obs *o, struct kb_point_load *lr, json_t **load,
                   json_t **after, char *err, size_t errlen)
{
    if (drive(s, p, sm, o) < 0) {
        snprintf(err, errlen, "phase %s: the load generator did not run to its end%s%s%.300s",
                 p->route, kb_run_interrupted() ? " (interrupted)" : "; left to redo",
                 o->point.load_problem[0] ? ": " : "", o->point.load_problem);
        return -1;
    }
    /* the load's own files unwritten: the harness failed, no verdict on the server */
    if (kb_fixture_read_load(p->dir, &o->point, lr, load) < 0)
        return -2;
    kb_fixture_postflight(&s->r.fx, kb_contract_route(&s->r.c, p->route), &o->point);
    if (sm->db && !o->point.fixture_exited)
        *after = stats_at_rest(s, o);
    else if (sm->db)
        o->stats_checked = 1;
    return 0;
}

/* One phase. 0 pass, 1 not a pass, -1 with err when interrupted or its evidence could not
 * be written completely. */
static int run_phase(struct kb_soakrun *s, const struct kb_soak_planned *p, char *err, size_t errlen)
{
    struct kb_soak_obs o;
    struct kb_point_load lr;
    struct kb_run_evidence ev = { "", "" };
    struct samples sm;
    char *argvs[64] = { 0 };
    json_t *load = NULL, *after = NULL, *j;
    double t0 = kb_fixture_now_s();
    int rc = -1, m = 0;

    memset(&o, 0, sizeof(o));
    memset(&lr, 0, sizeof(lr));
    memset(&sm, 0, sizeof(sm));
    kb_fixseries_init(&sm.fs, KB_SOAK_MAX_SAMPLES);
    sm.s = s;
    sm.db = !strcmp(p->route, "db");
    if (kb_run_point_begin(p->dir, err, errlen) < 0)
        return -1;
    printf("kneebench soak: phase %s at %ld/s for %g s (+%g s warmup)\n", p->route, p->rate,
           s->duration_s, s->warmup_s);
    fflush(stdout);
    start_phase(s, p, &o, argvs);
    if (kb_run_interrupted()) {
        snprintf(err, errlen, "phase %s interrupted while its fixture started", p->route);
        goto out;          /* no verdict, redone on resume */
    }
    j = command_json(s, p, argvs);
    kb_run_write_json(&ev, p->dir, "command.json", j);
    json_decref(j);
    if (open_csvs(p, &sm, &ev) < 0)
        rc = kb_run_point_finish(&s->r, &ev, p->dir, NULL, err, errlen);
    else if (o.point.preflight_failed ||
             (m = measure(s, p, &sm, &o, &lr, &load, &after, err, errlen)) == 0) {
        close_csvs(&sm, &ev);
        rc = finish_phase(s, p, &sm, &o, &lr, load, after, kb_fixture_now_s() - t0, &ev, err,
                          errlen);
    } else if (m == -2) {    /* incomplete, redone on a re-run */
        kb_run_note(&ev, "load outputs", o.point.load_problem);
        rc = kb_run_point_finish(&s->r, &ev, p->dir, NULL, err, errlen);
    }
out:
    close_csvs(&sm, NULL);
    kb_run_stop_fixture(&s->r);
    kb_tmpl_free(argvs, 64);
    kb_fixseries_free(&sm.fs);
    json_decref(load);
    json_decref(after);
    return kb_run_interrupted() ? -1 : rc;
}

/* ---- setup and the whole run ---------------------------------------------------------- */

static int setup(struct kb_soakrun *s, const struct kb_soak_opts *a, char *err, size_t errlen)
{
    const struct kb_fixture_opts fo = { .backend = a->backend,
        .build = a->build ? a->build : kb_root_build(), .server_cpus = a->scpus,
        .client_cpus = a->ccpus, .controller_cpus = a->ctlcpus, .load_cmd = a->load_cmd, .no_limits = a->no_limits,
        .image = a->image };
    if (kb_run_open(&s->r, "soak", a->out, a->contract, err, errlen) < 0)
        return -1;
    if (!(s->rt = kb_contract_runtime(&s->r.c, KB_SOAK_RUNTIME))) {
        snprintf(err, errlen, "the contract has no runtime " KB_SOAK_RUNTIME);
        return -1;
    }
    s->crit.min_delivery = a->min_delivery;
    s->crit.client_cpu_max_fraction = a->client_cpu_max >= 0 ? a->client_cpu_max
                                                               : s->r.c.client_cpu_max_fraction;
    s->crit.client_lag_p99_max_us = a->client_lag_max_us >= 0 ? (long)a->client_lag_max_us
                                                              : s->r.c.client_lag_p99_max_us;
    s->crit.client_rx_delay_p99_max_us = s->r.c.client_rx_delay_p99_max_us;
    s->crit.min_samples = 2;
    s->crit.rss.pct_per_hour = a->rss_pct;
    s->crit.rss.floor = a->rss_floor;
    s->crit.fds.pct_per_hour = a->fd_pct;
    s->crit.fds.floor = a->fd_floor;
    if (kb_soakrun_plan(s, a, err, errlen) < 0)
        return -1;
    s->r.fx.rt = s->rt;
    if (kb_run_setup(&s->r, &fo, err, errlen) < 0)
        return -1;
    for (size_t i = 0; i < s->nph; i++)     /* a db phase: PostgreSQL off the client's CPUs */
        if (!strcmp(s->ph[i].route, "db"))
            return kb_run_db_place(&s->r, NULL, err, errlen);
    return 0;
}

/* Phases in order; one whose marker exists is kept (resume). */
int kb_soakrun_all(struct kb_soakrun *s)
{
    char err[1400];
    int bad = 0, rc;
    for (size_t i = 0; i < s->nph && !kb_run_interrupted(); i++) {
        if (kb_run_point_done(s->ph[i].dir)) {
            printf("kneebench soak: phase %s complete, kept\n", s->ph[i].route);
            continue;
        }
        rc = run_phase(s, &s->ph[i], err, sizeof(err));
        if (rc < 0 && !kb_run_interrupted())
            fprintf(stderr, "kneebench soak: %s\n", err);
        bad += rc != 0;
    }
    return bad;
}

/* report.md from the phases' evidence; the run's DONE when every phase is complete. The
 * number of phases passed, -1 when report.md could not be written. */

int kb_soakrun_open(struct kb_soakrun *s, const struct kb_soak_opts *a, int argc, char **argv,
                    char *err, size_t errlen)
{
    memset(s, 0, sizeof(*s));
    if (setup(s, a, err, errlen) < 0 || kb_soakrun_write_plan(s, err, errlen) < 0 ||
        kb_soakrun_write_identity(s, argc, argv, err, errlen) < 0)
        return -1;
    if (!s->r.fx.no_limits)
        kb_run_sweep(&s->r, NULL);
    return 0;
}
