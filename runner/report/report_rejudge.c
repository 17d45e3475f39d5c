/* report_rejudge.c -- every complete point's verdict derived again from the run's files by
 * the curve's own judgement (runner/run/judgement.h), to check the stored verdicts or to judge
 * the run again under another criterion. Reads files only; runs nothing.
 *
 * What the judgement reads: points/<id>/load.json (through the curve's own reader), and
 * from verdict.json's judged_by the runner's observations, the criteria and whether the
 * run's calibration applied, with calibrate/calibrate.json for its margin. Evidence written
 * before judged_by existed is re-derived from what it has: the plan's criteria (the rx-delay
 * bound from the calibration's criteria, else the lag bound, as the contract defaults it),
 * the calibration applied when the run has one, and the runner's observations from the
 * failure its stored reason names (runner/run/verdict.c's wording). */
#define _GNU_SOURCE
#include "runner/report/report.h"
#include "runner/report/report_int.h"
#include "runner/run/calibrate.h"
#include "runner/util/evidence.h"
#include "runner/run/server.h"
#include "runner/run/judgement.h"

#include <stdarg.h>
#include <stdlib.h>
#include <string.h>

__attribute__((format(printf, 2, 3))) static void add_line(struct kb_rederive *rd,
                                                           const char *fmt, ...)
{
    char *s = NULL, **v;
    va_list ap;
    va_start(ap, fmt);
    if (vasprintf(&s, fmt, ap) < 0)
        s = NULL;
    va_end(ap);
    if (!s || !(v = realloc(rd->mismatch, (rd->nmismatch + 1) * sizeof(char *)))) {
        free(s);
        return;
    }
    rd->mismatch = v;
    rd->mismatch[rd->nmismatch++] = s;
}

static void add_unchecked(struct kb_rederive *rd, const char *id)
{
    char **v = realloc(rd->unchecked, (rd->nunchecked + 1) * sizeof(char *));
    if (!v)
        return;
    rd->unchecked = v;
    rd->unchecked[rd->nunchecked++] = strdup(id);
}

void kb_rederive_free(struct kb_rederive *rd)
{
    for (size_t i = 0; i < rd->nmismatch; i++)
        free(rd->mismatch[i]);
    for (size_t i = 0; i < rd->nunchecked; i++)
        free(rd->unchecked[i]);
    free(rd->mismatch);
    free(rd->unchecked);
    json_decref(rd->changed);
    rd->mismatch = rd->unchecked = NULL;
    rd->nmismatch = rd->nunchecked = 0;
    rd->changed = NULL;
}

static double crit_num(json_t *crit, const char *k, double dflt)
{
    json_t *v = json_object_get(crit, k);
    return json_is_number(v) ? json_number_value(v) : dflt;
}

/* The criteria of evidence without judged_by: the plan's, the rx-delay bound where the plan
 * has none from the calibration's criteria, else the lag bound. */
static struct kb_criteria plan_criteria(const struct kb_report *r)
{
    json_t *pc = json_object_get(r->plan, "criteria");
    json_t *cc = json_object_get(r->cal_json, "criteria");
    double lag = crit_num(pc, "client_lag_p99_max_us", 0);
    return (struct kb_criteria){
        .min_delivery = crit_num(pc, "min_delivery", 0),
        .max_p99_us = (long)crit_num(pc, "max_p99_us", 0),
        .client_cpu_max_fraction = crit_num(pc, "client_cpu_max_fraction", 0),
        .client_lag_p99_max_us = (long)lag,
        .client_rx_delay_p99_max_us = (long)crit_num(pc, "client_rx_delay_p99_max_us",
                                                     crit_num(cc, "rx_delay_p99_max_us", lag)),
    };
}

/* s after prefix, or NULL when s does not start with it. */
static const char *after(const char *s, const char *prefix)
{
    size_t n = strlen(prefix);
    return s && !strncmp(s, prefix, n) ? s + n : NULL;
}

/* The runner's observations of older evidence: the failure its server reason names. */
static void observed_from_reason(json_t *v, struct kb_point_obs *o)
{
    const char *sr = json_string_value(json_object_get(v, "server_reason"));
    const char *s = sr ? sr : json_string_value(json_object_get(v, "reason")), *rest;
    memset(o, 0, sizeof(*o));
    if ((rest = after(s, "preflight failed: "))) {
        o->preflight_failed = 1;
        snprintf(o->preflight_reason, sizeof(o->preflight_reason), "%s", rest);
    } else if ((rest = after(s, "process exited ("))) {
        o->fixture_exited = 1;
        snprintf(o->exit_reason, sizeof(o->exit_reason), "%.*s", (int)strcspn(rest, ")"), rest);
    } else if (after(s, "changed fixture identity")) {
        o->identity_changed = 1;
    } else if (after(s, "missing load evidence: ")) {
        o->load_exit = 1;         /* whatever load.json now holds, the runner had none */
    } else if ((rest = after(s, "postflight failed: "))) {
        o->postflight_failed = 1;
        snprintf(o->postflight_reason, sizeof(o->postflight_reason), "%s", rest);
    }
}

