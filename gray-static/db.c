/* db.c -- see db.h.
 *
 * Design (readiness, the default). Each /db request takes a slot (struct db_req, allocated once and reused, so its
 * address is stable for the loop's callbacks) and submits its query with the token
 * (generation << 32 | slot). A slot is WAITING while its request is parked, then ANSWERED
 * (response built, connection resumed, the handler's second call queues it) or GONE (the
 * client left: query cancelled, connection resumed so MHD can close it). MHD's completion
 * notice frees the slot and bumps its generation; an answer whose token names an older
 * generation or a slot no longer WAITING is dropped.
 *
 * Blocking (--db-mode blocking): the same slots and tokens, but the query goes to a task
 * worker (dbworkers.h) parked on a synchronous libpq call; its answer comes back on the loop.
 *
 * Inline (--db-mode inline): the handler runs the query on the loop (dbblock.h) and answers
 * in the same call; nothing is parked, so the slots stay unused. */
#define _POSIX_C_SOURCE 200809L
#include "gray-static/db.h"

#include "gray-static/dbblock.h"
#include "gray-static/dbworkers.h"
#include "gray-static/pgpool.h"
#include "gray-static/pqdl.h"

#include <stdint.h>
#include <stdlib.h>
#include <string.h>
#include <sys/epoll.h>
#include <time.h>
#include <unistd.h>

#define DB_BODY_MAX 96
#define DB_SLEEP_MAX_MS 10000

enum req_state { R_FREE, R_WAITING, R_ANSWERED, R_GONE };

struct answer {
    unsigned status;
    char body[DB_BODY_MAX];
    size_t len;
};

struct db_req {
    struct gs_db *db;
    uint32_t slot, gen, next_free;   /* next_free: slot + 1, 0 = none */
    enum req_state state;
    struct gs_request *req;
    struct pg_ticket ticket;         /* readiness: the pool's name for the query */
    struct gs_dbw_job *job;          /* blocking: the workers' name for it */
    int fd;                          /* client socket watched for EPOLLRDHUP; -1 none */
    int sleep_route;                 /* answer shape: /db-sleep rather than /db */
    struct answer ans;
};

struct gs_db {
    struct gs_server *srv;
    struct gs_loop *loop;
    struct pg_pool *pool;            /* readiness: NULL without a conninfo */
    struct gs_dbworkers *workers;    /* blocking: NULL otherwise */
    struct gs_dbblock *block;        /* inline: NULL otherwise */
    struct gs_stats st;
    long world_rows;
    uint64_t rng;
    FILE *log;
    struct db_req **reqs;
    uint32_t nreqs, free_head;
};

/* Every design sends the same SQL: the readiness pool prepares it once per connection, the
 * blocking workers and the inline route send its text with the parameter on every request. */
static const struct pg_stmt db_stmts[] = {
    { "world", "SELECT id, randomnumber FROM world WHERE id = $1", 1 },
    { "sleep", "SELECT pg_sleep($1::float8 / 1000)", 1 },
};

/* ---- request slots ---------------------------------------------------------------- */

static struct db_req *slot_alloc(struct gs_db *d)
{
    struct db_req *r;

    if (!d->free_head) {
        struct db_req **v = realloc(d->reqs, (d->nreqs + 1) * sizeof(*v));
        if (!v)
            return NULL;
        d->reqs = v;
        if (!(r = calloc(1, sizeof(*r))))
            return NULL;
        r->db = d;
        r->slot = d->nreqs;
        d->reqs[d->nreqs++] = r;
        d->free_head = r->slot + 1;
    }
    r = d->reqs[d->free_head - 1];
    d->free_head = r->next_free;
    r->fd = -1;
    r->ans.status = 0;
    r->ans.len = 0;
    return r;
}

static void slot_free(struct db_req *r)
{
    struct gs_db *d = r->db;

    r->gen++;
    r->state = R_FREE;
    r->req = NULL;
    r->next_free = d->free_head;
    d->free_head = r->slot + 1;
}

static uint64_t token_of(const struct db_req *r)
{
    return (uint64_t)r->gen << 32 | r->slot;
}

