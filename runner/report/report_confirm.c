/* report_confirm.c -- each runtime-route's boundary, read from the aggregated rows: where
 * the curve stops being controlled, and what of it more samples can confirm. The curve asks
 * this after its matrix (runner/cli/cmd_curve.c, --confirm) and the report says from the same
 * rows how each cell was confirmed, so the two never disagree on where a boundary lies. */
#include "runner/report/report.h"
#include "runner/report/report_int.h"

#include <string.h>

/* The planned row with evidence at rate, or NULL. */
static const struct kb_report_row *row_at(const struct kb_report *r, const char *rt,
                                          const char *route, long rate)
{
    const struct kb_report_row *w = rate ? kb_report_row(r, rt, route, rate) : NULL;
    return w && w->planned && w->n > 0 ? w : NULL;
}

/* The next planned rate above `above` with evidence (the lowest when above is 0); 0: none. */
static long next_rate(const struct kb_report *r, const char *rt, const char *route, long above)
{
    long best = 0;
    for (size_t k = 0; k < kb_report_nrates(r); k++) {
        long rate = kb_report_rate(r, k);
        if (rate > above && (!best || rate < best) && row_at(r, rt, route, rate))
            best = rate;
    }
    return best;
}

/* A rate's samples agree when every one held, or none did and every one missed the same
 * criterion (all past the p99 bound, or all short of delivery): then no sample added can
 * carry a median across. Samples that missed on different criteria do not agree: their
 * medians could meet both; nor do samples some of which the client limited. */
static int settled(const struct kb_report *r, const struct kb_report_row *w)
{
    if (w->client_limited_n > 0)    /* a trusted sample may yet outvote it */
        return 0;
    if (w->controlled_n == w->n)
        return 1;
    return w->controlled_n == 0 && ((w->p99.n == w->n && w->p99.min >= r->max_p99_us) ||
                                    w->delivery.max < r->min_delivery);
}

static void side(const struct kb_report *r, const char *rt, const char *route, long rate,
                 struct kb_boundary_rate *s)
{
    const struct kb_report_row *w = row_at(r, rt, route, rate);
    memset(s, 0, sizeof(*s));
    s->rps = rate;
    s->verdict = w ? w->verdict : "";
    if (!w)
        return;
    s->n = w->n;
    s->controlled_n = w->controlled_n;
    s->settled = settled(r, w);
}

size_t kb_report_boundaries(const struct kb_report *r, struct kb_boundary *out, size_t max)
{
    size_t n = 0;
    for (size_t i = 0; i < kb_report_nruntimes(r); i++)
        for (size_t j = 0; j < kb_report_nroutes(r) && n < max; j++) {
            const char *rt = kb_report_runtime(r, i), *route = kb_report_route(r, j);
            long held;
            if (!next_rate(r, rt, route, 0))
                continue;                     /* not planned here, or nothing ran */
            held = kb_report_highest(r, rt, route);
            out[n].runtime = rt;
            out[n].route = route;
            side(r, rt, route, held, &out[n].held);
            side(r, rt, route, next_rate(r, rt, route, held), &out[n].next);
            n++;
        }
    return n;
}

/* A rate the client could still decide once all its samples are in (two stalls of the client
 * of three, at a rate near the client's reach) gets this many more: two trusted samples that
 * agree with the third outvote two client-limited ones. */
#define CLIENT_LIMITED_EXTRA 2

int kb_boundary_wants(const struct kb_boundary_rate *b, int samples)
{
    if (!b->rps || (strcmp(b->verdict, "controlled") && strcmp(b->verdict, "uncontrolled") &&
                    strcmp(b->verdict, "client-limited")))
        return 0;
    if (b->n >= samples) {      /* all in: only a rate the client could still decide wants more */
        int more = samples + CLIENT_LIMITED_EXTRA - b->n;
        return samples > 1 && !strcmp(b->verdict, "client-limited") && more > 0 ? more : 0;
    }
    if (b->settled && 2 * b->n > samples)
        return 0;
    return b->settled ? samples / 2 + 1 - b->n : samples - b->n;
}
