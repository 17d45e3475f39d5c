/* refine.h -- a curve cell's knee refined between its two grid rates (`kneebench curve
 * --refine`; docs/protocol.md, "Refined knees").
 *
 * Owns one runtime-route's refinement: its samples read back from the run directory -- at
 * the grid's boundary rates, every sample the matrix and the confirmation took there
 * (points/<id>, <id>-r<k>, <id>-c<k>), and at the rates bisected between them
 * (points/<id>-f<k>, <id> being <runtime>-<route>-<rate>), and the held end's hold samples
 * (points/<id>-h<k>, kneesearch.h) -- and the knee search's next step over them
 * (runner/run/kneesearch.h), confined to the grid bracket: it bisects and confirms inside it and
 * never measures a grid rate again but for the held end's hold. The step says where it ended:
 * located (within the resolution), max-rate (the grid's next rate held after all),
 * min-rate (its highest held rate did not), client (the client could not prove a rate in
 * between), or measure (a point to run). */
#ifndef KB_REFINE_H
#define KB_REFINE_H

#include <jansson.h>
#include <stddef.h>

#include "runner/run/kneesearch.h"

#define KB_REFINE_SAMPLES_MAX 16     /* samples looked for at one rate, of each kind */

struct kb_refine_cell {
    const char *runtime, *route;
    long grid_lo, grid_hi;           /* the highest controlled grid rate and the next */
};

struct kb_refine_state {
    struct kb_knee_sample s[KB_KNEE_MAX_SAMPLES];
    size_t n;
    long rates[KB_KNEE_MAX_SAMPLES]; /* the bisected rates measured, ascending, once each */
    size_t nrates;
    struct kb_knee_next next;
    int at_grid;                     /* the search asked for a grid rate: it stops there */
};

/* The cell's samples read from dir/points and the next step. opts gives the resolution, the
 * confirmation and the criteria; the bracket is the cell's. */
void kb_refine_decide(const char *dir, const struct kb_refine_cell *c,
                      const struct kb_knee_opts *opts, struct kb_refine_state *st);

/* The point id of the next sample at rate: "<runtime>-<route>-<rate>-f<k>" (a hold sample:
 * "-h<k>"), k one past the samples of that kind dir already has there. */
void kb_refine_next_id(const char *dir, const struct kb_refine_cell *c, long rate, int hold,
                       char *id, size_t len);

/* refine.json's entry for the cell: runtime, route, grid_lo_rps, grid_hi_rps, lo_rps,
 * hi_rps, step, rates (the bisected ones measured). New reference. */
json_t *kb_refine_cell_json(const struct kb_refine_cell *c, const struct kb_refine_state *st);

#endif
