/* report_md.c -- report.md: stamps, highest controlled points and ratios, every curve,
 * charts, identity. Built in memory, written atomically. */
#define _GNU_SOURCE
#include "runner/report.h"
#include "runner/calibrate.h"
#include "runner/evidence.h"

#include <stdlib.h>
#include <string.h>

static const char *js(json_t *o, const char *k)
{
    const char *s = json_string_value(json_object_get(o, k));
    return s ? s : "?";
}

/* "1.23" or, with repeats, "1.23 (1.10-1.40)". */
static const char *fmt_stat(char *buf, size_t len, struct kb_stat s, int n, const char *f)
{
    char a[32], b[32], c[32];
    snprintf(a, sizeof(a), f, s.med);
    if (n <= 1)
        return snprintf(buf, len, "%s", a), buf;
    snprintf(b, sizeof(b), f, s.min);
    snprintf(c, sizeof(c), f, s.max);
    snprintf(buf, len, "%s (%s-%s)", a, b, c);
    return buf;
}

static void stamps(FILE *f, const struct kb_report *r)
{
    if (r->partial) {
        fprintf(f, "> **PARTIAL REPORT**: %zu of %zu planned points have no complete evidence "
                "and are left out:", r->nmissing,
                json_array_size(json_object_get(r->plan, "points")));
        for (size_t i = 0; i < r->nmissing; i++)
            fprintf(f, " `%s`", r->missing[i]);
        fprintf(f, "\n\n");
    }
    /* a docker run on another base than the pinned one is not the paper's setup: say so */
    if (json_is_false(json_object_get(json_object_get(r->run, "image"), "base_is_pinned")))
        fprintf(f, "> **BASE NOT PINNED**: %s\n\n",
                js(json_object_get(r->run, "image"), "note"));
    if (r->unconstrained)
        fprintf(f, "> **UNCONSTRAINED**: this run used `--no-limits`; no CPU, memory or process "
                "limit was applied, so no point is comparable with the paper's.\n\n");
}

static void run_summary(FILE *f, const struct kb_report *r)
{
    json_t *p = r->plan;
    fprintf(f, "Started %s. Profile `%s`: %g s warmup, %g s measured, %g s drain per point; "
            "%lld threads, %lld connections; %d repeat(s)%s. Sandbox `%s`, server CPUs %s, "
            "client CPUs %s. Controlled = delivery >= %.0f %% and corrected p99 < %g ms.\n\n",
            js(r->run, "started"), js(p, "profile"),
            json_number_value(json_object_get(p, "warmup_s")),
            json_number_value(json_object_get(p, "duration_s")),
            json_number_value(json_object_get(p, "drain_s")),
            json_integer_value(json_object_get(p, "threads")),
            json_integer_value(json_object_get(p, "connections")), r->repeats,
            r->repeats > 1 ? " (runtime order rotated; medians with min-max ranges)" : "",
            js(p, "backend"), js(p, "server_cpus"), js(p, "client_cpus"),
            100 * r->min_delivery, r->max_p99_ms);
}

/* The knee is located only when the next planned point above the highest controlled one
 * ran and was uncontrolled or failed. When that next point was client-limited, the server
 * was never shown to stop: return its rate (0 otherwise), so the table can say the highest
 * controlled point is a lower bound set by the client, not the server's knee. */
static long client_bound(const struct kb_report *r, const char *rt, const char *route, long h)
{
    for (size_t k = 0; k < kb_report_nrates(r); k++) {
        long rate = kb_report_rate(r, k);
        const struct kb_report_row *w = kb_report_row(r, rt, route, rate);
        if (rate <= h || !w || !w->planned || w->n == 0)
            continue;
        return strcmp(w->verdict, "client-limited") == 0 ? rate : 0;
    }
    return 0;
}

