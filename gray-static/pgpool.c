/* pgpool.c -- see pgpool.h.
 *
 * Design. Each connection is a small state machine advanced only from the loop:
 *
 *   DOWN --timer--> CONNECTING --PQconnectPoll OK--> PREPARING --all prepared--> IDLE
 *   IDLE --job--> BUSY --result drained to NULL--> IDLE
 *   any --failure--> DOWN (reconnect after backoff)      BUSY --cancel--> retired, CONNECTING
 *
 * Jobs live in an array of slots addressed by index; a ticket carries the slot's
 * generation, bumped whenever the slot is freed, so a late cancel or a stale index can
 * never touch a newer job. Waiting jobs form a doubly linked FIFO through the slots.
 * Callbacks run only from loop events or timers, after the pool's state is consistent,
 * so a callback may submit or cancel freely. Failing the queue when the database becomes
 * unreachable is deferred to a zero-delay timer for the same reason. */
#define _POSIX_C_SOURCE 200809L
#include "gray-static/pgpool.h"
#include "gray-static/pqdl.h"

#include <stdlib.h>
#include <string.h>
#include <sys/epoll.h>
#include <time.h>

#define CONNECT_TIMEOUT_MS 5000

enum conn_state { C_DOWN, C_CONNECTING, C_PREPARING, C_IDLE, C_BUSY };
enum job_state { J_FREE, J_QUEUED, J_RUNNING };

struct pg_conn {
    struct pg_pool *pool;
    PGconn *pg;
    int fd;                /* registered in the loop; -1 when none */
    uint32_t events;
    enum conn_state state;
    size_t stmt_i;         /* next statement to prepare */
    uint32_t job;          /* running job's slot + 1; 0 when none */
    PGresult *res;         /* first result of the command in progress */
    char errmsg[256];      /* first error result's message */
    long timer;            /* reconnect or connect-timeout timer; 0 when none */
    long backoff_ms;
};

struct pg_job {
    uint32_t gen;
    uint32_t prev, next;   /* queue links or free list (slot + 1; 0 = none) */
    enum job_state state;
    size_t stmt;
    int nparams;
    pg_done_cb cb;
    void *arg;
    uint64_t token;
    char params[PG_MAX_PARAMS][PG_PARAM_LEN];
    long long due_ms;      /* submission + timeout (monotonic) */
};

struct pg_pool {
    struct gs_loop *loop;
    char *conninfo;
    struct pg_stmt *stmts;
    size_t nstmts;
    struct pg_conn *conns;
    int size;
    int *idle;             /* stack of idle connection indices */
    int nidle;
    struct pg_job *jobs;
    uint32_t njobs;
    uint32_t free_head, q_head, q_tail;
    long backoff_min, backoff_max;
    FILE *log;
    struct gs_stats *st;
    struct gs_stats own;   /* used when the caller gave no stats */
    int reachable;
    long fail_timer;
    long timeout_ms;       /* < 0: jobs never time out */
    long sweep_timer;      /* looks for overdue jobs while any are pending */
};

static void conn_open(struct pg_conn *c);
static void dispatch(struct pg_pool *p);
static void arm_sweep(struct pg_pool *p);

/* ---- small helpers ---------------------------------------------------------------- */

/* One line per event: libpq's multi-line messages are folded, the trailing newline cut. */
static void plog(struct pg_pool *p, const char *what, const char *msg)
{
    char line[512];
    size_t n;

    if (!p->log)
        return;
    snprintf(line, sizeof(line), "%s", msg ? msg : "");
    for (char *q = line; *q; q++)
        if (*q == '\n' || *q == '\t')
            *q = ' ';
    n = strlen(line);
    while (n > 0 && line[n - 1] == ' ')
        line[--n] = '\0';
    fprintf(p->log, "gray-static: db: %s%s%s\n", what, n ? ": " : "", line);
    fflush(p->log);
}

static long *state_counter(struct pg_pool *p, enum conn_state s)
{
    switch (s) {
    case C_DOWN: return &p->st->pool_down;
    case C_CONNECTING: case C_PREPARING: return &p->st->pool_connecting;
    case C_IDLE: return &p->st->pool_idle;
    case C_BUSY: return &p->st->pool_busy;
    }
    return &p->st->pool_down;
}

