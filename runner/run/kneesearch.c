/* kneesearch.c -- the knee search's rows, bracket and next step (kneesearch.h). */
#include "runner/run/kneesearch.h"

#include <math.h>
#include <stdlib.h>
#include <string.h>

static int cmp_double(const void *a, const void *b)
{
    double x = *(const double *)a, y = *(const double *)b;
    return x < y ? -1 : x > y;
}

static double median(double *v, int n)
{
    if (n == 0)
        return NAN;
    qsort(v, (size_t)n, sizeof(*v), cmp_double);
    return n % 2 ? v[n / 2] : (v[n / 2 - 1] + v[n / 2]) / 2;
}

/* The row's trusted hold samples judged together: 1 when their medians meet the
 * criteria; -1 when one failed. */
static int judge_holds(const struct kb_knee_sample *s, size_t n, const struct kb_criteria *c,
                       struct kb_knee_row *w)
{
    double del[KB_KNEE_MAX_SAMPLES], p99[KB_KNEE_MAX_SAMPLES];
    int failed = 0;
    for (size_t i = 0; i < n; i++) {
        if (s[i].rate != w->rate || !s[i].hold)
            continue;
        w->hold_n++;
        if (s[i].verdict == KB_CLIENT_LIMITED || w->hold_trusted == KB_KNEE_MAX_SAMPLES)
            continue;
        failed |= s[i].verdict == KB_FAILED;
        p99[w->hold_trusted] = isnan(s[i].p99_us) ? INFINITY : s[i].p99_us;
        del[w->hold_trusted++] = s[i].delivery;
    }
    if (failed)
        return -1;
    return w->hold_trusted && median(del, w->hold_trusted) >= c->min_delivery &&
           median(p99, w->hold_trusted) < (double)c->max_p99_us;
}

/* A row's trusted samples judged together (kneesearch.h). */
static void judge_row(const struct kb_knee_sample *s, size_t n, const struct kb_criteria *c,
                      struct kb_knee_row *w)
{
    double del[KB_KNEE_MAX_SAMPLES], p99[KB_KNEE_MAX_SAMPLES];
    int failed = 0, over = 0, short_ = 0, holds = judge_holds(s, n, c, w);
    for (size_t i = 0; i < n; i++) {
        if (s[i].rate != w->rate || s[i].hold)
            continue;
        w->n++;
        if (s[i].verdict == KB_CLIENT_LIMITED || w->trusted == KB_KNEE_MAX_SAMPLES)
            continue;
        failed |= s[i].verdict == KB_FAILED;
        w->held_n += s[i].verdict == KB_CONTROLLED;
        /* nothing completed is the worst latency there is, not a missing one */
        p99[w->trusted] = isnan(s[i].p99_us) ? INFINITY : s[i].p99_us;
        del[w->trusted] = s[i].delivery;
        over += p99[w->trusted] >= (double)c->max_p99_us;
        short_ += del[w->trusted] < c->min_delivery;
        w->trusted++;
    }
    w->delivery = median(del, w->trusted);
    w->p99_us = median(p99, w->trusted);
    if (!w->trusted)
        w->state = KB_ROW_UNTRUSTED;
    else if (failed)
        w->state = KB_ROW_FAILED;
    else if (w->delivery >= c->min_delivery && w->p99_us < (double)c->max_p99_us)
        w->state = KB_ROW_HELD;
    else
        w->state = KB_ROW_MISSED;
    w->settled = failed || w->held_n == w->trusted ||
                 (w->held_n == 0 && (over == w->trusted || short_ == w->trusted));
    w->hold_ok = holds > 0;
    if (!w->hold_trusted || w->state != KB_ROW_HELD)
        return;
    /* the long sample outranks the short ones: the backlog a short one hides shows in it */
    if (holds <= 0) {
        w->state = holds < 0 ? KB_ROW_FAILED : KB_ROW_MISSED;
        w->settled = 1;
    }
}

static int row_of(const struct kb_knee_row *rows, size_t n, long rate)
{
    for (size_t i = 0; i < n; i++)
        if (rows[i].rate == rate)
            return 1;
    return 0;
}

size_t kb_knee_rows(const struct kb_knee_sample *s, size_t n, const struct kb_criteria *c,
                    struct kb_knee_row *rows, size_t max)
{
    size_t nr = 0;
    for (size_t i = 0; i < n && nr < max; i++) {
        size_t k;
        if (row_of(rows, nr, s[i].rate))
            continue;
        /* insertion keeps them ascending */
        for (k = nr; k > 0 && rows[k - 1].rate > s[i].rate; k--)
            rows[k] = rows[k - 1];
        memset(&rows[k], 0, sizeof(rows[k]));
        rows[k].rate = s[i].rate;
        nr++;
    }
    for (size_t i = 0; i < nr; i++)
        judge_row(s, n, c, &rows[i]);
    return nr;
}

