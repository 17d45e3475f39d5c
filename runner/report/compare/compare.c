/* compare.c -- the comparison model of two runs (compare.h): the calls, what moved most, each
 * run's noise floor. Reads the two report models only. */
#include "runner/report/compare/compare.h"

#include <math.h>
#include <stdlib.h>
#include <string.h>

static double change_pct(double a, double b)
{
    return a != 0 ? (b - a) / a * 100.0 : 0;
}

double kb_cmp_chance(int a, int b)
{
    double ways = 1;           /* (a + b)! / (a! b!), built up factor by factor */
    if (a < 1 || b < 1)
        return 1;
    for (int k = 1; k <= b; k++)
        ways = ways * (a + k) / k;
    return ways > 2 ? 2 / ways : 1;
}

/* The chance is judged with a hair of slack: 3 and 3 give 0.1 exactly, as a double a little
 * off it either way. */
static int too_few(int a, int b)
{
    return kb_cmp_chance(a, b) > KB_CMP_MAX_CHANCE * (1 + 1e-9);
}

enum kb_cmp_call kb_cmp_judge(const struct kb_stat *a, const struct kb_stat *b,
                              int lower_is_better, double floor_pct)
{
    int up, down;
    if (a->n < 1 || b->n < 1)
        return KB_CMP_NO_FIGURE;
    if (too_few(a->n, b->n))
        return KB_CMP_UNJUDGED_FEW;
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
                                         "unjudged_few_samples", "unjudged_bound" };
    return (unsigned)c < sizeof(names) / sizeof(names[0]) ? names[c] : "?";
}

const char *kb_cmp_call_words(enum kb_cmp_call c)
{
    static const char *const words[] = { "no figure", "within noise", "better, beyond noise",
                                         "worse, beyond noise", "unjudged (too few samples)",
                                         "unjudged (lower bound)" };
    return (unsigned)c < sizeof(words) / sizeof(words[0]) ? words[c] : "?";
}

const struct kb_cmp_change *kb_cmp_figure_of(const struct kb_cmp_point *p,
                                             enum kb_cmp_figure f)
{
    return f == KB_CMP_P99 ? &p->p99 : &p->achieved;
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
            t->changed = t->a.planned != t->b.planned || t->a.proven != t->b.proven ||
                         t->a.client_from != t->b.client_from ||
                         t->a.indicative != t->b.indicative || t->a.below != t->b.below ||
                         t->a.below_unproven != t->b.below_unproven ||
                         t->a.failed_at != t->b.failed_at;
            snprintf(t->runtime, sizeof(t->runtime), "%s", rt);
            snprintf(t->route, sizeof(t->route), "%s", route);
            c->ntops++;
        }
}

static const struct kb_cell *with_evidence(const struct kb_report *r,
                                                 const struct kb_cell *like)
{
    const struct kb_cell *w = kb_report_row(r, like->runtime, like->route, like->rate);
    return w && w->planned && w->n > 0 ? w : NULL;
}

static struct kb_cmp_change change_of(const struct kb_stat *a, const struct kb_stat *b,
                                      int lower_is_better, double floor_pct)
{
    return (struct kb_cmp_change){ *a, *b, change_pct(a->med, b->med),
                                   kb_cmp_chance(a->n, b->n),
                                   kb_cmp_judge(a, b, lower_is_better, floor_pct) };
}

static void fill_point(struct kb_cmp_point *p, const struct kb_cell *wa,
                       const struct kb_cell *wb, double floor_pct)
{
    memset(p, 0, sizeof(*p));
    snprintf(p->runtime, sizeof(p->runtime), "%s", wa->runtime);
    snprintf(p->route, sizeof(p->route), "%s", wa->route);
    snprintf(p->id, sizeof(p->id), "%s", wa->id);
    p->rate = wa->rate;
    snprintf(p->verdict_a, sizeof(p->verdict_a), "%s", wa->verdict);
    snprintf(p->verdict_b, sizeof(p->verdict_b), "%s", wb->verdict);
    p->achieved = change_of(&wa->achieved, &wb->achieved, 0, floor_pct);
    p->p99 = change_of(&wa->p99, &wb->p99, 1, floor_pct);
}