static void idle_remove(struct pg_pool *p, int idx)
{
    for (int i = 0; i < p->nidle; i++)
        if (p->idle[i] == idx) {
            p->idle[i] = p->idle[--p->nidle];
            return;
        }
}

static void set_state(struct pg_conn *c, enum conn_state s)
{
    struct pg_pool *p = c->pool;
    int idx = (int)(c - p->conns);

    if (c->state == C_IDLE)
        idle_remove(p, idx);
    (*state_counter(p, c->state))--;
    c->state = s;
    (*state_counter(p, s))++;
    if (s == C_IDLE)
        p->idle[p->nidle++] = idx;
}

static struct pg_job *job_at(struct pg_pool *p, uint32_t slot1)
{
    return &p->jobs[slot1 - 1];
}

static int usable(const struct pg_conn *c)
{
    return c->state == C_PREPARING || c->state == C_IDLE || c->state == C_BUSY;
}

/* ---- loop registration ------------------------------------------------------------ */

static void conn_io(void *arg, uint32_t events);

static void unwatch(struct pg_conn *c)
{
    if (c->fd >= 0)
        gs_loop_del(c->pool->loop, c->fd);
    c->fd = -1;
    c->events = 0;
}

/* libpq may change its socket while connecting (another address), so re-register then. */
static int watch(struct pg_conn *c, uint32_t events)
{
    int fd = PQsocket(c->pg);

    if (fd < 0)
        return -1;
    if (fd == c->fd && events == c->events)
        return 0;
    if (fd == c->fd && gs_loop_mod(c->pool->loop, fd, events, conn_io, c) == 0) {
        c->events = events;
        return 0;
    }
    unwatch(c);
    if (gs_loop_add(c->pool->loop, fd, events, conn_io, c) != 0)
        return -1;
    c->fd = fd;
    c->events = events;
    return 0;
}

static void timer_cancel(struct pg_conn *c)
{
    if (c->timer)
        gs_loop_cancel(c->pool->loop, c->timer);
    c->timer = 0;
}

/* ---- the job table ---------------------------------------------------------------- */

static uint32_t job_alloc(struct pg_pool *p)
{
    uint32_t s;

    if (!p->free_head) {
        uint32_t n = p->njobs ? p->njobs * 2 : 64;
        struct pg_job *j = realloc(p->jobs, n * sizeof(*j));
        if (!j)
            return 0;
        memset(j + p->njobs, 0, (n - p->njobs) * sizeof(*j));
        for (uint32_t i = n; i > p->njobs; i--) {
            j[i - 1].next = p->free_head;
            p->free_head = i;
        }
        p->jobs = j;
        p->njobs = n;
    }
    s = p->free_head;
    p->free_head = job_at(p, s)->next;
    return s;
}

static void job_free(struct pg_pool *p, uint32_t s)
{
    struct pg_job *j = job_at(p, s);

    j->gen++;
    j->state = J_FREE;
    j->prev = 0;
    j->next = p->free_head;
    p->free_head = s;
}

static void queue_push(struct pg_pool *p, uint32_t s, int front)
{
    struct pg_job *j = job_at(p, s);

    j->state = J_QUEUED;
    j->prev = j->next = 0;
    if (!p->q_head) {
        p->q_head = p->q_tail = s;
    } else if (front) {
        j->next = p->q_head;
        job_at(p, p->q_head)->prev = s;
        p->q_head = s;
    } else {
        j->prev = p->q_tail;
        job_at(p, p->q_tail)->next = s;
        p->q_tail = s;
    }
    p->st->queued++;
}

static void queue_unlink(struct pg_pool *p, uint32_t s)
{
    struct pg_job *j = job_at(p, s);

    if (j->prev)
        job_at(p, j->prev)->next = j->next;
    else
        p->q_head = j->next;
    if (j->next)
        job_at(p, j->next)->prev = j->prev;
    else
        p->q_tail = j->prev;
    j->prev = j->next = 0;
    p->st->queued--;
}

