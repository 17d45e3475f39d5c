/* report_answer.c -- the report's answer, from the aggregated rows: per runtime and route
 * the highest controlled point (proven), what the server's own figures give where the
 * client was not trusted (indicative), the definite "below the lowest rate"; each runtime's
 * server CPU per response at its own highest held rate; and the runtimes ranked.
 * Reads the model only. */
#include "runner/report/report.h"
#include "runner/report/report_int.h"

#include <math.h>
#include <stdio.h>
#include <string.h>

static int is(const char *a, const char *b)
{
    return a && b && !strcmp(a, b);
}

/* The planned row with evidence at the plan's k-th rate, or NULL. */
static const struct kb_cell *at(const struct kb_report *r, const char *rt,
                                      const char *route, size_t k)
{
    const struct kb_cell *w = kb_report_row(r, rt, route, kb_report_rate(r, k));
    return w && w->planned && w->n > 0 ? w : NULL;
}

/* The rate of the first point above h with evidence when it was client-limited: the
 * client, not the server, stopped the curve there, so h is a lower bound. 0 otherwise. */
static long client_above(const struct kb_report *r, const char *rt, const char *route, long h)
{
    for (size_t k = 0; k < kb_report_nrates(r); k++) {
        const struct kb_cell *w = at(r, rt, route, k);
        if (!w || w->rate <= h)
            continue;
        return is(w->verdict, "client-limited") ? w->rate : 0;
    }
    return 0;
}

/* The lowest-rate row with evidence, or NULL. */
static const struct kb_cell *lowest(const struct kb_report *r, const char *rt,
                                          const char *route)
{
    const struct kb_cell *best = NULL, *w;
    for (size_t k = 0; k < kb_report_nrates(r); k++)
        if ((w = at(r, rt, route, k)) && (!best || w->rate < best->rate))
            best = w;
    return best;
}

/* Where --refine located the cell's knee at or above the grid's highest held rate, its held
 * end is the answer: a bracket whose upper end did not hold is no lower bound. */
static void refined(const struct kb_report *r, const char *rt, const char *route,
                    struct kb_report_answer *a)
{
    const json_t *rf = kb_report_refined(r, rt, route);
    long lo = (long)json_integer_value(json_object_get(rf, "lo_rps"));
    if (!rf || !a->proven || lo < a->proven)
        return;
    a->refined = 1;
    a->proven = lo;
    a->refined_hi = (long)json_integer_value(json_object_get(rf, "hi_rps"));
    a->client_from = 0;
}

void kb_report_answer_of(const struct kb_report *r, const char *runtime, const char *route,
                         struct kb_report_answer *a)
{
    const struct kb_cell *w, *lo;
    memset(a, 0, sizeof(*a));
    for (size_t k = 0; k < kb_report_nrates(r); k++) {
        w = kb_report_row(r, runtime, route, kb_report_rate(r, k));
        a->planned |= w && w->planned;
        if ((w = at(r, runtime, route, k)) && is(w->server_verdict, "controlled") &&
            w->rate > a->indicative)
            a->indicative = w->rate;
    }
    a->proven = a->grid_proven = kb_report_highest(r, runtime, route);
    a->client_from = client_above(r, runtime, route, a->proven);
    refined(r, runtime, route, a);
    a->past_margin = a->proven && !r->margin_gated && kb_report_covers(r, a->proven) == 0;
    if (a->indicative <= a->proven)
        a->indicative = 0;
    a->level = (double)(a->indicative > a->proven ? a->indicative : a->proven);
    if (a->proven || !(lo = lowest(r, runtime, route)))
        return;
    /* nothing controlled: what stopped the curve at its first point */
    if (is(lo->verdict, "uncontrolled"))
        a->below = lo->rate;
    else if (is(lo->verdict, "failed"))
        a->failed_at = lo->rate;
    else if (!a->indicative && is(lo->server_verdict, "uncontrolled"))
        a->below_unproven = lo->rate;
}

