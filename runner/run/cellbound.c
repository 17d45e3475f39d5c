/* cellbound.c -- each runtime-route's boundary, read from the aggregated rows: where
 * the curve stops being controlled, and what of it more samples can confirm (cell.h). The
 * curve asks this after its matrix and the report says from the same rows how each cell was
 * confirmed, so the two never disagree on where a boundary lies. */
#include "runner/run/cell.h"
#include "runner/util/evidence.h"
#include "runner/util/jfield.h"
#include "runner/util/paths.h"

#include <errno.h>
#include <stdio.h>
#include <string.h>

/* The planned row with evidence at rate, or NULL. */
static const struct kb_cell *row_at(const struct kb_cells *r, const char *rt,
                                          const char *route, long rate)
{
    const struct kb_cell *w = rate ? kb_cells_row(r, rt, route, rate) : NULL;
    return w && w->planned && w->n > 0 ? w : NULL;
}

/* The next planned rate above `above` with evidence (the lowest when above is 0); 0: none. */
static long next_rate(const struct kb_cells *r, const char *rt, const char *route, long above)
{
    long best = 0;
    for (size_t k = 0; k < kb_cells_nrates(r); k++) {
        long rate = kb_cells_rate(r, k);
        if (rate > above && (!best || rate < best) && row_at(r, rt, route, rate))
            best = rate;
    }
    return best;
}

/* A rate's samples agree when every one held, or none did and every one missed the same
 * criterion (all past the p99 bound, or all short of delivery): then no sample added can
 * carry a median across. Samples that missed on different criteria do not agree: their
 * medians could meet both; nor do samples some of which the client limited. */
static int settled(const struct kb_cells *r, const struct kb_cell *w)
{
    if (w->client_limited_n > 0)    /* a trusted sample may yet outvote it */
        return 0;
    if (w->controlled_n == w->n)
        return 1;
    return w->controlled_n == 0 && ((w->p99.n == w->n && w->p99.min >= r->max_p99_us) ||
                                    w->delivery.max < r->min_delivery);
}

static void side(const struct kb_cells *r, const char *rt, const char *route, long rate,
                 struct kb_boundary_rate *s)
{
    const struct kb_cell *w = row_at(r, rt, route, rate);
    memset(s, 0, sizeof(*s));
    s->rps = rate;
    s->verdict = w ? w->verdict : "";
    if (!w)
        return;
    s->n = w->n;
    s->controlled_n = w->controlled_n;
    s->settled = settled(r, w);
}

size_t kb_cells_boundaries(const struct kb_cells *r, struct kb_boundary *out, size_t max)
{
    size_t n = 0;
    for (size_t i = 0; i < kb_cells_nruntimes(r); i++)
        for (size_t j = 0; j < kb_cells_nroutes(r) && n < max; j++) {
            const char *rt = kb_cells_runtime(r, i), *route = kb_cells_route(r, j);
            long held;
            if (!next_rate(r, rt, route, 0))
                continue;                     /* not planned here, or nothing ran */
            held = kb_cells_highest(r, rt, route);
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

/* ---- the run's cells as the rounds read them ---- */

struct plain {
    const char *dir;
    char err[512];               /* the first refusal; "" when none */
};

/* A complete point's verdict.json (DONE beside it), schema- and figure-checked; NULL
 * otherwise. */

static json_t *plain_sample(void *ctx, const char *id, long rate)
{
    struct plain *p = ctx;
    char pdir[KB_PATH_MAX], path[KB_PATH_MAX], why[512];
    json_t *v;
    (void)rate;
    snprintf(pdir, sizeof(pdir), "%s/points/%s", p->dir, id);
    if (!kb_file_exists(kb_path(path, sizeof(path), pdir, "DONE")))
        return NULL;
    if (kb_evidence_read(kb_path(path, sizeof(path), pdir, "verdict.json"), &v, why,
                         sizeof(why)) < 0 ||
        kb_evidence_check_load(json_object_get(v, "load"), path, why, sizeof(why)) < 0) {
        if (!p->err[0])
            snprintf(p->err, sizeof(p->err), "%s", why);
        json_decref(v);
        return NULL;
    }
    return v;
}

/* name's evidence in dir: *out NULL when absent; -1 when there but refused. */
static int read_opt(const char *dir, const char *name, json_t **out, char *err, size_t errlen)
{
    char path[KB_PATH_MAX];
    int rc = kb_evidence_read(kb_path(path, sizeof(path), dir, name), out, err, errlen);
    return rc == KB_EVIDENCE_REFUSED || (rc < 0 && errno != ENOENT) ? -1 : 0;
}

int kb_cells_load(const char *dir, struct kb_cells *c, json_t **plan, char *err,
                  size_t errlen)
{
    struct plain p = { .dir = dir };
    struct kb_cell_reader rd = { .sample = plain_sample, .ctx = &p };
    json_t *crit, *confirm = NULL, *refine = NULL;
    memset(c, 0, sizeof(*c));
    *plan = NULL;
    if (read_opt(dir, "plan.json", plan, err, errlen) < 0)
        return -1;
    if (!*plan) {
        snprintf(err, errlen, "%.3000s has no plan.json: not a kneebench run directory", dir);
        return -1;
    }
    crit = json_object_get(*plan, "criteria");
    if (!json_is_number(json_object_get(crit, "max_p99_us")))
        snprintf(err, errlen, "%.3000s/plan.json has no criteria.max_p99_us", dir);
    if (!json_is_number(json_object_get(crit, "max_p99_us")) ||
        kb_cells_check_plan(*plan, dir, err, errlen) < 0 ||
        read_opt(dir, "confirm.json", &confirm, err, errlen) < 0 ||
        read_opt(dir, "refine.json", &refine, err, errlen) < 0) {
        json_decref(confirm);
        json_decref(*plan);
        *plan = NULL;
        return -1;
    }
    c->min_delivery = kb_jnum(crit, "min_delivery", NULL);
    c->max_p99_us = kb_jnum(crit, "max_p99_us", NULL);
    kb_cells_build(c, *plan, confirm, refine, &rd);
    json_decref(confirm);
    json_decref(refine);
    if (p.err[0]) {              /* never a boundary read by guessing what a newer file holds */
        snprintf(err, errlen, "%s", p.err);
        kb_cells_free(c);
        json_decref(*plan);
        *plan = NULL;
        return -1;
    }
    return 0;
}
