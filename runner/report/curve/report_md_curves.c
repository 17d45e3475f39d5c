/* report_md_curves.c -- report.md's curves: per route, one small table per runtime (no
 * runtime column, so it fits a terminal) with the figures a reader compares -- achieved,
 * delivery, p50, p99, max, errors, verdict -- and a numbered note for each reason several
 * rows share; each runtime's latency over time at its first uncontrolled point; and a
 * profile's readiness curve beside the paper's. Every percentile and the client's figures
 * are in report.csv, report.json and report.html. */
#define _GNU_SOURCE
#include "runner/report/report.h"
#include "runner/report/report_int.h"
#include "runner/report/report_text.h"
#include "runner/util/jfield.h"

#include <math.h>
#include <stdlib.h>
#include <string.h>

#define para kb_text_para

static const char *js(json_t *o, const char *k)
{
    return kb_jstr(o, k, "?");
}

/* What an uncontrolled row missed, from its own medians, in the table's short words
 * ("delivery p99 unanswered", said once above the tables); "" when none shows (the
 * verdict's reason then says it, as a note). */
static const char *missed(char *b, size_t len, const struct kb_report *r,
                          const struct kb_cell *w)
{
    b[0] = '\0';
    if (w->delivery.med < r->min_delivery)
        snprintf(b + strlen(b), len - strlen(b), "delivery");
    if (w->p99.n && w->p99.med >= r->max_p99_us)
        snprintf(b + strlen(b), len - strlen(b), "%sp99", b[0] ? " " : "");
    if (w->scheduled > 0 && (double)w->unanswered > 0.01 * (double)w->scheduled)
        snprintf(b + strlen(b), len - strlen(b), "%sunanswered", b[0] ? " " : "");
    return b;
}

/* The reason a row's verdict needs said, into b, or NULL: none for a controlled row, nor for
 * an uncontrolled one whose medians show what it missed; the host's theft where it could
 * explain the verdict; else the verdict's own reason, and for a client-limited row what its
 * own figures gave. */
static const char *note_text(char *b, size_t len, const struct kb_report *r,
                             const struct kb_cell *w)
{
    char buf[128];
    if (w->n > 0 && !strcmp(w->verdict, "controlled") && w->queue_grew_n)
        return snprintf(b, len, "p99 under %g ms but its queue grew: the median latency rose "
                        "every measured second, so a longer point at this rate would miss "
                        "(%d of %d sample(s); verdict.json: backlog)", r->max_p99_us / 1000,
                        w->queue_grew_n, w->n), b;
    if (w->n == 0 || !strcmp(w->verdict, "controlled"))
        return NULL;
    if (w->host_could_decide && !strcmp(w->verdict, "uncontrolled"))
        return snprintf(b, len, "the host withheld enough of the server's CPU (steal) during "
                        "this point to explain its verdict (verdict.json: host)"), b;
    if (!strcmp(w->verdict, "uncontrolled") && missed(buf, sizeof(buf), r, w)[0])
        return NULL;
    if (!strcmp(w->verdict, "client-limited"))
        snprintf(b, len, "%s; its own figures: %s", w->reason[0] ? w->reason : "client-limited",
                 w->server_verdict[0] ? w->server_verdict : "unknown");
    else
        snprintf(b, len, "%s", w->reason);
    return b[0] ? b : NULL;
}

static const struct kb_cell *planned_row(const struct kb_report *r, size_t i, size_t j,
                                               size_t k)
{
    const struct kb_cell *w = kb_report_row(r, kb_report_runtime(r, i),
                                                  kb_report_route(r, j), kb_report_rate(r, k));
    return w && w->planned ? w : NULL;
}

/* Pass one: every row's note, counted, in the order the tables will print them. */
static void collect_notes(const struct kb_report *r, struct kb_text_notes *nt)
{
    memset(nt, 0, sizeof(*nt));
    for (size_t j = 0; j < kb_report_nroutes(r); j++)
        for (size_t i = 0; i < kb_report_nruntimes(r); i++)
            for (size_t k = 0; k < kb_report_nrates(r); k++) {
                const struct kb_cell *w = planned_row(r, i, j, k);
                char b[1024];
                const char *t = w ? note_text(b, sizeof(b), r, w) : NULL;
                if (t)
                    kb_text_note_add(nt, t);
            }
}

