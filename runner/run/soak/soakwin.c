/* soakwin.c -- see soakwin.h. */
#define _POSIX_C_SOURCE 200809L
#include "runner/run/soak/soakwin.h"
#include "runner/load/hist.h"
#include "runner/load/hlog.h"
#include "runner/load/hlogread.h"
#include "runner/util/paths.h"

#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

/* The load generator's histogram layout (runner/load/loadgen.c): 1 us to an hour, 3 figures. */

size_t kb_soakwin_count(double duration_s, double max_s)
{
    double n = 10;
    if (max_s > 0 && ceil(duration_s / max_s) > n)
        n = ceil(duration_s / max_s);
    if (n > floor(duration_s))
        n = floor(duration_s);
    if (n > KB_SOAKWIN_MAX)
        n = KB_SOAKWIN_MAX;
    return n < 1 ? 1 : (size_t)n;
}

/* The window an interval starting at start_s belongs to, or -1 past the phase. */
static long window_of(const struct kb_soakwin *w, double start_s, double duration_s)
{
    long k;
    if (start_s < 0 || start_s >= duration_s)
        return -1;
    k = (long)floor(start_s / w->window_s + 1e-9);
    return k < (long)w->n ? k : (long)w->n - 1;
}

/* ---- series.csv: the responses and lower bounds per interval ---------------------------- */

/* The column named name in a CSV header line, or -1. */
static int column(const char *header, const char *name)
{
    size_t len = strlen(name);
    const char *p = header;
    for (int i = 0;; i++) {
        size_t f = strcspn(p, ",\r\n");
        if (f == len && !strncmp(p, name, len))
            return i;
        if (p[f] != ',')
            return -1;
        p += f + 1;
    }
}

/* The fields of a CSV line, in place: up to max. */
static int fields(char *line, char **f, int max)
{
    int n = 0;
    for (char *p = line; n < max;) {
        f[n++] = p;
        p += strcspn(p, ",\n");
        if (*p != ',') {
            *p = '\0';
            break;
        }
        *p++ = '\0';
    }
    return n;
}

struct read_ctx {
    struct kb_soakwin *w;
    double duration_s;
    struct kb_hist h[KB_SOAKWIN_MAX];
};

static int read_csv(const char *path, struct read_ctx *c, char *err, size_t errlen)
{
    FILE *f = fopen(path, "r");
    char *line = NULL, *fl[32];
    size_t cap = 0;
    int cs = -1, cl = -1, cc = -1, cb = -1, rc = 0, n;
    if (!f) {
        snprintf(err, errlen, "%s: cannot open", path);
        return -1;
    }
    if (getline(&line, &cap, f) < 0 || (cs = column(line, "start_s")) < 0 ||
        (cl = column(line, "length_s")) < 0 || (cc = column(line, "completed")) < 0 ||
        (cb = column(line, "bounded")) < 0) {
        snprintf(err, errlen, "%s: no start_s, length_s, completed and bounded columns", path);
        rc = -1;
    }
    while (rc == 0 && getline(&line, &cap, f) >= 0) {
        long k;
        if ((n = fields(line, fl, 32)) <= cs || n <= cl || n <= cc || n <= cb) {
            snprintf(err, errlen, "%s: a short line", path);
            rc = -1;
        } else if ((k = window_of(c->w, atof(fl[cs]), c->duration_s)) >= 0) {
            struct kb_soak_window *x = &c->w->w[k];
            double a = atof(fl[cs]), z = a + atof(fl[cl]);
            x->start_s = x->seconds > 0 && x->start_s < a ? x->start_s : a;
            x->end_s = x->seconds > 0 && x->end_s > z ? x->end_s : z;
            x->seconds += atof(fl[cl]);
            c->w->w[k].completed += atoll(fl[cc]);
            c->w->w[k].bounded += atoll(fl[cb]);
        }
    }
    free(line);
    fclose(f);
    return rc;
}

/* ---- series.hlog: each interval's histogram into its window's --------------------------- */

static int take_interval(void *arg, double start_s, double length_s, const char *payload,
                         char *err, size_t errlen)
{
    struct read_ctx *c = arg;
    long k = window_of(c->w, start_s, c->duration_s);
    (void)length_s;
    return k < 0 ? 0 : kb_hlog_decode_add(payload, &c->h[k], err, errlen);
}

