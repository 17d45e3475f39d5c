/* verdict.h -- judges one point from its evidence: controlled, uncontrolled, failed (with
 * the reason) or client-limited, by the contract's criteria (docs/protocol.md, "Point verdicts").
 *
 * Pure: the load generator's JSON is parsed into struct kb_point_load (jansson value in,
 * no files), the runner adds what it saw (fixture exit, identity, pre/postflight), and
 * kb_verdict_judge() decides. Failure reasons are checked first, then the client's trust,
 * then the controlled criteria. */
#ifndef KB_VERDICT_H
#define KB_VERDICT_H

#include <jansson.h>
#include <stddef.h>

enum kb_verdict {
    KB_CONTROLLED,
    KB_UNCONTROLLED,
    KB_FAILED,
    KB_CLIENT_LIMITED,
};

struct kb_latency {
    double count, min, mean, p50, p90, p99, p999, max;   /* microseconds; NAN when count is 0 */
};

/* One point's load.json as parsed (loadgen.h's struct kb_load_result is the in-process
 * result before it is written out; this is what the runner reads back). */
struct kb_point_load {
    double requested_rps, achieved_rps, delivery;
    long long scheduled, sent, completed, timeouts;
    long long unfinished;      /* of err_timeout: queued or in flight when the drain ended */
    long long errors_total, err_connect, err_read, err_write, err_timeout, err_peer_close,
        err_malformed;
    long long non2xx, mismatches, mm_status, mm_content_type, mm_body;
    double client_cpu_seconds, client_cpu_fraction;
    int client_cpus;
    long long completed_in_interval;   /* -1 when the JSON predates it */
    long long unsolicited, keepalive_breaks;   /* protocol breaches (0 when absent) */
    long long bounded;         /* requests in corrected at a lower bound (0 when absent) */
    int corrected_p99_is_bound;   /* the p99 is only a lower bound */
    struct kb_latency corrected, uncorrected, lag;
    struct kb_latency rx_delay;   /* p99 < 0 when the JSON predates it */
    int threads, threads_requested;
    char first_error[256];
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

/* The criteria of a loaded contract (fixtures/contract.h). */
struct kb_contract;
struct kb_criteria kb_criteria_of(const struct kb_contract *c);

/* 0, or -1 with err naming the missing/mistyped field. */
int kb_point_load_parse(json_t *load, struct kb_point_load *out, char *err, size_t errlen);

/* The client's trust: 1 when the client kept up, 0 when it was the limit, with the causes
 * in reason. The direct evidence decides first -- send lag and rx delay, the client's own
 * lateness, which a busy or starved client cannot hide -- and CPU is a guard beside them.
 * A figure over its bound (strictly) makes the client the limit. The one judgement of
 * trust, used by the curve, the soak and calibrate alike. */
int kb_trust_judge(const struct kb_point_load *r, const struct kb_criteria *c, char *reason,
                   size_t reasonlen);

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
