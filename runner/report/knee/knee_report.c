/* knee_report.c -- a knee run read back, its headline, report.md, report.csv and
 * report.json (knee_report.h). */
#define _GNU_SOURCE
#include "runner/report/knee/knee_report.h"

#include <math.h>
#include <stdarg.h>
#include <stdlib.h>
#include <string.h>

#include "runner/report/report_text.h"
#include "runner/util/atomicfile.h"
#include "runner/util/evidence.h"
#include "runner/util/paths.h"
#include "runner/util/jfield.h"
#include "runner/util/schema.h"
#include "runner/util/xalloc.h"

static double fig(const json_t *o, const char *a, const char *b)
{
    double v;
    return kb_jnum_opt(o, a, b, &v) ? v : NAN;
}

static void read_opts(struct kb_knee_doc *d)
{
    json_t *s = json_object_get(d->plan, "search"), *c = json_object_get(d->plan, "criteria");
    struct kb_knee_opts *o = &d->opts;
    o->start_rate = (long)kb_jnum(s, "start_rate", NULL);
    o->min_rate = (long)kb_jnum(s, "min_rate", NULL);
    o->max_rate = (long)kb_jnum(s, "max_rate", NULL);
    o->factor = kb_jnum(s, "factor", NULL);
    o->resolution = kb_jnum(s, "resolution", NULL);
    o->confirm = (int)kb_jnum(s, "confirm", NULL);
    d->hold_s = kb_jnum_opt(s, "hold_s", NULL, &d->hold_s) ? d->hold_s : 0;
    o->hold = d->hold_s > 0;
    o->crit.min_delivery = kb_jnum(c, "min_delivery", NULL);
    o->crit.max_p99_us = (long)kb_jnum(c, "max_p99_us", NULL);
    o->crit.client_cpu_max_fraction = kb_jnum(c, "client_cpu_max_fraction", NULL);
    o->crit.client_lag_p99_max_us = (long)kb_jnum(c, "client_lag_p99_max_us", NULL);
    o->crit.client_rx_delay_p99_max_us = (long)kb_jnum(c, "client_rx_delay_p99_max_us", NULL);
}

static void read_fig(struct kb_knee_fig *f, const json_t *step, const json_t *v)
{
    const json_t *load = json_object_get(v, "load"), *srv = json_object_get(v, "server");
    const json_t *host = json_object_get(v, "host");
    f->rate = (long)kb_jnum(step, "rate", NULL);
    f->sample = (int)kb_jnum(step, "sample", NULL);
    f->hold = json_is_true(json_object_get(step, "hold"));
    f->resumed = json_is_true(json_object_get(step, "resumed"));
    f->why = kb_jstr(step, "why", "");
    f->dir = kb_jstr(step, "dir", "");
    f->verdict = kb_jstr(v ? v : step, "verdict", "");
    f->server_verdict = kb_jstr(v, "server_verdict", f->verdict);
    f->reason = kb_jstr(v, "reason", "");
    f->delivery = v ? fig(load, "delivery", NULL) : fig(step, "delivery", NULL);
    f->achieved_rps = fig(load, "achieved_rps", NULL);
    f->p99_us = v ? fig(load, "corrected_us", "p99") : fig(step, "p99_us", NULL);
    f->p99_is_bound = json_is_true(json_object_get(json_object_get(load, "corrected_us"),
                                                   "p99_is_bound"));
    f->less_client_p99_us = fig(load, "corrected_less_client_us", "p99");
    f->client_delay_p99_us = fig(load, "client_delay_us", "p99");
    f->cpu_us_per_response = fig(srv, "cpu_us_per_response", NULL);
    f->rss_max_bytes = fig(srv, "rss_max_bytes", NULL);
    f->pss_max_bytes = fig(srv, "pss_max_bytes", NULL);
    f->fds_max = fig(srv, "fds_max", NULL);
    f->server_steal_max = fig(host, "server_cpus", "steal_max_fraction");
    f->client_steal_max = fig(host, "client_cpus", "steal_max_fraction");
    f->steal_could_decide = json_is_true(json_object_get(host, "could_decide"));
    /* only where the server closed connections (kneepoint.c's reading) */
    f->conns_per_request = json_is_true(json_object_get(load, "reconnect")) &&
        json_integer_value(json_object_get(load, "server_closes")) > 0
        ? fig(load, "connections_per_request", NULL) : NAN;
}