/* Free the slot first, then call back: the callback sees a consistent pool. */
static void job_finish(struct pg_pool *p, uint32_t s, enum pg_outcome o, const PGresult *res,
                       const char *msg)
{
    struct pg_job *j = job_at(p, s);
    pg_done_cb cb = j->cb;
    void *arg = j->arg;
    uint64_t token = j->token;

    job_free(p, s);
    cb(token, o, res, msg, arg);
}

/* ---- reachability ----------------------------------------------------------------- */

static void fail_queue(void *arg)
{
    struct pg_pool *p = arg;

    p->fail_timer = 0;
    while (p->q_head && !p->reachable) {
        uint32_t s = p->q_head;
        queue_unlink(p, s);
        p->st->unavailable++;
        job_finish(p, s, PG_UNAVAILABLE, NULL, "database unreachable");
    }
}

/* While unreachable, waiting jobs get their 503 from a zero-delay timer, never from inside
 * pg_pool_submit or pg_pool_cancel. */
static void schedule_fail(struct pg_pool *p)
{
    if (!p->reachable && p->q_head && !p->fail_timer)
        p->fail_timer = gs_loop_after(p->loop, 0, fail_queue, p);
}

/* After a failure: when no connection is usable any more, the database is unreachable;
 * waiting jobs get their 503 (deferred), new ones are refused until a connection works. */
static void check_unreachable(struct pg_pool *p, const char *msg)
{
    for (int i = 0; i < p->size; i++)
        if (usable(&p->conns[i]))
            return;
    if (p->reachable)
        plog(p, "database unreachable, answering 503 and reconnecting", msg);
    p->reachable = 0;
    p->st->db_reachable = 0;
    schedule_fail(p);
}

/* ---- connection lifecycle --------------------------------------------------------- */

static void conn_close(struct pg_conn *c)
{
    unwatch(c);
    timer_cancel(c);
    if (c->res)
        PQclear(c->res);
    c->res = NULL;
    if (c->pg)
        PQfinish(c->pg);
    c->pg = NULL;
}

static void reconnect_timer(void *arg)
{
    struct pg_conn *c = arg;

    c->timer = 0;
    conn_open(c);
}

/* Close, and try again after the connection's backoff, which doubles up to the max. */
static void conn_down(struct pg_conn *c, long delay_ms)
{
    struct pg_pool *p = c->pool;

    conn_close(c);
    set_state(c, C_DOWN);
    c->timer = gs_loop_after(p->loop, delay_ms, reconnect_timer, c);
}

static void conn_fail(struct pg_conn *c, const char *msg)
{
    struct pg_pool *p = c->pool;
    long delay = c->backoff_ms;
    char why[256];

    snprintf(why, sizeof(why), "%s", msg);        /* msg may belong to the PGconn we close */
    c->backoff_ms = c->backoff_ms * 2 > p->backoff_max ? p->backoff_max : c->backoff_ms * 2;
    conn_down(c, delay);
    check_unreachable(p, why);
}

/* An established connection broke. Its running job (returned, slot + 1) is the caller's
 * to finish or requeue. */
static uint32_t conn_lost(struct pg_conn *c, const char *msg)
{
    struct pg_pool *p = c->pool;
    uint32_t s = c->job;

    if (s)
        p->st->queries_in_flight--;
    c->job = 0;
    c->backoff_ms = p->backoff_min;
    conn_fail(c, msg);
    return s;
}

static void connect_timeout(void *arg)
{
    struct pg_conn *c = arg;

    c->timer = 0;
    conn_fail(c, "connection attempt timed out");
}

static void notice_sink(void *arg, const char *msg)
{
    plog(arg, "notice", msg);
}