static int observed_failure(const struct kb_point_obs *o)
{
    return o->preflight_failed || o->fixture_exited || o->identity_changed ||
           o->postflight_failed || o->load_exit != 0;
}

/* What the point's judgement read besides load.json. 1 when verdict.json recorded it. */
static int judged_by(const struct kb_report *r, const char *dir, json_t *v,
                     struct kb_point_obs *o, struct kb_criteria *c, int *calibrated)
{
    char cdir[4200], path[4300];
    if (kb_judgement_read(v, o, c, calibrated) == 0)
        return 1;
    *c = plan_criteria(r);
    kb_path(path, sizeof(path), kb_path(cdir, sizeof(cdir), dir, "calibrate"), "calibrate.json");
    *calibrated = kb_file_exists(path);
    observed_from_reason(v, o);
    return 0;
}

/* The stored judgement against the re-derived one: each difference is a line naming the
 * point. 0 when everything follows. */
static int compare(struct kb_rederive *rd, const char *id, json_t *v, json_t *load,
                   const struct kb_judgement *j)
{
    const char *sv = json_string_value(json_object_get(v, "verdict"));
    const char *ss = json_string_value(json_object_get(v, "server_verdict"));
    json_t *ok = json_object_get(json_object_get(v, "client_trust"), "ok");
    json_t *copy = json_object_get(v, "load");
    size_t before = rd->nmismatch;
    if (!sv || strcmp(sv, kb_verdict_name(j->verdict)))
        add_line(rd, "point %s: stored verdict %s, re-derived %s (%s)", id, sv ? sv : "(none)",
                 kb_verdict_name(j->verdict), j->reason);
    if (ss && strcmp(ss, kb_verdict_name(j->server)))
        add_line(rd, "point %s: stored server_verdict %s, re-derived %s (%s)", id, ss,
                 kb_verdict_name(j->server), j->server_reason);
    if (json_is_boolean(ok) && json_is_true(ok) != j->trusted)
        add_line(rd, "point %s: stored client trust %s, re-derived %s (%s)", id,
                 json_is_true(ok) ? "ok" : "not ok", j->trusted ? "ok" : "not ok",
                 j->trust_reason);
    if ((load || !json_is_null(copy)) && copy && !json_equal(copy, load))
        add_line(rd, "point %s: verdict.json's copy of the load figures differs from "
                 "load.json", id);
    return rd->nmismatch > before ? -1 : 0;
}

/* Records a verdict the new criterion changed. */
/* A change is the verdict's, or under a client-limited mark its own figures' verdict,
 * which the answer's unproven levels read: either moves the answer. */
static void note_change(struct kb_rederive *rd, const char *id, json_t *v,
                        const struct kb_judgement *j)
{
    const char *sv = json_string_value(json_object_get(v, "verdict"));
    const char *ss = json_string_value(json_object_get(v, "server_verdict"));
    if (sv && !strcmp(sv, kb_verdict_name(j->verdict)) &&
        (!ss || !strcmp(ss, kb_verdict_name(j->server))))
        return;
    if (!rd->changed)
        rd->changed = json_array();
    json_array_append_new(rd->changed, json_pack("{s:s,s:s,s:s,s:s,s:s,s:s}", "point", id,
                          "stored", sv ? sv : "", "rejudged", kb_verdict_name(j->verdict),
                          "stored_server", ss ? ss : "", "rejudged_server",
                          kb_verdict_name(j->server), "reason", j->reason));
}

void kb_report_rederive_point(struct kb_report *r, const char *dir, const char *id, long rate,
                              json_t *v)
{
    struct kb_rederive *rd = r->rd;
    struct kb_point_obs o;
    struct kb_point_load lr;
    struct kb_criteria c;
    struct kb_judgement j;
    char pdir[4200];
    json_t *load = NULL;
    int calibrated, recorded = judged_by(r, dir, v, &o, &c, &calibrated);

    snprintf(pdir, sizeof(pdir), "%s/points/%s", dir, id);
    memset(&lr, 0, sizeof(lr));
    o.have_load = 0;
    o.load_problem[0] = '\0';
    kb_srv_read_load(pdir, &o, &lr, &load);
    if (!recorded && !o.have_load && !observed_failure(&o)) {
        /* no record of the judgement and no load generator's output: not a curve's */
        add_unchecked(rd, id);
        json_decref(load);
        return;
    }
    rd->nchecked++;
    if (calibrated && !r->cal)
        add_line(rd, "point %s: judged against the run's calibration, which cannot be read "
                 "(%s)", id, r->cal_note);
    kb_judge_point(&lr, &o, &c, calibrated ? r->cal : NULL, (double)rate, &j);
    compare(rd, id, v, load, &j);
    if (rd->rejudge) {
        c.min_delivery = rd->min_delivery;
        c.max_p99_us = (long)rd->max_p99_us;
        kb_judge_point(&lr, &o, &c, calibrated ? r->cal : NULL, (double)rate, &j);
        note_change(rd, id, v, &j);
        kb_judgement_record(v, &j, &lr, &o, &c, calibrated);
    }
    /* the rows' figures from the raw file itself */
    json_object_set_new(v, "load", load ? load : json_null());
}
