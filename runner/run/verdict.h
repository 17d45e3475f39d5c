/* verdict.h -- judges one point from its evidence: controlled, uncontrolled, failed (with
 * the reason) or client-limited, by the contract's criteria (docs/protocol.md, "Point
 * verdicts"); and the client's trust, the one judgement the curve, the soak and calibrate's
 * rungs all use (docs/protocol.md, "Trusting the client").
 *
 * Pure: the load figures come parsed (runner/load/loadjson.h reads load.json), the runner adds
 * what it saw (fixture exit, identity, pre/postflight), and kb_verdict_judge() decides.
 * Failure reasons are checked first, then the client's trust, then the controlled criteria.
 *
 * The edges, all of them here and nowhere else (the contract's wording: a maximum is
 * inclusive, "exceeds" is strictly above, "at least" is inclusive):
 *   trust      the client's own delay could not have decided the verdict: the point judged
 *              on its corrected latency and delivery as measured, and again with every
 *              request's own client delay (send lag + rx delay) taken out, gives the same
 *              answer (docs/protocol.md, "Trusting the client"); the client lost no
 *              request; and its CPU fraction <= client_cpu_max_fraction (the guard "at 90 %"
 *              passes 0.90 itself; a bound <= 0 is not set). A load.json written before the
 *              client's own delay was kept is judged by the lateness bounds instead (send
 *              lag p99 <= client_lag_p99_max_us, rx delay p99 <= client_rx_delay_p99_max_us;
 *              NAN or < 0: no evidence against the client).
 *   failed     any socket error (kb_point_load_socket_errors > 0: unanswered at the drain's
 *              end are not socket errors), non-2xx, mismatch, unsolicited bytes, broken
 *              keep-alive, or what the runner observed (exit, identity, pre/postflight).
 *   controlled delivery >= min_delivery (inclusive), corrected p99 < max_p99_us (strict: the
 *              protocol says "p99 < 100 ms"), unanswered at drain end <= 1 % of scheduled.
 *   rung       (calibrate) trusted as above and controlled as measured (the harness's own
 *              p99 under the criterion), none of the load's own failure causes, in-time
 *              delivery (kb_point_load_in_time) >= the rung's minimum (inclusive), and no
 *              request unanswered at the drain's end: the control server is known to be
 *              fast, so any request it left unanswered is the client's or the host's. */
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
    double min_delivery;
    long max_p99_us;
    double client_cpu_max_fraction;
    long client_lag_p99_max_us;
    long client_rx_delay_p99_max_us;
};

/* The criteria of a loaded contract (contract/contract.h). */
struct kb_contract;
struct kb_criteria kb_criteria_of(const struct kb_contract *c);

/* The client's trust: 1 when the client could not have decided the point's verdict, 0 when
 * it could, with the causes in reason (every cause named, "; "-separated). The direct
 * evidence decides -- the verdict with and without the client's own delay in each request,
 * which a busy or starved client cannot hide -- and CPU is a guard beside it. Edges in the
 * comment at the top. */
int kb_trust_judge(const struct kb_point_load *r, const struct kb_criteria *c, char *reason,
                   size_t reasonlen);

/* The controlled criteria alone on the point's figures (failures aside): 1 when delivery,
 * corrected p99 and the unanswered share all hold. */
int kb_verdict_held(const struct kb_point_load *r, const struct kb_criteria *c);

/* The two judgements the trust compares, on the figures alone (failures aside): *as_measured
 * and *less_client are 1 where the point held (controlled) as measured and without the
 * client's own delay. -1 when the load predates that delay (has_less_client 0), 0 else. */
int kb_trust_sides(const struct kb_point_load *r, const struct kb_criteria *c, int *as_measured,
                   int *less_client);

/* A calibration rung against the control server: 1 when it held, with why the client was
 * trusted in reason; 0 with every cause in reason. The trust above, the load's own failure
 * causes as a curve point has them, in-time delivery >= min_delivery and nothing unanswered
 * at the drain's end. */
int kb_trust_rung(const struct kb_point_load *r, const struct kb_criteria *c,
                  double min_delivery, char *reason, size_t reasonlen);

/* What the point's own figures give, the client's trust aside: controlled, uncontrolled or
 * failed, with the reason. */
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
