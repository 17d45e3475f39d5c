/* report_qualify.c -- see report_qualify.h. report.json is built first and report.md is
 * rendered from it alone, so the two can never disagree. */
#define _GNU_SOURCE
#include "runner/report/qualify/report_qualify.h"

#include "runner/util/evidence.h"
#include "runner/util/paths.h"
#include "runner/util/jfield.h"

#include <errno.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

/* A figure the run may lack: null rather than a 0 that would read as measured. */
static json_t *num_or_null(const json_t *o, const char *a, const char *b)
{
    double v;
    return kb_jnum_opt(o, a, b, &v) ? kb_json_figure(v) : json_null();
}

static json_t *strlist_json(const struct kb_strlist *l)
{
    json_t *a = json_array();
    for (size_t i = 0; i < l->n; i++)
        json_array_append_new(a, json_string(l->v[i]));
    return a;
}

/* A paper's figure, JSON null where the paper does not state it (< 0). */
static json_t *stated(double v)
{
    return v >= 0 ? json_real(v) : json_null();
}

static json_t *stated_count(long v)
{
    return v >= 0 ? json_integer(v) : json_null();
}

/* The final zero state as one phrase: "a=0 b=0", or what was not at zero. A paper's state
 * (final NULL) is its gauges at zero, JSON null when it names none. */
static json_t *zero_state(char *const *names, size_t n, json_t *final, int is_run)
{
    char buf[512] = "";
    size_t off = 0;
    if (!is_run && !n)
        return json_null();
    for (size_t i = 0; i < n && off < sizeof(buf); i++) {
        json_t *v = is_run ? json_object_get(final, names[i]) : NULL;
        if (!is_run)
            off += (size_t)snprintf(buf + off, sizeof(buf) - off, "%s%s=0", i ? " " : "", names[i]);
        else if (json_is_integer(v))
            off += (size_t)snprintf(buf + off, sizeof(buf) - off, "%s%s=%lld", i ? " " : "",
                                    names[i], (long long)json_integer_value(v));
        else
            off += (size_t)snprintf(buf + off, sizeof(buf) - off, "%s%s=?", i ? " " : "", names[i]);
    }
    return json_string(buf);
}

/* The table's figures; each row has one cell per paper run (in the contract's order) and
 * the run's. */
enum fig { F_REQ, F_DUR, F_ACH, F_DEL, F_P50, F_P99, F_P999, F_MAX, F_RESP, F_OBS, F_OBS_S,
           F_SUSP, F_RSS, F_FDS, F_ZERO, F_N };

static const struct { const char *figure, *unit; } figs[F_N] = {
    { "requested", "req/s" }, { "duration", "s" }, { "achieved", "req/s" },
    { "delivery", "fraction" }, { "corrected p50", "us" }, { "corrected p99", "us" },
    { "corrected p99.9", "us" }, { "corrected max", "us" },
    { "responses in the measured interval", "count" },
    { "successful /stats observations in it", "count" },
    { "/stats observations per second", "1/s" },
    { "most handlers suspended at once (sampled)", "count" },
    { "server RSS, last sample", "KiB" }, { "server descriptors, last sample", "count" },
    { "final zero state", "gauges" },
};

static json_t *paper_cell(const struct kb_qual_paper *p, enum fig f)
{
    switch (f) {
    case F_REQ: return json_real(p->requested_rps);
    case F_DUR: return json_real(p->duration_s);
    case F_ACH: return stated(p->achieved_rps);
    case F_DEL: return stated(p->delivery);
    case F_P50: return stated(p->p50_us);
    case F_P99: return stated(p->p99_us);
    case F_P999: return stated(p->p999_us);
    case F_MAX: return stated(p->max_us);
    case F_RESP: return stated_count(p->responses);
    case F_OBS: return stated_count(p->stats_observations);
    case F_OBS_S: return p->stats_observations >= 0 && p->duration_s > 0
                         ? json_real((double)p->stats_observations / p->duration_s) : json_null();
    case F_SUSP: return stated_count(p->suspended_max);
    case F_RSS: return stated(p->rss_kib);
    case F_FDS: return stated(p->fds);
    case F_ZERO: default: return zero_state(p->zero_after.v, p->zero_after.n, NULL, 0);
    }
}

