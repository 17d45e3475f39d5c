/* report_html.c -- report.html: the report as one self-contained page. The answer first
 * (the same cells as report.md, from kb_report_answer_text, with the figures behind each
 * cell in data- attributes), how each cell was confirmed, the cost per response, the curves
 * (the same SVG drawings as charts/, inline), every point's latency in each second as a grid
 * of small charts, and each point's evidence linked. CSS and SVG inline, a few lines of plain
 * script for a readout of the mark under the pointer; nothing is fetched, so the page opens
 * from a disk, an archive or a mail attachment as it opened here. */
#define _GNU_SOURCE
#include "runner/report/report.h"
#include "runner/util/atomicfile.h"
#include "runner/report/svgkit.h"
#include "runner/report/report_int.h"
#include "runner/report/report_text.h"
#include "runner/util/evidence.h"
#include "runner/util/paths.h"
#include "runner/util/jfield.h"

#include <math.h>
#include <stdlib.h>
#include <string.h>


static const char *js(json_t *o, const char *k)
{
    return kb_jstr(o, k, "?");
}

static const char STYLE[] =
    "body{font-family:sans-serif;margin:24px auto;max-width:1100px;color:#222;line-height:1.4}"
    "h1{font-size:1.5em}h2{border-bottom:1px solid #ccc;padding-bottom:2px;margin-top:2em}"
    "table{border-collapse:collapse;margin:8px 0}td,th{border:1px solid #ccc;padding:3px 8px}"
    "th{background:#f4f4f4}td.n{text-align:right}.stamp{color:#c0392b;font-weight:bold}"
    ".charts svg{max-width:100%;height:auto;display:block;margin:8px 0}"
    ".grid{display:grid;gap:6px;align-items:start}.grid div{font-size:11px;color:#555;min-width:0}"
    ".grid svg{width:100%;height:auto;display:block}"
    "#readout{position:sticky;top:0;background:#fffbe6;border:1px solid #e6d89c;padding:4px 8px;"
    "min-height:1.4em;font-size:13px;z-index:1}.note{color:#555;font-size:13px}";

/* Shows the <title> of the mark under the pointer: the figures a reader asks for first. */
static const char SCRIPT[] =
    "(function(){var r=document.getElementById('readout');"
    "document.querySelectorAll('svg .mark, svg .bound, svg .second, svg.small')"
    ".forEach(function(m){m.addEventListener('mouseenter',function(){"
    "var t=m.querySelector('title');if(t){r.textContent=t.textContent;}});});})();";

static void head(FILE *f, const struct kb_report *r)
{
    fprintf(f, "<!DOCTYPE html>\n<html lang=\"en\"><head><meta charset=\"utf-8\">"
            "<meta name=\"viewport\" content=\"width=device-width\"><title>kneebench: %zu "
            "runtimes x %zu routes x %zu rates, ", kb_report_nruntimes(r), kb_report_nroutes(r),
            kb_report_nrates(r));
    kb_svg_xml(f, js(r->plan, "profile"));
    fprintf(f, " profile</title><style>%s</style></head><body>\n<h1>kneebench: %zu runtimes x "
            "%zu routes x %zu rates, ", STYLE, kb_report_nruntimes(r), kb_report_nroutes(r),
            kb_report_nrates(r));
    kb_svg_xml(f, js(r->plan, "profile"));
    fprintf(f, " profile</h1>\n");
    if (r->partial)
        fprintf(f, "<p class=\"stamp\">PARTIAL: %zu planned point(s) have no complete evidence "
                "and are left out.</p>\n", r->nmissing);
    if (r->unconstrained)
        fprintf(f, "<p class=\"stamp\">UNCONSTRAINED: no CPU, memory or process limit was "
                "applied.</p>\n");
    if (r->rd && r->rd->rejudge)
        fprintf(f, "<p class=\"stamp\">RE-JUDGED at corrected p99 &lt; %g ms and delivery "
                "&gt;= %g %%: %zu of %zu point(s) changed.</p>\n", r->max_p99_us / 1000,
                100 * r->min_delivery, json_array_size(r->rd->changed), r->rd->nchecked);
    fprintf(f, "<div id=\"readout\">Point at a mark in a chart for its figures.</div>\n");
}

