/* verdict.c -- judging a point, and the client's trust for a point and a calibration rung
 * (see verdict.h for the edges). */
#define _POSIX_C_SOURCE 200809L
#include "runner/run/verdict.h"

#include <stdio.h>
#include <string.h>

#include "contract/contract.h"

static const char *const names[] = { "controlled", "uncontrolled", "failed", "client-limited" };

const char *kb_verdict_name(enum kb_verdict v)
{
    return (unsigned)v < 4 ? names[v] : "?";
}

int kb_verdict_from_name(const char *name)
{
    for (int i = 0; i < 4; i++)
        if (name && !strcmp(name, names[i]))
            return i;
    return -1;
}

/* The first failure cause, or NULL: the protocol's list, in the order a reader would want
 * to hear about them (a dead fixture explains the socket errors it caused). */
static const char *failure(const struct kb_point_load *r, const struct kb_point_obs *o,
                           char *buf, size_t len)
{
    if (o->preflight_failed)
        snprintf(buf, len, "preflight failed: %s", o->preflight_reason);
    else if (o->fixture_exited)
        snprintf(buf, len, "process exited (%s)", o->exit_reason);
    else if (o->identity_changed)
        snprintf(buf, len, "changed fixture identity");
    else if (!o->have_load)
        snprintf(buf, len, "missing load evidence: %s", o->load_problem);
    else if (kb_point_load_socket_errors(r) > 0)
        snprintf(buf, len, "socket errors: %lld (connect %lld, read %lld, write %lld, timeout %lld, "
                 "peer_close %lld, malformed %lld)%s%s", kb_point_load_socket_errors(r),
                 r->err_connect, r->err_read, r->err_write, r->err_timeout - r->unfinished,
                 r->err_peer_close, r->err_malformed, r->first_error[0] ? "; first: " : "",
                 r->first_error);
    else if (r->non2xx > 0)
        snprintf(buf, len, "non-2xx responses: %lld", r->non2xx);
    else if (r->mismatches > 0)
        snprintf(buf, len, "mismatched responses: %lld (status %lld, content_type %lld, body %lld, "
                 "header %lld)", r->mismatches, r->mm_status, r->mm_content_type, r->mm_body,
                 r->mm_header);
    else if (r->unsolicited > 0)
        snprintf(buf, len, "unsolicited bytes from the server %lld times (more than one response "
                 "to a request, or bytes with none in flight)", r->unsolicited);
    else if (r->keepalive_breaks > 0)
        snprintf(buf, len, "keep-alive broken %lld times (Connection: close, a close-delimited "
                 "body, or an idle connection closed): the contract requires persistent "
                 "connections", r->keepalive_breaks);
    else if (o->postflight_failed)
        snprintf(buf, len, "postflight failed: %s", o->postflight_reason);
    else
        return NULL;
    return buf;
}

/* Requests still unanswered when the drain ended are an overloaded server's queue, not a
 * broken connection, so they do not fail the point. They enter the corrected histogram at a
 * lower bound (the wait they had reached, at least the drain: loadgen.c). When more than the
 * p99's tail (1 - 0.99 of the requests) are such bounds, the p99 itself is only a lower
 * bound, so "p99 below the criterion" cannot be shown for any max_p99_us. That is why this
 * is not a contract criterion: the share is the percentile's own, not a tolerance, and a
 * re-judging with another max_p99_us applies it unchanged. */
#define P99_TAIL 0.01
static int unanswered_past_p99(const struct kb_point_load *r)
{
    return r->scheduled > 0 && (double)r->unfinished > P99_TAIL * (double)r->scheduled;
}

struct kb_criteria kb_criteria_of(const struct kb_contract *c)
{
    return (struct kb_criteria){ .min_delivery = c->min_delivery, .max_p99_us = c->max_p99_us,
                                 .client_cpu_max_fraction = c->client_cpu_max_fraction,
                                 .client_lag_p99_max_us = c->client_lag_p99_max_us,
                                 .client_rx_delay_p99_max_us = c->client_rx_delay_p99_max_us };
}

/* Appends "; "-separated causes into reason. */
static void cause(char *reason, size_t len, size_t *n, const char *fmt, double a, double b)
{
    if (*n >= len)
        return;
    *n += (size_t)snprintf(reason + *n, len - *n, "%s", *n ? "; " : "");
    if (*n < len)
        *n += (size_t)snprintf(reason + *n, len - *n, fmt, a, b);
}