/* The samples and their verdicts; the rows judged again from them. -1 with err when a
 * sample's verdict.json is a newer kneebench's. */
static int read_samples(const char *dir, struct kb_knee_doc *d, char *err, size_t errlen)
{
    json_t *steps = json_object_get(d->knee, "steps");
    struct kb_knee_sample s[KB_KNEE_MAX_SAMPLES];
    d->n = json_array_size(steps) < KB_KNEE_MAX_SAMPLES ? json_array_size(steps)
                                                        : KB_KNEE_MAX_SAMPLES;
    d->f = kb_xcalloc(d->n ? d->n : 1, sizeof(*d->f));
    d->verdicts = kb_xcalloc(d->n ? d->n : 1, sizeof(*d->verdicts));
    for (size_t i = 0; i < d->n; i++) {
        json_t *st = json_array_get(steps, i);
        char sub[KB_PATH_MAX], path[KB_PATH_MAX];
        kb_path(sub, sizeof(sub), dir, kb_jstr(st, "dir", ""));
        /* an unreadable verdict leaves its figures to knee.json; a newer one is refused */
        if (kb_evidence_read(kb_path(path, sizeof(path), sub, "verdict.json"), &d->verdicts[i],
                             err, errlen) == KB_EVIDENCE_REFUSED)
            return -1;
        read_fig(&d->f[i], st, d->verdicts[i]);
        s[i] = (struct kb_knee_sample){ .rate = d->f[i].rate,
            .verdict = (enum kb_verdict)kb_verdict_from_name(kb_jstr(st, "verdict", "failed")),
            .delivery = fig(st, "delivery", NULL), .p99_us = fig(st, "p99_us", NULL),
            .hold = d->f[i].hold };
    }
    d->nrows = kb_knee_rows(s, d->n, &d->opts.crit, d->rows, KB_KNEE_MAX_SAMPLES);
    return 0;
}

int kb_knee_doc_load(const char *dir, struct kb_knee_doc *d, char *err, size_t errlen)
{
    char path[KB_PATH_MAX];
    json_error_t je;
    json_t *out;
    memset(d, 0, sizeof(*d));
    if (!(d->knee = kb_evidence_load(kb_path(path, sizeof(path), dir, "knee.json"), &je))) {
        snprintf(err, errlen, "%s is unreadable: %s", path, je.text);
        return -1;
    }
    /* a newer kneebench's record is refused, never read by guessing what it holds */
    if (kb_schema_version(d->knee, path, KB_SCHEMA_EVIDENCE, err, errlen) < 0) {
        kb_knee_doc_free(d);
        return -1;
    }
    d->plan = json_object_get(d->knee, "plan");
    d->setup = json_object_get(d->knee, "setup");
    if (strcmp(kb_jstr(d->knee, "kind", ""), "knee") || !json_is_object(d->plan)) {
        snprintf(err, errlen, "%s: not a knee search's record", path);
        kb_knee_doc_free(d);
        return -1;
    }
    d->url = kb_jstr(d->plan, "url", "?");
    d->expect = kb_jstr(d->plan, "expect", "?");
    read_opts(d);
    if (read_samples(dir, d, err, errlen) < 0) {
        kb_knee_doc_free(d);
        return -1;
    }
    out = json_object_get(d->knee, "outcome");
    d->ended = json_is_object(out);
    d->end = kb_jstr(out, "end", "");
    d->step = kb_jstr(out, "step", "");
    d->lo = (long)kb_jnum(out, "lo", NULL);
    d->hi = (long)kb_jnum(out, "hi", NULL);
    d->elapsed_s = kb_jnum(d->knee, "elapsed_s", NULL);
    return 0;
}

