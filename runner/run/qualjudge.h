/* qualjudge.h -- the db qualification's judgement (docs/protocol.md, "The db qualification"):
 * seed 001's readiness qualification's criteria as the paper states them (delivery, bounded
 * latency, zero growth, exact responses) and its continuation run's evidence made criteria
 * (/stats read densely, gauges back at zero), applied to what `kneebench qualify` sampled.
 *
 * Owns: kb_qual_growth (the rise of a sampled series above its first sample: "zero growth"
 * means none at the sampling resolution), kb_qual_stats_summary (the /stats series read:
 * how dense it was while the load was measured, the most handlers seen suspended at once,
 * and whether its final sample has every named gauge at zero), kb_qual_judge (the verdict).
 * Pure: no I/O, nothing printed; reasons go to the caller's buffer. */
#ifndef KB_QUALIFY_H
#define KB_QUALIFY_H

#include "runner/run/verdict.h"

#include <jansson.h>
#include <stddef.h>

/* A sampled series (server RSS, descriptors) judged for growth. */
struct kb_growth {
    size_t n;
    double first, last, min, max;
    double rise;               /* max - first: how far any sample rose above the first */
    double window_s;           /* t[n-1] - t[0] */
    double every_s;            /* the largest spacing between two samples: the resolution */
};

/* Summarise y over t. 0, or -1 when n < 2 (one sample shows no growth or its absence). */
int kb_qual_growth(const double *t, const double *y, size_t n, struct kb_growth *out);

/* One /stats read as the sampler keeps it. */
struct kb_stats_sample {
    double t_s;                /* seconds after the load started, when the read began */
    int ok;                    /* a 200 whose body is a JSON object */
    json_t *stats;             /* that object (NULL when !ok); the sampler owns it */
};

struct kb_stats_summary {
    size_t samples, ok;        /* every read, and the successful ones */
    size_t ok_measured;        /* successful reads inside the measured interval */
    double measured_s;         /* that interval's length */
    double per_s;              /* ok_measured / measured_s */
    double max_gap_s;          /* the longest time between successful reads in it */
    long suspended_now_max;    /* the most handlers a sample saw suspended at once (-1: none) */
    long suspended_max_server; /* the server's own high-water mark, in its last good sample */
    int final_ok;              /* the series' last sample was read */
    int final_zero;            /* ... and every named gauge in it is the integer 0 */
    char final_nonzero[256];   /* those that were not ("pool_busy=3 queued=missing") */
};

/* The series s[0..n) read; the measured interval is [from_s, to_s] on the samples' clock;
 * gauges are the /stats fields that must be 0 at the end. */
void kb_qual_stats_summary(const struct kb_stats_sample *s, size_t n, double from_s,
                           double to_s, char *const *gauges, size_t ngauges,
                           struct kb_stats_summary *out);

/* 1 when every named gauge is the integer 0 in stats; else 0, naming the others in why. */
int kb_qual_gauges_zero(json_t *stats, char *const *gauges, size_t ngauges, char *why,
                        size_t whylen);

struct kb_qual_criteria {
    struct kb_criteria point;  /* delivery, corrected p99 bound, client trust (the contract's) */
    double min_stats_per_s;    /* successful /stats reads per second of measured load */
};

enum kb_qual_verdict {
    KB_QUAL_PASS,
    KB_QUAL_FAIL,
    KB_QUAL_CLIENT_LIMITED,    /* the client could not be trusted: kept, not a pass */
};

/* What the run produced beside the load figures. */
struct kb_qual_obs {
    struct kb_point_obs point; /* load evidence, fixture exit, pre/postflight, identity */
    int have_rss, have_fds;    /* the growth summaries exist (>= 2 samples) */
    struct kb_growth rss, fds;
    struct kb_stats_summary stats;
};

/* Failed when the point itself failed (errors, non-2xx, a response unlike the contract, the
 * fixture's exit...) or was not controlled (delivery below the floor, corrected p99 at or
 * over the bound), when RSS or descriptors rose above their first sample, when either series
 * has under 2 samples, when /stats was read less often than min_stats_per_s, or when the
 * final /stats sample is missing or has a gauge not at zero. Every failing criterion is named
 * in reason ("; "-separated). Client-limited when only the client's trust is missing. */
enum kb_qual_verdict kb_qual_judge(const struct kb_point_load *r, const struct kb_qual_obs *o,
                                   const struct kb_qual_criteria *c, char *reason,
                                   size_t reasonlen);

const char *kb_qual_verdict_name(enum kb_qual_verdict v);

#endif
