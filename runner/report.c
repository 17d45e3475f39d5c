/* report.c -- the report model: evidence in, aggregated rows out. Reads files only. */
#define _POSIX_C_SOURCE 200809L
#include "runner/report.h"
#include "runner/evidence.h"

#include <stdlib.h>
#include <string.h>

static int cmp_double(const void *a, const void *b)
{
    double x = *(const double *)a, y = *(const double *)b;
    return (x > y) - (x < y);
}

/* Median (mean of the middle two for an even count), min, max of v[0..n). */
static struct kb_stat stat_of(double *v, int n)
{
    struct kb_stat s = { 0, 0, 0 };
    if (n <= 0)
        return s;
    qsort(v, (size_t)n, sizeof(double), cmp_double);
    s.min = v[0];
    s.max = v[n - 1];
    s.med = n % 2 ? v[n / 2] : (v[n / 2 - 1] + v[n / 2]) / 2;
    return s;
}

static double jnum(json_t *o, const char *a, const char *b)
{
    json_t *v = json_object_get(o, a);
    if (b)
        v = json_object_get(v, b);
    return json_number_value(v);
}

size_t kb_report_nruntimes(const struct kb_report *r)
{
    return json_array_size(json_object_get(r->plan, "runtimes"));
}
const char *kb_report_runtime(const struct kb_report *r, size_t i)
{
    return json_string_value(json_array_get(json_object_get(r->plan, "runtimes"), i));
}
size_t kb_report_nroutes(const struct kb_report *r)
{
    return json_array_size(json_object_get(r->plan, "routes"));
}
const char *kb_report_route(const struct kb_report *r, size_t i)
{
    return json_string_value(json_array_get(json_object_get(r->plan, "routes"), i));
}
size_t kb_report_nrates(const struct kb_report *r)
{
    return json_array_size(json_object_get(r->plan, "rates"));
}
long kb_report_rate(const struct kb_report *r, size_t i)
{
    return (long)json_integer_value(json_array_get(json_object_get(r->plan, "rates"), i));
}

/* The evidence of one complete point, or NULL when its marker is missing. */
static json_t *load_point(const char *dir, const char *id)
{
    char path[4200], pdir[4200];
    snprintf(pdir, sizeof(pdir), "%s/points/%s", dir, id);
    if (!kb_file_exists(kb_path(path, sizeof(path), pdir, "DONE")))
        return NULL;
    return json_load_file(kb_path(path, sizeof(path), pdir, "verdict.json"), 0, NULL);
}

struct acc {
    double achieved[64], delivery[64], p50[64], p90[64], p99[64], p999[64], max[64], srv[64];
    int n, failed, limited, controlled, reason_locked;
};

static void accumulate(struct kb_report_row *row, struct acc *a, json_t *v)
{
    json_t *load = json_object_get(v, "load");
    const char *verdict = json_string_value(json_object_get(v, "verdict"));
    const char *reason = json_string_value(json_object_get(v, "reason"));
    int i = a->n++;
    a->achieved[i] = jnum(load, "achieved_rps", NULL);
    a->delivery[i] = jnum(load, "delivery", NULL);
    a->p50[i] = jnum(load, "corrected_us", "p50") / 1000;
    a->p90[i] = jnum(load, "corrected_us", "p90") / 1000;
    a->p99[i] = jnum(load, "corrected_us", "p99") / 1000;
    a->p999[i] = jnum(load, "corrected_us", "p999") / 1000;
    a->max[i] = jnum(load, "corrected_us", "max") / 1000;
    a->srv[i] = jnum(v, "server", "cpu_mean_fraction");
    row->errors += (long long)jnum(load, "errors", "total");
    row->non2xx += (long long)jnum(load, "non2xx", NULL);
    row->mismatches += (long long)jnum(load, "mismatches", "total");
    if (jnum(load, "client_cpu_fraction", NULL) > row->client_cpu_max)
        row->client_cpu_max = jnum(load, "client_cpu_fraction", NULL);
    if (jnum(load, "lag_us", "p99") / 1000 > row->lag_p99_max_ms)
        row->lag_p99_max_ms = jnum(load, "lag_us", "p99") / 1000;
    if ((long long)jnum(v, "server", "rss_max_bytes") > row->rss_max)
        row->rss_max = (long long)jnum(v, "server", "rss_max_bytes");
    a->failed += verdict && !strcmp(verdict, "failed");
    a->limited += verdict && !strcmp(verdict, "client-limited");
    a->controlled += verdict && !strcmp(verdict, "controlled");
    /* keep the first failed or client-limited reason; otherwise the latest */
    if (!a->reason_locked)
        snprintf(row->reason, sizeof(row->reason), "%s", reason ? reason : "");
    a->reason_locked = a->failed || a->limited;
}

