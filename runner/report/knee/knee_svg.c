/* knee_svg.c -- the knee search's chart: every sample's corrected p99 (top, log) and
 * delivery (bottom) against its rate (log), the criteria's lines, and the bracket the
 * search ended on shaded across both. A mark's shape is the sample's own verdict (the
 * curve's charts' shapes, runner/report/svgkit.h), hollow when the client was not trusted;
 * its <title> says the step, the rate and the figures. Labels live in the legend column;
 * the context lines under the plot say what was searched and what was found. */
#define _GNU_SOURCE
#include "runner/report/knee/knee_report.h"
#include "runner/report/svgkit.h"

#include <math.h>
#include <string.h>

#define W 860
#define H 660
#define ML 80
#define MR 200
#define TOP_Y0 50                /* p99 panel */
#define TOP_Y1 330
#define BOT_Y0 370               /* delivery panel */
#define BOT_Y1 540
#define LX (W - MR + 14)
#define INK "#2980b9"
#define LIMIT "#e74c3c"
#define BRACKET "#f6ddb8"

static double px(const struct kb_svg_axis *x, double v) { return kb_svg_map(x, v, ML, W - MR); }

static void panel(FILE *f, int y0, int y1, const char *label)
{
    fprintf(f, "<rect class=\"plot\" x=\"%d\" y=\"%d\" width=\"%d\" height=\"%d\" fill=\"none\" "
            "stroke=\"#333\"/>\n<text transform=\"translate(18 %d) rotate(-90)\" "
            "text-anchor=\"middle\">%s</text>\n", ML, y0, W - MR - ML, y1 - y0,
            (y0 + y1) / 2, label);
}

static void xticks(FILE *f, const struct kb_svg_axis *x)
{
    static const double steps[] = { 1, 2, 5 };
    char lab[32];
    for (double dec = x->lo; dec < x->hi * 1.0001; dec *= 10)
        for (int k = 0; k < 3; k++) {
            double v = dec * steps[k];
            if (v > x->hi * 1.0001)
                break;
            kb_svg_tick_label(lab, sizeof(lab), v, KB_SVG_RATE);
            fprintf(f, "<line x1=\"%.1f\" y1=\"%d\" x2=\"%.1f\" y2=\"%d\" stroke=\"#ddd\"/>"
                    "<line x1=\"%.1f\" y1=\"%d\" x2=\"%.1f\" y2=\"%d\" stroke=\"#ddd\"/>"
                    "<text x=\"%.1f\" y=\"%d\" text-anchor=\"middle\">%s</text>\n",
                    px(x, v), TOP_Y0, px(x, v), TOP_Y1, px(x, v), BOT_Y0, px(x, v), BOT_Y1,
                    px(x, v), BOT_Y1 + 16, lab);
        }
    fprintf(f, "<text x=\"%d\" y=\"%d\" text-anchor=\"middle\">requested rate (req/s, log)"
            "</text>\n", (ML + W - MR) / 2, BOT_Y1 + 36);
}

static void p99_ticks(FILE *f, const struct kb_svg_axis *y)
{
    char lab[32];
    double v = y->lo;
    for (int n = 0; n < KB_SVG_MAX_TICKS && v <= y->hi * 1.0001; n++, v *= 10) {
        double yy = kb_svg_map(y, v, TOP_Y1, TOP_Y0);
        kb_svg_tick_label(lab, sizeof(lab), v, KB_SVG_MS);
        fprintf(f, "<line x1=\"%d\" y1=\"%.1f\" x2=\"%d\" y2=\"%.1f\" stroke=\"#ddd\"/>"
                "<text x=\"%d\" y=\"%.1f\" text-anchor=\"end\">%s</text>\n", ML, yy, W - MR,
                yy, ML - 6, yy + 4, lab);
    }
}

static void delivery_ticks(FILE *f, const struct kb_svg_axis *y)
{
    for (double v = y->lo; v <= y->hi + 1e-9; v += 25) {
        double yy = kb_svg_map(y, v, BOT_Y1, BOT_Y0);
        fprintf(f, "<line x1=\"%d\" y1=\"%.1f\" x2=\"%d\" y2=\"%.1f\" stroke=\"#ddd\"/>"
                "<text x=\"%d\" y=\"%.1f\" text-anchor=\"end\">%.0f %%</text>\n", ML, yy,
                W - MR, yy, ML - 6, yy + 4, v);
    }
}

