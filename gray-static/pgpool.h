/* pgpool.h -- a readiness-driven libpq connection pool running on gray-static's gs_loop.
 *
 * Owns `size` PostgreSQL connections, opened asynchronously at creation
 * (PQconnectStart/PQconnectPoll), made non-blocking, each with the caller's statements
 * prepared once (PQsendPrepare). Queries are run in submission order (FIFO) on idle
 * connections with PQsendQueryPrepared; every step (PQflush, PQconsumeInput, PQisBusy,
 * PQgetResult drained until NULL) is driven by socket readiness, so nothing ever waits on
 * the database. Exhaustion queues, it does not fail. Lost connections reconnect by
 * themselves with exponential backoff; while no connection can be made the pool reports
 * itself unreachable and answers PG_UNAVAILABLE at once. A job still unanswered after the
 * timeout (a hung database) is answered PG_UNAVAILABLE. A query whose submitter cancels
 * it, or that times out, while it runs retires (closes) that connection -- its protocol state is uncertain --
 * and a fresh one replaces it. Without PQcancelStart (libpq < 17) a cancel would block,
 * so the connection is just closed.
 *
 * libpq is loaded at run time (pqdl.h): pg_pool_new() loads it, and fails saying why when it
 * cannot be.
 *
 * Callers never hold pool memory: a job is named by a struct pg_ticket whose generation
 * makes a stale ticket harmless. Single-threaded: call only from the loop's thread. */
#ifndef GS_PGPOOL_H
#define GS_PGPOOL_H

#include <stddef.h>
#include <stdint.h>
#include <stdio.h>

#include <libpq-fe.h>

#include "gray-static/loop.h"
#include "gray-static/stats.h"

enum pg_outcome {
    PG_OK = 0,        /* res holds the (first) result of the query */
    PG_ERROR,         /* the database answered with an error: a 500 */
    PG_UNAVAILABLE    /* the database cannot be reached: a 503 */
};

/* A statement prepared on every connection right after it opens. */
struct pg_stmt {
    const char *name;
    const char *sql;
    int nparams;
};

struct pg_pool_config {
    const char *conninfo;         /* copied; use host=/socket/dir or hostaddr= (no DNS wait) */
    int size;                     /* connections, > 0 */
    const struct pg_stmt *stmts;  /* copied */
    size_t nstmts;
    long backoff_min_ms;          /* first reconnect delay after a failure; 0 = 25 ms */
    long backoff_max_ms;          /* doubling stops here; 0 = 1000 ms */
    long timeout_ms;              /* a job not answered this long after submission gets
                                     PG_UNAVAILABLE (a running one retires its connection);
                                     0 = 30000 ms, < 0 = never */
    FILE *log;                    /* one line per state change / error; may be NULL */
    struct gs_stats *stats;       /* counters updated in place; may be NULL */
};

#define PG_MAX_PARAMS 4
#define PG_PARAM_LEN 32

/* Called exactly once per accepted, uncancelled job, from the loop (never from inside
 * pg_pool_submit). res is valid only during the call and only with PG_OK; msg is a
 * human-readable reason otherwise. */
typedef void (*pg_done_cb)(uint64_t token, enum pg_outcome outcome, const PGresult *res,
                           const char *msg, void *arg);

struct pg_ticket {
    uint32_t slot;
    uint32_t gen;
};

struct pg_pool;

/* NULL with a message in err on failure. Connections start opening at once. The pool
 * keeps a pointer to loop, which must outlive it. Free with pg_pool_free. */
struct pg_pool *pg_pool_new(struct gs_loop *loop, const struct pg_pool_config *cfg,
                            char *err, size_t errlen);
/* Closes every connection; pending jobs are dropped without their callbacks. */
void pg_pool_free(struct pg_pool *p);

/* Run prepared statement stmt with params (copied; each shorter than PG_PARAM_LEN).
 * PG_OK: accepted, ticket filled, cb(token, ...) will be called later. PG_UNAVAILABLE:
 * the database is unreachable right now, nothing queued. PG_ERROR: bad arguments. */
enum pg_outcome pg_pool_submit(struct pg_pool *p, const char *stmt, int nparams,
                               const char *const *params, pg_done_cb cb, void *arg,
                               uint64_t token, struct pg_ticket *ticket);

/* The submitter no longer wants the answer (its client went away). A queued job is
 * dropped; a running one retires its connection. The callback is not called afterwards.
 * Returns 1 when the ticket named a pending job, 0 when it was stale (already done). */
int pg_pool_cancel(struct pg_pool *p, struct pg_ticket ticket);

/* 1 while at least one connection is usable or still being tried for the first time. */
int pg_pool_reachable(const struct pg_pool *p);

#endif
