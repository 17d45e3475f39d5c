/* cell.c -- a cell's samples into one row: medians, ranges and a verdict (cell.h). */
#define _POSIX_C_SOURCE 200809L
#include "runner/run/cell.h"
#include "runner/util/jfield.h"
#include "runner/util/paths.h"
#include "runner/util/xalloc.h"

#include <math.h>
#include <stdio.h>
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
static void add_client(struct kb_cell *row, json_t *load)
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
static void add_bounds(struct kb_cell *row, json_t *corrected)
{
    double from;
    row->bounded += (long long)kb_jnum(corrected, "bounded", NULL);
    if (kb_jnum_opt(corrected, "bound_from_us", NULL, &from) &&
        (row->bound_from_us < 0 || from < row->bound_from_us))
        row->bound_from_us = from;
}

/* The host's theft from both roles, the largest over the repeats. */
static void add_host(struct kb_cell *row, json_t *host)
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

static void add_server(struct kb_cell *row, struct acc *a, json_t *v)
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
static void add_error_kinds(struct kb_cell *row, json_t *load)
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

static void accumulate(struct kb_cell *row, struct acc *a, json_t *v)
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
static const char *by_medians(const struct kb_cells *r, const struct kb_cell *row,
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
static const char *medians_with(const struct kb_cells *r, const struct acc *a, int k, int best)
{
    struct fig del = a->tdel, p99 = a->tp99;
    struct kb_cell row;
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
static const char *client_could_decide(const struct kb_cells *r, const struct acc *a)
{
    const char *best = medians_with(r, a, a->verdicts[3], 1);
    return strcmp(best, medians_with(r, a, a->verdicts[3], 0)) ? NULL : best;
}

/* Any failed repeat fails the row; then client-limited when its client-limited samples
 * could decide it; else medians decide. The server verdict is the same rule over the
 * repeats' own verdicts, unknown when one is. */
static void finish_row(const struct kb_cells *r, struct kb_cell *row, struct acc *a)
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
static void add_floor(const struct kb_cell_reader *rd, struct acc *a, json_t *v)
{
    double us, floor = rd->floor_us ? rd->floor_us(rd->ctx, kb_jstr(json_object_get(v,
                                      "interleaved"), "floor_sample", "")) : 0;
    if (floor > 0 && kb_jnum_opt(json_object_get(v, "server"), "cpu_us_per_response", NULL,
                                 &us) && us > 0)
        fig_add(&a->f[F_FLOOR], us / floor, 0);
}

/* A complete point's evidence v into row w (its acc). */
static void take(const struct kb_cell_reader *rd, struct kb_cell *w, struct acc *acc,
                 const char *id, json_t *v)
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
    add_floor(rd, acc, v);
}

/* One point of the plan or of the confirmation samples into its row; missing when it has
 * no complete evidence. */
static void add_point(struct kb_cells *r, const struct kb_cell_reader *rd, struct acc *acc,
                      json_t *pt)
{
    const char *id = json_string_value(json_object_get(pt, "id"));
    long rate = (long)json_integer_value(json_object_get(pt, "rate"));
    json_t *v = id ? rd->sample(rd->ctx, id, rate) : NULL;
    const struct kb_cell *row = kb_cells_row(r,
        json_string_value(json_object_get(pt, "runtime")),
        json_string_value(json_object_get(pt, "route")), rate);
    if (row)
        r->rows[row - r->rows].planned = 1;
    if ((!v || !row) && rd->missing)
        rd->missing(rd->ctx, id ? id : "(a point without an id)");
    else if (v && row)
        take(rd, &r->rows[row - r->rows], &acc[row - r->rows], id, v);
    json_decref(v);
}

static void row_init(struct kb_cell *row, const char *rt, const char *route, long rate)
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
static int fine_row(const struct kb_cells *r, const struct kb_cell_reader *rd,
                    const json_t *cell, struct kb_cell *row)
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
            if ((v = rd->sample(rd->ctx, id, lo)))
                take(rd, row, acc, id, v);
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
static void build_fine(struct kb_cells *r, const json_t *refine,
                       const struct kb_cell_reader *rd)
{
    json_t *cells = json_object_get(refine, "cells"), *c;
    size_t i;
    r->fine = calloc(json_array_size(cells) + 1, sizeof(*r->fine));
    json_array_foreach(cells, i, c)
        if (r->fine && !strcmp(kb_jstr(c, "step", ""), "located") &&
            fine_row(r, rd, c, &r->fine[r->nfine]))
            r->nfine++;
}

void kb_cells_build(struct kb_cells *r, const json_t *plan, const json_t *confirm,
                    const json_t *refine, const struct kb_cell_reader *rd)
{
    json_t *pt;
    size_t nrt, nro, nra, i;
    struct acc *acc;
    r->plan = plan;
    nrt = kb_cells_nruntimes(r), nro = kb_cells_nroutes(r), nra = kb_cells_nrates(r);
    acc = kb_xcalloc(nrt * nro * nra + 1, sizeof(*acc));
    r->rows = kb_xcalloc(nrt * nro * nra + 1, sizeof(*r->rows));
    for (size_t a = 0; a < nrt; a++)
        for (size_t b = 0; b < nro; b++)
            for (size_t c = 0; c < nra; c++)
                row_init(&r->rows[r->nrows++], kb_cells_runtime(r, a), kb_cells_route(r, b),
                         kb_cells_rate(r, c));
    json_array_foreach(json_object_get(plan, "points"), i, pt)
        add_point(r, rd, acc, pt);
    /* the samples the curve added to confirm each cell's boundary (confirm.json) */
    json_array_foreach(json_object_get(confirm, "points"), i, pt)
        add_point(r, rd, acc, pt);
    for (i = 0; i < r->nrows; i++)
        finish_row(r, &r->rows[i], &acc[i]);
    free(acc);
    build_fine(r, refine, rd);
}

void kb_cells_free(struct kb_cells *c)
{
    for (size_t i = 0; i < c->nrows; i++)
        json_decref(c->rows[i].point_ids);
    free(c->rows);
    for (size_t i = 0; i < c->nfine; i++)
        json_decref(c->fine[i].point_ids);
    free(c->fine);
    c->rows = c->fine = NULL;
    c->nrows = c->nfine = 0;
}

size_t kb_cells_nruntimes(const struct kb_cells *c)
{
    return json_array_size(json_object_get(c->plan, "runtimes"));
}
const char *kb_cells_runtime(const struct kb_cells *c, size_t i)
{
    return json_string_value(json_array_get(json_object_get(c->plan, "runtimes"), i));
}
size_t kb_cells_nroutes(const struct kb_cells *c)
{
    return json_array_size(json_object_get(c->plan, "routes"));
}
const char *kb_cells_route(const struct kb_cells *c, size_t i)
{
    return json_string_value(json_array_get(json_object_get(c->plan, "routes"), i));
}
size_t kb_cells_nrates(const struct kb_cells *c)
{
    return json_array_size(json_object_get(c->plan, "rates"));
}
long kb_cells_rate(const struct kb_cells *c, size_t i)
{
    return (long)json_integer_value(json_array_get(json_object_get(c->plan, "rates"), i));
}

const struct kb_cell *kb_cells_row(const struct kb_cells *c, const char *runtime,
                                   const char *route, long rate)
{
    for (size_t i = 0; runtime && route && i < c->nrows; i++)
        if (c->rows[i].rate == rate && !strcmp(c->rows[i].runtime, runtime) &&
            !strcmp(c->rows[i].route, route))
            return &c->rows[i];
    for (size_t i = 0; runtime && route && i < c->nfine; i++)
        if (c->fine[i].rate == rate && !strcmp(c->fine[i].runtime, runtime) &&
            !strcmp(c->fine[i].route, route))
            return &c->fine[i];
    return NULL;
}

long kb_cells_highest(const struct kb_cells *c, const char *runtime, const char *route)
{
    long best = 0;
    for (size_t i = 0; i < c->nrows; i++)
        if (!strcmp(c->rows[i].runtime, runtime) && !strcmp(c->rows[i].route, route) &&
            !strcmp(c->rows[i].verdict, "controlled") && c->rows[i].rate > best)
            best = c->rows[i].rate;
    return best;
}

/* Each of the plan's lists (runtimes, routes, rates) is at most KB_CELLS_MAX_AXIS long, a
 * name in it plain (paths.h), a rate a whole number above 0; each point's id, runtime and
 * route plain. A name here becomes a path and a chart's slot before anything else reads it.
 * 0, or -1 with err naming the entry. */
int kb_cells_check_plan(const json_t *plan, const char *dir, char *err, size_t errlen)
{
    static const char *const lists[] = { "runtimes", "routes", "rates" };
    static const char *const keys[] = { "id", "runtime", "route" };
    const json_t *a, *v;
    size_t i, k;
    for (k = 0; k < 3; k++) {
        a = json_object_get(plan, lists[k]);
        if (!json_is_array(a) || json_array_size(a) > KB_CELLS_MAX_AXIS) {
            snprintf(err, errlen, "%.3000s/plan.json: \"%s\" must be a list of at most %d",
                     dir, lists[k], KB_CELLS_MAX_AXIS);
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
