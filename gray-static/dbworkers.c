/* dbworkers.c -- see dbworkers.h.
 *
 * One mutex guards the queue, the done list, every worker's state and the counters; a
 * worker holds it only between queries, never across PQconnectdb or PQexecParams. The done
 * list hands finished jobs back to the loop through one eventfd. */
#define _GNU_SOURCE
#include "gray-static/dbworkers.h"

#include "gray-static/pqdl.h"

#include <errno.h>
#include <pthread.h>
#include <signal.h>
#include <stdlib.h>
#include <string.h>
#include <sys/epoll.h>
#include <sys/eventfd.h>
#include <time.h>
#include <unistd.h>

enum wstate { W_CONNECTING, W_IDLE, W_BUSY, W_DOWN };

struct gs_dbw_job {
    struct gs_dbw_job *next;
    const char *sql;
    char param[GS_DBWORKERS_PARAM_MAX];
    gs_dbw_cb cb;
    void *arg;
    uint64_t token;
    int dropped;
    enum pg_outcome outcome;
    PGresult *res;
};

struct worker {
    struct gs_dbworkers *w;
    pthread_t thr;
    int started;
    PGconn *pg;                /* NULL: down */
    PGcancel *cancel;          /* for the shutdown; swapped under the mutex */
    enum wstate state;
    long long next_try_ms;
};

struct counts {
    long queued, busy, idle, connecting, down;
    long queries, errors, unavailable, reconnects;
};

struct gs_dbworkers {
    struct gs_loop *loop;
    char *conninfo;
    struct gs_stats *st;
    FILE *log;
    long queue_max;
    int nworkers, efd, stopping;
    pthread_mutex_t mu;
    pthread_cond_t cv;                /* a job for a connected worker, or stop */
    pthread_cond_t cv_down;           /* a job nobody connected can take, or stop */
    struct gs_dbw_job *head, *tail;   /* FIFO waiting for a worker */
    struct gs_dbw_job *done;          /* finished, for the loop (any order) */
    struct counts n;
    struct worker *ws;
};

static long long now_ms(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (long long)ts.tv_sec * 1000 + ts.tv_nsec / 1000000;
}

static void note(struct gs_dbworkers *w, const char *what, const char *why)
{
    if (w->log) {
        flockfile(w->log);
        fprintf(w->log, "gray-static: db (blocking workers): %s: %s", what,
                why && *why ? why : "\n");
        fflush(w->log);
        funlockfile(w->log);
    }
}

/* ---- a worker's state (under the mutex) -------------------------------------------- */

static long *count_of(struct counts *n, enum wstate s)
{
    return s == W_CONNECTING ? &n->connecting : s == W_IDLE ? &n->idle
         : s == W_BUSY ? &n->busy : &n->down;
}

static void set_state(struct worker *k, enum wstate s)
{
    (*count_of(&k->w->n, k->state))--;
    (*count_of(&k->w->n, s))++;
    k->state = s;
}

/* ---- a worker's connection (outside the mutex, but for the swaps) --------------------- */

static void drop_conn(struct worker *k, const char *why)
{
    struct gs_dbworkers *w = k->w;
    PGcancel *c;

    note(w, "connection lost", why);
    pthread_mutex_lock(&w->mu);
    c = k->cancel;
    k->cancel = NULL;
    pthread_mutex_unlock(&w->mu);
    PQfreeCancel(c);
    PQfinish(k->pg);
    k->pg = NULL;
    k->next_try_ms = now_ms() + GS_DBWORKERS_RETRY_MS;
}

/* Open this worker's connection (outside the mutex). 1 when it is up. */
static int connect_worker(struct worker *k)
{
    struct gs_dbworkers *w = k->w;
    PGcancel *c;

    k->pg = PQconnectdb(w->conninfo);
    if (!k->pg || PQstatus(k->pg) != CONNECTION_OK) {
        note(w, "connect failed", k->pg ? PQerrorMessage(k->pg) : "out of memory\n");
        PQfinish(k->pg);
        k->pg = NULL;
        k->next_try_ms = now_ms() + GS_DBWORKERS_RETRY_MS;
        return 0;
    }
    c = PQgetCancel(k->pg);
    pthread_mutex_lock(&w->mu);
    k->cancel = c;
    w->n.reconnects++;
    pthread_mutex_unlock(&w->mu);
    return 1;
}

