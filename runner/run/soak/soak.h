/* soak.h -- the one-hour qualification's judgement (docs/protocol.md, "The one-hour
 * qualification" and "The soak's growth tolerance"): a least-squares slope over sampled
 * resources, the growth rule applied to it, and the verdict of one phase.
 *
 * Owns: kb_soak_fit (ordinary least squares of y on t), kb_soak_growth (does a fitted series
 * grow beyond the stated threshold?), kb_soak_judge (delivery, errors, process health via
 * the curve's kb_verdict_judge, then resource growth, for the db phase the server's
 * counters back at rest, and last the decay gate over the phase's windows, runner/run/
 * soakwin.h). Pure: no I/O, nothing printed; reasons go to the caller's buffer. */
#ifndef KB_SOAK_H
#define KB_SOAK_H

#include "runner/util/paths.h"
#include "runner/run/soak/soakwin.h"
#include "runner/run/verdict.h"

#include <stddef.h>

/* A fitted line y = intercept + slope * t over n samples taken across window_s seconds. */
struct kb_slope {
    size_t n;
    double slope_per_s;
    double intercept;
    double mean, first, last, min, max;
    double window_s;           /* t[n-1] - t[0] */
    double per_hour;           /* slope_per_s * 3600: the growth extrapolated to one hour */
    double rise;               /* slope_per_s * window_s: the fitted growth over the window */
};

/* Fit y on t. 0, or -1 when n < 2 or every t is the same (no slope exists). */
int kb_soak_fit(const double *t, const double *y, size_t n, struct kb_slope *out);

/* A series grows (fails) when BOTH its extrapolated growth per hour exceeds pct_per_hour % of
 * its mean AND its fitted rise over the sampled window exceeds floor (in the series' unit).
 * The floor is the resolution below which a trend is not told apart from sampling noise
 * (a page of RSS, one descriptor); the percentage is the paper's "flat" made a number. */
struct kb_growth_rule {
    double pct_per_hour;
    double floor;
};

/* 1 when the series grows beyond the rule (reason says by how much), 0 when flat. */
int kb_soak_growth(const struct kb_slope *s, const struct kb_growth_rule *r, const char *what,
                   char *reason, size_t reasonlen);

struct kb_soak_criteria {
    double min_delivery;           /* near exact: achieved/requested >= this */
    double client_cpu_max_fraction;
    long client_lag_p99_max_us;
    long client_rx_delay_p99_max_us;
    size_t min_samples;            /* at least this many resource samples (>= 2) */
    struct kb_growth_rule rss, fds;
    struct kb_decay_rule decay;    /* the windows' tolerances */
};

enum kb_soak_verdict {
    KB_SOAK_PASS,
    KB_SOAK_FAIL,
    KB_SOAK_CLIENT_LIMITED,        /* the client could not be trusted: kept, not a pass */
};

/* What one phase produced beside the load figures. */
struct kb_soak_obs {
    struct kb_point_obs point;     /* load evidence, fixture exit, pre/postflight, identity */
    int have_rss, have_fds;        /* the fits exist (enough samples over a window) */
    struct kb_slope rss, fds;
    int stats_checked;             /* the db phase: /stats read after the load */
    int stats_at_rest;             /* gauges back to zero (pool all idle) */
    char stats_reason[256];        /* what was not at rest, or why /stats was unreadable */
    const struct kb_soakwin *windows;   /* the phase's windows, or NULL: windows_err says why */
    char windows_err[256];
};

/* One phase of the plan: a route at a rate, its evidence in dir (<run>/phases/<NN>-<route>). */
struct kb_soak_planned {
    char route[64];
    long rate;
    char dir[KB_PATH_MAX];
};

enum kb_soak_verdict kb_soak_judge(const struct kb_point_load *r, const struct kb_soak_obs *o,
                                   const struct kb_soak_criteria *c, char *reason,
                                   size_t reasonlen);

const char *kb_soak_verdict_name(enum kb_soak_verdict v);

#endif
