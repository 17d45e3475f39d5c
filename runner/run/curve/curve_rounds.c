/* curve_rounds.c -- the curve's rounds after the matrix (curve_rounds.h): each cell's
 * boundary confirmed, and with --refine each cell's knee bisected between its grid rates. */
#define _GNU_SOURCE
#include "runner/run/curve/curve_rounds.h"
#include "runner/util/evidence.h"

#include <jansson.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "runner/run/cell.h"
#include "runner/run/curve/refine.h"
#include "runner/util/paths.h"

/* ---- confirming each cell's boundary -------------------------------------------------- */
/* After the matrix, each runtime-route's boundary -- its highest controlled rate and the
 * next one up, read from the aggregated rows as the report reads them -- is sampled again
 * until each has plan.confirm_samples samples, and the rows' medians decide (docs/protocol.md,
 * "Confirming the answer"). Where that moves the boundary, the new one is confirmed in the
 * next round, at most CONFIRM_ROUNDS rounds. The added points are listed in RUN/confirm.json
 * (written before they run, so a resumed run and the report find them) and kept like the
 * matrix's: points/<rt>-<route>-<rate>-c<k>/, k the sample's number at that rate. */
#define CONFIRM_ROUNDS 4
#define CONFIRM_MAX 512

struct confirm {
    json_t *points;                     /* confirm.json's points, in the order added */
    struct kb_point pts[CONFIRM_MAX];   /* this round's, to run */
    size_t n;
};

/* The plan's own copy of name (point strings must outlive the round), its index in *at. */
static const char *plan_name(const struct kb_strlist *l, const char *name, size_t *at)
{
    for (size_t i = 0; i < l->n; i++)
        if (!strcmp(l->v[i], name)) {
            *at = i;
            return l->v[i];
        }
    return NULL;
}

static int listed(json_t *points, const char *id)
{
    size_t i;
    json_t *p;
    json_array_foreach(points, i, p) {
        const char *have = json_string_value(json_object_get(p, "id"));
        if (have && !strcmp(have, id))   /* an entry without an id lists nothing */
            return 1;
    }
    return 0;
}

/* A round's run order (by_key). Sequential: runtime by runtime (one fixture start each), then
 * the sample's number, then as added. Interleaved: sample by sample, then rate and route, the
 * runtimes side by side in an order rotated at each step, so that host drift during the round
 * meets every runtime's samples alike. */
static size_t round_key(const struct kb_curve *cv, int sample, long rate, size_t route,
                        size_t rt, size_t added)
{
    size_t nrt = cv->plan.runtimes.n ? cv->plan.runtimes.n : 1;
    if (!cv->plan.interleaved)
        return (rt << 24) | ((size_t)sample << 16) | added;
    return ((size_t)sample << 56) | ((size_t)rate << 20) | (route << 12) |
           (((rt + (size_t)sample + route) % nrt) << 4) | (added & 0xf);
}

/* The samples b's runtime and route still want at side's rate, numbered from its n + 1. */
static void want_samples(struct kb_curve *cv, struct confirm *cf, const struct kb_boundary *b,
                         const struct kb_boundary_rate *side)
{
    long rate = side->rps;
    int have = side->n, k = kb_boundary_wants(side, cv->plan.confirm_samples);
    for (int j = 0; j < k && cf->n < CONFIRM_MAX; j++) {
        struct kb_point *pt = &cf->pts[cf->n];
        size_t rt, ro;
        memset(pt, 0, sizeof(*pt));
        pt->repeat = 1;
        pt->runtime = plan_name(&cv->plan.runtimes, b->runtime, &rt);
        pt->route = plan_name(&cv->plan.routes, b->route, &ro);
        pt->rate = rate;
        if (!pt->runtime || !pt->route)
            return;
        snprintf(pt->id, sizeof(pt->id), "%s-%s-%ld-c%d", pt->runtime, pt->route, rate,
                 have + 1 + j);
        pt->index = round_key(cv, have + 1 + j, rate, ro, rt, cf->n++);
        if (!listed(cf->points, pt->id))
            json_array_append_new(cf->points, json_pack("{s:s,s:s,s:s,s:I,s:i}", "id", pt->id,
                                  "runtime", pt->runtime, "route", pt->route,
                                  "rate", (json_int_t)rate, "sample", have + 1 + j));
    }
}

/* In round_key's order: no rate's samples fall in one stretch of time. */
static int by_key(const void *a, const void *b)
{
    const struct kb_point *x = a, *y = b;
    return (x->index > y->index) - (x->index < y->index);
}

/* One round: the boundaries as they stand, and the samples they still want. 0 when none
 * is wanted, -1 when the rows cannot be read. */
