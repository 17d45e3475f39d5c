/* report_svg.c -- the report's charts, per route, one line per runtime against the
 * requested rate: achieved rate (linear, with the ideal y = x and the delivery band),
 * corrected p99 (log, with the controlled limit), and the server's CPU per response (log);
 * and per runtime x route its first uncontrolled point's corrected p50, p99 and max in each
 * second (log), where the queue forms, with the drain after the measured interval shaded.
 *
 * A mark sits at its point's true rate. Its shape is the verdict the point's own figures
 * give (circle controlled, square uncontrolled, cross failed, diamond unknown), its fill the
 * client's trust (hollow: client-limited). A figure that is only a lower bound is never
 * drawn as exact: an upward arrow marks it (the same arrow in every chart) and the line to
 * it is dashed. Runtimes with the same figures do not hide one another: every line is drawn
 * before any mark, each narrower than those before it, and the marks at one rate nest, the
 * first runtime's largest. Every label lives in the legend column, beside the plot, so no
 * line ever crosses one; every chart ends with context lines (route, profile, samples,
 * trust, run) so that a chart lifted out of the report still says what it shows. Every mark
 * and line has a <title>; names are escaped. Axes are bounded: a range that is not finite,
 * or spans more than KB_SVG_MAX_DECADES decades, is clamped, and every tick loop ends. */
#define _GNU_SOURCE
#include "runner/report/report.h"
#include "runner/report/report_int.h"
#include "runner/report/svgkit.h"
#include "runner/util/evidence.h"
#include "runner/util/paths.h"
#include "runner/util/jfield.h"

#include <math.h>
#include <stdlib.h>
#include <string.h>

#define W 860
#define H 540
#define ML 80
#define MR 200
#define MT 46
#define MB 96
#define LX (W - MR + 14)       /* the legend column's left edge */
#define BAND "#95a5a6"         /* the delivery band, far from every runtime's colour */
#define LIMIT "#e74c3c"        /* the criteria's lines */
#define MAX_TICKS KB_SVG_MAX_TICKS

enum stat { S_ACHIEVED, S_P99, S_CPU };

static double px(const struct kb_svg_axis *a, double v) { return kb_svg_map(a, v, ML, W - MR); }
static double py(const struct kb_svg_axis *a, double v) { return kb_svg_map(a, v, H - MB, MT); }

/* Eight colours that stay apart on a screen and a projector. A runtime of the contract takes
 * the one at its place there, so it keeps its colour in every report whichever runtimes a
 * run had; any other runtime takes the next one after the contract's, in plan order. */
static const char *const PALETTE[] = { "#8e44ad", "#27ae60", "#2980b9", "#c0392b",
                                       "#e67e22", "#1b1b1b", "#d81b9b", "#7f6000" };
#define NPALETTE (sizeof(PALETTE) / sizeof(PALETTE[0]))

/* runtime's place in the contract's runtimes[], or -1 */
static int contract_index(const struct kb_report *r, const char *runtime)
{
    size_t k;
    json_t *v;
    json_array_foreach(r->contract_runtimes, k, v)
        if (json_is_string(v) && !strcmp(json_string_value(v), runtime))
            return (int)k;
    return -1;
}

static const char *color(const struct kb_report *r, size_t i)
{
    int k = contract_index(r, kb_report_runtime(r, i));
    size_t spare = json_array_size(r->contract_runtimes);
    if (k >= 0)
        return PALETTE[(size_t)k % NPALETTE];
    for (size_t j = 0; j < i; j++)
        spare += contract_index(r, kb_report_runtime(r, j)) < 0;
    return PALETTE[spare % NPALETTE];
}

static const char *color_of(const struct kb_report *r, const char *runtime)
{
    for (size_t i = 0; i < kb_report_nruntimes(r); i++)
        if (!strcmp(kb_report_runtime(r, i), runtime))
            return color(r, i);
    return PALETTE[4];
}

/* Runtime i's line width and mark scale: the first drawn widest and largest, so one over
 * another with the same figures leaves it showing on both sides. */
static double line_width(const struct kb_report *r, size_t i)
{
    return 2.0 + 1.5 * (double)(kb_report_nruntimes(r) - 1 - i);
}
static double mark_scale(const struct kb_report *r, size_t i)
{
    /* each step leaves a ring of about 2 px of the mark beneath, past the next one's halo */
    double s = 1.0 + 0.5 * (double)(kb_report_nruntimes(r) - 1 - i);
    return s < 3.0 ? s : 3.0;
}

static void frame(FILE *f, const char *title, const char *xl, const char *yl)
{
    fprintf(f, "<svg xmlns=\"http://www.w3.org/2000/svg\" width=\"%d\" height=\"%d\" "
            "viewBox=\"0 0 %d %d\" font-family=\"sans-serif\" font-size=\"12\">\n",
            W, H, W, H);
    kb_svg_title(f, title);
    fprintf(f, "\n<rect width=\"100%%\" height=\"100%%\" fill=\"white\"/>\n"
            "<text x=\"%d\" y=\"24\" font-size=\"15\" font-weight=\"bold\">", ML);
    kb_svg_xml(f, title);
    fprintf(f, "</text>\n<text x=\"%d\" y=\"%d\" text-anchor=\"middle\">%s</text>\n"
            "<text transform=\"translate(18 %d) rotate(-90)\" text-anchor=\"middle\">%s</text>\n"
            "<rect class=\"plot\" x=\"%d\" y=\"%d\" width=\"%d\" height=\"%d\" fill=\"none\" "
            "stroke=\"#333\"/>\n", (ML + W - MR) / 2, H - MB + 34, xl, (MT + H - MB) / 2, yl,
            ML, MT, W - MR - ML, H - MB - MT);
}

static void xticks(FILE *f, const struct kb_svg_axis *x)
{
    char lab[32];
    double st = kb_svg_nice_step(x->hi - x->lo), v = x->lo;
    for (int n = 0; n < MAX_TICKS && v <= x->hi + st / 1e6; n++, v = x->lo + n * st) {
        kb_svg_tick_label(lab, sizeof(lab), v, 0);
        fprintf(f, "<line x1=\"%.1f\" y1=\"%d\" x2=\"%.1f\" y2=\"%d\" stroke=\"#ddd\"/>"
                "<text x=\"%.1f\" y=\"%d\" text-anchor=\"middle\">%s</text>\n",
                px(x, v), MT, px(x, v), H - MB, px(x, v), H - MB + 16, lab);
    }
}