static void conn_open(struct pg_conn *c)
{
    struct pg_pool *p = c->pool;

    c->pg = PQconnectStart(p->conninfo);
    if (!c->pg || PQstatus(c->pg) == CONNECTION_BAD) {
        conn_fail(c, c->pg ? PQerrorMessage(c->pg) : "out of memory");
        return;
    }
    PQsetNoticeProcessor(c->pg, notice_sink, p);
    set_state(c, C_CONNECTING);
    /* Before the first PQconnectPoll, libpq says to act as if it returned WRITING. */
    if (watch(c, EPOLLOUT) != 0) {
        conn_fail(c, "cannot watch the connection's socket");
        return;
    }
    c->timer = gs_loop_after(p->loop, CONNECT_TIMEOUT_MS, connect_timeout, c);
}

/* ---- commands: send, flush, drain ------------------------------------------------- */

/* Push queued output; watch for readability always, writability while output remains. */
static int conn_flush(struct pg_conn *c)
{
    int r = PQflush(c->pg);

    if (r < 0)
        return -1;
    return watch(c, r == 1 ? (EPOLLIN | EPOLLOUT) : EPOLLIN);
}

static int send_prepare(struct pg_conn *c)
{
    const struct pg_stmt *s = &c->pool->stmts[c->stmt_i];

    c->errmsg[0] = '\0';
    if (!PQsendPrepare(c->pg, s->name, s->sql, s->nparams, NULL))
        return -1;
    return conn_flush(c);
}

static int send_job(struct pg_conn *c, struct pg_job *j)
{
    const char *values[PG_MAX_PARAMS];

    for (int i = 0; i < j->nparams; i++)
        values[i] = j->params[i];
    c->errmsg[0] = '\0';
    if (!PQsendQueryPrepared(c->pg, c->pool->stmts[j->stmt].name, j->nparams, values, NULL, NULL, 0))
        return -1;
    return conn_flush(c);
}

/* Connected and prepared: the connection joins the idle set and takes waiting work. */
static void conn_ready(struct pg_conn *c)
{
    struct pg_pool *p = c->pool;

    c->backoff_ms = p->backoff_min;
    p->st->reconnects++;
    set_state(c, C_IDLE);
    if (watch(c, EPOLLIN) != 0) {
        conn_fail(c, "cannot watch the connection's socket");
        return;
    }
    if (!p->reachable) {
        p->reachable = 1;
        p->st->db_reachable = 1;
        plog(p, "database reachable again", NULL);
    }
    dispatch(p);
}

static void prepared_one(struct pg_conn *c)
{
    if (c->errmsg[0]) {
        char msg[300];
        snprintf(msg, sizeof(msg), "preparing %s: %s", c->pool->stmts[c->stmt_i].name, c->errmsg);
        conn_fail(c, msg);
        return;
    }
    if (++c->stmt_i < c->pool->nstmts) {
        if (send_prepare(c) != 0)
            conn_fail(c, PQerrorMessage(c->pg));
        return;
    }
    conn_ready(c);
}

/* The running job's command is complete (PQgetResult gave NULL): answer it, then the
 * connection is clean and goes back to the idle set. */
static void query_done(struct pg_conn *c)
{
    struct pg_pool *p = c->pool;
    uint32_t s = c->job;
    PGresult *res = c->res;
    enum pg_outcome o = c->errmsg[0] ? PG_ERROR : PG_OK;
    char msg[sizeof(c->errmsg)];

    memcpy(msg, c->errmsg, sizeof(msg));
    c->res = NULL;
    c->job = 0;
    p->st->queries_in_flight--;
    if (o == PG_OK) {
        p->st->queries_total++;
    } else {
        p->st->errors++;
        plog(p, "query failed, answering 500", msg);
    }
    set_state(c, C_IDLE);
    job_finish(p, s, o, o == PG_OK ? res : NULL, msg);
    PQclear(res);
    dispatch(p);
}

static void command_done(struct pg_conn *c)
{
    if (PQstatus(c->pg) == CONNECTION_BAD) {
        uint32_t s = conn_lost(c, c->errmsg[0] ? c->errmsg : PQerrorMessage(c->pg));
        if (s) {
            c->pool->st->unavailable++;
            job_finish(c->pool, s, PG_UNAVAILABLE, NULL, "database connection lost");
        }
        return;
    }
    if (c->state == C_PREPARING) {
        if (c->res)
            PQclear(c->res);
        c->res = NULL;
        prepared_one(c);
    } else if (c->state == C_BUSY) {
        query_done(c);
    }
}