static int confirm_plan(struct kb_curve *cv, struct confirm *cf, char *err, size_t errlen)
{
    struct kb_cells rep;
    json_t *plan;
    struct kb_boundary b[256];
    size_t nb;
    cf->n = 0;
    if (kb_cells_load(cv->r.dir, &rep, &plan, err, errlen) < 0)
        return -1;
    nb = kb_cells_boundaries(&rep, b, sizeof(b) / sizeof(b[0]));
    for (size_t i = 0; i < nb; i++) {
        want_samples(cv, cf, &b[i], &b[i].held);
        want_samples(cv, cf, &b[i], &b[i].next);
    }
    kb_cells_free(&rep);
    json_decref(plan);
    qsort(cf->pts, cf->n, sizeof(cf->pts[0]), by_key);
    for (size_t i = 0; i < cf->n; i++)
        cf->pts[i].index = i;
    return cf->n > 0;
}

static int write_confirm(struct kb_curve *cv, const struct confirm *cf, char *err, size_t errlen)
{
    char path[KB_PATH_MAX];
    json_t *doc = json_pack("{s:i,s:i,s:O}", "schema_version", 1, "samples",
                            cv->plan.confirm_samples, "points", cf->points);
    int rc = kb_run_evidence_json(kb_path(path, sizeof(path), cv->r.dir, "confirm.json"), doc,
                                  err, errlen);
    json_decref(doc);
    return rc;
}

/* The confirmation rounds; the count of points that could not be run, or -1 when the
 * boundaries could not be read or confirm.json written (said on stderr). */
int kb_curve_confirm_all(struct kb_curve *cv)
{
    struct confirm *cf = calloc(1, sizeof(*cf));
    char err[1024], path[KB_PATH_MAX];
    json_t *old;
    int failures = 0, rc = 0;
    if (!cf)
        return -1;
    /* absent on a first pass; a newer kneebench's is refused, not extended */
    if (kb_evidence_read(kb_path(path, sizeof(path), cv->r.dir, "confirm.json"), &old, err,
                         sizeof(err)) == KB_EVIDENCE_REFUSED) {
        fprintf(stderr, "kneebench curve: cannot confirm the boundaries: %s\n", err);
        free(cf);
        return -1;
    }
    cf->points = json_is_array(json_object_get(old, "points"))
                 ? json_incref(json_object_get(old, "points")) : json_array();
    json_decref(old);
    cv->confirming = "confirm ";
    for (int round = 0; round < CONFIRM_ROUNDS && !kb_run_interrupted(); round++) {
        if ((rc = confirm_plan(cv, cf, err, sizeof(err))) <= 0 ||
            (rc = write_confirm(cv, cf, err, sizeof(err))) < 0)
            break;
        printf("kneebench curve: confirming the boundaries, round %d: %zu more sample(s)\n",
               round + 1, cf->n);
        fflush(stdout);
        failures += kb_curve_run_points(cv, cf->pts, cf->n);
    }
    cv->confirming = NULL;
    if (rc < 0)
        fprintf(stderr, "kneebench curve: cannot confirm the boundaries: %s\n", err);
    json_decref(cf->points);
    free(cf);
    return rc < 0 ? -1 : failures;
}

/* ---- refining each cell's knee between its grid rates ---------------------------------- */
/* After the confirmation, each runtime-route whose highest controlled rate has a next grid
 * rate is bisected between the two until the bracket is within --refine's resolution, the
 * bracket's ends confirmed as the boundary was (runner/run/curve/refine.h; docs/protocol.md,
 * "Refined knees"). A round takes each cell's next point, runtime by runtime, so that a
 * fixture starts once a round; RUN/refine.json says each cell's state, written before the
 * round's points run (they are listed there) and after the last. */
#define REFINE_ROUNDS 24

struct refine {
    json_t *cells;                      /* refine.json's cells, as of this round */
    struct kb_point pts[256];
    size_t n;
};

/* This round: every cell's state, and the point each one wants next. -1 when the rows
 * cannot be read. */
