/* fixseries.c -- a fixture's samples over a load (fixseries.h). */
#include "runner/run/fixseries.h"

#include <math.h>
#include <stdlib.h>
#include <string.h>

/* Fewer slots than this cannot hold a first, a grid sample and a provisional last. */
#define MIN_SLOTS 4

void kb_fixseries_init(struct kb_fixseries *s, size_t max)
{
    memset(s, 0, sizeof(*s));
    s->max = max < MIN_SLOTS ? MIN_SLOTS : max;
    s->stride = 1;
    s->pss_max = -1;
}

void kb_fixseries_free(struct kb_fixseries *s)
{
    free(s->t);
    free(s->cpu);
    free(s->rss);
    free(s->fds);
    kb_fixseries_init(s, s->max);
}

/* Room for one more below the bound: 0, or -1 when memory says no. */
static int grow(struct kb_fixseries *s)
{
    size_t cap = s->cap ? s->cap * 2 : 256;
    double *v[4] = { s->t, s->cpu, s->rss, s->fds };
    if (s->n < s->cap)
        return 0;
    cap = cap > s->max ? s->max : cap;
    for (int k = 0; k < 4; k++) {
        double *p = realloc(v[k], cap * sizeof(double));
        if (!p)
            return -1;
        v[k] = p;
        /* each array is the series' own as soon as it is moved, so a later failure leaks
         * nothing and loses nothing */
        if (k == 0) s->t = p;
        if (k == 1) s->cpu = p;
        if (k == 2) s->rss = p;
        if (k == 3) s->fds = p;
    }
    s->cap = cap;
    return 0;
}

/* Full: keep every other grid sample and double the stride, so the series still spans the
 * whole load at an even spacing. */
static void decimate(struct kb_fixseries *s)
{
    size_t j = 0;
    for (size_t i = 0; i < s->n; i += 2, j++) {
        s->t[j] = s->t[i];
        s->cpu[j] = s->cpu[i];
        s->rss[j] = s->rss[i];
        s->fds[j] = s->fds[i];
    }
    s->n = j;
    s->stride *= 2;
}

static void store(struct kb_fixseries *s, double t, const struct kb_proc_sample *p)
{
    if (s->provisional) {     /* the previous last was off the grid: this one replaces it */
        s->n--;
        s->provisional = 0;
    }
    if (s->n >= s->max)
        decimate(s);
    if (grow(s) < 0)
        return;
    s->t[s->n] = t;
    s->cpu[s->n] = p->cpu_seconds;
    s->rss[s->n] = (double)p->rss_bytes;
    s->fds[s->n] = (double)p->fds;
    s->n++;
    /* the newest sample is always kept, so the series reaches the load's end */
    s->provisional = (s->seen - 1) % s->stride != 0;
}

#define KB_MAX(a, b) ((a) = (b) > (a) ? (b) : (a))

double kb_fixseries_add(struct kb_fixseries *s, double t, const struct kb_proc_sample *p)
{
    double frac = -1;
    if (p->nprocs == 0)
        return -1;
    s->seen++;
    KB_MAX(s->rss_max, p->rss_bytes);
    KB_MAX(s->pss_max, p->pss_bytes);
    KB_MAX(s->fds_max, p->fds);
    KB_MAX(s->threads_max, p->threads);
    KB_MAX(s->procs_max, (long)p->nprocs);
    /* against the previous sample read, stored or not */
    if (s->seen > 1 && t > s->last_t) {
        frac = (p->cpu_seconds - s->last_cpu) / (t - s->last_t);
        s->frac_sum += frac;
        s->nfrac++;
    }
    s->last_t = t;
    s->last_cpu = p->cpu_seconds;
    store(s, t, p);
    return frac;
}

double kb_fixseries_cpu_at(const struct kb_fixseries *s, double t)
{
    for (size_t i = 1; i < s->n; i++)
        if (s->t[i - 1] <= t && t <= s->t[i]) {
            double span = s->t[i] - s->t[i - 1];
            double f = span > 0 ? (t - s->t[i - 1]) / span : 0;
            return s->cpu[i - 1] + f * (s->cpu[i] - s->cpu[i - 1]);
        }
    return NAN;
}

double kb_fixseries_cpu_mean(const struct kb_fixseries *s)
{
    return s->nfrac ? s->frac_sum / (double)s->nfrac : 0;
}
