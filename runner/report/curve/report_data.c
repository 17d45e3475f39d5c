/* report_data.c -- report.csv (one row per runtime x route x rate) and report.json (the same
 * rows, the answer, the cost table, the missing list and the run identity). Both are
 * documented column by column in docs/report-format.md: latency in us everywhere (as in
 * load.json and series.csv), a unit in every numeric name, a figure that is only a lower
 * bound flagged as such, a figure that does not exist empty (CSV) or null (JSON), never 0.
 * Evidence the run wrote under older names (plan.json's and calibrate.json's criteria) is
 * given here under names with their units; plan, run and the fixtures' files are also
 * copied whole, as written, under their own names. */
#define _GNU_SOURCE
#include "runner/report/report.h"
#include "runner/util/atomicfile.h"
#include "runner/report/report_int.h"
#include "runner/run/calibrate.h"
#include "runner/util/evidence.h"
#include "runner/util/paths.h"

#include <stdlib.h>
#include <string.h>

/* CSV fields never contain a comma or quote except the reasons: quote them, double quotes. */
static void csv_quoted(FILE *f, const char *s)
{
    fputc('"', f);
    for (; *s; s++) {
        if (*s == '"')
            fputc('"', f);
        fputc(*s, f);
    }
    fputc('"', f);
}

/* ",value" or "," alone when the figure does not exist. */
static void csv_num(FILE *f, const char *fmt, int present, double v)
{
    fputc(',', f);
    if (present)
        fprintf(f, fmt, v);
}

/* A latency statistic: median and its bound flag, and with ranges the min and max. */
static void csv_lat(FILE *f, struct kb_stat s, int ranges)
{
    csv_num(f, "%.1f", s.n > 0, s.med);
    fprintf(f, ",%d", s.bound);
    if (ranges) {
        csv_num(f, "%.1f", s.n > 0, s.min);
        csv_num(f, "%.1f", s.n > 0, s.max);
    }
}

static void csv_row(FILE *f, const struct kb_report *r, const struct kb_cell *w)
{
    const struct kb_stat *c = &w->cpu_us_per_response;
    fprintf(f, "%d,%s,%s,%s,%ld,%d,%s,%s,", KB_REPORT_SCHEMA_VERSION, w->id, w->runtime,
            w->route, w->rate, w->n, w->verdict, w->server_verdict);
    if (w->trust_known)
        fprintf(f, "%d", w->trust_ok);
    fprintf(f, ",%.1f,%.1f,%.1f,%.4f,%.4f,%.4f", w->achieved.med, w->achieved.min,
            w->achieved.max, w->delivery.med, w->delivery.min, w->delivery.max);
    csv_lat(f, w->p50, 0);
    csv_lat(f, w->p90, 0);
    csv_lat(f, w->p99, 1);
    csv_lat(f, w->p999, 0);
    csv_lat(f, w->max, 0);
    fprintf(f, ",%lld", w->bounded);
    csv_num(f, "%.0f", w->bound_from_us >= 0, w->bound_from_us);
    fprintf(f, ",%lld,%lld,%lld,%lld,%lld,%lld,%lld,%lld,%.3f", w->scheduled, w->errors,
            w->non2xx, w->mismatches, w->err_io, w->err_timeout, w->unanswered, w->completed,
            w->client_cpu_max);
    csv_num(f, "%.0f", w->lag_p99_max_us >= 0, w->lag_p99_max_us);
    csv_num(f, "%.0f", w->rx_p99_max_us >= 0, w->rx_p99_max_us);
    csv_num(f, "%.0f", w->threads_max > 0, w->threads_max);
    csv_num(f, "%.0f", w->threads_requested > 0, w->threads_requested);
    fprintf(f, ",%.3f", w->server_cpu_med);
    csv_num(f, "%.3f", w->cpu_interval_s.n > 0, w->cpu_interval_s.med);
    csv_num(f, "%.3f", c->n > 0, c->med);
    fprintf(f, ",%lld", w->rss_max);
    csv_num(f, "%.0f", w->pss_max > 0, (double)w->pss_max);
    fprintf(f, ",%d,%d,", r->unconstrained, r->partial);
    csv_quoted(f, w->reason);
    fputc(',', f);
    csv_quoted(f, w->server_reason);
    fputc('\n', f);
}