static void yticks(FILE *f, const struct kb_svg_axis *y, int unit)
{
    char lab[32];
    if (y->log) {
        double v = y->lo;
        for (int n = 0; n < MAX_TICKS && v <= y->hi * 1.0001; n++, v *= 10) {
            kb_svg_tick_label(lab, sizeof(lab), v, unit);
            fprintf(f, "<line x1=\"%d\" y1=\"%.1f\" x2=\"%d\" y2=\"%.1f\" stroke=\"#ddd\"/>"
                    "<text x=\"%d\" y=\"%.1f\" text-anchor=\"end\">%s</text>\n",
                    ML, py(y, v), W - MR, py(y, v), ML - 6, py(y, v) + 4, lab);
        }
        return;
    }
    double st = kb_svg_nice_step(y->hi - y->lo), v = y->lo;
    for (int n = 0; n < MAX_TICKS && v <= y->hi + st / 1e6; n++, v = y->lo + n * st) {
        kb_svg_tick_label(lab, sizeof(lab), v, unit);
        fprintf(f, "<line x1=\"%d\" y1=\"%.1f\" x2=\"%d\" y2=\"%.1f\" stroke=\"#ddd\"/>"
                "<text x=\"%d\" y=\"%.1f\" text-anchor=\"end\">%s</text>\n",
                ML, py(y, v), W - MR, py(y, v), ML - 6, py(y, v) + 4, lab);
    }
}

/* Latency in us as a label: "850.00 ms", "1.90 s". */
static const char *fmt_us(char *b, size_t len, double us)
{
    snprintf(b, len, us >= 1e6 ? "%.2f s" : "%.2f ms", us >= 1e6 ? us / 1e6 : us / 1e3);
    return b;
}

/* A verdict mark: shape from the figures' own verdict ("" unknown), hollow when the client
 * was not trusted; class names say both, and data-x the true x, for readers and tests. A
 * white halo under it keeps it apart from its own line and from a larger mark under it. */
static void marker(FILE *f, double x, double y, double s, const char *own, int trusted,
                   const char *c, const char *title)
{
    const char *kind = own[0] ? own : "unknown";
    fprintf(f, "<g class=\"mark %s %s\" data-x=\"%.1f\" data-y=\"%.1f\">", kind,
            trusted ? "trusted" : "client-limited", x, y);
    if (title)
        kb_svg_title(f, title);
    kb_svg_shape(f, kind, x, y, s, "white", "white", 3);
    kb_svg_shape(f, kind, x, y, s, trusted ? c : "white", c, 2);
    fprintf(f, "</g>\n");
}

/* A lower bound: an arrow up from the mark, since the true value is at or above it; the
 * same in every chart. */
static void bound_arrow(FILE *f, double x, double y, const char *c, const char *title)
{
    fprintf(f, "<g class=\"bound\">");
    kb_svg_title(f, title ? title : "lower bound: the true value is at least this (requests "
             "unanswered when the drain ended, recorded at what they had waited by then)");
    fprintf(f, "<path d=\"M%.1f %.1fv-14m-4 5l4 -5l4 5\" fill=\"none\" stroke=\"%s\" "
            "stroke-width=\"1.8\"/></g>\n", x, y - 6, c);
}

/* ---- the legend column ----------------------------------------------------------------- */

struct legend {
    FILE *f;
    int y;
};

static void legend_text(struct legend *l, const char *text, int dy)
{
    fprintf(l->f, "<text class=\"label\" x=\"%d\" y=\"%d\" font-size=\"11\">", LX + 32, l->y + 4);
    kb_svg_xml(l->f, text);
    fprintf(l->f, "</text>\n");
    l->y += dy;
}

static void legend_line(struct legend *l, const char *stroke, double width, const char *dash,
                        const char *text)
{
    fprintf(l->f, "<line x1=\"%d\" y1=\"%d\" x2=\"%d\" y2=\"%d\" stroke=\"%s\" "
            "stroke-width=\"%.1f\"%s%s%s/>", LX, l->y, LX + 26, l->y, stroke, width,
            dash ? " stroke-dasharray=\"" : "", dash ? dash : "", dash ? "\"" : "");
    legend_text(l, text, 18);
}

/* Runtimes, each greyed with "(none drawn)" where the chart has nothing of it. */
static void legend_runtimes(struct legend *l, const struct kb_report *r, const int *drawn)
{
    for (size_t i = 0; i < kb_report_nruntimes(r); i++) {
        char t[96];
        snprintf(t, sizeof(t), "%s%s", kb_report_runtime(r, i), drawn[i] ? "" : " (none drawn)");
        legend_line(l, drawn[i] ? color(r, i) : "#bbb", 2.5, NULL, t);
    }
}

static void legend_marks(struct legend *l)
{
    static const char *const kinds[] = { "controlled", "uncontrolled", "failed", "" };
    static const char *const names[] = { "controlled", "uncontrolled", "failed", "unknown" };
    char t[96];
    l->y += 6;
    for (size_t k = 0; k < 4; k++) {
        snprintf(t, sizeof(t), "legend: %s (the verdict the point's own figures give)", names[k]);
        marker(l->f, LX + 13, l->y, 1, kinds[k], 1, "#555", t);
        legend_text(l, names[k], 18);
    }
    marker(l->f, LX + 13, l->y, 1, "controlled", 0, "#555", "legend: hollow, the client "
           "was not trusted (client-limited)");
    legend_text(l, "hollow: client-limited", 22);
    bound_arrow(l->f, LX + 13, l->y + 8, "#555", "legend: an arrow up, a lower bound");
    legend_text(l, "lower bound", 18);
    legend_line(l, "#555", 2, "6 4", "dashed: to a bound");
    fprintf(l->f, "<line class=\"range\" x1=\"%d\" y1=\"%d\" x2=\"%d\" y2=\"%d\" "
            "stroke=\"#555\"><title>legend: a bar through a mark, the lowest to the highest "
            "of the point's samples</title></line>", LX + 13, l->y - 7, LX + 13, l->y + 7);
    legend_text(l, "bar: min-max of samples", 18);
}