/* Any failed repeat fails the row, then any client-limited; else medians decide. */
static void finish_row(struct kb_report *r, struct kb_report_row *row, struct acc *a)
{
    row->n = a->n;
    row->achieved = stat_of(a->achieved, a->n);
    row->delivery = stat_of(a->delivery, a->n);
    row->p50 = stat_of(a->p50, a->n);
    row->p90 = stat_of(a->p90, a->n);
    row->p99 = stat_of(a->p99, a->n);
    row->p999 = stat_of(a->p999, a->n);
    row->max = stat_of(a->max, a->n);
    row->server_cpu_med = stat_of(a->srv, a->n).med;
    if (a->n == 0)
        snprintf(row->verdict, sizeof(row->verdict), "missing");
    else if (a->failed)
        snprintf(row->verdict, sizeof(row->verdict), "failed");
    else if (a->limited)
        snprintf(row->verdict, sizeof(row->verdict), "client-limited");
    else if (a->n == 1)
        snprintf(row->verdict, sizeof(row->verdict), "%s", a->controlled ? "controlled" : "uncontrolled");
    else
        snprintf(row->verdict, sizeof(row->verdict), "%s",
                 row->delivery.med >= r->min_delivery && row->p99.med < r->max_p99_ms
                     ? "controlled" : "uncontrolled");
}

static void add_missing(struct kb_report *r, const char *id)
{
    r->missing = realloc(r->missing, (r->nmissing + 1) * sizeof(char *));
    r->missing[r->nmissing++] = strdup(id);
}

static void build_rows(struct kb_report *r, const char *dir)
{
    json_t *pts = json_object_get(r->plan, "points"), *pt;
    size_t nrt = kb_report_nruntimes(r), nro = kb_report_nroutes(r), nra = kb_report_nrates(r), i;
    struct acc *acc = calloc(nrt * nro * nra + 1, sizeof(*acc));
    r->rows = calloc(nrt * nro * nra + 1, sizeof(*r->rows));
    for (size_t a = 0; a < nrt; a++)
        for (size_t b = 0; b < nro; b++)
            for (size_t c = 0; c < nra; c++) {
                struct kb_report_row *row = &r->rows[r->nrows++];
                snprintf(row->runtime, sizeof(row->runtime), "%s", kb_report_runtime(r, a));
                snprintf(row->route, sizeof(row->route), "%s", kb_report_route(r, b));
                row->rate = kb_report_rate(r, c);
            }
    json_array_foreach(pts, i, pt) {
        const char *id = json_string_value(json_object_get(pt, "id"));
        json_t *v = load_point(dir, id);
        const struct kb_report_row *row = kb_report_row(r,
            json_string_value(json_object_get(pt, "runtime")),
            json_string_value(json_object_get(pt, "route")),
            (long)json_integer_value(json_object_get(pt, "rate")));
        if (row)
            r->rows[row - r->rows].planned = 1;
        if (!v || !row) {
            add_missing(r, id);
        } else if (acc[row - r->rows].n < 64) {
            const char *verdict = json_string_value(json_object_get(v, "verdict"));
            if (!row->first_id[0])
                snprintf(r->rows[row - r->rows].first_id, sizeof(row->first_id), "%s", id);
            if (!row->unc_id[0] && verdict && !strcmp(verdict, "uncontrolled"))
                snprintf(r->rows[row - r->rows].unc_id, sizeof(row->unc_id), "%s", id);
            accumulate(&r->rows[row - r->rows], &acc[row - r->rows], v);
        }
        json_decref(v);
    }
    for (i = 0; i < r->nrows; i++)
        finish_row(r, &r->rows[i], &acc[i]);
    free(acc);
}

