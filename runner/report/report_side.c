/* report_side.c -- the comparison as ratios measured side by side (report_int.h): the host's
 * floor an interleaved run took beside the runtimes, each runtime's CPU per response over the
 * baseline's at the same rates and over the floor, and its knee over the baseline's. A VM's
 * speed moves every absolute figure between runs; figures measured seconds apart share it, so
 * their ratios carry from one host to another where the rates do not. Reads the model only. */
#define _POSIX_C_SOURCE 200809L
#include "runner/report/report.h"
#include "runner/report/report_int.h"
#include "runner/util/jfield.h"
#include "runner/util/paths.h"

#include <dirent.h>
#include <math.h>
#include <stdlib.h>
#include <string.h>

#define SIDE_MAX 64

void kb_report_load_floor(struct kb_report *r, const char *dir)
{
    char fdir[KB_PATH_MAX], path[KB_PATH_MAX];
    struct dirent *e;
    DIR *d = opendir(kb_path(fdir, sizeof(fdir), dir, "floor"));
    while (d && (e = readdir(d))) {
        json_t *j;
        int k;
        char tail;
        /* f<k> and nothing else: a name from the directory becomes a path */
        if (sscanf(e->d_name, "f%d%c", &k, &tail) != 1 || k <= 0)
            continue;
        if (snprintf(path, sizeof(path), "%s/%s/floor.json", fdir, e->d_name) >=
                (int)sizeof(path) || !(j = kb_report_evidence(r, path)))
            continue;
        if (!r->floor)
            r->floor = json_object();
        json_object_set_new(r->floor, e->d_name, j);
    }
    if (d)
        closedir(d);
}

double kb_report_floor_us(const struct kb_report *r, const char *id)
{
    double us;
    json_t *f = id && *id ? json_object_get(r->floor, id) : NULL;
    return kb_jnum_opt(f, "cpu_us_per_response", NULL, &us) && us > 0 ? us : 0;
}

static int cmp_double(const void *a, const void *b)
{
    double x = *(const double *)a, y = *(const double *)b;
    return (x > y) - (x < y);
}

/* Median, min and max of v[0..n) (sorted in place); 0 when n is 0. */
static double median_of(double *v, int n, double *min, double *max)
{
    if (n <= 0)
        return *min = *max = 0;
    qsort(v, (size_t)n, sizeof(double), cmp_double);
    *min = v[0];
    *max = v[n - 1];
    return n % 2 ? v[n / 2] : (v[n / 2 - 1] + v[n / 2]) / 2;
}

void kb_report_floor_of(const struct kb_report *r, struct kb_report_floor *f)
{
    double v[256], x;
    const char *id;
    json_t *j;
    memset(f, 0, sizeof(*f));
    json_object_foreach(r->floor, id, j) {
        if (f->n < 256 && kb_jnum_opt(j, "cpu_us_per_response", NULL, &x) && x > 0)
            v[f->n++] = x;
        if (kb_jnum_opt(j, "server_steal_fraction", NULL, &x) && x > f->steal_max)
            f->steal_max = x;
    }
    f->med = median_of(v, f->n, &f->min, &f->max);
}

/* Per rate, the runtime's median CPU per response over the baseline's, where both have it. */
static void cost_side(const struct kb_report *r, const char *rt, const char *base,
                      const char *route, struct kb_report_side *s)
{
    double v[SIDE_MAX], f[SIDE_MAX];
    for (size_t k = 0; k < kb_report_nrates(r) && k < SIDE_MAX; k++) {
        long rate = kb_report_rate(r, k);
        const struct kb_cell *a = kb_report_row(r, rt, route, rate),
                                   *b = kb_report_row(r, base, route, rate);
        if (a && a->floor_multiple.n)
            f[s->n_floor++] = a->floor_multiple.med;
        if (a && b && a->cpu_us_per_response.n && b->cpu_us_per_response.n &&
            b->cpu_us_per_response.med > 0)
            v[s->n_rates++] = a->cpu_us_per_response.med / b->cpu_us_per_response.med;
    }
    s->cost = median_of(v, s->n_rates, &s->cost_min, &s->cost_max);
    s->floor = median_of(f, s->n_floor, &s->floor_min, &s->floor_max);
}

/* A knee as a bracket: the refined one where the run located it, else the grid's highest
 * held rate and the next planned rate above it (0: none above). lo 0: it held nothing. */
static void bracket(const struct kb_report *r, const char *rt, const char *route, long *lo,
                    long *hi, int *bound, int *refined)
{
    struct kb_report_answer a;
    const json_t *rf = kb_report_refined(r, rt, route);
    kb_report_answer_of(r, rt, route, &a);
    *bound = a.client_from || a.indicative;
    *lo = a.proven;
    *hi = 0;
    if (rf) {
        *lo = (long)json_integer_value(json_object_get(rf, "lo_rps"));
        *hi = (long)json_integer_value(json_object_get(rf, "hi_rps"));
        *refined = 1;
        return;
    }
    for (size_t k = 0; k < kb_report_nrates(r); k++) {
        long rate = kb_report_rate(r, k);
        if (rate > *lo && (!*hi || rate < *hi))
            *hi = rate;
    }
}

void kb_report_side_of(const struct kb_report *r, const char *runtime, const char *route,
                       struct kb_report_side *s)
{
    const char *base = kb_report_baseline(r);
    long alo, ahi, blo, bhi;
    memset(s, 0, sizeof(*s));
    if (!base)
        return;
    cost_side(r, runtime, base, route, s);
    bracket(r, runtime, route, &alo, &ahi, &s->knee_bound, &s->refined);
    bracket(r, base, route, &blo, &bhi, &s->base_bound, &s->refined);
    if (!alo || !blo)
        return;
    s->knee = (double)alo / (double)blo;
    /* the runtime's knee at its lowest and the baseline's at its highest, and the reverse */
    s->knee_lo = bhi ? (double)alo / (double)bhi : 0;
    s->knee_hi = ahi ? (double)ahi / (double)blo : 0;
}

const char *kb_report_side_mark(const struct kb_report_side *s)
{
    if (!(s->knee > 0) || (!s->knee_bound && !s->base_bound))
        return "";
    return s->knee_bound && s->base_bound ? "~" : s->knee_bound ? ">= " : "<= ";
}