/* Points with evidence in both runs, in a's plan order; the others counted. */
static void add_points(struct kb_cmp *c, const struct kb_report *a, const struct kb_report *b)
{
    for (size_t i = 0; i < a->nrows; i++) {
        const struct kb_cell *wa = &a->rows[i], *wb;
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
    return x == KB_CMP_UNJUDGED_FEW || x == KB_CMP_UNJUDGED_BOUND;
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

static int beyond(enum kb_cmp_call x)
{
    return x == KB_CMP_BETTER || x == KB_CMP_WORSE;
}

static int by_size(const void *x, const void *y)
{
    const struct kb_cmp_move *m = x, *n = y;
    if (m->size_pct != n->size_pct)
        return m->size_pct < n->size_pct ? 1 : -1;
    return m->point != n->point ? (m->point < n->point ? -1 : 1) : (int)m->figure - (int)n->figure;
}

/* Every figure judged, and those beyond noise, the largest change first. */
static void add_moves(struct kb_cmp *c)
{
    for (size_t i = 0; i < c->npoints; i++)
        for (int f = KB_CMP_ACHIEVED; f <= KB_CMP_P99; f++) {
            const struct kb_cmp_change *ch = kb_cmp_figure_of(&c->points[i], f);
            if (ch->call != KB_CMP_WITHIN && !beyond(ch->call))
                continue;
            c->judged++;
            c->chance_sum += ch->chance;
            if (beyond(ch->call))
                c->moves[c->nmoves++] = (struct kb_cmp_move){ i, (enum kb_cmp_figure)f,
                                                              fabs(ch->pct) };
        }
    qsort(c->moves, c->nmoves, sizeof(*c->moves), by_size);
}

static int by_value(const void *x, const void *y)
{
    double a = *(const double *)x, b = *(const double *)y;
    return (a > b) - (a < b);
}

/* The median (mean of the middle two for an even count, as the report's) and the largest of
 * v[0..n), sorted in place. */
static void median_max(double *v, int n, double *med, double *max)
{
    if (n < 1)
        return;
    qsort(v, (size_t)n, sizeof(*v), by_value);
    *med = n % 2 ? v[n / 2] : (v[n / 2 - 1] + v[n / 2]) / 2;
    *max = v[n - 1];
}

static double spread_pct(const struct kb_stat *s)
{
    return (s->max - s->min) / s->med * 100;
}

/* How far a run's points' own samples lie apart. -1 when there is no memory. */
static int noise_of(const struct kb_report *r, struct kb_cmp_noise *z)
{
    double *ach = calloc(r->nrows + 1, sizeof(*ach)), *p99 = calloc(r->nrows + 1, sizeof(*p99));
    memset(z, 0, sizeof(*z));
    if (!ach || !p99) {
        free(ach);
        free(p99);
        return -1;
    }
    for (size_t i = 0; i < r->nrows; i++) {
        const struct kb_cell *w = &r->rows[i];
        if (!w->planned || w->n < 1)
            continue;
        z->rows++;
        z->rows_sampled += w->n > 1;
        if (w->achieved.n > 1 && w->achieved.med > 0)
            ach[z->achieved_n++] = spread_pct(&w->achieved);
        /* a bound's spread is a bound's too: it says nothing of the noise */
        if (w->p99.n > 1 && !w->p99.bound && w->p99.med > 0)
            p99[z->p99_n++] = spread_pct(&w->p99);
    }
    median_max(ach, z->achieved_n, &z->achieved_med_pct, &z->achieved_max_pct);
    median_max(p99, z->p99_n, &z->p99_med_pct, &z->p99_max_pct);
    free(ach);
    free(p99);
    return 0;
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
    c->moves = calloc(2 * a->nrows + 1, sizeof(*c->moves));
    if (!c->tops || !c->points || !c->tally || !c->moves || noise_of(a, &c->noise[0]) ||
        noise_of(b, &c->noise[1])) {
        kb_cmp_free(c);
        snprintf(err, errlen, "no memory for the comparison");
        return -1;
    }
    add_tops(c, a, a, b);
    add_tops(c, b, a, b);
    add_points(c, a, b);
    add_tally(c);
    add_moves(c);
    return 0;
}

void kb_cmp_free(struct kb_cmp *c)
{
    free(c->tops);
    free(c->points);
    free(c->tally);
    free(c->moves);
    memset(c, 0, sizeof(*c));
}