/* A figure past its bound: the bound set (> 0) and the figure strictly above it. NAN never
 * is (an empty histogram is no evidence), nor is a figure < 0 (absent from older JSON). */
static int over(double figure, double bound)
{
    return bound > 0 && figure > bound;
}

static int held(const struct kb_point_load *r, const struct kb_criteria *c)
{
    return r->delivery >= c->min_delivery && r->corrected.p99 < (double)c->max_p99_us &&
           !unanswered_past_p99(r);
}

/* The same point as a punctual client would have measured it at most: every request's
 * latency and completion less the client's own delay in it (loadjson.h). */
static struct kb_point_load less_client(const struct kb_point_load *r)
{
    struct kb_point_load b = *r;
    b.corrected = r->less_client;
    b.corrected_p99_is_bound = r->less_client_p99_is_bound;
    b.delivery = r->delivery_less_client;
    return b;
}

static void figures(char *buf, size_t len, const struct kb_point_load *r, const char *verdict)
{
    snprintf(buf, len, "%s (p99 %s%.2f ms, delivery %.1f %%)", verdict,
             r->corrected_p99_is_bound ? ">= " : "", r->corrected.p99 / 1000.0,
             100 * r->delivery);
}

/* Evidence written before the client's own delay was kept: the lateness bounds decide. */
static void trust_by_lateness(const struct kb_point_load *r, const struct kb_criteria *c,
                              char *reason, size_t len, size_t *n)
{
    if (over(r->lag.p99, (double)c->client_lag_p99_max_us))
        cause(reason, len, n, "client send lag p99 %.0f us > %.0f us", r->lag.p99,
              (double)c->client_lag_p99_max_us);
    if (over(r->rx_delay.p99, (double)c->client_rx_delay_p99_max_us))
        cause(reason, len, n, "client rx delay p99 %.0f us > %.0f us", r->rx_delay.p99,
              (double)c->client_rx_delay_p99_max_us);
}

/* Whether the client's own delay could have decided the verdict: judged on the point as
 * measured and again with that delay taken out; they must agree. */
static void trust_by_could_decide(const struct kb_point_load *r, const struct kb_criteria *c,
                                  char *reason, size_t len, size_t *n)
{
    struct kb_point_load b = less_client(r);
    int a_held = held(r, c), b_held = held(&b, c);
    char as[160], bs[160];
    if (a_held != b_held) {
        figures(as, sizeof(as), r, a_held ? "controlled" : "uncontrolled");
        figures(bs, sizeof(bs), &b, b_held ? "controlled" : "uncontrolled");
        if (*n < len)
            *n += (size_t)snprintf(reason + *n, len - *n, "%sthe client's own delay (p99 %.2f "
                                   "ms, max %.2f ms) decides the verdict: as measured %s, "
                                   "without it %s", *n ? "; " : "", r->client_delay.p99 / 1000.0,
                                   r->client_delay.max / 1000.0, as, bs);
    }
    if (r->client_dropped > 0 || r->in_flight_at_end > 0)
        cause(reason, len, n, "the client lost %.0f scheduled request(s) (%.0f unaccounted)",
              (double)r->client_dropped, (double)r->in_flight_at_end);
    /* a request never sent, or never read, because the client was not running is its own
     * delay in full: the verdict without it is unknowable, so it could have decided it */
    if (r->unfinished_client > 0)
        cause(reason, len, n, "the client was not running when the drain ended (%.0f ms late): "
              "%.0f request(s) it left unanswered are its own", r->client_late_at_end_us / 1000.0,
              (double)r->unfinished_client);
}

int kb_verdict_held(const struct kb_point_load *r, const struct kb_criteria *c)
{
    return held(r, c);
}

int kb_trust_sides(const struct kb_point_load *r, const struct kb_criteria *c, int *as_measured,
                   int *less)
{
    struct kb_point_load b = less_client(r);
    if (!r->has_less_client)
        return -1;
    *as_measured = held(r, c);
    *less = held(&b, c);
    return 0;
}

