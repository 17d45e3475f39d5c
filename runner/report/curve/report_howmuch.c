/* report_howmuch.c -- the first screen's "by how much" (report_int.h): per route, one
 * sentence per runtime set against the baseline, the ratio of their held rates (the
 * answers, refined where the run refined) and of their CPU per response at those rates, each
 * with the spread that bounds it: the brackets the knees lie in, the samples at the held
 * ends, and the rates both ran side by side. Reads the model only. */
#define _GNU_SOURCE
#include "runner/report/report.h"
#include "runner/report/report_int.h"
#include "runner/report/report_text.h"
#include "runner/util/jfield.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

/* The held rate's ratio, as sure as the answers let it be. */
static void held_ratio(FILE *f, const struct kb_report *r, const char *rt, const char *route,
                       const struct kb_report_side *s)
{
    struct kb_report_answer a, b;
    const char *base = kb_report_baseline(r);
    kb_report_answer_of(r, rt, route, &a);
    kb_report_answer_of(r, base, route, &b);
    fprintf(f, "%s%.2fx %s's held rate (%.0f against %.0f req/s", kb_report_side_mark(s),
            s->knee, base, a.level, b.level);
    if (s->knee_lo > 0 && s->knee_hi > 0 && s->knee_hi - s->knee_lo >= 0.005)
        fprintf(f, "; %.2f-%.2f within the brackets the knees lie in", s->knee_lo, s->knee_hi);
    else if (s->knee_lo > 0 || s->knee_hi > 0)
        fprintf(f, "; %s %.2f within the brackets", s->knee_lo > 0 ? "at least" : "at most",
                s->knee_lo > 0 ? s->knee_lo : s->knee_hi);
    else
        fprintf(f, "; both held the top rate, so both knees lie above it");
    fprintf(f, ")");
}

/* The CPU per response's ratio at each one's held rate, its spread over the samples there
 * (the lowest over the highest, and the reverse), and over the rates both ran at. */
static void cost_ratio(FILE *f, const struct kb_report *r, const char *rt, const char *route,
                       const struct kb_report_side *s)
{
    struct kb_report_cost c, b;
    const struct kb_cell *x, *y;
    int interleaved = !strcmp(kb_jstr(r->plan, "order", "sequential"), "interleaved");
    kb_report_cost_of(r, rt, route, &c);
    kb_report_cost_of(r, kb_report_baseline(r), route, &b);
    if (!(c.us > 0 && b.us > 0)) {
        fprintf(f, "; no CPU per response to compare at the held rates");
        return;
    }
    x = kb_report_row(r, rt, route, c.rate);
    y = kb_report_row(r, kb_report_baseline(r), route, b.rate);
    fprintf(f, ", at %.2fx its CPU per response", c.us / b.us);
    if (x && y && (x->cpu_us_per_response.n > 1 || y->cpu_us_per_response.n > 1))
        fprintf(f, " (%.2f-%.2f over %d and %d samples at those rates",
                x->cpu_us_per_response.min / y->cpu_us_per_response.max,
                x->cpu_us_per_response.max / y->cpu_us_per_response.min,
                x->cpu_us_per_response.n, y->cpu_us_per_response.n);
    else
        fprintf(f, " (one sample each at those rates");
    if (s->n_rates > 0 && s->cost_max - s->cost_min >= 0.005)
        fprintf(f, "; %.2f-%.2f at the %d rates both ran %s", s->cost_min, s->cost_max,
                s->n_rates, interleaved ? "side by side" : "one after the other");
    else if (s->n_rates > 0)
        fprintf(f, "; %.2f at the %d rate%s both ran %s", s->cost, s->n_rates,
                s->n_rates == 1 ? "" : "s", interleaved ? "side by side" : "one after the other");
    fprintf(f, ")");
}

/* text as a list item within the report's width, its later lines indented under the first
 * word after "- " (markdown keeps them in the item). */
static void bullet(FILE *out, const char *text)
{
    int col = 0;
    const char *p = text;
    while (*p) {
        size_t word;
        if (*p == ' ') {
            p++;
            continue;
        }
        word = strcspn(p, " ");
        if (col > 0 && col + 1 + (int)word > KB_REPORT_WRAP) {
            fputs("\n ", out);
            col = 1;
        }
        if (col > 0) {
            fputc(' ', out);
            col++;
        }
        fwrite(p, 1, word, out);
        col += (int)word;
        p += word;
    }
    fputc('\n', out);
}

char *kb_report_how_much_text(const struct kb_report *r, const char *rt, const char *route)
{
    struct kb_report_side s;
    char *text = NULL;
    size_t len = 0;
    FILE *f = open_memstream(&text, &len);
    if (!f)
        return NULL;
    kb_report_side_of(r, rt, route, &s);
    fprintf(f, "%s: %s ", route, rt);
    if (!(s.knee > 0)) {
        fprintf(f, "has no held rate to set against %s's (one of them held nothing)",
                kb_report_baseline(r));
        cost_ratio(f, r, rt, route, &s);
    } else {
        fprintf(f, "holds ");
        held_ratio(f, r, rt, route, &s);
        cost_ratio(f, r, rt, route, &s);
    }
    fprintf(f, ".");
    fclose(f);
    return text;
}

static void sentence(FILE *out, const struct kb_report *r, const char *rt, const char *route)
{
    char *text = kb_report_how_much_text(r, rt, route), *item = NULL;
    if (text && asprintf(&item, "- %s", text) >= 0)
        bullet(out, item);
    free(item);
    free(text);
}

int kb_report_how_much_wanted(const struct kb_report *r, const char *rt, const char *route)
{
    struct kb_report_answer a;
    const char *base = kb_report_baseline(r);
    if (!base || !strcmp(rt, base))
        return 0;
    kb_report_answer_of(r, rt, route, &a);
    return a.planned;
}

void kb_report_md_how_much(FILE *f, const struct kb_report *r)
{
    const char *base = kb_report_baseline(r);
    int any = 0;
    if (!base || kb_report_nruntimes(r) < 2)
        return;
    fprintf(f, "### By how much\n\n");
    kb_text_para(f, "Each runtime against %s, per route: the ratio of the held rates above "
                 "(\">= \" where a rate is only a lower bound) and of the server's CPU per "
                 "response at those rates (lower is cheaper), each with its spread: the "
                 "brackets between the last rate held and the next that was not, the lowest "
                 "over the highest of the samples at the held rates (repeats, confirmation "
                 "and hold samples), and the rates both runtimes ran.", base);
    for (size_t j = 0; j < kb_report_nroutes(r); j++)
        for (size_t i = 0; i < kb_report_nruntimes(r); i++) {
            const char *rt = kb_report_runtime(r, i), *ro = kb_report_route(r, j);
            if (!kb_report_how_much_wanted(r, rt, ro))
                continue;
            sentence(f, r, rt, ro);
            any = 1;
        }
    fprintf(f, "%s\n", any ? "" : "- no runtime but the baseline ran a route.\n");
}
