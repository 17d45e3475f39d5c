/* report.c -- the report model: evidence in, aggregated rows out. Reads files only. */
#define _POSIX_C_SOURCE 200809L
#include "runner/report/report.h"
#include "runner/util/evidence.h"
#include "runner/util/jfield.h"
#include "runner/report/report_int.h"
#include "runner/util/paths.h"
#include "fixtures/contract.h"
#include "runner/run/hostclock.h"
#include "runner/run/judgement.h"
#include "runner/util/root.h"
#include "runner/util/schema.h"
#include "runner/util/digest.h"
#include "runner/util/xalloc.h"

#include <errno.h>
#include <math.h>
#include <stdlib.h>
#include <string.h>

static int cmp_double(const void *a, const void *b)
{
    double x = *(const double *)a, y = *(const double *)b;
    return (x > y) - (x < y);
}

#define MAX_REPEATS 64

/* The values one figure took over a row's repeats: only the repeats that had it. */
struct fig {
    double v[MAX_REPEATS];       /* in the order added */
    int is_bound[MAX_REPEATS];   /* v[i] is only a lower bound */
    int n, bound;
};

static void fig_add(struct fig *f, double v, int bound)
{
    if (f->n >= MAX_REPEATS)
        return;
    f->is_bound[f->n] = bound;
    f->v[f->n++] = v;
    f->bound |= bound;
}

/* Median (mean of the middle two for an even count), min, max of the values present; f
 * keeps its order (is_bound stays beside its value). */
static struct kb_stat stat_of(const struct fig *f)
{
    struct kb_stat s = { .n = f->n, .bound = f->bound };
    double v[MAX_REPEATS];
    if (f->n <= 0)
        return s;
    memcpy(v, f->v, (size_t)f->n * sizeof(double));
    qsort(v, (size_t)f->n, sizeof(double), cmp_double);
    s.min = v[0];
    s.max = v[f->n - 1];
    s.med = f->n % 2 ? v[f->n / 2] : (v[f->n / 2 - 1] + v[f->n / 2]) / 2;
    return s;
}

/* One latency figure of a load.json histogram, when the histogram has it (an empty one
 * writes null). *bound from is_bound. */
static int lat_fig(json_t *h, const char *k, double *us, int *bound)
{
    if (!kb_jnum_opt(h, k, NULL, us))
        return 0;
    *bound = json_is_true(json_object_get(json_object_get(h, "is_bound"), k));
    return 1;
}

size_t kb_report_nruntimes(const struct kb_report *r)
{
    return json_array_size(json_object_get(r->plan, "runtimes"));
}
const char *kb_report_runtime(const struct kb_report *r, size_t i)
{
    return json_string_value(json_array_get(json_object_get(r->plan, "runtimes"), i));
}
size_t kb_report_nroutes(const struct kb_report *r)
{
    return json_array_size(json_object_get(r->plan, "routes"));
}
const char *kb_report_route(const struct kb_report *r, size_t i)
{
    return json_string_value(json_array_get(json_object_get(r->plan, "routes"), i));
}
size_t kb_report_nrates(const struct kb_report *r)
{
    return json_array_size(json_object_get(r->plan, "rates"));
}
long kb_report_rate(const struct kb_report *r, size_t i)
{
    return (long)json_integer_value(json_array_get(json_object_get(r->plan, "rates"), i));
}

json_t *kb_report_evidence(struct kb_report *r, const char *path)
{
    json_error_t je;
    json_t *j = kb_evidence_load(path, &je);
    char err[sizeof(r->schema_err)];
    /* a file there but no evidence (a FIFO, a giant, not JSON) refuses the run as a newer
     * schema does: never read as if it were absent */
    if (!j && errno != ENOENT) {
        if (!r->schema_err[0])
            snprintf(r->schema_err, sizeof(r->schema_err), "%.300s is unreadable: %s", path,
                     je.text);
        return NULL;
    }
    if (j && kb_schema_version(j, path, KB_SCHEMA_EVIDENCE, err, sizeof(err)) < 0) {
        if (!r->schema_err[0])
            snprintf(r->schema_err, sizeof(r->schema_err), "%s", err);
        json_decref(j);
        return NULL;
    }
    return j;
}

/* The evidence of one complete point, or NULL when its marker is missing; re-derived from
 * the raw files when the load asks for it. */
