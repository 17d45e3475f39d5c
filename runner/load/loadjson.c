/* loadjson.c -- load.json into struct kb_point_load (see loadjson.h). */
#define _POSIX_C_SOURCE 200809L
#include "runner/load/loadjson.h"
#include "runner/util/evidence.h"
#include "runner/util/schema.h"

#include <errno.h>
#include <math.h>
#include <stdio.h>
#include <string.h>

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
    r->mm_header = (long long)opt(m, "header", 0);
}

/* The fields an older writer may lack, and those not judged. */
static void optional(json_t *load, struct kb_point_load *r)
{
    json_t *corrected = json_object_get(load, "corrected_us");
    const char *fe = json_string_value(json_object_get(load, "first_error"));
    r->completed_in_interval = (long long)opt(load, "completed_in_interval", -1);
    r->completed_in_window = (long long)opt(load, "completed_in_window", -1);
    r->interval_start_mono_s = opt(load, "interval_start_mono_s", NAN);
    r->interval_end_mono_s = opt(load, "interval_end_mono_s", NAN);
    r->bounded = (long long)opt(corrected, "bounded", 0);
    r->unsolicited = (long long)opt(load, "unsolicited", 0);
    r->keepalive_breaks = (long long)opt(load, "keepalive_breaks", 0);
    r->unfinished_client = (long long)opt(load, "unfinished_client", 0);
    r->client_late_at_end_us = opt(load, "client_late_at_drain_end_us", 0);
    r->corrected_p99_is_bound =
        json_is_true(json_object_get(json_object_get(corrected, "is_bound"), "p99"));
    r->threads = (int)opt(load, "threads", 0);
    r->threads_requested = (int)opt(load, "threads_requested", r->threads);
    snprintf(r->first_error, sizeof(r->first_error), "%s", fe ? fe : "");
}

/* The client's own delay, which a load.json written before it lacks: then has_less_client
 * stays 0 and its figures NAN; when it is there, every field of it is required. */
static void less_client(struct parser *p, struct kb_point_load *r)
{
    json_t *lc = json_object_get(p->root, "corrected_less_client_us");
    struct kb_latency none = { 0, NAN, NAN, NAN, NAN, NAN, NAN, NAN };
    r->client_delay = r->less_client = none;
    r->delivery_less_client = NAN;
    if (!lc)
        return;
    r->has_less_client = 1;
    latency(p, "client_delay_us", &r->client_delay);
    latency(p, "corrected_less_client_us", &r->less_client);
    r->less_client_p99_is_bound =
        json_is_true(json_object_get(json_object_get(lc, "is_bound"), "p99"));
    r->delivery_less_client = num(p, p->root, "delivery_less_client", "");
    r->client_dropped = (long long)num(p, p->root, "client_dropped", "");
    r->in_flight_at_end = (long long)num(p, p->root, "in_flight_at_end", "");
}

int kb_point_load_parse(json_t *load, struct kb_point_load *r, char *err, size_t errlen)
{
    struct parser p = { load, err, errlen, 0 };
    memset(r, 0, sizeof(*r));
    if (!json_is_object(load)) {
        snprintf(err, errlen, "load JSON: not an object");
        return -1;
    }
    if (kb_schema_version(load, "load JSON", KB_SCHEMA_EVIDENCE, err, errlen) < 0)
        return -1;
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
    optional(load, r);
    less_client(&p, r);
    return p.failed ? -1 : 0;
}

/* The document at path, or NULL with err naming path and why: it cannot be opened, or it
 * is not JSON (where jansson stopped). */
static json_t *load_file(const char *path, char *err, size_t errlen)
{
    json_error_t je;
    json_t *j = kb_evidence_load(path, &je);
    if (!j && je.line > 0)
        snprintf(err, errlen, "%s: not JSON: %s (line %d, column %d)", path, je.text, je.line,
                 je.column);
    else if (!j)
        snprintf(err, errlen, "%s: %s", path, je.text);
    return j;
}
int kb_point_load_read(const char *path, struct kb_point_load *out, json_t **raw, char *err,
                       size_t errlen)
{
    json_t *j = load_file(path, err, errlen);
    char why[256];
    int rc = -1;

    memset(out, 0, sizeof(*out));
    if (raw)
        *raw = j;
    if (!j)
        return -1;
    if (kb_evidence_check_load(j, path, err, errlen) < 0)
        ;
    else if (kb_point_load_parse(j, out, why, sizeof(why)) < 0)
        snprintf(err, errlen, "%s: %s", path, why + (strncmp(why, "load JSON: ", 11) ? 0 : 11));
    else
        rc = 0;
    if (!raw)
        json_decref(j);
    return rc;
}

long long kb_point_load_socket_errors(const struct kb_point_load *r)
{
    return r->errors_total - r->unfinished;
}

double kb_point_load_in_time(const struct kb_point_load *r)
{
    if (r->completed_in_interval >= 0 && r->scheduled > 0)
        return (double)r->completed_in_interval / (double)r->scheduled;
    return r->requested_rps > 0 ? r->achieved_rps / r->requested_rps : 0;
}
