/* curvepoint.c -- one curve point: the fixture at rest first, the load child driven while
 * the fixture, the load child and the host's steal are sampled every second, postflight,
 * the judgement, and the evidence in order with the marker last (curve.h). */
#define _GNU_SOURCE
#include "runner/run/curve/curve.h"
#include "runner/run/fixseries.h"

#include <jansson.h>
#include <math.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "contract/contract.h"
#include "runner/load/loadout.h"
#include "runner/load/preflight.h"
#include "runner/run/curve/backlog.h"
#include "runner/run/hostclock.h"
#include "runner/run/judgement.h"
#include "runner/run/fixture.h"
#include "runner/run/steal.h"
#include "runner/run/verdict.h"
#include "runner/sandbox/procs.h"
#include "runner/sandbox/sandbox.h"
#include "runner/util/clock.h"
#include "runner/util/evidence.h"
#include "runner/util/paths.h"

/* One sample a second: room for the whole point with a minute's margin, at least this many
 * (a longer point than its room would be decimated, fixseries.h, never cut short). */
#define CPU_SAMPLES_MIN 1024

/* The server CPUs are read here only when the fixture runs on this host. */
#define HOSTCLOCK_CPUS(cv) !kb_sandbox_on_this_host((cv)->r.fx.sandbox) ? NULL \
                           : (cv)->r.fx.server_cpus, (cv)->r.fx.client_cpus

struct sampler {
    const struct kb_curve *cv;
    struct kb_afile *csv;
    double t0;
    struct kb_fixseries fs;      /* the fixture's samples, on the monotonic clock */
    struct kb_hostclock clock;   /* the server and client CPUs' clocks and governors */
    int steal_ready;
    struct kb_steal_track steal_srv, steal_cli;   /* what the host withheld from each role */
};

/* The host's theft from both roles' CPUs: the server's from its own host's /proc/stat, read
 * through the engine where the fixture runs on another host (not read where that fails). */
static void sample_steal(struct sampler *s, double t)
{
    const char *srv = kb_sandbox_procstat(s->cv->r.fx.sandbox);
    if (!s->steal_ready) {
        kb_steal_track_init(&s->steal_srv, srv ? s->cv->r.fx.server_cpus : NULL);
        kb_steal_track_init(&s->steal_cli, s->cv->r.fx.client_cpus);
        s->steal_ready = 1;
    }
    if (srv)
        kb_steal_track_sample(&s->steal_srv, srv, t);
    kb_steal_track_sample(&s->steal_cli, KB_STEAL_PROCSTAT, t);
}


/* A fraction with its separator; empty where it is not known (never a 0). */
static void csv_fraction(FILE *f, double v, char sep)
{
    if (isfinite(v))
        fprintf(f, "%.4f%c", v, sep);
    else
        fputc(sep, f);
}

/* Server and load child, once a second from the load's start (kb_fixture_drive's callback). */
static void sample_once(void *arg, double t0, double t)
{
    struct sampler *s = arg;
    struct kb_proc_sample srv, cli;
    double frac;
    s->t0 = t0;
    kb_fixture_sample_server(&s->cv->r.fx, &srv);
    kb_procs_sample(&s->cv->r.fx.load_pid, 1, &cli);
    frac = kb_fixseries_add(&s->fs, t, &srv);
    sample_steal(s, t);
    fprintf(s->csv->f, "%.3f,%.2f,", t - s->t0, srv.cpu_seconds);
    /* the first sample has no fraction yet: empty, never a 0 */
    csv_fraction(s->csv->f, frac >= 0 ? frac : NAN, ',');
    fprintf(s->csv->f, "%lld,%lld,%ld,%ld,%zu,%.2f,%lld,", srv.rss_bytes, srv.pss_bytes,
            srv.fds, srv.threads, srv.nprocs, cli.cpu_seconds, cli.rss_bytes);
    csv_fraction(s->csv->f, s->steal_srv.last_fraction, ',');
    csv_fraction(s->csv->f, s->steal_cli.last_fraction, '\n');
    kb_hostclock_sample_point(&s->clock, HOSTCLOCK_CPUS(s->cv));
}

/* A point's measured seconds and warmup: the plan's, or a refinement hold's. */
static double duration_of(const struct kb_curve *cv, const struct kb_point *pt)
{
    return pt->hold ? cv->hold_s : cv->plan.duration_s;
}

static double warmup_of(const struct kb_curve *cv, const struct kb_point *pt)
{
    return pt->hold ? cv->hold_warmup_s : cv->plan.warmup_s;
}

