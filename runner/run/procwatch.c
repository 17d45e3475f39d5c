/* procwatch.c -- a user's server watched while a load runs (procwatch.h). */
#define _GNU_SOURCE
#include "runner/run/procwatch.h"

#include <errno.h>
#include <math.h>
#include <pthread.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "runner/sandbox/cgfile.h"
#include "runner/util/atomicfile.h"
#include "runner/sandbox/procs.h"
#include "runner/util/cpulist.h"
#include "runner/util/evidence.h"

#define PIDS_MAX 4096

struct sample {
    double t;                          /* monotonic seconds */
    int have_procs;
    struct kb_proc_sample p;
    double steal_srv, steal_cli;       /* the last interval's fractions (NAN: none) */
};

struct kb_procwatch {
    struct kb_procwatch_cfg cfg;
    pthread_t thread;
    pthread_mutex_t mu;
    pthread_cond_t cv;
    int stop, started;
    struct sample *s;
    size_t n, cap;
    struct kb_steal_track srv, cli;
    int gone;
    pid_t pids[PIDS_MAX];
};

static double mono_s(void)
{
    return (double)kb_mono_now() / (double)KB_NS_PER_S;
}

static void take(struct kb_procwatch *w)
{
    struct sample x = { .t = mono_s(), .steal_srv = NAN, .steal_cli = NAN };
    size_t np = 0;
    int gone = 0;
    if (kb_procwatch_has_server(&w->cfg)) {
        np = kb_procwatch_procs(&w->cfg, w->pids, PIDS_MAX);
        kb_procs_sample(w->pids, np, &x.p);
        x.have_procs = x.p.nprocs > 0;
        gone = !x.have_procs;
    }
    kb_steal_track_sample(&w->srv, KB_STEAL_PROCSTAT, x.t);
    kb_steal_track_sample(&w->cli, KB_STEAL_PROCSTAT, x.t);
    x.steal_srv = w->srv.last_fraction;
    x.steal_cli = w->cli.last_fraction;
    pthread_mutex_lock(&w->mu);
    w->gone = gone;
    if (w->n == w->cap) {
        size_t cap = w->cap ? w->cap * 2 : 64;
        struct sample *s = realloc(w->s, cap * sizeof(*s));
        if (s) {
            w->s = s;
            w->cap = cap;
        }
    }
    if (w->n < w->cap)
        w->s[w->n++] = x;
    pthread_mutex_unlock(&w->mu);
}

static void *loop(void *arg)
{
    struct kb_procwatch *w = arg;
    struct timespec next;
    clock_gettime(CLOCK_MONOTONIC, &next);
    pthread_mutex_lock(&w->mu);
    while (!w->stop) {
        long ns = (long)(w->cfg.every_s * 1e9);
        next.tv_sec += ns / 1000000000L;
        next.tv_nsec += ns % 1000000000L;
        if (next.tv_nsec >= 1000000000L) {
            next.tv_sec++;
            next.tv_nsec -= 1000000000L;
        }
        /* an absolute schedule: a late sample skips nothing but bursts nothing either */
        while (!w->stop && pthread_cond_timedwait(&w->cv, &w->mu, &next) != ETIMEDOUT)
            ;
        if (w->stop)
            break;
        pthread_mutex_unlock(&w->mu);
        take(w);
        pthread_mutex_lock(&w->mu);
    }
    pthread_mutex_unlock(&w->mu);
    return NULL;
}

