/* matrix.h -- plans a curve: which points run, in which order, with which parameters.
 *
 * Pure: no I/O. Interleaved (the default): rate by rate ascending, each rate's routes in
 * turn, the runtimes side by side in an order rotated by one at every step, so a host whose
 * speed drifts meets every runtime alike. Sequential (the db route's default: its PostgreSQL
 * starts with the fixture): runtime by runtime (the contract's order, rotated per repeat) x
 * routes x rates. A runtime runs only on the routes it serves (kb_runtime_serves); a variant
 * (gray-static-blocking) only where a profile, --runtimes or db_mode names it. Overrides are
 * checked against the contract. kb_plan_free() frees what kb_matrix_plan() allocated; point
 * strings point into the plan's own copies. */
#ifndef KB_MATRIX_H
#define KB_MATRIX_H

#include "contract/contract.h"
#include "runner/util/opts.h"

#include <stddef.h>

struct kb_plan_opts {
    const char *profile;       /* "paper", "quick", ... (contract profiles); NULL = paper */
    const char *runtimes;      /* comma list or NULL = all, in the contract's order */
    const char *routes;        /* comma list or NULL = the comparison's routes */
    const struct kb_rates *rates;   /* --rates, or NULL = the profile's or contract's */
    double duration_s, warmup_s, drain_s;   /* < 0 = from the profile */
    int threads, connections;  /* <= 0 = from the contract */
    int repeats;               /* <= 0 = 1 */
    int confirm;               /* samples at each cell's boundary; <= 0 = the profile's */
    /* The /db designs the db route's points run: "readiness", "blocking" or "both"; each
     * planned runtime with a db design is joined (or replaced, on /db) by its kin with the
     * chosen ones (kb_contract_db_runtime). NULL: whatever the runtimes picked run. */
    const char *db_mode;
    const char *order;         /* "interleaved", "sequential"; NULL: interleaved unless the
                                * plan runs the db route */
};

struct kb_point {
    size_t index;              /* 0-based position in run order */
    int repeat;                /* 1-based */
    const char *runtime;
    const char *route;
    long rate;
    char id[128];              /* "<runtime>-<route>-<rate>" (+ "-r<k>" when repeats > 1) */
    int hold;                  /* a refinement's hold sample: the curve's hold length */
};

struct kb_plan {
    char profile[32];
    double duration_s, warmup_s, drain_s;
    int threads, connections, repeats;
    int confirm_samples;       /* >= 1; 1: no boundary confirmation */
    int interleaved;           /* the order (kb_plan_opts.order) */
    struct kb_strlist runtimes, routes;     /* owned copies, contract order */
    long *rates;
    size_t nrates;
    struct kb_point *points;
    size_t npoints;
};

/* 0, or -1 with the reason in err (unknown name, empty list, bad number). */
int kb_matrix_plan(const struct kb_contract *c, const struct kb_plan_opts *o, struct kb_plan *p,
                   char *err, size_t errlen);
void kb_plan_free(struct kb_plan *p);

/* The point with this id, or NULL. */
const struct kb_point *kb_plan_find(const struct kb_plan *p, const char *id);

#endif