static json_t *command_json(const struct kb_curve *cv, const struct kb_point *pt)
{
    const struct kb_route *r = kb_contract_route(&cv->r.c, pt->route);
    return json_pack("{s:s,s:s,s:s,s:I,s:i,s:s,s:i,s:f,s:f,s:f,s:i,s:i,s:s,s:s,s:b,s:s,s:{s:i,s:s,s:s?,s:s?},s:s,s:s,s:s}",
        "point", pt->id, "runtime", pt->runtime, "route", pt->route, "rate", (json_int_t)pt->rate,
        "repeat", pt->repeat, "url_path", r->path, "port", cv->r.fx.port,
        "duration_s", duration_of(cv, pt), "warmup_s", warmup_of(cv, pt),
        "drain_s", cv->plan.drain_s, "threads", cv->plan.threads,
        "connections", cv->plan.connections, "server_cpus", cv->r.fx.server_cpus,
        "client_cpus", cv->r.fx.client_cpus, "unconstrained", cv->r.fx.no_limits,
        "client_sched", cv->r.fx.client_rt ? "fifo" : "other", "expect", "status", r->status,
        "content_type", r->content_type, "body", r->body,
        "body_regex", r->body_regex, "load_generator", cv->r.fx.load_cmd, "fixture_dir", cv->fixdir,
        "target", cv->r.fx.target);
}

/* Run the load child to its end (or until the stop flag), sampling every second. */
static int drive(struct kb_curve *cv, const struct kb_point *pt, const char *dir,
                 struct sampler *s, struct kb_point_obs *obs)
{
    const struct kb_fixture_load ld = {
        .duration_s = duration_of(cv, pt), .warmup_s = warmup_of(cv, pt),
        .drain_s = cv->plan.drain_s,
        .threads = cv->plan.threads, .connections = cv->plan.connections,
        .requests_log = cv->requests_log != KB_RL_NONE,
        .per_connection = cv->per_connection };
    /* killed outright on interrupt: its figures are discarded anyway */
    const struct kb_fixture_sampling sp = { .first_s = 0, .every_s = 1.0, .until_s = INFINITY,
        .sample = sample_once, .arg = s, .kill_signal = SIGKILL };
    s->cv = cv;
    return kb_fixture_drive(&cv->r.fx, &ld, pt->route, pt->rate, dir, &sp, obs);
}

/* Before a point: the route must answer correctly again, and the server CPUs must have gone
 * quiet -- every fixture on them together, the one about to be measured and those kept up
 * beside it, under SETTLE_IDLE_CPU of a CPU over a SETTLE_WINDOW_S window -- since an
 * overloaded fixture may still be working off the previous point's backlog and would start
 * the next point already busy, or run it inside another runtime's point. Up to SETTLE_MAX_S in all; the time taken, the last window's
 * server CPU and whether it went quiet are evidence in verdict.json. */
#define SETTLE_MAX_S 10.0
#define SETTLE_WINDOW_S 0.3
#define SETTLE_IDLE_CPU 0.10

struct settled {
    double seconds;
    double server_cpu;     /* CPUs over the last window, -1 when none was measured */
    double beside_cpu;     /* of that, the fixtures kept up beside this one */
    int quiet;
};

static int settle_alive(const struct kb_curve *cv, double t0)
{
    return !kb_run_interrupted() && cv->r.fx.sb && kb_sandbox_alive(cv->r.fx.sb) &&
           kb_fixture_now_s() - t0 < SETTLE_MAX_S;
}

struct route_back {
    struct kb_curve *cv;
    const struct kb_route *r;
    double t0;
};

static int route_answers(void *p)
{
    struct route_back *w = p;
    char err[512];
    return kb_preflight_route_at(w->cv->r.fx.target, w->cv->r.fx.port, w->r, err,
                                 sizeof(err)) == 0;
}

static int route_worth_waiting(void *p)
{
    struct route_back *w = p;
    return settle_alive(w->cv, w->t0);
}