/* The range of the samples' rates and p99s (ms), over finite figures. */
static void ranges(const struct kb_knee_doc *d, double *rlo, double *rhi, double *plo,
                   double *phi)
{
    *rlo = *plo = INFINITY;
    *rhi = *phi = 0;
    for (size_t i = 0; i < d->n; i++) {
        double r = (double)d->f[i].rate, p = d->f[i].p99_us / 1000;
        *rlo = r < *rlo ? r : *rlo;
        *rhi = r > *rhi ? r : *rhi;
        if (isfinite(p) && p > 0) {
            *plo = p < *plo ? p : *plo;
            *phi = p > *phi ? p : *phi;
        }
    }
}

static void bracket(FILE *f, const struct kb_knee_doc *d, const struct kb_svg_axis *x)
{
    double a = d->lo ? px(x, (double)d->lo) : ML, b = d->hi ? px(x, (double)d->hi) : W - MR;
    if (!d->ended || (!d->lo && !d->hi))
        return;
    fprintf(f, "<g class=\"bracket\"><title>the search's bracket: %ld to %ld req/s</title>",
            d->lo, d->hi);
    fprintf(f, "<rect x=\"%.1f\" y=\"%d\" width=\"%.1f\" height=\"%d\" fill=\"%s\"/>"
            "<rect x=\"%.1f\" y=\"%d\" width=\"%.1f\" height=\"%d\" fill=\"%s\"/></g>\n",
            a, TOP_Y0, b - a < 2 ? 2 : b - a, TOP_Y1 - TOP_Y0, BRACKET,
            a, BOT_Y0, b - a < 2 ? 2 : b - a, BOT_Y1 - BOT_Y0, BRACKET);
}

static void limits(FILE *f, const struct kb_knee_doc *d, const struct kb_svg_axis *py,
                   const struct kb_svg_axis *dy)
{
    double yp = kb_svg_map(py, (double)d->opts.crit.max_p99_us / 1000, TOP_Y1, TOP_Y0);
    double yd = kb_svg_map(dy, d->opts.crit.min_delivery * 100, BOT_Y1, BOT_Y0);
    fprintf(f, "<line class=\"limit\" x1=\"%d\" y1=\"%.1f\" x2=\"%d\" y2=\"%.1f\" stroke=\"%s\" "
            "stroke-dasharray=\"6 4\"/>\n<line class=\"limit\" x1=\"%d\" y1=\"%.1f\" x2=\"%d\" "
            "y2=\"%.1f\" stroke=\"%s\" stroke-dasharray=\"6 4\"/>\n", ML, yp, W - MR, yp, LIMIT,
            ML, yd, W - MR, yd, LIMIT);
}

static void mark(FILE *f, const struct kb_knee_fig *x, size_t step, double cx, double cy,
                 int bound)
{
    char title[256];
    int trusted = strcmp(x->verdict, "client-limited") != 0;
    snprintf(title, sizeof(title), "step %zu: %ld req/s (sample %d, %s): %s, delivery %.1f %%, "
             "p99 %s%.2f ms", step, x->rate, x->sample, x->why, x->verdict, x->delivery * 100,
             bound ? ">= " : "", x->p99_us / 1000);
    /* the verdict is verdict.json's own text, as any reader of the run may have written it */
    fprintf(f, "<g class=\"mark ");
    kb_svg_xml(f, x->server_verdict);
    fprintf(f, " %s\" data-step=\"%zu\" data-rate=\"%ld\">",
            trusted ? "trusted" : "client-limited", step, x->rate);
    kb_svg_title(f, title);
    kb_svg_shape(f, x->server_verdict, cx, cy, 1, "white", "white", 3);
    kb_svg_shape(f, x->server_verdict, cx, cy, 1, trusted ? INK : "white", INK, 1.5);
    if (bound)
        fprintf(f, "<path d=\"M%.1f %.1fv-12m-4 4l4 -4l4 4\" fill=\"none\" stroke=\"%s\"/>", cx,
                cy - 6, INK);
    fprintf(f, "</g>\n");
}

static void marks(FILE *f, const struct kb_knee_doc *d, const struct kb_svg_axis *x,
                  const struct kb_svg_axis *py, const struct kb_svg_axis *dy)
{
    for (size_t i = 0; i < d->n; i++) {
        const struct kb_knee_fig *s = &d->f[i];
        double cx = px(x, (double)s->rate), p = s->p99_us / 1000;
        double del = s->delivery * 100 > dy->hi ? dy->hi : s->delivery * 100;
        if (isfinite(p) && p > 0)
            mark(f, s, i + 1, cx, kb_svg_map(py, p < py->lo ? py->lo : p, TOP_Y1, TOP_Y0),
                 s->p99_is_bound);
        if (isfinite(del))
            mark(f, s, i + 1, cx, kb_svg_map(dy, del < 0 ? 0 : del, BOT_Y1, BOT_Y0), 0);
    }
}