const char *kb_report_answer_text(char *b, size_t len, const struct kb_report *r,
                                  const char *rt, const char *route, struct kb_answer_used *u)
{
    struct kb_report_answer a;
    char ind[40] = "";
    kb_report_answer_of(r, rt, route, &a);
    if (!a.planned)
        return snprintf(b, len, "n/a"), b;
    if (a.indicative)
        snprintf(ind, sizeof(ind), "; %ld*", a.indicative);
    else if (a.below_unproven)
        snprintf(ind, sizeof(ind), "; < %ld*", a.below_unproven);
    u->unproven |= a.indicative || a.below_unproven;
    if (a.proven) {
        u->refined |= a.refined;
        u->past_margin |= a.past_margin;
        snprintf(b, len, "%s%ld%s%s%s", a.client_from ? ">= " : "", a.proven,
                 a.past_margin ? "^" : "", a.refined ? " (refined)" : "", ind);
        u->bound |= a.client_from != 0;
    } else if (a.below) {
        snprintf(b, len, "< %ld%s", a.below, ind);
        u->below = 1;
    } else if (a.failed_at) {
        snprintf(b, len, "failed (%ld)%s", a.failed_at, ind);
        u->failed = 1;
    } else if (a.client_from) {
        snprintf(b, len, "none%s", ind);
    } else {
        snprintf(b, len, "missing");
        u->missing = 1;
    }
    return b;
}

const json_t *kb_report_refined(const struct kb_report *r, const char *rt, const char *route)
{
    size_t i;
    json_t *c;
    if (!rt || !route)
        return NULL;
    json_array_foreach(json_object_get(r->refine, "cells"), i, c)
        if (!strcmp(json_string_value(json_object_get(c, "runtime")) ?: "", rt) &&
            !strcmp(json_string_value(json_object_get(c, "route")) ?: "", route))
            return !strcmp(json_string_value(json_object_get(c, "step")) ?: "", "located")
                   ? c : NULL;
    return NULL;
}

const char *kb_report_baseline(const struct kb_report *r)
{
    const char *b = json_string_value(json_object_get(r->plan, "baseline"));
    return b && *b ? b : NULL;
}

const char *kb_report_baseline_label(const struct kb_report *r)
{
    const char *b = kb_report_baseline(r);
    return b ? b : "the baseline";
}

/* The refined held end's row where the answer is the refinement's, else NULL. */
static const struct kb_cell *held_end(const struct kb_report *r, const char *rt,
                                            const char *route)
{
    struct kb_report_answer a;
    const struct kb_cell *w;
    if (!rt || !route)
        return NULL;
    kb_report_answer_of(r, rt, route, &a);
    if (!a.refined || !(w = kb_report_row(r, rt, route, a.proven)) || !w->n)
        return NULL;
    return w->cpu_us_per_response.n ? w : NULL;
}

void kb_report_cost_of(const struct kb_report *r, const char *runtime, const char *route,
                       struct kb_report_cost *c)
{
    const struct kb_cell *w, *best = NULL;
    memset(c, 0, sizeof(*c));
    for (size_t k = 0; k < kb_report_nrates(r); k++)
        if ((w = at(r, runtime, route, k)) && is(w->server_verdict, "controlled") &&
            (!best || w->rate > best->rate))
            best = w;
    if ((w = held_end(r, runtime, route)) && (!best || w->rate >= best->rate))
        best = w;
    if (!best)
        return;
    c->rate = best->rate;
    if (!best->cpu_us_per_response.n || best->cpu_us_per_response.med <= 0)
        return;
    c->us = best->cpu_us_per_response.med;
    /* one CPU over the cost; at the rate it held the server used at most its one CPU, so a
     * figure below that rate is the sampling's error, and the rate itself is what is known */
    c->capacity_rps = 1e6 / c->us;
    if (c->capacity_rps < (double)c->rate) {
        c->capacity_rps = (double)c->rate;
        c->capacity_floor = 1;
    }
}