/* A ring around a refined held end's mark: the answer `--refine` gave, between grid rates. */
static void refined_ring(FILE *f, double x, double y, const char *c, const char *title)
{
    fprintf(f, "<g class=\"refined-end\" data-x=\"%.1f\" data-y=\"%.1f\">", x, y);
    kb_svg_title(f, title);
    fprintf(f, "<circle cx=\"%.1f\" cy=\"%.1f\" r=\"9\" fill=\"none\" stroke=\"%s\" "
            "stroke-width=\"1.5\"/></g>\n", x, y, c);
}

static void legend_refined(struct legend *l, const struct kb_report *r)
{
    if (!r->nfine)
        return;
    refined_ring(l->f, LX + 13, l->y, "#555", "legend: a ring, the refined held end "
                 "(curve --refine); the other marks are the grid's rates");
    legend_text(l, "ring: refined held end", 22);
}

/* What the widths and nesting mean, in small type at the legend's foot. */
static void legend_drawing(struct legend *l)
{
    fprintf(l->f, "<text class=\"label\" x=\"%d\" y=\"%d\" font-size=\"10\" fill=\"#777\">"
            "<tspan x=\"%d\">widths and mark sizes differ</tspan><tspan x=\"%d\" dy=\"12\">"
            "only so that equal figures</tspan><tspan x=\"%d\" dy=\"12\">stay visible: marks "
            "sit at</tspan><tspan x=\"%d\" dy=\"12\">their true rate and nest</tspan></text>\n",
            LX, l->y + 8, LX, LX, LX, LX);
    l->y += 48;
}

/* ---- context: what every chart carries beneath it ------------------------------------- */

static int trusted_points(const struct kb_report *r, int *all)
{
    int ok = 0;
    *all = 0;
    for (size_t i = 0; i < r->nrows; i++)
        if (r->rows[i].planned && r->rows[i].n) {
            (*all)++;
            ok += strcmp(r->rows[i].verdict, "client-limited") != 0;
        }
    return ok;
}

/* Two lines under the plot: the route, profile and samples; the client's trust and the run. */
static void context(FILE *f, const struct kb_report *r, const char *route)
{
    json_t *p = r->plan;
    int all, ok = trusted_points(r, &all);
    long long cs = json_integer_value(json_object_get(p, "confirm_samples"));
    fprintf(f, "<g class=\"context\"><text x=\"%d\" y=\"%d\" font-size=\"10.5\" fill=\"#555\">",
            ML, H - 24);
    kb_svg_xml(f, route);
    fprintf(f, " | profile ");
    kb_svg_xml(f, kb_jstr(p, "profile", "?"));
    fprintf(f, ": %g s measured after %g s warmup | %d repeat(s)",
            json_number_value(json_object_get(p, "duration_s")),
            json_number_value(json_object_get(p, "warmup_s")), r->repeats);
    if (cs > 1)
        fprintf(f, ", each boundary confirmed by the median of %lld", cs);
    fprintf(f, "</text><text x=\"%d\" y=\"%d\" font-size=\"10.5\" fill=\"#555\">client trusted "
            "at %d of %d points | run started ", ML, H - 8, ok, all);
    kb_svg_xml(f, kb_jstr(r->run, "started", "?"));
    fprintf(f, " | same host, compare runtimes within it%s</text></g>\n",
            r->partial ? " | PARTIAL" : r->unconstrained ? " | UNCONSTRAINED" : "");
}

/* ---- the curve charts ------------------------------------------------------------------- */

/* The row at rate k and its charted statistic, or NULL when there is nothing to draw: no
 * complete point, or (p99, cpu) a point without the figure. */
static const struct kb_cell *charted(const struct kb_report *r, const char *rt,
                                           const char *route, size_t k, enum stat st,
                                           struct kb_stat *s)
{
    const struct kb_cell *w = kb_report_row(r, rt, route, kb_report_rate(r, k));
    if (!w || !w->n || !w->planned)
        return NULL;
    *s = st == S_P99 ? w->p99 : st == S_CPU ? w->cpu_us_per_response : w->achieved;
    return st != S_ACHIEVED && (s->n == 0 || s->med <= 0) ? NULL : w;
}

/* The charted value's y: p99 in us on a ms axis, the others as they are. */
static double yval(const struct kb_svg_axis *y, double v, enum stat st)
{
    return py(y, fmax(st == S_P99 ? v / 1000 : v, y->lo));
}

/* "go 45000 req/s: p99 >= 1.90 s, client-limited (server: uncontrolled)" */
static void mark_title(char *b, size_t len, const struct kb_cell *w, struct kb_stat s,
                       enum stat st)
{
    char v[40];
    int limited = !strcmp(w->verdict, "client-limited");
    if (st == S_P99)
        fmt_us(v, sizeof(v), s.med);
    else if (st == S_CPU)
        snprintf(v, sizeof(v), "%.1f us per response", s.med);
    else
        snprintf(v, sizeof(v), "%.0f req/s", s.med);
    snprintf(b, len, "%s %ld req/s: %s %s%s%s, %s%s%s%s (%d sample%s)", w->runtime, w->rate,
             st == S_P99 ? "p99" : st == S_CPU ? "server CPU" : "achieved",
             st == S_P99 && s.bound ? ">= " : "", v,
             st == S_P99 && s.bound ? " (lower bound)" : "", w->verdict,
             limited ? " (server: " : "",
             limited ? (w->server_verdict[0] ? w->server_verdict : "unknown") : "",
             limited ? ")" : "", w->n, w->n == 1 ? "" : "s");
}

/* Segments between consecutive drawn points: solid when both are exact, dashed when either
 * is only a lower bound (the line would otherwise claim a value). */
