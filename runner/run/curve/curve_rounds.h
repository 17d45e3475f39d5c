/* curve_rounds.h -- what `kneebench curve` does after its matrix, reading the run's cells as
 * the report reads them (runner/run/cell.h), each point run as the matrix's (curve.h):
 *   - each runtime-route's boundary confirmed by more samples (docs/protocol.md,
 *     "Confirming the answer"; RUN/confirm.json);
 *   - with --refine, each cell's knee bisected between its grid rates ("Refined knees";
 *     RUN/refine.json);
 *   - a complete run's requests logs kept where they decide ("Raw request events";
 *     RUN/requests-logs.json).
 * Each returns the count of points that could not be run, or -1 said on stderr. */
#ifndef KB_CURVE_ROUNDS_H
#define KB_CURVE_ROUNDS_H

#include "runner/run/curve/curve.h"

int kb_curve_confirm_all(struct kb_curve *cv);
int kb_curve_refine_all(struct kb_curve *cv);
int kb_curve_settle_requests_logs(struct kb_curve *cv);

/* The matrix, then each round above in order: the count of points that could not be run
 * (a round that failed counts one). */
int kb_curve_all_rounds(struct kb_curve *cv);

#endif