static json_t *run_cell(json_t *v, const struct kb_qualification *q, enum fig f)
{
    json_t *load = json_object_get(v, "load"), *st = json_object_get(v, "stats");
    double x;
    switch (f) {
    case F_REQ: return num_or_null(v, "rate", NULL);
    case F_DUR: return num_or_null(v, "duration_s", NULL);
    case F_ACH: return num_or_null(load, "achieved_rps", NULL);
    case F_DEL: return num_or_null(load, "delivery", NULL);
    case F_P50: return num_or_null(load, "corrected_us", "p50");
    case F_P99: return num_or_null(load, "corrected_us", "p99");
    case F_P999: return num_or_null(load, "corrected_us", "p999");
    case F_MAX: return num_or_null(load, "corrected_us", "max");
    case F_RESP: return num_or_null(load, "completed_in_interval", NULL);
    case F_OBS: return num_or_null(st, "ok_measured", NULL);
    case F_OBS_S: return num_or_null(st, "per_s", NULL);
    case F_SUSP: return num_or_null(st, "suspended_now_max", NULL);
    case F_RSS: return kb_jnum_opt(v, "rss_bytes", "last", &x) ? kb_json_figure(x / 1024)
                                                               : json_null();
    case F_FDS: return num_or_null(v, "fds", "last");
    case F_ZERO: default:
        return zero_state(q->zero_gauges.v, q->zero_gauges.n, json_object_get(st, "final"), 1);
    }
}

static json_t *rows_json(json_t *v, const struct kb_qualification *q)
{
    json_t *rows = json_array();
    for (int f = 0; f < F_N; f++) {
        json_t *papers = json_object();
        for (size_t i = 0; i < q->npapers; i++)
            json_object_set_new(papers, q->papers[i].name, paper_cell(&q->papers[i], f));
        json_array_append_new(rows, json_pack("{s:s,s:s,s:o,s:o}", "figure", figs[f].figure,
                                              "unit", figs[f].unit, "papers", papers,
                                              "run", run_cell(v, q, f)));
    }
    return rows;
}

static json_t *papers_json(const struct kb_qualification *q)
{
    json_t *a = json_array();
    for (size_t i = 0; i < q->npapers; i++) {
        const struct kb_qual_paper *p = &q->papers[i];
        json_array_append_new(a, json_pack("{s:s,s:s,s:s,s:s,s:o,s:b}", "name", p->name,
            "label", p->label, "host", p->host, "source", p->source,
            "zero_after", strlist_json(&p->zero_after), "reproduced", p == q->reproduces));
    }
    return a;
}

json_t *kb_qual_report_json(json_t *v, const struct kb_qualification *q)
{
    json_t *st = json_object_get(v, "stats");
    return json_pack("{s:i,s:s,s:s,s:s,s:s,s:{s:s,s:s},s:o,s:o,s:o,s:O*,s:O*,s:O*,s:O*,s:O*}",
        "schema_version", 2, "kind", "qualification",
        "verdict", kb_jstr(v, "verdict", "?"), "reason", kb_jstr(v, "reason", ""),
        "paper_label", "the paper's host: orientation, not a target",
        "reproduces", "name", q->reproduces->name, "label", q->reproduces->label,
        "papers", papers_json(q), "rows", rows_json(v, q),
        "zero_gauges", strlist_json(&q->zero_gauges),
        "criteria", json_object_get(v, "criteria"), "rss_bytes", json_object_get(v, "rss_bytes"),
        "fds", json_object_get(v, "fds"), "stats_summary", st,
        "placement", json_object_get(v, "placement"));
}

/* A cell: the unit's way of printing a figure; "-" for a figure the run lacks. */
static void cell(FILE *f, const char *unit, json_t *x)
{
    double d = json_number_value(x);
    if (json_is_string(x))
        fprintf(f, " `%s` |", json_string_value(x));
    else if (!json_is_number(x))
        fprintf(f, " - |");
    else if (!strcmp(unit, "us"))
        fprintf(f, " %.2f ms |", d / 1000);
    else if (!strcmp(unit, "fraction"))
        fprintf(f, " %.3f %% |", 100 * d);
    else if (!strcmp(unit, "req/s") || !strcmp(unit, "1/s"))
        fprintf(f, " %.2f |", d);
    else
        fprintf(f, " %.0f |", d);
}

