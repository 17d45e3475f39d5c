/* compare_out.c -- `kneebench compare`'s markdown and CSV (compare.h). Formats the model onto
 * the caller's stream; decides nothing. Latency is in microseconds in the CSV (as report.csv,
 * docs/report-format.md) and in ms throughout the markdown; a lower bound is written ">= ".
 * The markdown sets side by side only what both runs have: a cell planned in one run is
 * counted once, and no change is given between two lower bounds. */
#define _POSIX_C_SOURCE 200809L
#include "runner/report/compare/compare.h"
#include "runner/report/report_int.h"

#include <jansson.h>
#include <math.h>
#include <stdlib.h>
#include <string.h>

/* ---- markdown ------------------------------------------------------------------------- */

/* Latency in the markdown: every p99 in ms, in the tables and in the lines alike, so that
 * figures line up and compare by eye (a column once switched to s where a figure passed a
 * second, beside lines in ms). Three decimals keep every microsecond. */
struct lat_unit {
    const char *name;
    double scale;              /* us per unit */
    int decimals;
};

static const struct lat_unit MS = { "ms", 1e3, 3 };

/* "1.200 (1.100-1.300)", ">= 2.000", "-": a median in the column's unit with its range over
 * the samples, no unit (the column's header has it). */
static void fmt_stat(char *out, size_t len, const struct kb_stat *s, double scale, int decimals)
{
    const char *ge = s->bound ? ">= " : "";
    if (s->n < 1)
        snprintf(out, len, "-");
    else if (s->n > 1)
        snprintf(out, len, "%s%.*f (%.*f-%.*f)", ge, decimals, s->med / scale, decimals,
                 s->min / scale, decimals, s->max / scale);
    else
        snprintf(out, len, "%s%.*f", ge, decimals, s->med / scale);
}

/* "+12.3 %", "0.0 %" for a change that rounds to nothing (never "-0.0 %"), "-" without one. */
static void fmt_pct_of(char *out, size_t len, double pct)
{
    if (fabs(pct) < 0.05)
        snprintf(out, len, "0.0 %%");
    else
        snprintf(out, len, "%+.1f %%", pct);
}

/* A change between two figures either of which may be a lower bound: a bound in B only
 * leaves the change at least what it says, in A only at most; between two bounds it says
 * nothing, and no percentage is printed. */
static void fmt_pct_bounded(char *out, size_t len, double pct, int a_bound, int b_bound)
{
    char p[32];
    if (a_bound && b_bound) {
        snprintf(out, len, "- (both lower bounds)");
        return;
    }
    fmt_pct_of(p, sizeof(p), pct);
    snprintf(out, len, "%s%s", b_bound ? ">= " : a_bound ? "<= " : "", p);
}

static void fmt_pct(char *out, size_t len, const struct kb_cmp_change *ch)
{
    if (ch->a.n < 1 || ch->b.n < 1 || ch->a.med == 0)
        snprintf(out, len, "-");
    else
        fmt_pct_bounded(out, len, ch->pct, ch->a.bound, ch->b.bound);
}

/* Both runs planned this runtime x route: only those are set side by side. */
static int in_both(const struct kb_cmp_top *t)
{
    return t->a.planned && t->b.planned;
}

/* The cells one run planned and the other did not, said once. */
static void one_run_only(FILE *f, const struct kb_cmp *c)
{
    size_t na = 0, nb = 0;
    for (size_t i = 0; i < c->ntops; i++) {
        na += c->tops[i].a.planned && !c->tops[i].b.planned;
        nb += !c->tops[i].a.planned && c->tops[i].b.planned;
    }
    if (na || nb)
        fprintf(f, "\n%zu runtime-route cell%s ran in one run only (%zu in A, %zu in B): left "
                "out.\n", na + nb, na + nb == 1 ? "" : "s", na, nb);
}

/* A run's answer for one runtime x route, as report.md's answer table words it: the proven
 * point (">= N" when the client stopped the curve above it), what stopped the curve, and
 * beside them what the server's own figures gave where the client was not trusted. */