static json_t *load_point(struct kb_report *r, const char *dir, const char *id, long rate)
{
    char path[KB_PATH_MAX], pdir[KB_PATH_MAX], bad[sizeof(r->schema_err)];
    json_t *v;
    snprintf(pdir, sizeof(pdir), "%s/points/%s", dir, id);
    if (!kb_file_exists(kb_path(path, sizeof(path), pdir, "DONE")))
        return NULL;
    v = kb_report_evidence(r, kb_path(path, sizeof(path), pdir, "verdict.json"));
    /* figures no measurement gives (delivery inf, a negative p99 or count) refuse the run */
    if (v && kb_evidence_check_load(json_object_get(v, "load"), path, bad, sizeof(bad)) < 0) {
        if (!r->schema_err[0])
            snprintf(r->schema_err, sizeof(r->schema_err), "%s", bad);
        json_decref(v);
        return NULL;
    }
    r->margin_gated += v && kb_judgement_margin(v) == KB_MARGIN_GATES;
    if (v && r->rd)
        kb_report_rederive_point(r, dir, id, rate, v);
    return v;
}

enum { F_ACH, F_DEL, F_P50, F_P90, F_P99, F_P999, F_MAX, F_SRV, F_CPU_S, F_CPU_US, F_FLOOR,
       F_N };

struct acc {
    struct fig f[F_N];
    struct fig tdel, tp99;       /* delivery and corrected p99 of the trusted samples alone */
    char trusted_reason[512];    /* the latest trusted sample's reason */
    int n, reason_locked, server_reason_locked;
    int verdicts[4], server[4], server_unknown;   /* counts by enum index, see vindex() */
    int all_controlled_own, trust_seen;
};

/* controlled 0, uncontrolled 1, failed 2, client-limited 3; -1 for anything else. */
static int vindex(const char *v)
{
    static const char *const names[] = { "controlled", "uncontrolled", "failed", "client-limited" };
    for (int i = 0; v && i < 4; i++)
        if (!strcmp(v, names[i]))
            return i;
    return -1;
}

/* The verdict the point's own figures give (verdict.json's server_verdict, which every
 * version of it carries). NULL: unknown. */
static const char *server_verdict_of(json_t *v, const char **reason)
{
    *reason = json_string_value(json_object_get(v, "server_reason"));
    return json_string_value(json_object_get(v, "server_verdict"));
}

static void add_latency(struct acc *a, json_t *h)
{
    static const char *const keys[] = { "p50", "p90", "p99", "p999", "max" };
    double us;
    int bound;
    for (int k = 0; k < 5; k++)
        if (lat_fig(h, keys[k], &us, &bound))
            fig_add(&a->f[F_P50 + k], us, bound);
}

/* The client's side of a repeat: CPU, send lag, receive delay and threads. */
static void add_client(struct kb_report_row *row, json_t *load)
{
    double x;
    int b, th = (int)kb_jnum(load, "threads", NULL);
    if (kb_jnum(load, "client_cpu_fraction", NULL) > row->client_cpu_max)
        row->client_cpu_max = kb_jnum(load, "client_cpu_fraction", NULL);
    if (lat_fig(json_object_get(load, "lag_us"), "p99", &x, &b) && x > row->lag_p99_max_us)
        row->lag_p99_max_us = x;
    if (lat_fig(json_object_get(load, "rx_delay_us"), "p99", &x, &b) && x > row->rx_p99_max_us)
        row->rx_p99_max_us = x;
    if (th > 0) {
        row->threads_min = row->threads_min && row->threads_min < th ? row->threads_min : th;
        row->threads_max = row->threads_max > th ? row->threads_max : th;
    }
    if ((int)kb_jnum(load, "client_cpus", NULL) > row->client_cpus)
        row->client_cpus = (int)kb_jnum(load, "client_cpus", NULL);
    if (kb_jnum(load, "threads_requested", NULL) > 0)
        row->threads_requested = (int)kb_jnum(load, "threads_requested", NULL);
}

/* Lower bounds: how many requests, and the smallest bound. */
static void add_bounds(struct kb_report_row *row, json_t *corrected)
{
    double from;
    row->bounded += (long long)kb_jnum(corrected, "bounded", NULL);
    if (kb_jnum_opt(corrected, "bound_from_us", NULL, &from) &&
        (row->bound_from_us < 0 || from < row->bound_from_us))
        row->bound_from_us = from;
}

/* The host's theft from both roles, the largest over the repeats. */
static void add_host(struct kb_report_row *row, json_t *host)
{
    double x;
    if (kb_jnum_opt(json_object_get(host, "server_cpus"), "steal_max_fraction", NULL, &x) &&
        x > row->steal_server_max)
        row->steal_server_max = x;
    if (kb_jnum_opt(json_object_get(host, "client_cpus"), "steal_max_fraction", NULL, &x) &&
        x > row->steal_client_max)
        row->steal_client_max = x;
    row->host_could_decide |= json_is_true(json_object_get(host, "could_decide"));
}