/* Run the job on this worker's connection: the worker is parked in PQexecParams until
 * PostgreSQL answers. Sets the job's outcome and result. */
static void run_job(struct worker *k, struct gs_dbw_job *j)
{
    const char *values[1] = { j->param };
    PGresult *r;

    r = PQexecParams(k->pg, j->sql, 1, NULL, values, NULL, NULL, 0);
    if (r && PQresultStatus(r) == PGRES_TUPLES_OK) {
        j->outcome = PG_OK;
        j->res = r;
        return;
    }
    if (PQstatus(k->pg) == CONNECTION_BAD) {
        PQclear(r);
        drop_conn(k, PQerrorMessage(k->pg));
        j->outcome = PG_UNAVAILABLE;
        return;
    }
    if (!__atomic_load_n(&k->w->stopping, __ATOMIC_RELAXED)) /* else cancelled by us */
        note(k->w, "query failed", r ? PQresultErrorMessage(r) : PQerrorMessage(k->pg));
    PQclear(r);
    j->outcome = PG_ERROR;
}

/* ---- the worker thread ------------------------------------------------------------- */

/* ran: a worker ran the job (a dropped job that never ran is counted nowhere). */
static void hand_back(struct gs_dbworkers *w, struct gs_dbw_job *j, int ran)
{
    static const uint64_t one = 1;

    j->next = w->done;
    w->done = j;
    if (!ran)
        ;
    else if (j->outcome == PG_OK)
        w->n.queries++;
    else if (j->outcome == PG_ERROR)
        w->n.errors++;
    else
        w->n.unavailable++;
    if (write(w->efd, &one, sizeof(one)) < 0 && errno != EAGAIN)
        note(w, "eventfd", strerror(errno));
}

static struct gs_dbw_job *take(struct gs_dbworkers *w)
{
    struct gs_dbw_job *j = w->head;

    if ((w->head = j->next) == NULL)
        w->tail = NULL;
    w->n.queued--;
    return j;
}

/* A worker without a connection: (re)connect when its retry delay has passed; meanwhile
 * leave the queue to connected workers, unless none is up or coming up (the database is
 * unreachable), when the queue is answered PG_UNAVAILABLE at once. Under the mutex. */
static void while_down(struct worker *k)
{
    struct gs_dbworkers *w = k->w;
    long long now = now_ms();

    if (w->head && w->n.idle + w->n.busy + w->n.connecting == 0) {
        struct gs_dbw_job *j = take(w);
        j->outcome = PG_UNAVAILABLE;
        hand_back(w, j, !j->dropped);
    } else if (now >= k->next_try_ms) {
        set_state(k, W_CONNECTING);
        pthread_mutex_unlock(&w->mu);
        connect_worker(k);
        pthread_mutex_lock(&w->mu);
        set_state(k, k->pg ? W_IDLE : W_DOWN);
    } else {
        struct timespec until;
        clock_gettime(CLOCK_REALTIME, &until);
        until.tv_nsec += (long)(k->next_try_ms - now) * 1000000L;
        until.tv_sec += until.tv_nsec / 1000000000L;
        until.tv_nsec %= 1000000000L;
        pthread_cond_timedwait(&w->cv_down, &w->mu, &until);
    }
}