/* The errors by kind, only those that happened: "0", or e.g. "to 12, http 5" (socket
 * errors, timeouts before the drain's end, non-2xx, mismatched responses). */
static const char *error_kinds(char *b, size_t len, const struct kb_cell *w)
{
    const long long v[] = { w->err_io, w->err_timeout, w->non2xx, w->mismatches };
    static const char *const name[] = { "io", "to", "http", "mm" };
    size_t n = 0;
    b[0] = '\0';
    for (int k = 0; k < 4; k++)
        if (v[k] && n < len)
            n += (size_t)snprintf(b + n, len - n, "%s%s %lld", n ? ", " : "", name[k], v[k]);
    if (!n)
        snprintf(b, len, "0");
    return b;
}

/* The paper's column, where the table has one: its figures at this point, or blank. */
static void paper_cell(FILE *f, const struct kb_report *r, const struct kb_cell *w,
                       int paper)
{
    char b[256];
    if (paper)
        fprintf(f, " %s |", kb_report_paper_cell(b, sizeof(b), kb_report_paper_point(
                                 r, w->runtime, w->route, w->rate)));
}

static void curve_row(FILE *f, const struct kb_report *r, const struct kb_cell *w,
                      struct kb_text_notes *nt, int paper)
{
    char a[24], d[24], p50[24], p99[24], why[128], b[1024], e[96];
    const char *t = note_text(b, sizeof(b), r, w);
    size_t ref = t ? kb_text_note_use(nt, t) : 0;
    if (ref)
        snprintf(why, sizeof(why), "[%zu]", ref);
    else
        missed(why, sizeof(why), r, w);
    fprintf(f, "| %ld | %d | %s | %s | %s | %s |", w->rate, w->n,
            kb_text_med(a, sizeof(a), w->achieved, 1, "%.0f"),
            kb_text_med(d, sizeof(d), w->delivery, 100, "%.1f %%"),
            kb_text_lat(p50, sizeof(p50), w->p50), kb_text_lat(p99, sizeof(p99), w->p99));
    paper_cell(f, r, w, paper);
    fprintf(f, " %s | %s | %s |\n", error_kinds(e, sizeof(e), w), w->verdict, why);
}

/* One runtime's curve on one route. */
static void runtime_table(FILE *f, const struct kb_report *r, size_t i, size_t j,
                          struct kb_text_notes *nt)
{
    int any = 0, paper = kb_report_paper_any(r, kb_report_runtime(r, i), kb_report_route(r, j));
    for (size_t k = 0; k < kb_report_nrates(r); k++) {
        const struct kb_cell *w = planned_row(r, i, j, k);
        if (!w && !kb_report_row(r, kb_report_runtime(r, i), kb_report_route(r, j),
                                 kb_report_rate(r, k)))
            continue;
        if (w && !any++)
            fprintf(f, "#### %s, %s\n\n| req/s | n | achieved/s | delivery | p50 | p99 |%s "
                    "errors | verdict | missed |\n|---:|---:|---:|---:|---:|---:|%s---:|---|---|\n",
                    kb_report_runtime(r, i), kb_report_route(r, j),
                    paper ? " paper's host (orientation) |" : "", paper ? "---|" : "");
        if (!w)
            continue;
        if (w->n == 0) {
            fprintf(f, "| %ld | 0 | | | | |", w->rate);
            paper_cell(f, r, w, paper);
            fprintf(f, " | missing | no evidence |\n");
        } else {
            curve_row(f, r, w, nt, paper);
        }
    }

    if (any) {
        fprintf(f, "\n");
        kb_text_notes_print(f, nt);
    }
}