/* The slot a token names, if it is still the same request and still waiting. */
static struct db_req *slot_of(struct gs_db *d, uint64_t token)
{
    uint32_t slot = (uint32_t)token, gen = (uint32_t)(token >> 32);
    struct db_req *r;

    if (slot >= d->nreqs)
        return NULL;
    r = d->reqs[slot];
    return r->gen == gen && r->state == R_WAITING ? r : NULL;
}

/* ---- parking and waking ----------------------------------------------------------- */

static void client_gone(void *arg, uint32_t events);

/* MHD ignores a suspended connection's socket, so we watch for the peer hanging up. */
static void watch_client(struct db_req *r)
{
    const union MHD_ConnectionInfo *ci =
        MHD_get_connection_info(r->req->conn, MHD_CONNECTION_INFO_CONNECTION_FD);

    if (ci && gs_loop_add(r->db->loop, ci->connect_fd, EPOLLRDHUP, client_gone, r) == 0)
        r->fd = ci->connect_fd;
}

static void unwatch_client(struct db_req *r)
{
    if (r->fd >= 0)
        gs_loop_del(r->db->loop, r->fd);
    r->fd = -1;
}

static void park(struct db_req *r)
{
    r->state = R_WAITING;
    r->req->ctx = r;
    watch_client(r);
    gs_request_suspend(r->req);
    gs_stats_suspend(&r->db->st);
}

/* Leave WAITING for state s and let MHD call the handler again. */
static void wake(struct db_req *r, enum req_state s)
{
    unwatch_client(r);
    r->state = s;
    gs_stats_resume(&r->db->st);
    gs_request_resume(r->req);
}

/* Nobody wants r's answer any more. Readiness: a running query retires its connection.
 * Blocking: a queued job never runs; a worker parked on it finishes and is discarded. */
static void abandon(struct db_req *r)
{
    if (r->db->workers)
        gs_dbworkers_drop(r->db->workers, r->job);
    else
        pg_pool_cancel(r->db->pool, r->ticket);
    r->job = NULL;
}

static void client_gone(void *arg, uint32_t events)
{
    struct db_req *r = arg;

    (void)events;
    if (r->state != R_WAITING)
        return;
    abandon(r);
    wake(r, R_GONE);
}

/* ---- answers ---------------------------------------------------------------------- */

static void set_answer(struct answer *a, unsigned status, const char *body)
{
    a->status = status;
    snprintf(a->body, sizeof(a->body), "%s", body);
    a->len = strlen(a->body);
}

static int all_digits(const char *s)
{
    if (!*s)
        return 0;
    for (; *s; s++)
        if (*s < '0' || *s > '9')
            return 0;
    return 1;
}

static void answer_row(struct answer *a, const PGresult *res)
{
    const char *id, *num;

    if (PQntuples(res) != 1 || PQnfields(res) != 2) {
        set_answer(a, 500, "{\"error\":\"no such row\"}");
        return;
    }
    id = PQgetvalue(res, 0, 0);
    num = PQgetvalue(res, 0, 1);
    if (!all_digits(id) || !all_digits(num) || strlen(id) + strlen(num) > 40) {
        set_answer(a, 500, "{\"error\":\"unexpected row\"}");
        return;
    }
    a->status = 200;
    a->len = (size_t)snprintf(a->body, sizeof(a->body), "{\"id\":%s,\"randomNumber\":%s}", id, num);
}

/* What a query's outcome answers, in either design. */
static void fill_answer(struct answer *a, enum pg_outcome o, const PGresult *res,
                        int sleep_route)
{
    if (o == PG_UNAVAILABLE)
        set_answer(a, 503, "{\"error\":\"database unavailable\"}");
    else if (o == PG_ERROR)
        set_answer(a, 500, "{\"error\":\"database error\"}");
    else if (sleep_route)
        set_answer(a, 200, "{\"slept\":true}");
    else
        answer_row(a, res);
}

