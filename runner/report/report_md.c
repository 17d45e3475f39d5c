/* report_md.c -- report.md: the answer first (the runtimes ranked, one chart), then the run,
 * the efficiency table, the client's margin, every curve and the identity. Prose is wrapped
 * at WRAP columns; a reason shared by several rows is said once, as a numbered note, and
 * referenced. Built in memory, written atomically. */
#define _GNU_SOURCE
#include "runner/report/report.h"
#include "runner/report/report_int.h"
#include "runner/run/calibrate.h"
#include "runner/util/evidence.h"
#include "runner/util/jfield.h"

#include <math.h>
#include <stdarg.h>
#include <stdlib.h>
#include <string.h>

#define WRAP 100
#define MAX_NOTES 256

/* A string of the evidence, "?" where it is missing. */
static const char *js(json_t *o, const char *k)
{
    return kb_jstr(o, k, "?");
}

/* Writes text wrapped at WRAP columns on spaces (a '\n' in it breaks the line there). */
static void wrap(FILE *f, const char *text)
{
    int col = 0;
    const char *p = text;
    while (*p) {
        size_t word;
        if (*p == '\n' || *p == ' ') {
            if (*p == '\n')
                fputc('\n', f), col = 0;
            p++;
            continue;
        }
        word = strcspn(p, " \n");
        if (col > 0 && col + 1 + (int)word > WRAP) {
            fputc('\n', f);
            col = 0;
        } else if (col > 0) {
            fputc(' ', f);
            col++;
        }
        fwrite(p, 1, word, f);
        col += (int)word;
        p += word;
    }
    if (col > 0)
        fputc('\n', f);
}

/* A paragraph: formatted, wrapped, then a blank line. */
__attribute__((format(printf, 2, 3))) static void para(FILE *f, const char *fmt, ...)
{
    char *text = NULL;
    va_list ap;
    va_start(ap, fmt);
    if (vasprintf(&text, fmt, ap) < 0)
        text = NULL;
    va_end(ap);
    if (text) {
        wrap(f, text);
        fputc('\n', f);
    }
    free(text);
}

/* Latency in us as people read it: "850.00 ms", "1.90 s". */
static const char *fmt_us(char *b, size_t len, double us)
{
    if (us >= 1e6)
        snprintf(b, len, "%.2f s", us / 1e6);
    else
        snprintf(b, len, "%.2f ms", us / 1e3);
    return b;
}

/* A latency statistic: "-" when no repeat had it (an empty histogram is not 0 ms), ">= "
 * when it is only a lower bound, and with repeats the min-max range in the median's unit. */
static const char *fmt_lat(char *b, size_t len, struct kb_stat s)
{
    double div = s.med >= 1e6 ? 1e6 : 1e3;
    const char *unit = s.med >= 1e6 ? "s" : "ms";
    if (s.n == 0)
        return snprintf(b, len, "-"), b;
    if (s.n == 1)
        snprintf(b, len, "%s%.2f %s", s.bound ? ">= " : "", s.med / div, unit);
    else
        snprintf(b, len, "%s%.2f %s (%.2f-%.2f)", s.bound ? ">= " : "", s.med / div, unit,
                 s.min / div, s.max / div);
    return b;
}

/* "1.23" or, with repeats, "1.23 (1.10-1.40)"; scale multiplies every figure. */
static const char *fmt_stat(char *b, size_t len, struct kb_stat s, double scale, const char *f)
{
    char x[24], y[24], z[24];
    snprintf(x, sizeof(x), f, scale * s.med);
    if (s.n <= 1)
        return snprintf(b, len, "%s", x), b;
    snprintf(y, sizeof(y), f, scale * s.min);
    snprintf(z, sizeof(z), f, scale * s.max);
    snprintf(b, len, "%s (%s-%s)", x, y, z);
    return b;
}

/* Reasons said once: numbered in the order the curve tables first use them, each printed
 * under the table that first uses it, with how many rows share it. */
struct notes {
    const char *text[MAX_NOTES];
    int rows[MAX_NOTES];
    size_t first_route[MAX_NOTES];
    size_t n;
};

/* The note's number (from 1), adding it; 0 when the list is full (the caller inlines). */
static size_t note_ref(struct notes *nt, const char *text, size_t route)
{
    for (size_t i = 0; i < nt->n; i++)
        if (!strcmp(nt->text[i], text))
            return i + 1;
    if (nt->n == MAX_NOTES)
        return 0;
    nt->text[nt->n] = text;
    nt->first_route[nt->n] = route;
    return ++nt->n;
}

static size_t note_find(const struct notes *nt, const char *text)
{
    for (size_t i = 0; i < nt->n; i++)
        if (!strcmp(nt->text[i], text))
            return i + 1;
    return 0;
}

static void stamps(FILE *f, const struct kb_report *r)
{
    if (r->partial) {
        char *ids = NULL;
        size_t len = 0;
        FILE *m = open_memstream(&ids, &len);
        for (size_t i = 0; m && i < r->nmissing; i++)
            fprintf(m, " `%s`", r->missing[i]);
        if (m)
            fclose(m);
        para(f, "> **PARTIAL REPORT**: %zu of %zu planned points have no complete evidence and "
             "are left out:%s", r->nmissing,
             json_array_size(json_object_get(r->plan, "points")), ids ? ids : "");
        free(ids);
    }
    /* a container run on another base than the pinned one is not the paper's setup: say so, on
     * one line with the image's own note verbatim (a reader may search for it) */
    if (json_is_false(json_object_get(json_object_get(r->run, "image"), "base_is_pinned")))
        fprintf(f, "> **BASE NOT PINNED**: %s\n\n", js(json_object_get(r->run, "image"), "note"));
    if (r->unconstrained)
        para(f, "> **UNCONSTRAINED**: this run used `--no-limits`; no CPU, memory or process "
             "limit was applied, so no point is comparable with the paper's.");
}

/* " `id`" for each string of a, into a malloc'd string ("" when none). */
static char *id_list(char **ids, size_t n, json_t *changed)
{
    char *buf = NULL;
    size_t len = 0;
    FILE *m = open_memstream(&buf, &len);
    for (size_t i = 0; m && i < n; i++)
        fprintf(m, " `%s`", ids[i]);
    for (size_t i = 0; m && i < json_array_size(changed); i++) {
        json_t *c = json_array_get(changed, i);
        fprintf(m, "%s `%s` %s -> %s", i ? "," : "", js(c, "point"), js(c, "stored"),
                js(c, "rejudged"));
    }
    if (m)
        fclose(m);
    return buf;
}