/* One answer cell: the text report.md prints, the figures behind it as data- attributes. */
static void answer_cell(FILE *f, const struct kb_report *r, const char *rt, const char *route,
                        struct kb_answer_used *u)
{
    struct kb_report_answer a;
    char text[96];
    kb_report_answer_of(r, rt, route, &a);
    kb_report_answer_text(text, sizeof(text), r, rt, route, u);
    fprintf(f, "<td class=\"n answer\" data-route=\"");
    kb_svg_xml(f, route);
    fprintf(f, "\" data-proven=\"%ld\" data-bound=\"%d\" data-indicative=\"%ld\" "
            "data-below=\"%ld\" data-failed=\"%ld\">", a.proven, a.client_from != 0,
            a.indicative, a.below, a.failed_at);
    kb_svg_xml(f, text);
    fprintf(f, "</td>");
}

static void answer(FILE *f, const struct kb_report *r)
{
    size_t order[64];
    int rank[64];
    struct kb_answer_used u = { 0 };
    size_t n = kb_report_rank(r, order, rank, 64);
    fprintf(f, "<h2 id=\"answer\">Answer</h2>\n<p>The highest controlled rate per route, in "
            "req/s: delivery (achieved over requested rate) at least %.0f %% and corrected p99 "
            "(latency from each request's intended send time) under %g ms, with the load "
            "generator trusted (its own delay could not have changed the verdict).</p>\n"
            "<table id=\"answer-table\"><thead><tr><th>rank</th><th>runtime</th>",
            100 * r->min_delivery, r->max_p99_us / 1000);
    for (size_t j = 0; j < kb_report_nroutes(r); j++) {
        fprintf(f, "<th>");
        kb_svg_xml(f, kb_report_route(r, j));
        fprintf(f, "</th>");
    }
    fprintf(f, "<th>cost vs ");
    kb_svg_xml(f, kb_report_baseline_label(r));
    fprintf(f, "</th></tr></thead><tbody>\n");
    for (size_t i = 0; i < n; i++) {
        const char *rt = kb_report_runtime(r, order[i]);
        double e = kb_report_efficiency_ratio(r, rt);
        fprintf(f, "<tr data-runtime=\"");
        kb_svg_xml(f, rt);
        fprintf(f, "\"><td class=\"n\">%d</td><td>", rank[i]);
        kb_svg_xml(f, rt);
        fprintf(f, "</td>");
        for (size_t j = 0; j < kb_report_nroutes(r); j++)
            answer_cell(f, r, rt, kb_report_route(r, j), &u);
        e > 0 ? fprintf(f, "<td class=\"n\">%.2f</td>", e) : fprintf(f, "<td class=\"n\">-</td>");
        fprintf(f, "</tr>\n");
    }
    fprintf(f, "</tbody></table>\n<p class=\"note\">");
    if (u.bound)
        fprintf(f, "&gt;= N: the point above was client-limited, N a lower bound. ");
    if (u.unproven)
        fprintf(f, "M*: the runtime's own figures held while the client was not trusted: "
                "indicative. ");
    if (u.below)
        fprintf(f, "&lt; R: the lowest rate was already uncontrolled. ");
    if (u.past_margin)
        fprintf(f, "N^: above the client's calibrated margin, and held there (a controlled "
                "point is the server's at any rate). ");
    fprintf(f, "Cost: the server's CPU per response at the runtime's own highest held rate, as "
            "a ratio to ");
    kb_svg_xml(f, kb_report_baseline_label(r));
    fprintf(f, "'s%s. report.md says more of each.</p>\n",
            kb_report_baseline(r) ? "" : " (this run's plan names none: no ratio is given)");
}