static void fmt_answer(char *out, size_t len, const struct kb_report_answer *a)
{
    char ind[64] = "";
    if (!a->planned) {
        snprintf(out, len, "not run");
        return;
    }
    if (a->indicative)
        snprintf(ind, sizeof(ind), "; %ld unproven", a->indicative);
    else if (a->below_unproven)
        snprintf(ind, sizeof(ind), "; below %ld unproven", a->below_unproven);
    if (a->proven)
        snprintf(out, len, "%s%ld%s%s", a->client_from ? ">= " : "", a->proven,
                 a->refined ? " (refined)" : "", ind);
    else if (a->below)
        snprintf(out, len, "below %ld%s", a->below, ind);
    else if (a->failed_at)
        snprintf(out, len, "failed at %ld%s", a->failed_at, ind);
    else if (ind[0])
        snprintf(out, len, "none proven%s", ind);
    else
        snprintf(out, len, "no evidence");
}

static const char *plan_str(const struct kb_report *r, const char *key)
{
    const char *s = json_string_value(json_object_get(r->plan, key));
    return s ? s : "-";
}

static size_t planned_points(const struct kb_report *r)
{
    return json_array_size(json_object_get(r->plan, "points"));
}

static void md_runs(FILE *f, const struct kb_report *a, const struct kb_report *b,
                    const char *name_a, const char *name_b)
{
    const struct kb_report *r[2] = { a, b };
    const char *name[2] = { name_a, name_b };
    fprintf(f, "| run | directory | started | profile | measured | repeats | points |\n"
               "|---|---|---|---|---|---|---|\n");
    for (int i = 0; i < 2; i++) {
        const char *started = json_string_value(json_object_get(r[i]->run, "started"));
        fprintf(f, "| %c | %s | %s | %s | %g s | %d | %zu of %zu |\n", 'A' + i, name[i],
                started ? started : "-", plan_str(r[i], "profile"),
                json_number_value(json_object_get(r[i]->plan, "duration_s")), r[i]->repeats,
                planned_points(r[i]) - r[i]->nmissing, planned_points(r[i]));
    }
}

/* One runtime's line: what moved beyond noise, else that nothing did. */
static void md_tally(FILE *f, const struct kb_cmp_tally *t)
{
    int within = t->points - t->worse - t->better - t->unjudged;
    const char *sep = "";
    fprintf(f, "- %s: ", t->runtime);
    if (t->worse) {
        fprintf(f, "worse beyond noise at %d of %d points (achieved rate at %d, p99 at %d)",
                t->worse, t->points, t->achieved_worse, t->p99_worse);
        sep = "; ";
    }
    if (t->better) {
        fprintf(f, "%sbetter beyond noise at %d of %d points", sep, t->better, t->points);
        sep = "; ";
    }
    if (t->unjudged) {
        fprintf(f, "%sunjudged at %d of %d points (one repeat, or a lower bound)", sep,
                t->unjudged, t->points);
        sep = "; ";
    }
    if (within == t->points)
        fprintf(f, "no change beyond noise at %d point%s", t->points, t->points == 1 ? "" : "s");
    else if (within > 0)
        fprintf(f, "%swithin noise at %d", sep, within);
    fprintf(f, "\n");
}

static void md_tops(FILE *f, const struct kb_cmp *c)
{
    fprintf(f, "\n## Highest controlled point (req/s)\n\n"
               "`>= N`: the point above N was client-limited, so N is a lower bound. "
               "`M unproven`: the highest rate whose own figures were controlled while the "
               "client was not trusted (never counted as proven). `below R`: the lowest rate "
               "was already uncontrolled with a trusted client. `N (refined)`: the knee "
               "refined between the grid's rates (`curve --refine`). A change between two "
               "lower bounds is not given.\n\n"
               "| runtime | route | A | B | change |\n|---|---|---|---|---|\n");
    for (size_t i = 0; i < c->ntops; i++) {
        const struct kb_cmp_top *t = &c->tops[i];
        char ca[96], cb[96], ch[40] = "-";
        if (!in_both(t))
            continue;
        fmt_answer(ca, sizeof(ca), &t->a);
        fmt_answer(cb, sizeof(cb), &t->b);
        if (!t->changed)
            snprintf(ch, sizeof(ch), "same");
        else if (t->a.proven && t->b.proven)
            fmt_pct_bounded(ch, sizeof(ch), ((double)t->b.proven - (double)t->a.proven) /
                            (double)t->a.proven * 100, t->a.client_from != 0,
                            t->b.client_from != 0);
        fprintf(f, "| %s | %s | %s | %s | %s |\n", t->runtime, t->route, ca, cb, ch);
    }
    one_run_only(f, c);
}