static void md_series(FILE *f, const char *what, json_t *g, double scale, const char *unit)
{
    if (!json_is_object(g) || kb_jnum(g, "n", NULL) < 2) {
        fprintf(f, "- %s: fewer than 2 samples, growth not judged\n", what);
        return;
    }
    fprintf(f, "- %s: %.0f samples over %.1f s, at most %.2f s apart; first %.0f%s, last "
            "%.0f%s, min %.0f, max %.0f: rise above the first sample **%.0f%s**\n", what,
            kb_jnum(g, "n", NULL), kb_jnum(g, "window_s", NULL), kb_jnum(g, "every_s", NULL),
            kb_jnum(g, "first", NULL) / scale, unit, kb_jnum(g, "last", NULL) / scale, unit,
            kb_jnum(g, "min", NULL) / scale, kb_jnum(g, "max", NULL) / scale,
            kb_jnum(g, "rise", NULL) / scale, unit);
}

/* One column per paper run, then this run's; "-" where a run does not state a figure. */
static void md_table(FILE *f, json_t *r)
{
    json_t *papers = json_object_get(r, "papers"), *p, *x;
    size_t i, j;
    fprintf(f, "| figure |");
    json_array_foreach(papers, j, p)
        fprintf(f, " paper: %s%s |", kb_jstr(p, "label", ""),
                json_is_true(json_object_get(p, "reproduced")) ? " (reproduced)" : "");
    fprintf(f, " this run |\n|---|");
    json_array_foreach(papers, j, p)
        fprintf(f, "---:|");
    fprintf(f, "---:|\n");
    json_array_foreach(json_object_get(r, "rows"), i, x) {
        const char *unit = kb_jstr(x, "unit", "");
        fprintf(f, "| %s |", kb_jstr(x, "figure", ""));
        json_array_foreach(papers, j, p)
            cell(f, unit, json_object_get(json_object_get(x, "papers"), kb_jstr(p, "name", "")));
        cell(f, unit, json_object_get(x, "run"));
        fprintf(f, "\n");
    }
    fprintf(f, "\nThe paper's columns, %s, are its runs of this qualification:", 
            kb_jstr(r, "paper_label", ""));
    json_array_foreach(papers, j, p)
        fprintf(f, "%s %s, %s (%s)", j ? ";" : "", kb_jstr(p, "label", ""),
                kb_jstr(p, "host", ""), kb_jstr(p, "source", ""));
    fprintf(f, ". A \"-\" is a figure that run does not state. Their gauges are Gray's own; "
            "this run's are gray-static's /stats fields. Another CPU, kernel, virtualisation "
            "layer or client moves every figure: this run is judged by the criteria below, "
            "never against those columns.\n\n");
}

