/* qualjudge.c -- see qualjudge.h. The qualification's rules in one place, so the command only
 * gathers evidence and the unit test can try them on synthetic series. */
#define _POSIX_C_SOURCE 200809L
#include "runner/run/qualjudge.h"

#include <stdarg.h>
#include <stdio.h>
#include <string.h>

int kb_qual_growth(const double *t, const double *y, size_t n, struct kb_growth *out)
{
    memset(out, 0, sizeof(*out));
    out->n = n;
    if (n < 2)
        return -1;
    out->first = out->min = out->max = y[0];
    out->last = y[n - 1];
    for (size_t i = 1; i < n; i++) {
        out->min = y[i] < out->min ? y[i] : out->min;
        out->max = y[i] > out->max ? y[i] : out->max;
        if (t[i] - t[i - 1] > out->every_s)
            out->every_s = t[i] - t[i - 1];
    }
    out->rise = out->max - out->first;
    out->window_s = t[n - 1] - t[0];
    return 0;
}

/* Append to buf at *off, "; "-separated, never past len. */
static void add(char *buf, size_t len, size_t *off, const char *fmt, ...)
{
    va_list ap;
    int n;
    if (*off >= len)
        return;
    if (*off) {
        n = snprintf(buf + *off, len - *off, "; ");
        *off += n > 0 ? (size_t)n : 0;
        if (*off >= len)
            return;
    }
    va_start(ap, fmt);
    n = vsnprintf(buf + *off, len - *off, fmt, ap);
    va_end(ap);
    *off += n > 0 ? (size_t)n : 0;
}

int kb_qual_gauges_zero(json_t *stats, char *const *gauges, size_t ngauges, char *why,
                        size_t whylen)
{
    size_t off = 0;
    why[0] = '\0';
    for (size_t i = 0; i < ngauges; i++) {
        json_t *v = stats ? json_object_get(stats, gauges[i]) : NULL;
        if (!json_is_integer(v))
            add(why, whylen, &off, "%s=missing", gauges[i]);
        else if (json_integer_value(v) != 0)
            add(why, whylen, &off, "%s=%lld", gauges[i], (long long)json_integer_value(v));
    }
    return off == 0;
}

static long int_field(json_t *o, const char *k)
{
    json_t *v = json_object_get(o, k);
    return json_is_integer(v) ? (long)json_integer_value(v) : -1;
}

void kb_qual_stats_summary(const struct kb_stats_sample *s, size_t n, double from_s,
                           double to_s, char *const *gauges, size_t ngauges,
                           struct kb_stats_summary *out)
{
    double prev = from_s;
    memset(out, 0, sizeof(*out));
    out->samples = n;
    out->suspended_now_max = out->suspended_max_server = -1;
    out->measured_s = to_s > from_s ? to_s - from_s : 0;
    for (size_t i = 0; i < n; i++) {
        if (!s[i].ok)
            continue;
        out->ok++;
        if (int_field(s[i].stats, "suspended_now") > out->suspended_now_max)
            out->suspended_now_max = int_field(s[i].stats, "suspended_now");
        if (int_field(s[i].stats, "suspended_max") >= 0)
            out->suspended_max_server = int_field(s[i].stats, "suspended_max");
        if (s[i].t_s < from_s || s[i].t_s > to_s)
            continue;
        out->ok_measured++;
        if (s[i].t_s - prev > out->max_gap_s)
            out->max_gap_s = s[i].t_s - prev;
        prev = s[i].t_s;
    }
    if (to_s - prev > out->max_gap_s)
        out->max_gap_s = to_s - prev;
    out->per_s = out->measured_s > 0 ? (double)out->ok_measured / out->measured_s : 0;
    out->final_ok = n > 0 && s[n - 1].ok;
    if (!out->final_ok)
        snprintf(out->final_nonzero, sizeof(out->final_nonzero), "%s",
                 n ? "the last /stats read failed" : "no /stats sample");
    else
        out->final_zero = kb_qual_gauges_zero(s[n - 1].stats, gauges, ngauges,
                                              out->final_nonzero, sizeof(out->final_nonzero));
}

/* The resource and /stats criteria, every failure named into reason at *off. */
static void judge_samples(const struct kb_qual_obs *o, const struct kb_qual_criteria *c,
                          char *reason, size_t len, size_t *off)
{
    if (!o->have_rss || !o->have_fds)
        add(reason, len, off, "fewer than 2 RSS/descriptor samples: growth cannot be judged");
    if (o->have_rss && o->rss.rise > 0)
        add(reason, len, off, "RSS grew %.0f KiB above its first sample (%.0f KiB)",
            o->rss.rise / 1024, o->rss.first / 1024);
    if (o->have_fds && o->fds.rise > 0)
        add(reason, len, off, "descriptors grew by %.0f above their first sample (%.0f)",
            o->fds.rise, o->fds.first);
    if (o->stats.per_s < c->min_stats_per_s)
        add(reason, len, off, "/stats read %.1f times a second during the load, under %g",
            o->stats.per_s, c->min_stats_per_s);
    if (!o->stats.final_ok || !o->stats.final_zero)
        add(reason, len, off, "final /stats sample not at zero: %s", o->stats.final_nonzero);
}

enum kb_qual_verdict kb_qual_judge(const struct kb_point_load *r, const struct kb_qual_obs *o,
                                   const struct kb_qual_criteria *c, char *reason,
                                   size_t reasonlen)
{
    char why[512];
    size_t off = 0;
    enum kb_verdict pv = kb_verdict_judge(r, &o->point, &c->point, why, sizeof(why));
    reason[0] = '\0';
    if (pv == KB_FAILED || pv == KB_UNCONTROLLED)
        add(reason, reasonlen, &off, "%s: %s", kb_verdict_name(pv), why);
    judge_samples(o, c, reason, reasonlen, &off);
    if (off)
        return KB_QUAL_FAIL;
    if (pv == KB_CLIENT_LIMITED) {
        snprintf(reason, reasonlen, "client-limited: %s", why);
        return KB_QUAL_CLIENT_LIMITED;
    }
    snprintf(reason, reasonlen, "%s; RSS and descriptors flat over %zu samples; /stats %.1f/s, "
             "final gauges at zero", why, o->rss.n, o->stats.per_s);
    return KB_QUAL_PASS;
}

const char *kb_qual_verdict_name(enum kb_qual_verdict v)
{
    switch (v) {
    case KB_QUAL_PASS: return "pass";
    case KB_QUAL_FAIL: return "fail";
    case KB_QUAL_CLIENT_LIMITED: return "client-limited";
    }
    return "?";
}