/* report.md's "By how much": one sentence per runtime and route against the baseline. */
static void how_much(FILE *f, const struct kb_report *r)
{
    int any = 0;
    for (size_t j = 0; j < kb_report_nroutes(r); j++)
        for (size_t i = 0; i < kb_report_nruntimes(r); i++) {
            const char *rt = kb_report_runtime(r, i), *ro = kb_report_route(r, j);
            char *text;
            if (!kb_report_how_much_wanted(r, rt, ro) ||
                !(text = kb_report_how_much_text(r, rt, ro)))
                continue;
            if (!any++)
                fprintf(f, "<h3 id=\"how-much\">By how much</h3>\n<ul id=\"how-much-list\">\n");
            fprintf(f, "<li>");
            kb_svg_xml(f, text);
            fprintf(f, "</li>\n");
            free(text);
        }
    if (any)
        fprintf(f, "</ul>\n");
}

/* kb_report_side_mark as HTML text. */
static const char *html_mark(const struct kb_report_side *s)
{
    const char *m = kb_report_side_mark(s);
    return m[0] == '<' ? "&lt;= " : m[0] == '>' ? "&gt;= " : m;
}

/* report.md's Side by side: each runtime beside the baseline per route, and the floor. */
static void side_by_side(FILE *f, const struct kb_report *r)
{
    const char *base = kb_report_baseline(r);
    struct kb_report_floor fl;
    if (!base)
        return;
    fprintf(f, "<h3 id=\"side-by-side\">Side by side with ");
    kb_svg_xml(f, base);
    fprintf(f, "</h3>\n<table id=\"side-table\"><thead><tr><th>route</th><th>runtime</th>"
            "<th>knee</th><th>CPU a response</th><th>rates</th><th>x the floor</th></tr>"
            "</thead><tbody>\n");
    for (size_t j = 0; j < kb_report_nroutes(r); j++)
        for (size_t i = 0; i < kb_report_nruntimes(r); i++) {
            const char *rt = kb_report_runtime(r, i), *ro = kb_report_route(r, j);
            int is_base = !strcmp(rt, base);
            struct kb_report_side s;
            char k[48], c[48], x[48];
            kb_report_side_of(r, rt, ro, &s);
            if (!s.n_rates && !s.knee && !s.n_floor)
                continue;
            fprintf(f, "<tr><td>");
            kb_svg_xml(f, ro);
            fprintf(f, "</td><td>");
            kb_svg_xml(f, rt);
            fprintf(f, "</td><td class=\"n\">%s", is_base ? "" : html_mark(&s));
            fprintf(f, "%s</td><td class=\"n\">%s</td><td class=\"n\">%d</td>"
                    "<td class=\"n\">%s</td></tr>\n", is_base ? "1" :
                    kb_text_ratio(k, sizeof(k), s.knee, s.knee_lo, s.knee_hi), is_base ? "1" :
                    kb_text_ratio(c, sizeof(c), s.cost, s.cost_min, s.cost_max), s.n_rates,
                    kb_text_ratio(x, sizeof(x), s.floor, s.floor_min, s.floor_max));
        }
    kb_report_floor_of(r, &fl);
    fprintf(f, "</tbody></table>\n<p class=\"note\">Knee and CPU a response over ");
    kb_svg_xml(f, base);
    fprintf(f, "'s, measured side by side (median over the rates both ran, with their range), "
            "and over the host's floor measured before each point: ratios carry from one host "
            "to another, rates and microseconds do not.");
    if (fl.n)
        fprintf(f, " The host's floor (kb-control's CPU a response) was %.2f us (%.2f-%.2f over "
                "%d samples): its speed moved by %.0f %% during this run.", fl.med, fl.min,
                fl.max, fl.n, 100 * (fl.max / fl.min - 1));
    fprintf(f, "</p>\n");
}

/* A boundary rate and its samples controlled of all; "-" where there is none. */
static void boundary_cells(FILE *f, const struct kb_boundary_rate *b)
{
    if (b->rps)
        fprintf(f, "<td class=\"n\">%ld</td><td class=\"n\">%d/%d</td>", b->rps,
                b->controlled_n, b->n);
    else
        fprintf(f, "<td class=\"n\">-</td><td class=\"n\">-</td>");
}

