/* verdict.c -- parsing the load generator's JSON and judging a point. */
#define _POSIX_C_SOURCE 200809L
#include "runner/verdict.h"

#include <stdio.h>
#include <string.h>

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

static void latency(struct parser *p, const char *key, struct kb_latency *l)
{
    json_t *o = json_object_get(p->root, key);
    char where[64];
    snprintf(where, sizeof(where), "%s.", key);
    l->count = num(p, o, "count", where);
    l->min = num(p, o, "min", where);
    l->mean = num(p, o, "mean", where);
    l->p50 = num(p, o, "p50", where);
    l->p90 = num(p, o, "p90", where);
    l->p99 = num(p, o, "p99", where);
    l->p999 = num(p, o, "p999", where);
    l->max = num(p, o, "max", where);
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

enum kb_verdict kb_verdict_judge(const struct kb_point_load *r, const struct kb_point_obs *o,
                                 const struct kb_criteria *c, char *reason, size_t reasonlen)
{
    if (failure(r, o, reason, reasonlen))
        return KB_FAILED;
    if (r->client_cpu_fraction > c->client_cpu_max_fraction) {
        snprintf(reason, reasonlen, "client CPU %.0f %% of its %d CPU(s) > %.0f %%",
                 100 * r->client_cpu_fraction, r->client_cpus, 100 * c->client_cpu_max_fraction);
        return KB_CLIENT_LIMITED;
    }
    if (r->lag.p99 > (double)c->client_lag_p99_max_us) {
        snprintf(reason, reasonlen, "client send lag p99 %.0f us > %ld us", r->lag.p99,
                 c->client_lag_p99_max_us);
        return KB_CLIENT_LIMITED;
    }
    snprintf(reason, reasonlen, "delivery %.1f %% (>= %.0f %%?), p99 %.2f ms (< %.0f ms?), "
             "unanswered at drain end %lld (<= 1 %%?)", 100 * r->delivery, 100 * c->min_delivery,
             r->corrected.p99 / 1000.0, c->max_p99_us / 1000.0, r->unfinished);
    if (r->delivery >= c->min_delivery && r->corrected.p99 < (double)c->max_p99_us &&
        !unanswered_past_p99(r))
        return KB_CONTROLLED;
    return KB_UNCONTROLLED;
}
