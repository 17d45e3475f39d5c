/* soak.c -- see soak.h. The qualification's verdict in one place, so the command only
 * gathers evidence and the unit test can try the rules on synthetic series. */
#define _POSIX_C_SOURCE 200809L
#include "runner/run/soak/soak.h"

#include <limits.h>
#include <math.h>
#include <stdio.h>
#include <string.h>

int kb_soak_fit(const double *t, const double *y, size_t n, struct kb_slope *out)
{
    double tm = 0, ym = 0, sxx = 0, sxy = 0;
    memset(out, 0, sizeof(*out));
    out->n = n;
    if (n < 2)
        return -1;
    out->min = out->max = y[0];
    for (size_t i = 0; i < n; i++) {
        tm += t[i];
        ym += y[i];
        out->min = y[i] < out->min ? y[i] : out->min;
        out->max = y[i] > out->max ? y[i] : out->max;
    }
    tm /= (double)n;
    ym /= (double)n;
    /* centred sums: no cancellation when t is a large monotonic clock */
    for (size_t i = 0; i < n; i++) {
        sxx += (t[i] - tm) * (t[i] - tm);
        sxy += (t[i] - tm) * (y[i] - ym);
    }
    out->mean = ym;
    out->first = y[0];
    out->last = y[n - 1];
    out->window_s = t[n - 1] - t[0];
    if (sxx <= 0)
        return -1;
    out->slope_per_s = sxy / sxx;
    out->intercept = ym - out->slope_per_s * tm;
    out->per_hour = out->slope_per_s * 3600.0;
    out->rise = out->slope_per_s * out->window_s;
    return 0;
}

int kb_soak_growth(const struct kb_slope *s, const struct kb_growth_rule *r, const char *what,
                   char *reason, size_t reasonlen)
{
    double limit = r->pct_per_hour / 100.0 * fabs(s->mean);
    int grows = s->per_hour > limit && s->rise > r->floor;
    snprintf(reason, reasonlen, "%s %s: fitted %+.4g/h over %zu samples in %.0f s (limit %.4g/h = "
             "%.3g %% of mean %.6g), rise %+.4g over the window (floor %.4g)", what,
             grows ? "grows" : "flat", s->per_hour, s->n, s->window_s, limit, r->pct_per_hour,
             s->mean, s->rise, r->floor);
    return grows;
}

/* Delivery, errors, process health and client trust: the curve's rules, with the soak's
 * delivery floor and no latency ceiling (the paper reports the phase's tail; it is not a
 * pass condition -- its db phase passed at an 802 ms p99). */
static enum kb_soak_verdict base_verdict(const struct kb_point_load *r,
                                         const struct kb_soak_obs *o,
                                         const struct kb_soak_criteria *c, char *reason,
                                         size_t reasonlen)
{
    struct kb_criteria crit = { .min_delivery = c->min_delivery, .max_p99_us = LONG_MAX,
                                .client_cpu_max_fraction = c->client_cpu_max_fraction,
                                .client_lag_p99_max_us = c->client_lag_p99_max_us,
                                .client_rx_delay_p99_max_us = c->client_rx_delay_p99_max_us };
    switch (kb_verdict_judge(r, &o->point, &crit, reason, reasonlen)) {
    case KB_FAILED:
        return KB_SOAK_FAIL;
    case KB_CLIENT_LIMITED:
        return KB_SOAK_CLIENT_LIMITED;
    case KB_UNCONTROLLED:
        snprintf(reason, reasonlen, "delivery %.3f %% < %.3f %%", 100 * r->delivery,
                 100 * c->min_delivery);
        return KB_SOAK_FAIL;
    case KB_CONTROLLED:
    default:
        return KB_SOAK_PASS;
    }
}

/* The decay gate: 1 when the phase's windows show throughput falling or the tail growing
 * beyond the rule, or cannot be read or judged though the phase is long enough for two;
 * why says so either way. A phase too short for two windows cannot show decay: noted, 0. */
static int decayed(const struct kb_soak_obs *o, const struct kb_soak_criteria *c, char *why,
                   size_t whylen)
{
    struct kb_decay d;
    int rc;
    if (!o->windows) {
        snprintf(why, whylen, "decay not judged: %s", o->windows_err);
        return 1;
    }
    rc = kb_soakwin_judge(o->windows, &c->decay, &d, why, whylen);
    return rc > 0 || (rc < 0 && o->windows->n >= 2);
}

enum kb_soak_verdict kb_soak_judge(const struct kb_point_load *r, const struct kb_soak_obs *o,
                                   const struct kb_soak_criteria *c, char *reason,
                                   size_t reasonlen)
{
    char rss[320], fds[320], why[512];
    size_t need = c->min_samples < 2 ? 2 : c->min_samples;
    enum kb_soak_verdict v = base_verdict(r, o, c, reason, reasonlen);
    if (v != KB_SOAK_PASS)
        return v;
    if (!o->have_rss || !o->have_fds || o->rss.n < need || o->fds.n < need) {
        snprintf(reason, reasonlen, "too few resource samples for a slope: %zu (need %zu)",
                 o->rss.n, need);
        return KB_SOAK_FAIL;
    }
    if (kb_soak_growth(&o->rss, &c->rss, "RSS bytes", rss, sizeof(rss))) {
        snprintf(reason, reasonlen, "%s", rss);
        return KB_SOAK_FAIL;
    }
    if (kb_soak_growth(&o->fds, &c->fds, "descriptors", fds, sizeof(fds))) {
        snprintf(reason, reasonlen, "%s", fds);
        return KB_SOAK_FAIL;
    }
    if (o->stats_checked && !o->stats_at_rest) {
        snprintf(reason, reasonlen, "server counters not at rest after the load: %s",
                 o->stats_reason);
        return KB_SOAK_FAIL;
    }
    if (decayed(o, c, why, sizeof(why))) {
        snprintf(reason, reasonlen, "%s", why);
        return KB_SOAK_FAIL;
    }
    snprintf(reason, reasonlen, "delivery %.3f %% (>= %.3f %%), no errors, process alive; "
             "RSS %+.4g B/h, descriptors %+.3g/h over %zu samples%s; %s", 100 * r->delivery,
             100 * c->min_delivery, o->rss.per_hour, o->fds.per_hour, o->rss.n,
             o->stats_checked ? "; /stats at rest" : "", why);
    return KB_SOAK_PASS;
}

const char *kb_soak_verdict_name(enum kb_soak_verdict v)
{
    switch (v) {
    case KB_SOAK_PASS: return "pass";
    case KB_SOAK_FAIL: return "fail";
    case KB_SOAK_CLIENT_LIMITED: return "client-limited";
    }
    return "unknown";
}