static void *worker_main(void *arg)
{
    struct worker *k = arg;
    struct gs_dbworkers *w = k->w;

    pthread_mutex_lock(&w->mu);
    while (!w->stopping) {
        struct gs_dbw_job *j;

        if (!k->pg) {
            while_down(k);
            continue;
        }
        if (!w->head) {
            pthread_cond_wait(&w->cv, &w->mu);
            continue;
        }
        j = take(w);
        if (j->dropped) {                /* its client left while it waited */
            hand_back(w, j, 0);
            continue;
        }
        set_state(k, W_BUSY);
        pthread_mutex_unlock(&w->mu);
        run_job(k, j);
        pthread_mutex_lock(&w->mu);
        set_state(k, k->pg ? W_IDLE : W_DOWN);
        hand_back(w, j, 1);
    }
    pthread_mutex_unlock(&w->mu);
    return NULL;
}

/* ---- the loop's side --------------------------------------------------------------- */

void gs_dbworkers_sync(struct gs_dbworkers *w)
{
    struct gs_stats *st = w->st;

    pthread_mutex_lock(&w->mu);
    st->queued = w->n.queued;
    st->pool_busy = st->queries_in_flight = w->n.busy;
    st->pool_idle = w->n.idle;
    st->pool_connecting = w->n.connecting;
    st->pool_down = w->n.down;
    st->db_reachable = w->n.down < w->nworkers;
    st->queries_total = w->n.queries;
    st->errors = w->n.errors;
    st->unavailable = w->n.unavailable;
    st->reconnects = w->n.reconnects;
    pthread_mutex_unlock(&w->mu);
}

/* Finished jobs, answered on the loop in the order the list gives them. */
static void on_done_ready(void *arg, uint32_t events)
{
    struct gs_dbworkers *w = arg;
    struct gs_dbw_job *j, *next;
    uint64_t v;

    (void)events;
    if (read(w->efd, &v, sizeof(v)) < 0 && errno != EAGAIN)
        note(w, "eventfd", strerror(errno));
    pthread_mutex_lock(&w->mu);
    j = w->done;
    w->done = NULL;
    pthread_mutex_unlock(&w->mu);
    gs_dbworkers_sync(w);
    for (; j; j = next) {
        next = j->next;
        if (!j->dropped)
            j->cb(j->token, j->outcome, j->res, j->arg);
        PQclear(j->res);
        free(j);
    }
}

enum pg_outcome gs_dbworkers_submit(struct gs_dbworkers *w, const char *sql, const char *param,
                                    gs_dbw_cb cb, void *arg, uint64_t token,
                                    struct gs_dbw_job **job)
{
    struct gs_dbw_job *j;

    *job = NULL;
    pthread_mutex_lock(&w->mu);
    if (w->n.queued >= w->queue_max) {
        w->n.unavailable++;
        pthread_mutex_unlock(&w->mu);
        return PG_UNAVAILABLE;
    }
    if (strlen(param) >= sizeof(j->param) || !(j = calloc(1, sizeof(*j)))) {
        w->n.errors++;
        pthread_mutex_unlock(&w->mu);
        return PG_ERROR;
    }
    j->sql = sql;
    memcpy(j->param, param, strlen(param) + 1);
    j->cb = cb;
    j->arg = arg;
    j->token = token;
    if (w->tail)
        w->tail->next = j;
    else
        w->head = j;
    w->tail = j;
    w->n.queued++;
    pthread_cond_signal(&w->cv);
    if (w->n.idle + w->n.busy + w->n.connecting == 0)
        pthread_cond_signal(&w->cv_down);   /* nobody up: a down worker answers it */
    pthread_mutex_unlock(&w->mu);
    *job = j;
    return PG_OK;
}

void gs_dbworkers_drop(struct gs_dbworkers *w, struct gs_dbw_job *job)
{
    pthread_mutex_lock(&w->mu);
    job->dropped = 1;
    pthread_mutex_unlock(&w->mu);
}

/* ---- lifecycle --------------------------------------------------------------------- */

/* Workers start with every signal blocked: SIGTERM and SIGINT are the loop's to take
 * (gs_server_catch_signals), whenever the server gets round to blocking them. */