static struct settled settle(struct kb_curve *cv, const struct kb_point *pt)
{
    const struct kb_route *r = kb_contract_route(&cv->r.c, pt->route);
    struct settled st = { 0, -1, -1, 0 };
    double t0 = kb_fixture_now_s(), ta, tb, a, b, oa, ob;
    struct route_back w = { cv, r, t0 };
    kb_poll_until(route_answers, route_worth_waiting, &w, (long)(SETTLE_MAX_S * 1000), 100);
    a = kb_curve_server_cpu(cv, &oa);
    ta = kb_fixture_now_s();
    while (!st.quiet && settle_alive(cv, t0)) {
        kb_sleep_ms((long)(SETTLE_WINDOW_S * 1000));
        b = kb_curve_server_cpu(cv, &ob);
        tb = kb_fixture_now_s();
        st.server_cpu = (b - a) / (tb - ta);
        st.beside_cpu = (ob - oa) / (tb - ta);
        st.quiet = st.server_cpu < SETTLE_IDLE_CPU;
        a = b;
        oa = ob;
        ta = tb;
    }
    st.seconds = kb_fixture_now_s() - t0;
    return st;
}

/* The server's cost per response: its CPU over the measured interval (the load reports
 * the interval's ends on the same monotonic clock as the samples) over the responses that
 * ended inside it. Where the knee lies past the client's reach, this still tells runtimes
 * apart: 1 / cost is what one CPU would serve. Nulls when it cannot be measured. */
static void server_cost(json_t *server, const struct sampler *s, const struct kb_point_load *lr)
{
    double a = lr->interval_start_mono_s, b = lr->interval_end_mono_s;
    double n = (double)lr->completed_in_window;
    double cpu = a > 0 && b > a ? kb_fixseries_cpu_at(&s->fs, b) - kb_fixseries_cpu_at(&s->fs, a)
                                : NAN;
    double us = n > 0 && cpu > 0 ? cpu * 1e6 / n : NAN;
    json_object_set_new(server, "cpu_interval_s", kb_json_figure(cpu));
    json_object_set_new(server, "cpu_us_per_response", kb_json_figure(us));
    json_object_set_new(server, "capacity_estimate_rps", isfinite(us) ? json_real(1e6 / us) : json_null());
}

static json_t *verdict_json(const struct kb_curve *cv, const struct kb_point *pt,
                            enum kb_verdict v, const char *reason, json_t *load,
                            const struct kb_point_load *lr, const struct sampler *s, double wall)
{
    json_t *j = json_pack("{s:s,s:s,s:s,s:I,s:i,s:s,s:s,s:b,s:f,s:s}", "point", pt->id,
        "runtime", pt->runtime, "route", pt->route, "rate", (json_int_t)pt->rate,
        "repeat", pt->repeat, "verdict", kb_verdict_name(v), "reason", reason,
        "unconstrained", cv->r.fx.no_limits, "wall_s", wall, "identity_sha256",
        cv->r.fx.identity ? json_string_value(json_object_get(cv->r.fx.identity, "sha256")) : "");
    json_object_set_new(j, "server", json_pack("{s:f,s:I,s:I,s:I,s:I,s:I,s:i}",
        "cpu_mean_fraction", kb_fixseries_cpu_mean(&s->fs),
        "rss_max_bytes", (json_int_t)s->fs.rss_max, "pss_max_bytes", (json_int_t)s->fs.pss_max,
        "fds_max", (json_int_t)s->fs.fds_max, "threads_max", (json_int_t)s->fs.threads_max,
        "procs_max", (json_int_t)s->fs.procs_max, "samples", (int)s->fs.seen));
    server_cost(json_object_get(j, "server"), s, lr);
    json_object_set(j, "load", load ? load : json_null());
    return j;
}

#define SAMPLES_HEADER "t_s,server_cpu_s,server_cpu_fraction,server_rss_bytes,server_pss_bytes," \
                       "server_fds,server_threads,server_procs,client_cpu_s,client_rss_bytes," \
                       "server_steal_fraction,client_steal_fraction\n"

/* Why a point could not be measured, or 0 when it can be: interrupted, or a harness error
 * (not the fixture's doing: no verdict charged to it, no marker, redone later). */
static int not_measured(const struct kb_curve *cv, const struct kb_point *pt, char *err,
                        size_t errlen)
{
    if (kb_run_interrupted())
        snprintf(err, errlen, "%s interrupted while its fixture started", pt->id);
    else if (cv->harness_error)
        snprintf(err, errlen, "%s not run, left to redo: %s", pt->id, cv->preflight_reason);
    else
        return 0;
    return -1;
}

/* What the host withheld from both roles during the point, and whether it could have
 * decided the server's verdict (a failed point: no). */
static json_t *host_json(const struct sampler *s, const struct kb_point_load *lr,
                         const struct kb_criteria *crit, const struct kb_judgement *jd)
{
    char why[256] = "not judged: the point failed";
    int could = jd->server != KB_FAILED &&
                kb_steal_could_decide(lr, crit, &s->steal_srv, why, sizeof(why));
    return kb_steal_json(&s->steal_srv, &s->steal_cli, could, why);
}