static void on_result(uint64_t token, enum pg_outcome o, const PGresult *res, const char *msg,
                      void *arg)
{
    struct db_req *r = slot_of(arg, token);

    (void)msg;
    if (!r)
        return;                                  /* stale: that request is gone */
    fill_answer(&r->ans, o, res, r->sleep_route);
    wake(r, R_ANSWERED);
}

static void on_worker_result(uint64_t token, enum pg_outcome o, const PGresult *res, void *arg)
{
    struct db_req *r = slot_of(arg, token);

    if (r)
        r->job = NULL;                           /* freed by the workers after this call */
    on_result(token, o, res, NULL, arg);
}

static enum MHD_Result respond_json(struct gs_request *req, unsigned status, const char *body,
                                    size_t len)
{
    return gs_respond(req, status, "application/json", body, len, GS_BODY_COPY);
}

/* ---- handlers --------------------------------------------------------------------- */

static void on_done(struct gs_request *req, enum MHD_RequestTerminationCode toe)
{
    struct db_req *r = req->ctx;

    (void)toe;
    if (!r)
        return;
    if (r->state == R_WAITING) {                 /* ended while parked (shutdown) */
        abandon(r);
        unwatch_client(r);
        gs_stats_resume(&r->db->st);
    }
    req->ctx = NULL;
    slot_free(r);
}

/* The handler's second call, after wake(): queue what the query produced. */
static enum MHD_Result answer(struct gs_request *req)
{
    struct db_req *r = req->ctx;

    if (r->state == R_GONE) {
        /* Nobody will read it; queuing it (rather than MHD_NO, which MHD logs as an
         * application error per connection) lets MHD close the dead socket quietly. */
        static const char gone[] = "{\"error\":\"client closed the connection\"}";
        return respond_json(req, 503, gone, sizeof(gone) - 1);
    }
    if (r->state != R_ANSWERED)
        return MHD_YES;                          /* spurious call while waiting */
    return respond_json(req, r->ans.status, r->ans.body, r->ans.len);
}

static uint64_t next_rand(struct gs_db *d)
{
    d->rng ^= d->rng << 13;                      /* xorshift64: cheap, good enough for ids */
    d->rng ^= d->rng >> 7;
    d->rng ^= d->rng << 17;
    return d->rng;
}

static enum MHD_Result start_query(struct gs_request *req, const char *stmt, const char *param,
                                   int sleep_route)
{
    struct gs_db *d = req->route->arg;
    struct db_req *r = slot_alloc(d);
    enum pg_outcome o;

    if (!r) {
        static const char oom[] = "{\"error\":\"out of memory\"}";
        return respond_json(req, 500, oom, sizeof(oom) - 1);
    }
    r->req = req;
    r->sleep_route = sleep_route;
    if (d->workers)
        o = gs_dbworkers_submit(d->workers, db_stmts[sleep_route].sql, param, on_worker_result,
                                d, token_of(r), &r->job);
    else
        o = pg_pool_submit(d->pool, stmt, 1, &param, on_result, d, token_of(r), &r->ticket);
    if (o == PG_OK) {
        park(r);
        return MHD_YES;
    }
    slot_free(r);                                /* answered now, never parked */
    if (o == PG_UNAVAILABLE && d->workers) {
        static const char full[] = "{\"error\":\"database queue full\"}";
        return respond_json(req, 503, full, sizeof(full) - 1);
    } else if (o == PG_UNAVAILABLE) {
        static const char down[] = "{\"error\":\"database unavailable\"}";
        return respond_json(req, 503, down, sizeof(down) - 1);
    } else {
        static const char bad[] = "{\"error\":\"database error\"}";
        return respond_json(req, 500, bad, sizeof(bad) - 1);
    }
}

static enum MHD_Result db_route(struct gs_request *req)
{
    struct gs_db *d = req->route->arg;
    char id[24];

    if (req->ctx)
        return answer(req);
    req->on_done = on_done;
    snprintf(id, sizeof(id), "%ld", (long)(next_rand(d) % (uint64_t)d->world_rows) + 1);
    return start_query(req, "world", id, 0);
}

