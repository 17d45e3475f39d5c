/* report_proof.c -- the report's proof of the instrument: the client's calibrated margin
 * (calibrate/calibrate.json, written by `curve --calibrate`) and, per runtime and route,
 * the per-second series of the first uncontrolled point, where the queue forms. Reads
 * files only; anything missing is noted in the model for the writers to say plainly. */
#define _GNU_SOURCE
#include "runner/report/report.h"
#include "runner/report/report_int.h"
#include "runner/run/calibrate.h"
#include "runner/util/paths.h"
#include "runner/util/xalloc.h"

#include <stdlib.h>
#include <string.h>

#define SERIES_MAX_ROWS 100000   /* a day of seconds is far beyond any point's length */

static void load_calibration(struct kb_report *r, const char *dir)
{
    char cdir[KB_PATH_MAX], path[KB_PATH_MAX], err[512];
    kb_path(path, sizeof(path), kb_path(cdir, sizeof(cdir), dir, "calibrate"), "calibrate.json");
    if (!kb_file_exists(path)) {
        snprintf(r->cal_note, sizeof(r->cal_note), "no calibrate/calibrate.json: the curve ran "
                 "without --calibrate");
        return;
    }
    r->cal = calloc(1, sizeof(*r->cal));
    if (!r->cal || kb_calibrate_read(path, r->cal, err, sizeof(err)) < 0) {
        snprintf(r->cal_note, sizeof(r->cal_note), "calibrate/calibrate.json could not be read "
                 "(%.400s)", r->cal ? err : "out of memory");
        free(r->cal);
        r->cal = NULL;
        return;
    }
    r->cal_json = kb_report_evidence(r, path);
}

int kb_report_covers(const struct kb_report *r, long rate)
{
    return r->cal ? kb_calibrate_covers(r->cal, (double)rate) : -1;
}

/* The column index of name in the header fields, or -1. */
static int column(char **fields, int n, const char *name)
{
    for (int i = 0; i < n; i++)
        if (!strcmp(fields[i], name))
            return i;
    return -1;
}

/* Splits line at commas in place (no quoting in series.csv), keeping empty fields: a
 * second without a figure leaves its field empty, and the columns after it must stay in
 * place. The field count. */
static int split(char *line, char **fields, int max)
{
    int n = 0;
    line[strcspn(line, "\r\n")] = '\0';
    if (!*line)
        return 0;
    for (char *p = line; n < max; p++) {
        fields[n++] = p;
        if (!(p = strchr(p, ',')))
            break;
        *p = '\0';
    }
    return n;
}

enum { C_START, C_LEN, C_DONE, C_RATE, C_P50, C_P99, C_MAX, C_ERR, C_BOUNDED, C_B50, C_B99,
       C_BMAX, C_N };

/* A latency field in us, or -1 when the second has none (empty, null, "-"). */
static double lat_field(const char *s)
{
    char *end;
    double v = strtod(s, &end);
    return end == s ? -1 : v;
}

/* The optional column c of fields, as a number; dflt when the file has no such column. */
static double opt_field(char **fl, int n, const int *col, int c, double dflt)
{
    return col[c] >= 0 && col[c] < n ? strtod(fl[col[c]], NULL) : dflt;
}

static void parse_sec(struct kb_report_sec *x, char **fl, int n, const int *col)
{
    memset(x, 0, sizeof(*x));
    x->start_s = strtod(fl[col[C_START]], NULL);
    x->length_s = opt_field(fl, n, col, C_LEN, 1);
    x->completed = (long long)opt_field(fl, n, col, C_DONE, -1);
    x->errors = (long long)opt_field(fl, n, col, C_ERR, 0);
    x->bounded = (long long)opt_field(fl, n, col, C_BOUNDED, 0);
    x->achieved_rps = strtod(fl[col[C_RATE]], NULL);
    x->p50_us = lat_field(fl[col[C_P50]]);
    x->p99_us = lat_field(fl[col[C_P99]]);
    x->max_us = lat_field(fl[col[C_MAX]]);
    x->p50_bound = opt_field(fl, n, col, C_B50, 0) != 0;
    x->p99_bound = opt_field(fl, n, col, C_B99, 0) != 0;
    x->max_bound = opt_field(fl, n, col, C_BMAX, 0) != 0;
    /* older files wrote 0 for a second that completed nothing: no latency, not 0 us */
    if (x->completed == 0 && x->bounded == 0)
        x->p50_us = x->p99_us = x->max_us = -1;
}

static int parse_rows(FILE *f, const int *col, struct kb_report_series *s, char *err, size_t errlen)
{
    char *line = NULL, *fl[32];
    size_t cap = 0, alloc = 0;
    int rc = 0;
    for (long ln = 2; getline(&line, &cap, f) > 0 && rc == 0; ln++) {
        int n = split(line, fl, 32);
        if (n == 0)
            continue;
        if (s->n >= SERIES_MAX_ROWS || n <= col[C_MAX] || n <= col[C_P99] || n <= col[C_RATE] ||
            n <= col[C_P50] || n <= col[C_START]) {
            snprintf(err, errlen, "line %ld: %s", ln, s->n >= SERIES_MAX_ROWS ? "too many rows"
                                                                              : "too few fields");
            rc = -1;
            break;
        }
        if (s->n == alloc) {
            struct kb_report_sec *nv = realloc(s->v, (alloc ? 2 * alloc : 64) * sizeof(*s->v));
            if (!nv) {
                snprintf(err, errlen, "out of memory at line %ld", ln);
                rc = -1;
                break;
            }
            s->v = nv;
            alloc = alloc ? 2 * alloc : 64;
        }
        parse_sec(&s->v[s->n++], fl, n, col);
    }
    free(line);
    return rc;
}