static int fill_report_csv(FILE *f, const void *arg)
{
    const struct kb_report *r = arg;
    fprintf(f, "schema_version,point_id,runtime,route,requested_rps,repeats_count,verdict,"
            "server_verdict,client_trust_ok,achieved_rps,achieved_min_rps,achieved_max_rps,"
            "delivery_fraction,delivery_min_fraction,delivery_max_fraction,p50_us,p50_is_bound,"
            "p90_us,p90_is_bound,p99_us,p99_is_bound,p99_min_us,p99_max_us,p999_us,"
            "p999_is_bound,max_us,max_is_bound,bounded_count,bound_from_us,scheduled_count,"
            "errors_count,non2xx_count,mismatches_count,socket_errors_count,timeouts_count,"
            "unanswered_count,completed_count,client_cpu_max_fraction,"
            "client_lag_p99_max_us,client_rx_delay_p99_max_us,client_threads_count,"
            "client_threads_requested_count,server_cpu_fraction,server_cpu_interval_s,"
            "server_cpu_us_per_response,server_rss_max_bytes,server_pss_max_bytes,"
            "unconstrained,partial,reason,server_reason\n");
    for (size_t i = 0; i < r->nrows; i++)
        if (r->rows[i].planned)
            csv_row(f, r, &r->rows[i]);
    return ferror(f) ? -1 : 0;
}

int kb_report_write_csv(const struct kb_report *r, const char *dir, char *err, size_t errlen)
{
    char path[KB_PATH_MAX];
    return kb_afile_write_with(kb_path(path, sizeof(path), dir, "report.csv"), fill_report_csv, r, err,
                               errlen);
}

static json_t *num_or_null(int present, double v)
{
    return present ? json_real(v) : json_null();
}

static json_t *stat_json(struct kb_stat s)
{
    return json_pack("{s:o,s:o,s:o}", "median", num_or_null(s.n > 0, s.med), "min",
                     num_or_null(s.n > 0, s.min), "max", num_or_null(s.n > 0, s.max));
}

/* A latency statistic: is_bound says the median, min and max are lower bounds. */
static json_t *lat_json(struct kb_stat s)
{
    json_t *o = stat_json(s);
    json_object_set_new(o, "is_bound", json_boolean(s.bound));
    return o;
}

static json_t *trust_json(const struct kb_cell *w)
{
    return json_pack("{s:b,s:o,s:s}", "known", w->trust_known, "ok",
                     w->trust_known ? json_boolean(w->trust_ok) : json_null(), "reason",
                     w->trust_reason);
}

/* grid: a rate of the plan's grid; else a refined held end (curve --refine). */
static json_t *row_json(const struct kb_cell *w, int grid)
{
    const struct kb_stat *c = &w->cpu_us_per_response;
    json_t *o = json_pack("{s:s,s:O,s:s,s:s,s:I,s:i,s:s,s:s,s:o,s:s,s:o}", "point_id", w->id,
        "point_ids", w->point_ids, "runtime", w->runtime, "route", w->route, "requested_rps",
        (json_int_t)w->rate, "repeats_count", w->n, "verdict", w->verdict, "reason", w->reason,
        "server_verdict", w->server_verdict[0] ? json_string(w->server_verdict) : json_null(),
        "server_reason", w->server_reason, "client_trust", trust_json(w));
    json_object_update_new(o, json_pack("{s:o,s:o,s:o,s:o,s:o,s:o,s:o,s:I,s:o,s:I}",
        "achieved_rps", stat_json(w->achieved), "delivery_fraction", stat_json(w->delivery),
        "p50_us", lat_json(w->p50), "p90_us", lat_json(w->p90), "p99_us", lat_json(w->p99),
        "p999_us", lat_json(w->p999), "max_us", lat_json(w->max), "bounded_count",
        (json_int_t)w->bounded, "bound_from_us", num_or_null(w->bound_from_us >= 0,
        w->bound_from_us), "scheduled_count", (json_int_t)w->scheduled));
    json_object_update_new(o, json_pack("{s:I,s:I,s:I,s:f,s:o,s:o,s:o,s:o}", "errors_count",
        (json_int_t)w->errors, "non2xx_count", (json_int_t)w->non2xx, "mismatches_count",
        (json_int_t)w->mismatches, "client_cpu_max_fraction", w->client_cpu_max,
        "client_lag_p99_max_us", num_or_null(w->lag_p99_max_us >= 0, w->lag_p99_max_us),
        "client_rx_delay_p99_max_us", num_or_null(w->rx_p99_max_us >= 0, w->rx_p99_max_us),
        "client_threads_count", w->threads_max > 0 ? json_integer(w->threads_max) : json_null(),
        "client_threads_requested_count", w->threads_requested > 0
            ? json_integer(w->threads_requested) : json_null()));
    json_object_update_new(o, json_pack("{s:f,s:o,s:o,s:I,s:o}", "server_cpu_fraction",
        w->server_cpu_med, "server_cpu_interval_s", stat_json(w->cpu_interval_s),
        "server_cpu_us_per_response", stat_json(*c), "server_rss_max_bytes",
        (json_int_t)w->rss_max, "server_pss_max_bytes",
        w->pss_max > 0 ? json_integer(w->pss_max) : json_null()));
    json_object_set_new(o, "server_cpu_floor_multiple", stat_json(w->floor_multiple));
    json_object_set_new(o, "queue_grew_count", json_integer(w->queue_grew_n));
    json_object_update_new(o, json_pack("{s:I,s:I,s:I,s:I}", "socket_errors_count",
        (json_int_t)w->err_io, "timeouts_count", (json_int_t)w->err_timeout,
        "unanswered_count", (json_int_t)w->unanswered, "completed_count",
        (json_int_t)w->completed));
    json_object_set_new(o, "is_grid", json_boolean(grid));
    return o;
}