/* Per runtime: the limits read back, the identity digest and the preflight outcome. */
static void load_fixtures(struct kb_report *r, const char *dir)
{
    char fdir[4200], path[4300];
    r->fixtures = json_object();
    for (size_t i = 0; i < kb_report_nruntimes(r); i++) {
        const char *rt = kb_report_runtime(r, i);
        json_t *id, *f = json_object();
        snprintf(fdir, sizeof(fdir), r->repeats > 1 ? "%s/fixtures/%s-r1" : "%s/fixtures/%s", dir, rt);
        json_object_set_new(f, "limits", json_load_file(kb_path(path, sizeof(path), fdir, "limits.json"), 0, NULL));
        json_object_set_new(f, "preflight", json_load_file(kb_path(path, sizeof(path), fdir, "preflight.json"), 0, NULL));
        id = json_load_file(kb_path(path, sizeof(path), fdir, "identity.json"), 0, NULL);
        json_object_set(f, "identity_sha256", id ? json_object_get(id, "sha256") : json_null());
        json_decref(id);
        json_object_set_new(r->fixtures, rt, f);
    }
}

int kb_report_load(const char *dir, struct kb_report *r, char *err, size_t errlen)
{
    char path[4200];
    json_t *crit;
    memset(r, 0, sizeof(*r));
    if (!(r->plan = json_load_file(kb_path(path, sizeof(path), dir, "plan.json"), 0, NULL))) {
        snprintf(err, errlen, "%s has no plan.json: not a kneebench run directory", dir);
        return -1;
    }
    r->run = json_load_file(kb_path(path, sizeof(path), dir, "run.json"), 0, NULL);
    if (!r->run) {
        snprintf(err, errlen, "%s has no run.json (run identity)", dir);
        kb_report_free(r);
        return -1;
    }
    crit = json_object_get(r->plan, "criteria");
    if (!json_is_number(json_object_get(crit, "max_p99_us"))) {
        snprintf(err, errlen, "%s/plan.json has no criteria (written by an older kneebench?)", dir);
        kb_report_free(r);
        return -1;
    }
    r->min_delivery = jnum(crit, "min_delivery", NULL);
    r->max_p99_ms = jnum(crit, "max_p99_us", NULL) / 1000;
    r->repeats = (int)json_integer_value(json_object_get(r->plan, "repeats"));
    r->unconstrained = json_is_true(json_object_get(r->plan, "unconstrained"));
    build_rows(r, dir);
    load_fixtures(r, dir);
    kb_report_load_proof(r, dir);
    return 0;
}

void kb_report_free(struct kb_report *r)
{
    for (size_t i = 0; i < r->nmissing; i++)
        free(r->missing[i]);
    free(r->missing);
    free(r->rows);
    kb_report_free_proof(r);
    json_decref(r->plan);
    json_decref(r->run);
    json_decref(r->fixtures);
    memset(r, 0, sizeof(*r));
}

const struct kb_report_row *kb_report_row(const struct kb_report *r, const char *runtime,
                                          const char *route, long rate)
{
    for (size_t i = 0; runtime && route && i < r->nrows; i++)
        if (r->rows[i].rate == rate && !strcmp(r->rows[i].runtime, runtime) &&
            !strcmp(r->rows[i].route, route))
            return &r->rows[i];
    return NULL;
}

long kb_report_highest(const struct kb_report *r, const char *runtime, const char *route)
{
    long best = 0;
    for (size_t i = 0; i < r->nrows; i++)
        if (!strcmp(r->rows[i].runtime, runtime) && !strcmp(r->rows[i].route, route) &&
            !strcmp(r->rows[i].verdict, "controlled") && r->rows[i].rate > best)
            best = r->rows[i].rate;
    return best;
}