static void confirmation(FILE *f, const struct kb_report *r)
{
    struct kb_boundary b[64];
    size_t n = kb_report_boundaries(r, b, 64);
    fprintf(f, "<h3>How each cell was confirmed</h3>\n<table id=\"boundaries\"><thead><tr>"
            "<th>runtime</th><th>route</th><th>held</th><th>samples controlled</th>"
            "<th>next</th><th>samples controlled</th></tr></thead><tbody>\n");
    for (size_t i = 0; i < n; i++) {
        fprintf(f, "<tr><td>");
        kb_svg_xml(f, b[i].runtime);
        fprintf(f, "</td><td>");
        kb_svg_xml(f, b[i].route);
        fprintf(f, "</td>");
        boundary_cells(f, &b[i].held);
        boundary_cells(f, &b[i].next);
        fprintf(f, "</tr>\n");
    }
    fprintf(f, "</tbody></table>\n");
}

static void cost(FILE *f, const struct kb_report *r)
{
    fprintf(f, "<h2 id=\"cost\">Cost per response</h2>\n<table id=\"cost-table\"><thead><tr>"
            "<th>route</th><th>runtime</th><th>held at req/s</th><th>CPU per response (us)</th>"
            "<th>capacity estimate (req/s)</th></tr></thead><tbody>\n");
    for (size_t j = 0; j < kb_report_nroutes(r); j++)
        for (size_t i = 0; i < kb_report_nruntimes(r); i++) {
            struct kb_report_cost c;
            kb_report_cost_of(r, kb_report_runtime(r, i), kb_report_route(r, j), &c);
            if (!c.rate)
                continue;
            fprintf(f, "<tr><td>");
            kb_svg_xml(f, kb_report_route(r, j));
            fprintf(f, "</td><td>");
            kb_svg_xml(f, kb_report_runtime(r, i));
            fprintf(f, "</td><td class=\"n\">%ld</td>", c.rate);
            c.us > 0 ? fprintf(f, "<td class=\"n\">%.1f</td><td class=\"n\">%s%.0f</td></tr>\n",
                               c.us, c.capacity_floor ? "&gt;= " : "~", c.capacity_rps)
                     : fprintf(f, "<td class=\"n\">-</td><td class=\"n\">-</td></tr>\n");
        }
    fprintf(f, "</tbody></table>\n");
}

/* The route's three charts, the same drawings as charts/, inline. */
static void curves(FILE *f, const struct kb_report *r)
{
    static const char *const kinds[] = { "p99", "achieved", "cpu" };
    fprintf(f, "<h2 id=\"curves\">Curves</h2>\n");
    for (size_t j = 0; j < kb_report_nroutes(r); j++) {
        fprintf(f, "<h3>");
        kb_svg_xml(f, kb_report_route(r, j));
        fprintf(f, "</h3>\n<div class=\"charts\">\n");
        for (size_t k = 0; k < 3; k++)
            kb_report_svg_chart(f, r, kinds[k], kb_report_route(r, j));
        fprintf(f, "</div>\n");
    }
}

/* One point's series.csv, read into s; 0 when it has none. */
static int read_point_series(const struct kb_report *r, const struct kb_cell *w,
                             struct kb_report_series *s)
{
    char path[KB_PATH_MAX], err[256];
    memset(s, 0, sizeof(*s));
    snprintf(s->runtime, sizeof(s->runtime), "%s", w->runtime);
    snprintf(s->route, sizeof(s->route), "%s", w->route);
    snprintf(s->point, sizeof(s->point), "%s", w->first_id);
    s->rate = w->rate;
    if (snprintf(path, sizeof(path), "%s/points/%s/series.csv", r->dir, w->first_id) >=
        (int)sizeof(path))
        return 0;
    return w->first_id[0] && kb_report_read_series(path, s, err, sizeof(err)) == 0 && s->n > 0;
}

