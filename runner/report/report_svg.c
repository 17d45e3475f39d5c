/* report_svg.c -- two charts per route, one line per runtime: achieved vs requested rate
 * (linear, with the ideal y = x), and corrected p99 vs requested rate (log axis, with the
 * controlled limit line). A marker's shape is the verdict the point's own figures give
 * (circle controlled, square uncontrolled, cross failed, diamond unknown), its fill the
 * client's trust (filled: trusted; hollow: client-limited), so both show at once; repeats
 * draw min-max bars. A figure that is only a lower bound is never drawn as exact: an
 * upward arrow marks it and the line to it is dashed. The achieved chart shades the band
 * of the delivery criterion under achieved = requested. Runtimes with the same figures do
 * not hide one another: every line is drawn before any mark, each line narrower than the
 * ones drawn before it, and the runtimes' marks at one rate are set a few pixels apart.
 * Every mark and every line has a <title>; names are escaped.
 * And per runtime x route, its first uncontrolled point's corrected p50, p99 and max per
 * second against time (log axis, the same limit line), where the queue forms, with the
 * drain after the measured interval shaded; a second whose figure is a lower bound is an
 * open upward triangle, off the lines. */
#define _GNU_SOURCE
#include "runner/report/report.h"
#include "runner/report/report_int.h"
#include "runner/util/evidence.h"

#include <math.h>
#include <stdlib.h>
#include <string.h>

#define W 860
#define H 500
#define ML 80
#define MR 170
#define MT 46
#define MB 60
#define DODGE 7.0   /* px between the runtimes' marks at one rate */
#define BAND "#95a5a6"   /* the delivery band, far from every runtime's colour */

struct axis {
    double lo, hi;
    int log;
};

static double map(const struct axis *a, double v, double p0, double p1)
{
    double t = a->log ? (log10(v) - log10(a->lo)) / (log10(a->hi) - log10(a->lo))
                      : (v - a->lo) / (a->hi - a->lo);
    return p0 + t * (p1 - p0);
}
static double px(const struct axis *a, double v) { return map(a, v, ML, W - MR); }
static double py(const struct axis *a, double v) { return map(a, v, H - MB, MT); }

static const char *color(const char *runtime, size_t i)
{
    static const char *const named[][2] = { { "php-fpm", "#8e44ad" }, { "node", "#27ae60" },
                                            { "go", "#2980b9" }, { "gray-static", "#c0392b" } };
    static const char *const spare[] = { "#d35400", "#16a085", "#7f8c8d", "#2c3e50" };
    for (size_t k = 0; k < 4; k++)
        if (!strcmp(runtime, named[k][0]))
            return named[k][1];
    return spare[i % 4];
}

/* Runtime i's horizontal offset: the runtimes' marks at one rate side by side, centred on
 * the rate, so identical figures never stack into one mark. A few pixels of a chart that
 * spans tens of thousands of req/s; each mark's <title> gives the exact rate. */
static double dodge(const struct kb_report *r, size_t i)
{
    return ((double)i - (double)(kb_report_nruntimes(r) - 1) / 2) * DODGE;
}

/* Runtime i's line width: lines are drawn in plan order, each narrower than every line
 * before it, so one over another with the same figures leaves it showing on both sides. */
static double line_width(const struct kb_report *r, size_t i)
{
    return 2.0 + 1.5 * (double)(kb_report_nruntimes(r) - 1 - i);
}

/* A 1-2-5 step giving about six ticks; never zero, so tick loops end. */
static double nice_step(double span)
{
    double raw = (span > 0 ? span : 1) / 6, mag = pow(10, floor(log10(raw))), f = raw / mag;
    return mag * (f < 1.5 ? 1 : f < 3.5 ? 2 : f < 7.5 ? 5 : 10);
}

static void tick_label(char *buf, size_t len, double v, int ms)
{
    if (ms)
        snprintf(buf, len, v >= 1000 ? "%.0f s" : v >= 1 ? "%.0f ms" : "%g ms",
                 v >= 1000 ? v / 1000 : v);
    else
        snprintf(buf, len, v >= 1000 ? "%gk" : "%g", v >= 1000 ? v / 1000 : v);
}

/* Text for SVG: runtime and route names come from the contract, so escape them. */
static void xml(FILE *f, const char *s)
{
    for (; *s; s++)
        switch (*s) {
        case '&': fputs("&amp;", f); break;
        case '<': fputs("&lt;", f); break;
        case '>': fputs("&gt;", f); break;
        case '"': fputs("&quot;", f); break;
        default: fputc(*s, f);
        }
}

