/* dbblock.c -- see dbblock.h. */
#define _POSIX_C_SOURCE 200809L
#include "gray-static/dbblock.h"

#include "gray-static/pqdl.h"

#include <stdlib.h>
#include <string.h>
#include <time.h>

struct gs_dbblock {
    char *conninfo;
    PGconn *pg;                /* NULL or CONNECTION_BAD: down */
    struct gs_stats *st;
    FILE *log;
    long long next_try_ms;     /* a down connection is not retried before this */
};

static long long now_ms(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (long long)ts.tv_sec * 1000 + ts.tv_nsec / 1000000;
}

static void note(struct gs_dbblock *b, const char *what, const char *why)
{
    if (b->log) {
        fprintf(b->log, "gray-static: db (inline): %s: %s", what, why && *why ? why : "\n");
        fflush(b->log);
    }
}

/* The pool-of-one's gauges from the connection's state. */
static void show(struct gs_dbblock *b, int up)
{
    b->st->pool_idle = up;
    b->st->pool_down = !up;
    b->st->db_reachable = up;
}

static void drop(struct gs_dbblock *b, const char *why)
{
    note(b, "connection lost", why);
    PQfinish(b->pg);
    b->pg = NULL;
    b->next_try_ms = now_ms() + GS_DBBLOCK_RETRY_MS;
    show(b, 0);
}

/* A usable connection, opened now when there is none and the retry delay has passed. */
static int connected(struct gs_dbblock *b)
{
    if (b->pg)
        return 1;
    if (now_ms() < b->next_try_ms)
        return 0;
    b->pg = PQconnectdb(b->conninfo);
    if (!b->pg || PQstatus(b->pg) != CONNECTION_OK) {
        note(b, "connect failed", b->pg ? PQerrorMessage(b->pg) : "out of memory\n");
        PQfinish(b->pg);
        b->pg = NULL;
        b->next_try_ms = now_ms() + GS_DBBLOCK_RETRY_MS;
        show(b, 0);
        return 0;
    }
    b->st->reconnects++;
    show(b, 1);
    return 1;
}

struct gs_dbblock *gs_dbblock_new(const char *conninfo, struct gs_stats *st, FILE *log,
                                  char *err, size_t errlen)
{
    struct gs_dbblock *b;

    if (gs_pq_load(err, errlen) < 0)
        return NULL;
    if (!(b = calloc(1, sizeof(*b))) || !(b->conninfo = strdup(conninfo))) {
        snprintf(err, errlen, "out of memory");
        free(b);
        return NULL;
    }
    b->st = st;
    b->log = log;
    st->db_enabled = 1;
    st->pool_size = 1;
    show(b, 0);
    connected(b);
    return b;
}

void gs_dbblock_free(struct gs_dbblock *b)
{
    if (!b)
        return;
    if (b->pg)
        PQfinish(b->pg);
    free(b->conninfo);
    free(b);
}

enum pg_outcome gs_dbblock_exec(struct gs_dbblock *b, const char *sql, const char *param,
                                PGresult **res)
{
    const char *values[1] = { param };
    PGresult *r;

    *res = NULL;
    if (!connected(b)) {
        b->st->unavailable++;
        return PG_UNAVAILABLE;
    }
    b->st->pool_idle = 0;
    b->st->pool_busy = b->st->queries_in_flight = 1;
    r = PQexecParams(b->pg, sql, 1, NULL, values, NULL, NULL, 0);
    b->st->pool_busy = b->st->queries_in_flight = 0;
    b->st->pool_idle = 1;
    if (r && PQresultStatus(r) == PGRES_TUPLES_OK) {
        b->st->queries_total++;
        *res = r;
        return PG_OK;
    }
    if (PQstatus(b->pg) == CONNECTION_BAD) {
        PQclear(r);
        drop(b, PQerrorMessage(b->pg));
        b->st->unavailable++;
        return PG_UNAVAILABLE;
    }
    note(b, "query failed", r ? PQresultErrorMessage(r) : PQerrorMessage(b->pg));
    PQclear(r);
    b->st->errors++;
    return PG_ERROR;
}