/* /db-sleep's ms argument when it is a whole number in 0..DB_SLEEP_MAX_MS, else NULL. */
static const char *sleep_ms(struct gs_request *req)
{
    const char *ms = MHD_lookup_connection_value(req->conn, MHD_GET_ARGUMENT_KIND, "ms");
    char *end;
    long v = ms ? strtol(ms, &end, 10) : -1;

    return ms && !*end && v >= 0 && v <= DB_SLEEP_MAX_MS ? ms : NULL;
}

static enum MHD_Result db_sleep_route(struct gs_request *req)
{
    const char *ms;

    if (req->ctx)
        return answer(req);
    req->on_done = on_done;
    if (!(ms = sleep_ms(req))) {
        static const char bad[] = "{\"error\":\"ms must be 0..10000\"}";
        return respond_json(req, 400, bad, sizeof(bad) - 1);
    }
    return start_query(req, "sleep", ms, 1);
}

/* ---- the inline design's handlers: the query runs here, on the loop ------------------- */

static enum MHD_Result block_query(struct gs_request *req, const char *sql, const char *param,
                                   int sleep_route)
{
    struct gs_db *d = req->route->arg;
    struct answer a;
    PGresult *res;
    enum pg_outcome o = gs_dbblock_exec(d->block, sql, param, &res);

    fill_answer(&a, o, res, sleep_route);
    if (res)
        PQclear(res);
    return respond_json(req, a.status, a.body, a.len);
}

static enum MHD_Result db_block_route(struct gs_request *req)
{
    struct gs_db *d = req->route->arg;
    char id[24];

    snprintf(id, sizeof(id), "%ld", (long)(next_rand(d) % (uint64_t)d->world_rows) + 1);
    return block_query(req, db_stmts[0].sql, id, 0);
}

static enum MHD_Result db_block_sleep_route(struct gs_request *req)
{
    const char *ms = sleep_ms(req);

    if (!ms) {
        static const char bad[] = "{\"error\":\"ms must be 0..10000\"}";
        return respond_json(req, 400, bad, sizeof(bad) - 1);
    }
    return block_query(req, db_stmts[1].sql, ms, 1);
}

static enum MHD_Result stats_route(struct gs_request *req)
{
    struct gs_db *d = req->route->arg;
    char buf[1024];
    int n;

    if (d->workers)
        gs_dbworkers_sync(d->workers);
    n = gs_stats_json(&d->st, buf, sizeof(buf));

    if (n < 0) {
        static const char err[] = "{\"error\":\"stats\"}";
        return respond_json(req, 500, err, sizeof(err) - 1);
    }
    return respond_json(req, 200, buf, (size_t)n);
}

/* ---- lifecycle -------------------------------------------------------------------- */

/* MHD must not stop with suspended connections: wake every parked request. */
static void on_stop(void *arg)
{
    struct gs_db *d = arg;

    for (uint32_t i = 0; i < d->nreqs; i++) {
        struct db_req *r = d->reqs[i];
        if (r->state == R_WAITING) {
            abandon(r);
            wake(r, R_GONE);
        }
    }
}

int gs_db_mode_parse(const char *s, enum gs_db_mode *m)
{
    if (!strcmp(s, "readiness"))
        *m = GS_DB_READINESS;
    else if (!strcmp(s, "blocking"))
        *m = GS_DB_BLOCKING;
    else if (!strcmp(s, "inline"))
        *m = GS_DB_INLINE;
    else
        return -1;
    return 0;
}

const char *gs_db_mode_name(enum gs_db_mode m)
{
    return m == GS_DB_BLOCKING ? "blocking" : m == GS_DB_INLINE ? "inline" : "readiness";
}

static int add_route(struct gs_db *d, const char *path, gs_handler h, unsigned flags, char *err,
                     size_t errlen)
{
    struct gs_route r = { .method = "GET", .path = path, .handler = h, .arg = d, .flags = flags };

    return gs_server_add_route(d->srv, &r, err, errlen);
}