static void md_points(FILE *f, const struct kb_cmp *c)
{
    struct lat_unit u = MS;
    fprintf(f, "\n## Points in both runs\n\n"
               "Medians over each run's samples (repeats, and confirmation samples where the "
               "curve took them) with their min-max range; p99 is corrected latency.\n\n"
               "| point | verdict A -> B | samples A, B | achieved A (req/s) | "
               "achieved B (req/s) | achieved change | achieved call | p99 A (%s) | "
               "p99 B (%s) | p99 change | p99 call |\n"
               "|---|---|---|---|---|---|---|---|---|---|---|\n", u.name, u.name);
    for (size_t i = 0; i < c->npoints; i++) {
        const struct kb_cmp_point *p = &c->points[i];
        char aa[128], ab[128], pa[128], pb[128], ca[32], cp[32], v[40];
        fmt_stat(aa, sizeof(aa), &p->achieved.a, 1, 1);
        fmt_stat(ab, sizeof(ab), &p->achieved.b, 1, 1);
        fmt_stat(pa, sizeof(pa), &p->p99.a, u.scale, u.decimals);
        fmt_stat(pb, sizeof(pb), &p->p99.b, u.scale, u.decimals);
        fmt_pct(ca, sizeof(ca), &p->achieved);
        fmt_pct(cp, sizeof(cp), &p->p99);
        if (strcmp(p->verdict_a, p->verdict_b))
            snprintf(v, sizeof(v), "%s -> %s", p->verdict_a, p->verdict_b);
        else
            snprintf(v, sizeof(v), "%s", p->verdict_a);
        fprintf(f, "| %s | %s | %d, %d | %s | %s | %s | %s | %s | %s | %s | %s |\n", p->id, v,
                p->achieved.a.n, p->achieved.b.n, aa, ab, ca,
                kb_cmp_call_words(p->achieved.call), pa, pb, cp, kb_cmp_call_words(p->p99.call));
    }
    if (c->npoints == 0)
        fprintf(f, "\nNo point has evidence in both runs.\n");
}

/* One move: "- go-plaintext-100: p99 1.000 -> 5.000 ms (+400.0 %), worse; 3 and 3 samples". */
static void md_move(FILE *f, const struct kb_cmp *c, const struct kb_cmp_move *m)
{
    const struct kb_cmp_point *p = &c->points[m->point];
    const struct kb_cmp_change *ch = kb_cmp_figure_of(p, m->figure);
    struct lat_unit u = m->figure == KB_CMP_P99 ? MS : (struct lat_unit){ "req/s", 1, 1 };
    char pct[40];
    fmt_pct_bounded(pct, sizeof(pct), ch->pct, ch->a.bound, ch->b.bound);
    fprintf(f, "- %s: %s %s%.*f -> %s%.*f %s (%s), %s; %d and %d samples\n", p->id,
            m->figure == KB_CMP_P99 ? "p99" : "achieved rate", ch->a.bound ? ">= " : "",
            u.decimals, ch->a.med / u.scale, ch->b.bound ? ">= " : "", u.decimals,
            ch->b.med / u.scale, u.name, pct, ch->call == KB_CMP_WORSE ? "worse" : "better",
            ch->a.n, ch->b.n);
}

static void md_moves(FILE *f, const struct kb_cmp *c)
{
    size_t shown = c->nmoves < KB_CMP_TOP_MOVES ? c->nmoves : KB_CMP_TOP_MOVES;
    fprintf(f, "Largest moves beyond noise, of %zu figure%s judged (were nothing changed, "
               "chance alone would call about %.1f of them beyond noise):\n\n", c->judged,
            c->judged == 1 ? "" : "s", c->chance_sum);
    for (size_t i = 0; i < shown; i++)
        md_move(f, c, &c->moves[i]);
    if (c->nmoves > shown)
        fprintf(f, "- and %zu more (every point is in the table below)\n", c->nmoves - shown);
    if (c->nmoves == 0)
        fprintf(f, "- none: no figure moved beyond noise%s\n",
                c->judged ? "" : " (none could be judged: too few samples; compare runs made "
                                 "with --repeats 3)");
}

static void md_answers(FILE *f, const struct kb_cmp *c)
{
    int any = 0;
    fprintf(f, "\nHighest controlled points that changed (req/s):\n\n");
    for (size_t i = 0; i < c->ntops; i++) {
        const struct kb_cmp_top *t = &c->tops[i];
        char ca[96], cb[96];
        if (!t->changed || !in_both(t))
            continue;
        fmt_answer(ca, sizeof(ca), &t->a);
        fmt_answer(cb, sizeof(cb), &t->b);
        fprintf(f, "- %s %s: %s -> %s\n", t->runtime, t->route, ca, cb);
        any = 1;
    }
    if (!any)
        fprintf(f, "- unchanged for every runtime and route both ran\n");
}