void kb_knee_doc_free(struct kb_knee_doc *d)
{
    for (size_t i = 0; d->verdicts && i < d->n; i++)
        json_decref(d->verdicts[i]);
    free(d->verdicts);
    free(d->f);
    json_decref(d->knee);
    memset(d, 0, sizeof(*d));
}

/* 45300 -> "45,300". */
static const char *rate_text(char *b, size_t len, long v)
{
    char raw[32];
    size_t n, o = 0;
    snprintf(raw, sizeof(raw), "%ld", v);
    n = strlen(raw);
    for (size_t i = 0; i < n && o + 2 < len; i++) {
        if (i && (n - i) % 3 == 0)
            b[o++] = ',';
        b[o++] = raw[i];
    }
    b[o] = '\0';
    return b;
}

static const char *criteria_text(char *b, size_t len, const struct kb_knee_opts *o)
{
    char p99[32];
    snprintf(b, len, "p99 < %s, delivery >= %g %%",
             kb_text_us(p99, sizeof(p99), (double)o->crit.max_p99_us), o->crit.min_delivery * 100);
    return b;
}

static const struct kb_knee_row *row(const struct kb_knee_doc *d, long rate)
{
    for (size_t i = 0; i < d->nrows; i++)
        if (d->rows[i].rate == rate)
            return &d->rows[i];
    return NULL;
}

/* "confirmed by 3 repeats", from the fewer trusted samples of the bracket's two ends; a
 * failed end counts as confirmed by its one sample (errors are not outvoted). */
static void confirmed(char *b, size_t len, const struct kb_knee_doc *d)
{
    const struct kb_knee_row *lo = row(d, d->lo), *hi = row(d, d->hi);
    int n = !lo || !hi ? 0 : hi->state == KB_ROW_FAILED || lo->trusted < hi->trusted
                                 ? lo->trusted : hi->trusted;
    if (n > 1)
        snprintf(b, len, "confirmed by %d repeats", n);
    else
        snprintf(b, len, "one sample at each end (not repeated)");
    if (lo && lo->hold_trusted)
        snprintf(b + strlen(b), len - strlen(b), "; the held end held for %.0f s", d->hold_s);
}

int kb_knee_headline(const struct kb_knee_doc *d, char *line, size_t len)
{
    char lo[32], hi[32], crit[96], conf[64];
    rate_text(lo, sizeof(lo), d->lo);
    rate_text(hi, sizeof(hi), d->hi);
    criteria_text(crit, sizeof(crit), &d->opts);
    if (!d->ended) {
        snprintf(line, len, "knee search not finished (%zu samples so far): run the same "
                 "command to resume", d->n);
    } else if (strcmp(d->end, "search")) {
        const char *why = !strcmp(d->end, "max-time") ? "by --max-time" : d->end;
        char where[128];
        if (d->lo)
            snprintf(where, sizeof(where), "with the knee above %s%s%s req/s", lo,
                     d->hi ? " and at most " : "", d->hi ? hi : "");
        else if (d->hi)
            snprintf(where, sizeof(where), "before any rate held, the knee at most %s req/s",
                     hi);
        /* nothing measured brackets the knee: no rate to name */
        if (d->lo || d->hi)
            snprintf(line, len, "search stopped (%s) %s, not within the %g %% resolution (%s)",
                     why, where, d->opts.resolution * 100, crit);
        else
            snprintf(line, len, "search stopped (%s) before any rate was judged held or not: the knee "
                     "is not bracketed (%s)", why, crit);
    } else if (!strcmp(d->step, "located")) {
        confirmed(conf, sizeof(conf), d);
        snprintf(line, len, "knee between %s and %s req/s (resolution %g %%, %s), %s", lo, hi,
                 d->opts.resolution * 100, crit, conf);
        return 0;
    } else if (!strcmp(d->step, "max-rate")) {
        rate_text(lo, sizeof(lo), d->opts.max_rate);
        snprintf(line, len, "no knee up to %s req/s: every rate held up to --max-rate (%s)",
                 lo, crit);
    } else if (!strcmp(d->step, "min-rate")) {
        rate_text(lo, sizeof(lo), d->opts.min_rate);
        snprintf(line, len, "no rate held down to --min-rate %s req/s (%s)", lo, crit);
    } else {
        snprintf(line, len, "knee %s%s req/s: the client could not prove %s req/s on this "
                 "host (%s)", d->lo ? "above " : "not located below ", d->lo ? lo : hi, hi, crit);
    }
    return 1;
}

