/* judgement.c -- a curve point's verdict from its figures, observations, criteria and the
 * calibration, and the record of what it read. */
#define _POSIX_C_SOURCE 200809L
#include "runner/run/judgement.h"
#include "runner/run/calibrate.h"

#include <math.h>
#include <stdio.h>
#include <string.h>

#include "runner/util/evidence.h"
#include "runner/util/jfield.h"

/* The margin's word on a trusted point (enum kb_margin_use): 1 when it leaves the trust. */
static int margin_allows(const struct kb_point_load *r, const struct kb_calibrate_result *cal,
                         enum kb_margin_use use, double rate, struct kb_judgement *j)
{
    if (!cal || use == KB_MARGIN_UNUSED)
        return 1;
    if (use == KB_MARGIN_GATES) {
        if (kb_calibrate_covers(cal, rate))
            return 1;
        snprintf(j->trust_reason, sizeof(j->trust_reason), "above the client's proven margin: "
                 "%.0f req/s with the %.2fx headroom asks for %.0f, the client held %.0f against "
                 "the control server", rate, cal->factor, rate * cal->factor, cal->margin_rps);
        return 0;
    }
    /* What the client carried is at most its schedule: it never sends more, and responses
     * completed above the requested rate are the server clearing a backlog the client had
     * already sent (php-fpm completed 8,287 a second of 8,000 when the margin covered 8,000). */
    double carried = fmin(r->achieved_rps, rate);

    if (j->server != KB_UNCONTROLLED || kb_calibrate_covers(cal, carried))
        return 1;
    /* the margin is compared with the load times its headroom: say both figures, so that a
     * load below the margin does not read as covered */
    snprintf(j->trust_reason, sizeof(j->trust_reason), "uncontrolled while carrying %.0f req/s, "
             "which with the %.2fx headroom asks the client to have proven %.0f req/s; it held "
             "%.0f against the control server, so the shortfall may be the client's own",
             carried, cal->factor, carried * cal->factor, cal->margin_rps);
    return 0;
}

void kb_judge_point(const struct kb_point_load *r, const struct kb_point_obs *o,
                    const struct kb_criteria *c, const struct kb_calibrate_result *cal,
                    enum kb_margin_use use, double rate, struct kb_judgement *j)
{
    memset(j, 0, sizeof(*j));
    /* The server's own verdict is kept whatever the client's trust: a client-limited point
     * still says what its figures showed, marked unproven in the report. */
    j->server = kb_verdict_server(r, o, c, j->server_reason, sizeof(j->server_reason));
    j->trusted = kb_trust_judge(r, c, j->trust_reason, sizeof(j->trust_reason));
    j->sides = kb_trust_sides(r, c, &j->as_measured, &j->less_client);
    if (j->trusted && !margin_allows(r, cal, use, rate, j))
        j->trusted = 0;
    j->verdict = j->server == KB_FAILED || j->trusted ? j->server : KB_CLIENT_LIMITED;
    snprintf(j->reason, sizeof(j->reason), "%s",
             j->verdict == KB_CLIENT_LIMITED ? j->trust_reason : j->server_reason);
}

static json_t *criteria_json(const struct kb_criteria *c)
{
    return json_pack("{s:f,s:I,s:f,s:I,s:I}", "min_delivery", c->min_delivery, "max_p99_us",
                     (json_int_t)c->max_p99_us, "client_cpu_max_fraction",
                     c->client_cpu_max_fraction, "client_lag_p99_max_us",
                     (json_int_t)c->client_lag_p99_max_us, "client_rx_delay_p99_max_us",
                     (json_int_t)c->client_rx_delay_p99_max_us);
}

static json_t *observed_json(const struct kb_point_obs *o)
{
    return json_pack("{s:b,s:i,s:s,s:b,s:s,s:b,s:s,s:b,s:b,s:s}", "have_load", o->have_load,
                     "load_exit", o->load_exit, "load_problem", o->load_problem,
                     "preflight_failed", o->preflight_failed, "preflight_reason",
                     o->preflight_reason, "fixture_exited", o->fixture_exited, "exit_reason",
                     o->exit_reason, "identity_changed", o->identity_changed,
                     "postflight_failed", o->postflight_failed, "postflight_reason",
                     o->postflight_reason);
}

/* The client's trust and what it compared: the verdict as measured and without the
 * client's own delay, that delay, and its share of the corrected p99. */