/* Take every result libpq can give without blocking; the command ends at NULL. */
static void drain(struct pg_conn *c)
{
    while (!PQisBusy(c->pg)) {
        PGresult *r = PQgetResult(c->pg);
        ExecStatusType st;

        if (!r) {
            command_done(c);
            return;
        }
        st = PQresultStatus(r);
        if (st != PGRES_COMMAND_OK && st != PGRES_TUPLES_OK && !c->errmsg[0])
            snprintf(c->errmsg, sizeof(c->errmsg), "%s", PQresultErrorMessage(r));
        if (!c->res)
            c->res = r;
        else
            PQclear(r);
    }
}

static void lost_in_io(struct pg_conn *c, const char *msg)
{
    struct pg_pool *p = c->pool;
    uint32_t s = conn_lost(c, msg);

    if (s) {
        p->st->unavailable++;
        job_finish(p, s, PG_UNAVAILABLE, NULL, "database connection lost");
    }
}

/* Readiness on a connection that has a command in progress (preparing or busy). */
static void command_io(struct pg_conn *c, uint32_t events)
{
    if (events & (EPOLLIN | EPOLLERR | EPOLLHUP)) {
        if (!PQconsumeInput(c->pg)) {
            lost_in_io(c, PQerrorMessage(c->pg));
            return;
        }
    }
    if (conn_flush(c) != 0) {
        lost_in_io(c, PQerrorMessage(c->pg));
        return;
    }
    drain(c);
}

/* An idle connection became readable: the server closed it or sent a notice. */
static void idle_io(struct pg_conn *c)
{
    if (!PQconsumeInput(c->pg) || PQstatus(c->pg) == CONNECTION_BAD)
        lost_in_io(c, PQerrorMessage(c->pg));
}

static void connect_io(struct pg_conn *c)
{
    switch (PQconnectPoll(c->pg)) {
    case PGRES_POLLING_READING:
        if (watch(c, EPOLLIN) != 0)
            conn_fail(c, "cannot watch the connection's socket");
        return;
    case PGRES_POLLING_WRITING:
        if (watch(c, EPOLLOUT) != 0)
            conn_fail(c, "cannot watch the connection's socket");
        return;
    case PGRES_POLLING_OK:
        break;
    default:
        conn_fail(c, PQerrorMessage(c->pg));
        return;
    }
    timer_cancel(c);
    if (PQsetnonblocking(c->pg, 1) != 0) {
        conn_fail(c, PQerrorMessage(c->pg));
        return;
    }
    set_state(c, C_PREPARING);
    c->stmt_i = 0;
    if (c->pool->nstmts == 0)
        conn_ready(c);
    else if (send_prepare(c) != 0)
        conn_fail(c, PQerrorMessage(c->pg));
}

static void conn_io(void *arg, uint32_t events)
{
    struct pg_conn *c = arg;

    switch (c->state) {
    case C_CONNECTING: connect_io(c); break;
    case C_PREPARING: case C_BUSY: command_io(c, events); break;
    case C_IDLE: idle_io(c); break;
    case C_DOWN: break;                 /* a late event for a closed socket: ignore */
    }
}

/* ---- overdue jobs ----------------------------------------------------------------- */

static long long now_ms(void)
{
    struct timespec ts;

    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (long long)ts.tv_sec * 1000 + ts.tv_nsec / 1000000;
}

/* A running job is overdue: its connection's state is uncertain, so it is replaced. */
static void expire_running(struct pg_conn *c)
{
    struct pg_pool *p = c->pool;
    uint32_t s = c->job;

    c->job = 0;
    p->st->queries_in_flight--;
    p->st->retired++;
    p->st->timeouts++;
    p->st->unavailable++;
    plog(p, "query timed out, answering 503, connection retired", NULL);
    conn_close(c);
    set_state(c, C_DOWN);
    c->backoff_ms = p->backoff_min;
    conn_open(c);
    job_finish(p, s, PG_UNAVAILABLE, NULL, "query timed out");
}