/* ---- report.md ---------------------------------------------------------------------------- */

static const char *ms(char *b, size_t len, double us)
{
    if (!isfinite(us))
        return "-";
    return kb_text_us(b, len, us);
}

static const char *num(char *b, size_t len, const char *fmt, double v)
{
    if (!isfinite(v))
        return "-";
    snprintf(b, len, fmt, v);
    return b;
}

static void md_rows(FILE *f, const struct kb_knee_doc *d)
{
    fprintf(f, "## Rates\n\n| rate (req/s) | samples | held | median delivery | median p99 | "
               "hold | row |\n|---:|---:|---:|---:|---:|---|---|\n");
    for (size_t i = 0; i < d->nrows; i++) {
        const struct kb_knee_row *w = &d->rows[i];
        char r[32], del[32], p99[32];
        fprintf(f, "| %s | %d | %d/%d | %s | %s | %s | %s%s |\n", rate_text(r, sizeof(r), w->rate),
                w->n, w->held_n, w->trusted, num(del, sizeof(del), "%.1f %%", w->delivery * 100),
                ms(p99, sizeof(p99), w->p99_us),
                !w->hold_n ? "" : !w->hold_trusted ? "untrusted" : w->hold_ok ? "held" : "not held",
                kb_knee_row_state_name(w->state),
                w->rate == d->lo ? " (lo)" : w->rate == d->hi ? " (hi)" : "");
    }
    fprintf(f, "\n");
    kb_text_para(f, "held/trusted counts the samples controlled on their own figures among "
                 "those the client could not have decided; a row is held when the medians of "
                 "its trusted samples meet the criteria, failed when a sample had errors or "
                 "wrong responses, untrusted when every sample was client-limited. hold: the "
                 "held end's long sample, which outranks the short ones (a backlog they hide "
                 "shows in it). lo is the highest held rate below hi, the lowest rate not held.");
}

/* A sample's reason, noted where its verdict is not controlled. */
static const char *note_of(const struct kb_knee_fig *x)
{
    return strcmp(x->verdict, "controlled") && x->reason[0] ? x->reason : NULL;
}