/* Where the verdicts come from: re-judged under another criterion, or re-derived from the
 * raw files and found as stored (and any point that could not be). */
static void rederived(FILE *f, const struct kb_report *r)
{
    const struct kb_rederive *rd = r->rd;
    json_t *crit = json_object_get(r->plan, "criteria");
    char *ids;
    if (!rd)
        return;
    if (rd->rejudge) {
        ids = id_list(NULL, 0, rd->changed);
        para(f, "> **RE-JUDGED**: controlled here means delivery >= %g %% and corrected p99 < "
             "%g ms, not the run's own criterion (delivery >= %g %%, p99 < %g ms). Every verdict "
             "was derived again from the run's raw evidence in the directory above (each "
             "point's load.json and what its verdict.json records the judgement read, "
             "calibrate/calibrate.json); nothing was run, and the run's own files are "
             "untouched. %zu of %zu verdicts changed%s%s", 100 * r->min_delivery,
             r->max_p99_us / 1000, 100 * json_number_value(json_object_get(crit, "min_delivery")),
             json_number_value(json_object_get(crit, "max_p99_us")) / 1000,
             json_array_size(rd->changed), rd->nchecked, ids && *ids ? ":" : ".",
             ids && *ids ? ids : "");
        free(ids);
    } else if (rd->nunchecked) {
        ids = id_list(rd->unchecked, rd->nunchecked, NULL);
        para(f, "> **NOT RE-DERIVED**: %zu point(s) have neither a record of their judgement "
             "nor the load generator's output (hand-made or damaged evidence); their stored "
             "verdicts are shown as written:%s", rd->nunchecked, ids ? ids : "");
        free(ids);
    }
}

/* One cell of the answer: the proven point, or what stopped the curve, and beside it what
 * the server's own figures give where the client was not trusted. */
static const char *answer_cell(char *b, size_t len, const struct kb_report *r, const char *rt,
                               const char *route)
{
    struct kb_report_answer a;
    char ind[64] = "";
    kb_report_answer_of(r, rt, route, &a);
    if (!a.planned)
        return snprintf(b, len, "n/a"), b;
    if (a.indicative)
        snprintf(ind, sizeof(ind), "; %ld unproven", a.indicative);
    else if (a.below_unproven)
        snprintf(ind, sizeof(ind), "; below %ld unproven", a.below_unproven);
    if (a.proven)
        snprintf(b, len, "%s%ld%s", a.client_from ? ">= " : "", a.proven, ind);
    else if (a.below)
        snprintf(b, len, "below %ld%s", a.below, ind);
    else if (a.failed_at)
        snprintf(b, len, "failed at %ld%s", a.failed_at, ind);
    else if (a.client_from)
        snprintf(b, len, "none proven%s", ind);
    else
        snprintf(b, len, "missing");
    return b;
}

/* The papers' highest controlled point for rt on route, 0 when none is published. */
static long published(const struct kb_report *r, const char *rt, const char *route)
{
    json_t *hi = json_object_get(r->published, "highest_controlled_rps");
    return (long)json_integer_value(json_object_get(json_object_get(hi, rt), route));
}

static void answer_header(FILE *f, const struct kb_report *r)
{
    size_t nro = kb_report_nroutes(r), npub = r->published ? nro : 0;
    fprintf(f, "| rank | runtime |");
    for (size_t j = 0; j < nro; j++)
        fprintf(f, " %s |", kb_report_route(r, j));
    for (size_t j = 0; j < npub; j++)
        fprintf(f, " %s, paper's host (not a target) |", kb_report_route(r, j));
    for (size_t j = 0; j < nro; j++)
        fprintf(f, " %s vs gray-static |", kb_report_route(r, j));
    fprintf(f, " CPU per response vs gray-static |\n|---:|---|");
    for (size_t j = 0; j < 2 * nro + npub + 1; j++)
        fprintf(f, "---:|");
    fprintf(f, "\n");
}

/* 1 when some answer is a lower bound or indicative (the notation then needs saying). */
static int answer_row(FILE *f, const struct kb_report *r, size_t rt_index, int rank)
{
    const char *rt = kb_report_runtime(r, rt_index);
    char cell[160];
    int soft_any = 0;
    double e = kb_report_efficiency_ratio(r, rt);
    fprintf(f, "| %d | %s |", rank, rt);
    for (size_t j = 0; j < kb_report_nroutes(r); j++)
        fprintf(f, " %s |", answer_cell(cell, sizeof(cell), r, rt, kb_report_route(r, j)));
    for (size_t j = 0; r->published && j < kb_report_nroutes(r); j++) {
        long p = published(r, rt, kb_report_route(r, j));
        p ? fprintf(f, " %ld |", p) : fprintf(f, " - |");
    }
    for (size_t j = 0; j < kb_report_nroutes(r); j++) {
        int soft;
        double x = kb_report_answer_ratio(r, rt, kb_report_route(r, j), &soft);
        x > 0 ? fprintf(f, " %.2f%s |", x, soft ? "*" : "") : fprintf(f, " - |");
        soft_any |= x > 0 && soft;
    }
    e > 0 ? fprintf(f, " %.2f |\n", e) : fprintf(f, " - |\n");
    return soft_any;
}

/* 1 when some runtime's highest controlled point is only a lower bound. */
static int bounded(const struct kb_report *r)
{
    for (size_t i = 0; i < kb_report_nruntimes(r); i++)
        for (size_t j = 0; j < kb_report_nroutes(r); j++) {
            struct kb_report_answer a;
            kb_report_answer_of(r, kb_report_runtime(r, i), kb_report_route(r, j), &a);
            if (a.client_from)
                return 1;
        }
    return 0;
}

