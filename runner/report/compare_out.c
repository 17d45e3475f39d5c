/* compare_out.c -- `kneebench compare`'s markdown and CSV (compare.h). Formats the model onto
 * the caller's stream; decides nothing. Latency is in microseconds in the CSV (as report.csv,
 * docs/report-format.md) and in us/ms/s in the markdown; a lower bound is written ">= ". */
#define _POSIX_C_SOURCE 200809L
#include "runner/report/compare.h"

#include <jansson.h>
#include <math.h>
#include <stdlib.h>
#include <string.h>

/* ---- markdown ------------------------------------------------------------------------- */

/* The unit a latency reads best in, and its scale from us. */
static const char *us_unit(double us, double *scale)
{
    *scale = us < 1000 ? 1 : us < 1e6 ? 1e3 : 1e6;
    return us < 1000 ? "us" : us < 1e6 ? "ms" : "s";
}

static void fmt_us(char *out, size_t len, double us)
{
    double k;
    const char *unit = us_unit(us, &k);
    snprintf(out, len, k == 1 ? "%.0f %s" : "%.2f %s", us / k, unit);
}

/* "1.20 ms (1.10-1.30 ms)", ">= 2.00 s", "-": a median with its range over repeats, the
 * range in the unit of its top. */
static void fmt_stat(char *out, size_t len, const struct kb_stat *s, int latency)
{
    char med[32], range[64];
    const char *ge = s->bound ? ">= " : "";
    double k = 1;
    if (s->n < 1) {
        snprintf(out, len, "-");
        return;
    }
    if (latency) {
        const char *unit = us_unit(s->max, &k);
        fmt_us(med, sizeof(med), s->med);
        snprintf(range, sizeof(range), k == 1 ? "%.0f-%.0f %s" : "%.2f-%.2f %s", s->min / k,
                 s->max / k, unit);
    } else {
        snprintf(med, sizeof(med), "%.1f", s->med);
        snprintf(range, sizeof(range), "%.1f-%.1f", s->min, s->max);
    }
    if (s->n > 1)
        snprintf(out, len, "%s%s (%s)", ge, med, range);
    else
        snprintf(out, len, "%s%s", ge, med);
}

static void fmt_pct(char *out, size_t len, const struct kb_cmp_change *ch)
{
    if (ch->a.n < 1 || ch->b.n < 1 || ch->a.med == 0)
        snprintf(out, len, "-");
    else
        snprintf(out, len, "%+.1f %%", ch->pct);
}

/* A run's answer for one runtime x route, as report.md's answer table words it. */
static void fmt_answer(char *out, size_t len, const struct kb_report_answer *a)
{
    if (!a->planned)
        snprintf(out, len, "not run");
    else if (a->proven)
        snprintf(out, len, "%s%ld", a->client_from ? ">= " : "", a->proven);
    else if (a->below)
        snprintf(out, len, "below %ld", a->below);
    else if (a->failed_at)
        snprintf(out, len, "failed at %ld", a->failed_at);
    else
        snprintf(out, len, "none");
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
               "`>= N`: the point above N was client-limited, so N is a lower bound.\n\n"
               "| runtime | route | A | B | change |\n|---|---|---|---|---|\n");
    for (size_t i = 0; i < c->ntops; i++) {
        const struct kb_cmp_top *t = &c->tops[i];
        char ca[48], cb[48], ch[32] = "-";
        fmt_answer(ca, sizeof(ca), &t->a);
        fmt_answer(cb, sizeof(cb), &t->b);
        if (t->a.proven && t->b.proven && t->a.proven == t->b.proven)
            snprintf(ch, sizeof(ch), "same");
        else if (t->a.proven && t->b.proven)
            snprintf(ch, sizeof(ch), "%+.1f %%",
                     ((double)t->b.proven - (double)t->a.proven) / (double)t->a.proven * 100);
        fprintf(f, "| %s | %s | %s | %s | %s |\n", t->runtime, t->route, ca, cb, ch);
    }
}