/* The route's latency range over every point's seconds, shared by its small charts. */
static void route_range(const struct kb_report *r, const char *route, double *lo, double *hi)
{
    *lo = r->max_p99_us / 2000;
    *hi = r->max_p99_us / 1000;
    for (size_t i = 0; i < r->nrows; i++) {
        const struct kb_cell *w = &r->rows[i];
        if (!w->n || !w->planned || strcmp(w->route, route))
            continue;
        if (w->p50.n && w->p50.min > 0)
            *lo = fmin(*lo, w->p50.min / 1000);
        if (w->max.n)
            *hi = fmax(*hi, w->max.max / 1000);
    }
}

/* Every point's corrected latency in each second: runtimes down, rates across. */
static void series_grid(FILE *f, const struct kb_report *r)
{
    /* Freed after every cell, read or not: a cell without a series (the first one, in a
     * partial run) must free a null pointer, never the stack's leftovers. */
    struct kb_report_series s = { 0 };
    fprintf(f, "<h2 id=\"series\">Latency over time</h2>\n<p class=\"note\">Each point's "
            "corrected p50 (dotted) and p99 in each second of its measured interval, the drain "
            "after it shaded; one log scale per route, the dashed line the p99 limit. With "
            "several samples at a rate, the first one's.</p>\n");
    for (size_t j = 0; j < kb_report_nroutes(r); j++) {
        const char *route = kb_report_route(r, j);
        double lo, hi;
        route_range(r, route, &lo, &hi);
        fprintf(f, "<h3>");
        kb_svg_xml(f, route);
        fprintf(f, "</h3>\n<div class=\"grid\" style=\"grid-template-columns:repeat(%zu,minmax(0,1fr))\">\n",
                kb_report_nrates(r));
        for (size_t i = 0; i < kb_report_nruntimes(r); i++)
            for (size_t k = 0; k < kb_report_nrates(r); k++) {
                const struct kb_cell *w = kb_report_row(r, kb_report_runtime(r, i), route,
                                                              kb_report_rate(r, k));
                fprintf(f, "<div>");
                kb_svg_xml(f, kb_report_runtime(r, i));
                fprintf(f, " %ld<br>", kb_report_rate(r, k));
                if (w && w->planned && w->n && read_point_series(r, w, &s))
                    kb_report_svg_small_series(f, r, &s, lo, hi);
                else
                    fprintf(f, "no series");
                free(s.v);
                s.v = NULL;
                fprintf(f, "</div>\n");
            }
        fprintf(f, "</div>\n");
    }
}

/* 1 when the paper gives figures for any planned point: the table has its column. */
static int paper_column(const struct kb_report *r)
{
    for (size_t i = 0; i < r->nrows; i++)
        if (r->rows[i].planned &&
            kb_report_paper_point(r, r->rows[i].runtime, r->rows[i].route, r->rows[i].rate))
            return 1;
    return 0;
}

/* A point's achieved rate and corrected p99 (its medians), and beside them, where the table
 * has the paper's column, the paper's figures at that point (blank where it gives none). */
static void point_figures(FILE *f, const struct kb_report *r, const struct kb_cell *w,
                          int paper)
{
    char a[32], p99[32], b[256];
    fprintf(f, "<td class=\"n\">%s</td><td class=\"n\">%s</td>",
            w->n ? kb_text_med(a, sizeof(a), w->achieved, 1, "%.0f") : "",
            w->n ? kb_text_lat(p99, sizeof(p99), w->p99) : "");
    if (!paper)
        return;
    fprintf(f, "<td class=\"paper\">");
    kb_svg_xml(f, kb_report_paper_cell(b, sizeof(b), kb_report_paper_point(r, w->runtime,
                                                                            w->route, w->rate)));
    fprintf(f, "</td>");
}