/* What the papers' columns are, and why they are no target. */
static void orientation(FILE *f, const struct kb_report *r)
{
    if (!r->published) {
        para(f, "The papers' own figures are not shown: %s.", r->published_note);
        return;
    }
    para(f, "Paper's host: the papers' highest controlled points (%s), measured on %s. They "
         "orient, they are not a target: another host moves every one of them -- its CPU "
         "(clock, caches, microarchitecture), its kernel (scheduler, network stack), a "
         "virtualisation layer (vCPU scheduling, virtual NIC, timer cost) and the client's own "
         "cost per request (wrk2 there, kneebench load here) -- so this run's runtimes are "
         "compared with each other, never with these numbers.",
         js(r->published, "source"), js(r->published, "host"));
    if (r->published_curve)
        para(f, "The %s column's paper's-host figure is the highest rate that held on the "
             "paper's readiness curve for this profile, measured on another setup (see "
             "Readiness curve below).", js(r->published_curve, "route"));
}

/* One curve's cells: achieved, delivery, corrected p99 ("-" where the curve lacks the rate). */
static void curve_cells(FILE *f, const struct kb_knee_point *p)
{
    char b[64], a[32], d[32];
    struct kb_stat lat = { p->p99_us, p->p99_us, p->p99_us, 1, p->p99_bound };
    if (!p->present) {
        fprintf(f, " - | - | - |");
        return;
    }
    snprintf(a, sizeof(a), isnan(p->achieved_rps) ? "-" : "%.0f", p->achieved_rps);
    snprintf(d, sizeof(d), isnan(p->delivery) ? "-" : "%.2f %%", 100 * p->delivery);
    fprintf(f, " %s | %s | %s |", a, d, isnan(p->p99_us) ? "-" : fmt_lat(b, sizeof(b), lat));
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

/* The profile's readiness curve beside the papers' (a profile with a published curve). */
static void readiness_section(FILE *f, const struct kb_report *r)
{
    long rates[64];
    struct kb_knee_point paper[64], run[64];
    struct kb_knee pk, rk;
    size_t n = kb_report_curve_rates(r, rates, 64);
    if (!n)
        return;
    fprintf(f, "## Readiness curve: %s %s, this run beside the paper's host\n\n",
            js(r->published_curve, "runtime"), js(r->published_curve, "route"));
    fprintf(f, "| requested req/s | paper's host: achieved | delivery | corrected p99 | this "
               "run: achieved | delivery | corrected p99 | verdict |\n|---:|---:|---:|---:|"
               "---:|---:|---:|---|\n");
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
         "figures, its server verdict, whether or not the client was trusted), and the knee "
         "lies between the last rate that held with every rate below it and the next.",
         100 * r->min_delivery, r->max_p99_us / 1000);
    knee_line(f, "Paper's host", &pk);
    knee_line(f, "This run", &rk);
    placement_line(f, r);
    for (size_t i = 0, untrusted = 0; i < n; i++)
        if (run[i].present && !strcmp(run[i].verdict, "client-limited") && !untrusted++)
            para(f, "Some of this run's points are client-limited (the client was late or "
                 "busy there; see Client margin): their figures still place the knee, but as "
                 "the server's own, not as proven points.");
    para(f, "Paper's host: %s (%s). Not a target: there the server had two CPUs and wrk2 "
         "drove it; here the contract's limits and kneebench load apply, on this host's CPUs, "
         "with PostgreSQL on the CPUs plan.json records (db_cpus, placement). Read this run's "
         "knee, not its distance from the paper's.", js(r->published_curve, "host"),
         js(r->published_curve, "source"));
}

/* One boundary rate: "60000 held 3/3 (median p99 8.26 ms)"; its samples that were
 * controlled of all it had. */
static void boundary_rate(FILE *f, const struct kb_report *r, const struct kb_boundary *b,
                          const struct kb_boundary_rate *side, const char *sep)
{
    const struct kb_report_row *w = kb_report_row(r, b->runtime, b->route, side->rps);
    char p99[32];
    if (!side->rps || !w)
        return;
    fprintf(f, "%s%ld %s %d/%d (median p99 %s%s)", sep, side->rps,
            !strcmp(w->verdict, "controlled") ? "held" : w->verdict, w->controlled_n, w->n,
            w->p99.bound ? ">= " : "", w->p99.n ? fmt_us(p99, sizeof(p99), w->p99.med) : "-");
}

/* How each cell of the answer was confirmed: its boundary's samples, judged by their
 * medians (docs/protocol.md, "Confirming the answer"); or why one sample is all it has. */
static void confirmation(FILE *f, const struct kb_report *r)
{
    struct kb_boundary b[64];
    size_t n = kb_report_boundaries(r, b, 64);
    int samples = (int)json_integer_value(json_object_get(r->plan, "confirm_samples"));
    if (samples <= 1 && r->repeats <= 1) {
        para(f, "**One sample per point.** Each cell rests on one measurement at each rate: on a "
             "shared or virtual host a stall during one point can move a cell by a rate step, "
             "so one run alone cannot rank runtimes whose cells are a step apart. `--confirm 3` "
             "samples each cell's boundary until the median of three is decided; `--repeats N` "
             "repeats the whole matrix.");
        return;
    }
    if (samples > 1)
        para(f, "**How each cell was confirmed**: its highest controlled rate and the next one "
             "up were sampled until the median of %d samples was decided (two that agree "
             "plainly decide it) and judged by their medians. \"held 2/3\" means two of three "
             "samples were controlled on their own: a rate close to the knee.", samples);
    else
        para(f, "**How each cell was confirmed**: by the medians of its %d repeats.", r->repeats);
    for (size_t i = 0; i < n; i++) {
        fprintf(f, "- %s %s: %s", b[i].runtime, b[i].route, b[i].held.rps ? "" : "none held; ");
        boundary_rate(f, r, &b[i], &b[i].held, "");
        boundary_rate(f, r, &b[i], &b[i].next, b[i].held.rps ? "; " : "");
        fprintf(f, "%s\n", b[i].next.rps ? "" : "; the top rate");
    }
    fprintf(f, "\n");
}

/* The first table: the runtimes in order, the highest controlled point per route (proven,
 * bound or indicative), ratios to gray-static, and the efficiency that orders ties. */
