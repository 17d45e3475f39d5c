/* curvefloor.c -- the host's floor beside an interleaved curve (curve.h): kb-control, the
 * cheapest server this kernel allows, driven at a fixed rate between the runtimes' points, its
 * CPU per response the host's speed at that moment. A VM's speed drifts by a third in minutes
 * with no steal to show it; a runtime's cost divided by the floor measured beside it means the
 * same on a laptop and on a cloud VM. */
#define _GNU_SOURCE
#include "runner/run/curve/curve.h"

#include <dirent.h>
#include <jansson.h>
#include <math.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "runner/run/fixture.h"
#include "runner/run/steal.h"
#include "runner/sandbox/sandbox.h"
#include "runner/util/clock.h"
#include "runner/util/evidence.h"
#include "runner/util/paths.h"

#define FLOOR_ROUTE "plaintext"
#define FLOOR_DRAIN_S 0.25
/* The floor's fixture waits for the server CPUs to be as quiet as a point does (curvepoint.c):
 * every fixture together under QUIET_CPU of a CPU over a QUIET_WINDOW_S window. */
#define QUIET_MAX_S 10.0
#define QUIET_WINDOW_S 0.3
#define QUIET_CPU 0.10

/* The next free sample number under RUN/floor: a resumed run adds to what is there. */
static int first_free(const struct kb_curve *cv)
{
    char dir[KB_PATH_MAX];
    struct dirent *e;
    int next = 1, k;
    DIR *d = opendir(kb_path(dir, sizeof(dir), cv->r.dir, "floor"));
    while (d && (e = readdir(d)))
        if (sscanf(e->d_name, "f%d", &k) == 1 && k >= next)
            next = k + 1;
    if (d)
        closedir(d);
    return next;
}

static void unsampled(void *arg, double t0, double t)
{
    (void)arg, (void)t0, (void)t;
}

/* Every fixture on the server CPUs quiet, as before a point. */
static int quiet(struct kb_curve *cv)
{
    double t0 = kb_fixture_now_s(), a = kb_curve_server_cpu(cv, NULL), b;
    while (!kb_run_interrupted() && kb_fixture_now_s() - t0 < QUIET_MAX_S) {
        kb_sleep_ms((long)(QUIET_WINDOW_S * 1000));
        b = kb_curve_server_cpu(cv, NULL);
        if ((b - a) / QUIET_WINDOW_S < QUIET_CPU)
            return 1;
        a = b;
    }
    return 0;
}

struct floor_sample {
    double cpu_s, us;           /* the floor's CPU over the load, per response */
    int quiet;
    struct kb_steal_track srv, cli;
    struct kb_point_load lr;
    struct kb_point_obs obs;
    char error[512];
};

/* kb-control driven for KB_FLOOR_S into dir, its CPU read before and after. */
static void measure(struct kb_curve *cv, const char *dir, struct floor_sample *f)
{
    const struct kb_fixture_load ld = { .duration_s = KB_FLOOR_S, .warmup_s = 0,
        .drain_s = FLOOR_DRAIN_S, .threads = cv->plan.threads,
        .connections = cv->plan.connections, .requests_log = 0 };
    const struct kb_fixture_sampling sp = { .first_s = 0, .every_s = 1.0, .until_s = -1,
        .sample = unsampled, .arg = NULL, .kill_signal = SIGKILL };
    double others0, others1, cpu0, cpu1;
    json_t *load = NULL;
    f->quiet = quiet(cv);
    kb_steal_track_init(&f->srv, kb_sandbox_on_this_host(cv->r.fx.sandbox)
                                 ? cv->r.fx.server_cpus : NULL);
    kb_steal_track_init(&f->cli, cv->r.fx.client_cpus);
    kb_steal_track_sample(&f->srv, KB_STEAL_PROCSTAT, kb_fixture_now_s());
    kb_steal_track_sample(&f->cli, KB_STEAL_PROCSTAT, kb_fixture_now_s());
    cpu0 = kb_curve_server_cpu(cv, &others0) - others0;
    if (kb_fixture_drive(&cv->r.fx, &ld, FLOOR_ROUTE, KB_FLOOR_RPS, dir, &sp, &f->obs) < 0) {
        snprintf(f->error, sizeof(f->error), "the load generator did not run to its end%s%.300s",
                 f->obs.load_problem[0] ? ": " : "", f->obs.load_problem);
        return;
    }
    cpu1 = kb_curve_server_cpu(cv, &others1) - others1;
    kb_steal_track_sample(&f->srv, KB_STEAL_PROCSTAT, kb_fixture_now_s());
    kb_steal_track_sample(&f->cli, KB_STEAL_PROCSTAT, kb_fixture_now_s());
    kb_fixture_read_load(dir, &f->obs, &f->lr, &load);
    json_decref(load);
    f->cpu_s = cpu1 - cpu0;
    /* every response of the load, its connections' set-up included: the same work each time */
    if (!f->obs.have_load)
        snprintf(f->error, sizeof(f->error), "%.500s", f->obs.load_problem);
    else if (f->lr.completed <= 0 || !(f->cpu_s > 0))
        snprintf(f->error, sizeof(f->error), "no responses or no CPU measured");
    else if (f->lr.errors_total || f->lr.mismatches)
        snprintf(f->error, sizeof(f->error), "kb-control answered with %lld errors and %lld "
                 "mismatches", f->lr.errors_total, f->lr.mismatches);
    else
        f->us = f->cpu_s * 1e6 / (double)f->lr.completed;
}

