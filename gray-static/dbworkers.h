/* dbworkers.h -- the blocking /db design as the papers describe it: a fixed pool of task
 * worker threads, each holding its own PostgreSQL connection and parked on a synchronous
 * libpq call (PQexecParams) while its query runs (docs/protocol.md, "The blocking baseline").
 *
 * Owns the N worker threads, their connections and one FIFO of jobs. The loop thread submits
 * a job (the request is parked meanwhile) and gets its answer back on the loop: a worker that
 * finishes puts the job on a done list and writes an eventfd the loop watches, so every
 * callback, every gs_stats update and every MHD call stays on the loop thread. While all
 * workers wait on PostgreSQL the loop keeps serving every other route; /db requests queue.
 *
 * The queue is bounded (queue_max): a job past it is refused at once (the route answers 503),
 * rather than growing without limit behind a stalled database. Each worker sends the
 * statement's text with its parameter on every query, as the paper's route did (no prepared
 * statement). A worker without a connection takes no jobs and reconnects at most once per
 * GS_DBWORKERS_RETRY_MS; only while no worker is up or connecting (the database is
 * unreachable) are queued jobs answered PG_UNAVAILABLE at once.
 *
 * A job whose client left is dropped: never run if still queued, its answer discarded if a
 * worker is already parked on it (the synchronous call runs to its end; the connection stays
 * usable). gs_dbworkers_free cancels running queries (PQcancel) and joins every worker.
 * Everything but the workers' own bodies runs on the loop thread. */
#ifndef GS_DBWORKERS_H
#define GS_DBWORKERS_H

#include <stdint.h>
#include <stdio.h>

#include "gray-static/loop.h"
#include "gray-static/pgpool.h"
#include "gray-static/stats.h"

#define GS_DBWORKERS_RETRY_MS 250
#define GS_DBWORKERS_MAX 1024
#define GS_DBWORKERS_PARAM_MAX 24

struct gs_dbworkers;
struct gs_dbw_job;

/* Called on the loop thread with the job's outcome; res (PG_OK only) is freed after it
 * returns. Not called for a dropped job. */
typedef void (*gs_dbw_cb)(uint64_t token, enum pg_outcome o, const PGresult *res, void *arg);

struct gs_dbworkers_config {
    const char *conninfo;
    int workers;              /* 1..GS_DBWORKERS_MAX */
    long queue_max;           /* jobs waiting for a worker, past which submit refuses */
    struct gs_stats *stats;   /* gauges and totals, updated on the loop thread */
    FILE *log;                /* connection state changes and query errors, or NULL */
};

/* Loads libpq and starts the workers (each connects on its own thread). NULL with the reason
 * in err. */
struct gs_dbworkers *gs_dbworkers_new(struct gs_loop *loop, const struct gs_dbworkers_config *c,
                                      char *err, size_t errlen);
/* Cancels running queries, joins the workers, frees every job left. Call while the loop
 * still exists (after gs_server_run returns). */
void gs_dbworkers_free(struct gs_dbworkers *w);

/* Queue sql with its one parameter (at most GS_DBWORKERS_PARAM_MAX - 1 bytes; sql must
 * outlive the job). PG_OK: queued, *job names it for gs_dbworkers_drop and cb will be called.
 * PG_UNAVAILABLE: the queue is full; PG_ERROR: param too long or out of memory. Nothing is
 * queued then. */
enum pg_outcome gs_dbworkers_submit(struct gs_dbworkers *w, const char *sql, const char *param,
                                    gs_dbw_cb cb, void *arg, uint64_t token,
                                    struct gs_dbw_job **job);
/* The submitter no longer wants job's answer; cb will not be called for it. */
void gs_dbworkers_drop(struct gs_dbworkers *w, struct gs_dbw_job *job);

/* Copy the workers' gauges and totals into the stats (before /stats reads them). */
void gs_dbworkers_sync(struct gs_dbworkers *w);

#endif
