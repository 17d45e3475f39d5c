/* verdict.h -- one point's verdict: controlled, uncontrolled, failed (with the reason) or
 * client-limited, by the contract's criteria (docs/protocol.md, "Point verdicts"); and the
 * client's trust, the one judgement the curve, the soak and calibrate's rungs share
 * (docs/protocol.md, "Trusting the client").
 *
 * Pure: the load figures come parsed (runner/load/loadjson.h), the runner adds what it saw
 * (fixture exit, identity, pre/postflight). Failures are checked first, then the trust, then
 * the criteria. Every edge is here and nowhere else, worded as the contract words it: a
 * maximum and "at least" are inclusive, "exceeds" is strictly above. */
#ifndef KB_VERDICT_H
#define KB_VERDICT_H

#include <jansson.h>
#include <stddef.h>

#include "runner/load/loadjson.h"

enum kb_verdict {
    KB_CONTROLLED,
    KB_UNCONTROLLED,
    KB_FAILED,
    KB_CLIENT_LIMITED,
};

/* What the runner observed around the load, beside the load generator's own figures. */
struct kb_point_obs {
    int have_load;             /* the load JSON was produced and parsed */
    int load_exit;             /* the load generator's exit status */
    char load_problem[256];    /* why have_load is 0 */
    int preflight_failed;
    char preflight_reason[256];
    int fixture_exited;
    char exit_reason[128];
    int identity_changed;
    int postflight_failed;
    char postflight_reason[256];
};

struct kb_criteria {
    double min_delivery;             /* controlled: delivery >= it */
    long max_p99_us;                 /* controlled: corrected p99 < it ("p99 < 100 ms") */
    double client_cpu_max_fraction;  /* trusted: the client's CPU <= it; <= 0: not set */
    /* A load.json from before the client's own delay was kept is trusted on these instead:
     * send lag and rx delay p99 each <= its bound (NAN or < 0: no evidence against it). */
    long client_lag_p99_max_us;
    long client_rx_delay_p99_max_us;
};

/* The criteria of a loaded contract (contract/contract.h). */
struct kb_contract;
struct kb_criteria kb_criteria_of(const struct kb_contract *c);

/* The client's trust: 1 when the client could not have decided the point's verdict, 0 when
 * it could, with the causes in reason (every cause named, "; "-separated). The direct
 * evidence decides -- the verdict with and without the client's own delay in each request,
 * which a busy or starved client cannot hide: the same verdict both ways -- and no request
 * lost by the client, and CPU as a guard beside it (the guard "at 90 %" passes 0.90). */
int kb_trust_judge(const struct kb_point_load *r, const struct kb_criteria *c, char *reason,
                   size_t reasonlen);

/* The controlled criteria alone on the point's figures (failures aside): 1 when delivery,
 * corrected p99 and the unanswered share (at most 1 % at the drain's end) all hold. */
int kb_verdict_held(const struct kb_point_load *r, const struct kb_criteria *c);

/* The two judgements the trust compares, on the figures alone (failures aside): *as_measured
 * and *less_client are 1 where the point held (controlled) as measured and without the
 * client's own delay. -1 when the load predates that delay (has_less_client 0), 0 else. */
int kb_trust_sides(const struct kb_point_load *r, const struct kb_criteria *c, int *as_measured,
                   int *less_client);

/* A calibration rung against the control server: 1 when it held, with why the client was
 * trusted in reason; 0 with every cause in reason. The trust above, the load's own failure
 * causes as a curve point has them, in-time delivery >= min_delivery and nothing unanswered
 * at the drain's end: the control server is known to be fast, so what it left unanswered is
 * the client's or the host's. */
int kb_trust_rung(const struct kb_point_load *r, const struct kb_criteria *c,
                  double min_delivery, char *reason, size_t reasonlen);

/* What the point's own figures give, the client's trust aside: controlled, uncontrolled or
 * failed, with the reason. Failed: a socket error (requests unanswered at the drain's end are
 * not one), non-2xx, a mismatch, unsolicited bytes, broken keep-alive, or what the runner
 * observed (exit, identity, pre/postflight). */
enum kb_verdict kb_verdict_server(const struct kb_point_load *r, const struct kb_point_obs *o,
                                  const struct kb_criteria *c, char *reason, size_t reasonlen);

/* The verdict: failed, else client-limited when the client was not trusted, else the
 * server's verdict; reason gets a one-line explanation (for failed and client-limited the
 * cause, for the others the deciding figures). */
enum kb_verdict kb_verdict_judge(const struct kb_point_load *r, const struct kb_point_obs *o,
                                 const struct kb_criteria *c, char *reason, size_t reasonlen);

const char *kb_verdict_name(enum kb_verdict v);
/* -1 when the name is none of them. */
int kb_verdict_from_name(const char *name);

#endif