static void answer_table(FILE *f, const struct kb_report *r)
{
    size_t order[64];
    int rank[64], soft = 0;
    size_t n = kb_report_rank(r, order, rank, 64);
    fprintf(f, "## Answer: highest controlled point per route (req/s), ranked\n\n");
    answer_header(f, r);
    for (size_t i = 0; i < n; i++)
        soft |= answer_row(f, r, order[i], rank[i]);
    fprintf(f, "\n");
    para(f, "N: the highest rate proven controlled (delivery >= %.0f %%, corrected p99 < %g ms, "
         "client trusted). >= N: the point above N was client-limited, so N is only a lower "
         "bound. \"M unproven\": the highest rate whose own figures were controlled while the "
         "client was not trusted; indicative, never counted as proven. \"below R\": the lowest "
         "rate was already uncontrolled with a trusted client, a definite result. Ranked by "
         "the sum of each runtime's highest point (unproven where higher) over the routes all "
         "run, then by server CPU per response (lower first; see Efficiency). Ratios are to "
         "gray-static on the same route%s.", 100 * r->min_delivery, r->max_p99_us / 1000,
         soft ? "; * marks a ratio that involves a lower bound or an unproven point" : "");
    confirmation(f, r);
    orientation(f, r);
    if (bounded(r))
        para(f, "**Knees not located** where a cell reads \">= N\": the load generator, not the "
             "server, was the limit above N. A client with more CPUs (or a remote client, "
             "`--backend remote`) can locate them.");
    if (kb_report_nroutes(r))
        fprintf(f, "![corrected p99 vs requested, %s](charts/p99-%s.svg)\n\n",
                kb_report_route(r, 0), kb_report_route(r, 0));
}

/* The client's threads over every point: "1" or "1-2"; 0 when no point says. */
static void client_threads(const struct kb_report *r, int *lo, int *hi, int *req, int *cpus)
{
    *lo = *hi = *req = *cpus = 0;
    for (size_t i = 0; i < r->nrows; i++) {
        const struct kb_report_row *w = &r->rows[i];
        if (w->threads_max <= 0)
            continue;
        *lo = *lo && *lo < w->threads_min ? *lo : w->threads_min;
        *hi = *hi > w->threads_max ? *hi : w->threads_max;
        *req = w->threads_requested ? w->threads_requested : *req;
        *cpus = *cpus > w->client_cpus ? *cpus : w->client_cpus;
    }
}

/* What the host withheld from the server's and the client's CPUs over the whole run. */
static void host_line(FILE *f, const struct kb_report *r)
{
    double srv = -1, cli = -1;
    int could = 0;
    for (size_t i = 0; i < r->nrows; i++) {
        srv = r->rows[i].steal_server_max > srv ? r->rows[i].steal_server_max : srv;
        cli = r->rows[i].steal_client_max > cli ? r->rows[i].steal_client_max : cli;
        could += r->rows[i].host_could_decide;
    }
    if (srv < 0 && cli < 0)
        return;
    para(f, "The host withheld (steal, per second) up to %.1f %% of the server's CPUs and %.1f %% "
         "of the client's during any point%s.", 100 * (srv < 0 ? 0 : srv),
         100 * (cli < 0 ? 0 : cli), could ? "; where that was enough to explain a point's "
         "verdict, its row says so" : ", never enough to explain a verdict");
}

static void run_summary(FILE *f, const struct kb_report *r)
{
    json_t *p = r->plan;
    int lo, hi, req, cpus;
    char th[32];
    fprintf(f, "## Run\n\n");
    para(f, "Started %s. Profile `%s`: %g s warmup, %g s measured, %g s drain per point; %lld "
         "threads, %lld connections; %d repeat(s)%s. Sandbox `%s`, server CPUs %s, client CPUs "
         "%s. Controlled = delivery >= %.0f %% and corrected p99 < %g ms.",
         js(r->run, "started"), js(p, "profile"), kb_jnum(p, "warmup_s", NULL),
         kb_jnum(p, "duration_s", NULL),
         kb_jnum(p, "drain_s", NULL),
         json_integer_value(json_object_get(p, "threads")),
         json_integer_value(json_object_get(p, "connections")), r->repeats,
         r->repeats > 1 ? " (runtime order rotated; medians with min-max ranges)" : "",
         js(p, "backend"), js(p, "server_cpus"), js(p, "client_cpus"), 100 * r->min_delivery,
         r->max_p99_us / 1000);
    if (r->rd && !r->rd->rejudge)
        para(f, "Every verdict shown was derived again from its point's raw files (load.json, "
             "what verdict.json records the judgement read, the calibration) with the run's "
             "criteria: %zu of %zu point(s) re-derived, each as stored.", r->rd->nchecked,
             r->rd->nchecked + r->rd->nunchecked);
    host_line(f, r);
    client_threads(r, &lo, &hi, &req, &cpus);
    if (hi <= 0 || req <= 0)
        return;
    snprintf(th, sizeof(th), lo == hi ? "%d" : "%d-%d", lo, hi);
    if (lo == req && hi == req)
        para(f, "The client ran %s thread(s) on %d CPU(s), as the contract asks.", th, cpus);
    else
        para(f, "The client ran %s thread(s) on %d CPU(s); the contract's %d threads is an "
             "offered-load spec (open loop at the rate over %lld connections), which it met "
             "with %lld connections.", th, cpus, req,
             json_integer_value(json_object_get(p, "connections")),
             json_integer_value(json_object_get(p, "connections")));
}

/* "21.30 us (1.00)": a runtime's CPU per response at rate, and its ratio to gray-static. */
static const char *eff_cell(char *b, size_t len, const struct kb_report *r, const char *rt,
                            const char *route, long rate)
{
    const struct kb_report_row *w = kb_report_row(r, rt, route, rate);
    const struct kb_report_row *g = kb_report_row(r, "gray-static", route, rate);
    if (!w || !w->cpu_us_per_response.n)
        return snprintf(b, len, "-"), b;
    if (g && g->cpu_us_per_response.n && g->cpu_us_per_response.med > 0)
        snprintf(b, len, "%.1f us (%.2f)", w->cpu_us_per_response.med,
                 w->cpu_us_per_response.med / g->cpu_us_per_response.med);
    else
        snprintf(b, len, "%.1f us", w->cpu_us_per_response.med);
    return b;
}