static void md_points(FILE *f, const struct kb_cmp *c)
{
    fprintf(f, "\n## Points in both runs\n\n"
               "Medians over repeats with their min-max range; p99 is corrected latency.\n\n"
               "| point | verdict A -> B | achieved A | achieved B | change | achieved | "
               "p99 A | p99 B | change | p99 |\n|---|---|---|---|---|---|---|---|---|---|\n");
    for (size_t i = 0; i < c->npoints; i++) {
        const struct kb_cmp_point *p = &c->points[i];
        char aa[128], ab[128], pa[128], pb[128], ca[32], cp[32], v[40];
        fmt_stat(aa, sizeof(aa), &p->achieved.a, 0);
        fmt_stat(ab, sizeof(ab), &p->achieved.b, 0);
        fmt_stat(pa, sizeof(pa), &p->p99.a, 1);
        fmt_stat(pb, sizeof(pb), &p->p99.b, 1);
        fmt_pct(ca, sizeof(ca), &p->achieved);
        fmt_pct(cp, sizeof(cp), &p->p99);
        if (strcmp(p->verdict_a, p->verdict_b))
            snprintf(v, sizeof(v), "%s -> %s", p->verdict_a, p->verdict_b);
        else
            snprintf(v, sizeof(v), "%s", p->verdict_a);
        fprintf(f, "| %s | %s | %s | %s | %s | %s | %s | %s | %s | %s |\n", p->id, v, aa, ab, ca,
                kb_cmp_call_words(p->achieved.call), pa, pb, cp, kb_cmp_call_words(p->p99.call));
    }
    if (c->npoints == 0)
        fprintf(f, "\nNo point has evidence in both runs.\n");
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
    fprintf(f, "- a change is beyond noise when the runs' min-max ranges over their repeats do "
               "not overlap and it is at least %g %% of A's median; a run with one repeat has no "
               "spread, so its changes are unjudged; a p99 that is only a lower bound is judged "
               "only where the bound cannot hide the direction.\n", c->floor_pct);
}

int kb_cmp_write_md(FILE *f, const struct kb_cmp *c, const struct kb_report *a,
                    const struct kb_report *b, const char *name_a, const char *name_b)
{
    fprintf(f, "# kneebench compare\n\n");
    md_runs(f, a, b, name_a, name_b);
    fprintf(f, "\n## What moved (B against A)\n\n");
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

/* med,min,max,is_bound of a figure; empty fields when the run has none. */
static void csv_stat(FILE *f, const struct kb_stat *s)
{
    if (s->n < 1)
        fprintf(f, ",,,,");
    else
        fprintf(f, ",%.3f,%.3f,%.3f,%d", s->med, s->min, s->max, s->bound);
}

static void csv_change(FILE *f, const struct kb_cmp_change *ch)
{
    csv_stat(f, &ch->a);
    csv_stat(f, &ch->b);
    if (ch->a.n < 1 || ch->b.n < 1 || ch->a.med == 0)
        fprintf(f, ",");
    else
        fprintf(f, ",%.3f", ch->pct);
    fprintf(f, ",%s", kb_cmp_call_name(ch->call));
}

/* A highest-point row: the answer's rate (empty when none) and whether it is a bound. */
static void csv_answer(FILE *f, const struct kb_report_answer *a)
{
    if (a->proven)
        fprintf(f, ",%ld,%d", a->proven, a->client_from != 0);
    else
        fprintf(f, ",,");
}

int kb_cmp_write_csv(FILE *f, const struct kb_cmp *c)
{
    static const char *const fig[] = { "achieved", "p99" };
    static const char *const unit[] = { "rps", "us" };
    fprintf(f, "kind,runtime,route,rate_rps,point_id,verdict_a,verdict_b,highest_a_rps,"
               "highest_a_is_bound,highest_b_rps,highest_b_is_bound");
    for (int k = 0; k < 2; k++) {
        for (int r = 0; r < 2; r++)
            fprintf(f, ",%s_%c_%s,%s_%c_min_%s,%s_%c_max_%s,%s_%c_is_bound", fig[k], 'a' + r,
                    unit[k], fig[k], 'a' + r, unit[k], fig[k], 'a' + r, unit[k], fig[k], 'a' + r);
        fprintf(f, ",%s_change_pct,%s_call", fig[k], fig[k]);
    }
    fprintf(f, "\n");
    for (size_t i = 0; i < c->ntops; i++) {
        fprintf(f, "highest,%s,%s,,,,", c->tops[i].runtime, c->tops[i].route);
        csv_answer(f, &c->tops[i].a);
        csv_answer(f, &c->tops[i].b);
        fprintf(f, ",,,,,,,,,,,,,,,,,,,,\n");
    }
    for (size_t i = 0; i < c->npoints; i++) {
        const struct kb_cmp_point *p = &c->points[i];
        fprintf(f, "point,%s,%s,%ld,%s,%s,%s,,,,", p->runtime, p->route, p->rate, p->id,
                p->verdict_a, p->verdict_b);
        csv_change(f, &p->achieved);
        csv_change(f, &p->p99);
        fprintf(f, "\n");
    }
    return fflush(f) || ferror(f) ? -1 : 0;
}