/* Per runtime, the latency-over-time chart of its first uncontrolled point on route. */
static void series_links(FILE *f, const struct kb_report *r, const char *route)
{
    int any = 0;
    for (size_t i = 0; i < kb_report_nruntimes(r); i++) {
        const char *rt = kb_report_runtime(r, i);
        const struct kb_report_series *s = kb_report_series_of(r, rt, route);
        char x[32] = "-", y[32] = "-", *line;
        if (!s)
            continue;
        if (!any++)
            fprintf(f, "Latency over time at each runtime's first uncontrolled point on %s "
                    "(corrected p50,\np99 and max in each second; where the queue forms):\n\n",
                    route);
        if (!s->n) {
            fprintf(f, "- %s at %ld req/s: no chart: %s\n", rt, s->rate, s->note);
            continue;
        }
        if (s->v[0].p99_us >= 0)
            snprintf(x, sizeof(x), "%s", s->v[0].p99_bound ? ">= " : "");
        if (s->v[0].p99_us >= 0)
            kb_text_us(x + strlen(x), sizeof(x) - strlen(x), s->v[0].p99_us);
        if (s->v[s->n - 1].p99_us >= 0)
            snprintf(y, sizeof(y), "%s", s->v[s->n - 1].p99_bound ? ">= " : "");
        if (s->v[s->n - 1].p99_us >= 0)
            kb_text_us(y + strlen(y), sizeof(y) - strlen(y), s->v[s->n - 1].p99_us);
        line = NULL;
        if (asprintf(&line, "- %s at %ld req/s%s: p99 %s in the first second, %s in the last "
                     "(%zu s)", rt, s->rate, s->past_margin ? " (client-limited; its own "
                     "figures past the criteria)" : "", x, y, s->n) >= 0)
            kb_text_wrap(f, line);
        free(line);
        fprintf(f, "  ![%s %ld](charts/series-%s-%s.svg)\n", rt, s->rate, rt, route);
    }
    if (!any)
        fprintf(f, "No runtime had an uncontrolled point on %s.\n", route);
    fprintf(f, "\n");
}

static void curves_intro(FILE *f, const struct kb_report *r)
{
    int repeats = 0;
    for (size_t i = 0; i < r->nrows; i++)
        repeats |= r->rows[i].n > 1;
    fprintf(f, "## Curves\n\n");
    para(f, "Per route and runtime, every rate planned. n: the samples at that rate (repeats "
         "and confirmation samples)%s. Latency is corrected: measured from each request's "
         "intended send time. \">= \" marks a figure that is only a lower bound (requests still "
         "unanswered when the drain ended count at drain end minus their intended time, so the "
         "true value is at least that); \"-\" means no figure was recorded. Errors, by kind "
         "and only those that happened: io socket errors, to timeouts before the drain ended, "
         "http non-2xx responses, mm mismatched responses; any of them fails a point (requests "
         "merely unanswered when the drain ended count against delivery and under missed). "
         "Missed: what an uncontrolled point missed, of delivery (< %.0f %%), p99 (>= %g ms) "
         "and unanswered (more than 1 %% of its requests still unanswered when the drain "
         "ended); a bracketed number is a note below the table. Every percentile, the error kinds apart, "
         "the client's own delay and the server's CPU and memory are in report.csv and "
         "report.html.", repeats ? "; with more than one, every figure is their median" : "",
         100 * r->min_delivery, r->max_p99_us / 1000);
    for (size_t i = 0; i < kb_report_nruntimes(r); i++)
        for (size_t j = 0; j < kb_report_nroutes(r); j++)
            if (kb_report_paper_any(r, kb_report_runtime(r, i), kb_report_route(r, j))) {
                para(f, "Paper's host: where the first paper gives figures for a runtime on a "
                     "route at one of this run's rates, they sit in a column of their own "
                     "beside this run's, as the paper states them, with the section that "
                     "states them (blank at a rate it gives none for), measured on %s. Orientation, never "
                     "a target: another host, CPU and client (wrk2); no verdict here reads "
                     "them.", kb_jstr(r->published, "host", "the papers' host"));
                return;
            }
}

void kb_report_md_curves(FILE *f, const struct kb_report *r)
{
    struct kb_text_notes *nt = calloc(1, sizeof(*nt));
    if (!nt)
        return;
    curves_intro(f, r);
    collect_notes(r, nt);
    for (size_t j = 0; j < kb_report_nroutes(r); j++) {
        const char *route = kb_report_route(r, j);
        fprintf(f, "### %s\n\n", route);
        for (size_t i = 0; i < kb_report_nruntimes(r); i++)
            runtime_table(f, r, i, j, nt);
        fprintf(f, "![achieved vs requested, %s](charts/achieved-%s.svg)\n"
                "![corrected p99 vs requested, %s](charts/p99-%s.svg)\n\n", route, route, route,
                route);
        series_links(f, r, route);
    }
    kb_text_notes_free(nt);
    free(nt);
}

/* ---- a profile's readiness curve beside the paper's ----------------------------------- */

