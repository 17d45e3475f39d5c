/* svgkit.c -- axes, ticks, escaping and verdict shapes for the reports' charts (svgkit.h). */
#include "runner/report/svgkit.h"

#include <math.h>
#include <string.h>

double kb_svg_map(const struct kb_svg_axis *a, double v, double p0, double p1)
{
    double t = a->log ? (log10(v) - log10(a->lo)) / (log10(a->hi) - log10(a->lo))
                      : (v - a->lo) / (a->hi - a->lo);
    return p0 + t * (p1 - p0);
}

struct kb_svg_axis kb_svg_log_axis(double lo, double hi)
{
    struct kb_svg_axis a;
    if (!isfinite(lo) || lo <= 0)
        lo = 1e-3;
    if (!isfinite(hi) || hi < lo)
        hi = lo;
    a.lo = pow(10, floor(log10(lo)));
    a.hi = pow(10, ceil(log10(hi * 1.2)));
    if (a.hi <= a.lo)
        a.hi = a.lo * 10;
    if (log10(a.hi / a.lo) > KB_SVG_MAX_DECADES)
        a.hi = a.lo * pow(10, KB_SVG_MAX_DECADES);
    a.log = 1;
    return a;
}

double kb_svg_nice_step(double span)
{
    double raw = (span > 0 && isfinite(span) ? span : 1) / 6, mag = pow(10, floor(log10(raw)));
    double f = raw / mag;
    return mag * (f < 1.5 ? 1 : f < 3.5 ? 2 : f < 7.5 ? 5 : 10);
}

void kb_svg_tick_label(char *buf, size_t len, double v, enum kb_svg_unit unit)
{
    if (unit == KB_SVG_MS)
        snprintf(buf, len, v >= 1000 ? "%.0f s" : v >= 1 ? "%.0f ms" : "%g ms",
                 v >= 1000 ? v / 1000 : v);
    else if (unit == KB_SVG_US)
        snprintf(buf, len, v >= 1000 ? "%.0f ms" : "%g us", v >= 1000 ? v / 1000 : v);
    else
        snprintf(buf, len, v >= 1000 ? "%gk" : "%g", v >= 1000 ? v / 1000 : v);
}

void kb_svg_xml(FILE *f, const char *s)
{
    for (; s && *s; s++)
        switch (*s) {
        case '&': fputs("&amp;", f); break;
        case '<': fputs("&lt;", f); break;
        case '>': fputs("&gt;", f); break;
        case '"': fputs("&quot;", f); break;
        /* an attribute a later change quotes with ' stays closed too */
        case '\'': fputs("&#39;", f); break;
        /* XML has no form for the other C0 controls: one would make the chart unreadable */
        default:
            if ((unsigned char)*s >= 0x20 || *s == '\t' || *s == '\n' || *s == '\r')
                fputc(*s, f);
            else
                fputs("\xef\xbf\xbd", f);
        }
}

void kb_svg_title(FILE *f, const char *text)
{
    fputs("<title>", f);
    kb_svg_xml(f, text);
    fputs("</title>", f);
}

void kb_svg_shape(FILE *f, const char *kind, double x, double y, double s, const char *fill,
                  const char *stroke, double width)
{
    if (!strcmp(kind, "failed"))
        fprintf(f, "<path d=\"M%.1f %.1fl%.1f %.1fm0 %.1fl%.1f %.1f\" fill=\"none\" stroke=\"%s\" "
                "stroke-width=\"%.1f\"/>", x - 5 * s, y - 5 * s, 10 * s, 10 * s, -10 * s,
                -10 * s, 10 * s, stroke, width + 0.5);
    else if (!strcmp(kind, "uncontrolled"))
        fprintf(f, "<rect x=\"%.1f\" y=\"%.1f\" width=\"%.1f\" height=\"%.1f\" fill=\"%s\" "
                "stroke=\"%s\" stroke-width=\"%.1f\"/>", x - 4.5 * s, y - 4.5 * s, 9 * s, 9 * s,
                fill, stroke, width);
    else if (!strcmp(kind, "controlled"))
        fprintf(f, "<circle cx=\"%.1f\" cy=\"%.1f\" r=\"%.1f\" fill=\"%s\" stroke=\"%s\" "
                "stroke-width=\"%.1f\"/>", x, y, 4.5 * s, fill, stroke, width);
    else
        fprintf(f, "<path d=\"M%.1f %.1fl%.1f %.1fl%.1f %.1fl%.1f %.1fz\" fill=\"%s\" "
                "stroke=\"%s\" stroke-width=\"%.1f\"/>", x, y - 5.5 * s, 5.5 * s, 5.5 * s,
                -5.5 * s, 5.5 * s, -5.5 * s, -5.5 * s, fill, stroke, width);
}
