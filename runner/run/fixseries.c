/* fixseries.c -- a fixture's samples over a load (fixseries.h). */
#include "runner/run/fixseries.h"

#include <math.h>
#include <stdlib.h>
#include <string.h>

void kb_fixseries_init(struct kb_fixseries *s, size_t max)
{
    memset(s, 0, sizeof(*s));
    s->max = max;
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

/* Room for one more: 0, or -1 when the bound or memory says no. */
static int grow(struct kb_fixseries *s)
{
    size_t cap = s->cap ? s->cap * 2 : 256;
    double *v[4] = { s->t, s->cpu, s->rss, s->fds };
    if (s->n < s->cap)
        return 0;
    if (s->n >= s->max)
        return -1;
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
    if (s->n > 0 && t > s->t[s->n - 1]) {
        frac = (p->cpu_seconds - s->cpu[s->n - 1]) / (t - s->t[s->n - 1]);
        s->frac_sum += frac;
        s->nfrac++;
    }
    if (grow(s) == 0) {
        s->t[s->n] = t;
        s->cpu[s->n] = p->cpu_seconds;
        s->rss[s->n] = (double)p->rss_bytes;
        s->fds[s->n] = (double)p->fds;
        s->n++;
    }
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
