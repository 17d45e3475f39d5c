/* report_rejudge.c -- every complete point's verdict derived again from the run's files by
 * the curve's own judgement (runner/run/judgement.h), to check the stored verdicts or to judge
 * the run again under another criterion. Reads files only; runs nothing.
 *
 * What the judgement reads: points/<id>/load.json (through the curve's own reader), and
 * from verdict.json's judged_by the runner's observations, the criteria and whether the
 * run's calibration applied, with calibrate/calibrate.json for its margin. Every version of
 * a curve's verdict.json records judged_by (runner/util/schema.h); a verdict.json without it
 * is not a curve's judgement and is left as written, never re-derived from a guess at what
 * the judgement read. */
#define _GNU_SOURCE
#include "runner/report/report.h"
#include "runner/util/paths.h"
#include "runner/report/report_int.h"
#include "runner/run/calibrate.h"
#include "runner/run/fixture.h"
#include "runner/run/judgement.h"
#include "runner/util/xalloc.h"

#include <stdarg.h>
#include <stdlib.h>
#include <string.h>

__attribute__((format(printf, 2, 3))) static void add_line(struct kb_rederive *rd,
                                                           const char *fmt, ...)
{
    char *s = NULL;
    va_list ap;
    va_start(ap, fmt);
    if (vasprintf(&s, fmt, ap) < 0)
        s = NULL;
    va_end(ap);
    if (!s)
        s = kb_xstrdup(fmt);   /* the mismatch is kept, if not its figures */
    rd->mismatch = kb_xrealloc(rd->mismatch, (rd->nmismatch + 1) * sizeof(char *));
    rd->mismatch[rd->nmismatch++] = s;
}

static void add_unchecked(struct kb_rederive *rd, const char *id)
{
    rd->unchecked = kb_xrealloc(rd->unchecked, (rd->nunchecked + 1) * sizeof(char *));
    rd->unchecked[rd->nunchecked++] = kb_xstrdup(id);
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
    char pdir[KB_PATH_MAX];
    json_t *load = NULL;
    enum kb_margin_use margin;

    snprintf(pdir, sizeof(pdir), "%s/points/%s", dir, id);
    if (kb_judgement_read(v, &o, &c, &margin) < 0) {
        /* no record of what the judgement read: not a curve's, shown as written */
        add_unchecked(rd, id);
        return;
    }
    memset(&lr, 0, sizeof(lr));
    o.have_load = 0;
    o.load_problem[0] = '\0';
    kb_fixture_read_load(pdir, &o, &lr, &load);
    rd->nchecked++;
    if (margin != KB_MARGIN_UNUSED && !r->cal)
        add_line(rd, "point %s: judged against the run's calibration, which cannot be read "
                 "(%s)", id, r->cal_note);
    kb_judge_point(&lr, &o, &c, r->cal, margin, (double)rate, &j);
    compare(rd, id, v, load, &j);
    if (rd->rejudge) {
        c.min_delivery = rd->min_delivery;
        c.max_p99_us = (long)rd->max_p99_us;
        kb_judge_point(&lr, &o, &c, r->cal, margin, (double)rate, &j);
        note_change(rd, id, v, &j);
        kb_judgement_record(v, &j, &lr, &o, &c, margin);
    }
    /* the rows' figures from the raw file itself */
    json_object_set_new(v, "load", load ? load : json_null());
}