static void add_server(struct kb_report_row *row, struct acc *a, json_t *v)
{
    const char *sreason, *sv = server_verdict_of(v, &sreason);
    json_t *srv = json_object_get(v, "server"), *trust = json_object_get(v, "client_trust");
    double x;
    fig_add(&a->f[F_SRV], kb_jnum(srv, "cpu_mean_fraction", NULL), 0);
    if (kb_jnum_opt(srv, "cpu_interval_s", NULL, &x))
        fig_add(&a->f[F_CPU_S], x, 0);
    if (kb_jnum_opt(srv, "cpu_us_per_response", NULL, &x) && x > 0)
        fig_add(&a->f[F_CPU_US], x, 0);
    if ((long long)kb_jnum(srv, "rss_max_bytes", NULL) > row->rss_max)
        row->rss_max = (long long)kb_jnum(srv, "rss_max_bytes", NULL);
    if (kb_jnum_opt(srv, "pss_max_bytes", NULL, &x) && (long long)x > row->pss_max)
        row->pss_max = (long long)x;
    if (vindex(sv) >= 0 && vindex(sv) != 3)
        a->server[vindex(sv)]++;
    else
        a->server_unknown++;
    /* the first failed or uncontrolled server reason; otherwise the latest */
    if (!a->server_reason_locked)
        snprintf(row->server_reason, sizeof(row->server_reason), "%s", sreason ? sreason : "");
    a->server_reason_locked = a->server[1] || a->server[2];
    if (json_is_object(trust)) {
        a->trust_seen++;
        if (!json_is_true(json_object_get(trust, "ok")) && row->trust_ok) {
            row->trust_ok = 0;
            snprintf(row->trust_reason, sizeof(row->trust_reason), "%s",
                     json_string_value(json_object_get(trust, "reason"))
                         ? json_string_value(json_object_get(trust, "reason")) : "");
        }
    }
}

/* The error kinds apart, summed over the repeats: socket errors, timeouts the load's own
 * --timeout-ms gave up on, and requests only still unanswered when the drain ended (an
 * overloaded server's queue, judged apart: docs/protocol.md, "Point verdicts"). */
static void add_error_kinds(struct kb_report_row *row, json_t *load)
{
    json_t *e = json_object_get(load, "errors");
    long long unfinished = (long long)kb_jnum(load, "unfinished_at_drain_end", NULL);
    row->err_io += (long long)(kb_jnum(e, "connect", NULL) + kb_jnum(e, "read", NULL) +
                               kb_jnum(e, "write", NULL) + kb_jnum(e, "peer_close", NULL) +
                               kb_jnum(e, "malformed", NULL));
    row->err_timeout += (long long)kb_jnum(e, "timeout", NULL) - unfinished;
    row->unanswered += unfinished;
    row->completed += (long long)kb_jnum(load, "completed", NULL);
}

/* A trusted sample's delivery and corrected p99, for judging its row whatever its
 * client-limited samples showed (client_could_decide). */
static void trusted_figures(struct acc *a, json_t *load)
{
    double us;
    int bound;
    fig_add(&a->tdel, kb_jnum(load, "delivery", NULL), 0);
    if (lat_fig(json_object_get(load, "corrected_us"), "p99", &us, &bound))
        fig_add(&a->tp99, us, bound);
}

static void accumulate(struct kb_report_row *row, struct acc *a, json_t *v)
{
    json_t *load = json_object_get(v, "load");
    const char *verdict = json_string_value(json_object_get(v, "verdict"));
    const char *reason = json_string_value(json_object_get(v, "reason"));
    int vi = vindex(verdict);
    a->n++;
    fig_add(&a->f[F_ACH], kb_jnum(load, "achieved_rps", NULL), 0);
    fig_add(&a->f[F_DEL], kb_jnum(load, "delivery", NULL), 0);
    add_latency(a, json_object_get(load, "corrected_us"));
    add_bounds(row, json_object_get(load, "corrected_us"));
    add_client(row, load);
    add_server(row, a, v);
    add_host(row, json_object_get(v, "host"));
    row->queue_grew_n += json_is_true(json_object_get(json_object_get(v, "backlog"), "grew"));
    row->errors += (long long)kb_jnum(load, "errors", "total");
    add_error_kinds(row, load);
    row->non2xx += (long long)kb_jnum(load, "non2xx", NULL);
    row->mismatches += (long long)kb_jnum(load, "mismatches", "total");
    row->scheduled += (long long)kb_jnum(load, "scheduled", NULL);
    if (vi >= 0)
        a->verdicts[vi]++;
    if (vi != 3) {
        trusted_figures(a, load);
        snprintf(a->trusted_reason, sizeof(a->trusted_reason), "%s", reason ? reason : "");
    }
    /* keep the first failed or client-limited reason; otherwise the latest */
    if (!a->reason_locked)
        snprintf(row->reason, sizeof(row->reason), "%s", reason ? reason : "");
    a->reason_locked = a->verdicts[2] || a->verdicts[3];
}