struct kb_procwatch *kb_procwatch_start(const struct kb_procwatch_cfg *cfg, char *err,
                                        size_t errlen)
{
    struct kb_procwatch *w = calloc(1, sizeof(*w));
    pthread_condattr_t ca;
    sigset_t all, old;
    int rc;
    if (!w) {
        snprintf(err, errlen, "out of memory for the server's samples");
        return NULL;
    }
    w->cfg = *cfg;
    kb_steal_track_init(&w->srv, cfg->server_cpus);
    kb_steal_track_init(&w->cli, cfg->client_cpus);
    pthread_mutex_init(&w->mu, NULL);
    pthread_condattr_init(&ca);
    pthread_condattr_setclock(&ca, CLOCK_MONOTONIC);
    pthread_cond_init(&w->cv, &ca);
    pthread_condattr_destroy(&ca);
    take(w);
    sigfillset(&all);
    pthread_sigmask(SIG_BLOCK, &all, &old);
    rc = pthread_create(&w->thread, NULL, loop, w);
    pthread_sigmask(SIG_SETMASK, &old, NULL);
    if (rc) {
        snprintf(err, errlen, "cannot start the sampling thread: %s", strerror(rc));
        kb_procwatch_free(w);
        return NULL;
    }
    w->started = 1;
    return w;
}

void kb_procwatch_stop(struct kb_procwatch *w)
{
    if (!w || !w->started)
        return;
    pthread_mutex_lock(&w->mu);
    w->stop = 1;
    pthread_cond_signal(&w->cv);
    pthread_mutex_unlock(&w->mu);
    pthread_join(w->thread, NULL);
    w->started = 0;
    take(w);
}

void kb_procwatch_free(struct kb_procwatch *w)
{
    if (!w)
        return;
    kb_procwatch_stop(w);
    pthread_cond_destroy(&w->cv);
    pthread_mutex_destroy(&w->mu);
    free(w->s);
    free(w);
}

/* The server's cumulative CPU at monotonic second t, interpolated between the samples
 * around it; NAN outside them or where a sample around it read no process. */
static double cpu_at(const struct kb_procwatch *w, double t)
{
    for (size_t i = 1; i < w->n; i++) {
        const struct sample *a = &w->s[i - 1], *b = &w->s[i];
        if (a->t <= t && t <= b->t) {
            double span = b->t - a->t, f = span > 0 ? (t - a->t) / span : 0;
            if (!a->have_procs || !b->have_procs)
                return NAN;
            return a->p.cpu_seconds + f * (b->p.cpu_seconds - a->p.cpu_seconds);
        }
    }
    return NAN;
}

json_t *kb_procwatch_server_json(const struct kb_procwatch *w, kb_mono_t start, kb_mono_t end,
                                 double responses)
{
    long long rss = -1, pss = -1;
    long fds = -1, threads = -1;
    size_t procs = 0;
    double a = (double)start / (double)KB_NS_PER_S, b = (double)end / (double)KB_NS_PER_S;
    double cpu = b > a ? cpu_at(w, b) - cpu_at(w, a) : NAN;
    double us = responses > 0 && cpu > 0 ? cpu * 1e6 / responses : NAN;
    for (size_t i = 0; i < w->n; i++) {
        const struct kb_proc_sample *p = &w->s[i].p;
        if (!w->s[i].have_procs)
            continue;
        rss = p->rss_bytes > rss ? p->rss_bytes : rss;
        pss = p->pss_bytes > pss ? p->pss_bytes : pss;
        fds = p->fds > fds ? p->fds : fds;
        threads = p->threads > threads ? p->threads : threads;
        procs = p->nprocs > procs ? p->nprocs : procs;
    }
    return json_pack("{s:o,s:o,s:o,s:o,s:o,s:o,s:o,s:o,s:o,s:i}",
        "cpu_interval_s", kb_json_figure(cpu),
        "cpu_mean_fraction", kb_json_figure(b > a ? cpu / (b - a) : NAN),
        "cpu_us_per_response", kb_json_figure(us),
        "capacity_estimate_rps", kb_json_figure(isfinite(us) ? 1e6 / us : NAN),
        "rss_max_bytes", rss >= 0 ? json_integer(rss) : json_null(),
        "pss_max_bytes", pss >= 0 ? json_integer(pss) : json_null(),
        "fds_max", fds >= 0 ? json_integer(fds) : json_null(),
        "threads_max", threads >= 0 ? json_integer(threads) : json_null(),
        "procs_max", procs ? json_integer((json_int_t)procs) : json_null(),
        "samples", (int)w->n);
}

const struct kb_steal_track *kb_procwatch_steal_server(const struct kb_procwatch *w)
{
    return &w->srv;
}