static int start_workers(struct gs_dbworkers *w, char *err, size_t errlen)
{
    sigset_t all, old;
    int rc = 0;

    sigfillset(&all);
    pthread_sigmask(SIG_BLOCK, &all, &old);
    for (int i = 0; i < w->nworkers && rc == 0; i++) {
        int e;

        w->ws[i].w = w;
        w->ws[i].state = W_CONNECTING;
        w->n.connecting++;
        if ((e = pthread_create(&w->ws[i].thr, NULL, worker_main, &w->ws[i])) != 0) {
            snprintf(err, errlen, "worker thread: %s", strerror(e));
            rc = -1;
        } else {
            w->ws[i].started = 1;
        }
    }
    pthread_sigmask(SIG_SETMASK, &old, NULL);
    return rc;
}

struct gs_dbworkers *gs_dbworkers_new(struct gs_loop *loop, const struct gs_dbworkers_config *c,
                                      char *err, size_t errlen)
{
    struct gs_dbworkers *w;

    if (c->workers < 1 || c->workers > GS_DBWORKERS_MAX || c->queue_max < 0) {
        snprintf(err, errlen, "workers must be 1..%d", GS_DBWORKERS_MAX);
        return NULL;
    }
    if (gs_pq_load(err, errlen) < 0)
        return NULL;
    if (!(w = calloc(1, sizeof(*w))) || !(w->conninfo = strdup(c->conninfo))
        || !(w->ws = calloc((size_t)c->workers, sizeof(*w->ws)))) {
        snprintf(err, errlen, "out of memory");
        if (w)
            free(w->conninfo);
        free(w);
        return NULL;
    }
    w->loop = loop;
    w->st = c->stats;
    w->log = c->log;
    w->queue_max = c->queue_max;
    w->nworkers = c->workers;
    w->st->db_enabled = 1;
    w->st->pool_size = c->workers;
    pthread_mutex_init(&w->mu, NULL);
    pthread_cond_init(&w->cv, NULL);
    pthread_cond_init(&w->cv_down, NULL);
    if ((w->efd = eventfd(0, EFD_NONBLOCK | EFD_CLOEXEC)) < 0
        || gs_loop_add(loop, w->efd, EPOLLIN, on_done_ready, w) < 0) {
        snprintf(err, errlen, "eventfd: %s", strerror(errno));
        gs_dbworkers_free(w);
        return NULL;
    }
    if (start_workers(w, err, errlen) < 0) {
        gs_dbworkers_free(w);
        return NULL;
    }
    gs_dbworkers_sync(w);
    return w;
}

/* Stop taking jobs and cut short the queries workers are parked on, so the joins are quick. */
static void stop_workers(struct gs_dbworkers *w)
{
    char why[256];

    pthread_mutex_lock(&w->mu);
    __atomic_store_n(&w->stopping, 1, __ATOMIC_RELAXED);
    for (int i = 0; i < w->nworkers; i++)
        if (w->ws[i].state == W_BUSY && w->ws[i].cancel)
            PQcancel(w->ws[i].cancel, why, (int)sizeof(why));
    pthread_cond_broadcast(&w->cv);
    pthread_cond_broadcast(&w->cv_down);
    pthread_mutex_unlock(&w->mu);
    for (int i = 0; i < w->nworkers; i++)
        if (w->ws[i].started)
            pthread_join(w->ws[i].thr, NULL);
}

static void free_jobs(struct gs_dbw_job *j)
{
    for (struct gs_dbw_job *next; j; j = next) {
        next = j->next;
        PQclear(j->res);
        free(j);
    }
}

void gs_dbworkers_free(struct gs_dbworkers *w)
{
    if (!w)
        return;
    stop_workers(w);
    for (int i = 0; i < w->nworkers; i++) {
        PQfreeCancel(w->ws[i].cancel);
        PQfinish(w->ws[i].pg);
    }
    free_jobs(w->head);
    free_jobs(w->done);
    if (w->efd >= 0) {
        gs_loop_del(w->loop, w->efd);
        close(w->efd);
    }
    pthread_cond_destroy(&w->cv);
    pthread_cond_destroy(&w->cv_down);
    pthread_mutex_destroy(&w->mu);
    free(w->ws);
    free(w->conninfo);
    free(w);
}