/* <title>text</title>: what a screen reader says and a hover shows. */
static void title_el(FILE *f, const char *text)
{
    fputs("<title>", f);
    xml(f, text);
    fputs("</title>", f);
}

static void frame(FILE *f, const char *title, const char *xl, const char *yl)
{
    fprintf(f, "<svg xmlns=\"http://www.w3.org/2000/svg\" width=\"%d\" height=\"%d\" "
            "viewBox=\"0 0 %d %d\" font-family=\"sans-serif\" font-size=\"12\">\n",
            W, H, W, H);
    title_el(f, title);
    fprintf(f, "\n<rect width=\"100%%\" height=\"100%%\" fill=\"white\"/>\n"
            "<text x=\"%d\" y=\"24\" font-size=\"15\" font-weight=\"bold\">", ML);
    xml(f, title);
    fprintf(f, "</text>\n<text x=\"%d\" y=\"%d\" text-anchor=\"middle\">%s</text>\n"
            "<text transform=\"translate(18 %d) rotate(-90)\" text-anchor=\"middle\">%s</text>\n"
            "<rect x=\"%d\" y=\"%d\" width=\"%d\" height=\"%d\" fill=\"none\" stroke=\"#333\"/>\n",
            (ML + W - MR) / 2, H - 16, xl, (MT + H - MB) / 2, yl, ML, MT, W - MR - ML, H - MB - MT);
}

static void xticks(FILE *f, const struct axis *x)
{
    char lab[32];
    for (double v = x->lo, st = nice_step(x->hi - x->lo); v <= x->hi + st / 1e6; v += st) {
        tick_label(lab, sizeof(lab), v, 0);
        fprintf(f, "<line x1=\"%.1f\" y1=\"%d\" x2=\"%.1f\" y2=\"%d\" stroke=\"#ddd\"/>"
                "<text x=\"%.1f\" y=\"%d\" text-anchor=\"middle\">%s</text>\n",
                px(x, v), MT, px(x, v), H - MB, px(x, v), H - MB + 16, lab);
    }
}

