/* statsampler.c -- see statsampler.h. One thread, one mutex: the thread appends, the caller
 * reads the newest sample while the thread runs and the whole series after it stops. */
#define _GNU_SOURCE
#include "runner/run/qualify/statsampler.h"

#include "runner/load/preflight.h"
#include "runner/run/fixture.h"
#include "runner/util/clock.h"
#include "runner/util/atomicfile.h"

#include <errno.h>
#include <pthread.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#define READ_TIMEOUT_MS 1000

struct kb_stats_sampler {
    char path[256];
    struct kb_afile file;          /* the evidence file, under its temporary name */
    struct kb_http_conn conn;      /* the thread's own, kept open */
    double every_s, t0;
    pthread_t thread;
    int started, stopped;
    pthread_mutex_t mu;
    int stop;                      /* under mu */
    int write_failed;              /* errno of the first failed write, 0 when none */
    struct kb_stats_sample *v;
    size_t n, cap;
    size_t latest;                 /* index + 1 of the newest successful sample, 0: none */
};

static void utc_ms(char *buf, size_t len)
{
    struct timespec ts;
    struct tm tm;
    char sec[32];
    clock_gettime(CLOCK_REALTIME, &ts);
    gmtime_r(&ts.tv_sec, &tm);
    strftime(sec, sizeof(sec), "%Y-%m-%dT%H:%M:%S", &tm);
    snprintf(buf, len, "%s.%03ldZ", sec, ts.tv_nsec / 1000000);
}

/* One GET: the parsed object, or NULL with err. */
static json_t *read_stats(struct kb_stats_sampler *s, char *err, size_t errlen)
{
    struct kb_http_reply rep;
    json_error_t je;
    json_t *j;
    if (kb_http_conn_get(&s->conn, s->path, READ_TIMEOUT_MS, &rep, err, errlen) < 0)
        return NULL;
    if (rep.status != 200 || rep.body_truncated) {
        snprintf(err, errlen, "%.64s answered %d%s", s->path, rep.status,
                 rep.body_truncated ? " with a body cut at 4 KiB" : "");
        return NULL;
    }
    if (!(j = json_loadb(rep.body, rep.body_len, 0, &je)) || !json_is_object(j)) {
        snprintf(err, errlen, "%.64s: not a JSON object (%.120s)", s->path, j ? "" : je.text);
        json_decref(j);
        return NULL;
    }
    return j;
}

/* The sample's evidence line; a failed write is remembered, and the file stops there. */
static void write_line(struct kb_stats_sampler *s, const struct kb_stats_sample *x,
                       double read_ms, const char *err)
{
    char utc[48];
    json_t *line;
    char *text;
    if (s->write_failed)
        return;
    utc_ms(utc, sizeof(utc));
    line = json_pack("{s:f,s:s,s:f,s:I,s:b}", "t_s", x->t_s, "utc", utc, "read_ms", read_ms,
                     "conn", (json_int_t)s->conn.opened, "ok", x->ok);
    if (x->ok)
        json_object_set(line, "stats", x->stats);
    else
        json_object_set_new(line, "error", json_string(err));
    text = line ? json_dumps(line, JSON_COMPACT | JSON_PRESERVE_ORDER | JSON_REAL_PRECISION(6))
                : NULL;
    if (!text || fprintf(s->file.f, "%s\n", text) < 0 || fflush(s->file.f) != 0)
        s->write_failed = errno ? errno : EIO;
    free(text);
    json_decref(line);
}

static void append(struct kb_stats_sampler *s, struct kb_stats_sample *x)
{
    pthread_mutex_lock(&s->mu);
    if (s->n == s->cap) {
        size_t cap = s->cap ? s->cap * 2 : 1024;
        struct kb_stats_sample *v = realloc(s->v, cap * sizeof(*v));
        if (v) {
            s->v = v;
            s->cap = cap;
        }
    }
    if (s->n < s->cap) {
        s->v[s->n++] = *x;
        if (x->ok)
            s->latest = s->n;
    } else {
        json_decref(x->stats);     /* out of memory: the line is in the file all the same */
    }
    pthread_mutex_unlock(&s->mu);
}