static void md_noise_run(FILE *f, char run, const struct kb_cmp_noise *z)
{
    fprintf(f, "- %c: ", run);
    if (z->achieved_n == 0 && z->p99_n == 0) {
        fprintf(f, "one sample per point: no spread to judge against (runs made with "
                   "--repeats 3 have one everywhere; --confirm adds samples at the boundary "
                   "rates only)\n");
        return;
    }
    if (z->achieved_n)
        fprintf(f, "achieved rate %.1f %% (largest %.1f %%)", z->achieved_med_pct,
                z->achieved_max_pct);
    if (z->p99_n)
        fprintf(f, "%sp99 %.1f %% (largest %.1f %%)", z->achieved_n ? "; " : "",
                z->p99_med_pct, z->p99_max_pct);
    fprintf(f, "; %d of %d points have 2 or more samples\n", z->rows_sampled, z->rows);
}

static void md_noise(FILE *f, const struct kb_cmp *c)
{
    fprintf(f, "\nNoise floor: how far a point's own samples lie apart within each run, "
               "(max - min) / median, the median over its points (a p99 that is only a lower "
               "bound left out):\n\n");
    md_noise_run(f, 'A', &c->noise[0]);
    md_noise_run(f, 'B', &c->noise[1]);
}

/* A plan field that differs between the runs: not like for like. */
static void md_differs(FILE *f, const struct kb_report *a, const struct kb_report *b,
                       const char *key)
{
    json_t *x = json_object_get(a->plan, key), *y = json_object_get(b->plan, key);
    char *sx, *sy;
    if (json_equal(x, y) || (!x && !y))
        return;
    sx = x ? json_dumps(x, JSON_ENCODE_ANY | JSON_COMPACT) : NULL;
    sy = y ? json_dumps(y, JSON_ENCODE_ANY | JSON_COMPACT) : NULL;
    fprintf(f, "- `%s` differs: A %s, B %s; the runs are not like for like.\n", key,
            sx ? sx : "(none)", sy ? sy : "(none)");
    free(sx);
    free(sy);
}

/* A runtime whose fixture identity (SHA-256 of its executables and sources) changed. */
static void md_identity(FILE *f, const struct kb_report *a, const struct kb_report *b)
{
    const char *key;
    json_t *fa;
    json_object_foreach(a->fixtures, key, fa) {
        const char *ha = json_string_value(json_object_get(fa, "identity_sha256"));
        const char *hb = json_string_value(json_object_get(json_object_get(b->fixtures, key),
                                                           "identity_sha256"));
        if (ha && hb && strcmp(ha, hb))
            fprintf(f, "- %s: its fixture identity differs (executables or sources changed).\n",
                    key);
    }
}

static void md_notes(FILE *f, const struct kb_cmp *c, const struct kb_report *a,
                     const struct kb_report *b)
{
    static const char *const keys[] = { "profile", "duration_s", "warmup_s", "drain_s",
        "threads", "connections", "criteria", "backend", "unconstrained", "server_cpus",
        "client_cpus" };
    fprintf(f, "\n## Notes\n\n");
    for (size_t i = 0; i < sizeof(keys) / sizeof(keys[0]); i++)
        md_differs(f, a, b, keys[i]);
    md_identity(f, a, b);
    if (a->nmissing || b->nmissing)
        fprintf(f, "- incomplete points left out: %zu in A, %zu in B.\n", a->nmissing,
                b->nmissing);
    if (c->only_a || c->only_b)
        fprintf(f, "- points with evidence in one run only: %zu in A, %zu in B.\n", c->only_a,
                c->only_b);
    fprintf(f, "- a change is beyond noise when every sample of one run lies above every "
               "sample of the other and it is at least %g %% of A's median. A point's samples "
               "are its repeats and, where the curve confirmed its boundary, its confirmation "
               "samples, so the runs may hold different counts: with a and b samples alike, "
               "the ranges come apart by chance with probability 2 a! b! / (a + b)! (10 %% for "
               "3 and 3, 20 %% for 2 and 3, 50 %% for 1 and 3), and a change is judged only "
               "where that is at most %g %%, else it is unjudged (too few samples). "
               "Confirmation samples ran after the matrix, so a host that drifted in between "
               "makes them less alike than repeats. A p99 that is only a lower bound is judged "
               "only where the bound cannot hide the direction.\n", c->floor_pct,
            100 * KB_CMP_MAX_CHANCE);
}