static void sweep(void *arg)
{
    struct pg_pool *p = arg;
    long long now = now_ms();

    p->sweep_timer = 0;
    for (int i = 0; i < p->size; i++) {
        struct pg_conn *c = &p->conns[i];
        if (c->state == C_BUSY && c->job && job_at(p, c->job)->due_ms <= now)
            expire_running(c);
    }
    while (p->q_head && job_at(p, p->q_head)->due_ms <= now) {   /* FIFO: oldest first */
        uint32_t s = p->q_head;
        queue_unlink(p, s);
        p->st->timeouts++;
        p->st->unavailable++;
        job_finish(p, s, PG_UNAVAILABLE, NULL, "timed out waiting for a connection");
    }
    arm_sweep(p);
}

/* Sweep a few times per timeout while anything is pending; no timer when idle. */
static void arm_sweep(struct pg_pool *p)
{
    long every = p->timeout_ms / 4 < 250 ? p->timeout_ms / 4 : 250;

    if (p->timeout_ms < 0 || p->sweep_timer || (!p->q_head && !p->st->queries_in_flight))
        return;
    p->sweep_timer = gs_loop_after(p->loop, every > 0 ? every : 1, sweep, p);
}

/* ---- dispatch, submit, cancel ----------------------------------------------------- */

/* Start the job on the idle connection. If the connection turns out broken, the job goes
 * back to the head of the queue (no callback here) and the connection reconnects. */
static void start_job(struct pg_conn *c, uint32_t s)
{
    struct pg_pool *p = c->pool;
    struct pg_job *j = job_at(p, s);

    j->state = J_RUNNING;
    c->job = s;
    p->st->queries_in_flight++;
    set_state(c, C_BUSY);
    if (send_job(c, j) != 0) {
        conn_lost(c, PQerrorMessage(c->pg));
        queue_push(p, s, 1);
        schedule_fail(p);                 /* that may have been the last usable connection */
    }
}

static void dispatch(struct pg_pool *p)
{
    while (p->q_head && p->nidle > 0) {
        uint32_t s = p->q_head;
        queue_unlink(p, s);
        start_job(&p->conns[p->idle[p->nidle - 1]], s);
    }
}

static int find_stmt(const struct pg_pool *p, const char *name, size_t *out)
{
    for (size_t i = 0; i < p->nstmts; i++)
        if (strcmp(p->stmts[i].name, name) == 0) {
            *out = i;
            return 0;
        }
    return -1;
}

enum pg_outcome pg_pool_submit(struct pg_pool *p, const char *stmt, int nparams,
                               const char *const *params, pg_done_cb cb, void *arg,
                               uint64_t token, struct pg_ticket *ticket)
{
    size_t si;
    uint32_t s;
    struct pg_job *j;

    if (nparams < 0 || nparams > PG_MAX_PARAMS || !cb || find_stmt(p, stmt, &si) != 0)
        return PG_ERROR;
    for (int i = 0; i < nparams; i++)
        if (strlen(params[i]) >= PG_PARAM_LEN)
            return PG_ERROR;
    if (!p->reachable) {
        p->st->unavailable++;
        return PG_UNAVAILABLE;
    }
    if (!(s = job_alloc(p)))
        return PG_ERROR;
    j = job_at(p, s);
    j->stmt = si;
    j->nparams = nparams;
    j->cb = cb;
    j->arg = arg;
    j->token = token;
    for (int i = 0; i < nparams; i++)
        snprintf(j->params[i], PG_PARAM_LEN, "%s", params[i]);
    ticket->slot = s;
    ticket->gen = j->gen;
    j->due_ms = now_ms() + p->timeout_ms;
    queue_push(p, s, 0);
    arm_sweep(p);
    dispatch(p);
    return PG_OK;
}