/* One route's efficiency table; 0 when no rate was held by every compared runtime. */
static int efficiency_route(FILE *f, const struct kb_report *r, const char *route)
{
    long held[64];
    char cell[64];
    size_t nh = kb_report_held_rates(r, route, held, 64);
    if (!nh)
        return 0;
    fprintf(f, "### %s\n\n| runtime |", route);
    for (size_t k = 0; k < nh; k++)
        fprintf(f, " %ld req/s |", held[k]);
    fprintf(f, " capacity estimate at %ld |\n|---|", held[nh - 1]);
    for (size_t k = 0; k <= nh; k++)
        fprintf(f, "---:|");
    fprintf(f, "\n");
    for (size_t i = 0; i < kb_report_nruntimes(r); i++) {
        const char *rt = kb_report_runtime(r, i);
        const struct kb_report_row *top = kb_report_row(r, rt, route, held[nh - 1]);
        if (!kb_report_compared(r, rt, route))
            continue;
        fprintf(f, "| %s |", rt);
        for (size_t k = 0; k < nh; k++)
            fprintf(f, " %s |", eff_cell(cell, sizeof(cell), r, rt, route, held[k]));
        top && top->cpu_us_per_response.n && top->cpu_us_per_response.med > 0
            ? fprintf(f, " ~%.0f req/s |\n", 1e6 / top->cpu_us_per_response.med)
            : fprintf(f, " - |\n");
    }
    fprintf(f, "\n");
    for (size_t i = 0; i < kb_report_nruntimes(r); i++) {
        const struct kb_report_row *w = kb_report_row(r, kb_report_runtime(r, i), route, held[0]);
        if (w && w->planned && !kb_report_compared(r, kb_report_runtime(r, i), route))
            para(f, "%s held no rate on %s (its own figures were never controlled) and is not "
                 "compared.", kb_report_runtime(r, i), route);
    }
    return 1;
}

/* Server CPU per response where every compared runtime held the rate: how the fast
 * runtimes differ when their knees are past what the client can drive. */
static void efficiency(FILE *f, const struct kb_report *r)
{
    int any = 0, figures = 0;
    for (size_t i = 0; i < r->nrows; i++)
        figures |= r->rows[i].cpu_us_per_response.n > 0;
    fprintf(f, "## Efficiency: server CPU per response (an estimate)\n\n");
    if (!figures) {
        para(f, "This run's evidence has no server CPU per response (verdict.json's "
             "server.cpu_us_per_response; written by an older kneebench).");
        return;
    }
    para(f, "The fixture's CPU time over the measured interval divided by the responses it "
         "completed in that interval, at each rate every compared runtime held (its own "
         "figures controlled, whether or not the client was trusted); in brackets the ratio "
         "to gray-static, lower is cheaper. The capacity estimate is 1 CPU over that cost: "
         "what one CPU would serve if nothing but CPU limited it. It is an estimate, not a "
         "measured knee: queueing raises the tail before the CPU is full.");
    for (size_t j = 0; j < kb_report_nroutes(r); j++)
        any |= efficiency_route(f, r, kb_report_route(r, j));
    if (!any)
        para(f, "No rate was held by two or more runtimes on any route: nothing to compare.");
}

/* 1 when the run's command line has --force (points above the margin marked client-limited). */
static int forced(const struct kb_report *r)
{
    json_t *cl = json_object_get(r->run, "command_line");
    for (size_t i = 0; i < json_array_size(cl); i++) {
        const char *a = json_string_value(json_array_get(cl, i));
        if (a && !strcmp(a, "--force"))
            return 1;
    }
    return 0;
}

/* " 100, 200" for the plan's rates the margin covers (cover 1) or not (cover 0); the count. */
static int rates_where(FILE *m, const struct kb_report *r, int cover)
{
    int any = 0;
    for (size_t k = 0; k < kb_report_nrates(r); k++)
        if (kb_report_covers(r, kb_report_rate(r, k)) == cover)
            fprintf(m, "%s %ld", any++ ? "," : "", kb_report_rate(r, k));
    return any;
}

/* The plan's rates the margin covers, or not, and how many rows at the uncovered rates the
 * evidence marks client-limited. */
static void coverage(FILE *f, const struct kb_report *r)
{
    const struct kb_calibrate_result *c = r->cal;
    int limited = 0, points = 0;
    char *text = NULL;
    size_t len = 0;
    FILE *m = open_memstream(&text, &len);
    if (!m)
        return;
    fprintf(m, "The margin covers a point requested at rate R when R x %.2f <= %.0f req/s, so "
            "up to %.0f req/s. Covered:", c->factor, c->margin_rps, c->margin_rps / c->factor);
    fprintf(m, "%s. Not covered:", rates_where(m, r, 1) ? " req/s" : " none");
    for (size_t i = 0; i < r->nrows; i++)
        if (r->rows[i].n && kb_report_covers(r, r->rows[i].rate) == 0) {
            points++;
            limited += !strcmp(r->rows[i].verdict, "client-limited");
        }
    if (!rates_where(m, r, 0))
        fprintf(m, " none: every point is inside the proven margin.");
    else
        fprintf(m, " req/s%s: %d of %d runtime x route row(s) there are marked client-limited.",
                forced(r) ? " (the curve ran with --force)" : "", limited, points);
    fclose(m);
    para(f, "%s", text);
    free(text);
}

static void margin_steps(FILE *f, const struct kb_report *r)
{
    fprintf(f, "| step | requested/s | achieved/s | delivery | client CPU | send-lag p99 us | "
            "rx-delay p99 us | corrected p99 ms | errors | held | why | earlier attempts "
            "missed |\n|---:|---:|---:|---:|---:|---:|---:|---:|---:|---|---|---|\n");
    for (size_t i = 0; i < r->cal->nsteps; i++) {
        const struct kb_calibrate_step *s = &r->cal->steps[i];
        char rx[24] = "-";   /* an older calibrate.json has no receive delay (-1) */
        if (s->rx_delay_p99_us >= 0)
            snprintf(rx, sizeof(rx), "%.0f", s->rx_delay_p99_us);
        fprintf(f, "| %zu | %.0f | %.0f | %.1f %% | %.0f %% | %.0f | %s | %.2f | %lld | %s | "
                "%s | %s |\n", i + 1, s->rate, s->achieved_rps, 100 * s->delivery,
                100 * s->cpu_fraction, s->lag_p99_us, rx, s->corrected_p99_us / 1000, s->errors,
                s->held ? "yes" : "no", s->why, s->missed_before);
    }
    fprintf(f, "\n");
}

/* The client's headroom gate (docs/protocol.md, "Trusting the client"): the margin the client
 * proved against the control server. */