/* What the run's calibration does to its points' judgements (judgement.h). */
static enum kb_margin_use margin_use(const struct kb_curve *cv)
{
    return cv->cal ? KB_MARGIN_CARRIED : KB_MARGIN_UNUSED;
}

/* The fixtures kept up beside this one during its load: their own CPU (an idle runtime's
 * timers and wake-ups on the server CPUs) and the floor sample taken before it. */
struct beside {
    double cpu0, cpu1, t0, t1;
};

static json_t *beside_json(const struct kb_curve *cv, const struct settled *st,
                           const struct beside *bs)
{
    double cpu = bs->t1 > bs->t0 ? bs->cpu1 - bs->cpu0 : NAN;
    return json_pack("{s:i,s:o,s:o,s:o,s:s?}", "fixtures_beside", (int)cv->nparked,
        "beside_cpu_s", kb_json_figure(cpu > 0 ? cpu : isfinite(cpu) ? 0 : NAN),
        "beside_cpu_fraction", kb_json_figure(cpu >= 0 ? cpu / (bs->t1 - bs->t0) : NAN),
        "settle_beside_cpu", kb_json_figure(st->beside_cpu >= 0 ? st->beside_cpu : NAN),
        "floor_sample", cv->floor.id[0] ? cv->floor.id : NULL);
}

/* Whether the queue grew through the measured seconds (backlog.h); null when the series
 * could not be read. */
static json_t *backlog_json(const char *dir, double duration_s)
{
    struct kb_backlog b;
    char path[KB_PATH_MAX];
    if (kb_backlog_file(kb_path(path, sizeof(path), dir, "series.csv"), duration_s, &b) < 0)
        return json_null();
    return json_pack("{s:b,s:i,s:o,s:o}", "grew", b.grew, "seconds", b.seconds,
                     "first_p50_us", kb_json_figure(b.seconds ? b.first_p50_us : NAN),
                     "last_p50_us", kb_json_figure(b.seconds ? b.last_p50_us : NAN));
}

/* The verdict, with the settling before the point, into verdict.json (noted in ev). */
static void write_verdict(struct kb_curve *cv, const struct kb_point *pt, const char *dir,
                          const struct kb_judgement *jd, const struct kb_point_load *lr,
                          json_t *load, const struct sampler *s,
                          const struct settled *st, const struct beside *bs,
                          const struct kb_point_obs *obs, double wall,
                          struct kb_run_evidence *ev)
{
    struct kb_criteria crit = kb_criteria_of(&cv->r.c);
    json_t *j = verdict_json(cv, pt, jd->verdict, jd->reason, load, lr, s, wall);
    /* judged_by keeps what the judgement read beside load.json: the report re-derives it */
    kb_judgement_record(j, jd, lr, obs, &crit, margin_use(cv));
    json_object_set_new(j, "settle_s", json_real(st->seconds));
    json_object_set_new(j, "settle_server_cpu", st->server_cpu < 0 ? json_null()
                                                                   : json_real(st->server_cpu));
    json_object_set_new(j, "settle_quiet", json_boolean(st->quiet));
    if (cv->plan.interleaved)
        json_object_set_new(j, "interleaved", beside_json(cv, st, bs));
    json_object_set_new(j, "host", host_json(s, lr, &crit, jd));
    json_object_set_new(j, "backlog", backlog_json(dir, duration_of(cv, pt)));
    kb_run_write_json(ev, dir, "verdict.json", j);
    json_decref(j);
}

static void beside_mark(const struct kb_curve *cv, double *cpu, double *t)
{
    kb_curve_server_cpu(cv, cpu);
    *t = kb_fixture_now_s();
}

/* Evidence in order: command, samples, host clocks, verdict (with the load figures), marker
 * last, and only when every file before it was written. 0, or -1 with err. */
static int measure_point(struct kb_curve *cv, const struct kb_point *pt, const char *dir,
                         struct sampler *s, char *err, size_t errlen)
{
    struct kb_criteria crit = kb_criteria_of(&cv->r.c);
    struct kb_point_obs obs = { 0 };
    struct kb_point_load lr;
    struct kb_run_evidence ev = { "", "" };
    struct settled st = { 0, -1, -1, 0 };
    struct beside bs = { 0, 0, 0, 0 };
    struct kb_judgement jd;
    char why[512];
    json_t *j, *load = NULL;
    double t0 = kb_fixture_now_s();
    int rc;