/* One curve's cells: achieved, delivery, corrected p99 ("-" where the curve lacks the rate). */
static void curve_cells(FILE *f, const struct kb_knee_point *p)
{
    char b[64], a[32], d[32];
    struct kb_stat lat = { .med = p->p99_us, .min = p->p99_us, .max = p->p99_us, .n = 1,
                           .bound = p->p99_bound };
    if (!p->present) {
        fprintf(f, " - | - | - |");
        return;
    }
    snprintf(a, sizeof(a), isnan(p->achieved_rps) ? "-" : "%.0f", p->achieved_rps);
    snprintf(d, sizeof(d), isnan(p->delivery) ? "-" : "%.1f %%", 100 * p->delivery);
    fprintf(f, " %s | %s | %s |", a, d, isnan(p->p99_us) ? "-" : kb_text_lat(b, sizeof(b), lat));
}

/* Where a curve's knee lies, and what its first missed point missed. */
static void knee_line(FILE *f, const char *who, const struct kb_knee *k)
{
    const char *what = k->missed_delivery && k->missed_p99 ? "both delivery and corrected p99"
                       : k->missed_delivery ? "delivery" : k->missed_p99 ? "corrected p99"
                       : "its verdict (errors or unanswered requests)";
    if (!k->npoints)
        para(f, "%s: no point of this curve.", who);
    else if (!k->first_missed)
        para(f, "%s: every rate held up to %ld req/s: the knee lies above it.", who, k->last_held);
    else if (!k->last_held)
        para(f, "%s: the lowest rate, %ld req/s, already missed %s: the knee lies below it.",
             who, k->first_missed, what);
    else
        para(f, "%s: the knee lies between %ld and %ld req/s; at %ld it missed %s%s.", who,
             k->last_held, k->first_missed, k->first_missed, what,
             k->still_rising ? ", while achieved still rose: the queue showed in corrected "
                               "latency before throughput stopped" : "");
}

/* Where this run's three roles ran (plan.json's placement), and which of them shared CPUs. */
static void placement_line(FILE *f, const struct kb_report *r)
{
    json_t *pl = json_object_get(r->plan, "placement");
    if (!pl) {
        para(f, "This run's plan records no PostgreSQL placement (written by an older kneebench).");
        return;
    }
    para(f, "This run's placement: server CPUs %s, client CPUs %s, PostgreSQL CPUs %s (%s)%s%s.",
         js(pl, "server"), js(pl, "client"), js(pl, "db"),
         json_is_true(json_object_get(r->plan, "db_cpus_declared")) ? "--db-cpus" : "by default",
         json_is_true(json_object_get(pl, "disjoint")) ? ", disjoint" : "; ",
         json_is_true(json_object_get(pl, "disjoint")) ? "" : js(pl, "note"));
}

void kb_report_md_readiness(FILE *f, const struct kb_report *r)
{
    long rates[64];
    struct kb_knee_point paper[64], run[64];
    struct kb_knee pk, rk;
    size_t n = kb_report_curve_rates(r, rates, 64);
    if (!n)
        return;
    /* the curve's own name: the readiness design's, or the blocking baseline's */
    fprintf(f, "## %s: %s %s, this run beside the paper's host\n\n",
            json_is_string(json_object_get(r->published_curve, "title"))
                ? js(r->published_curve, "title") : "Readiness curve",
            js(r->published_curve, "runtime"), js(r->published_curve, "route"));
    fprintf(f, "| req/s | paper: achieved | delivery | p99 | this run: achieved | delivery | "
               "p99 | verdict |\n|---:|---:|---:|---:|---:|---:|---:|---|\n");
    for (size_t i = 0; i < n; i++) {
        kb_report_curve_paper(r, rates[i], &paper[i]);
        kb_report_curve_run(r, rates[i], &run[i]);
        fprintf(f, "| %ld |", rates[i]);
        curve_cells(f, &paper[i]);
        curve_cells(f, &run[i]);
        fprintf(f, " %s |\n", run[i].present ? run[i].verdict : "-");
    }
    fprintf(f, "\n");
    kb_report_knee(paper, n, r->min_delivery, r->max_p99_us, &pk);
    kb_report_knee(run, n, r->min_delivery, r->max_p99_us, &rk);
    para(f, "Read as the paper reads it, delivery and corrected latency together: a rate holds "
         "when delivery >= %.0f %% and corrected p99 < %g ms (this run: the point's own "
         "figures, whether or not the client was trusted), and the knee lies between the last "
         "rate that held with every rate below it and the next.", 100 * r->min_delivery,
         r->max_p99_us / 1000);
    knee_line(f, "Paper's host", &pk);
    knee_line(f, "This run", &rk);
    placement_line(f, r);
    para(f, "PostgreSQL: the papers ran PostgreSQL 16; this run's is %s (run.json).",
         kb_jstr(json_object_get(r->run, "runtime_versions"), "postgresql",
                 "not recorded"));
    for (size_t i = 0, untrusted = 0; i < n; i++)
        if (run[i].present && !strcmp(run[i].verdict, "client-limited") && !untrusted++)
            para(f, "Some of this run's points are client-limited (the client's own delay could "
                 "have decided them; see Client margin): their figures still place the knee, "
                 "but as the server's own, not as proven points.");
    /* the host line says what the paper's host had (two CPUs for the readiness curve, one
     * for the blocking baseline): nothing here restates it */
    para(f, "Paper's host: %s (%s). Not a target: there wrk2 drove it; here the contract's "
         "limits and kneebench load apply, on this host's CPUs, with PostgreSQL on the CPUs "
         "plan.json records (db_cpus, placement). Read this run's knee, not its distance from "
         "the paper's.", js(r->published_curve, "host"), js(r->published_curve, "source"));
}