/* Medians decide a row of repeats none of which failed. A p99 that is only a lower bound
 * could be anything above it, so the median is taken with every bounded sample's p99 at its
 * worst (unbounded): the row is under the limit only if that median is. (It once asked every
 * repeat to be controlled whenever any p99 was a bound, so one stalled sample in three --
 * requests unanswered at its drain end -- outvoted two that held.) */
static const char *by_medians(const struct kb_report *r, const struct kb_report_row *row,
                              const struct fig *p99)
{
    struct fig worst = *p99;
    int ok;
    for (int i = 0; i < worst.n; i++)
        if (worst.is_bound[i])
            worst.v[i] = INFINITY;
    ok = row->delivery.med >= r->min_delivery && p99->n > 0 &&
         stat_of(&worst).med < r->max_p99_us;
    return ok ? "controlled" : "uncontrolled";
}

/* The medians' verdict of a row's trusted samples with its k client-limited ones taken at
 * their best (all delivered, no latency: best 1) or their worst (nothing delivered, no
 * bound on latency: best 0). */
static const char *medians_with(const struct kb_report *r, const struct acc *a, int k, int best)
{
    struct fig del = a->tdel, p99 = a->tp99;
    struct kb_report_row row;
    for (int i = 0; i < k && del.n < MAX_REPEATS && p99.n < MAX_REPEATS; i++) {
        fig_add(&del, best ? 1.0 : 0.0, 0);
        fig_add(&p99, best ? 0.0 : INFINITY, 0);
    }
    memset(&row, 0, sizeof(row));
    row.delivery = stat_of(&del);
    return by_medians(r, &row, &p99);
}

/* The could-decide rule of a point (docs/protocol.md, "Trusting the client") applied to a
 * row of samples: its client-limited samples decide it only when, taken at their best and
 * at their worst, they give different verdicts. Then NULL; else the verdict they cannot
 * change: one stall of the client in one of three samples does not mark the row. */
static const char *client_could_decide(const struct kb_report *r, const struct acc *a)
{
    const char *best = medians_with(r, a, a->verdicts[3], 1);
    return strcmp(best, medians_with(r, a, a->verdicts[3], 0)) ? NULL : best;
}

/* Any failed repeat fails the row; then client-limited when its client-limited samples
 * could decide it; else medians decide. The server verdict is the same rule over the
 * repeats' own verdicts, unknown when one is. */
static void finish_row(struct kb_report *r, struct kb_report_row *row, struct acc *a)
{
    struct kb_stat *const dst[F_N] = { &row->achieved, &row->delivery, &row->p50, &row->p90,
                                       &row->p99, &row->p999, &row->max, NULL,
                                       &row->cpu_interval_s, &row->cpu_us_per_response,
                                       &row->floor_multiple };
    /* what the trusted samples decide whatever the client-limited ones were; NULL: they do not */
    const char *beyond_client = a->verdicts[3] ? client_could_decide(r, a) : NULL;
    row->n = a->n;
    row->controlled_n = a->verdicts[0];
    row->client_limited_n = a->verdicts[3];
    for (int k = 0; k < F_N; k++)
        if (dst[k])
            *dst[k] = stat_of(&a->f[k]);
    row->server_cpu_med = stat_of(&a->f[F_SRV]).med;
    row->trust_known = a->n > 0 && a->trust_seen == a->n;
    if (a->n == 0)
        snprintf(row->verdict, sizeof(row->verdict), "missing");
    else if (a->verdicts[2])
        snprintf(row->verdict, sizeof(row->verdict), "failed");
    else if (a->verdicts[3] && !beyond_client)
        snprintf(row->verdict, sizeof(row->verdict), "client-limited");
    else if (a->verdicts[3]) {
        snprintf(row->verdict, sizeof(row->verdict), "%s", beyond_client);
        snprintf(row->reason, sizeof(row->reason), "%.400s (%d of %d samples client-limited, "
                 "which cannot change this)", a->trusted_reason, a->verdicts[3], a->n);
    }
    else if (a->n == 1)
        snprintf(row->verdict, sizeof(row->verdict), "%s", a->verdicts[0] ? "controlled" : "uncontrolled");
    else
        snprintf(row->verdict, sizeof(row->verdict), "%s", by_medians(r, row, &a->f[F_P99]));
    if (a->n == 0 || (a->server_unknown && !a->server[2]))
        row->server_verdict[0] = '\0';
    else if (a->server[2])
        snprintf(row->server_verdict, sizeof(row->server_verdict), "failed");
    else if (a->n == 1)
        snprintf(row->server_verdict, sizeof(row->server_verdict), "%s",
                 a->server[0] ? "controlled" : "uncontrolled");
    else
        snprintf(row->server_verdict, sizeof(row->server_verdict), "%s",
                 by_medians(r, row, &a->f[F_P99]));
}