static void client_margin(FILE *f, const struct kb_report *r)
{
    json_t *j = r->cal_json, *cr = json_object_get(j, "criteria");
    long long quantum = (long long)json_integer_value(json_object_get(j, "send_quantum_us"));
    char rx[64] = "";
    fprintf(f, "## Client margin\n\n");
    if (!r->cal) {
        para(f, "> **NO CALIBRATION PROOF**: this run has no calibration proof (%s). The "
             "client's margin was not measured, so no point is proven free of client limits "
             "beyond its own CPU and send-lag checks. `kneebench curve --calibrate` proves it.",
             r->cal_note);
        return;
    }
    if (json_is_number(json_object_get(cr, "rx_delay_p99_max_us")))
        snprintf(rx, sizeof(rx), ", receive-delay p99 < %g us",
                 kb_jnum(cr, "rx_delay_p99_max_us", NULL));
    para(f, "Calibrated against the control server (route `%s`, client CPUs %s, server CPUs "
         "%s, %g s per step): a step holds when client CPU < %.0f %%, send-lag p99 < %g us%s, "
         "delivery >= %.1f %% and no errors.", js(j, "route"), js(j, "client_cpus"),
         js(j, "server_cpus"), kb_jnum(j, "duration_s", NULL),
         100 * kb_jnum(cr, "client_cpu_max_fraction", NULL),
         kb_jnum(cr, "lag_p99_max_us", NULL), rx,
         100 * kb_jnum(cr, "min_delivery", NULL));
    fprintf(f, "- proven margin: **%.0f req/s** (the highest rate held with every lower step "
            "held)\n- required: %.0f req/s (%.2f x the curve's top rate %.0f req/s)\n"
            "- proven: **%s**\n\n", r->cal->margin_rps, r->cal->required_rps, r->cal->factor,
            r->cal->up_to_rps, r->cal->proven ? "yes" : "no");
    /* a rung held above a miss is not margin (every rung below must hold), but it is not
     * nothing either: the miss may have been one stall of a shared host */
    if (r->cal->highest_held_rps > r->cal->margin_rps)
        para(f, "The client also held %.0f req/s, above a missed step: not counted in the "
             "margin, which needs every lower step held.", r->cal->highest_held_rps);
    if (quantum > 0)
        para(f, "The client grouped sends less than %lld us apart on a %lld us grid, in the "
             "calibration as in the curve (`kneebench load --send-quantum-us`); the wait is in "
             "the send lag above.", quantum, quantum);
    margin_steps(f, r);
    coverage(f, r);
    para(f, "Steps: calibrate/calibrate.json and calibrate/step-NN.json (step-NN-A.json: "
         "attempt A+1 of a step tried again).");
}

/* Per runtime, the latency-over-time chart of its first uncontrolled point on route. */
static void series_links(FILE *f, const struct kb_report *r, const char *route)
{
    fprintf(f, "Latency over time at each runtime's first uncontrolled point (corrected p50, "
            "p99, max\nper second):\n\n");
    for (size_t i = 0; i < kb_report_nruntimes(r); i++) {
        const char *rt = kb_report_runtime(r, i);
        const struct kb_report_series *s = kb_report_series_of(r, rt, route);
        const struct kb_report_sec *a, *z;
        char x[32], y[32];
        if (!s) {
            fprintf(f, "- %s: no uncontrolled point on %s\n", rt, route);
            continue;
        }
        if (!s->n) {
            fprintf(f, "- %s at %ld req/s (`%s`): no chart,\n  %s\n", rt, s->rate, s->point,
                    s->note);
            continue;
        }
        a = &s->v[0];
        z = &s->v[s->n - 1];
        snprintf(x, sizeof(x), "%s%s", a->p99_bound ? ">= " : "", a->p99_us < 0 ? "-" : "");
        if (a->p99_us >= 0)
            fmt_us(x + strlen(x), sizeof(x) - strlen(x), a->p99_us);
        snprintf(y, sizeof(y), "%s%s", z->p99_bound ? ">= " : "", z->p99_us < 0 ? "-" : "");
        if (z->p99_us >= 0)
            fmt_us(y + strlen(y), sizeof(y) - strlen(y), z->p99_us);
        fprintf(f, "- %s at %ld req/s (`%s`%s):\n  p99 %s in the first second, %s in the last "
                "(%zu s)\n\n  ![%s at %ld req/s: corrected latency per second, %s]"
                "(charts/series-%s-%s.svg)\n\n", rt, s->rate, s->point,
                s->past_margin ? "; client-limited, its own figures past the criteria" : "",
                x, y, s->n, rt, s->rate, route, rt, route);
    }
    fprintf(f, "\n");
}

/* What an uncontrolled row missed, from its own figures: "p99 >= 100 ms" etc.; "" when
 * none shows (the verdict's reason then says it, as a note). */
static const char *missed(char *b, size_t len, const struct kb_report *r,
                          const struct kb_report_row *w)
{
    b[0] = '\0';
    if (w->delivery.med < r->min_delivery)
        snprintf(b + strlen(b), len - strlen(b), "delivery < %.0f %%", 100 * r->min_delivery);
    if (w->p99.n && w->p99.med >= r->max_p99_us)
        snprintf(b + strlen(b), len - strlen(b), "%sp99 >= %g ms", b[0] ? "; " : "",
                 r->max_p99_us / 1000);
    if (w->scheduled > 0 && (double)w->bounded > 0.01 * (double)w->scheduled)
        snprintf(b + strlen(b), len - strlen(b), "%s> 1 %% unanswered", b[0] ? "; " : "");
    return b;
}

/* The text a row's "why" refers to as a note, or NULL when it needs none: a controlled row,
 * or an uncontrolled one whose misses its figures show. */
static const char *note_text(const struct kb_report *r, const struct kb_report_row *w)
{
    char buf[128];
    if (w->n == 0 || !strcmp(w->verdict, "controlled"))
        return NULL;
    if (w->host_could_decide && !strcmp(w->verdict, "uncontrolled"))
        return "the host withheld enough of the server's CPU (steal) during this point to "
               "explain its verdict (verdict.json: host)";
    if (!strcmp(w->verdict, "uncontrolled") && missed(buf, sizeof(buf), r, w)[0])
        return NULL;
    return w->reason[0] ? w->reason : NULL;
}

