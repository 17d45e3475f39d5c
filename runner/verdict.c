/* verdict.c -- parsing the load generator's JSON and judging a point. */
#define _POSIX_C_SOURCE 200809L
#include "runner/verdict.h"

#include <math.h>
#include <stdio.h>
#include <string.h>

#include "fixtures/contract.h"

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

struct parser {
    json_t *root;
    char *err;
    size_t errlen;
    int failed;
};

static double num(struct parser *p, json_t *obj, const char *key, const char *where)
{
    json_t *v = obj ? json_object_get(obj, key) : NULL;
    if (!json_is_number(v)) {
        if (!p->failed)
            snprintf(p->err, p->errlen, "load JSON: %s%s is missing or not a number", where, key);
        p->failed = 1;
        return 0;
    }
    return json_number_value(v);
}

/* A figure of an empty histogram is null: NAN here, so no comparison ever passes it. */
static double fig(struct parser *p, json_t *obj, const char *key, const char *where)
{
    json_t *v = obj ? json_object_get(obj, key) : NULL;
    return json_is_null(v) ? NAN : num(p, obj, key, where);
}

static void latency(struct parser *p, const char *key, struct kb_latency *l)
{
    json_t *o = json_object_get(p->root, key);
    char where[64];
    snprintf(where, sizeof(where), "%s.", key);
    l->count = num(p, o, "count", where);
    l->min = fig(p, o, "min", where);
    l->mean = fig(p, o, "mean", where);
    l->p50 = fig(p, o, "p50", where);
    l->p90 = fig(p, o, "p90", where);
    l->p99 = fig(p, o, "p99", where);
    l->p999 = fig(p, o, "p999", where);
    l->max = fig(p, o, "max", where);
}

/* Fields a load JSON written before them lacks: absent reads as `dflt`. */
static double opt(json_t *o, const char *key, double dflt)
{
    json_t *v = json_object_get(o, key);
    return json_is_number(v) ? json_number_value(v) : dflt;
}

static void counters(struct parser *p, struct kb_point_load *r)
{
    json_t *e = json_object_get(p->root, "errors"), *m = json_object_get(p->root, "mismatches");
    r->errors_total = (long long)num(p, e, "total", "errors.");
    r->err_connect = (long long)num(p, e, "connect", "errors.");
    r->err_read = (long long)num(p, e, "read", "errors.");
    r->err_write = (long long)num(p, e, "write", "errors.");
    r->err_timeout = (long long)num(p, e, "timeout", "errors.");
    r->err_peer_close = (long long)num(p, e, "peer_close", "errors.");
    r->err_malformed = (long long)num(p, e, "malformed", "errors.");
    r->mismatches = (long long)num(p, m, "total", "mismatches.");
    r->mm_status = (long long)num(p, m, "status", "mismatches.");
    r->mm_content_type = (long long)num(p, m, "content_type", "mismatches.");
    r->mm_body = (long long)num(p, m, "body", "mismatches.");
}