static void segments(FILE *f, const struct kb_report *r, size_t i, const char *route,
                     const struct kb_svg_axis *x, const struct kb_svg_axis *y, enum stat st)
{
    const char *rt = kb_report_runtime(r, i);
    const struct kb_cell *w, *prev = NULL;
    struct kb_stat s, ps = { 0, 0, 0, 0, 0 };
    for (size_t k = 0; k < kb_report_nrates(r); k++) {
        if (!(w = charted(r, rt, route, k, st, &s)))
            continue;
        if (prev)
            fprintf(f, "<line class=\"%s\" x1=\"%.1f\" y1=\"%.1f\" x2=\"%.1f\" y2=\"%.1f\" "
                    "stroke=\"%s\" stroke-width=\"%.1f\"%s/>\n",
                    ps.bound || s.bound ? "to-bound" : "exact", px(x, (double)prev->rate),
                    yval(y, ps.med, st), px(x, (double)w->rate), yval(y, s.med, st),
                    color(r, i), line_width(r, i),
                    ps.bound || s.bound ? " stroke-dasharray=\"6 4\"" : "");
        prev = w;
        ps = s;
    }
}

/* <g class="KIND" data-runtime="RT"> with the runtime's name escaped. */
static void group_open(FILE *f, const char *kind, const char *rt)
{
    fprintf(f, "<g class=\"%s\" data-runtime=\"", kind);
    kb_svg_xml(f, rt);
    fprintf(f, "\">");
}

static const char *stat_name(enum stat st)
{
    return st == S_P99 ? "corrected p99" : st == S_CPU ? "server CPU per response"
                                                       : "achieved rate";
}

/* One runtime's line, in a group whose <title> names it. */
static void series_line_of(FILE *f, const struct kb_report *r, size_t i, const char *route,
                           const struct kb_svg_axis *x, const struct kb_svg_axis *y, enum stat st)
{
    const char *rt = kb_report_runtime(r, i);
    char title[160];
    snprintf(title, sizeof(title), "%s: %s against the requested rate", rt, stat_name(st));
    group_open(f, "series", rt);
    kb_svg_title(f, title);
    fputc('\n', f);
    segments(f, r, i, route, x, y, st);
    fprintf(f, "</g>\n");
}

/* A row's range bar over its samples, with its <title>. */
static void range_bar(FILE *f, const struct kb_cell *w, struct kb_stat s, double cx,
                      const struct kb_svg_axis *y, enum stat st, const char *c)
{
    char title[256], lo[32], hi[32];
    if (st == S_P99) {
        fmt_us(lo, sizeof(lo), s.min);
        fmt_us(hi, sizeof(hi), s.max);
    } else {
        snprintf(lo, sizeof(lo), st == S_CPU ? "%.1f" : "%.0f", s.min);
        snprintf(hi, sizeof(hi), st == S_CPU ? "%.1f us" : "%.0f req/s", s.max);
    }
    fprintf(f, "<line class=\"range\" x1=\"%.1f\" y1=\"%.1f\" x2=\"%.1f\" y2=\"%.1f\" "
            "stroke=\"%s\">", cx, yval(y, s.min, st), cx, yval(y, s.max, st), c);
    snprintf(title, sizeof(title), "range over %d samples of %s %ld req/s: %s%s-%s", w->n,
             w->runtime, w->rate, st == S_P99 && s.bound ? ">= " : "", lo, hi);
    kb_svg_title(f, title);
    fprintf(f, "</line>\n");
}

/* The runtime's refined held end on route, where the run refined it: its mark (between
 * the grid's) with a ring. 1 when drawn. */
static int refined_mark(FILE *f, const struct kb_report *r, size_t i, const char *route,
                        const struct kb_svg_axis *x, const struct kb_svg_axis *y, enum stat st)
{
    const char *rt = kb_report_runtime(r, i), *c = color(r, i);
    const struct kb_cell *w = NULL;
    struct kb_stat s;
    char title[360], t[320];
    double cx, cy;
    for (size_t k = 0; k < r->nfine && !w; k++)
        if (!strcmp(r->fine[k].runtime, rt) && !strcmp(r->fine[k].route, route))
            w = &r->fine[k];
    if (!w)
        return 0;
    s = st == S_P99 ? w->p99 : st == S_CPU ? w->cpu_us_per_response : w->achieved;
    if (st != S_ACHIEVED && (s.n == 0 || s.med <= 0))
        return 0;
    cx = px(x, (double)w->rate);
    cy = yval(y, s.med, st);
    if (w->n > 1)
        range_bar(f, w, s, cx, y, st, c);
    mark_title(t, sizeof(t), w, s, st);
    snprintf(title, sizeof(title), "refined held end: %s", t);
    marker(f, cx, cy, mark_scale(r, i), w->server_verdict,
           strcmp(w->verdict, "client-limited") != 0, c, title);
    refined_ring(f, cx, cy, c, title);
    return 1;
}

/* One runtime's range bars, markers and bound arrows; 1 when it drew anything. */
static int series_marks(FILE *f, const struct kb_report *r, size_t i, const char *route,
                        const struct kb_svg_axis *x, const struct kb_svg_axis *y, enum stat st)
{
    const char *rt = kb_report_runtime(r, i), *c = color(r, i);
    const struct kb_cell *w;
    struct kb_stat s;
    char title[320];
    int drawn = 0;
    group_open(f, "marks", rt);
    fputc('\n', f);
    for (size_t k = 0; k < kb_report_nrates(r); k++) {
        double cx, cy;
        if (!(w = charted(r, rt, route, k, st, &s)))
            continue;
        drawn = 1;
        cx = px(x, (double)w->rate);
        cy = yval(y, s.med, st);
        if (w->n > 1)
            range_bar(f, w, s, cx, y, st, c);
        mark_title(title, sizeof(title), w, s, st);
        marker(f, cx, cy, mark_scale(r, i), w->server_verdict,
               strcmp(w->verdict, "client-limited") != 0, c, title);
        if (st == S_P99 && s.bound)
            bound_arrow(f, cx, cy - 4 * (mark_scale(r, i) - 1), c, NULL);
    }
    drawn |= refined_mark(f, r, i, route, x, y, st);
    fprintf(f, "</g>\n");
    return drawn;
}

/* Every runtime's line first, then every runtime's marks, so no line covers a mark; which
 * runtimes drew anything in drawn[]. */