/* A last slice shorter than KB_SERIES_SLIVER_S (the load's final interval ends where the
 * drain does, often a few ms past a whole second) holds a handful of responses: drawn as a
 * second, its latency and rate read as a collapse or a spike that never happened. It is
 * dropped; its errors and lower bounds are counted with the second before it. */
static void drop_sliver(struct kb_report_series *s)
{
    struct kb_report_sec *last = s->n > 1 ? &s->v[s->n - 1] : NULL;
    if (!last || last->length_s <= 0 || last->length_s >= KB_SERIES_SLIVER_S)
        return;
    last[-1].errors += last->errors;
    last[-1].bounded += last->bounded;
    s->n--;
}

int kb_report_read_series(const char *path, struct kb_report_series *s, char *err, size_t errlen)
{
    static const char *const names[C_N] = { "start_s", "length_s", "completed", "achieved_rps",
                                            "p50_us", "p99_us", "max_us", "errors", "bounded",
                                            "p50_is_bound", "p99_is_bound", "max_is_bound" };
    char *line = NULL, *fl[32];
    size_t cap = 0;
    int col[C_N], n, rc = -1;
    FILE *f = fopen(path, "r");
    free(s->v);
    s->v = NULL;
    s->n = 0;
    if (!f) {
        snprintf(err, errlen, "%s: cannot open", path);
        return -1;
    }
    n = getline(&line, &cap, f) > 0 ? split(line, fl, 32) : 0;
    for (int i = 0; i < C_N; i++)
        col[i] = column(fl, n, names[i]);
    if (col[C_START] < 0 || col[C_RATE] < 0 || col[C_P50] < 0 || col[C_P99] < 0 || col[C_MAX] < 0)
        snprintf(err, errlen, "%s: header lacks start_s, achieved_rps, p50_us, p99_us or max_us",
                 path);
    else if (parse_rows(f, col, s, err, errlen) == 0)
        rc = 0;
    if (rc == 0)
        drop_sliver(s);
    if (rc < 0) {
        free(s->v);
        s->v = NULL;
        s->n = 0;
    }
    free(line);
    fclose(f);
    return rc;
}

/* Client-limited, and its own figures uncontrolled (its server_verdict): without the mark it
 * would be the first uncontrolled point. */
static int queued_past_margin(const struct kb_cell *w)
{
    return !strcmp(w->verdict, "client-limited") && !strcmp(w->server_verdict, "uncontrolled");
}

/* The lowest-rate row of runtime/route that is uncontrolled (or client-limited with its own
 * figures uncontrolled), or NULL. */
static const struct kb_cell *first_uncontrolled(const struct kb_report *r, const char *rt,
                                                      const char *route)
{
    const struct kb_cell *best = NULL;
    for (size_t i = 0; i < r->nrows; i++) {
        const struct kb_cell *w = &r->rows[i];
        if (!strcmp(w->runtime, rt) && !strcmp(w->route, route) && w->first_id[0] &&
            (!strcmp(w->verdict, "uncontrolled") || queued_past_margin(w)) &&
            (!best || w->rate < best->rate))
            best = w;
    }
    return best;
}

static void load_series(struct kb_report *r, const char *dir)
{
    size_t nrt = kb_report_nruntimes(r), nro = kb_report_nroutes(r);
    r->series = kb_xcalloc(nrt * nro + 1, sizeof(*r->series));
    for (size_t j = 0; j < nro; j++)
        for (size_t i = 0; i < nrt; i++) {
            const struct kb_cell *w = first_uncontrolled(r, kb_report_runtime(r, i),
                                                               kb_report_route(r, j));
            struct kb_report_series *s;
            const char *id;
            char path[KB_PATH_MAX], err[300];
            if (!w || !r->series)
                continue;
            s = &r->series[r->nseries++];
            /* with repeats, one whose own figures queued, else the first (the medians decided) */
            id = w->unc_id[0] ? w->unc_id : w->first_id;
            snprintf(s->runtime, sizeof(s->runtime), "%s", w->runtime);
            snprintf(s->route, sizeof(s->route), "%s", w->route);
            snprintf(s->point, sizeof(s->point), "%s", id);
            s->rate = w->rate;
            s->past_margin = strcmp(w->verdict, "uncontrolled") != 0;
            snprintf(path, sizeof(path), "%s/points/%s/series.csv", dir, id);
            if (!kb_file_exists(path))
                snprintf(s->note, sizeof(s->note), "points/%s has no series.csv (evidence "
                         "from a kneebench without time series)", id);
            else if (kb_report_read_series(path, s, err, sizeof(err)) < 0)
                snprintf(s->note, sizeof(s->note), "series.csv unreadable: %.200s", err);
            else if (s->n == 0)
                snprintf(s->note, sizeof(s->note), "points/%s/series.csv has no intervals", id);
        }
}

const struct kb_report_series *kb_report_series_of(const struct kb_report *r, const char *runtime,
                                                   const char *route)
{
    for (size_t i = 0; i < r->nseries; i++)
        if (!strcmp(r->series[i].runtime, runtime) && !strcmp(r->series[i].route, route))
            return &r->series[i];
    return NULL;
}

void kb_report_load_calibration(struct kb_report *r, const char *dir)
{
    load_calibration(r, dir);
}

void kb_report_load_series(struct kb_report *r, const char *dir)
{
    load_series(r, dir);
}

void kb_report_free_proof(struct kb_report *r)
{
    for (size_t i = 0; i < r->nseries; i++)
        free(r->series[i].v);
    free(r->series);
    free(r->cal);
    json_decref(r->cal_json);
    r->series = NULL;
    r->nseries = 0;
    r->cal = NULL;
    r->cal_json = NULL;
}