const struct kb_steal_track *kb_procwatch_steal_client(const struct kb_procwatch *w)
{
    return &w->cli;
}

int kb_procwatch_gone(struct kb_procwatch *w)
{
    int gone;
    pthread_mutex_lock(&w->mu);
    gone = w->gone;
    pthread_mutex_unlock(&w->mu);
    return gone;
}

static void cell(FILE *f, int have, const char *fmt, double v, char end)
{
    if (have && isfinite(v))
        fprintf(f, fmt, v);
    fputc(end, f);
}

static int fill_csv(FILE *f, const void *arg)
{
    const struct kb_procwatch *w = arg;
    fprintf(f, "t_s,cpu_s,cpu_fraction,rss_bytes,pss_bytes,fds,threads,procs,"
               "server_steal_fraction,client_steal_fraction\n");
    for (size_t i = 0; i < w->n; i++) {
        const struct sample *x = &w->s[i];
        const struct kb_proc_sample *p = &x->p;
        double dt = i ? x->t - w->s[i - 1].t : 0;
        int prev = i && w->s[i - 1].have_procs && x->have_procs && dt > 0;
        fprintf(f, "%.3f,", x->t - w->s[0].t);
        cell(f, x->have_procs, "%.6f", p->cpu_seconds, ',');
        cell(f, prev, "%.4f", prev ? (p->cpu_seconds - w->s[i - 1].p.cpu_seconds) / dt : NAN, ',');
        cell(f, x->have_procs, "%.0f", (double)p->rss_bytes, ',');
        cell(f, x->have_procs && p->pss_bytes >= 0, "%.0f", (double)p->pss_bytes, ',');
        cell(f, x->have_procs, "%.0f", (double)p->fds, ',');
        cell(f, x->have_procs, "%.0f", (double)p->threads, ',');
        cell(f, x->have_procs, "%.0f", (double)p->nprocs, ',');
        cell(f, 1, "%.4f", x->steal_srv, ',');
        cell(f, 1, "%.4f", x->steal_cli, '\n');
    }
    return ferror(f) ? -1 : 0;
}

int kb_procwatch_write_csv(const struct kb_procwatch *w, const char *path, char *err,
                           size_t errlen)
{
    return kb_afile_write_with(path, fill_csv, w, err, errlen);
}

int kb_procwatch_has_server(const struct kb_procwatch_cfg *cfg)
{
    return (cfg->pids && cfg->npids > 0) || cfg->cgroup;
}

void kb_procwatch_server_cpus(const struct kb_procwatch_cfg *cfg, char *out, size_t outlen)
{
    cpu_set_t set, all;
    int any = 0;
    out[0] = '\0';
    CPU_ZERO(&all);
    for (int i = 0; cfg->pids && i < cfg->npids; i++)
        if (!sched_getaffinity(cfg->pids[i], sizeof(set), &set)) {
            CPU_OR(&all, &all, &set);
            any = 1;
        }
    if (any)
        kb_cpulist_format(&all, out, outlen);
    else if (cfg->cgroup && kb_cgfile_line(cfg->cgroup, "cpuset.cpus.effective", out, outlen) < 0)
        out[0] = '\0';
}

static int listed(const pid_t *v, size_t n, pid_t p)
{
    for (size_t i = 0; i < n; i++)
        if (v[i] == p)
            return 1;
    return 0;
}

size_t kb_procwatch_procs(const struct kb_procwatch_cfg *cfg, pid_t *out, size_t max)
{
    pid_t tree[PIDS_MAX];
    size_t n = 0;
    if (!(cfg->pids && cfg->npids > 0))
        return cfg->cgroup ? kb_cgfile_procs(cfg->cgroup, out, max) : 0;
    /* nginx's master and worker given both: the worker is in the master's tree too */
    for (int i = 0; i < cfg->npids; i++) {
        size_t t = kb_procs_tree(cfg->pids[i], tree, PIDS_MAX);
        for (size_t k = 0; k < t && n < max; k++)
            if (!listed(out, n, tree[k]))
                out[n++] = tree[k];
    }
    return n;
}