int kb_point_load_parse(json_t *load, struct kb_point_load *r, char *err, size_t errlen)
{
    struct parser p = { load, err, errlen, 0 };
    const char *fe;
    memset(r, 0, sizeof(*r));
    r->requested_rps = num(&p, load, "requested_rps", "");
    r->achieved_rps = num(&p, load, "achieved_rps", "");
    r->delivery = num(&p, load, "delivery", "");
    r->scheduled = (long long)num(&p, load, "scheduled", "");
    r->sent = (long long)num(&p, load, "sent", "");
    r->completed = (long long)num(&p, load, "completed", "");
    r->timeouts = (long long)num(&p, load, "timeouts", "");
    r->unfinished = (long long)num(&p, load, "unfinished_at_drain_end", "");
    r->non2xx = (long long)num(&p, load, "non2xx", "");
    r->client_cpu_seconds = num(&p, load, "client_cpu_seconds", "");
    r->client_cpu_fraction = num(&p, load, "client_cpu_fraction", "");
    r->client_cpus = (int)num(&p, load, "client_cpus", "");
    counters(&p, r);
    latency(&p, "corrected_us", &r->corrected);
    latency(&p, "uncorrected_us", &r->uncorrected);
    latency(&p, "lag_us", &r->lag);
    if (json_object_get(load, "rx_delay_us"))
        latency(&p, "rx_delay_us", &r->rx_delay);
    else
        r->rx_delay.p99 = -1;
    r->completed_in_interval = (long long)opt(load, "completed_in_interval", -1);
    r->bounded = (long long)opt(json_object_get(load, "corrected_us"), "bounded", 0);
    r->unsolicited = (long long)opt(load, "unsolicited", 0);
    r->keepalive_breaks = (long long)opt(load, "keepalive_breaks", 0);
    r->corrected_p99_is_bound = json_is_true(json_object_get(
        json_object_get(json_object_get(load, "corrected_us"), "is_bound"), "p99"));
    r->threads = (int)opt(load, "threads", 0);
    r->threads_requested = (int)opt(load, "threads_requested", r->threads);
    fe = json_string_value(json_object_get(load, "first_error"));
    snprintf(r->first_error, sizeof(r->first_error), "%s", fe ? fe : "");
    return p.failed ? -1 : 0;
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
    else if (r->errors_total - r->unfinished > 0)
        snprintf(buf, len, "socket errors: %lld (connect %lld, read %lld, write %lld, timeout %lld, "
                 "peer_close %lld, malformed %lld)%s%s", r->errors_total - r->unfinished,
                 r->err_connect, r->err_read, r->err_write, r->err_timeout - r->unfinished,
                 r->err_peer_close, r->err_malformed, r->first_error[0] ? "; first: " : "",
                 r->first_error);
    else if (r->non2xx > 0)
        snprintf(buf, len, "non-2xx responses: %lld", r->non2xx);
    else if (r->mismatches > 0)
        snprintf(buf, len, "mismatched responses: %lld (status %lld, content_type %lld, body %lld)",
                 r->mismatches, r->mm_status, r->mm_content_type, r->mm_body);
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
 * broken connection, so they do not fail the point; but their latency is at least the drain,
 * far past the p99 criterion, and the histogram never saw them. More than 1 % of them means
 * the true p99 is past the criterion whatever the histogram of answered requests says. */
static int unanswered_past_p99(const struct kb_point_load *r)
{
    return r->scheduled > 0 && (double)r->unfinished > 0.01 * (double)r->scheduled;
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

int kb_trust_judge(const struct kb_point_load *r, const struct kb_criteria *c, char *reason,
                   size_t reasonlen)
{
    size_t n = 0;
    reason[0] = '\0';
    if (r->lag.p99 > (double)c->client_lag_p99_max_us)
        cause(reason, reasonlen, &n, "client send lag p99 %.0f us > %.0f us", r->lag.p99,
              (double)c->client_lag_p99_max_us);
    if (c->client_rx_delay_p99_max_us > 0 && r->rx_delay.p99 > (double)c->client_rx_delay_p99_max_us)
        cause(reason, reasonlen, &n, "client rx delay p99 %.0f us > %.0f us", r->rx_delay.p99,
              (double)c->client_rx_delay_p99_max_us);
    if (r->client_cpu_fraction > c->client_cpu_max_fraction)
        cause(reason, reasonlen, &n, "client CPU %.0f %% > %.0f %% of what it was given",
              100 * r->client_cpu_fraction, 100 * c->client_cpu_max_fraction);
    if (n == 0)
        snprintf(reason, reasonlen, "client send lag p99 %.0f us, rx delay p99 %.0f us, CPU %.0f %%",
                 r->lag.p99, r->rx_delay.p99, 100 * r->client_cpu_fraction);
    return n == 0;
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
    if (r->delivery >= c->min_delivery && r->corrected.p99 < (double)c->max_p99_us &&
        !unanswered_past_p99(r))
        return KB_CONTROLLED;
    return KB_UNCONTROLLED;
}