/* The point's CPU per response over the host's floor measured before it (interleaved). */
static void add_floor(const struct kb_report *r, struct acc *a, json_t *v)
{
    double us, floor = kb_report_floor_us(r, kb_jstr(json_object_get(v, "interleaved"),
                                                     "floor_sample", ""));
    if (floor > 0 && kb_jnum_opt(json_object_get(v, "server"), "cpu_us_per_response", NULL,
                                 &us) && us > 0)
        fig_add(&a->f[F_FLOOR], us / floor, 0);
}

static void add_missing(struct kb_report *r, const char *id)
{
    r->missing = kb_xrealloc(r->missing, (r->nmissing + 1) * sizeof(char *));
    r->missing[r->nmissing++] = kb_xstrdup(id);
}

/* A complete point's evidence v into row w (its acc). */
static void take(struct kb_report *r, struct kb_report_row *w, struct acc *acc, const char *id,
                 json_t *v)
{
    const char *sreason, *sv = server_verdict_of(v, &sreason);
    if (acc->n >= MAX_REPEATS)
        return;
    if (!w->first_id[0])
        snprintf(w->first_id, sizeof(w->first_id), "%s", id);
    if (!w->unc_id[0] && sv && !strcmp(sv, "uncontrolled"))
        snprintf(w->unc_id, sizeof(w->unc_id), "%s", id);
    json_array_append_new(w->point_ids, json_string(id));
    accumulate(w, acc, v);
    add_floor(r, acc, v);
}

/* One point of the plan or of the confirmation samples into its row; missing when it has
 * no complete evidence. */
static void add_point(struct kb_report *r, const char *dir, struct acc *acc, json_t *pt)
{
    const char *id = json_string_value(json_object_get(pt, "id"));
    long rate = (long)json_integer_value(json_object_get(pt, "rate"));
    json_t *v = id ? load_point(r, dir, id, rate) : NULL;
    const struct kb_report_row *row = kb_report_row(r,
        json_string_value(json_object_get(pt, "runtime")),
        json_string_value(json_object_get(pt, "route")), rate);
    if (row)
        r->rows[row - r->rows].planned = 1;
    if (!v || !row)
        add_missing(r, id ? id : "(a point without an id)");
    else
        take(r, &r->rows[row - r->rows], &acc[row - r->rows], id, v);
    json_decref(v);
}

static void row_init(struct kb_report_row *row, const char *rt, const char *route, long rate)
{
    snprintf(row->runtime, sizeof(row->runtime), "%s", rt);
    snprintf(row->route, sizeof(row->route), "%s", route);
    row->rate = rate;
    snprintf(row->id, sizeof(row->id), "%s-%s-%ld", row->runtime, row->route, row->rate);
    row->bound_from_us = row->lag_p99_max_us = row->rx_p99_max_us = -1;
    row->steal_server_max = row->steal_client_max = -1;
    row->trust_ok = 1;
    row->point_ids = json_array();
}

/* A located cell's held end: every refinement and hold sample at its rate (refine.h's
 * points/<runtime>-<route>-<rate>-f<k> and -h<k>). 1 when it had any. */
static int fine_row(struct kb_report *r, const char *dir, const json_t *cell,
                    struct kb_report_row *row)
{
    struct acc *acc = calloc(1, sizeof(*acc));
    const char *rt = json_string_value(json_object_get(cell, "runtime"));
    const char *route = json_string_value(json_object_get(cell, "route"));
    long lo = (long)json_integer_value(json_object_get(cell, "lo_rps"));
    char id[256];
    if (!acc || !kb_plain_name(rt) || !kb_plain_name(route) || lo <= 0) {
        free(acc);
        return 0;
    }
    row_init(row, rt, route, lo);
    for (int kind = 0; kind < 2; kind++)
        for (int k = 1; k <= 16; k++) {
            json_t *v;
            snprintf(id, sizeof(id), "%s-%s-%ld-%c%d", rt, route, lo, kind ? 'h' : 'f', k);
            if ((v = load_point(r, dir, id, lo)))
                take(r, row, acc, id, v);
            json_decref(v);
        }
    finish_row(r, row, acc);
    free(acc);
    row->planned = 1;
    if (row->n)
        return 1;
    json_decref(row->point_ids);
    return 0;
}

/* The located cells' held ends into r->fine. */
static void build_fine(struct kb_report *r, const char *dir)
{
    json_t *cells = json_object_get(r->refine, "cells"), *c;
    size_t i;
    r->fine = calloc(json_array_size(cells) + 1, sizeof(*r->fine));
    json_array_foreach(cells, i, c)
        if (r->fine && !strcmp(kb_jstr(c, "step", ""), "located") &&
            fine_row(r, dir, c, &r->fine[r->nfine]))
            r->nfine++;
}