static json_t *trust_json(const struct kb_judgement *j, const struct kb_point_load *r)
{
    json_t *t = json_pack("{s:b,s:s,s:s}", "ok", j->trusted, "reason", j->trust_reason, "rule",
                          j->sides == 0 ? "could-decide" : "lateness-bounds");
    double share = r->corrected.p99 > 0 ? 1 - r->less_client.p99 / r->corrected.p99 : NAN;
    if (j->sides != 0)
        return t;
    json_object_set_new(t, "as_measured", json_string(j->as_measured ? "controlled"
                                                                     : "uncontrolled"));
    json_object_set_new(t, "without_client_delay", json_string(j->less_client ? "controlled"
                                                                              : "uncontrolled"));
    json_object_set_new(t, "client_delay_p99_us", kb_json_figure(r->client_delay.p99));
    json_object_set_new(t, "client_delay_max_us", kb_json_figure(r->client_delay.max));
    json_object_set_new(t, "p99_less_client_us", kb_json_figure(r->less_client.p99));
    json_object_set_new(t, "delivery_less_client", kb_json_figure(r->delivery_less_client));
    json_object_set_new(t, "client_share_of_p99", kb_json_figure(share));
    return t;
}

void kb_judgement_record(json_t *verdict, const struct kb_judgement *j,
                         const struct kb_point_load *r, const struct kb_point_obs *o,
                         const struct kb_criteria *c, enum kb_margin_use margin)
{
    json_t *by;
    json_object_set_new(verdict, "verdict", json_string(kb_verdict_name(j->verdict)));
    json_object_set_new(verdict, "reason", json_string(j->reason));
    json_object_set_new(verdict, "server_verdict", json_string(kb_verdict_name(j->server)));
    json_object_set_new(verdict, "server_reason", json_string(j->server_reason));
    json_object_set_new(verdict, "client_trust", trust_json(j, r));
    by = json_pack("{s:o,s:b,s:o}", "criteria", criteria_json(c), "calibrated",
                   margin != KB_MARGIN_UNUSED, "observed", observed_json(o));
    if (margin != KB_MARGIN_UNUSED)
        json_object_set_new(by, "margin", json_string(margin == KB_MARGIN_GATES ? "gates"
                                                                               : "carried"));
    json_object_set_new(verdict, "judged_by", by);
}

static double num(json_t *o, const char *k)
{
    return json_number_value(json_object_get(o, k));
}

static void text(char *dst, size_t len, json_t *o, const char *k)
{
    const char *s = json_string_value(json_object_get(o, k));
    snprintf(dst, len, "%s", s ? s : "");
}

enum kb_margin_use kb_judgement_margin(json_t *verdict)
{
    json_t *by = json_object_get(verdict, "judged_by");
    if (!json_is_true(json_object_get(by, "calibrated")))
        return KB_MARGIN_UNUSED;
    return strcmp(kb_jstr(by, "margin", "gates"), "carried") ? KB_MARGIN_GATES
                                                             : KB_MARGIN_CARRIED;
}

int kb_judgement_read(json_t *verdict, struct kb_point_obs *o, struct kb_criteria *c,
                      enum kb_margin_use *margin)
{
    json_t *by = json_object_get(verdict, "judged_by");
    json_t *cr = json_object_get(by, "criteria"), *ob = json_object_get(by, "observed");
    if (!json_is_object(by))
        return -1;
    *c = (struct kb_criteria){ .min_delivery = num(cr, "min_delivery"),
                               .max_p99_us = (long)num(cr, "max_p99_us"),
                               .client_cpu_max_fraction = num(cr, "client_cpu_max_fraction"),
                               .client_lag_p99_max_us = (long)num(cr, "client_lag_p99_max_us"),
                               .client_rx_delay_p99_max_us =
                                   (long)num(cr, "client_rx_delay_p99_max_us") };
    *margin = kb_judgement_margin(verdict);
    memset(o, 0, sizeof(*o));
    o->have_load = json_is_true(json_object_get(ob, "have_load"));
    o->load_exit = (int)num(ob, "load_exit");
    text(o->load_problem, sizeof(o->load_problem), ob, "load_problem");
    o->preflight_failed = json_is_true(json_object_get(ob, "preflight_failed"));
    text(o->preflight_reason, sizeof(o->preflight_reason), ob, "preflight_reason");
    o->fixture_exited = json_is_true(json_object_get(ob, "fixture_exited"));
    text(o->exit_reason, sizeof(o->exit_reason), ob, "exit_reason");
    o->identity_changed = json_is_true(json_object_get(ob, "identity_changed"));
    o->postflight_failed = json_is_true(json_object_get(ob, "postflight_failed"));
    text(o->postflight_reason, sizeof(o->postflight_reason), ob, "postflight_reason");
    return 0;
}