/* What a cell's refinement ended on, for a reader. */
static const char *refine_end(const char *step)
{
    if (!strcmp(step, "located"))
        return "located";
    if (!strcmp(step, "max-rate"))
        return "the grid's next rate held after all: the knee is at or above it";
    if (!strcmp(step, "min-rate"))
        return "the grid's highest held rate did not hold on its own samples";
    if (!strcmp(step, "client"))
        return "the client could not prove a rate in between";
    if (!strcmp(step, "grid"))
        return "it wanted another sample of a grid rate, the confirmation's to take";
    return "not finished (interrupted: re-run to resume)";
}

void kb_report_md_refined(FILE *f, const struct kb_report *r)
{
    json_t *cells = json_object_get(r->refine, "cells"), *c;
    size_t i;
    if (!json_array_size(cells))
        return;
    fprintf(f, "## Refined knees\n\n");
    kb_text_para(f, "With `--refine`, each cell whose highest controlled rate has a next grid "
                 "rate was bisected between the two (geometric means, three significant digits) "
                 "until the bracket was within %g %%, the bracket's ends confirmed by %d samples "
                 "as the grid's boundary is; a client-limited sample was retaken and left out "
                 "(docs/protocol.md, \"Refined knees\"). Its points are "
                 "points/<runtime>-<route>-<rate>-f<k>/.",
                 json_number_value(json_object_get(r->refine, "resolution")) * 100,
                 (int)json_integer_value(json_object_get(r->refine, "confirm_samples")));
    if (json_number_value(json_object_get(r->refine, "hold_s")) > 0)
        kb_text_para(f, "Once located, each held end was loaded once more for %g s after %g s "
                     "of warmup, as a paper point is (points/<runtime>-<route>-<rate>-h<k>/); "
                     "where it did not hold, the bracket moved below it.",
                     json_number_value(json_object_get(r->refine, "hold_s")),
                     json_number_value(json_object_get(r->refine, "hold_warmup_s")));
    json_array_foreach(cells, i, c) {
        json_t *rates = json_object_get(c, "rates"), *v;
        size_t k;
        const char *step = json_string_value(json_object_get(c, "step"));
        fprintf(f, "- %s %s: grid cells: held %lld, next %lld",
                json_string_value(json_object_get(c, "runtime")),
                json_string_value(json_object_get(c, "route")),
                (long long)json_integer_value(json_object_get(c, "grid_lo_rps")),
                (long long)json_integer_value(json_object_get(c, "grid_hi_rps")));
        if (step && !strcmp(step, "located"))
            fprintf(f, "; refined (the answer): %lld held, %lld did not",
                    (long long)json_integer_value(json_object_get(c, "lo_rps")),
                    (long long)json_integer_value(json_object_get(c, "hi_rps")));
        else
            fprintf(f, "; %s", refine_end(step ? step : ""));
        fprintf(f, "; bisected at");
        json_array_foreach(rates, k, v)
            fprintf(f, "%s %lld", k ? "," : "", (long long)json_integer_value(v));
        fprintf(f, "%s\n", json_array_size(rates) ? "" : " none");
    }
    fprintf(f, "\n");
}
