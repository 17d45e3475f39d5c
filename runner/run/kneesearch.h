/* knee.h -- the search behind `kneebench knee`: a rate's samples judged together as its row,
 * the bracket the rows make, and the next step (docs/knee.md, "How the search runs").
 *
 * Pure: no I/O, no clock. The command measures what this asks for and hands it back, so the
 * next step is a function of the samples alone and a resumed search asks for what the
 * interrupted one would have.
 *
 * A row is untrusted (every sample client-limited), failed (a trusted sample failed), held
 * (the medians of its trusted samples meet the criteria, its hold samples' too) or missed.
 * hi is the lowest rate not held, lo the highest held rate below it. The next step, first
 * that applies:
 *   retake   hi untrusted: up to 2 samples, then the search ends on the client's bound
 *   rise     no hi: lo x factor, capped at max_rate (fall: no lo, hi / factor, min_rate)
 *   bisect   hi / lo - 1 > resolution: sqrt(lo x hi), 3 significant digits
 *   confirm  lo, then hi, has fewer than `confirm` trusted samples and is not settled
 *   hold     with `hold`, lo has no trusted hold sample: one long sample of lo, which a
 *            rate a few percent past the knee fails where a short one lets it through
 *   located  otherwise */
#ifndef KB_KNEE_H
#define KB_KNEE_H

#include <stddef.h>

#include "contract/contract.h"
#include "runner/run/verdict.h"

#define KB_KNEE_MAX_SAMPLES 256

struct kb_knee_sample {
    long rate;
    enum kb_verdict verdict;     /* the point's: failed, client-limited or the server's */
    double delivery;
    double p99_us;               /* corrected; NAN when nothing completed */
    int hold;                    /* a hold sample (kb_knee_opts.hold), not a short one */
    /* the server's closes after a response, and the responses: a server that closes after
     * each one is outside the load model (persistent connections), refused at the first
     * sample (runner/run/knee/kneerun.h) */
    long long keepalive_breaks, completed;
    double conns_per_request;    /* under --reconnect, the connections each request needed
                                    (load.json's connections_per_request); NAN: none */
};

struct kb_knee_opts {
    long start_rate, min_rate, max_rate;
    double factor;               /* > 1: the geometric rise and fall */
    double resolution;           /* > 0: the bracket's width, hi / lo - 1 */
    int confirm;                 /* samples each end of the bracket needs (>= 1) */
    int hold;                    /* the held end must also hold a hold sample */
    struct kb_criteria crit;
};

enum kb_knee_row_state { KB_ROW_HELD, KB_ROW_MISSED, KB_ROW_FAILED, KB_ROW_UNTRUSTED };

struct kb_knee_row {
    long rate;
    int n;                       /* samples */
    int trusted, held_n;         /* trusted samples; of those, controlled on their own */
    double delivery, p99_us;     /* medians over the trusted samples (NAN: none) */
    int settled;                 /* more samples cannot move the medians across */
    int hold_n, hold_trusted;    /* hold samples; of those, trusted */
    int hold_ok;                 /* the trusted hold samples' medians meet the criteria */
    enum kb_knee_row_state state;
};

enum kb_knee_step {
    KB_KNEE_MEASURE,             /* sample `rate` (once more) */
    KB_KNEE_LOCATED,             /* lo and hi within the resolution, both confirmed */
    KB_KNEE_MAX_RATE,            /* held up to max_rate */
    KB_KNEE_MIN_RATE,            /* not held even at min_rate */
    KB_KNEE_CLIENT,              /* the client could not prove hi */
};

struct kb_knee_next {
    enum kb_knee_step step;
    long rate;                   /* MEASURE: the rate to sample */
    int hold;                    /* MEASURE: a hold sample */
    long lo, hi;                 /* the bracket so far: 0 where there is no such end */
    const char *why;             /* static text: why this step */
};

/* The rows of the samples, by rate ascending, into rows (at most max); their count. */
size_t kb_knee_rows(const struct kb_knee_sample *s, size_t n, const struct kb_criteria *c,
                    struct kb_knee_row *rows, size_t max);

/* What to do next, given every sample so far. */
void kb_knee_decide(const struct kb_knee_sample *s, size_t n, const struct kb_knee_opts *o,
                    struct kb_knee_next *next);

/* sqrt(lo x hi) rounded to 3 significant digits, strictly between lo and hi where an
 * integer is; 0 when none is (hi <= lo + 1). */
long kb_knee_midpoint(long lo, long hi);

/* The hold sample's length, where *hold_s < 0 (not given), and its warmup: the paper
 * profile's points (30 s after 5 s where the contract has no such profile). knee and the
 * curve's --refine both hold this long. */
void kb_knee_hold_of(const struct kb_contract *c, double *hold_s, double *warmup_s);

const char *kb_knee_row_state_name(enum kb_knee_row_state s);
const char *kb_knee_step_name(enum kb_knee_step s);

#endif