static void all_series(FILE *f, const struct kb_report *r, const char *route,
                       const struct kb_svg_axis *x, const struct kb_svg_axis *y, enum stat st, int *drawn)
{
    for (size_t i = 0; i < kb_report_nruntimes(r); i++)
        series_line_of(f, r, i, route, x, y, st);
    for (size_t i = 0; i < kb_report_nruntimes(r); i++)
        drawn[i] = series_marks(f, r, i, route, x, y, st);
}

static double max_rate(const struct kb_report *r)
{
    double m = 1;
    for (size_t k = 0; k < kb_report_nrates(r); k++)
        m = fmax(m, (double)kb_report_rate(r, k));
    return m;
}

/* The delivery criterion as a band: between achieved = requested and min_delivery x
 * requested. A point inside it delivered enough; below it, it missed. */
static void band(FILE *f, const struct kb_report *r, const struct kb_svg_axis *x, const struct kb_svg_axis *y)
{
    char t[200];
    double md = r->min_delivery > 0 ? r->min_delivery : 1;
    snprintf(t, sizeof(t), "delivery >= %.0f %%: between achieved = requested and %g x "
             "requested; a point below the band missed the delivery criterion", 100 * md, md);
    fprintf(f, "<g class=\"delivery-band\">");
    kb_svg_title(f, t);
    fprintf(f, "<path d=\"M%.1f %.1fL%.1f %.1fL%.1f %.1fZ\" fill=\"%s\" fill-opacity=\"0.25\" "
            "stroke=\"none\"/></g>\n", px(x, 0), py(y, 0), px(x, x->hi),
            py(y, fmin(x->hi, y->hi)), px(x, x->hi), py(y, md * fmin(x->hi, y->hi)), BAND);
}

static void chart_achieved(FILE *f, const struct kb_report *r, const char *route)
{
    double top = max_rate(r);
    char title[128], t[64];
    int drawn[KB_REPORT_MAX_AXIS] = { 0 };
    struct legend l = { f, MT + 10 };
    for (size_t i = 0; i < r->nrows; i++)
        if (isfinite(r->rows[i].achieved.max))
            top = fmax(top, r->rows[i].achieved.max);
    struct kb_svg_axis x = { 0, max_rate(r) * 1.05, 0 }, y = { 0, top * 1.05, 0 };
    snprintf(title, sizeof(title), "%s: achieved vs requested rate", route);
    frame(f, title, "requested rate (req/s)", "achieved rate (req/s)");
    xticks(f, &x);
    yticks(f, &y, 0);
    fprintf(f, "<line class=\"ideal\" x1=\"%.1f\" y1=\"%.1f\" x2=\"%.1f\" y2=\"%.1f\" "
            "stroke=\"#999\" stroke-dasharray=\"5 4\"/>\n", px(&x, 0), py(&y, 0),
            px(&x, fmin(x.hi, y.hi)), py(&y, fmin(x.hi, y.hi)));
    band(f, r, &x, &y);
    all_series(f, r, route, &x, &y, S_ACHIEVED, drawn);
    legend_runtimes(&l, r, drawn);
    legend_marks(&l);
    legend_refined(&l, r);
    legend_line(&l, "#999", 1, "5 4", "achieved = requested");
    fprintf(f, "<rect x=\"%d\" y=\"%d\" width=\"26\" height=\"12\" fill=\"%s\" "
            "fill-opacity=\"0.25\"/>", LX, l.y - 6, BAND);
    snprintf(t, sizeof(t), "delivery >= %.0f %%", 100 * r->min_delivery);
    legend_text(&l, t, 22);
    legend_drawing(&l);
}

/* The y range of a latency or cost statistic over the route's rows, with floor included. */
static void stat_range(const struct kb_report *r, const char *route, enum stat st, double *lo,
                       double *hi)
{
    for (size_t i = 0; i < r->nrows; i++) {
        const struct kb_cell *w = &r->rows[i];
        struct kb_stat s = st == S_P99 ? w->p99 : w->cpu_us_per_response;
        double div = st == S_P99 ? 1000 : 1;
        if (!w->n || !w->planned || strcmp(w->route, route) || !s.n || s.min <= 0)
            continue;
        *lo = fmin(*lo, s.min / div);
        *hi = fmax(*hi, s.max / div);
    }
}

static void chart_p99(FILE *f, const struct kb_report *r, const char *route)
{
    double lo = r->max_p99_us / 1000, hi = r->max_p99_us / 1000, lim = r->max_p99_us / 1000;
    char title[128], t[64];
    int drawn[KB_REPORT_MAX_AXIS] = { 0 };
    struct legend l = { f, MT + 10 };
    stat_range(r, route, S_P99, &lo, &hi);
    struct kb_svg_axis x = { 0, max_rate(r) * 1.05, 0 }, y = kb_svg_log_axis(fmax(lo, 1e-3), hi);
    snprintf(title, sizeof(title), "%s: corrected p99 latency vs requested rate", route);
    frame(f, title, "requested rate (req/s)", "corrected p99 (log scale)");
    xticks(f, &x);
    yticks(f, &y, 1);
    if (lim >= y.lo && lim <= y.hi)
        fprintf(f, "<line class=\"limit\" x1=\"%d\" y1=\"%.1f\" x2=\"%d\" y2=\"%.1f\" "
                "stroke=\"%s\" stroke-width=\"1.5\" stroke-dasharray=\"8 4\"/>\n", ML,
                py(&y, lim), W - MR, py(&y, lim), LIMIT);
    all_series(f, r, route, &x, &y, S_P99, drawn);
    legend_runtimes(&l, r, drawn);
    legend_marks(&l);
    legend_refined(&l, r);
    snprintf(t, sizeof(t), "%g ms: controlled limit", lim);
    legend_line(&l, LIMIT, 1.5, "8 4", t);
    legend_drawing(&l);
}