static json_t *cal_step_json(const struct kb_calibrate_step *s)
{
    return json_pack("{s:f,s:f,s:f,s:f,s:f,s:o,s:f,s:I,s:b,s:s,s:i,s:s}", "requested_rps",
                     s->rate, "achieved_rps", s->achieved_rps, "delivery_fraction", s->delivery,
                     "client_cpu_fraction", s->cpu_fraction, "lag_p99_us", s->lag_p99_us,
                     "rx_delay_p99_us", num_or_null(s->rx_delay_p99_us >= 0, s->rx_delay_p99_us),
                     "corrected_p99_us", s->corrected_p99_us, "errors_count",
                     (json_int_t)s->errors, "held", s->held, "why", s->why, "attempts_count",
                     s->attempts, "missed_before", s->missed_before);
}

/* A criteria object of the run's evidence (plan.json's, calibrate.json's) under report.json's
 * names: the two that predate the unit suffixes get theirs, the rest already carry one. */
static json_t *criteria_named(json_t *crit)
{
    static const char *const renamed[][2] = { { "min_delivery", "min_delivery_fraction" },
                                              { "errors_max", "errors_max_count" } };
    const char *key;
    json_t *v, *o;
    if (!json_is_object(crit))
        return json_null();
    o = json_object();
    json_object_foreach(crit, key, v) {
        const char *name = key;
        for (size_t i = 0; i < sizeof(renamed) / sizeof(renamed[0]); i++)
            if (!strcmp(key, renamed[i][0]))
                name = renamed[i][1];
        json_object_set(o, name, v);
    }
    return o;
}

/* The client's proof: what report.md's "Client margin" says, as data. */
static json_t *calibration_json(const struct kb_report *r)
{
    const struct kb_calibrate_result *c = r->cal;
    json_t *steps, *yes, *no, *o;
    if (!c)
        return json_pack("{s:b,s:s}", "present", 0, "note", r->cal_note);
    steps = json_array();
    yes = json_array();
    no = json_array();
    for (size_t i = 0; i < c->nsteps; i++)
        json_array_append_new(steps, cal_step_json(&c->steps[i]));
    for (size_t k = 0; k < kb_report_nrates(r); k++)
        json_array_append_new(kb_report_covers(r, kb_report_rate(r, k)) == 1 ? yes : no,
                              json_integer(kb_report_rate(r, k)));
    o = json_pack("{s:b,s:s,s:b,s:f,s:f,s:f,s:f,s:f,s:f,s:o,s:o,s:o}", "present", 1, "file",
                  "calibrate/calibrate.json", "proven", c->proven, "margin_rps", c->margin_rps,
                  "highest_held_rps", c->highest_held_rps,
                  "required_rps", c->required_rps, "up_to_rps", c->up_to_rps, "factor_ratio",
                  c->factor, "covers_up_to_rps", c->margin_rps / c->factor, "rates_covered_rps",
                  yes, "rates_not_covered_rps", no, "steps", steps);
    json_object_set_new(o, "criteria", criteria_named(json_object_get(r->cal_json, "criteria")));
    json_object_set(o, "route", json_object_get(r->cal_json, "route"));
    json_object_set(o, "client_cpus", json_object_get(r->cal_json, "client_cpus"));
    json_object_set(o, "server_cpus", json_object_get(r->cal_json, "server_cpus"));
    return o;
}