    memset(&lr, 0, sizeof(lr));
    if (kb_run_point_begin(dir, err, errlen) < 0)
        return -1;
    kb_curve_ensure_fixture(cv, pt);
    if (not_measured(cv, pt, err, errlen) < 0)
        return -1;
    j = command_json(cv, pt);
    kb_run_write_json(&ev, dir, "command.json", j);
    json_decref(j);
    if (!(s->csv = kb_run_csv_open(&ev, dir, "samples.csv", SAMPLES_HEADER))) {
        /* nothing measured: said as incomplete, as a point whose files failed after its load */
        rc = kb_run_point_finish(&cv->r, &ev, dir, NULL, err, errlen);
        cv->finished++;
        kb_curve_progress(cv, pt, "incomplete", NULL, 0);
        return rc;
    }
    if (cv->preflight_failed) {
        obs.preflight_failed = 1;
        snprintf(obs.preflight_reason, sizeof(obs.preflight_reason), "%.200s", cv->preflight_reason);
    } else if ((st = settle(cv, pt)), beside_mark(cv, &bs.cpu0, &bs.t0),
               drive(cv, pt, dir, s, &obs) < 0) {
        kb_run_csv_abort(&s->csv);  /* no marker: the point is redone on resume */
        snprintf(err, errlen, "%s: the load generator did not run to its end%s%s%.300s", pt->id,
                 kb_run_interrupted() ? " (interrupted)" : "; left to redo",
                 obs.load_problem[0] ? ": " : "", obs.load_problem);
        return -1;
    } else {
        beside_mark(cv, &bs.cpu1, &bs.t1);
        /* one sample after the load ended, so the interval's end lies between two */
        if (s->fs.n > 0)
            sample_once(s, s->t0, kb_fixture_now_s());
        if (kb_fixture_read_load(dir, &obs, &lr, &load) < 0)
            kb_run_note(&ev, "load outputs", obs.load_problem);
        kb_fixture_postflight(&cv->r.fx, kb_contract_route(&cv->r.c, pt->route), &obs);
    }
    /* an engine elsewhere lost is the harness's failure: no verdict, redone later */
    if (cv->r.fx.sb && kb_sandbox_lost(cv->r.fx.sb, why, sizeof(why))) {
        kb_run_csv_abort(&s->csv);
        json_decref(load);
        snprintf(err, errlen, "%s: %.400s; left to redo", pt->id, why);
        return -1;
    }
    kb_run_csv_close(&ev, &s->csv, "samples.csv");
    kb_judge_point(&lr, &obs, &crit, cv->cal, margin_use(cv), (double)pt->rate, &jd);
    if (kb_hostclock_write_point(&s->clock, HOSTCLOCK_CPUS(cv), dir, why, sizeof(why)) < 0)
        kb_run_note(&ev, "hostclock.json", why);
    /* a load that could not write its own files says nothing of the server: no verdict
     * blames it, and the point is redone */
    if (!KB_LOAD_EXIT_HARNESS(obs.load_exit))
        write_verdict(cv, pt, dir, &jd, &lr, load, s, &st, &bs, &obs,
                      kb_fixture_now_s() - t0, &ev);
    rc = kb_run_point_finish(&cv->r, &ev, dir, json_pack("{s:s,s:s}", "point", pt->id,
                             "verdict", kb_verdict_name(jd.verdict)), err, errlen);
    cv->finished++;
    if (!obs.preflight_failed) {    /* only driven points predict the ETA */
        cv->ran++;
        cv->run_secs += kb_fixture_now_s() - t0;
    }
    /* a point whose evidence could not be written has no verdict to show: it is redone */
    kb_curve_progress(cv, pt, rc < 0 ? "incomplete" : kb_verdict_name(jd.verdict),
                      obs.have_load ? &lr : NULL, 0);
    json_decref(load);
    return rc;
}

int kb_curve_run_point(struct kb_curve *cv, const struct kb_point *pt, const char *dir,
                       char *err, size_t errlen)
{
    struct sampler s = { 0 };
    double secs = warmup_of(cv, pt) + duration_of(cv, pt) + cv->plan.drain_s + 60;
    int rc;
    kb_fixseries_init(&s.fs, secs > CPU_SAMPLES_MIN ? (size_t)secs : CPU_SAMPLES_MIN);
    rc = measure_point(cv, pt, dir, &s, err, errlen);
    kb_fixseries_free(&s.fs);
    return rc;
}

