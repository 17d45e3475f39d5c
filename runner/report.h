/* report.h -- reads a run directory's evidence (and nothing else) into a model, aggregates
 * repeats, and writes report.md, report.csv, report.json and SVG charts from it.
 *
 * kb_report_load() fills struct kb_report from plan.json, run.json, fixtures/<rt>/, every
 * points/<id>/{verdict.json,DONE}, calibrate/calibrate.json when the curve calibrated, and
 * the per-second series.csv of each runtime's first uncontrolled point per route (where the
 * queue forms); points without a marker are listed in missing. Aggregates
 * are one row per runtime x route x rate: medians over repeats with min-max ranges. The
 * writers (report_md.c, report_data.c, report_svg.c) only read the model. kb_report_free()
 * frees everything kb_report_load() allocated. */
#ifndef KB_REPORT_H
#define KB_REPORT_H

#include <jansson.h>
#include <stddef.h>
#include <stdio.h>

struct kb_stat {
    double med, min, max;
};

struct kb_report_row {
    char runtime[32], route[32];
    char first_id[128];          /* the first complete repeat's point id, "" when none */
    char unc_id[128];            /* the first repeat whose own verdict is uncontrolled, or "" */
    long rate;
    int planned;                 /* the plan has points here (db: gray-static only) */
    int n;                       /* repeats found */
    char verdict[16];            /* aggregated verdict */
    char reason[512];            /* first failure/client-limit reason, or the last point's */
    struct kb_stat achieved, delivery, p50, p90, p99, p999, max;   /* latency in ms */
    long long errors, non2xx, mismatches;                          /* summed over repeats */
    double client_cpu_max, lag_p99_max_ms, server_cpu_med;
    long long rss_max;
};

struct kb_calibrate_result;      /* runner/calibrate.h */

/* One second of a point's series.csv (latency in ms). */
struct kb_report_sec {
    double start_s, length_s, achieved_rps, p50_ms, p99_ms, max_ms;
    long long completed, errors;
};

/* A runtime's first uncontrolled point on a route and its series (n == 0: note says why).
 * In a --force run the points above the margin are client-limited, never uncontrolled, so
 * the first of those whose own delivery or p99 misses the criteria stands in (past_margin). */
struct kb_report_series {
    char runtime[32], route[32], point[128];
    long rate;
    int past_margin;             /* a --force run: client-limited above the proven margin, its
                                    own figures past the criteria (the queue behind the mark) */
    size_t n;
    struct kb_report_sec *v;     /* owned */
    char note[256];              /* "" when the series was read */
};

struct kb_report {
    json_t *plan, *run;          /* owned */
    json_t *fixtures;            /* {runtime: {limits, identity sha256, preflight}} owned */
    char **missing;              /* ids without a completion marker */
    size_t nmissing;
    struct kb_report_row *rows;
    size_t nrows;
    int repeats, unconstrained, partial;
    double min_delivery, max_p99_ms;
    struct kb_calibrate_result *cal;   /* calibrate/calibrate.json read, or NULL (owned) */
    json_t *cal_json;            /* the same file as written (criteria, CPUs), or NULL; owned */
    char cal_note[512];          /* when cal is NULL: absent, or why it could not be read */
    struct kb_report_series *series;   /* one per runtime x route with an uncontrolled row */
    size_t nseries;
};

/* 0, or -1 with err (no plan.json, unreadable verdict). Missing points are not an error
 * here; the caller decides (refuse, or --partial). */
int kb_report_load(const char *dir, struct kb_report *r, char *err, size_t errlen);
void kb_report_free(struct kb_report *r);

/* The row for runtime/route/rate, or NULL. */
const struct kb_report_row *kb_report_row(const struct kb_report *r, const char *runtime,
                                          const char *route, long rate);
/* The highest rate whose aggregated verdict is controlled; 0 when none. */
long kb_report_highest(const struct kb_report *r, const char *runtime, const char *route);

/* The series chart's data for runtime/route, or NULL when it has no uncontrolled row. */
const struct kb_report_series *kb_report_series_of(const struct kb_report *r, const char *runtime,
                                                   const char *route);
/* Reads a series.csv (header names the columns; start_s, achieved_rps, p50_us, p99_us,
 * max_us needed) into s->v/s->n, replacing what was there. 0, or -1 with err. */
int kb_report_read_series(const char *path, struct kb_report_series *s, char *err, size_t errlen);
/* 1 when the calibration's proven margin covers a point requested at rate, 0 when not,
 * -1 when the run has no calibration. */
int kb_report_covers(const struct kb_report *r, long rate);

/* Internal to kb_report_load/kb_report_free (report_proof.c): the calibration and the
 * series; neither fails the load, a missing or unreadable file is noted in the model. */
void kb_report_load_proof(struct kb_report *r, const char *dir);
void kb_report_free_proof(struct kb_report *r);

/* Writers: 0 or -1 with err. Each writes atomically into dir. */
int kb_report_write_md(const struct kb_report *r, const char *dir, char *err, size_t errlen);
int kb_report_write_csv(const struct kb_report *r, const char *dir, char *err, size_t errlen);
int kb_report_write_json(const struct kb_report *r, const char *dir, char *err, size_t errlen);
/* charts/achieved-<route>.svg and charts/p99-<route>.svg per route, and
 * charts/series-<runtime>-<route>.svg per read series (latency over time). */
int kb_report_write_svg(const struct kb_report *r, const char *dir, char *err, size_t errlen);

/* Helpers for the writers: the plan's names in order. */
size_t kb_report_nruntimes(const struct kb_report *r);
const char *kb_report_runtime(const struct kb_report *r, size_t i);
size_t kb_report_nroutes(const struct kb_report *r);
const char *kb_report_route(const struct kb_report *r, size_t i);
size_t kb_report_nrates(const struct kb_report *r);
long kb_report_rate(const struct kb_report *r, size_t i);

#endif