long kb_knee_midpoint(long lo, long hi)
{
    double m = sqrt((double)lo * (double)hi), scale;
    long r;
    if (hi <= lo + 1)
        return 0;
    scale = pow(10, floor(log10(m)) - 2);
    r = scale >= 1 ? (long)(llround(m / scale) * (long long)scale) : lround(m);
    if (r <= lo || r >= hi)
        r = lround(m);
    if (r <= lo)
        r = lo + 1;
    if (r >= hi)
        r = hi - 1;
    return r;
}

/* An end of the bracket wants another sample: fewer than `confirm` trusted ones, unless
 * settled with more than half in. Untrusted samples are retaken, at most twice over. */
static int wants(const struct kb_knee_row *w, int confirm)
{
    if (w->state == KB_ROW_FAILED || w->n >= confirm + 2 || w->trusted >= confirm)
        return 0;
    return !(w->settled && 2 * w->trusted > confirm);
}

static void set(struct kb_knee_next *x, enum kb_knee_step step, long rate, const char *why)
{
    x->step = step;
    x->rate = rate;
    x->why = why;
    x->hold = 0;
}

/* The bracket is located on short samples: the held end's hold sample, or the end. */
static void hold_or_locate(const struct kb_knee_row *lo, const struct kb_knee_opts *o,
                           struct kb_knee_next *x)
{
    if (!o->hold || lo->hold_trusted) {
        set(x, KB_KNEE_LOCATED, 0, "located");
    } else if (lo->hold_n < 2) {
        set(x, KB_KNEE_MEASURE, lo->rate, "hold lo");
        x->hold = 1;
    } else {
        set(x, KB_KNEE_CLIENT, 0, "the client could not prove the held end through its hold");
    }
}

/* lo's and hi's rows (NULL where there is none) from the rows. */
static void bracket(const struct kb_knee_row *rows, size_t nr, const struct kb_knee_row **lo,
                    const struct kb_knee_row **hi)
{
    *lo = *hi = NULL;
    for (size_t i = 0; i < nr && !*hi; i++) {
        if (rows[i].state == KB_ROW_HELD)
            *lo = &rows[i];
        else
            *hi = &rows[i];
    }
}

static long clamp(double r, long lo, long hi)
{
    long v = lround(r);
    return v < lo ? lo : v > hi ? hi : v;
}

void kb_knee_decide(const struct kb_knee_sample *s, size_t n, const struct kb_knee_opts *o,
                    struct kb_knee_next *x)
{
    struct kb_knee_row rows[KB_KNEE_MAX_SAMPLES];
    const struct kb_knee_row *lo, *hi;
    size_t nr = kb_knee_rows(s, n, &o->crit, rows, KB_KNEE_MAX_SAMPLES);
    bracket(rows, nr, &lo, &hi);
    x->lo = lo ? lo->rate : 0;
    x->hi = hi ? hi->rate : 0;
    if (hi && hi->state == KB_ROW_UNTRUSTED) {
        if (hi->n < 2)
            set(x, KB_KNEE_MEASURE, hi->rate, "retake");
        else
            set(x, KB_KNEE_CLIENT, 0, "the client could not prove this rate on this host");
    } else if (!hi && !lo) {
        set(x, KB_KNEE_MEASURE, clamp((double)o->start_rate, o->min_rate, o->max_rate), "start");
    } else if (!hi) {
        if (lo->rate >= o->max_rate)
            set(x, KB_KNEE_MAX_RATE, 0, "held up to --max-rate");
        else
            set(x, KB_KNEE_MEASURE, clamp((double)lo->rate * o->factor, lo->rate + 1, o->max_rate),
                "rise");
    } else if (!lo) {
        if (hi->rate <= o->min_rate)
            set(x, KB_KNEE_MIN_RATE, 0, "not held down to --min-rate");
        else
            set(x, KB_KNEE_MEASURE, clamp((double)hi->rate / o->factor, o->min_rate, hi->rate - 1),
                "fall");
    } else if ((double)hi->rate / (double)lo->rate - 1 > o->resolution &&
               kb_knee_midpoint(lo->rate, hi->rate)) {
        set(x, KB_KNEE_MEASURE, kb_knee_midpoint(lo->rate, hi->rate), "bisect");
    } else if (wants(lo, o->confirm)) {
        set(x, KB_KNEE_MEASURE, lo->rate, "confirm lo");
    } else if (wants(hi, o->confirm)) {
        set(x, KB_KNEE_MEASURE, hi->rate, "confirm hi");
    } else {
        hold_or_locate(lo, o, x);
    }
}

void kb_knee_hold_of(const struct kb_contract *c, double *hold_s, double *warmup_s)
{
    const struct kb_profile *p = kb_contract_profile(c, "paper");
    if (*hold_s < 0)
        *hold_s = p ? p->duration_s : 30;
    *warmup_s = p ? p->warmup_s : 5;
}

const char *kb_knee_row_state_name(enum kb_knee_row_state st)
{
    static const char *const names[] = { "held", "missed", "failed", "untrusted" };
    return names[st];
}

const char *kb_knee_step_name(enum kb_knee_step st)
{
    static const char *const names[] = { "measure", "located", "max-rate", "min-rate",
                                         "client" };
    return names[st];
}