static void chart_cpu(FILE *f, const struct kb_report *r, const char *route)
{
    double lo = 1e9, hi = 0;
    char title[128];
    int drawn[KB_REPORT_MAX_AXIS] = { 0 };
    struct legend l = { f, MT + 10 };
    stat_range(r, route, S_CPU, &lo, &hi);
    if (hi <= 0)
        lo = hi = 1;
    struct kb_svg_axis x = { 0, max_rate(r) * 1.05, 0 }, y = kb_svg_log_axis(lo, hi);
    snprintf(title, sizeof(title), "%s: server CPU per response vs requested rate", route);
    frame(f, title, "requested rate (req/s)", "server CPU per response (log scale)");
    xticks(f, &x);
    yticks(f, &y, 2);
    all_series(f, r, route, &x, &y, S_CPU, drawn);
    legend_runtimes(&l, r, drawn);
    legend_marks(&l);
    legend_refined(&l, r);
    fprintf(f, "<text class=\"label\" x=\"%d\" y=\"%d\" font-size=\"10\" fill=\"#777\">"
            "<tspan x=\"%d\">CPU time over the measured</tspan><tspan x=\"%d\" dy=\"12\">"
            "interval / responses in it</tspan></text>\n", LX, l.y + 8, LX, LX);
    l.y += 30;
    legend_drawing(&l);
}

static void stamp(FILE *f, const struct kb_report *r)
{
    if (r->partial || r->unconstrained)
        fprintf(f, "<text x=\"%d\" y=\"40\" fill=\"#c0392b\" font-weight=\"bold\">%s%s</text>\n",
                W - MR - 220, r->partial ? "PARTIAL " : "", r->unconstrained ? "UNCONSTRAINED" : "");
}

/* ---- latency over time at one point ------------------------------------------------------ */

/* A second's figure: which 0 p50, 1 p99, 2 max; its bound flag in *bound. < 0: none. */
static double sec_fig(const struct kb_report_sec *v, int which, int *bound)
{
    *bound = which == 0 ? v->p50_bound : which == 1 ? v->p99_bound : v->max_bound;
    return which == 0 ? v->p50_us : which == 1 ? v->p99_us : v->max_us;
}

static double sec_x(const struct kb_svg_axis *x, const struct kb_report_sec *v)
{
    return px(x, v->start_s + v->length_s / 2);
}

/* One statistic of a series as a path through its exact seconds, broken where a second has
 * no figure or only a lower bound (those are drawn apart, by bound_marks). */
static void series_line(FILE *f, const struct kb_report_series *s, const struct kb_svg_axis *x,
                        const struct kb_svg_axis *y, int which, const char *style)
{
    static const char *const names[] = { "p50", "p99", "max" };
    char t[96];
    int pen = 0, bound;
    fprintf(f, "<path class=\"stat %s\" fill=\"none\" %s d=\"", names[which], style);
    for (size_t i = 0; i < s->n; i++) {
        double us = sec_fig(&s->v[i], which, &bound);
        if (us <= 0 || bound) {
            pen = 0;
            continue;
        }
        fprintf(f, "%s%.1f %.1f ", pen ? "L" : "M", sec_x(x, &s->v[i]),
                py(y, fmax(us / 1000, y->lo)));
        pen = 1;
    }
    snprintf(t, sizeof(t), "corrected %s in each second", names[which]);
    fprintf(f, "\">");
    kb_svg_title(f, t);
    fprintf(f, "</path>\n");
}

/* Each second whose figure is only a lower bound: the same upward arrow as the curves'. */
static void bound_marks(FILE *f, const struct kb_report_series *s, const struct kb_svg_axis *x,
                        const struct kb_svg_axis *y, int which, const char *c)
{
    static const char *const names[] = { "p50", "p99", "max" };
    char title[96], v[32];
    int bound;
    for (size_t i = 0; i < s->n; i++) {
        double us = sec_fig(&s->v[i], which, &bound);
        if (us <= 0 || !bound)
            continue;
        snprintf(title, sizeof(title), "second %.0f: %s >= %s (lower bound)", s->v[i].start_s,
                 names[which], fmt_us(v, sizeof(v), us));
        bound_arrow(f, sec_x(x, &s->v[i]), py(y, fmax(us / 1000, y->lo)) + 6, c, title);
    }
}

static void series_legend(struct legend *l, const char *const *styles, double lim, int drain)
{
    static const char *const names[] = { "p50", "p99", "max" };
    char t[64];
    for (int k = 0; k < 3; k++) {
        fprintf(l->f, "<path d=\"M%d %d h26\" fill=\"none\" %s/>", LX, l->y, styles[k]);
        snprintf(t, sizeof(t), "%s in each second", names[k]);
        legend_text(l, t, 18);
    }
    bound_arrow(l->f, LX + 13, l->y + 8, "#555", "legend: an arrow up, a lower bound");
    legend_text(l, "lower bound", 20);
    snprintf(t, sizeof(t), "%g ms: controlled limit", lim);
    legend_line(l, LIMIT, 1.5, "8 4", t);
    if (drain) {
        fprintf(l->f, "<rect x=\"%d\" y=\"%d\" width=\"26\" height=\"12\" fill=\"#ececec\" "
                "stroke=\"#777\" stroke-dasharray=\"3 3\"/>", LX, l->y - 6);
        legend_text(l, "drain: no new request", 18);
    }
}

/* The y range of a series in ms: its smallest exact p50 and largest figure, and the limit. */
static struct kb_svg_axis series_y(const struct kb_report *r, const struct kb_report_series *s)
{
    double lo = r->max_p99_us / 1000, hi = r->max_p99_us / 1000;
    for (size_t i = 0; i < s->n; i++) {
        if (s->v[i].p50_us > 0)
            lo = fmin(lo, s->v[i].p50_us / 1000);
        hi = fmax(hi, fmax(s->v[i].max_us, s->v[i].p99_us) / 1000);
    }
    lo = fmin(lo, r->max_p99_us / 2000);   /* the limit line never on the bottom edge */
    return kb_svg_log_axis(fmax(lo, 1e-3), hi);
}

/* A plan's figure in seconds, or 0 when it does not say. */
static double plan_s(const struct kb_report *r, const char *key)
{
    json_t *d = json_object_get(r->plan, key);
    return json_is_number(d) && json_number_value(d) > 0 ? json_number_value(d) : 0;
}

/* The drain after the measured interval, shaded from its start to its planned end, as wide
 * in every chart: its seconds hold late responses of the measured requests, and no new
 * request was sent in it. */