double kb_report_efficiency_ratio(const struct kb_report *r, const char *runtime)
{
    double logsum = 0;
    int n = 0;
    if (!kb_report_baseline(r))
        return 0;
    for (size_t j = 0; j < kb_report_nroutes(r); j++) {
        struct kb_report_cost a, b;
        kb_report_cost_of(r, runtime, kb_report_route(r, j), &a);
        kb_report_cost_of(r, kb_report_baseline(r), kb_report_route(r, j), &b);
        if (a.us > 0 && b.us > 0) {
            logsum += log(a.us / b.us);
            n++;
        }
    }
    return n ? exp(logsum / n) : 0;
}

/* The sum of a runtime's answer levels over the routes every runtime is planned on. */
static double score(const struct kb_report *r, const char *runtime)
{
    double s = 0;
    for (size_t j = 0; j < kb_report_nroutes(r); j++) {
        struct kb_report_answer a;
        int everyone = 1;
        for (size_t i = 0; i < kb_report_nruntimes(r) && everyone; i++) {
            kb_report_answer_of(r, kb_report_runtime(r, i), kb_report_route(r, j), &a);
            everyone = a.planned;
        }
        if (!everyone)
            continue;
        kb_report_answer_of(r, runtime, kb_report_route(r, j), &a);
        s += a.level;
    }
    return s;
}

/* Between runtimes that held nothing, the one that delivered more of its lowest rate's
 * load: the sum over the common routes of that median delivery. */
static double low_delivery(const struct kb_report *r, const char *runtime)
{
    double s = 0;
    for (size_t j = 0; j < kb_report_nroutes(r); j++) {
        const struct kb_cell *w = lowest(r, runtime, kb_report_route(r, j));
        s += w ? w->delivery.med : 0;
    }
    return s;
}

struct key {
    double score, eff, low;
};

/* -1 when x ranks before y, 1 after, 0 tied: the higher score first, then the lower CPU
 * per response relative to the baseline's (a runtime without the figure does not win on
 * it), then the higher delivery at the lowest rate. */
static int compare(const struct key *x, const struct key *y)
{
    if (x->score != y->score)
        return x->score > y->score ? -1 : 1;
    if (x->eff > 0 && y->eff > 0 && fabs(x->eff - y->eff) > 1e-9)
        return x->eff < y->eff ? -1 : 1;
    if (fabs(x->low - y->low) > 1e-9)
        return x->low > y->low ? -1 : 1;
    return 0;
}

size_t kb_report_rank(const struct kb_report *r, size_t *order, int *rank, size_t max)
{
    struct key k[64];
    size_t n = kb_report_nruntimes(r);
    if (n > max)
        n = max;
    if (n > 64)
        n = 64;
    for (size_t i = 0; i < n; i++) {
        const char *rt = kb_report_runtime(r, i);
        order[i] = i;
        k[i] = (struct key){ score(r, rt), kb_report_efficiency_ratio(r, rt), low_delivery(r, rt) };
    }
    /* insertion sort: stable, so ties keep the plan's order */
    for (size_t i = 1; i < n; i++)
        for (size_t j = i; j > 0 && compare(&k[order[j]], &k[order[j - 1]]) < 0; j--) {
            size_t t = order[j];
            order[j] = order[j - 1];
            order[j - 1] = t;
        }
    for (size_t i = 0; i < n; i++)
        rank[i] = i && !compare(&k[order[i]], &k[order[i - 1]]) ? rank[i - 1] : (int)i + 1;
    return n;
}

double kb_report_answer_ratio(const struct kb_report *r, const char *runtime, const char *route,
                              int *soft)
{
    struct kb_report_answer a, g;
    *soft = 0;
    if (!kb_report_baseline(r))
        return 0;
    kb_report_answer_of(r, runtime, route, &a);
    kb_report_answer_of(r, kb_report_baseline(r), route, &g);
    *soft = a.client_from || a.indicative || g.client_from || g.indicative;
    return a.level > 0 && g.level > 0 ? a.level / g.level : 0;
}
