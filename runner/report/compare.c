/* compare.c -- the comparison model of two runs (compare.h). Reads the two report models only. */
#include "runner/report/compare.h"

#include <math.h>
#include <stdlib.h>
#include <string.h>

static double change_pct(double a, double b)
{
    return a != 0 ? (b - a) / a * 100.0 : 0;
}

enum kb_cmp_call kb_cmp_judge(const struct kb_stat *a, const struct kb_stat *b,
                              int lower_is_better, double floor_pct)
{
    int up, down;
    if (a->n < 1 || b->n < 1)
        return KB_CMP_NO_FIGURE;
    if (a->n < 2 || b->n < 2)
        return KB_CMP_UNJUDGED_REPEATS;
    up = b->min > a->max;
    down = b->max < a->min;
    if (a->bound || b->bound) {
        /* a bound hides a higher true value: only a rise from an exact a, or a fall to an
         * exact b, is certain -- and then by at least the shown change, so no floor */
        if ((up && !a->bound) || (down && !b->bound))
            return up == lower_is_better ? KB_CMP_WORSE : KB_CMP_BETTER;
        return KB_CMP_UNJUDGED_BOUND;
    }
    if ((!up && !down) || fabs(change_pct(a->med, b->med)) < floor_pct)
        return KB_CMP_WITHIN;
    return up == lower_is_better ? KB_CMP_WORSE : KB_CMP_BETTER;
}

const char *kb_cmp_call_name(enum kb_cmp_call c)
{
    static const char *const names[] = { "no_figure", "within_noise", "better", "worse",
                                         "unjudged_1_repeat", "unjudged_bound" };
    return (unsigned)c < sizeof(names) / sizeof(names[0]) ? names[c] : "?";
}

const char *kb_cmp_call_words(enum kb_cmp_call c)
{
    static const char *const words[] = { "no figure", "within noise", "better, beyond noise",
                                         "worse, beyond noise", "unjudged (1 repeat)",
                                         "unjudged (lower bound)" };
    return (unsigned)c < sizeof(words) / sizeof(words[0]) ? words[c] : "?";
}

static int has_top(const struct kb_cmp *c, const char *rt, const char *route)
{
    for (size_t i = 0; i < c->ntops; i++)
        if (!strcmp(c->tops[i].runtime, rt) && !strcmp(c->tops[i].route, route))
            return 1;
    return 0;
}

/* Every runtime x route of r's plan not yet listed, when either run planned it. */
static void add_tops(struct kb_cmp *c, const struct kb_report *r, const struct kb_report *a,
                     const struct kb_report *b)
{
    for (size_t i = 0; i < kb_report_nruntimes(r); i++)
        for (size_t k = 0; k < kb_report_nroutes(r); k++) {
            const char *rt = kb_report_runtime(r, i), *route = kb_report_route(r, k);
            struct kb_cmp_top *t = &c->tops[c->ntops];
            if (!rt || !route || has_top(c, rt, route))
                continue;
            memset(t, 0, sizeof(*t));
            kb_report_answer_of(a, rt, route, &t->a);
            kb_report_answer_of(b, rt, route, &t->b);
            if (!t->a.planned && !t->b.planned)
                continue;
            snprintf(t->runtime, sizeof(t->runtime), "%s", rt);
            snprintf(t->route, sizeof(t->route), "%s", route);
            c->ntops++;
        }
}

static const struct kb_report_row *with_evidence(const struct kb_report *r,
                                                 const struct kb_report_row *like)
{
    const struct kb_report_row *w = kb_report_row(r, like->runtime, like->route, like->rate);
    return w && w->planned && w->n > 0 ? w : NULL;
}