static void drain_shade(FILE *f, const struct kb_svg_axis *x, double dur, double drain)
{
    if (dur <= 0 || drain <= 0)
        return;
    fprintf(f, "<g class=\"drain\">");
    kb_svg_title(f, "drain: after the measured interval no request is sent; the responses that "
             "end here are late answers to measured requests");
    fprintf(f, "<rect x=\"%.1f\" y=\"%d\" width=\"%.1f\" height=\"%d\" fill=\"#ececec\"/>"
            "<line x1=\"%.1f\" y1=\"%d\" x2=\"%.1f\" y2=\"%d\" stroke=\"#777\" "
            "stroke-dasharray=\"3 3\"/></g>\n", px(x, dur), MT + 1,
            px(x, dur + drain) - px(x, dur), H - MB - MT - 2, px(x, dur), MT, px(x, dur), H - MB);
}

/* The footnote's figures: the rate of whole seconds inside the measured interval (a drain
 * second, or a short tail slice, says nothing of it), errors and lower bounds. */
static void series_totals(const struct kb_report_series *s, double dur, double *amin,
                          double *amax, long long *errors, long long *bounded, double *end)
{
    *amin = -1;
    *amax = 0;
    *errors = *bounded = 0;
    *end = 1;
    for (size_t i = 0; i < s->n; i++) {
        const struct kb_report_sec *q = &s->v[i];
        *end = fmax(*end, q->start_s + q->length_s);
        *errors += q->errors;
        *bounded += q->bounded;
        if (q->length_s >= 0.5 && (dur <= 0 || q->start_s + q->length_s <= dur + 1e-6)) {
            *amin = *amin < 0 ? q->achieved_rps : fmin(*amin, q->achieved_rps);
            *amax = fmax(*amax, q->achieved_rps);
        }
    }
}

static void second_dots(FILE *f, const struct kb_report_series *s, const struct kb_svg_axis *x,
                        const struct kb_svg_axis *y, const char *c)
{
    char title[96], v[32];
    for (size_t i = 0; i < s->n; i++)
        if (s->v[i].p99_us > 0 && !s->v[i].p99_bound) {
            snprintf(title, sizeof(title), "second %.0f: p99 %s", s->v[i].start_s,
                     fmt_us(v, sizeof(v), s->v[i].p99_us));
            fprintf(f, "<g class=\"second\">");
            kb_svg_title(f, title);
            fprintf(f, "<circle cx=\"%.1f\" cy=\"%.1f\" r=\"2.5\" fill=\"%s\"/></g>\n",
                    sec_x(x, &s->v[i]), py(y, fmax(s->v[i].p99_us / 1000, y->lo)), c);
        }
}

/* Latency over time at one point: the seconds on x, corrected latency (log) on y. */
static void chart_series(FILE *f, const struct kb_report *r, const struct kb_report_series *s)
{
    const char *c = color_of(r, s->runtime);
    char title[256], st[3][128];
    const char *styles[3] = { st[0], st[1], st[2] };
    double end, amin, amax, dur = plan_s(r, "duration_s"), drain = plan_s(r, "drain_s");
    double lim = r->max_p99_us / 1000;
    long long errors, bounded;
    struct legend l = { f, MT + 10 };
    series_totals(s, dur, &amin, &amax, &errors, &bounded, &end);
    struct kb_svg_axis x = { 0, fmax(end, dur + drain), 0 }, y = series_y(r, s);
    snprintf(st[0], sizeof(st[0]), "stroke=\"%s\" stroke-width=\"1.5\" stroke-dasharray=\"2 3\"", c);
    snprintf(st[1], sizeof(st[1]), "stroke=\"%s\" stroke-width=\"2.5\"", c);
    snprintf(st[2], sizeof(st[2]), "stroke=\"#555\" stroke-width=\"1.5\"");
    snprintf(title, sizeof(title), "%s %s at %ld req/s: corrected latency per second, %s",
             s->runtime, s->route, s->rate, s->past_margin ? "first point past the criteria "
             "(client-limited)" : "first uncontrolled point");
    frame(f, title, dur > 0 && drain > 0 ? "time into the measured interval (s); shaded: "
          "the drain after it" : "time into the measured interval (s)",
          "corrected latency (log scale)");
    drain_shade(f, &x, dur, drain);
    xticks(f, &x);
    yticks(f, &y, 1);
    fprintf(f, "<line class=\"limit\" x1=\"%d\" y1=\"%.1f\" x2=\"%d\" y2=\"%.1f\" stroke=\"%s\" "
            "stroke-width=\"1.5\" stroke-dasharray=\"8 4\"/>\n", ML, py(&y, lim), W - MR,
            py(&y, lim), LIMIT);
    /* the thick p99 first, the thinner max and p50 over it, so none hides another */
    for (int n = 0, k = 1; n < 3; n++, k = (k + 1) % 3)
        series_line(f, s, &x, &y, k, styles[k]);
    /* a dot per exact second on p99, so a second alone between gaps still shows */
    second_dots(f, s, &x, &y, c);
    for (int k = 2; k >= 0; k--)
        bound_marks(f, s, &x, &y, k, k == 2 ? "#555" : c);
    series_legend(&l, styles, lim, dur > 0 && drain > 0);
    fprintf(f, "<text x=\"%d\" y=\"%d\" fill=\"#777\" font-size=\"11\">point ", ML, H - MB + 52);
    kb_svg_xml(f, s->point);
    fprintf(f, ": %.0f-%.0f req/s per whole measured second, %lld error(s), %lld lower "
            "bound(s); gaps: no latency</text>\n", amin < 0 ? 0 : amin, amax, errors, bounded);
}

/* ---- files ------------------------------------------------------------------------------- */

static int write_svg(const char *path, char *buf, size_t len, char *err, size_t errlen)
{
    int rc = kb_write_atomic(path, buf, len, err, errlen);
    free(buf);
    return rc;
}