/* A second's p99 in us, with its bound flag: null when that second had none. */
static json_t *sec_p99(const struct kb_report_series *s, size_t i)
{
    return json_pack("{s:o,s:b}", "value", num_or_null(s->v[i].p99_us >= 0, s->v[i].p99_us),
                     "is_bound", s->v[i].p99_bound);
}

/* Per runtime x route with an uncontrolled row: its first uncontrolled point and chart. */
static json_t *series_json(const struct kb_report *r)
{
    json_t *a = json_array();
    for (size_t i = 0; i < r->nseries; i++) {
        const struct kb_report_series *s = &r->series[i];
        char chart[128];
        snprintf(chart, sizeof(chart), "charts/series-%s-%s.svg", s->runtime, s->route);
        json_array_append_new(a, json_pack("{s:s,s:s,s:I,s:s,s:b,s:I,s:o,s:o,s:o,s:s}", "runtime",
            s->runtime, "route", s->route, "requested_rps", (json_int_t)s->rate, "point",
            s->point, "client_limited_past_criteria", s->past_margin, "seconds_count",
            (json_int_t)s->n, "first_p99_us", s->n ? sec_p99(s, 0) : json_null(),
            "last_p99_us", s->n ? sec_p99(s, s->n - 1) : json_null(),
            "chart", s->n ? json_string(chart) : json_null(), "note", s->note));
    }
    return a;
}

/* One runtime's answer on one route, as report.md's first table gives it. */
static json_t *answer_cell(const struct kb_report *r, const char *rt, const char *route)
{
    struct kb_report_answer a;
    int soft;
    double ratio = kb_report_answer_ratio(r, rt, route, &soft);
    kb_report_answer_of(r, rt, route, &a);
#define RATE(x) ((x) ? json_integer(x) : json_null())
    const json_t *rf = kb_report_refined(r, rt, route);
    json_t *o = json_pack("{s:b,s:o,s:b,s:b,s:o,s:o,s:o,s:o,s:o,s:f,s:o,s:b,s:O}", "planned",
        a.planned, "proven_rps", RATE(a.proven), "proven_is_bound", a.client_from != 0,
        "proven_above_margin", a.past_margin,
        "client_limited_from_rps", RATE(a.client_from), "indicative_rps", RATE(a.indicative),
        "below_rps", RATE(a.below), "below_unproven_rps", RATE(a.below_unproven),
        "failed_at_rps", RATE(a.failed_at), "level_rps", a.level,
        "vs_baseline_ratio", num_or_null(ratio > 0, ratio), "vs_baseline_is_indicative",
        ratio > 0 && soft, "refined", rf ? (json_t *)rf : json_null());
    /* the grid's own cell, kept beside the refined answer */
    json_object_set_new(o, "grid_proven_rps", RATE(a.grid_proven));
    json_object_set_new(o, "proven_is_refined", json_boolean(a.refined));
    return o;
#undef RATE
}

/* The runtimes in rank order, each with its answer per route and its cost ratio. */
static json_t *answer_json(const struct kb_report *r)
{
    size_t order[64];
    int rank[64];
    size_t n = kb_report_rank(r, order, rank, 64);
    json_t *a = json_array();
    for (size_t i = 0; i < n; i++) {
        const char *rt = kb_report_runtime(r, order[i]);
        double e = kb_report_efficiency_ratio(r, rt);
        json_t *routes = json_object();
        for (size_t j = 0; j < kb_report_nroutes(r); j++)
            json_object_set_new(routes, kb_report_route(r, j), answer_cell(r, rt, kb_report_route(r, j)));
        json_array_append_new(a, json_pack("{s:i,s:s,s:o,s:o}", "rank", rank[i], "runtime", rt,
            "routes", routes, "cost_vs_baseline_ratio", num_or_null(e > 0, e)));
    }
    return a;
}

/* Per route and runtime, what a response cost the server at its own highest held rate
 * (runner/report/report_int.h, kb_report_cost_of), and its ratio to the baseline's. */