static int refine_plan(struct kb_curve *cv, struct refine *rf, char *err, size_t errlen)
{
    struct kb_cells rep;
    json_t *plan;
    struct kb_boundary b[256];
    struct kb_knee_opts o = { .factor = 2, .resolution = cv->refine / 100,
                              .confirm = cv->plan.confirm_samples, .hold = cv->hold_s > 0,
                              .crit = kb_criteria_of(&cv->r.c) };
    static struct kb_refine_state st;
    size_t nb;
    rf->n = 0;
    json_decref(rf->cells);
    rf->cells = json_array();
    if (kb_cells_load(cv->r.dir, &rep, &plan, err, errlen) < 0)
        return -1;
    nb = kb_cells_boundaries(&rep, b, sizeof(b) / sizeof(b[0]));
    for (size_t i = 0; i < nb && rf->n < sizeof(rf->pts) / sizeof(rf->pts[0]); i++) {
        struct kb_refine_cell c = { .runtime = b[i].runtime, .route = b[i].route,
                                    .grid_lo = b[i].held.rps, .grid_hi = b[i].next.rps };
        struct kb_point *pt = &rf->pts[rf->n];
        size_t rt, ro;
        if (!c.grid_lo || !c.grid_hi || strcmp(b[i].held.verdict, "controlled"))
            continue;                   /* nothing held, or held up to the grid's top */
        kb_refine_decide(cv->r.dir, &c, &o, &st);
        json_array_append_new(rf->cells, kb_refine_cell_json(&c, &st));
        if (st.next.step != KB_KNEE_MEASURE || st.at_grid)
            continue;
        memset(pt, 0, sizeof(*pt));
        pt->repeat = 1;
        pt->runtime = plan_name(&cv->plan.runtimes, c.runtime, &rt);
        pt->route = plan_name(&cv->plan.routes, c.route, &ro);
        pt->rate = st.next.rate;
        if (!pt->runtime || !pt->route)
            continue;
        pt->hold = st.next.hold;
        kb_refine_next_id(cv->r.dir, &c, pt->rate, pt->hold, pt->id, sizeof(pt->id));
        json_object_set_new(json_array_get(rf->cells, json_array_size(rf->cells) - 1), "next",
                            json_string(pt->id));
        pt->index = round_key(cv, 1, pt->rate, ro, rt, rf->n++);
    }
    kb_cells_free(&rep);
    json_decref(plan);
    qsort(rf->pts, rf->n, sizeof(rf->pts[0]), by_key);
    for (size_t i = 0; i < rf->n; i++)
        rf->pts[i].index = i;
    return rf->n > 0;
}

static int write_refine(struct kb_curve *cv, const struct refine *rf, char *err, size_t errlen)
{
    char path[KB_PATH_MAX];
    json_t *doc = json_pack("{s:i,s:f,s:i,s:f,s:f,s:O}", "schema_version", 1, "resolution",
                            cv->refine / 100, "confirm_samples", cv->plan.confirm_samples,
                            "hold_s", cv->hold_s, "hold_warmup_s", cv->hold_warmup_s,
                            "cells", rf->cells);
    int rc = kb_run_evidence_json(kb_path(path, sizeof(path), cv->r.dir, "refine.json"), doc,
                                  err, errlen);
    json_decref(doc);
    return rc;
}

/* The refinement rounds; the count of points that could not be run, or -1 when the rows
 * could not be read or refine.json written (said on stderr). */
int kb_curve_refine_all(struct kb_curve *cv)
{
    struct refine *rf = calloc(1, sizeof(*rf));
    char err[1024];
    int failures = 0, rc = 0;
    if (!rf)
        return -1;
    cv->confirming = "refine ";
    for (int round = 0; round < REFINE_ROUNDS && !kb_run_interrupted(); round++) {
        rc = refine_plan(cv, rf, err, sizeof(err));
        if (rc >= 0 && write_refine(cv, rf, err, sizeof(err)) < 0)
            rc = -1;
        if (rc <= 0)
            break;
        printf("kneebench curve: refining the knees, round %d: %zu point(s)\n", round + 1,
               rf->n);
        fflush(stdout);
        failures += kb_curve_run_points(cv, rf->pts, rf->n);
    }
    cv->confirming = NULL;
    if (rc < 0)
        fprintf(stderr, "kneebench curve: cannot refine the knees: %s\n", err);
    json_decref(rf->cells);
    free(rf);
    return rc < 0 ? -1 : failures;
}


int kb_curve_all_rounds(struct kb_curve *cv)
{
    int failures = kb_curve_run_points(cv, cv->plan.points, cv->plan.npoints);
    if (!kb_run_interrupted() && cv->plan.confirm_samples > 1) {
        int cf = kb_curve_confirm_all(cv);
        failures += cf < 0 ? 1 : cf;
    }
    if (!kb_run_interrupted() && cv->refine > 0) {
        int rf = kb_curve_refine_all(cv);
        failures += rf < 0 ? 1 : rf;
    }
    /* only a complete run knows its final boundaries; a resumed one settles them later */
    if (!kb_run_interrupted() && !failures && !cv->r.incomplete &&
        cv->requests_log != KB_RL_NONE)
        failures += kb_curve_settle_requests_logs(cv) < 0;
    return failures;
}
