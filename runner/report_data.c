/* report_data.c -- report.csv (one row per runtime x route x rate) and report.json (the same
 * rows, the highest controlled points, the missing list and the run identity). */
#define _GNU_SOURCE
#include "runner/report.h"
#include "runner/calibrate.h"
#include "runner/evidence.h"

#include <stdlib.h>
#include <string.h>

/* CSV fields never contain a comma or quote except the reason: quote it, double quotes. */
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

int kb_report_write_csv(const struct kb_report *r, const char *dir, char *err, size_t errlen)
{
    char *buf = NULL, path[4200];
    size_t len = 0;
    FILE *f = open_memstream(&buf, &len);
    int rc;
    fprintf(f, "runtime,route,requested_rps,repeats,verdict,achieved_rps,achieved_min,achieved_max,"
            "delivery,p50_ms,p90_ms,p99_ms,p99_min_ms,p99_max_ms,p999_ms,max_ms,errors,non2xx,"
            "mismatches,client_cpu_max,lag_p99_max_ms,server_cpu,server_rss_max_bytes,"
            "unconstrained,partial,reason\n");
    for (size_t i = 0; i < r->nrows; i++) {
        const struct kb_report_row *w = &r->rows[i];
        if (!w->planned)
            continue;
        fprintf(f, "%s,%s,%ld,%d,%s,%.1f,%.1f,%.1f,%.4f,%.3f,%.3f,%.3f,%.3f,%.3f,%.3f,%.3f,"
                "%lld,%lld,%lld,%.3f,%.3f,%.3f,%lld,%d,%d,", w->runtime, w->route, w->rate, w->n,
                w->verdict, w->achieved.med, w->achieved.min, w->achieved.max, w->delivery.med,
                w->p50.med, w->p90.med, w->p99.med, w->p99.min, w->p99.max, w->p999.med,
                w->max.med, w->errors, w->non2xx, w->mismatches, w->client_cpu_max,
                w->lag_p99_max_ms, w->server_cpu_med, w->rss_max, r->unconstrained, r->partial);
        csv_quoted(f, w->reason);
        fputc('\n', f);
    }
    fclose(f);
    rc = kb_write_atomic(kb_path(path, sizeof(path), dir, "report.csv"), buf, len, err, errlen);
    free(buf);
    return rc;
}

static json_t *stat_json(struct kb_stat s)
{
    return json_pack("{s:f,s:f,s:f}", "median", s.med, "min", s.min, "max", s.max);
}

static json_t *row_json(const struct kb_report_row *w)
{
    return json_pack("{s:s,s:s,s:I,s:i,s:s,s:s,s:o,s:o,s:o,s:o,s:o,s:o,s:o,s:I,s:I,s:I,s:f,s:f,s:f,s:I}",
        "runtime", w->runtime, "route", w->route, "requested_rps", (json_int_t)w->rate,
        "repeats", w->n, "verdict", w->verdict, "reason", w->reason,
        "achieved_rps", stat_json(w->achieved), "delivery", stat_json(w->delivery),
        "p50_ms", stat_json(w->p50), "p90_ms", stat_json(w->p90), "p99_ms", stat_json(w->p99),
        "p999_ms", stat_json(w->p999), "max_ms", stat_json(w->max), "errors", (json_int_t)w->errors,
        "non2xx", (json_int_t)w->non2xx, "mismatches", (json_int_t)w->mismatches,
        "client_cpu_max", w->client_cpu_max, "lag_p99_max_ms", w->lag_p99_max_ms,
        "server_cpu", w->server_cpu_med, "server_rss_max_bytes", (json_int_t)w->rss_max);
}

static json_t *cal_step_json(const struct kb_calibrate_step *s)
{
    return json_pack("{s:f,s:f,s:f,s:f,s:f,s:f,s:I,s:b,s:s,s:i,s:s}", "rate", s->rate,
                     "achieved_rps", s->achieved_rps, "delivery", s->delivery,
                     "client_cpu_fraction", s->cpu_fraction, "lag_p99_us", s->lag_p99_us,
                     "corrected_p99_us", s->corrected_p99_us, "errors", (json_int_t)s->errors,
                     "held", s->held, "why", s->why, "attempts", s->attempts,
                     "missed_before", s->missed_before);
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
    o = json_pack("{s:b,s:s,s:b,s:f,s:f,s:f,s:f,s:f,s:o,s:o,s:o}", "present", 1, "file",
                  "calibrate/calibrate.json", "proven", c->proven, "margin_rps", c->margin_rps,
                  "required_rps", c->required_rps, "up_to_rps", c->up_to_rps, "factor",
                  c->factor, "covers_up_to_rps", c->margin_rps / c->factor, "rates_covered", yes,
                  "rates_not_covered", no, "steps", steps);
    json_object_set(o, "criteria", json_object_get(r->cal_json, "criteria"));
    json_object_set(o, "route", json_object_get(r->cal_json, "route"));
    json_object_set(o, "client_cpus", json_object_get(r->cal_json, "client_cpus"));
    json_object_set(o, "server_cpus", json_object_get(r->cal_json, "server_cpus"));
    return o;
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
            s->point, "client_limited_past_margin", s->past_margin, "seconds", (json_int_t)s->n,
            "first_p99_ms", s->n ? json_real(s->v[0].p99_ms) : json_null(),
            "last_p99_ms", s->n ? json_real(s->v[s->n - 1].p99_ms) : json_null(),
            "chart", s->n ? json_string(chart) : json_null(), "note", s->note));
    }
    return a;
}

int kb_report_write_json(const struct kb_report *r, const char *dir, char *err, size_t errlen)
{
    json_t *rows = json_array(), *hi = json_object(), *missing = json_array(), *doc, *im;
    char path[4200];
    int rc;
    for (size_t i = 0; i < r->nrows; i++)
        if (r->rows[i].planned)
            json_array_append_new(rows, row_json(&r->rows[i]));
    for (size_t i = 0; i < kb_report_nruntimes(r); i++) {
        json_t *o = json_object();
        for (size_t j = 0; j < kb_report_nroutes(r); j++) {
            long h = kb_report_highest(r, kb_report_runtime(r, i), kb_report_route(r, j));
            json_object_set_new(o, kb_report_route(r, j), h ? json_integer(h) : json_null());
        }
        json_object_set_new(hi, kb_report_runtime(r, i), o);
    }
    for (size_t i = 0; i < r->nmissing; i++)
        json_array_append_new(missing, json_string(r->missing[i]));
    doc = json_pack("{s:b,s:b,s:o,s:o,s:o,s:O,s:O,s:O}", "partial", r->partial,
                    "unconstrained", r->unconstrained, "missing", missing,
                    "highest_controlled", hi, "rows", rows, "plan", r->plan, "run", r->run,
                    "fixtures", r->fixtures);
    json_object_set_new(doc, "calibration", calibration_json(r));
    json_object_set_new(doc, "first_uncontrolled_series", series_json(r));
    /* the backend, and with docker the image that ran (run.json has its full identity) */
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