/* --db-mode inline: one connection, queried on the loop, routes answered in one call. */
static int open_inline(struct gs_db *d, const struct gs_db_config *c, char *err, size_t errlen)
{
    if (!(d->block = gs_dbblock_new(c->conninfo, &d->st, c->log, err, errlen)))
        return -1;
    if (add_route(d, "/db", db_block_route, 0, err, errlen) != 0)
        return -1;
    return c->test_routes ? add_route(d, "/db-sleep", db_block_sleep_route, 0, err, errlen) : 0;
}

/* The routes both parking designs serve, and the stop hook that wakes what they parked. */
static int add_parking_routes(struct gs_db *d, const struct gs_db_config *c, char *err,
                              size_t errlen)
{
    if (add_route(d, "/db", db_route, GS_ROUTE_ASYNC, err, errlen) != 0)
        return -1;
    if (c->test_routes && add_route(d, "/db-sleep", db_sleep_route, GS_ROUTE_ASYNC, err, errlen) != 0)
        return -1;
    return gs_server_on_stop(d->srv, on_stop, d) == 0 ? 0
         : (snprintf(err, errlen, "too many stop hooks"), -1);
}

/* --db-mode blocking: N task workers, each parked on a synchronous query. */
static int open_workers(struct gs_db *d, const struct gs_db_config *c, char *err, size_t errlen)
{
    struct gs_dbworkers_config wc = {
        .conninfo = c->conninfo, .workers = c->workers > 0 ? c->workers : GS_DB_WORKERS_DEFAULT,
        .queue_max = c->queue_max > 0 ? c->queue_max : GS_DB_QUEUE_DEFAULT,
        .stats = &d->st, .log = c->log,
    };

    if (!(d->workers = gs_dbworkers_new(d->loop, &wc, err, errlen)))
        return -1;
    return add_parking_routes(d, c, err, errlen);
}

static int open_pool(struct gs_db *d, const struct gs_db_config *c, char *err, size_t errlen)
{
    struct pg_pool_config pc = {
        .conninfo = c->conninfo, .size = c->pool_size > 0 ? c->pool_size : GS_DB_POOL_DEFAULT,
        .stmts = db_stmts, .nstmts = c->test_routes ? 2 : 1, .log = c->log, .stats = &d->st,
    };

    if (!(d->pool = pg_pool_new(d->loop, &pc, err, errlen)))
        return -1;
    return add_parking_routes(d, c, err, errlen);
}

static int open_db(struct gs_db *d, const struct gs_db_config *c, char *err, size_t errlen)
{
    switch (c->mode) {
    case GS_DB_BLOCKING:
        return open_workers(d, c, err, errlen);
    case GS_DB_INLINE:
        return open_inline(d, c, err, errlen);
    case GS_DB_READINESS:
        break;
    }
    return open_pool(d, c, err, errlen);
}

struct gs_db *gs_db_new(struct gs_server *srv, const struct gs_db_config *c, char *err,
                        size_t errlen)
{
    struct gs_db *d = calloc(1, sizeof(*d));
    struct timespec ts;

    if (!d) {
        snprintf(err, errlen, "out of memory");
        return NULL;
    }
    clock_gettime(CLOCK_MONOTONIC, &ts);
    d->srv = srv;
    d->loop = gs_server_loop(srv);
    d->log = c->log;
    d->world_rows = c->world_rows > 0 ? c->world_rows : GS_DB_WORLD_ROWS;
    d->rng = ((uint64_t)ts.tv_nsec << 20) ^ (uint64_t)getpid() ^ 0x9e3779b97f4a7c15ull;
    if (c->conninfo)
        d->st.db_mode = gs_db_mode_name(c->mode);
    if (add_route(d, "/stats", stats_route, 0, err, errlen) != 0
        || (c->conninfo && open_db(d, c, err, errlen) != 0)) {
        gs_db_free(d);
        return NULL;
    }
    return d;
}

void gs_db_free(struct gs_db *d)
{
    if (!d)
        return;
    pg_pool_free(d->pool);
    gs_dbworkers_free(d->workers);
    gs_dbblock_free(d->block);
    for (uint32_t i = 0; i < d->nreqs; i++) {
        unwatch_client(d->reqs[i]);
        free(d->reqs[i]);
    }
    free(d->reqs);
    free(d);
}