int kb_trust_judge(const struct kb_point_load *r, const struct kb_criteria *c, char *reason,
                   size_t reasonlen)
{
    size_t n = 0;
    reason[0] = '\0';
    if (r->has_less_client)
        trust_by_could_decide(r, c, reason, reasonlen, &n);
    else
        trust_by_lateness(r, c, reason, reasonlen, &n);
    if (over(r->client_cpu_fraction, c->client_cpu_max_fraction))
        cause(reason, reasonlen, &n, "client CPU %.0f %% > %.0f %% of what it was given",
              100 * r->client_cpu_fraction, 100 * c->client_cpu_max_fraction);
    if (n == 0 && r->has_less_client)
        snprintf(reason, reasonlen, "the client's own delay (p99 %.2f ms, max %.2f ms) cannot "
                 "change the verdict: %s either way; client CPU %.0f %%",
                 r->client_delay.p99 / 1000.0, r->client_delay.max / 1000.0,
                 held(r, c) ? "controlled" : "uncontrolled", 100 * r->client_cpu_fraction);
    else if (n == 0)
        snprintf(reason, reasonlen, "client send lag p99 %.0f us, rx delay p99 %.0f us, CPU %.0f %%",
                 r->lag.p99, r->rx_delay.p99, 100 * r->client_cpu_fraction);
    return n == 0;
}

/* One cause of a missed rung, "; "-separated; the text is copied whole or cut at len. */
static void rung_cause(char *reason, size_t len, size_t *n, const char *text)
{
    if (*n < len)
        *n += (size_t)snprintf(reason + *n, len - *n, "%s%s", *n ? "; " : "", text);
}

int kb_trust_rung(const struct kb_point_load *r, const struct kb_criteria *c,
                  double min_delivery, char *reason, size_t reasonlen)
{
    static const struct kb_point_obs seen_nothing_wrong = { .have_load = 1 };
    char buf[512], trust[512];
    size_t n = 0;
    double in_time = kb_point_load_in_time(r);
    int trusted = kb_trust_judge(r, c, trust, sizeof(trust));

    reason[0] = '\0';
    if (!trusted)
        rung_cause(reason, reasonlen, &n, trust);
    if (failure(r, &seen_nothing_wrong, buf, sizeof(buf)))
        rung_cause(reason, reasonlen, &n, buf);
    if (r->has_less_client && !(r->corrected.p99 < (double)c->max_p99_us)) {
        snprintf(buf, sizeof(buf), "corrected p99 %.2f ms: the harness itself is past the "
                 "criterion here", r->corrected.p99 / 1000.0);
        rung_cause(reason, reasonlen, &n, buf);
    }
    if (!(in_time >= min_delivery)) {
        snprintf(buf, sizeof(buf), "delivery in time %.4f < %.3f", in_time, min_delivery);
        rung_cause(reason, reasonlen, &n, buf);
    }
    if (r->unfinished > 0) {
        snprintf(buf, sizeof(buf), "%lld unanswered at drain end", r->unfinished);
        rung_cause(reason, reasonlen, &n, buf);
    }
    if (n > 0)
        return 0;
    /* Held: why the client was trusted is the evidence the margin rests on. */
    rung_cause(reason, reasonlen, &n, trust);
    return 1;
}

enum kb_verdict kb_verdict_judge(const struct kb_point_load *r, const struct kb_point_obs *o,
                                 const struct kb_criteria *c, char *reason, size_t reasonlen)
{
    enum kb_verdict v = kb_verdict_server(r, o, c, reason, reasonlen);
    char why[256];
    if (v != KB_FAILED && !kb_trust_judge(r, c, why, sizeof(why))) {
        snprintf(reason, reasonlen, "%s", why);
        return KB_CLIENT_LIMITED;
    }
    return v;
}

enum kb_verdict kb_verdict_server(const struct kb_point_load *r, const struct kb_point_obs *o,
                                  const struct kb_criteria *c, char *reason, size_t reasonlen)
{
    if (failure(r, o, reason, reasonlen))
        return KB_FAILED;
    snprintf(reason, reasonlen, "delivery %.1f %% (>= %.0f %%?), p99 %s%.2f ms (< %.0f ms?), "
             "unanswered at drain end %lld (<= 1 %%?)", 100 * r->delivery, 100 * c->min_delivery,
             r->corrected_p99_is_bound ? ">= " : "", r->corrected.p99 / 1000.0,
             c->max_p99_us / 1000.0, r->unfinished);
    return held(r, c) ? KB_CONTROLLED : KB_UNCONTROLLED;
}