static void yticks(FILE *f, const struct axis *y, int ms)
{
    char lab[32];
    if (y->log) {
        for (double v = y->lo; v > 0 && v <= y->hi * 1.0001; v *= 10) {
            tick_label(lab, sizeof(lab), v, ms);
            fprintf(f, "<line x1=\"%d\" y1=\"%.1f\" x2=\"%d\" y2=\"%.1f\" stroke=\"#ddd\"/>"
                    "<text x=\"%d\" y=\"%.1f\" text-anchor=\"end\">%s</text>\n",
                    ML, py(y, v), W - MR, py(y, v), ML - 6, py(y, v) + 4, lab);
        }
        return;
    }
    for (double v = y->lo, st = nice_step(y->hi - y->lo); v <= y->hi + st / 1e6; v += st) {
        tick_label(lab, sizeof(lab), v, 0);
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

/* One verdict shape (kind: controlled circle, uncontrolled square, failed cross, else a
 * diamond) centred on x, y. */
static void shape(FILE *f, const char *kind, double x, double y, const char *fill,
                  const char *stroke, double width)
{
    if (!strcmp(kind, "failed"))
        fprintf(f, "<path d=\"M%.1f %.1fl10 10m0 -10l-10 10\" fill=\"none\" stroke=\"%s\" "
                "stroke-width=\"%.1f\"/>", x - 5, y - 5, stroke, width + 0.5);
    else if (!strcmp(kind, "uncontrolled"))
        fprintf(f, "<rect x=\"%.1f\" y=\"%.1f\" width=\"9\" height=\"9\" fill=\"%s\" "
                "stroke=\"%s\" stroke-width=\"%.1f\"/>", x - 4.5, y - 4.5, fill, stroke, width);
    else if (!strcmp(kind, "controlled"))
        fprintf(f, "<circle cx=\"%.1f\" cy=\"%.1f\" r=\"4.5\" fill=\"%s\" stroke=\"%s\" "
                "stroke-width=\"%.1f\"/>", x, y, fill, stroke, width);
    else
        fprintf(f, "<path d=\"M%.1f %.1fl5.5 5.5l-5.5 5.5l-5.5 -5.5z\" fill=\"%s\" stroke=\"%s\" "
                "stroke-width=\"%.1f\"/>", x, y - 5.5, fill, stroke, width);
}

/* A verdict mark: shape from the figures' own verdict ("" unknown), hollow when the client
 * was not trusted; class names say both, for readers and tests. A white halo under it keeps
 * it apart from its own line and from a neighbour's mark. */
static void marker(FILE *f, double x, double y, const char *own, int trusted, const char *c,
                   const char *title)
{
    const char *kind = own[0] ? own : "unknown";
    fprintf(f, "<g class=\"mark %s %s\">", kind, trusted ? "trusted" : "client-limited");
    if (title)
        title_el(f, title);
    shape(f, kind, x, y, "white", "white", 4);
    shape(f, kind, x, y, trusted ? c : "white", c, 2);
    fprintf(f, "</g>\n");
}

/* A lower bound: an arrow up from the mark, since the true value is at or above it. */
static void bound_arrow(FILE *f, double x, double y, const char *c)
{
    fprintf(f, "<path class=\"bound\" d=\"M%.1f %.1fv-14m-4 5l4 -5l4 5\" fill=\"none\" "
            "stroke=\"%s\" stroke-width=\"1.8\">", x, y - 6, c);
    title_el(f, "lower bound: the true value is at least this (requests unanswered when the "
             "drain ended, recorded at what they had waited by then)");
    fprintf(f, "</path>\n");
}

/* The legend; with_band: the achieved chart's delivery band has an entry. */
static void legend(FILE *f, const struct kb_report *r, int with_band)
{
    int y = MT + 10;
    char t[96];
    static const char *const kinds[] = { "controlled", "uncontrolled", "failed", "" };
    static const char *const names[] = { "controlled", "uncontrolled", "failed", "unknown" };
    for (size_t i = 0; i < kb_report_nruntimes(r); i++, y += 20) {
        const char *rt = kb_report_runtime(r, i);
        fprintf(f, "<line x1=\"%d\" y1=\"%d\" x2=\"%d\" y2=\"%d\" stroke=\"%s\" stroke-width=\"2.5\"/>"
                "<text x=\"%d\" y=\"%d\">", W - MR + 14, y, W - MR + 40, y, color(rt, i),
                W - MR + 46, y + 4);
        xml(f, rt);
        fprintf(f, "</text>\n");
    }
    y += 14;
    for (size_t k = 0; k < 4; k++, y += 20) {
        snprintf(t, sizeof(t), "legend: %s (the verdict the point's own figures give)", names[k]);
        marker(f, W - MR + 27, y, kinds[k], 1, "#555", t);
        fprintf(f, "<text x=\"%d\" y=\"%d\">%s</text>\n", W - MR + 46, y + 4, names[k]);
    }
    marker(f, W - MR + 27, y, "controlled", 0, "#555", "legend: hollow, the client was not "
           "trusted (client-limited)");
    fprintf(f, "<text x=\"%d\" y=\"%d\">hollow: client-</text><text x=\"%d\" y=\"%d\">"
            "limited</text>\n", W - MR + 46, y + 4, W - MR + 46, y + 18);
    y += 42;
    bound_arrow(f, W - MR + 27, y + 6, "#555");
    fprintf(f, "<text x=\"%d\" y=\"%d\">lower bound</text>\n", W - MR + 46, y);
    if (with_band) {
        y += 26;
        fprintf(f, "<rect x=\"%d\" y=\"%d\" width=\"26\" height=\"12\" fill=\"%s\" "
                "fill-opacity=\"0.25\"/><text x=\"%d\" y=\"%d\">delivery &gt;= %.0f %%</text>\n",
                W - MR + 14, y - 10, BAND, W - MR + 46, y, 100 * r->min_delivery);
    }
    y += 26;
    fprintf(f, "<text x=\"%d\" y=\"%d\" font-size=\"10\" fill=\"#777\">marks at one rate are "
            "set</text><text x=\"%d\" y=\"%d\" font-size=\"10\" fill=\"#777\">%.0f px apart, "
            "in legend order</text>\n", W - MR + 14, y, W - MR + 14, y + 13, DODGE);
}

/* The row at rate k and its charted statistic, or NULL when there is nothing to draw: no
 * complete point, or (p99) a point without the figure (nothing recorded). */
static const struct kb_report_row *charted(const struct kb_report *r, const char *rt,
                                           const char *route, size_t k, int p99,
                                           struct kb_stat *s)
{
    const struct kb_report_row *w = kb_report_row(r, rt, route, kb_report_rate(r, k));
    if (!w || !w->n)
        return NULL;
    *s = p99 ? w->p99 : w->achieved;
    return p99 && s->n == 0 ? NULL : w;
}

/* The charted value's y: p99 in us on a ms axis, the achieved rate as it is. */
static double yval(const struct axis *y, double v, int p99)
{
    return py(y, fmax(p99 ? v / 1000 : v, y->lo));
}

/* "go 45000 req/s: p99 >= 1.90 s, client-limited (server: uncontrolled)" */
static void mark_title(char *b, size_t len, const struct kb_report_row *w, struct kb_stat s,
                       int p99)
{
    char v[32];
    if (p99)
        fmt_us(v, sizeof(v), s.med);
    else
        snprintf(v, sizeof(v), "%.0f req/s", s.med);
    snprintf(b, len, "%s %ld req/s: %s %s%s%s, %s%s%s%s", w->runtime, w->rate,
             p99 ? "p99" : "achieved", p99 && s.bound ? ">= " : "", v,
             p99 && s.bound ? " (lower bound)" : "", w->verdict,
             strcmp(w->verdict, "client-limited") ? "" : " (server: ",
             strcmp(w->verdict, "client-limited") ? "" : (w->server_verdict[0] ? w->server_verdict
                                                                              : "unknown"),
             strcmp(w->verdict, "client-limited") ? "" : ")");
}

/* Segments between consecutive drawn points: solid when both are exact, dashed when either
 * is only a lower bound (the line would otherwise claim a value). dx: the runtime's offset;
 * width: its line width. */
static void segments(FILE *f, const struct kb_report *r, const char *rt, const char *route,
                     const struct axis *x, const struct axis *y, int p99, const char *c,
                     double dx, double width)
{
    const struct kb_report_row *w, *prev = NULL;
    struct kb_stat s, ps = { 0, 0, 0, 0, 0 };
    for (size_t k = 0; k < kb_report_nrates(r); k++) {
        if (!(w = charted(r, rt, route, k, p99, &s)))
            continue;
        if (prev)
            fprintf(f, "<line class=\"%s\" x1=\"%.1f\" y1=\"%.1f\" x2=\"%.1f\" y2=\"%.1f\" "
                    "stroke=\"%s\" stroke-width=\"%.1f\"%s/>\n",
                    ps.bound || s.bound ? "to-bound" : "exact", px(x, (double)prev->rate) + dx,
                    yval(y, ps.med, p99), px(x, (double)w->rate) + dx, yval(y, s.med, p99), c,
                    width, ps.bound || s.bound ? " stroke-dasharray=\"6 4\"" : "");
        prev = w;
        ps = s;
    }
}

/* <g class="KIND" data-runtime="RT"> with the runtime's name escaped. */
static void group_open(FILE *f, const char *kind, const char *rt)
{
    fprintf(f, "<g class=\"%s\" data-runtime=\"", kind);
    xml(f, rt);
    fprintf(f, "\">");
}

/* One runtime's line, in a group whose <title> names it; p99 picks the statistic. */
static void series_line_of(FILE *f, const struct kb_report *r, size_t i, const char *route,
                           const struct axis *x, const struct axis *y, int p99)
{
    const char *rt = kb_report_runtime(r, i);
    char title[160];
    snprintf(title, sizeof(title), "%s: %s against the requested rate", rt,
             p99 ? "corrected p99" : "achieved rate");
    group_open(f, "series", rt);
    title_el(f, title);
    fputc('\n', f);
    segments(f, r, rt, route, x, y, p99, color(rt, i), dodge(r, i), line_width(r, i));
    fprintf(f, "</g>\n");
}

/* One runtime's range bars, markers and bound arrows, each with its <title>. */
static void series_marks(FILE *f, const struct kb_report *r, size_t i, const char *route,
                         const struct axis *x, const struct axis *y, int p99)
{
    const char *rt = kb_report_runtime(r, i), *c = color(rt, i);
    const struct kb_report_row *w;
    struct kb_stat s;
    char title[256], lo[32], hi[32];
    group_open(f, "marks", rt);
    fputc('\n', f);
    for (size_t k = 0; k < kb_report_nrates(r); k++) {
        double cx, cy;
        if (!(w = charted(r, rt, route, k, p99, &s)))
            continue;
        cx = px(x, (double)w->rate) + dodge(r, i);
        cy = yval(y, s.med, p99);
        if (w->n > 1) {
            if (p99) {
                fmt_us(lo, sizeof(lo), s.min);
                fmt_us(hi, sizeof(hi), s.max);
            } else {
                snprintf(lo, sizeof(lo), "%.0f", s.min);
                snprintf(hi, sizeof(hi), "%.0f req/s", s.max);
            }
            fprintf(f, "<line class=\"range\" x1=\"%.1f\" y1=\"%.1f\" x2=\"%.1f\" y2=\"%.1f\" "
                    "stroke=\"%s\">", cx, yval(y, s.min, p99), cx, yval(y, s.max, p99), c);
            snprintf(title, sizeof(title), "range over %d repeats of %s %ld req/s: %s%s-%s", w->n,
                     w->runtime, w->rate, p99 && s.bound ? ">= " : "", lo, hi);
            title_el(f, title);
            fprintf(f, "</line>\n");
        }
        mark_title(title, sizeof(title), w, s, p99);
        marker(f, cx, cy, w->server_verdict, strcmp(w->verdict, "client-limited") != 0, c, title);
        if (p99 && s.bound)
            bound_arrow(f, cx, cy, c);
    }
    fprintf(f, "</g>\n");
}

/* Every runtime's line first, then every runtime's marks, so no line covers a mark. */
static void all_series(FILE *f, const struct kb_report *r, const char *route,
                       const struct axis *x, const struct axis *y, int p99)
{
    for (size_t i = 0; i < kb_report_nruntimes(r); i++)
        series_line_of(f, r, i, route, x, y, p99);
    for (size_t i = 0; i < kb_report_nruntimes(r); i++)
        series_marks(f, r, i, route, x, y, p99);
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
static void band(FILE *f, const struct kb_report *r, const struct axis *x, const struct axis *y)
{
    char t[200];
    double md = r->min_delivery > 0 ? r->min_delivery : 1;
    snprintf(t, sizeof(t), "delivery >= %.0f %%: between achieved = requested and %g x "
             "requested; a point below the band missed the delivery criterion", 100 * md, md);
    fprintf(f, "<g class=\"delivery-band\">");
    title_el(f, t);
    fprintf(f, "<path d=\"M%.1f %.1fL%.1f %.1fL%.1f %.1fZ\" fill=\"%s\" fill-opacity=\"0.25\" "
            "stroke=\"none\"/><text x=\"%.1f\" y=\"%.1f\" fill=\"#7f8c8d\" font-size=\"11\">"
            "delivery &gt;= %.0f %%</text></g>\n", px(x, 0), py(y, 0), px(x, x->hi), py(y, x->hi),
            px(x, x->hi), py(y, md * x->hi), BAND, px(x, x->hi * 0.8) + 8,
            py(y, md * x->hi * 0.8) + 14, 100 * md);
}

static void chart_achieved(FILE *f, const struct kb_report *r, const char *route)
{
    double top = max_rate(r);
    char title[128];
    for (size_t i = 0; i < r->nrows; i++)
        top = fmax(top, r->rows[i].achieved.max);
    struct axis x = { 0, max_rate(r) * 1.05, 0 }, y = { 0, top * 1.05, 0 };
    snprintf(title, sizeof(title), "%s: achieved vs requested rate", route);
    frame(f, title, "requested rate (req/s)", "achieved rate (req/s)");
    xticks(f, &x);
    yticks(f, &y, 0);
    fprintf(f, "<line x1=\"%.1f\" y1=\"%.1f\" x2=\"%.1f\" y2=\"%.1f\" stroke=\"#999\" "
            "stroke-dasharray=\"5 4\"/><text x=\"%.1f\" y=\"%.1f\" fill=\"#777\" "
            "text-anchor=\"end\">achieved = requested</text>\n",
            px(&x, 0), py(&y, 0), px(&x, x.hi), py(&y, fmin(x.hi, y.hi)), px(&x, x.hi * 0.5) - 10,
            py(&y, x.hi * 0.5) - 4);
    band(f, r, &x, &y);
    all_series(f, r, route, &x, &y, 0);
}

static void chart_p99(FILE *f, const struct kb_report *r, const char *route)
{
    double lo = r->max_p99_us / 1000, hi = r->max_p99_us / 1000;
    char title[128];
    for (size_t i = 0; i < r->nrows; i++)
        if (r->rows[i].n && r->rows[i].p99.n && r->rows[i].p99.min > 0) {
            lo = fmin(lo, r->rows[i].p99.min / 1000);
            hi = fmax(hi, r->rows[i].p99.max / 1000);
        }
    struct axis x = { 0, max_rate(r) * 1.05, 0 };
    struct axis y = { pow(10, floor(log10(fmax(lo, 1e-3)))),
                      pow(10, ceil(log10(fmax(hi, 1e-3) * 1.2))), 1 };
    snprintf(title, sizeof(title), "%s: corrected p99 latency vs requested rate", route);
    frame(f, title, "requested rate (req/s)", "corrected p99 (log scale)");
    xticks(f, &x);
    yticks(f, &y, 1);
    fprintf(f, "<line x1=\"%d\" y1=\"%.1f\" x2=\"%d\" y2=\"%.1f\" stroke=\"#e74c3c\" "
            "stroke-width=\"1.5\" stroke-dasharray=\"8 4\"/><text x=\"%d\" y=\"%.1f\" "
            "fill=\"#e74c3c\">%g ms: controlled limit</text>\n", ML, py(&y, r->max_p99_us / 1000),
            W - MR, py(&y, r->max_p99_us / 1000), ML + 6, py(&y, r->max_p99_us / 1000) - 5,
            r->max_p99_us / 1000);
    all_series(f, r, route, &x, &y, 1);
    fprintf(f, "<text x=\"%d\" y=\"%d\" fill=\"#777\" font-size=\"11\">an arrow marks a lower "
            "bound (requests unanswered at drain end); points with no latency recorded are not "
            "drawn</text>\n", ML, H - 4);
}

static void stamp(FILE *f, const struct kb_report *r)
{
    if (r->partial || r->unconstrained)
        fprintf(f, "<text x=\"%d\" y=\"40\" fill=\"#c0392b\" font-weight=\"bold\">%s%s</text>\n",
                W - MR - 220, r->partial ? "PARTIAL " : "", r->unconstrained ? "UNCONSTRAINED" : "");
}

/* A second's figure: which 0 p50, 1 p99, 2 max; its bound flag in *bound. < 0: none. */
static double sec_fig(const struct kb_report_sec *v, int which, int *bound)
{
    *bound = which == 0 ? v->p50_bound : which == 1 ? v->p99_bound : v->max_bound;
    return which == 0 ? v->p50_us : which == 1 ? v->p99_us : v->max_us;
}

static double sec_x(const struct axis *x, const struct kb_report_sec *v)
{
    return px(x, v->start_s + v->length_s / 2);
}

/* One statistic of a series as a path through its exact seconds, broken where a second has
 * no figure or only a lower bound (those are drawn apart, by bound_marks). */
static void series_line(FILE *f, const struct kb_report_series *s, const struct axis *x,
                        const struct axis *y, int which, const char *style)
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
        fprintf(f, "%s%.1f %.1f ", pen ? "L" : "M", sec_x(x, &s->v[i]), py(y, fmax(us / 1000, y->lo)));
        pen = 1;
    }
    snprintf(t, sizeof(t), "corrected %s in each second", names[which]);
    fprintf(f, "\">");
    title_el(f, t);
    fprintf(f, "</path>\n");
}

/* Each second whose figure is only a lower bound: an open triangle pointing up. */
static void bound_marks(FILE *f, const struct kb_report_series *s, const struct axis *x,
                        const struct axis *y, int which, const char *c)
{
    static const char *const names[] = { "p50", "p99", "max" };
    char title[96], v[32];
    int bound;
    for (size_t i = 0; i < s->n; i++) {
        double us = sec_fig(&s->v[i], which, &bound), cx = sec_x(x, &s->v[i]), cy;
        if (us <= 0 || !bound)
            continue;
        cy = py(y, fmax(us / 1000, y->lo));
        snprintf(title, sizeof(title), "second %.0f: %s >= %s (lower bound)", s->v[i].start_s,
                 names[which], fmt_us(v, sizeof(v), us));
        fprintf(f, "<g class=\"bound\">");
        title_el(f, title);
        fprintf(f, "<path d=\"M%.1f %.1fl4.5 8h-9z\" fill=\"white\" stroke=\"%s\" "
                "stroke-width=\"1.5\"/></g>\n", cx, cy - 5, c);
    }
}

static void series_legend(FILE *f, const char *const *styles)
{
    static const char *const names[] = { "p50", "p99", "max" };
    for (int k = 0; k < 3; k++)
        fprintf(f, "<path d=\"M%d %d h26\" fill=\"none\" %s/><text x=\"%d\" y=\"%d\">%s "
                "in each second</text>\n", W - MR + 14, MT + 10 + 20 * k, styles[k], W - MR + 46,
                MT + 14 + 20 * k, names[k]);
    fprintf(f, "<path d=\"M%d %dl4.5 8h-9z\" fill=\"white\" stroke=\"#555\"/><text x=\"%d\" "
            "y=\"%d\">lower bound</text>\n", W - MR + 27, MT + 66, W - MR + 46, MT + 74);
}

/* The y range of a series in ms: its smallest exact p50 and largest figure, and the limit. */
static struct axis series_y(const struct kb_report *r, const struct kb_report_series *s)
{
    double lo = r->max_p99_us / 1000, hi = r->max_p99_us / 1000;
    for (size_t i = 0; i < s->n; i++) {
        if (s->v[i].p50_us > 0)
            lo = fmin(lo, s->v[i].p50_us / 1000);
        hi = fmax(hi, fmax(s->v[i].max_us, s->v[i].p99_us) / 1000);
    }
    lo = fmin(lo, r->max_p99_us / 2000);   /* the limit line never on the bottom edge */
    return (struct axis){ pow(10, floor(log10(fmax(lo, 1e-3)))),
                          pow(10, ceil(log10(fmax(hi, 1e-3) * 1.2))), 1 };
}

/* The measured interval's length from the plan, or 0 when it does not say. */
static double measured_s(const struct kb_report *r)
{
    json_t *d = json_object_get(r->plan, "duration_s");
    return json_is_number(d) && json_number_value(d) > 0 ? json_number_value(d) : 0;
}

/* The drain after the measured interval, shaded: its seconds hold late responses of the
 * measured requests, and no new request was sent in it. */
static void drain_shade(FILE *f, const struct axis *x, double dur, double end)
{
    if (dur <= 0 || end <= dur + 1e-6)
        return;
    fprintf(f, "<g class=\"drain\">");
    title_el(f, "drain: after the measured interval no request is sent; the responses that "
             "end here are late answers to measured requests");
    fprintf(f, "<rect x=\"%.1f\" y=\"%d\" width=\"%.1f\" height=\"%d\" fill=\"#ececec\"/>"
            "<line x1=\"%.1f\" y1=\"%d\" x2=\"%.1f\" y2=\"%d\" stroke=\"#777\" "
            "stroke-dasharray=\"3 3\"/><text x=\"%.1f\" y=\"%d\" font-size=\"11\" "
            "fill=\"#555\">drain</text></g>\n", px(x, dur), MT + 1, px(x, end) - px(x, dur) - 1,
            H - MB - MT - 2, px(x, dur), MT, px(x, dur), H - MB, px(x, dur) + 4, H - MB - 6);
}

/* Latency over time at one point: the seconds on x, corrected latency (log) on y. */
static void chart_series(FILE *f, const struct kb_report *r, const struct kb_report_series *s,
                         size_t rt_index)
{
    const char *c = color(s->runtime, rt_index);
    char title[256], st[3][128], v[32];
    const char *styles[3] = { st[0], st[1], st[2] };
    double end = 1, amin = -1, amax = 0, dur = measured_s(r);
    long long errors = 0, bounded = 0;
    for (size_t i = 0; i < s->n; i++) {
        const struct kb_report_sec *q = &s->v[i];
        end = fmax(end, q->start_s + q->length_s);
        errors += q->errors;
        bounded += q->bounded;
        /* the rate of whole seconds inside the measured interval: a drain second, or a short
         * tail slice, says nothing of it */
        if (q->length_s >= 0.5 && (dur <= 0 || q->start_s + q->length_s <= dur + 1e-6)) {
            amin = amin < 0 ? q->achieved_rps : fmin(amin, q->achieved_rps);
            amax = fmax(amax, q->achieved_rps);
        }
    }
    struct axis x = { 0, end, 0 }, y = series_y(r, s);
    snprintf(st[0], sizeof(st[0]), "stroke=\"%s\" stroke-width=\"1.5\" stroke-dasharray=\"2 3\"", c);
    snprintf(st[1], sizeof(st[1]), "stroke=\"%s\" stroke-width=\"2.5\"", c);
    snprintf(st[2], sizeof(st[2]), "stroke=\"#555\" stroke-width=\"1.5\"");
    snprintf(title, sizeof(title), "%s %s at %ld req/s: corrected latency per second",
             s->runtime, s->route, s->rate);
    frame(f, title, dur > 0 && end > dur + 1e-6 ? "time into the measured interval (s); shaded: "
          "the drain after it" : "time into the measured interval (s)",
          "corrected latency (log scale)");
    drain_shade(f, &x, dur, end);
    /* inside the plot's top-left corner, which a forming queue (low, then rising) leaves free */
    fprintf(f, "<text x=\"%d\" y=\"%d\" font-size=\"11\" fill=\"#555\">%s</text>\n", ML + 6, MT + 14,
            s->past_margin ? "first point past the criteria (marked client-limited: its own "
                             "figures uncontrolled)" : "first uncontrolled point");
    xticks(f, &x);
    yticks(f, &y, 1);
    fprintf(f, "<line x1=\"%d\" y1=\"%.1f\" x2=\"%d\" y2=\"%.1f\" stroke=\"#e74c3c\" "
            "stroke-width=\"1.5\" stroke-dasharray=\"8 4\"/><text x=\"%d\" y=\"%.1f\" "
            "fill=\"#e74c3c\" text-anchor=\"end\">%g ms: controlled limit (p99)</text>\n", ML,
            py(&y, r->max_p99_us / 1000), W - MR, py(&y, r->max_p99_us / 1000), W - MR - 6,
            py(&y, r->max_p99_us / 1000) + 15, r->max_p99_us / 1000);
    /* the thick p99 first, the thinner max and p50 over it, so none hides another */
    for (int n = 0, k = 1; n < 3; n++, k = (k + 1) % 3)
        series_line(f, s, &x, &y, k, styles[k]);
    /* a dot per exact second on p99, so a second alone between gaps still shows */
    for (size_t i = 0; i < s->n; i++)
        if (s->v[i].p99_us > 0 && !s->v[i].p99_bound) {
            snprintf(title, sizeof(title), "second %.0f: p99 %s", s->v[i].start_s,
                     fmt_us(v, sizeof(v), s->v[i].p99_us));
            fprintf(f, "<g class=\"second\">");
            title_el(f, title);
            fprintf(f, "<circle cx=\"%.1f\" cy=\"%.1f\" r=\"2.5\" fill=\"%s\"/></g>\n",
                    sec_x(&x, &s->v[i]), py(&y, fmax(s->v[i].p99_us / 1000, y.lo)), c);
        }
    for (int k = 2; k >= 0; k--)
        bound_marks(f, s, &x, &y, k, k == 2 ? "#555" : c);
    series_legend(f, styles);
    fprintf(f, "<text x=\"%d\" y=\"%d\" fill=\"#777\" font-size=\"11\">point ", ML, H - 4);
    xml(f, s->point);
    fprintf(f, ": %.0f-%.0f req/s per whole measured second, %lld error(s), %lld lower "
            "bound(s); gaps: no latency</text>\n", amin < 0 ? 0 : amin, amax, errors, bounded);
}

static int write_series_chart(const struct kb_report *r, const char *dir,
                              const struct kb_report_series *s, char *err, size_t errlen)
{
    char *buf = NULL, path[4400];
    size_t len = 0, rt_index = 0;
    FILE *f = open_memstream(&buf, &len);
    int rc;
    for (size_t i = 0; i < kb_report_nruntimes(r); i++)
        if (!strcmp(kb_report_runtime(r, i), s->runtime))
            rt_index = i;
    chart_series(f, r, s, rt_index);
    stamp(f, r);
    fprintf(f, "</svg>\n");
    fclose(f);
    snprintf(path, sizeof(path), "%s/charts/series-%s-%s.svg", dir, s->runtime, s->route);
    rc = kb_write_atomic(path, buf, len, err, errlen);
    free(buf);
    return rc;
}

static int write_chart(const struct kb_report *r, const char *dir, const char *kind,
                       const char *route, char *err, size_t errlen)
{
    char *buf = NULL, path[4300];
    size_t len = 0;
    FILE *f = open_memstream(&buf, &len);
    int rc;
    if (!strcmp(kind, "achieved"))
        chart_achieved(f, r, route);
    else
        chart_p99(f, r, route);
    legend(f, r, !strcmp(kind, "achieved"));
    stamp(f, r);
    fprintf(f, "</svg>\n");
    fclose(f);
    snprintf(path, sizeof(path), "%s/charts/%s-%s.svg", dir, kind, route);
    rc = kb_write_atomic(path, buf, len, err, errlen);
    free(buf);
    return rc;
}

int kb_report_write_svg(const struct kb_report *r, const char *dir, char *err, size_t errlen)
{
    char cdir[4200];
    if (kb_mkdirs(kb_path(cdir, sizeof(cdir), dir, "charts"), err, errlen) < 0)
        return -1;
    for (size_t j = 0; j < kb_report_nroutes(r); j++)
        if (write_chart(r, dir, "achieved", kb_report_route(r, j), err, errlen) < 0 ||
            write_chart(r, dir, "p99", kb_report_route(r, j), err, errlen) < 0)
            return -1;
    for (size_t i = 0; i < r->nseries; i++)
        if (r->series[i].n && write_series_chart(r, dir, &r->series[i], err, errlen) < 0)
            return -1;
    return 0;
}