static void fill_point(struct kb_cmp_point *p, const struct kb_report_row *wa,
                       const struct kb_report_row *wb, double floor_pct)
{
    memset(p, 0, sizeof(*p));
    snprintf(p->runtime, sizeof(p->runtime), "%s", wa->runtime);
    snprintf(p->route, sizeof(p->route), "%s", wa->route);
    snprintf(p->id, sizeof(p->id), "%s", wa->id);
    p->rate = wa->rate;
    snprintf(p->verdict_a, sizeof(p->verdict_a), "%s", wa->verdict);
    snprintf(p->verdict_b, sizeof(p->verdict_b), "%s", wb->verdict);
    p->achieved = (struct kb_cmp_change){ wa->achieved, wb->achieved,
        change_pct(wa->achieved.med, wb->achieved.med),
        kb_cmp_judge(&wa->achieved, &wb->achieved, 0, floor_pct) };
    p->p99 = (struct kb_cmp_change){ wa->p99, wb->p99, change_pct(wa->p99.med, wb->p99.med),
        kb_cmp_judge(&wa->p99, &wb->p99, 1, floor_pct) };
}

/* Points with evidence in both runs, in a's plan order; the others counted. */
static void add_points(struct kb_cmp *c, const struct kb_report *a, const struct kb_report *b)
{
    for (size_t i = 0; i < a->nrows; i++) {
        const struct kb_report_row *wa = &a->rows[i], *wb;
        if (!wa->planned || wa->n == 0)
            continue;
        if ((wb = with_evidence(b, wa)))
            fill_point(&c->points[c->npoints++], wa, wb, c->floor_pct);
        else
            c->only_a++;
    }
    for (size_t i = 0; i < b->nrows; i++)
        if (b->rows[i].planned && b->rows[i].n > 0 && !with_evidence(a, &b->rows[i]))
            c->only_b++;
}

static struct kb_cmp_tally *tally_of(struct kb_cmp *c, const char *rt)
{
    for (size_t i = 0; i < c->ntally; i++)
        if (!strcmp(c->tally[i].runtime, rt))
            return &c->tally[i];
    memset(&c->tally[c->ntally], 0, sizeof(c->tally[0]));
    snprintf(c->tally[c->ntally].runtime, sizeof(c->tally[0].runtime), "%s", rt);
    return &c->tally[c->ntally++];
}

static int unjudged(enum kb_cmp_call x)
{
    return x == KB_CMP_UNJUDGED_REPEATS || x == KB_CMP_UNJUDGED_BOUND;
}

/* A point counts once: worse when either figure is, else better, else unjudged. */
static void add_tally(struct kb_cmp *c)
{
    for (size_t i = 0; i < c->npoints; i++) {
        const struct kb_cmp_point *p = &c->points[i];
        struct kb_cmp_tally *t = tally_of(c, p->runtime);
        enum kb_cmp_call x = p->achieved.call, y = p->p99.call;
        t->points++;
        t->achieved_worse += x == KB_CMP_WORSE;
        t->p99_worse += y == KB_CMP_WORSE;
        if (x == KB_CMP_WORSE || y == KB_CMP_WORSE)
            t->worse++;
        else if (x == KB_CMP_BETTER || y == KB_CMP_BETTER)
            t->better++;
        else if (unjudged(x) || unjudged(y))
            t->unjudged++;
    }
}

int kb_cmp_build(const struct kb_report *a, const struct kb_report *b, double floor_pct,
                 struct kb_cmp *c, char *err, size_t errlen)
{
    size_t ntops = kb_report_nruntimes(a) * kb_report_nroutes(a) +
                   kb_report_nruntimes(b) * kb_report_nroutes(b);
    memset(c, 0, sizeof(*c));
    c->floor_pct = floor_pct;
    c->tops = calloc(ntops + 1, sizeof(*c->tops));
    c->points = calloc(a->nrows + 1, sizeof(*c->points));
    c->tally = calloc(a->nrows + 1, sizeof(*c->tally));
    if (!c->tops || !c->points || !c->tally) {
        kb_cmp_free(c);
        snprintf(err, errlen, "no memory for the comparison");
        return -1;
    }
    add_tops(c, a, a, b);
    add_tops(c, b, a, b);
    add_points(c, a, b);
    add_tally(c);
    return 0;
}

void kb_cmp_free(struct kb_cmp *c)
{
    free(c->tops);
    free(c->points);
    free(c->tally);
    memset(c, 0, sizeof(*c));
}
