/* report_readiness.c -- a profile's readiness curve beside the papers' (report_int.h): the
 * published curve read into the model, each curve's points and knee.
 *
 * The PostgreSQL paper reads its db curve by delivery and corrected latency together: throughput alone
 * rewards a growing queue, latency alone a server that dropped the work. So a point holds
 * when both meet the run's criteria, the knee lies between the last rate that held (every
 * rate below it held too) and the next, and what that next point missed is said, including
 * whether achieved still rose there (the queue seen in latency before throughput stops). */
#define _GNU_SOURCE
#include "runner/report/report_int.h"
#include "runner/util/evidence.h"
#include "runner/util/jfield.h"

#include <math.h>
#include <stdlib.h>
#include <string.h>

/* The curve's highest held rate joins the papers' highest controlled points, so the
 * answer table's paper's-host column has it beside this run's, as for the comparison. */
static void paper_highest(struct kb_report *r, const struct kb_published_curve *c)
{
    struct kb_knee_point pts[64];
    struct kb_knee k;
    json_t *hi = json_object_get(r->published, "highest_controlled_rps"), *rt;
    size_t n = c->npoints < 64 ? c->npoints : 64;
    for (size_t i = 0; i < n; i++)
        kb_report_curve_paper(r, c->points[i].rate, &pts[i]);
    kb_report_knee(pts, n, r->min_delivery, r->max_p99_us, &k);
    if (!hi || !k.last_held)
        return;
    if (!(rt = json_object_get(hi, c->runtime)))
        json_object_set_new(hi, c->runtime, rt = json_object());
    json_object_set_new(rt, c->route, json_integer(k.last_held));
}

void kb_report_load_curve(struct kb_report *r, const struct kb_published_curve *c)
{
    json_t *pts;
    r->published_curve = NULL;
    if (!c)
        return;
    pts = json_array();
    for (size_t i = 0; i < c->npoints; i++) {
        const struct kb_published_point *p = &c->points[i];
        /* the paper states one of the two; the other follows from the requested rate */
        double a = p->achieved_rps >= 0 ? p->achieved_rps : p->delivery * (double)p->rate;
        double d = p->delivery >= 0 ? p->delivery : p->achieved_rps / (double)p->rate;
        json_array_append_new(pts, json_pack("{s:I,s:f,s:f,s:f,s:b,s:b}", "rate",
            (json_int_t)p->rate, "achieved_rps", a, "delivery", d, "p99_us", p->p99_us,
            "achieved_stated", p->achieved_rps >= 0, "delivery_stated", p->delivery >= 0));
    }
    r->published_curve = json_pack("{s:s,s:s,s:s,s:s,s:s,s:s,s:o}", "profile", c->profile,
        "title", c->title ? c->title : "Readiness curve", "source", c->source, "host", c->host,
        "runtime", c->runtime, "route", c->route, "points", pts);
    paper_highest(r, c);
}

static int cmp_long(const void *a, const void *b)
{
    long x = *(const long *)a, y = *(const long *)b;
    return (x > y) - (x < y);
}

static size_t add_rate(long *rates, size_t n, size_t max, long rate)
{
    for (size_t i = 0; i < n; i++)
        if (rates[i] == rate)
            return n;
    if (n < max)
        rates[n++] = rate;
    return n;
}

size_t kb_report_curve_rates(const struct kb_report *r, long *rates, size_t max)
{
    json_t *pts = json_object_get(r->published_curve, "points"), *v;
    size_t n = 0, i;
    if (!r->published_curve)
        return 0;
    json_array_foreach(pts, i, v)
        n = add_rate(rates, n, max, (long)kb_jnum(v, "rate", NULL));
    json_array_foreach(json_object_get(r->plan, "rates"), i, v)
        n = add_rate(rates, n, max, (long)json_integer_value(v));
    qsort(rates, n, sizeof(long), cmp_long);
    return n;
}

static void absent(struct kb_knee_point *p, long rate)
{
    memset(p, 0, sizeof(*p));
    p->rate = rate;
    p->achieved_rps = p->delivery = p->p99_us = NAN;
}

void kb_report_curve_paper(const struct kb_report *r, long rate, struct kb_knee_point *p)
{
    json_t *v;
    size_t i;
    absent(p, rate);
    json_array_foreach(json_object_get(r->published_curve, "points"), i, v) {
        if ((long)kb_jnum(v, "rate", NULL) != rate)
            continue;
        p->present = 1;
        p->achieved_rps = kb_jnum(v, "achieved_rps", NULL);
        p->delivery = kb_jnum(v, "delivery", NULL);
        p->p99_us = kb_jnum(v, "p99_us", NULL);
        p->held = p->delivery >= r->min_delivery && p->p99_us < r->max_p99_us;
    }
}

