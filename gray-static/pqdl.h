/* pqdl.h -- libpq loaded at run time, only when the server is asked for a database (--db).
 *
 * Owns the table of libpq entry points the db modules call and gs_pq_load(), which opens
 * libpq by its soname once (dlopen) and fills the table, or says which library or symbol is
 * missing. gray-static is not linked against libpq: a server for /plaintext and /json never
 * maps it, as the paper's Static fixture loaded libpq for its db route only (LOOP.md, "libpq
 * on demand", says why this and not two builds).
 *
 * The db modules (pgpool.c, db.c, dbblock.c, dbworkers.c) include this header after <libpq-fe.h> and are
 * written with libpq's own names: the macros at the end send each name through the table,
 * so their code reads as libpq's documentation does. Calling one before gs_pq_load()
 * succeeded is a bug (a NULL pointer); every path into the database loads it first. */
#ifndef GS_PQDL_H
#define GS_PQDL_H

#include <stddef.h>

#include <libpq-fe.h>

/* libpq's soname since PostgreSQL 8.x: what the libpq5 package installs. */
#define GS_LIBPQ_SONAME "libpq.so.5"

/* X(return type, name, parameter list): every libpq function gray-static calls. */
#define GS_PQ_FUNCS(X)                                                                      \
    X(PGconn *, PQconnectStart, (const char *conninfo))                                     \
    X(PostgresPollingStatusType, PQconnectPoll, (PGconn *conn))                             \
    X(PGconn *, PQconnectdb, (const char *conninfo))                                        \
    X(ConnStatusType, PQstatus, (const PGconn *conn))                                       \
    X(char *, PQerrorMessage, (const PGconn *conn))                                         \
    X(int, PQsocket, (const PGconn *conn))                                                  \
    X(void, PQfinish, (PGconn *conn))                                                       \
    X(int, PQsetnonblocking, (PGconn *conn, int arg))                                       \
    X(PQnoticeProcessor, PQsetNoticeProcessor,                                              \
      (PGconn *conn, PQnoticeProcessor proc, void *arg))                                    \
    X(int, PQflush, (PGconn *conn))                                                         \
    X(int, PQconsumeInput, (PGconn *conn))                                                  \
    X(int, PQisBusy, (PGconn *conn))                                                        \
    X(int, PQsendPrepare, (PGconn *conn, const char *stmtName, const char *query,           \
                           int nParams, const Oid *paramTypes))                             \
    X(int, PQsendQueryPrepared, (PGconn *conn, const char *stmtName, int nParams,           \
                                 const char *const *paramValues, const int *paramLengths,   \
                                 const int *paramFormats, int resultFormat))                \
    X(PGresult *, PQexecParams, (PGconn *conn, const char *command, int nParams,            \
                                 const Oid *paramTypes, const char *const *paramValues,     \
                                 const int *paramLengths, const int *paramFormats,          \
                                 int resultFormat))                                         \
    X(PGresult *, PQgetResult, (PGconn *conn))                                              \
    X(ExecStatusType, PQresultStatus, (const PGresult *res))                                \
    X(char *, PQresultErrorMessage, (const PGresult *res))                                  \
    X(int, PQntuples, (const PGresult *res))                                                \
    X(int, PQnfields, (const PGresult *res))                                                \
    X(char *, PQgetvalue, (const PGresult *res, int tup_num, int field_num))                \
    X(void, PQclear, (PGresult *res))                                                       \
    X(PGcancel *, PQgetCancel, (PGconn *conn))                                              \
    X(int, PQcancel, (PGcancel *cancel, char *errbuf, int errbufsize))                      \
    X(void, PQfreeCancel, (PGcancel *cancel))

#define GS_PQ_FIELD(ret, name, params) ret (*name) params;
struct gs_pq_table {
    GS_PQ_FUNCS(GS_PQ_FIELD)
};
#undef GS_PQ_FIELD

extern struct gs_pq_table gs_pq;

/* Open libpq and fill gs_pq, once per process (later calls return the first outcome). 0, or
 * -1 with the reason in err: the library is not installed, or lacks one of the functions. */
int gs_pq_load(char *err, size_t errlen);

/* pqdl.c itself fills the table by these names and must see libpq's declarations. */
#ifndef GS_PQDL_IMPL
#define PQconnectStart (gs_pq.PQconnectStart)
#define PQconnectPoll (gs_pq.PQconnectPoll)
#define PQconnectdb (gs_pq.PQconnectdb)
#define PQstatus (gs_pq.PQstatus)
#define PQerrorMessage (gs_pq.PQerrorMessage)
#define PQsocket (gs_pq.PQsocket)
#define PQfinish (gs_pq.PQfinish)
#define PQsetnonblocking (gs_pq.PQsetnonblocking)
#define PQsetNoticeProcessor (gs_pq.PQsetNoticeProcessor)
#define PQflush (gs_pq.PQflush)
#define PQconsumeInput (gs_pq.PQconsumeInput)
#define PQisBusy (gs_pq.PQisBusy)
#define PQsendPrepare (gs_pq.PQsendPrepare)
#define PQsendQueryPrepared (gs_pq.PQsendQueryPrepared)
#define PQexecParams (gs_pq.PQexecParams)
#define PQgetResult (gs_pq.PQgetResult)
#define PQresultStatus (gs_pq.PQresultStatus)
#define PQresultErrorMessage (gs_pq.PQresultErrorMessage)
#define PQntuples (gs_pq.PQntuples)
#define PQnfields (gs_pq.PQnfields)
#define PQgetvalue (gs_pq.PQgetvalue)
#define PQclear (gs_pq.PQclear)
#define PQgetCancel (gs_pq.PQgetCancel)
#define PQcancel (gs_pq.PQcancel)
#define PQfreeCancel (gs_pq.PQfreeCancel)
#endif

#endif