static void build_rows(struct kb_report *r, const char *dir)
{
    json_t *pts = json_object_get(r->plan, "points"), *pt;
    size_t nrt = kb_report_nruntimes(r), nro = kb_report_nroutes(r), nra = kb_report_nrates(r), i;
    struct acc *acc = kb_xcalloc(nrt * nro * nra + 1, sizeof(*acc));
    r->rows = kb_xcalloc(nrt * nro * nra + 1, sizeof(*r->rows));
    for (size_t a = 0; a < nrt; a++)
        for (size_t b = 0; b < nro; b++)
            for (size_t c = 0; c < nra; c++)
                row_init(&r->rows[r->nrows++], kb_report_runtime(r, a), kb_report_route(r, b),
                         kb_report_rate(r, c));
    json_array_foreach(pts, i, pt)
        add_point(r, dir, acc, pt);
    /* the samples the curve added to confirm each cell's boundary (runner/report/report.h) */
    json_array_foreach(json_object_get(r->confirm, "points"), i, pt)
        add_point(r, dir, acc, pt);
    for (i = 0; i < r->nrows; i++)
        finish_row(r, &r->rows[i], &acc[i]);
    free(acc);
    build_fine(r, dir);
}

/* Per runtime: the limits read back, the identity digest and the preflight outcome. */
static void load_fixtures(struct kb_report *r, const char *dir)
{
    char fdir[KB_PATH_MAX], path[KB_PATH_MAX];
    r->fixtures = json_object();
    for (size_t i = 0; i < kb_report_nruntimes(r); i++) {
        const char *rt = kb_report_runtime(r, i);
        json_t *id, *f = json_object();
        snprintf(fdir, sizeof(fdir), r->repeats > 1 ? "%s/fixtures/%s-r1" : "%s/fixtures/%s", dir, rt);
        json_object_set_new(f, "limits", kb_report_evidence(r, kb_path(path, sizeof(path), fdir, "limits.json")));
        json_object_set_new(f, "preflight", kb_report_evidence(r, kb_path(path, sizeof(path), fdir, "preflight.json")));
        id = kb_report_evidence(r, kb_path(path, sizeof(path), fdir, "identity.json"));
        json_object_set(f, "identity_sha256", id ? json_object_get(id, "sha256") : json_null());
        json_decref(id);
        json_object_set_new(r->fixtures, rt, f);
    }
}

/* The contract the run ran under: its own copy, RUN/contract.json, checked against run.json's
 * contract_sha256 and set beside the checkout's; a run from before runs kept one has only
 * the checkout's. Into path the one to read (NULL: none); what a reader must know about it
 * into r->contract_note. */
static const char *choose_contract(struct kb_report *r, char *path, size_t len)
{
    const char *ran = kb_jstr(r->run, "contract_sha256", ""), *here = kb_root_contract();
    char copy[KB_SHA256_HEX] = "", now[KB_SHA256_HEX] = "", why[256];
    int kept = kb_file_exists(kb_path(path, len, r->dir, "contract.json"));
    if (kept && kb_sha256_file(path, copy, why, sizeof(why)) < 0)
        copy[0] = '\0';
    if (here && kb_sha256_file(here, now, why, sizeof(why)) < 0)
        now[0] = '\0';
    r->contract_kept = kept;
    if (kept && strcmp(copy, ran))
        snprintf(r->contract_note, sizeof(r->contract_note), "the run's copy of its contract "
                 "(contract.json, SHA-256 %.12s) is not the one run.json names (%.12s): it "
                 "was changed after the run; its figures are shown all the same", copy, ran);
    else if (kept && here && strcmp(now, copy))
        snprintf(r->contract_note, sizeof(r->contract_note), "the checkout's contract (%.300s, "
                 "SHA-256 %.12s) differs from the one this run ran under; this report reads "
                 "the run's own copy (contract.json, %.12s)", here, now, copy);
    else if (!kept)
        snprintf(r->contract_note, sizeof(r->contract_note), "this run kept no copy of its "
                 "contract (runs began keeping contract.json later): the papers' figures and "
                 "the runtimes' order are the checkout's contract's (%.300s)%s", here ? here
                 : "none found", here && strcmp(now, ran) ? ", which differs from the one it "
                 "ran under (run.json's contract_sha256)" : "");
    if (kept)
        return path;
    if (!here)
        snprintf(r->published_note, sizeof(r->published_note), "no contract: %s",
                 kb_root_error());
    return here;
}

/* A figure the paper states (>= 0) into o under key; one it does not is left out. */
static void set_stated(json_t *o, const char *key, double v)
{
    if (v >= 0)
        json_object_set_new(o, key, json_real(v));
}

