/* dbblock.h -- the inline /db design (--db-mode inline): the limit case of the blocking
 * baseline, where the query runs on the loop itself rather than on a task worker
 * (dbworkers.h; docs/protocol.md, "The blocking baseline").
 *
 * Owns one PostgreSQL connection, opened with PQconnectdb, and runs each query with
 * PQexecParams on the calling thread -- the server's one loop -- sending the statement's text
 * with its parameter every time, as the paper's route did (no prepared statement). While
 * PostgreSQL answers, the loop waits, and every other connection waits with it: that wait is
 * what the baseline measures. A lost connection is reopened by the next query that finds it
 * gone, at most once per GS_DBBLOCK_RETRY_MS; queries in between answer PG_UNAVAILABLE at once.
 * Its counters go to the caller's gs_stats as a pool of one connection, so /stats reads the
 * same for both designs (suspended_now stays 0: nothing is ever parked). libpq is loaded at
 * run time (pqdl.h) by gs_dbblock_new(). Single-threaded. */
#ifndef GS_DBBLOCK_H
#define GS_DBBLOCK_H

#include <stdio.h>

#include "gray-static/pgpool.h"
#include "gray-static/stats.h"

#define GS_DBBLOCK_RETRY_MS 250

struct gs_dbblock;

/* Loads libpq and connects (a first connection that fails is retried by the first query).
 * NULL with the reason in err only when libpq cannot be loaded or memory is short. */
struct gs_dbblock *gs_dbblock_new(const char *conninfo, struct gs_stats *st, FILE *log,
                                  char *err, size_t errlen);
void gs_dbblock_free(struct gs_dbblock *b);

/* Run sql with its one parameter and wait for the answer. PG_OK with *res the result (the
 * caller PQclear()s it), PG_ERROR when PostgreSQL refused the query, PG_UNAVAILABLE when no
 * connection could be had; *res is NULL but for PG_OK. */
enum pg_outcome gs_dbblock_exec(struct gs_dbblock *b, const char *sql, const char *param,
                                PGresult **res);

#endif