static void highest_table(FILE *f, const struct kb_report *r)
{
    int bounded = 0;
    size_t nro = kb_report_nroutes(r);
    fprintf(f, "## Highest controlled point (req/s)\n\n| runtime |");
    for (size_t j = 0; j < nro; j++)
        fprintf(f, " %s |", kb_report_route(r, j));
    for (size_t j = 0; j < nro; j++)
        fprintf(f, " %s vs gray-static |", kb_report_route(r, j));
    fprintf(f, "\n|---|");
    for (size_t j = 0; j < 2 * nro; j++)
        fprintf(f, "---:|");
    fprintf(f, "\n");
    for (size_t i = 0; i < kb_report_nruntimes(r); i++) {
        const char *rt = kb_report_runtime(r, i);
        fprintf(f, "| %s |", rt);
        for (size_t j = 0; j < nro; j++) {
            long h = kb_report_highest(r, rt, kb_report_route(r, j));
            const struct kb_report_row *w = kb_report_row(r, rt, kb_report_route(r, j),
                                                          kb_report_rate(r, 0));
            long b = w && w->planned ? client_bound(r, rt, kb_report_route(r, j), h) : 0;
            if (h && b)
                fprintf(f, " >= %ld (client-limited from %ld) |", h, b);
            else if (b)
                fprintf(f, " none (client-limited from %ld) |", b);
            else
                h ? fprintf(f, " %ld |", h) : fprintf(f, w && !w->planned ? " n/a |" : " none |");
            bounded |= b != 0;
        }
        for (size_t j = 0; j < nro; j++) {
            const char *ro = kb_report_route(r, j);
            long h = kb_report_highest(r, rt, ro);
            long g = kb_report_highest(r, "gray-static", ro);
            int star = strcmp(rt, "gray-static") && (client_bound(r, rt, ro, h) ||
                                                    client_bound(r, "gray-static", ro, g));
            g && h ? fprintf(f, " %.2f%s |", (double)h / (double)g, star ? "*" : "")
                   : fprintf(f, " - |");
        }
        fprintf(f, "\n");
    }
    fprintf(f, "\nA point counts only when controlled; failed and client-limited points never do. "
            "Ratios are to gray-static's highest controlled point on the same route, measured "
            "in this run (\"-\" when either has none or gray-static was not run).\n\n");
    if (bounded)
        fprintf(f, "**Knees not located.** Where a cell reads \">= N (client-limited from M)\", "
                "the point above N was client-limited: the load generator, not the server, was "
                "the limit there, so N is only a lower bound on that runtime's highest "
                "controlled point, and a ratio marked * compares at least one such bound. A "
                "client with more CPUs (or a remote client, `--backend remote`) can locate it.\n\n");
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

/* The plan's rates the margin covers, or not (cover = 1 or 0), and how many points at the
 * uncovered rates the evidence marks client-limited. */
static void coverage(FILE *f, const struct kb_report *r)
{
    const struct kb_calibrate_result *c = r->cal;
    int any = 0, limited = 0, points = 0;
    fprintf(f, "The margin covers a point requested at rate R when R x %.2f <= %.0f req/s, so "
            "up to %.0f req/s. Covered:", c->factor, c->margin_rps, c->margin_rps / c->factor);
    for (size_t k = 0; k < kb_report_nrates(r); k++)
        if (kb_report_covers(r, kb_report_rate(r, k)) == 1)
            fprintf(f, "%s %ld", any++ ? "," : "", kb_report_rate(r, k));
    fprintf(f, "%s. Not covered:", any ? " req/s" : " none");
    any = 0;
    for (size_t k = 0; k < kb_report_nrates(r); k++)
        if (kb_report_covers(r, kb_report_rate(r, k)) == 0)
            fprintf(f, "%s %ld", any++ ? "," : "", kb_report_rate(r, k));
    for (size_t i = 0; i < r->nrows; i++)
        if (r->rows[i].n && kb_report_covers(r, r->rows[i].rate) == 0) {
            points++;
            limited += !strcmp(r->rows[i].verdict, "client-limited");
        }
    if (!any)
        fprintf(f, " none: every point is inside the proven margin.\n\n");
    else
        fprintf(f, " req/s%s: %d of %d runtime x route row(s) there are marked "
                "client-limited.\n\n", forced(r) ? " (the curve ran with --force)" : "", limited,
                points);
}

static void margin_steps(FILE *f, const struct kb_report *r)
{
    fprintf(f, "| step | requested/s | achieved/s | delivery | client CPU | send-lag p99 us | "
            "corrected p99 ms | errors | held | why | earlier attempts missed |\n"
            "|---:|---:|---:|---:|---:|---:|---:|---:|---|---|---|\n");
    for (size_t i = 0; i < r->cal->nsteps; i++) {
        const struct kb_calibrate_step *s = &r->cal->steps[i];
        fprintf(f, "| %zu | %.0f | %.0f | %.1f %% | %.0f %% | %.0f | %.2f | %lld | %s | %s | %s |\n",
                i + 1, s->rate, s->achieved_rps, 100 * s->delivery, 100 * s->cpu_fraction,
                s->lag_p99_us, s->corrected_p99_us / 1000, s->errors, s->held ? "yes" : "no",
                s->why, s->missed_before);
    }
    fprintf(f, "\n");
}

/* Seed 004's headroom gate: the margin the client proved against the control server. */
static void client_margin(FILE *f, const struct kb_report *r)
{
    json_t *j = r->cal_json, *cr = json_object_get(j, "criteria");
    long long quantum = (long long)json_integer_value(json_object_get(j, "send_quantum_us"));
    fprintf(f, "## Client margin\n\n");
    if (!r->cal) {
        fprintf(f, "> **NO CALIBRATION PROOF**: this run has no calibration proof (%s). The "
                "client's margin was not measured, so no point is proven free of client "
                "limits beyond its own CPU and send-lag checks. `kneebench curve --calibrate` "
                "proves it.\n\n", r->cal_note);
        return;
    }
    fprintf(f, "Calibrated against the control server (route `%s`, client CPUs %s, server CPUs "
            "%s, %g s per step): a step holds when client CPU < %.0f %%, send-lag p99 < %g us, "
            "delivery >= %.1f %% and no errors.\n\n- proven margin: **%.0f req/s** (the highest "
            "rate held with every lower step held)\n- required: %.0f req/s (%.2f x the curve's "
            "top rate %.0f req/s)\n- proven: **%s**\n\n", js(j, "route"), js(j, "client_cpus"),
            js(j, "server_cpus"), json_number_value(json_object_get(j, "duration_s")),
            100 * json_number_value(json_object_get(cr, "client_cpu_max_fraction")),
            json_number_value(json_object_get(cr, "lag_p99_max_us")),
            100 * json_number_value(json_object_get(cr, "min_delivery")), r->cal->margin_rps,
            r->cal->required_rps, r->cal->factor, r->cal->up_to_rps, r->cal->proven ? "yes" : "no");
    if (quantum > 0)
        fprintf(f, "The client grouped sends less than %lld us apart on a %lld us grid, in the "
                "calibration as in the curve (`kneebench load --send-quantum-us`); the wait is "
                "in the send lag above.\n\n", quantum, quantum);
    margin_steps(f, r);
    coverage(f, r);
    fprintf(f, "Steps: calibrate/calibrate.json and calibrate/step-NN.json (step-NN-A.json: "
            "attempt A+1 of a step tried again).\n\n");
}

/* Per runtime, the latency-over-time chart of its first uncontrolled point on route. */
static void series_links(FILE *f, const struct kb_report *r, const char *route)
{
    fprintf(f, "Latency over time at each runtime's first uncontrolled point (corrected p50, "
            "p99, max per second):\n\n");
    for (size_t i = 0; i < kb_report_nruntimes(r); i++) {
        const char *rt = kb_report_runtime(r, i);
        const struct kb_report_series *s = kb_report_series_of(r, rt, route);
        double p99_first = 0, p99_last = 0;
        if (!s) {
            fprintf(f, "- %s: no uncontrolled point on %s\n", rt, route);
            continue;
        }
        if (!s->n) {
            fprintf(f, "- %s at %ld req/s (`%s`): no chart, %s\n", rt, s->rate, s->point, s->note);
            continue;
        }
        p99_first = s->v[0].p99_ms;
        p99_last = s->v[s->n - 1].p99_ms;
        fprintf(f, "- %s at %ld req/s (`%s`%s): p99 %.2f ms in the first second, %.2f ms in the "
                "last (%zu s)\n\n  ![%s at %ld req/s: corrected latency per second, %s]"
                "(charts/series-%s-%s.svg)\n\n", rt, s->rate, s->point,
                s->past_margin ? "; client-limited above the proven margin, its own delivery or "
                                 "p99 past the criteria" : "", p99_first, p99_last, s->n,
                rt, s->rate, route, rt, route);
    }
    fprintf(f, "\n");
}

static void curve_table(FILE *f, const struct kb_report *r, const char *route)
{
    char a[128], b[128], c[128], d[128], e[128], g[128], h[128];
    fprintf(f, "### %s\n\n| runtime | requested/s | achieved/s | delivery | p50 ms | p90 ms | "
            "p99 ms | p99.9 ms | max ms | errors | non-2xx | mismatches | client CPU | "
            "verdict | why |\n|---|---:|---:|---:|---:|---:|---:|---:|---:|---:|---:|---:|---:|---|---|\n",
            route);
    for (size_t i = 0; i < kb_report_nruntimes(r); i++)
        for (size_t k = 0; k < kb_report_nrates(r); k++) {
            const struct kb_report_row *w =
                kb_report_row(r, kb_report_runtime(r, i), route, kb_report_rate(r, k));
            if (w && !w->planned)
                continue;
            if (!w || w->n == 0) {
                fprintf(f, "| %s | %ld | | | | | | | | | | | | missing | no complete evidence |\n",
                        kb_report_runtime(r, i), kb_report_rate(r, k));
                continue;
            }
            fprintf(f, "| %s | %ld | %s | %s | %s | %s | %s | %s | %s | %lld | %lld | %lld | "
                    "%.0f %% | %s | %s |\n", w->runtime, w->rate,
                    fmt_stat(a, sizeof(a), w->achieved, w->n, "%.0f"),
                    fmt_stat(b, sizeof(b), (struct kb_stat){ 100 * w->delivery.med,
                             100 * w->delivery.min, 100 * w->delivery.max }, w->n, "%.1f %%"),
                    fmt_stat(c, sizeof(c), w->p50, w->n, "%.2f"),
                    fmt_stat(d, sizeof(d), w->p90, w->n, "%.2f"),
                    fmt_stat(e, sizeof(e), w->p99, w->n, "%.2f"),
                    fmt_stat(g, sizeof(g), w->p999, w->n, "%.2f"),
                    fmt_stat(h, sizeof(h), w->max, w->n, "%.2f"), w->errors, w->non2xx,
                    w->mismatches, 100 * w->client_cpu_max, w->verdict, w->reason);
        }
    fprintf(f, "\n![achieved vs requested, %s](charts/achieved-%s.svg)\n"
            "![corrected p99 vs requested, %s](charts/p99-%s.svg)\n\n", route, route, route, route);
    series_links(f, r, route);
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
        fprintf(f, "| %s | %s | v%lld | %.2f (%lld/%lld) | %s | %lld | %lld | %lld | `%.16s...` | %s |\n",
                rt, js(l, "backend"), json_integer_value(json_object_get(l, "cgroup_version")),
                json_number_value(json_object_get(l, "cpus")),
                json_integer_value(json_object_get(l, "cpu_quota_us")),
                json_integer_value(json_object_get(l, "cpu_period_us")), js(l, "cpuset"),
                json_integer_value(json_object_get(l, "memory_bytes")),
                json_integer_value(json_object_get(l, "memsw_bytes")),
                json_integer_value(json_object_get(l, "pids_max")),
                json_string_value(json_object_get(fx, "identity_sha256"))
                    ? json_string_value(json_object_get(fx, "identity_sha256")) : "none",
                !p ? "not run" : json_is_true(json_object_get(p, "failed")) ? js(p, "reason") : "ok");
    }
    fprintf(f, "\n(-1 = no limit. Identity covers %s; full lists in "
            "fixtures/<runtime>/identity.json, rechecked after every point.)\n\n",
            json_object_get(r->run, "image") ? "the image ID and the contract's command"
                                             : "the fixture's executables and every source file");
}