static json_t *floor_json(const struct kb_curve *cv, const struct kb_point *pt, const char *id,
                          const struct floor_sample *f)
{
    char when[32];
    time_t now = time(NULL);
    strftime(when, sizeof(when), "%Y-%m-%dT%H:%M:%SZ", gmtime(&now));
    return json_pack("{s:s,s:s,s:s,s:s,s:I,s:f,s:i,s:i,s:I,s:o,s:o,s:o,s:b,s:o,s:o,s:s?}",
        "sample", id, "before_point", pt->id, "at", when, "route", FLOOR_ROUTE,
        "rate", (json_int_t)KB_FLOOR_RPS, "duration_s", KB_FLOOR_S,
        "threads", cv->plan.threads, "connections", cv->plan.connections,
        "completed", (json_int_t)(f->obs.have_load ? f->lr.completed : 0),
        "cpu_s", kb_json_figure(f->error[0] ? NAN : f->cpu_s),
        "cpu_us_per_response", kb_json_figure(f->error[0] ? NAN : f->us),
        "p99_us", kb_json_figure(f->obs.have_load ? f->lr.corrected.p99 : NAN),
        "quiet_before", f->quiet,
        "server_steal_fraction", kb_json_figure(kb_steal_track_mean(&f->srv)),
        "client_steal_fraction", kb_json_figure(kb_steal_track_mean(&f->cli)),
        "error", f->error[0] ? f->error : NULL);
}

/* One floor sample into RUN/floor/<id>/, floor.json last. */
static void take(struct kb_curve *cv, const struct kb_point *pt)
{
    struct floor_sample *f = calloc(1, sizeof(*f));
    struct kb_run_evidence ev = { "", "" };
    char dir[KB_PATH_MAX], sub[KB_PATH_MAX], id[16];
    json_t *j;
    if (!f)
        return;
    if (!cv->floor.next)
        cv->floor.next = first_free(cv);
    snprintf(id, sizeof(id), "f%d", cv->floor.next++);
    kb_path(sub, sizeof(sub), kb_path(dir, sizeof(dir), cv->r.dir, "floor"), id);
    if (kb_mkdirs(sub, f->error, sizeof(f->error)) == 0) {
        kb_curve_switch_to(cv, &cv->r.c.control, 1);
        if (cv->r.fx.sb && !cv->preflight_failed && !cv->harness_error)
            measure(cv, sub, f);
        else
            snprintf(f->error, sizeof(f->error), "kb-control did not start: %.400s",
                     cv->preflight_reason);
        /* a floor that cannot start is not tried before every rate again */
        cv->floor.failed = cv->preflight_failed;
    }
    cv->floor.taken++;
    cv->floor.last_t = kb_fixture_now_s();
    if (!f->error[0])
        snprintf(cv->floor.id, sizeof(cv->floor.id), "%s", id);
    j = floor_json(cv, pt, id, f);
    kb_run_write_json(&ev, sub, "floor.json", j);
    json_decref(j);
    if (f->error[0])
        printf("[floor %s] the host's floor not measured: %s\n", id, f->error);
    else
        printf("[floor %s] kb-control %d/s: %.2f us CPU a response (server steal %.1f %%)\n",
               id, KB_FLOOR_RPS, f->us, 100 * kb_steal_track_mean(&f->srv));
    fflush(stdout);
    free(f);
}

void kb_curve_floor_before(struct kb_curve *cv, const struct kb_point *pt)
{
    double gap = kb_fixture_now_s() - cv->floor.last_t;
    int due = cv->plan.interleaved && !cv->floor.failed && !kb_run_interrupted() &&
              (!cv->floor.taken || gap >= KB_FLOOR_MAX_GAP_S ||
               (pt->rate != cv->floor.last_rate && gap >= KB_FLOOR_MIN_GAP_S));
    cv->floor.last_rate = pt->rate;
    if (due)
        take(cv, pt);
}