static void legend(FILE *f, const struct kb_knee_doc *d)
{
    static const char *const kinds[] = { "controlled", "uncontrolled", "failed" };
    char p99[32];
    int y = TOP_Y0 + 10;
    for (int k = 0; k < 3; k++, y += 22) {
        kb_svg_shape(f, kinds[k], LX + 6, y - 4, 1, INK, INK, 1.5);
        fprintf(f, "<text x=\"%d\" y=\"%d\">%s</text>\n", LX + 18, y, kinds[k]);
    }
    kb_svg_shape(f, "controlled", LX + 6, y - 4, 1, "white", INK, 1.5);
    fprintf(f, "<text x=\"%d\" y=\"%d\">hollow: client-limited</text>\n", LX + 18, y);
    y += 22;
    /* the arrow a mark carries where its p99 is only a lower bound (mark()) */
    fprintf(f, "<path d=\"M%d %dv-12m-4 4l4 -4l4 4\" fill=\"none\" stroke=\"%s\"/>"
            "<text x=\"%d\" y=\"%d\">p99 a lower bound</text>\n", LX + 6, y + 2, INK, LX + 18,
            y);
    y += 30;
    fprintf(f, "<rect x=\"%d\" y=\"%d\" width=\"12\" height=\"12\" fill=\"%s\"/>"
            "<text x=\"%d\" y=\"%d\">the bracket</text>\n", LX, y - 10, BRACKET, LX + 18, y);
    y += 22;
    snprintf(p99, sizeof(p99), "%g ms", (double)d->opts.crit.max_p99_us / 1000);
    fprintf(f, "<line x1=\"%d\" y1=\"%d\" x2=\"%d\" y2=\"%d\" stroke=\"%s\" "
            "stroke-dasharray=\"6 4\"/><text x=\"%d\" y=\"%d\">p99 &lt; %s,</text>"
            "<text x=\"%d\" y=\"%d\">delivery &gt;= %g %%</text>\n", LX, y - 4, LX + 12, y - 4,
            LIMIT, LX + 18, y, p99, LX + 18, y + 16, d->opts.crit.min_delivery * 100);
}

static void context(FILE *f, const struct kb_knee_doc *d)
{
    char line[512];
    kb_knee_headline(d, line, sizeof(line));
    fprintf(f, "<text class=\"context\" x=\"%d\" y=\"%d\" font-size=\"11\">", ML, H - 52);
    kb_svg_xml(f, line);
    fprintf(f, "</text>\n<text class=\"context\" x=\"%d\" y=\"%d\" font-size=\"11\">target ",
            ML, H - 34);
    kb_svg_xml(f, d->url);
    fprintf(f, " (right response: ");
    kb_svg_xml(f, d->expect);
    fprintf(f, "); %zu samples</text>\n", d->n);
}

void kb_knee_svg(FILE *f, const struct kb_knee_doc *d)
{
    double rlo, rhi, plo, phi;
    struct kb_svg_axis x, py, dy = { 0, 125, 0 };
    ranges(d, &rlo, &rhi, &plo, &phi);
    if (!d->n)
        rlo = rhi = 1000;
    plo = fmin(plo, (double)d->opts.crit.max_p99_us / 1000);
    phi = fmax(phi, (double)d->opts.crit.max_p99_us / 1000);
    x = kb_svg_log_axis(rlo, rhi);
    py = kb_svg_log_axis(isfinite(plo) ? plo : 1, phi);
    fprintf(f, "<svg xmlns=\"http://www.w3.org/2000/svg\" width=\"%d\" height=\"%d\" "
            "viewBox=\"0 0 %d %d\" font-family=\"sans-serif\" font-size=\"12\">\n", W, H, W, H);
    kb_svg_title(f, "knee search: corrected p99 and delivery against the rate");
    fprintf(f, "\n<rect width=\"100%%\" height=\"100%%\" fill=\"white\"/>\n<text x=\"%d\" "
            "y=\"26\" font-size=\"15\" font-weight=\"bold\">knee search: ", ML);
    kb_svg_xml(f, d->url);
    fprintf(f, "</text>\n");
    bracket(f, d, &x);
    p99_ticks(f, &py);
    delivery_ticks(f, &dy);
    xticks(f, &x);
    panel(f, TOP_Y0, TOP_Y1, "corrected p99 (log)");
    panel(f, BOT_Y0, BOT_Y1, "delivery");
    limits(f, d, &py, &dy);
    marks(f, d, &x, &py, &dy);
    legend(f, d);
    context(f, d);
    fprintf(f, "</svg>\n");
}