static void md_body(FILE *f, json_t *r)
{
    json_t *c = json_object_get(r, "criteria");
    json_t *st = json_object_get(r, "stats_summary");
    md_table(f, r);
    fprintf(f, "## Criteria\n\n- delivery >= %.1f %% and corrected p99 < %.0f ms, exact "
            "responses (no socket error, non-2xx or response unlike the contract), the fixture "
            "alive throughout, the client trusted\n- zero growth: no RSS or descriptor sample "
            "above the series' first one (sampled from warmup + settle to the end of the "
            "measured interval)\n- /stats read at least %g times a second of measured load, "
            "and its final sample (after the load) with every gauge at zero\n\nThe first two "
            "are the paper's readiness qualification's criteria; the /stats rate and the gauges "
            "back at zero come from its continuation run (326 /stats observations in 30 s, "
            "gauges zero after the load).\n\n",
            100 * kb_jnum(c, "min_delivery", NULL), kb_jnum(c, "max_p99_us", NULL) / 1000,
            kb_jnum(c, "min_stats_per_s", NULL));
    fprintf(f, "## Samples\n\n");
    md_series(f, "server RSS", json_object_get(r, "rss_bytes"), 1024, " KiB");
    md_series(f, "server descriptors", json_object_get(r, "fds"), 1, "");
    fprintf(f, "- /stats: every %.3f s by its own thread on one connection of its own, kept "
            "open; %.0f reads (%.0f successful), %.0f in the measured %.1f s (%.2f/s, longest "
            "gap %.3f s); most handlers suspended at once in a sample %.0f, the server's own "
            "high-water mark %.0f; final sample: %s\n\n", kb_jnum(st, "every_s", NULL),
            kb_jnum(st, "samples", NULL), kb_jnum(st, "ok", NULL),
            kb_jnum(st, "ok_measured", NULL), kb_jnum(st, "measured_s", NULL),
            kb_jnum(st, "per_s", NULL), kb_jnum(st, "max_gap_s", NULL),
            kb_jnum(st, "suspended_now_max", NULL), kb_jnum(st, "suspended_max_server", NULL),
            json_is_true(json_object_get(st, "final_zero")) ? "every gauge at zero"
                                                            : kb_jstr(st, "final_nonzero", "?"));
    fprintf(f, "Evidence in this directory: plan.json, run.json, command.json, fixture/ "
            "(limits.json read back, identity.json, preflight.json, fixture.log), load.json, "
            "corrected/uncorrected .hgrm, samples.csv (RSS, descriptors), stats.jsonl (every "
            "/stats read, timestamped), verdict.json, report.json, DONE.\n");
}

char *kb_qual_report_md(json_t *r)
{
    char *buf = NULL;
    size_t len = 0;
    FILE *f = open_memstream(&buf, &len);
    json_t *pl = json_object_get(r, "placement");
    if (!f)
        return NULL;
    fprintf(f, "# kneebench qualify -- gray-static /db\n\n**%s**: %s\n\n",
            kb_jstr(r, "verdict", "?"), kb_jstr(r, "reason", ""));
    fprintf(f, "Seed 001's qualification (docs/protocol.md, \"The db qualification\"): this "
            "run reproduces %s, on gray-static's readiness design; its criteria decide the "
            "verdict. Server CPUs %s, client CPUs %s%s.\n\n",
            kb_jstr(json_object_get(r, "reproduces"), "label", "?"),
            kb_jstr(pl, "server_cpus", "?"), kb_jstr(pl, "client_cpus", "?"),
            json_is_true(json_object_get(pl, "unconstrained")) ? ", UNCONSTRAINED (no limits)"
                                                              : "");
    if (json_is_string(json_object_get(r, "postgresql")))
        fprintf(f, "PostgreSQL: the paper's runs used PostgreSQL 16; this run's is %s "
                "(run.json).\n\n", kb_jstr(r, "postgresql", "?"));
    md_body(f, r);
    if (fclose(f) != 0) {
        free(buf);
        return NULL;
    }
    return buf;
}

int kb_qual_report_write(const char *run, const struct kb_contract *c, char *err,
                         size_t errlen)
{
    char path[KB_PATH_MAX];
    json_t *v, *r;
    char *md;
    int rc = -1;
    if (kb_evidence_read(kb_path(path, sizeof(path), run, "verdict.json"), &v, err, errlen) < 0)
        return -1;
    r = kb_qual_report_json(v, &c->qual);
    if (r) {                  /* beside the db figures: the papers ran PostgreSQL 16 */
        json_t *id = kb_evidence_load(kb_path(path, sizeof(path), run, "run.json"), NULL);
        const char *pg = kb_jstr(json_object_get(id, "runtime_versions"), "postgresql", NULL);
        pg = pg ? pg : kb_jstr(id, "postgresql", NULL);
        if (pg)
            json_object_set_new(r, "postgresql", json_string(pg));
        json_decref(id);
    }
    md = r ? kb_qual_report_md(r) : NULL;
    if (!r || !md) {
        snprintf(err, errlen, "report: out of memory");
    } else if (kb_write_json_atomic(kb_path(path, sizeof(path), run, "report.json"), r, err,
                                    errlen) == 0 &&
               kb_write_atomic(kb_path(path, sizeof(path), run, "report.md"), md, strlen(md),
                               err, errlen) == 0) {
        rc = 0;
    }
    free(md);
    json_decref(r);
    json_decref(v);
    return rc;
}