/* ---- the host and the servers ---------------------------------------------------------- */

/* How a runtime's own CPU per response moved from a to b: the median, over the rates both runs
 * measured it at, of b's over a's. 0 when no rate has it in both. */
static double cost_change(const struct kb_report *a, const struct kb_report *b, const char *rt,
                          const char *route)
{
    double v[64], t;
    int n = 0;
    for (size_t k = 0; k < kb_report_nrates(a) && n < 64; k++) {
        long rate = kb_report_rate(a, k);
        const struct kb_cell *x = kb_report_row(a, rt, route, rate),
                                   *y = kb_report_row(b, rt, route, rate);
        if (x && y && x->cpu_us_per_response.n && y->cpu_us_per_response.n &&
            x->cpu_us_per_response.med > 0)
            v[n++] = y->cpu_us_per_response.med / x->cpu_us_per_response.med;
    }
    for (int i = 1; i < n; i++)          /* insertion sort: a few rates */
        for (int j = i; j > 0 && v[j] < v[j - 1]; j--)
            t = v[j], v[j] = v[j - 1], v[j - 1] = t;
    return n ? (n % 2 ? v[n / 2] : (v[n / 2 - 1] + v[n / 2]) / 2) : 0;
}

static void pct_of_ratio(char *out, size_t len, double ratio)
{
    if (ratio > 0)
        snprintf(out, len, "%+.0f %%", 100 * (ratio - 1));
    else
        snprintf(out, len, "-");
}

/* One runtime-route: its cost's change split into the host's (the floor's) and the server's
 * own (its floor multiple's), and its ratio to the baseline in each run. */
static void md_host_row(FILE *f, const struct kb_report *a, const struct kb_report *b,
                        const char *rt, const char *route, double host)
{
    struct kb_report_side sa, sb;
    char cost[24], own[24];
    double ch = cost_change(a, b, rt, route);
    kb_report_side_of(a, rt, route, &sa);
    kb_report_side_of(b, rt, route, &sb);
    if (!ch && !sa.n_rates && !sb.n_rates)
        return;
    pct_of_ratio(cost, sizeof(cost), ch);
    pct_of_ratio(own, sizeof(own), sa.floor > 0 && sb.floor > 0 ? sb.floor / sa.floor
                                   : ch > 0 && host > 0 ? ch / host : 0);
    fprintf(f, "| %s | %s | %s | %s |", rt, route, cost, own);
    sa.cost > 0 ? fprintf(f, " %.2f |", sa.cost) : fprintf(f, " - |");
    sb.cost > 0 ? fprintf(f, " %.2f |\n", sb.cost) : fprintf(f, " - |\n");
}

/* How much of a difference between the runs is the host's: their floors, each measured beside
 * its runtimes; the rest is the servers'. */
static void md_host(FILE *f, const struct kb_report *a, const struct kb_report *b)
{
    struct kb_report_floor fa, fb;
    const char *base = kb_report_baseline(a);
    double host = 0;
    kb_report_floor_of(a, &fa);
    kb_report_floor_of(b, &fb);
    fprintf(f, "\n## The host and the servers\n\n");
    if (fa.n && fb.n) {
        host = fb.med / fa.med;
        fprintf(f, "The host's floor (kb-control's CPU a response, measured beside the runtimes): "
                "A %.2f us (%.2f-%.2f over %d samples), B %.2f us (%.2f-%.2f over %d): the host "
                "was %.0f %% %s in B. A change in a runtime's CPU a response is the host's by that "
                "much; the rest, its floor multiple's change, is the server's own.\n\n",
                fa.med, fa.min, fa.max, fa.n, fb.med, fb.min, fb.max, fb.n,
                100 * fabs(host - 1), host > 1 ? "slower" : "faster");
    } else {
        fprintf(f, "%s took no floor of the host (runs before the interleaved order, or "
                "--order sequential): a change in CPU a response cannot be split between the "
                "host and the server.\n\n", !fa.n && !fb.n ? "Neither run" : !fa.n ? "A" : "B");
    }
    fprintf(f, "| runtime | route | CPU a response | of it the server's own | x %s in A | "
            "x %s in B |\n|---|---|---:|---:|---:|---:|\n", base ? base : "the baseline",
            base ? base : "the baseline");
    for (size_t i = 0; i < kb_report_nruntimes(a); i++)
        for (size_t j = 0; j < kb_report_nroutes(a); j++)
            md_host_row(f, a, b, kb_report_runtime(a, i), kb_report_route(a, j), host);
}