int pg_pool_cancel(struct pg_pool *p, struct pg_ticket t)
{
    struct pg_job *j;
    struct pg_conn *c = NULL;

    if (t.slot == 0 || t.slot > p->njobs)
        return 0;
    j = job_at(p, t.slot);
    if (j->gen != t.gen || j->state == J_FREE)
        return 0;
    if (j->state == J_QUEUED) {
        queue_unlink(p, t.slot);
        job_free(p, t.slot);
        return 1;
    }
    for (int i = 0; i < p->size && !c; i++)
        if (p->conns[i].job == t.slot)
            c = &p->conns[i];
    job_free(p, t.slot);
    if (c) {
        /* Its reply is still coming: the connection cannot be reused. Replace it now. */
        c->job = 0;
        p->st->queries_in_flight--;
        p->st->retired++;
        plog(p, "client left mid-query, connection retired", NULL);
        conn_close(c);
        set_state(c, C_DOWN);
        c->backoff_ms = p->backoff_min;
        conn_open(c);
    }
    return 1;
}

int pg_pool_reachable(const struct pg_pool *p)
{
    return p->reachable;
}

/* ---- create, free ----------------------------------------------------------------- */

static int copy_config(struct pg_pool *p, const struct pg_pool_config *cfg)
{
    p->conninfo = strdup(cfg->conninfo);
    p->stmts = calloc(cfg->nstmts ? cfg->nstmts : 1, sizeof(*p->stmts));
    p->conns = calloc((size_t)cfg->size, sizeof(*p->conns));
    p->idle = calloc((size_t)cfg->size, sizeof(*p->idle));
    if (!p->conninfo || !p->stmts || !p->conns || !p->idle)
        return -1;
    for (size_t i = 0; i < cfg->nstmts; i++) {
        p->nstmts = i + 1;
        p->stmts[i].name = strdup(cfg->stmts[i].name);
        p->stmts[i].sql = strdup(cfg->stmts[i].sql);
        p->stmts[i].nparams = cfg->stmts[i].nparams;
        if (!p->stmts[i].name || !p->stmts[i].sql)
            return -1;
    }
    return 0;
}

struct pg_pool *pg_pool_new(struct gs_loop *loop, const struct pg_pool_config *cfg,
                            char *err, size_t errlen)
{
    struct pg_pool *p;

    if (!cfg->conninfo || cfg->size <= 0) {
        snprintf(err, errlen, "pool needs a conninfo and a size > 0");
        return NULL;
    }
    if (gs_pq_load(err, errlen) < 0)
        return NULL;
    if (!(p = calloc(1, sizeof(*p))) || copy_config(p, cfg) != 0) {
        snprintf(err, errlen, "out of memory");
        pg_pool_free(p);
        return NULL;
    }
    p->loop = loop;
    p->size = cfg->size;
    p->log = cfg->log;
    p->st = cfg->stats ? cfg->stats : &p->own;
    p->backoff_min = cfg->backoff_min_ms > 0 ? cfg->backoff_min_ms : 25;
    p->backoff_max = cfg->backoff_max_ms > 0 ? cfg->backoff_max_ms : 1000;
    p->timeout_ms = cfg->timeout_ms ? cfg->timeout_ms : 30000;
    p->reachable = 1;
    p->st->db_enabled = 1;
    p->st->db_reachable = 1;
    p->st->pool_size = p->size;
    p->st->pool_down += p->size;          /* every connection starts DOWN */
    for (int i = 0; i < p->size; i++) {
        p->conns[i] = (struct pg_conn){ .pool = p, .fd = -1, .state = C_DOWN,
                                        .backoff_ms = p->backoff_min };
    }
    for (int i = 0; i < p->size; i++)
        conn_open(&p->conns[i]);
    return p;
}

void pg_pool_free(struct pg_pool *p)
{
    if (!p)
        return;
    if (p->fail_timer)
        gs_loop_cancel(p->loop, p->fail_timer);
    if (p->sweep_timer)
        gs_loop_cancel(p->loop, p->sweep_timer);
    for (int i = 0; p->conns && i < p->size; i++)
        conn_close(&p->conns[i]);
    for (size_t i = 0; i < p->nstmts; i++) {
        free((char *)p->stmts[i].name);
        free((char *)p->stmts[i].sql);
    }
    free(p->stmts);
    free(p->conninfo);
    free(p->conns);
    free(p->idle);
    free(p->jobs);
    free(p);
}
