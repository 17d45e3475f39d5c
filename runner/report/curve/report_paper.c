/* report_paper.c -- the paper's figures for one point of the comparison (the contract's
 * published.points, carried in r->published), found and written as one cell for report.md's
 * and report.html's per-point tables. Orientation beside the run's point: no verdict reads
 * them. */
#define _GNU_SOURCE
#include "runner/report/report.h"
#include "runner/report/report_int.h"

#include <stdio.h>
#include <string.h>

json_t *kb_report_paper_point(const struct kb_report *r, const char *runtime,
                              const char *route, long rate)
{
    json_t *pts = json_object_get(r->published, "points"), *p;
    size_t i;
    json_array_foreach(pts, i, p) {
        const char *rt = json_string_value(json_object_get(p, "runtime"));
        const char *ro = json_string_value(json_object_get(p, "route"));
        if (rt && ro && runtime && route && !strcmp(rt, runtime) && !strcmp(ro, route) &&
            json_integer_value(json_object_get(p, "rate")) == rate)
            return p;
    }
    return NULL;
}

int kb_report_paper_any(const struct kb_report *r, const char *runtime, const char *route)
{
    for (size_t k = 0; k < kb_report_nrates(r); k++)
        if (kb_report_paper_point(r, runtime, route, kb_report_rate(r, k)))
            return 1;
    return 0;
}

/* ", <name> <latency>" for a figure the point states, to the paper's two decimals (not
 * rounded to the run's three significant figures: it is the paper's figure as stated). */
static void lat(char *b, size_t len, json_t *p, const char *key, const char *name)
{
    json_t *v = json_object_get(p, key);
    double us = json_number_value(v);
    size_t n = strlen(b);
    if (json_is_number(v) && n < len)
        snprintf(b + n, len - n, "%s%s %.2f %s", n ? ", " : "", name,
                 us >= 1e6 ? us / 1e6 : us / 1e3, us >= 1e6 ? "s" : "ms");
}

const char *kb_report_paper_cell(char *b, size_t len, json_t *p)
{
    json_t *a = json_object_get(p, "achieved_rps"), *d = json_object_get(p, "delivery");
    size_t n;
    b[0] = '\0';
    if (!p || !len)
        return b;
    if (json_is_number(a))
        snprintf(b, len, "%.2f/s", json_number_value(a));
    n = strlen(b);
    if (json_is_number(d) && n < len)
        snprintf(b + n, len - n, "%s%.1f %%", n ? " " : "", 100 * json_number_value(d));
    lat(b, len, p, "p50_us", "p50");
    lat(b, len, p, "p99_us", "p99");
    lat(b, len, p, "p999_us", "p99.9");
    n = strlen(b);
    if (n < len)
        snprintf(b + n, len - n, " (section %s)", json_string_value(json_object_get(p, "section"))
                                             ? json_string_value(json_object_get(p, "section"))
                                             : "?");
    return b;
}
