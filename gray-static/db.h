/* db.h -- gray-static's PostgreSQL routes: GET /db on parked (suspended) handlers, GET /stats,
 * and with test routes on, GET /db-sleep?ms=N (pg_sleep, for the overlap test).
 *
 * GET /db picks a random id in 1..world_rows and reads {"id":N,"randomNumber":M} in one of
 * three designs (docs/protocol.md, "The PostgreSQL route" and "The blocking baseline"):
 *
 * - readiness (the default): through the readiness-driven pool (pgpool.h) with a prepared,
 *   parameterised query. The request is suspended while the query runs and resumed with its
 *   answer; the loop thread never waits.
 * - blocking: the papers' baseline, the design readiness was built to replace: a fixed pool
 *   of task workers (dbworkers.h), each with its own connection, parked on a synchronous
 *   query; the request is suspended until a worker answers, and queues while none is free.
 *   A full queue answers 503 at once.
 * - inline: one connection, one synchronous query per request on the loop itself
 *   (dbblock.h); every other connection waits while it runs. The limit case of blocking,
 *   kept to show what a loop that waits costs.
 *
 * The rest of this comment is the parking designs' (readiness and blocking).
 * Because MHD does not watch a suspended connection, this module watches the client's socket
 * itself (EPOLLRDHUP): a client that leaves mid-query has its query cancelled, which retires
 * that database connection. Requests are named by (slot, generation) tokens so that a late
 * answer can never resume the wrong request.
 *
 * Without a conninfo the module registers /stats only and never loads libpq (pqdl.h).
 * gs_db_new registers the routes on the server (before gs_server_start); gs_db_free must run
 * after gs_server_run returns and before gs_server_free (the pool still uses the loop). */
#ifndef GS_DB_H
#define GS_DB_H

#include <stdio.h>

#include "gray-static/server.h"
#include "gray-static/stats.h"

#define GS_DB_POOL_DEFAULT 64      /* = contract/contract.json db.pool_size (a test checks) */
#define GS_DB_WORLD_ROWS 10000     /* = contract db.world_rows (a test checks) */
#define GS_DB_WORKERS_DEFAULT 16   /* --db-workers without a value given (blocking) */
#define GS_DB_QUEUE_DEFAULT 4096   /* = gray-static's default --conn-limit: each queued job
                                      holds a parked connection, so it never binds first */

enum gs_db_mode { GS_DB_READINESS, GS_DB_BLOCKING, GS_DB_INLINE };

struct gs_db_config {
    const char *conninfo;     /* NULL: no database (plaintext/json runs) */
    enum gs_db_mode mode;     /* readiness unless --db-mode blocking or inline */
    int pool_size;            /* 0: GS_DB_POOL_DEFAULT; readiness only */
    int workers;              /* 0: GS_DB_WORKERS_DEFAULT; blocking only */
    long queue_max;           /* 0: GS_DB_QUEUE_DEFAULT; blocking only */
    long world_rows;          /* 0: GS_DB_WORLD_ROWS */
    int test_routes;          /* also serve /db-sleep */
    FILE *log;                /* database state changes and errors, or NULL */
};

struct gs_db;

/* "readiness", "blocking", "inline" -> mode. 0, or -1 when unknown. */
int gs_db_mode_parse(const char *s, enum gs_db_mode *m);
const char *gs_db_mode_name(enum gs_db_mode m);

/* NULL with the reason in err. Opens the pool (asynchronously) when conninfo is set. */
struct gs_db *gs_db_new(struct gs_server *srv, const struct gs_db_config *c, char *err,
                        size_t errlen);
void gs_db_free(struct gs_db *d);

#endif