static json_t *cost_json(const struct kb_report *r)
{
    json_t *o = json_object();
    for (size_t j = 0; j < kb_report_nroutes(r); j++) {
        const char *ro = kb_report_route(r, j);
        struct kb_report_cost b;
        json_t *rows = json_array();
        kb_report_cost_of(r, kb_report_baseline(r), ro, &b);
        for (size_t i = 0; i < kb_report_nruntimes(r); i++) {
            const char *rt = kb_report_runtime(r, i);
            const struct kb_cell *w = kb_report_row(r, rt, ro, kb_report_rate(r, 0));
            struct kb_report_cost c;
            if (!w || !w->planned)
                continue;
            kb_report_cost_of(r, rt, ro, &c);
            json_array_append_new(rows, json_pack("{s:s,s:o,s:o,s:o,s:o,s:b}", "runtime", rt,
                "held_rps", c.rate ? json_integer(c.rate) : json_null(),
                "server_cpu_us_per_response", num_or_null(c.us > 0, c.us),
                "vs_baseline_ratio", num_or_null(c.us > 0 && b.us > 0, b.us > 0 ? c.us / b.us : 0),
                "capacity_estimate_rps", num_or_null(c.us > 0, c.capacity_rps),
                "capacity_is_held_rate", c.capacity_floor));
        }
        json_object_set_new(o, ro, rows);
    }
    return o;
}

/* The host's floor over the run: null for a run that took none. */
static json_t *floor_json(const struct kb_report *r)
{
    struct kb_report_floor f;
    kb_report_floor_of(r, &f);
    if (!f.n)
        return json_null();
    return json_pack("{s:i,s:f,s:f,s:f,s:f,s:f,s:O}", "samples_count", f.n,
        "cpu_us_per_response_median", f.med, "cpu_us_per_response_min", f.min,
        "cpu_us_per_response_max", f.max, "moved_fraction", f.max / f.min - 1,
        "server_steal_max_fraction", f.steal_max, "samples", r->floor);
}

static json_t *range_json(int n, double med, double min, double max)
{
    return json_pack("{s:o,s:o,s:o,s:i}", "median", num_or_null(n > 0, med), "min",
                     num_or_null(n > 0, min), "max", num_or_null(n > 0, max), "count", n);
}

/* Per route, each runtime beside the baseline (report_side.c): knee, cost and floor ratios. */
static json_t *side_json(const struct kb_report *r)
{
    json_t *o = json_object();
    for (size_t j = 0; kb_report_baseline(r) && j < kb_report_nroutes(r); j++) {
        const char *ro = kb_report_route(r, j);
        json_t *rows = json_array();
        for (size_t i = 0; i < kb_report_nruntimes(r); i++) {
            const char *rt = kb_report_runtime(r, i);
            struct kb_report_side s;
            kb_report_side_of(r, rt, ro, &s);
            if (!s.n_rates && !s.n_floor && !s.knee)
                continue;
            json_array_append_new(rows, json_pack("{s:s,s:{s:o,s:o,s:o,s:b,s:b,s:b},s:o,s:o}",
                "runtime", rt, "knee_vs_baseline_ratio", "value", num_or_null(s.knee > 0, s.knee),
                "low", num_or_null(s.knee_lo > 0, s.knee_lo), "high",
                num_or_null(s.knee_hi > 0, s.knee_hi), "runtime_is_bound", s.knee_bound,
                "baseline_is_bound", s.base_bound, "refined", s.refined,
                "cpu_per_response_vs_baseline_ratio",
                range_json(s.n_rates, s.cost, s.cost_min, s.cost_max),
                "cpu_per_response_floor_multiple",
                range_json(s.n_floor, s.floor, s.floor_min, s.floor_max)));
        }
        json_object_set_new(o, ro, rows);
    }
    return o;
}

static json_t *highest_json(const struct kb_report *r)
{
    json_t *hi = json_object();
    for (size_t i = 0; i < kb_report_nruntimes(r); i++) {
        json_t *o = json_object();
        for (size_t j = 0; j < kb_report_nroutes(r); j++) {
            struct kb_report_answer a;
            long h;
            kb_report_answer_of(r, kb_report_runtime(r, i), kb_report_route(r, j), &a);
            h = a.proven;
            json_object_set_new(o, kb_report_route(r, j), h ? json_integer(h) : json_null());
        }
        json_object_set_new(hi, kb_report_runtime(r, i), o);
    }
    return hi;
}

/* The criterion the rows were judged by, and whether it is the run's own. */
static json_t *criteria_json(const struct kb_report *r)
{
    return json_pack("{s:f,s:f,s:b,s:o}", "min_delivery_fraction", r->min_delivery,
                     "max_p99_us", r->max_p99_us, "rejudged", r->rd && r->rd->rejudge,
                     "run", criteria_named(json_object_get(r->plan, "criteria")));
}