static void md_samples(FILE *f, const struct kb_knee_doc *d)
{
    struct kb_text_notes nt = { 0 };
    int have_cpu = 0, have_conns = 0;
    for (size_t i = 0; i < d->n; i++) {
        have_cpu |= isfinite(d->f[i].cpu_us_per_response);
        have_conns |= isfinite(d->f[i].conns_per_request);
        if (note_of(&d->f[i]))
            kb_text_note_add(&nt, note_of(&d->f[i]));
    }
    fprintf(f, "## Samples in the order taken\n\n| # | rate | why | verdict | delivery | p99 | "
               "less client | steal |%s%s\n|---:|---:|---|---|---:|---:|---:|---:|%s%s\n",
            have_cpu ? " us/resp |" : "", have_conns ? " conn/req |" : "",
            have_cpu ? "---:|" : "", have_conns ? "---:|" : "");
    for (size_t i = 0; i < d->n; i++) {
        const struct kb_knee_fig *x = &d->f[i];
        char r[32], del[32], p99[32], lc[32], st[32], cpu[32], ref[16] = "";
        if (note_of(x))
            snprintf(ref, sizeof(ref), " [%zu]", kb_text_note_use(&nt, note_of(x)));
        fprintf(f, "| %zu | %s | %s%s | %s%s%s | %s | %s%s | %s | %s |", i + 1,
                rate_text(r, sizeof(r), x->rate), x->why, x->hold ? " (long)" : "", x->verdict, ref, x->resumed ? "*" : "",
                num(del, sizeof(del), "%.1f %%", x->delivery * 100), x->p99_is_bound ? ">=" : "",
                ms(p99, sizeof(p99), x->p99_us), ms(lc, sizeof(lc), x->less_client_p99_us),
                num(st, sizeof(st), "%.0f %%", x->server_steal_max * 100));
        if (have_cpu)
            fprintf(f, " %s |", num(cpu, sizeof(cpu), "%.1f", x->cpu_us_per_response));
        if (have_conns)
            fprintf(f, " %s |", num(cpu, sizeof(cpu), "%.2f", x->conns_per_request));
        fprintf(f, "\n");
    }
    fprintf(f, "\n");
    kb_text_notes_print(f, &nt);
    kb_text_notes_free(&nt);
    kb_text_para(f, "why: the step that asked for the sample -- start, rise (every rate so "
                 "far held), fall (none held yet), bisect (the bracket was wider than the "
                 "resolution), confirm lo / confirm hi (another sample of the bracket's ends), "
                 "hold lo (the located held end sampled for the hold's length), retake (the "
                 "client could have decided the last one).");
    kb_text_para(f, "p99 is corrected (from each request's intended send time); less client "
                 "is the same without the client's own delay in each request, which decides "
                 "whether the client is trusted. steal is the largest share of a second the "
                 "host withheld from the server's CPUs.%s%s%s",
                 have_cpu ? " us/resp is the server's CPU time per response over the measured "
                            "interval." : "",
                 have_conns ? " conn/req is the connections each measured request needed: "
                              "the server closed its connections, and each close was followed "
                              "by a reconnect whose time counts in the next request's latency "
                              "(1.00: a new connection for every request)." : "",
                 d->n && d->f[0].resumed ? " * read back from an earlier, interrupted run." : "");
}

static void md_method(FILE *f, const struct kb_knee_doc *d)
{
    const json_t *pt = json_object_get(d->plan, "point");
    char crit[96];
    fprintf(f, "## How it was searched\n\n");
    kb_text_para(f, "Target %s; a right response: %s. Each sample is an open-loop load at a "
                 "fixed rate: %.0f s warmup, %.0f s measured, %.0f s drain, %d connections, "
                 "latency from each request's intended send time. Criteria: %s.", d->url,
                 d->expect, kb_jnum(pt, "warmup_s", NULL), kb_jnum(pt, "duration_s", NULL),
                 kb_jnum(pt, "drain_s", NULL), (int)kb_jnum(pt, "connections", NULL),
                 criteria_text(crit, sizeof(crit), &d->opts));
    kb_text_para(f, "The rate rose from %ld req/s by x%g until a rate was not held, then the "
                 "bracket was halved (geometric mean) until it was within %g %%; its two ends "
                 "were then sampled until each had %d trusted samples (fewer when they agreed "
                 "so plainly that no further sample could move the median). A sample the "
                 "client could have decided is retaken and left out of the medians. "
                 "Samples took %.0f s in this invocation.", d->opts.start_rate, d->opts.factor,
                 d->opts.resolution * 100, d->opts.confirm, d->elapsed_s);
    if (d->opts.hold)
        kb_text_para(f, "Once located, the held end was sampled once more for %.0f s after "
                     "%.0f s of warmup, as long as a contract point: a rate a fraction e past "
                     "the server's capacity adds e x T seconds of backlog over T seconds, so a "
                     "short sample lets through a rate a few percent past the knee and the long "
                     "one does not. Where it was not held, the bracket moved down and the "
                     "search went on.", d->hold_s, kb_jnum(json_object_get(d->plan, "search"),
                     "hold_warmup_s", NULL));
}

/* What the run found before its first sample (knee.json's setup; none in a run from before
 * it was kept): the first requests' answer, the server, the CPUs, and the shared-CPU
 * sentence, said before any figure. */