/* The docker backend's image: what ran, and on which base. */
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

static void identity(FILE *f, const struct kb_report *r)
{
    json_t *h = json_object_get(r->run, "host"), *v = json_object_get(r->run, "runtime_versions"),
           *val;
    const char *k;
    fprintf(f, "## Identity\n\n- host: %s, kernel `%s`, CPU `%s`, %lld CPUs online\n"
            "- libmicrohttpd %s\n- runner SHA-256 `%s`\n- contract `%s` SHA-256 `%s`\n",
            js(h, "hostname"), js(h, "kernel"), js(h, "cpu_model"),
            json_integer_value(json_object_get(h, "online_cpus")), js(h, "libmicrohttpd"),
            js(r->run, "runner_sha256"), js(r->run, "contract"), js(r->run, "contract_sha256"));
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
    FILE *f = open_memstream(&buf, &len);
    int rc;
    fprintf(f, "# kneebench: %zu-point comparison\n\n", json_array_size(json_object_get(r->plan, "points")));
    stamps(f, r);
    run_summary(f, r);
    highest_table(f, r);
    client_margin(f, r);
    fprintf(f, "## Curves\n\n");
    for (size_t j = 0; j < kb_report_nroutes(r); j++)
        curve_table(f, r, kb_report_route(r, j));
    identity(f, r);
    fprintf(f, "Generated by `kneebench report` from the evidence in this directory only "
            "(points/<id>/verdict.json and load.json, .hgrm, samples.csv, series.csv; "
            "calibrate/calibrate.json).\n");
    fclose(f);
    rc = kb_write_atomic(kb_path(path, sizeof(path), dir, "report.md"), buf, len, err, errlen);
    free(buf);
    return rc;
}