int kb_cmp_write_md(FILE *f, const struct kb_cmp *c, const struct kb_report *a,
                    const struct kb_report *b, const char *name_a, const char *name_b)
{
    fprintf(f, "# kneebench compare\n\n");
    md_runs(f, a, b, name_a, name_b);
    fprintf(f, "\n## What moved (B against A)\n\n");
    md_moves(f, c);
    md_answers(f, c);
    md_noise(f, c);
    md_host(f, a, b);
    fprintf(f, "\nBy runtime:\n\n");
    for (size_t i = 0; i < c->ntally; i++)
        md_tally(f, &c->tally[i]);
    if (c->ntally == 0)
        fprintf(f, "- nothing to compare: no point has evidence in both runs\n");
    md_tops(f, c);
    md_points(f, c);
    md_notes(f, c, a, b);
    return fflush(f) || ferror(f) ? -1 : 0;
}

/* ---- CSV ------------------------------------------------------------------------------ */

/* med,min,max,is_bound,samples_count of a figure; empty fields when the run has none. */
static void csv_stat(FILE *f, const struct kb_stat *s)
{
    if (s->n < 1)
        fprintf(f, ",,,,,0");
    else
        fprintf(f, ",%.3f,%.3f,%.3f,%d,%d", s->med, s->min, s->max, s->bound, s->n);
}

static void csv_change(FILE *f, const struct kb_cmp_change *ch)
{
    csv_stat(f, &ch->a);
    csv_stat(f, &ch->b);
    if (ch->a.n < 1 || ch->b.n < 1 || ch->a.med == 0)
        fprintf(f, ",");
    else
        fprintf(f, ",%.3f", ch->pct);
    fprintf(f, ",%.4f,%s", ch->chance, kb_cmp_call_name(ch->call));
}

/* A highest-point row: the proven rate (empty when none), whether it is a bound, and the
 * unproven rate above it (empty when none). */
static void csv_answer(FILE *f, const struct kb_report_answer *a)
{
    if (a->proven)
        fprintf(f, ",%ld,%d", a->proven, a->client_from != 0);
    else
        fprintf(f, ",,");
    if (a->indicative)
        fprintf(f, ",%ld", a->indicative);
    else
        fprintf(f, ",");
}

#define CSV_FIGURE_FIELDS 13   /* per figure: two runs' 5 fields, change, chance, call */

int kb_cmp_write_csv(FILE *f, const struct kb_cmp *c)
{
    static const char *const fig[] = { "achieved", "p99" };
    static const char *const unit[] = { "rps", "us" };
    fprintf(f, "kind,runtime,route,rate_rps,point_id,verdict_a,verdict_b,highest_a_rps,"
               "highest_a_is_bound,highest_a_unproven_rps,highest_b_rps,highest_b_is_bound,"
               "highest_b_unproven_rps");
    for (int k = 0; k < 2; k++) {
        for (int r = 0; r < 2; r++)
            fprintf(f, ",%s_%c_%s,%s_%c_min_%s,%s_%c_max_%s,%s_%c_is_bound,%s_%c_samples_count",
                    fig[k], 'a' + r, unit[k], fig[k], 'a' + r, unit[k], fig[k], 'a' + r,
                    unit[k], fig[k], 'a' + r, fig[k], 'a' + r);
        fprintf(f, ",%s_change_pct,%s_chance_fraction,%s_call", fig[k], fig[k], fig[k]);
    }
    fprintf(f, "\n");
    for (size_t i = 0; i < c->ntops; i++) {
        fprintf(f, "highest,%s,%s,,,,", c->tops[i].runtime, c->tops[i].route);
        csv_answer(f, &c->tops[i].a);
        csv_answer(f, &c->tops[i].b);
        for (int k = 0; k < 2 * CSV_FIGURE_FIELDS; k++)
            fputc(',', f);
        fputc('\n', f);
    }
    for (size_t i = 0; i < c->npoints; i++) {
        const struct kb_cmp_point *p = &c->points[i];
        fprintf(f, "point,%s,%s,%ld,%s,%s,%s,,,,,,", p->runtime, p->route, p->rate, p->id,
                p->verdict_a, p->verdict_b);
        csv_change(f, &p->achieved);
        csv_change(f, &p->p99);
        fprintf(f, "\n");
    }
    return fflush(f) || ferror(f) ? -1 : 0;
}