static int stopping(struct kb_stats_sampler *s)
{
    int v;
    pthread_mutex_lock(&s->mu);
    v = s->stop;
    pthread_mutex_unlock(&s->mu);
    return v;
}

static void *run(void *arg)
{
    struct kb_stats_sampler *s = arg;
    kb_mono_t every = (kb_mono_t)(s->every_s * 1e9), next = kb_mono_now();
    while (!stopping(s)) {
        char err[256] = "";
        struct kb_stats_sample x = { 0 };
        double start = kb_fixture_now_s();
        x.t_s = start - s->t0;
        x.stats = read_stats(s, err, sizeof(err));
        x.ok = x.stats != NULL;
        write_line(s, &x, (kb_fixture_now_s() - start) * 1e3, err);
        append(s, &x);
        next += every;
        while (next < kb_mono_now())     /* late: skip the missed ticks, no burst */
            next += every;
        kb_mono_sleep_until(next);
    }
    return NULL;
}

struct kb_stats_sampler *kb_stats_sampler_start(const char *host, int port, const char *path,
                                                double every_s, double t0, const char *out,
                                                char *err, size_t errlen)
{
    struct kb_stats_sampler *s = calloc(1, sizeof(*s));
    sigset_t all, old;
    int rc;
    if (!s) {
        snprintf(err, errlen, "stats sampler: out of memory");
        return NULL;
    }
    kb_http_conn_init(&s->conn, host && *host ? host : NULL, port);
    snprintf(s->path, sizeof(s->path), "%s", path);
    s->every_s = every_s;
    s->t0 = t0;
    pthread_mutex_init(&s->mu, NULL);
    if (kb_afile_open(&s->file, out, err, errlen) < 0) {
        kb_stats_sampler_free(s);
        return NULL;
    }
    sigfillset(&all);
    pthread_sigmask(SIG_SETMASK, &all, &old);    /* the thread inherits: no signal for it */
    rc = pthread_create(&s->thread, NULL, run, s);
    pthread_sigmask(SIG_SETMASK, &old, NULL);
    if (rc != 0) {
        snprintf(err, errlen, "stats sampler: pthread_create: %s", strerror(rc));
        kb_stats_sampler_free(s);
        return NULL;
    }
    s->started = 1;
    return s;
}

json_t *kb_stats_sampler_latest(struct kb_stats_sampler *s, double *t_s)
{
    json_t *j = NULL;
    pthread_mutex_lock(&s->mu);
    if (s->latest) {
        j = json_deep_copy(s->v[s->latest - 1].stats);
        *t_s = s->v[s->latest - 1].t_s;
    }
    pthread_mutex_unlock(&s->mu);
    return j;
}

int kb_stats_sampler_stop(struct kb_stats_sampler *s, int keep, char *err, size_t errlen)
{
    if (s->stopped)
        return 0;
    s->stopped = 1;
    if (s->started) {
        pthread_mutex_lock(&s->mu);
        s->stop = 1;
        pthread_mutex_unlock(&s->mu);
        pthread_join(s->thread, NULL);
        kb_http_conn_close(&s->conn);
    }
    if (!s->file.f)
        return 0;
    if (!s->started || !keep) {    /* never ran, or not to be kept: no series */
        kb_afile_abort(&s->file);
        return 0;
    }
    if (s->write_failed) {
        snprintf(err, errlen, "writing %s: %s", s->file.path, strerror(s->write_failed));
        kb_afile_abort(&s->file);
        return -1;
    }
    return kb_afile_commit(&s->file, err, errlen);
}

const struct kb_stats_sample *kb_stats_sampler_series(const struct kb_stats_sampler *s,
                                                      size_t *n)
{
    *n = s->n;
    return s->v;
}

void kb_stats_sampler_free(struct kb_stats_sampler *s)
{
    char err[256];
    if (!s)
        return;
    kb_stats_sampler_stop(s, 0, err, sizeof(err));
    for (size_t i = 0; i < s->n; i++)
        json_decref(s->v[i].stats);
    free(s->v);
    pthread_mutex_destroy(&s->mu);
    free(s);
}