/* Numbers every note in the order the tables will show them. */
static void collect_notes(const struct kb_report *r, struct notes *nt)
{
    memset(nt, 0, sizeof(*nt));
    for (size_t j = 0; j < kb_report_nroutes(r); j++)
        for (size_t i = 0; i < kb_report_nruntimes(r); i++)
            for (size_t k = 0; k < kb_report_nrates(r); k++) {
                const struct kb_report_row *w = kb_report_row(r, kb_report_runtime(r, i),
                    kb_report_route(r, j), kb_report_rate(r, k));
                const char *t = w && w->planned ? note_text(r, w) : NULL;
                size_t ref = t ? note_ref(nt, t, j) : 0;
                if (ref)
                    nt->rows[ref - 1]++;
            }
}

static const char *verdict_cell(char *b, size_t len, const struct kb_report_row *w)
{
    if (!strcmp(w->verdict, "client-limited"))
        snprintf(b, len, "client-limited (server: %s)",
                 w->server_verdict[0] ? w->server_verdict : "unknown");
    else
        snprintf(b, len, "%s", w->verdict);
    return b;
}

/* The client's own lateness: send lag and receive delay p99, the primary trust signals. */
static const char *client_cell(char *b, size_t len, const struct kb_report_row *w)
{
    char x[24] = "-", y[24] = "-";
    if (w->lag_p99_max_us >= 0)
        fmt_us(x, sizeof(x), w->lag_p99_max_us);
    if (w->rx_p99_max_us >= 0)
        fmt_us(y, sizeof(y), w->rx_p99_max_us);
    snprintf(b, len, "%.0f %% / %s / %s", 100 * w->client_cpu_max, x, y);
    return b;
}

static void curve_row(FILE *f, const struct kb_report *r, const struct kb_report_row *w,
                      const struct notes *nt)
{
    char a[96], d[96], p[4][64], mx[64], cl[96], v[64], why[192], cpu[32] = "-";
    const char *t = note_text(r, w);
    size_t ref = t ? note_find(nt, t) : 0;
    if (ref)
        snprintf(why, sizeof(why), "[%zu]", ref);
    else if (t)
        snprintf(why, sizeof(why), "%.180s", t);
    else
        missed(why, sizeof(why), r, w);
    if (w->cpu_us_per_response.n)
        snprintf(cpu, sizeof(cpu), "%.1f us", w->cpu_us_per_response.med);
    fprintf(f, "| %s | %ld | %s | %s | %s | %s | %s | %s | %s | %lld | %s | %s | %s | %s |\n",
            w->runtime, w->rate, fmt_stat(a, sizeof(a), w->achieved, 1, "%.0f"),
            fmt_stat(d, sizeof(d), w->delivery, 100, "%.1f %%"),
            fmt_lat(p[0], sizeof(p[0]), w->p50), fmt_lat(p[1], sizeof(p[1]), w->p90),
            fmt_lat(p[2], sizeof(p[2]), w->p99), fmt_lat(p[3], sizeof(p[3]), w->p999),
            fmt_lat(mx, sizeof(mx), w->max), w->errors + w->non2xx + w->mismatches,
            client_cell(cl, sizeof(cl), w), cpu, verdict_cell(v, sizeof(v), w), why);
}

/* The notes the route's table was the first to use. */
static void print_notes(FILE *f, const struct notes *nt, size_t route)
{
    for (size_t i = 0; i < nt->n; i++)
        if (nt->first_route[i] == route)
            para(f, "[%zu] %s (%d row%s)", i + 1, nt->text[i], nt->rows[i],
                 nt->rows[i] == 1 ? "" : "s");
}

static void curve_table(FILE *f, const struct kb_report *r, size_t j, const struct notes *nt)
{
    const char *route = kb_report_route(r, j);
    fprintf(f, "### %s\n\n| runtime | req/s | achieved/s | delivery | p50 | p90 | p99 | p99.9 | "
            "max | errors | client CPU / lag p99 / rx p99 | server CPU per response | verdict | "
            "why |\n|---|---:|---:|---:|---:|---:|---:|---:|---:|---:|---:|---:|---|---|\n",
            route);
    for (size_t i = 0; i < kb_report_nruntimes(r); i++)
        for (size_t k = 0; k < kb_report_nrates(r); k++) {
            const struct kb_report_row *w =
                kb_report_row(r, kb_report_runtime(r, i), route, kb_report_rate(r, k));
            if (w && !w->planned)
                continue;
            if (!w || w->n == 0)
                fprintf(f, "| %s | %ld | | | | | | | | | | | missing | no complete evidence |\n",
                        kb_report_runtime(r, i), kb_report_rate(r, k));
            else
                curve_row(f, r, w, nt);
        }
    fprintf(f, "\n");
    print_notes(f, nt, j);
    fprintf(f, "![achieved vs requested, %s](charts/achieved-%s.svg)\n"
            "![corrected p99 vs requested, %s](charts/p99-%s.svg)\n\n", route, route, route, route);
    series_links(f, r, route);
}

/* How the curve tables read: once, above them. */
static void curves_intro(FILE *f, const struct kb_report *r)
{
    fprintf(f, "## Curves\n\n");
    para(f, "Latency is corrected (from each request's intended send time). \">= \" marks a "
         "figure that is only a lower bound: requests still unanswered when the drain ended "
         "(or timed out) were recorded at drain end minus their intended time, so the true "
         "value is at least that. \"-\": no such figure (nothing was recorded). Errors count "
         "socket errors, non-2xx and mismatched responses. A client-limited row keeps the "
         "verdict its own figures give (server). Client: its CPU (fraction of the CPUs it "
         "was given), send-lag p99 and receive-delay p99, the largest over repeats.%s",
         r->repeats > 1 ? " With repeats: median (min-max); a median is a bound when any "
                          "repeat's figure was." : "");
}

