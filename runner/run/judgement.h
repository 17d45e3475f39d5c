/* judgement.h -- one curve point's whole judgement, and its record in verdict.json.
 *
 * Owns how a point's verdict is composed: the server's verdict, the client's trust
 * (verdict.h) and the calibration's margin (enum kb_margin_use). kb_judgement_record() keeps
 * beside the verdict what the judgement read that load.json lacks, so `kneebench report`
 * can judge the point again from the run's files alone. */
#ifndef KB_JUDGEMENT_H
#define KB_JUDGEMENT_H

#include <jansson.h>

#include "runner/run/verdict.h"

struct kb_calibrate_result;      /* runner/run/calibrate.h */

/* How the calibration's margin enters a point's trust (judged_by's "margin"). The curve
 * uses CARRIED: only a point that missed can be the client's doing, since the client's own
 * delay only adds latency. GATES is how older evidence, which records only "calibrated",
 * was judged and is judged again. */
enum kb_margin_use {
    KB_MARGIN_UNUSED = 0,        /* the curve ran without a calibration */
    KB_MARGIN_GATES,             /* a requested rate the margin did not cover: client-limited */
    KB_MARGIN_CARRIED            /* an uncontrolled point that carried more than the margin
                                    covers: client-limited */
};

struct kb_judgement {
    enum kb_verdict verdict;     /* what the point is: failed, client-limited or the server's */
    enum kb_verdict server;      /* what its own figures give, the client's trust aside */
    int trusted;                 /* the client kept up, and the margin does not say it may not
                                    have (enum kb_margin_use) */
    int sides;                   /* 0: as_measured/less_client hold the two judgements the
                                    trust compared; -1: the load predates them */
    int as_measured, less_client;   /* held as measured / without the client's own delay */
    char reason[768];            /* the verdict's: the trust's when client-limited */
    char server_reason[768];
    char trust_reason[256];
};

/* cal: the run's calibration, or NULL; use: what its margin does (enum kb_margin_use);
 * rate: the point's requested rate. */
void kb_judge_point(const struct kb_point_load *r, const struct kb_point_obs *o,
                    const struct kb_criteria *c, const struct kb_calibrate_result *cal,
                    enum kb_margin_use use, double rate, struct kb_judgement *j);

/* Sets in verdict (a verdict.json object): verdict, reason, server_verdict, server_reason,
 * client_trust (ok, reason, rule, and with the rule "could-decide" the two judgements and
 * the client's share of the corrected p99 from r), and "judged_by": {criteria, calibrated,
 * margin ("gates" or "carried", with a calibration), observed}. */
void kb_judgement_record(json_t *verdict, const struct kb_judgement *j,
                         const struct kb_point_load *r, const struct kb_point_obs *o,
                         const struct kb_criteria *c, enum kb_margin_use margin);

/* verdict.json's judged_by back: 0, or -1 when it has none (evidence written before it),
 * leaving the outputs untouched. A field absent from it reads as 0 or ""; "calibrated"
 * without "margin" reads as KB_MARGIN_GATES. */
int kb_judgement_read(json_t *verdict, struct kb_point_obs *o, struct kb_criteria *c,
                      enum kb_margin_use *margin);

/* judged_by's margin use alone, by the same rule (KB_MARGIN_UNUSED without judged_by). */
enum kb_margin_use kb_judgement_margin(json_t *verdict);

#endif
