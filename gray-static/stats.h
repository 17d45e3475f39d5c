/* stats.h -- gray-static's runtime counters, served as JSON on GET /stats.
 *
 * One struct gs_stats per server, owned by whoever creates it (the db module) and updated
 * in place by the db route (suspended handlers) and the PostgreSQL pool (connections,
 * queue, queries). Gauges ("_now", queued, pool_*) return to zero, or to the idle pool
 * size, when load stops; totals only grow. Single-threaded: the loop thread alone touches
 * it, so plain integers suffice (the blocking design's workers keep their own counts under
 * their mutex, copied here on the loop: dbworkers.h). */
#ifndef GS_STATS_H
#define GS_STATS_H

#include <stddef.h>

struct gs_stats {
    /* gauges */
    long suspended_now;      /* HTTP handlers parked (MHD_suspend_connection) right now */
    long queries_in_flight;  /* queries sent on a pool connection, result not yet drained */
    long queued;             /* requests waiting for a free pool connection (FIFO) */
    long pool_idle;
    long pool_busy;
    long pool_connecting;    /* connecting or preparing statements */
    long pool_down;          /* closed, waiting for a reconnect (backoff) */
    long pool_size;
    int db_enabled;          /* 0 when the server runs without --db */
    const char *db_mode;     /* "readiness", "blocking" or "inline" with --db, else NULL */
    int db_reachable;        /* 0 while the database is unreachable (503s) */
    /* totals */
    long suspended_max;      /* high-water mark of suspended_now */
    long suspended_total;
    long queries_total;      /* queries completed with a result */
    long retired;            /* connections closed with a query outstanding (its client
                                left, or it timed out): never reused */
    long errors;             /* queries answered 500 (database error) */
    long unavailable;        /* requests answered 503 (database unreachable) */
    long timeouts;           /* of those, jobs unanswered within the pool's timeout */
    long reconnects;         /* connections (re)established */
};

/* Write the counters as one JSON object into buf. Returns the length written (excluding
 * the NUL), or -1 when buf is too small. */
int gs_stats_json(const struct gs_stats *s, char *buf, size_t len);

/* A handler was parked / resumed: keeps suspended_now, suspended_max and the total. */
void gs_stats_suspend(struct gs_stats *s);
void gs_stats_resume(struct gs_stats *s);

#endif