static int write_series_chart(const struct kb_report *r, const char *dir,
                              const struct kb_report_series *s, char *err, size_t errlen)
{
    char *buf = NULL, path[KB_PATH_MAX];
    size_t len = 0;
    FILE *f = open_memstream(&buf, &len);
    if (!f) {
        snprintf(err, errlen, "out of memory");
        return -1;
    }
    chart_series(f, r, s);
    context(f, r, s->route);
    stamp(f, r);
    fprintf(f, "</svg>\n");
    fclose(f);
    snprintf(path, sizeof(path), "%s/charts/series-%s-%s.svg", dir, s->runtime, s->route);
    return write_svg(path, buf, len, err, errlen);
}

void kb_report_svg_chart(FILE *f, const struct kb_report *r, const char *kind,
                         const char *route)
{
    if (!strcmp(kind, "achieved"))
        chart_achieved(f, r, route);
    else if (!strcmp(kind, "p99"))
        chart_p99(f, r, route);
    else
        chart_cpu(f, r, route);
    context(f, r, route);
    stamp(f, r);
    fprintf(f, "</svg>\n");
}

static int write_chart(const struct kb_report *r, const char *dir, const char *kind,
                       const char *route, char *err, size_t errlen)
{
    char *buf = NULL, path[KB_PATH_MAX];
    size_t len = 0;
    FILE *f = open_memstream(&buf, &len);
    if (!f) {
        snprintf(err, errlen, "out of memory");
        return -1;
    }
    kb_report_svg_chart(f, r, kind, route);
    fclose(f);
    snprintf(path, sizeof(path), "%s/charts/%s-%s.svg", dir, kind, route);
    return write_svg(path, buf, len, err, errlen);
}

/* ---- a point's latency over time, small, for report.html's grid ------------------------ */

#define SW 200
#define SH 110
#define SL 34
#define SB 16

void kb_report_svg_small_series(FILE *f, const struct kb_report *r,
                                const struct kb_report_series *s, double lo_ms, double hi_ms)
{
    struct kb_svg_axis y = kb_svg_log_axis(lo_ms, hi_ms);
    double dur = plan_s(r, "duration_s"), drain = plan_s(r, "drain_s"), end = dur + drain;
    double lim = r->max_p99_us / 1000;
    char title[160];
    for (size_t i = 0; i < s->n; i++)
        end = fmax(end, s->v[i].start_s + s->v[i].length_s);
#define SX(t) (SL + (t) / (end > 0 ? end : 1) * (SW - SL - 4))
#define SY(ms) (SH - SB - (log10(fmax(ms, y.lo)) - log10(y.lo)) / (log10(y.hi) - log10(y.lo)) * (SH - SB - 6))
    snprintf(title, sizeof(title), "%s %s at %ld req/s: corrected p50 and p99 in each second",
             s->runtime, s->route, s->rate);
    fprintf(f, "<svg xmlns=\"http://www.w3.org/2000/svg\" class=\"small\" width=\"%d\" "
            "height=\"%d\" viewBox=\"0 0 %d %d\" font-family=\"sans-serif\" font-size=\"9\">",
            SW, SH, SW, SH);
    kb_svg_title(f, title);
    fprintf(f, "<rect width=\"100%%\" height=\"100%%\" fill=\"white\"/>");
    if (dur > 0 && drain > 0)
        fprintf(f, "<rect x=\"%.1f\" y=\"6\" width=\"%.1f\" height=\"%d\" fill=\"#ececec\"/>",
                SX(dur), SX(dur + drain) - SX(dur), SH - SB - 6);
    for (double v = y.lo; v <= y.hi * 1.0001; v *= 10) {
        char lab[24];
        kb_svg_tick_label(lab, sizeof(lab), v, 1);
        fprintf(f, "<line x1=\"%d\" y1=\"%.1f\" x2=\"%d\" y2=\"%.1f\" stroke=\"#eee\"/>"
                "<text x=\"%d\" y=\"%.1f\" text-anchor=\"end\" fill=\"#777\">%s</text>",
                SL, SY(v), SW - 4, SY(v), SL - 2, SY(v) + 3, lab);
    }
    if (lim >= y.lo && lim <= y.hi)
        fprintf(f, "<line x1=\"%d\" y1=\"%.1f\" x2=\"%d\" y2=\"%.1f\" stroke=\"%s\" "
                "stroke-dasharray=\"4 3\"/>", SL, SY(lim), SW - 4, SY(lim), LIMIT);
    for (int which = 0; which < 2; which++) {
        int pen = 0, bound;
        fprintf(f, "<path class=\"stat %s\" fill=\"none\" stroke=\"%s\" stroke-width=\"%s\"%s "
                "d=\"", which ? "p99" : "p50", color_of(r, s->runtime), which ? "2" : "1",
                which ? "" : " stroke-dasharray=\"2 2\"");
        for (size_t i = 0; i < s->n; i++) {
            double us = sec_fig(&s->v[i], which, &bound), t = s->v[i].start_s + s->v[i].length_s / 2;
            if (us <= 0) {
                pen = 0;
                continue;
            }
            fprintf(f, "%s%.1f %.1f ", pen ? "L" : "M", SX(t), SY(us / 1000));
            pen = 1;
        }
        fprintf(f, "\"/>");
    }
    fprintf(f, "<text x=\"%d\" y=\"%d\" fill=\"#555\">%g s measured%s</text></svg>", SL, SH - 3,
            dur, dur > 0 && drain > 0 ? ", drain shaded" : "");
#undef SX
#undef SY
}

int kb_report_write_svg(const struct kb_report *r, const char *dir, char *err, size_t errlen)
{
    static const char *const kinds[] = { "achieved", "p99", "cpu" };
    char cdir[KB_PATH_MAX];
    /* charts/ planted as a link would take every chart elsewhere */
    if (kb_mkdirs(kb_path(cdir, sizeof(cdir), dir, "charts"), err, errlen) < 0 ||
        kb_dir_own(cdir, 0, err, errlen) < 0)
        return -1;
    for (size_t j = 0; j < kb_report_nroutes(r); j++)
        for (size_t k = 0; k < 3; k++)
            if (write_chart(r, dir, kinds[k], kb_report_route(r, j), err, errlen) < 0)
                return -1;
    for (size_t i = 0; i < r->nseries; i++)
        if (r->series[i].n && write_series_chart(r, dir, &r->series[i], err, errlen) < 0)
            return -1;
    return 0;
}
