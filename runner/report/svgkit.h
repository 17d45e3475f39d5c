/* svgkit.h -- the pieces every chart of the reports draws with: an axis and its mapping
 * (linear, or log in whole decades and bounded), 1-2-5 ticks and their labels, text escaped
 * for SVG, a <title>, and the verdict shapes (circle controlled, square uncontrolled, cross
 * failed, diamond anything else). The curve's charts (report_svg.c) and the knee's
 * (knee_report.c) share them, so a mark means the same in both. Pure output to a stream. */
#ifndef KB_SVGKIT_H
#define KB_SVGKIT_H

#include <stddef.h>
#include <stdio.h>

#define KB_SVG_MAX_DECADES 9
#define KB_SVG_MAX_TICKS 40

struct kb_svg_axis {
    double lo, hi;
    int log;
};

/* v's position between the pixels p0 (at lo) and p1 (at hi). */
double kb_svg_map(const struct kb_svg_axis *a, double v, double p0, double p1);

/* A log axis from lo to hi in whole decades, finite and at most KB_SVG_MAX_DECADES wide
 * (kept from the bottom: the criteria and the fast points live there). */
struct kb_svg_axis kb_svg_log_axis(double lo, double hi);

/* A 1-2-5 step giving about six ticks over span; never zero, so tick loops end. */
double kb_svg_nice_step(double span);

enum kb_svg_unit { KB_SVG_RATE, KB_SVG_MS, KB_SVG_US };
/* A tick's label: a rate ("20k"), milliseconds ("5 ms", "2 s") or microseconds. */
void kb_svg_tick_label(char *buf, size_t len, double v, enum kb_svg_unit unit);

/* s as SVG or HTML text (NULL: nothing): names come from the contract or the user, so they
 * are escaped. */
void kb_svg_xml(FILE *f, const char *s);
/* <title>text</title>: what a screen reader says and a hover shows. */
void kb_svg_title(FILE *f, const char *text);

/* A verdict shape (kind "controlled", "uncontrolled", "failed", else a diamond) centred on
 * x, y at s times its base size. */
void kb_svg_shape(FILE *f, const char *kind, double x, double y, double s, const char *fill,
                  const char *stroke, double width);

#endif