/* published.points as report.json carries them: [{runtime, route, rate, section, and the
 * figures the paper states}]. */
static json_t *published_points(const struct kb_contract *c)
{
    json_t *a = json_array();
    for (size_t i = 0; a && i < c->npoints; i++) {
        const struct kb_published_fig *f = &c->points[i];
        json_t *o = json_pack("{s:s,s:s,s:I,s:s}", "runtime", f->runtime, "route", f->route,
                              "rate", (json_int_t)f->rate, "section", f->section);
        if (!o)
            continue;
        set_stated(o, "achieved_rps", f->achieved_rps);
        set_stated(o, "delivery", f->delivery);
        set_stated(o, "p50_us", f->p50_us);
        set_stated(o, "p99_us", f->p99_us);
        set_stated(o, "p999_us", f->p999_us);
        json_array_append_new(a, o);
    }
    return a;
}

/* The papers' figures from the run's contract (choose_contract), for orientation, and its
 * runtimes' order (the charts' colours): absent or unreadable, the report says so and goes
 * on. */
static void load_published(struct kb_report *r)
{
    struct kb_contract c;
    char err[256], buf[KB_PATH_MAX];
    json_t *hi;
    const char *path = choose_contract(r, buf, sizeof(buf));
    if (!path)
        return;
    if (kb_contract_load(path, &c, err, sizeof(err)) < 0) {
        snprintf(r->published_note, sizeof(r->published_note), "%s", err);
        return;
    }
    r->contract_runtimes = json_array();
    for (size_t i = 0; i < c.nruntimes; i++)
        json_array_append_new(r->contract_runtimes, json_string(c.runtimes[i].name));
    if (c.npublished == 0) {
        snprintf(r->published_note, sizeof(r->published_note), "the contract %s publishes "
                 "no figures", c.path);
    } else {
        hi = json_object();
        for (size_t i = 0; i < c.npublished; i++) {
            json_t *rt = json_object_get(hi, c.published[i].runtime);
            if (!rt)
                json_object_set_new(hi, c.published[i].runtime, rt = json_object());
            json_object_set_new(rt, c.published[i].route,
                                json_integer(c.published[i].highest_controlled_rps));
        }
        r->published = json_pack("{s:s,s:s,s:o}", "source", c.published_source, "host",
                                 c.published_host, "highest_controlled_rps", hi);
        if (r->published && c.npoints)
            json_object_set_new(r->published, "points", published_points(&c));
    }
    kb_report_load_curve(r, kb_contract_published_curve(&c, kb_jstr(r->plan, "profile", NULL)));
    kb_contract_free(&c);
}

/* Each of the plan's lists (runtimes, routes, rates) is at most KB_REPORT_MAX_AXIS long, a
 * name in it plain (paths.h), a rate a whole number above 0; each point's id, runtime and
 * route plain. A name here becomes a path and a chart's slot before anything else reads it.
 * 0, or -1 with err naming the entry. */
static int check_plan(const json_t *plan, const char *dir, char *err, size_t errlen)
{
    static const char *const lists[] = { "runtimes", "routes", "rates" };
    static const char *const keys[] = { "id", "runtime", "route" };
    const json_t *a, *v;
    size_t i, k;
    for (k = 0; k < 3; k++) {
        a = json_object_get(plan, lists[k]);
        if (!json_is_array(a) || json_array_size(a) > KB_REPORT_MAX_AXIS) {
            snprintf(err, errlen, "%.3000s/plan.json: \"%s\" must be a list of at most %d",
                     dir, lists[k], KB_REPORT_MAX_AXIS);
            return -1;
        }
        json_array_foreach(a, i, v)
            if (k == 2 ? !json_is_integer(v) || json_integer_value(v) <= 0
                       : !kb_plain_name(json_string_value(v))) {
                snprintf(err, errlen, "%.3000s/plan.json: %s[%zu] is not %s", dir, lists[k], i,
                         k == 2 ? "a whole number of req/s above 0"
                                : "a plain name (1-128 bytes, no '/', not . or ..)");
                return -1;
            }
    }
    json_array_foreach(json_object_get(plan, "points"), i, v)
        for (k = 0; k < 3; k++)
            if ((k == 0 || json_object_get(v, keys[k])) &&
                !kb_plain_name(json_string_value(json_object_get(v, keys[k])))) {
                snprintf(err, errlen, "%.3000s/plan.json: points[%zu].%s is not a plain name "
                         "(1-128 bytes, no '/', not . or ..)", dir, i, keys[k]);
                return -1;
            }
    return 0;
}