/* Every point with its verdict and its evidence, linked where the run keeps it. */
static void evidence(FILE *f, const struct kb_report *r, const char *prefix)
{
    static const char *const files[] = { "verdict.json", "load.json", "samples.csv",
                                          "series.csv", "corrected.hgrm" };
    int paper = paper_column(r);
    fprintf(f, "<h2 id=\"evidence\">Evidence</h2>\n<table id=\"points\"><thead><tr><th>runtime"
            "</th><th>route</th><th>req/s</th><th>n</th><th>achieved/s</th><th>p99</th>%s"
            "<th>verdict</th><th>files (first sample)</th></tr></thead><tbody>\n",
            paper ? "<th>paper's host (orientation)</th>" : "");
    for (size_t i = 0; i < r->nrows; i++) {
        const struct kb_cell *w = &r->rows[i];
        if (!w->planned)
            continue;
        fprintf(f, "<tr><td>");
        kb_svg_xml(f, w->runtime);
        fprintf(f, "</td><td>");
        kb_svg_xml(f, w->route);
        fprintf(f, "</td><td class=\"n\">%ld</td><td class=\"n\">%d</td>", w->rate, w->n);
        point_figures(f, r, w, paper);
        fprintf(f, "<td>%s</td><td>", w->verdict);
        for (size_t k = 0; w->first_id[0] && k < sizeof(files) / sizeof(files[0]); k++) {
            fprintf(f, "%s<a href=\"%spoints/", k ? " " : "", prefix);
            kb_svg_xml(f, w->first_id);
            fprintf(f, "/%s\">%s</a>", files[k], files[k]);
        }
        fprintf(f, "</td></tr>\n");
    }
    fprintf(f, "</tbody></table>\n");
    if (paper) {
        fprintf(f, "<p class=\"note\">Paper's host: the first paper's figures at that point, as "
                "it states them, with its section; measured on ");
        kb_svg_xml(f, kb_jstr(r->published, "host", "the papers' host"));
        fprintf(f, ". Orientation, never a target: no verdict here reads them.</p>\n");
    }
}

static void foot(FILE *f, const struct kb_report *r)
{
    json_t *h = json_object_get(r->run, "host");
    fprintf(f, "<h2 id=\"identity\">Run</h2>\n<p>Started ");
    kb_svg_xml(f, js(r->run, "started"));
    fprintf(f, " on ");
    kb_svg_xml(f, js(h, "hostname"));
    fprintf(f, " (kernel ");
    kb_svg_xml(f, js(h, "kernel"));
    fprintf(f, ", CPU ");
    kb_svg_xml(f, js(h, "cpu_model"));
    fprintf(f, "); sandbox ");
    kb_svg_xml(f, js(r->plan, "backend"));
    fprintf(f, ", server CPUs ");
    kb_svg_xml(f, js(r->plan, "server_cpus"));
    fprintf(f, ", client CPUs ");
    kb_svg_xml(f, js(r->plan, "client_cpus"));
    fprintf(f, ". report.md has the whole identity and every note; report.csv and report.json "
            "every figure.</p>\n<script>%s</script>\n</body></html>\n", SCRIPT);
}

struct fill_report_html_arg {
    const struct kb_report *r;
    const char *dir;
};

static int fill_report_html(FILE *f, const void *arg)
{
    const struct kb_report *r = ((const struct fill_report_html_arg *)arg)->r;
    const char *dir = ((const struct fill_report_html_arg *)arg)->dir;
    head(f, r);
    answer(f, r);
    how_much(f, r);
    side_by_side(f, r);
    confirmation(f, r);
    cost(f, r);
    curves(f, r);
    series_grid(f, r);
    /* a re-judged report lies one level below the run it reads */
    evidence(f, r, strcmp(dir, r->dir) ? "../" : "");
    foot(f, r);
    return ferror(f) ? -1 : 0;
}

int kb_report_write_html(const struct kb_report *r, const char *dir, char *err, size_t errlen)
{
    const struct fill_report_html_arg a = { .r = r, .dir = dir };
    char path[KB_PATH_MAX];
    return kb_afile_write_with(kb_path(path, sizeof(path), dir, "report.html"), fill_report_html, &a, err,
                               errlen);
}