void kb_report_curve_run(const struct kb_report *r, long rate, struct kb_knee_point *p)
{
    const struct kb_cell *w = kb_report_row(r, kb_jstr(r->published_curve, "runtime", NULL),
                                                  kb_jstr(r->published_curve, "route", NULL), rate);
    absent(p, rate);
    if (!w || !w->planned || !w->n)
        return;
    p->present = 1;
    p->achieved_rps = w->achieved.n ? w->achieved.med : NAN;
    p->delivery = w->delivery.n ? w->delivery.med : NAN;
    p->p99_us = w->p99.n ? w->p99.med : NAN;
    p->p99_bound = w->p99.bound;
    /* the server's own figures: a client-limited point still says where the server stood */
    p->held = !strcmp(w->server_verdict[0] ? w->server_verdict : w->verdict, "controlled");
    snprintf(p->verdict, sizeof(p->verdict), "%s", w->verdict);
}

void kb_report_knee(const struct kb_knee_point *pts, size_t n, double min_delivery,
                    double max_p99_us, struct kb_knee *k)
{
    const struct kb_knee_point *last = NULL;
    memset(k, 0, sizeof(*k));
    for (size_t i = 0; i < n; i++) {
        const struct kb_knee_point *p = &pts[i];
        if (!p->present)
            continue;
        k->npoints++;
        if (k->first_missed)
            continue;
        if (p->held) {
            k->last_held = p->rate;
            last = p;
            continue;
        }
        k->first_missed = p->rate;
        /* NAN compares false: a figure never recorded is not said to have missed */
        k->missed_delivery = p->delivery < min_delivery;
        k->missed_p99 = p->p99_us >= max_p99_us;
        k->still_rising = last && p->achieved_rps > last->achieved_rps;
    }
}

static json_t *point_json(const struct kb_knee_point *p)
{
    if (!p->present)
        return json_null();
    return json_pack("{s:o,s:o,s:o,s:b,s:b,s:s?}", "achieved_rps", kb_json_figure(p->achieved_rps),
        "delivery_fraction", kb_json_figure(p->delivery), "p99_us", kb_json_figure(p->p99_us),
        "p99_is_bound", p->p99_bound, "held", p->held, "verdict", p->verdict[0] ? p->verdict : NULL);
}

static json_t *knee_json(const struct kb_knee *k)
{
    return json_pack("{s:o,s:o,s:b,s:b,s:b}",
        "last_held_rps", k->last_held ? json_integer(k->last_held) : json_null(),
        "first_missed_rps", k->first_missed ? json_integer(k->first_missed) : json_null(),
        "missed_delivery", k->missed_delivery, "missed_p99", k->missed_p99,
        "achieved_still_rising", k->still_rising);
}

json_t *kb_report_readiness_json(const struct kb_report *r)
{
    long rates[64];
    struct kb_knee_point paper[64], run[64];
    struct kb_knee pk, rk;
    size_t n = kb_report_curve_rates(r, rates, 64);
    json_t *pts, *out;
    if (!n)
        return json_null();
    pts = json_array();
    for (size_t i = 0; i < n; i++) {
        kb_report_curve_paper(r, rates[i], &paper[i]);
        kb_report_curve_run(r, rates[i], &run[i]);
        json_array_append_new(pts, json_pack("{s:I,s:o,s:o}", "requested_rps", (json_int_t)rates[i],
                                             "paper", point_json(&paper[i]), "run",
                                             point_json(&run[i])));
    }
    kb_report_knee(paper, n, r->min_delivery, r->max_p99_us, &pk);
    kb_report_knee(run, n, r->min_delivery, r->max_p99_us, &rk);
    out = json_pack("{s:O,s:O,s:O,s:O,s:O,s:O,s:o,s:o,s:o}", "profile",
        json_object_get(r->published_curve, "profile"), "title",
        json_object_get(r->published_curve, "title"), "runtime",
        json_object_get(r->published_curve, "runtime"), "route",
        json_object_get(r->published_curve, "route"), "paper_host",
        json_object_get(r->published_curve, "host"), "source",
        json_object_get(r->published_curve, "source"), "points", pts, "paper_knee",
        knee_json(&pk), "run_knee", knee_json(&rk));
    return out;
}