int kb_soakwin_read(const char *dir, double duration_s, double max_s, struct kb_soakwin *out,
                    char *err, size_t errlen)
{
    struct read_ctx *c = calloc(1, sizeof(*c));
    char path[KB_PATH_MAX];
    size_t made = 0;
    int rc = -1;
    memset(out, 0, sizeof(*out));
    if (!c || duration_s <= 0) {
        snprintf(err, errlen, c ? "a phase of no duration has no windows" : "out of memory");
        free(c);
        return -1;
    }
    out->n = kb_soakwin_count(duration_s, max_s);
    out->window_s = duration_s / (double)out->n;
    c->w = out;
    c->duration_s = duration_s;
    for (; made < out->n; made++)
        /* the layout series.hlog is written in (runner/load/hlog.h): nanoseconds */
        if (kb_hist_init(&c->h[made], 1, KB_HLOG_HIGHEST_NS, 3) < 0)
            break;
    if (made == out->n &&
        read_csv(kb_path(path, sizeof(path), dir, "series.csv"), c, err, errlen) == 0 &&
        kb_hlog_read(kb_path(path, sizeof(path), dir, "series.hlog"), take_interval, c, err,
                     errlen) == 0)
        rc = 0;
    else if (made < out->n)
        snprintf(err, errlen, "out of memory");
    for (size_t k = 0; k < out->n; k++) {
        struct kb_soak_window *w = &out->w[k];
        if (w->seconds <= 0) {           /* no interval: its share of the phase */
            w->start_s = (double)k * out->window_s;
            w->end_s = (double)(k + 1) * out->window_s;
        }
        w->achieved_rps = w->seconds > 0 ? (double)w->completed / w->seconds : 0;
        w->p99_us = k < made && c->h[k].total_count ? (double)kb_hist_value_at_percentile(
                                                          &c->h[k], 99.0) / 1000.0 : NAN;
        w->p99_bound = w->bounded > 0;
    }
    for (size_t k = 0; k < made; k++)
        kb_hist_free(&c->h[k]);
    free(c);
    return rc;
}

/* ---- the rule --------------------------------------------------------------------------- */

int kb_soakwin_judge(const struct kb_soakwin *w, const struct kb_decay_rule *r,
                     struct kb_decay *d, char *reason, size_t reasonlen)
{
    const struct kb_soak_window *a, *z;
    memset(d, 0, sizeof(*d));
    if (w->n < 2) {
        snprintf(reason, reasonlen, "decay not judged: the phase is too short for two windows");
        return -1;
    }
    a = &w->w[0];
    z = &w->w[w->n - 1];
    if (!a->completed || !z->completed || isnan(a->p99_us) || isnan(z->p99_us)) {
        snprintf(reason, reasonlen, "decay not judged: the %s window has no response",
                 !a->completed || isnan(a->p99_us) ? "first" : "last");
        return -1;
    }
    d->rate_drop = 1.0 - z->achieved_rps / a->achieved_rps;
    d->p99_ratio = a->p99_us > 0 ? z->p99_us / a->p99_us : INFINITY;
    d->p99_growth_us = z->p99_us - a->p99_us;
    d->rate_decays = d->rate_drop > r->max_rate_drop;
    d->tail_grows = d->p99_ratio > r->p99_factor && d->p99_growth_us > r->p99_floor_us;
    if (d->rate_decays)
        snprintf(reason, reasonlen, "throughput decayed: the last %.0f s window achieved "
                 "%.1f/s, %.2f %% below the first's %.1f/s (tolerance %.2f %%)%s",
                 w->window_s, z->achieved_rps, 100 * d->rate_drop, a->achieved_rps,
                 100 * r->max_rate_drop, d->tail_grows ? "; and the tail grew" : "");
    else if (d->tail_grows)
        snprintf(reason, reasonlen, "the tail grew: the last %.0f s window's corrected p99 "
                 "%s%.2f ms is %.1f x the first's %.2f ms (+%.2f ms; tolerance %.3g x and "
                 "+%.3g ms)", w->window_s, z->p99_bound ? ">= " : "", z->p99_us / 1000,
                 d->p99_ratio, a->p99_us / 1000, d->p99_growth_us / 1000, r->p99_factor,
                 r->p99_floor_us / 1000);
    else
        snprintf(reason, reasonlen, "no decay over %zu windows of %.0f s: achieved %+.2f %%, "
                 "corrected p99 %.2f -> %.2f ms (tolerances -%.2f %%, %.3g x and +%.3g ms)",
                 w->n, w->window_s, -100 * d->rate_drop, a->p99_us / 1000, z->p99_us / 1000,
                 100 * r->max_rate_drop, r->p99_factor, r->p99_floor_us / 1000);
    return d->rate_decays || d->tail_grows;
}