static void md_setup(FILE *f, const struct kb_knee_doc *d)
{
    const json_t *t = json_object_get(d->setup, "trial");
    const char *shared = kb_jstr(d->setup, "shared_cpus", "");
    if (!d->setup)
        return;
    if (shared[0])
        kb_text_para(f, "%s", shared);
    kb_text_para(f, "Before the first sample: the first requests got status %d, %lld body "
                 "bytes, %s%s, %s%s. %s; client CPUs %s.", (int)kb_jnum(t, "status", NULL),
                 (long long)kb_jnum(t, "body_bytes", NULL),
                 kb_jstr(t, "server_header", "")[0] ? "Server: " : "no Server header",
                 kb_jstr(t, "server_header", ""),
                 json_is_true(json_object_get(t, "kept_alive")) ? "the connection kept alive"
                 : "the connection closed after each response",
                 json_is_true(json_object_get(d->setup, "reconnect"))
                     ? " (a close is followed by a reconnect, counted in conn/req)" : "",
                 kb_jstr(d->setup, "server", "server: unknown"),
                 kb_jstr(d->setup, "client_cpus", "?"));
}

static int write_md(FILE *f, const void *arg)
{
    const struct kb_knee_doc *d = arg;
    char line[512];
    fprintf(f, "# kneebench knee\n\n");
    kb_knee_headline(d, line, sizeof(line));
    kb_text_para(f, "**%s**", line);
    md_setup(f, d);
    kb_text_para(f, "Chart: charts/knee.svg (p99 and delivery against the rate, every sample).");
    md_rows(f, d);
    md_samples(f, d);
    md_method(f, d);
    return 0;
}

/* ---- report.csv and report.json ------------------------------------------------------------- */

static void csv_num(FILE *f, double v, const char *fmt, char end)
{
    if (isfinite(v))
        fprintf(f, fmt, v);
    fputc(end, f);
}

static int write_csv(FILE *f, const void *arg)
{
    const struct kb_knee_doc *d = arg;
    fprintf(f, "step,rate_rps,sample,why,verdict,server_verdict,delivery,achieved_rps,"
               "p99_ms,p99_is_bound,less_client_p99_ms,client_delay_p99_ms,"
               "server_cpu_us_per_response,server_rss_max_mib,server_pss_max_mib,"
               "server_fds_max,server_steal_max,client_steal_max,dir\n");
    for (size_t i = 0; i < d->n; i++) {
        const struct kb_knee_fig *x = &d->f[i];
        fprintf(f, "%zu,%ld,%d,\"%s\",%s,%s,", i + 1, x->rate, x->sample, x->why, x->verdict,
                x->server_verdict);
        csv_num(f, x->delivery, "%.6f", ',');
        csv_num(f, x->achieved_rps, "%.2f", ',');
        csv_num(f, x->p99_us / 1000, "%.3f", ',');
        fprintf(f, "%d,", x->p99_is_bound);
        csv_num(f, x->less_client_p99_us / 1000, "%.3f", ',');
        csv_num(f, x->client_delay_p99_us / 1000, "%.3f", ',');
        csv_num(f, x->cpu_us_per_response, "%.3f", ',');
        csv_num(f, x->rss_max_bytes / 1048576, "%.2f", ',');
        csv_num(f, x->pss_max_bytes / 1048576, "%.2f", ',');
        csv_num(f, x->fds_max, "%.0f", ',');
        csv_num(f, x->server_steal_max, "%.4f", ',');
        csv_num(f, x->client_steal_max, "%.4f", ',');
        fprintf(f, "%s\n", x->dir);
    }
    return 0;
}

static json_t *rows_json(const struct kb_knee_doc *d)
{
    json_t *a = json_array();
    for (size_t i = 0; i < d->nrows; i++) {
        const struct kb_knee_row *w = &d->rows[i];
        json_array_append_new(a, json_pack("{s:I,s:i,s:i,s:i,s:o,s:o,s:s,s:b,s:i,s:i,s:b}",
            "rate_rps", (json_int_t)w->rate, "samples", w->n, "trusted", w->trusted, "held",
            w->held_n, "median_delivery", kb_json_figure(w->delivery), "median_p99_ms",
            kb_json_figure(w->p99_us / 1000), "state", kb_knee_row_state_name(w->state),
            "settled", w->settled, "hold_samples", w->hold_n, "hold_trusted", w->hold_trusted,
            "hold_held", w->hold_ok));
    }
    return a;
}