/* Per runtime {limits, preflight, identity_sha256}, each key present: null where the fixture
 * left no such file (one that never started has no limits read back). */
static json_t *fixtures_json(const struct kb_report *r)
{
    static const char *const keys[] = { "limits", "preflight", "identity_sha256" };
    json_t *o = json_object(), *fx;
    const char *rt;
    json_object_foreach(r->fixtures, rt, fx) {
        json_t *f = json_object();
        for (size_t i = 0; i < sizeof(keys) / sizeof(keys[0]); i++) {
            json_t *v = json_object_get(fx, keys[i]);
            json_object_set(f, keys[i], v ? v : json_null());
        }
        json_object_set_new(o, rt, f);
    }
    return o;
}

/* The CPU clocks' summary with its count named as one (runner/run/hostclock.h: "points"). */
static json_t *host_clock_json(const struct kb_report *r)
{
    json_t *o, *n;
    if (!r->hostclock)
        return json_null();
    o = json_copy(r->hostclock);
    if ((n = json_object_get(o, "points"))) {
        json_object_set(o, "points_count", n);
        json_object_del(o, "points");
    }
    return o;
}

/* How the verdicts were checked against the raw files; null when they were not. */
static json_t *rederived_json(const struct kb_report *r)
{
    json_t *un = json_array();
    if (!r->rd) {
        json_decref(un);
        return json_null();
    }
    for (size_t i = 0; i < r->rd->nunchecked; i++)
        json_array_append_new(un, json_string(r->rd->unchecked[i]));
    return json_pack("{s:I,s:o,s:o}", "checked_count", (json_int_t)r->rd->nchecked,
                     "not_rederived", un, "changed",
                     r->rd->changed ? json_incref(r->rd->changed) : json_array());
}

int kb_report_write_json(const struct kb_report *r, const char *dir, char *err, size_t errlen)
{
    json_t *rows = json_array(), *missing = json_array(), *doc, *im;
    char path[KB_PATH_MAX];
    int rc;
    for (size_t i = 0; i < r->nrows; i++)
        if (r->rows[i].planned)
            json_array_append_new(rows, row_json(&r->rows[i], 1));
    for (size_t i = 0; i < r->nfine; i++)
        json_array_append_new(rows, row_json(&r->fine[i], 0));
    for (size_t i = 0; i < r->nmissing; i++)
        json_array_append_new(missing, json_string(r->missing[i]));
    doc = json_pack("{s:i,s:b,s:b,s:o,s:o,s:o,s:s?,s:o,s:o,s:O,s:O,s:o}", "schema_version",
                    KB_REPORT_SCHEMA_VERSION, "partial", r->partial, "unconstrained",
                    r->unconstrained, "missing", missing, "highest_controlled_rps",
                    highest_json(r), "answer", answer_json(r), "baseline", kb_report_baseline(r),
                    "cost", cost_json(r), "rows", rows, "plan", r->plan, "run", r->run,
                    "fixtures", fixtures_json(r));
    json_object_set_new(doc, "criteria", criteria_json(r));
    json_object_set_new(doc, "host_floor", floor_json(r));
    json_object_set_new(doc, "side_by_side", side_json(r));
    json_object_set_new(doc, "rederived", rederived_json(r));
    json_object_set(doc, "published", r->published ? r->published : json_null());
    json_object_set_new(doc, "readiness_curve", kb_report_readiness_json(r));
    json_object_set_new(doc, "calibration", calibration_json(r));
    json_object_set_new(doc, "first_uncontrolled_series", series_json(r));
    json_object_set_new(doc, "host_clock", host_clock_json(r));
    /* the backend, and in a container the image that ran (run.json has its full identity) */
    json_object_set(doc, "backend", json_object_get(r->run, "backend"));
    if ((im = json_object_get(r->run, "image")))
        json_object_set_new(doc, "image", json_pack("{s:O,s:O,s:O,s:O,s:O,s:O}",
            "image", json_object_get(im, "image"), "id", json_object_get(im, "id"),
            "repo_digests", json_object_get(im, "repo_digests"), "base",
            json_object_get(im, "base"), "base_is_pinned", json_object_get(im, "base_is_pinned"),
            "note", json_object_get(im, "note")));
    rc = kb_write_json_atomic(kb_path(path, sizeof(path), dir, "report.json"), doc, err, errlen);
    json_decref(doc);
    return rc;
}
