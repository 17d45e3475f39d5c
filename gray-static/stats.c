/* stats.c -- see stats.h. JSON built with jansson so field names and numbers are always
 * well-formed; the object is small, so building it per request costs little. */
#include "gray-static/stats.h"

#include <jansson.h>
#include <string.h>

static int put(json_t *o, const char *k, long v)
{
    return json_object_set_new(o, k, json_integer(v));
}

static int put_gauges(json_t *o, const struct gs_stats *s)
{
    return put(o, "suspended_now", s->suspended_now) | put(o, "queries_in_flight", s->queries_in_flight)
         | put(o, "queued", s->queued) | put(o, "pool_idle", s->pool_idle)
         | put(o, "pool_busy", s->pool_busy) | put(o, "pool_connecting", s->pool_connecting)
         | put(o, "pool_down", s->pool_down) | put(o, "pool_size", s->pool_size)
         | json_object_set_new(o, "db_enabled", json_boolean(s->db_enabled))
         | json_object_set_new(o, "db_mode", s->db_mode ? json_string(s->db_mode) : json_null())
         | json_object_set_new(o, "db_reachable", json_boolean(s->db_reachable));
}

static int put_totals(json_t *o, const struct gs_stats *s)
{
    return put(o, "suspended_max", s->suspended_max) | put(o, "suspended_total", s->suspended_total)
         | put(o, "queries_total", s->queries_total) | put(o, "retired", s->retired)
         | put(o, "errors", s->errors) | put(o, "unavailable", s->unavailable)
         | put(o, "timeouts", s->timeouts)
         | put(o, "reconnects", s->reconnects);
}

int gs_stats_json(const struct gs_stats *s, char *buf, size_t len)
{
    json_t *o = json_object();
    size_t n;
    int rc = -1;

    if (!o || put_gauges(o, s) || put_totals(o, s))
        goto out;
    n = json_dumpb(o, buf, len, JSON_COMPACT | JSON_PRESERVE_ORDER);
    if (n == 0 || n >= len)
        goto out;
    buf[n] = '\0';
    rc = (int)n;
out:
    json_decref(o);
    return rc;
}

void gs_stats_suspend(struct gs_stats *s)
{
    s->suspended_now++;
    s->suspended_total++;
    if (s->suspended_now > s->suspended_max)
        s->suspended_max = s->suspended_now;
}

void gs_stats_resume(struct gs_stats *s)
{
    s->suspended_now--;
}