static json_t *samples_json(const struct kb_knee_doc *d)
{
    json_t *a = json_array();
    for (size_t i = 0; i < d->n; i++) {
        const struct kb_knee_fig *x = &d->f[i];
        json_array_append_new(a, json_pack("{s:i,s:I,s:i,s:b,s:s,s:s,s:s,s:o,s:o,s:o,s:o,s:s,s:o}",
            "step", (int)i + 1, "rate_rps", (json_int_t)x->rate, "sample", x->sample, "hold",
            x->hold, "why",
            x->why, "verdict", x->verdict, "server_verdict", x->server_verdict, "delivery",
            kb_json_figure(x->delivery), "p99_ms", kb_json_figure(x->p99_us / 1000),
            "less_client_p99_ms", kb_json_figure(x->less_client_p99_us / 1000),
            "server_cpu_us_per_response", kb_json_figure(x->cpu_us_per_response), "dir",
            x->dir, "connections_per_request", kb_json_figure(x->conns_per_request)));
    }
    return a;
}

static json_t *report_json(const struct kb_knee_doc *d)
{
    char line[512];
    int code = kb_knee_headline(d, line, sizeof(line));
    return json_pack("{s:i,s:s,s:s,s:i,s:s,s:s,s:o,s:o,s:f,s:f,s:{s:s,s:s},s:O,s:O,s:o,s:o}",
        "schema_version", 1, "kind", "knee", "headline", line, "exit", code, "end", d->end,
        "step", d->step, "lo_rps", d->lo ? json_integer(d->lo) : json_null(),
        "hi_rps", d->hi ? json_integer(d->hi) : json_null(), "resolution", d->opts.resolution,
        "elapsed_s", d->elapsed_s, "target", "url", d->url, "expect", d->expect,
        "criteria", json_object_get(d->plan, "criteria"),
        "search", json_object_get(d->plan, "search"),
        "rows", rows_json(d), "samples", samples_json(d));
}

/* report.json with the setup beside the rest (null for a run from before it was kept). */
static json_t *report_json_all(const struct kb_knee_doc *d)
{
    json_t *o = report_json(d);
    json_object_set(o, "setup", d->setup ? d->setup : json_null());
    return o;
}

/* ---- writing ----------------------------------------------------------------------------- */

static int write_one(const char *dir, const char *name, const struct kb_knee_doc *d,
                     int (*fn)(FILE *, const void *), char *err, size_t errlen)
{
    char path[KB_PATH_MAX];
    return kb_afile_write_with(kb_path(path, sizeof(path), dir, name), fn, d, err, errlen);
}

static int write_svg(FILE *f, const void *d)
{
    kb_knee_svg(f, d);
    return ferror(f) ? -1 : 0;
}

int kb_knee_report_write(const char *dir, const struct kb_knee_doc *d, char *err,
                         size_t errlen)
{
    char charts[KB_PATH_MAX], path[KB_PATH_MAX];
    json_t *j;
    int rc;
    kb_path(charts, sizeof(charts), dir, "charts");
    if (kb_mkdirs(charts, err, errlen) || write_one(charts, "knee.svg", d, write_svg, err, errlen) ||
        write_one(dir, "report.csv", d, write_csv, err, errlen) ||
        write_one(dir, "report.md", d, write_md, err, errlen))
        return -1;
    j = report_json_all(d);
    rc = kb_write_json_atomic(kb_path(path, sizeof(path), dir, "report.json"), j, err, errlen);
    json_decref(j);
    return rc;
}

int kb_knee_report_is_knee(const char *dir)
{
    char path[KB_PATH_MAX];
    return kb_file_exists(kb_path(path, sizeof(path), dir, "knee.json"));
}