static int load_run(const char *dir, struct kb_report *r, struct kb_rederive *rd, char *err,
                    size_t errlen)
{
    char path[KB_PATH_MAX];
    json_t *crit;
    memset(r, 0, sizeof(*r));
    snprintf(r->dir, sizeof(r->dir), "%s", dir);
    if (!(r->plan = kb_report_evidence(r, kb_path(path, sizeof(path), dir, "plan.json")))) {
        if (r->schema_err[0])
            snprintf(err, errlen, "%s", r->schema_err);
        else
            snprintf(err, errlen, "%s has no plan.json: not a kneebench run directory", dir);
        return -1;
    }
    if (check_plan(r->plan, dir, err, errlen) < 0) {
        kb_report_free(r);
        return -1;
    }
    r->run = kb_report_evidence(r, kb_path(path, sizeof(path), dir, "run.json"));
    if (!r->run && r->schema_err[0]) {
        snprintf(err, errlen, "%s", r->schema_err);
        kb_report_free(r);
        return -1;
    } else if (!r->run) {
        snprintf(err, errlen, "%s has no run.json (run identity)", dir);
        kb_report_free(r);
        return -1;
    }
    crit = json_object_get(r->plan, "criteria");
    if (!json_is_number(json_object_get(crit, "max_p99_us"))) {
        snprintf(err, errlen, "%s/plan.json has no criteria.max_p99_us", dir);
        kb_report_free(r);
        return -1;
    }
    r->rd = rd;
    r->min_delivery = rd && rd->rejudge ? rd->min_delivery : kb_jnum(crit, "min_delivery", NULL);
    r->max_p99_us = rd && rd->rejudge ? rd->max_p99_us : kb_jnum(crit, "max_p99_us", NULL);
    r->repeats = (int)json_integer_value(json_object_get(r->plan, "repeats"));
    r->unconstrained = json_is_true(json_object_get(r->plan, "unconstrained"));
    r->confirm = kb_report_evidence(r, kb_path(path, sizeof(path), dir, "confirm.json"));
    r->refine = kb_report_evidence(r, kb_path(path, sizeof(path), dir, "refine.json"));
    kb_report_load_calibration(r, dir);
    kb_report_load_floor(r, dir);
    build_rows(r, dir);
    load_fixtures(r, dir);
    kb_report_load_series(r, dir);
    load_published(r);
    r->hostclock = kb_hostclock_summary(dir, json_object_get(r->plan, "points"));
    if (r->schema_err[0]) {        /* never a figure read by guessing what a newer file holds */
        snprintf(err, errlen, "%s", r->schema_err);
        kb_report_free(r);
        return -1;
    }
    return 0;
}

int kb_report_load(const char *dir, struct kb_report *r, char *err, size_t errlen)
{
    return load_run(dir, r, NULL, err, errlen);
}

int kb_report_load_rederived(const char *dir, struct kb_report *r, struct kb_rederive *rd,
                             char *err, size_t errlen)
{
    return load_run(dir, r, rd, err, errlen);
}

void kb_report_free(struct kb_report *r)
{
    for (size_t i = 0; i < r->nmissing; i++)
        free(r->missing[i]);
    free(r->missing);
    for (size_t i = 0; i < r->nrows; i++)
        json_decref(r->rows[i].point_ids);
    free(r->rows);
    for (size_t i = 0; i < r->nfine; i++)
        json_decref(r->fine[i].point_ids);
    free(r->fine);
    kb_report_free_proof(r);
    json_decref(r->plan);
    json_decref(r->run);
    json_decref(r->fixtures);
    json_decref(r->published);
    json_decref(r->published_curve);
    json_decref(r->hostclock);
    json_decref(r->confirm);
    json_decref(r->refine);
    json_decref(r->floor);
    json_decref(r->contract_runtimes);
    memset(r, 0, sizeof(*r));
}

const struct kb_report_row *kb_report_row(const struct kb_report *r, const char *runtime,
                                          const char *route, long rate)
{
    for (size_t i = 0; runtime && route && i < r->nrows; i++)
        if (r->rows[i].rate == rate && !strcmp(r->rows[i].runtime, runtime) &&
            !strcmp(r->rows[i].route, route))
            return &r->rows[i];
    for (size_t i = 0; runtime && route && i < r->nfine; i++)
        if (r->fine[i].rate == rate && !strcmp(r->fine[i].runtime, runtime) &&
            !strcmp(r->fine[i].route, route))
            return &r->fine[i];
    return NULL;
}

long kb_report_highest(const struct kb_report *r, const char *runtime, const char *route)
{
    long best = 0;
    for (size_t i = 0; i < r->nrows; i++)
        if (!strcmp(r->rows[i].runtime, runtime) && !strcmp(r->rows[i].route, route) &&
            !strcmp(r->rows[i].verdict, "controlled") && r->rows[i].rate > best)
            best = r->rows[i].rate;
    return best;
}