static void limits_table(FILE *f, const struct kb_report *r)
{
    const char *rt;
    json_t *fx;
    fprintf(f, "### Fixtures: limits read back from the sandbox, identity, preflight\n\n"
            "| runtime | backend | cgroup | CPUs (quota/period) | cpuset | memory bytes | memsw bytes | "
            "pids.max | identity SHA-256 | preflight |\n|---|---|---|---|---|---:|---:|---:|---|---|\n");
    json_object_foreach(r->fixtures, rt, fx) {
        json_t *l = json_object_get(fx, "limits"), *p = json_object_get(fx, "preflight");
        if (!json_is_object(l)) {
            /* never started, so nothing was read back: no figure, never a 0 */
            fprintf(f, "| %s | - | - | - | - | - | - | - | - | %s |\n", rt,
                    !p ? "not run" : json_is_true(json_object_get(p, "failed")) ? js(p, "reason")
                                                                                : "ok");
            continue;
        }
        fprintf(f, "| %s | %s | v%lld | %.2f (%lld/%lld) | %s | %lld | %lld | %lld | `%.16s...` | %s |\n",
                rt, js(l, "backend"), json_integer_value(json_object_get(l, "cgroup_version")),
                kb_jnum(l, "cpus", NULL),
                json_integer_value(json_object_get(l, "cpu_quota_us")),
                json_integer_value(json_object_get(l, "cpu_period_us")), js(l, "cpuset"),
                json_integer_value(json_object_get(l, "memory_bytes")),
                json_integer_value(json_object_get(l, "memsw_bytes")),
                json_integer_value(json_object_get(l, "pids_max")),
                json_string_value(json_object_get(fx, "identity_sha256"))
                    ? json_string_value(json_object_get(fx, "identity_sha256")) : "none",
                !p ? "not run" : json_is_true(json_object_get(p, "failed")) ? js(p, "reason") : "ok");
    }
    fprintf(f, "\n");
    para(f, "(-1 = no limit. Identity covers %s; full lists in fixtures/<runtime>/identity.json, "
         "rechecked after every point.)", json_object_get(r->run, "image")
             ? "the image ID and the contract's command"
             : "the fixture's executables and every source file");
}

/* The container image: what ran, and on which base. */
static void image_lines(FILE *f, const struct kb_report *r)
{
    json_t *im = json_object_get(r->run, "image"), *dg = json_object_get(im, "repo_digests");
    fprintf(f, "- backend: `%s`\n", js(r->run, "backend"));
    if (!im)
        return;
    fprintf(f, "- image `%s`, ID `%s`, digest %s", js(im, "image"), js(im, "id"),
            json_array_size(dg) ? "" : "none (built here, never pushed)");
    for (size_t i = 0; i < json_array_size(dg); i++)
        fprintf(f, "%s`%s`", i ? ", " : "", json_string_value(json_array_get(dg, i)));
    fprintf(f, "\n- base `%s` (%s), %s\n", js(im, "base"), js(im, "base_os"),
            json_is_true(json_object_get(im, "base_is_pinned")) ? "the pinned one"
                                                                : "NOT the pinned one");
    if (!json_is_true(json_object_get(im, "base_is_pinned")))
        fprintf(f, "- note: %s\n", js(im, "note"));
    fprintf(f, "- runtime versions below are the image's own\n");
}

/* The fixture's libmicrohttpd (gray-static's, from its version line); runs recorded before
 * it have the runner's own under host. */
static const char *mhd_version(const struct kb_report *r)
{
    json_t *m = json_object_get(r->run, "libmicrohttpd");
    if (json_is_string(m))
        return json_string_value(m);
    return m ? "none recorded (gray-static is not in this run)"
             : js(json_object_get(r->run, "host"), "libmicrohttpd");
}

static void identity(FILE *f, const struct kb_report *r)
{
    json_t *h = json_object_get(r->run, "host"), *v = json_object_get(r->run, "runtime_versions"),
           *val;
    const char *k;
    fprintf(f, "## Identity\n\n- host: %s, kernel `%s`, CPU `%s`, %lld CPUs online\n"
            "- libmicrohttpd %s\n- runner SHA-256 `%s`\n- contract `%s` SHA-256 `%s`\n",
            js(h, "hostname"), js(h, "kernel"), js(h, "cpu_model"),
            json_integer_value(json_object_get(h, "online_cpus")), mhd_version(r),
            js(r->run, "runner_sha256"), js(r->run, "contract"), js(r->run, "contract_sha256"));
    fprintf(f, "- %s\n", js(r->hostclock, "line"));
    image_lines(f, r);
    json_object_foreach(v, k, val)
        fprintf(f, "- %s: `%s`\n", k, json_string_value(val));
    fprintf(f, "- command line: `kneebench");
    for (size_t i = 0; i < json_array_size(json_object_get(r->run, "command_line")); i++)
        fprintf(f, " %s", json_string_value(json_array_get(json_object_get(r->run, "command_line"), i)));
    fprintf(f, "`\n\n");
    limits_table(f, r);
}


int kb_report_write_md(const struct kb_report *r, const char *dir, char *err, size_t errlen)
{
    char *buf = NULL, path[4200];
    size_t len = 0;
    struct notes *nt = calloc(1, sizeof(*nt));
    FILE *f = nt ? open_memstream(&buf, &len) : NULL;
    int rc;
    if (!f) {
        free(nt);
        snprintf(err, errlen, "out of memory");
        return -1;
    }
    fprintf(f, "# kneebench: %zu-point comparison", json_array_size(json_object_get(r->plan, "points")));
    if (r->rd && r->rd->rejudge)
        fprintf(f, ", re-judged at corrected p99 < %g ms and delivery >= %g %%",
                r->max_p99_us / 1000, 100 * r->min_delivery);
    fprintf(f, "\n\n");
    rederived(f, r);
    stamps(f, r);
    answer_table(f, r);
    readiness_section(f, r);
    run_summary(f, r);
    efficiency(f, r);
    client_margin(f, r);
    curves_intro(f, r);
    collect_notes(r, nt);
    for (size_t j = 0; j < kb_report_nroutes(r); j++)
        curve_table(f, r, j, nt);
    identity(f, r);
    para(f, "Generated by `kneebench report` from the evidence in %s only "
         "(points/<id>/verdict.json and load.json, .hgrm, samples.csv, series.csv, hostclock.json; "
         "calibrate/calibrate.json). report.csv and report.json hold the same rows; "
         "docs/report-format.md documents them.", r->rd && r->rd->rejudge
             ? "the run directory above this one" : "this directory");
    fclose(f);
    free(nt);
    rc = kb_write_atomic(kb_path(path, sizeof(path), dir, "report.md"), buf, len, err, errlen);
    free(buf);
    return rc;
}
