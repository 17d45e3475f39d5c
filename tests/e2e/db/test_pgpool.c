/* test_pgpool.c -- the readiness-driven libpq pool against a real throwaway cluster.
 *
 * Needs KB_PG_CONNINFO (tests/e2e/db/run.sh starts the cluster with gray-static/pgcluster.sh
 * and sets it); without it every case fails with that reason. The pool runs on gray-static's
 * own loop; each case drives it until a condition holds or a deadline passes. */
#include "gray-static/loop.h"
#include "gray-static/pgpool.h"
#include "gray-static/stats.h"
#include "tests/lib/kb_check.h"

#include <stdlib.h>
#include <string.h>

static const struct pg_stmt stmts[] = {
    { "world", "SELECT id, randomnumber FROM world WHERE id = $1", 1 },
    { "sleep", "SELECT pg_sleep($1::float8 / 1000)", 1 },
    { "div", "SELECT 1 / $1::int", 1 },
};

struct ctx {
    struct gs_loop *loop;
    struct gs_stats st;
    struct pg_pool *pool;
    int done, ok, err, unavail;
    int wrong;                 /* a row that does not match the id asked for */
    uint64_t order[64];        /* tokens in completion order */
    int want;
    long tick;
    int (*until)(struct ctx *);
};

static const char *conninfo(void)
{
    const char *c = getenv("KB_PG_CONNINFO");
    ck_assert_msg(c && *c, "KB_PG_CONNINFO is not set: run through tests/e2e/db/run.sh");
    return c;
}

static void on_done(uint64_t token, enum pg_outcome o, const PGresult *res, const char *msg,
                    void *arg)
{
    struct ctx *x = arg;
    (void)msg;
    if (x->done < 64)
        x->order[x->done] = token;
    x->done++;
    if (o == PG_OK) {
        x->ok++;
        /* token >= 1 is the world id asked for; 0 marks the other statements */
        if (token && (PQntuples(res) != 1 || strtoull(PQgetvalue(res, 0, 0), NULL, 10) != token))
            x->wrong++;
    } else if (o == PG_ERROR) {
        x->err++;
    } else {
        x->unavail++;
    }
}

static void poll_tick(void *arg)
{
    struct ctx *x = arg;
    x->tick = 0;
    if (x->until(x))
        gs_loop_stop(x->loop);
    else
        x->tick = gs_loop_after(x->loop, 2, poll_tick, x);
}

static void deadline(void *arg)
{
    gs_loop_stop(((struct ctx *)arg)->loop);
}

/* Run the loop until x->until holds or ms pass. Returns whether the condition held. */
static int run_until(struct ctx *x, int (*until)(struct ctx *), long ms)
{
    char err[128];
    long t = gs_loop_after(x->loop, ms, deadline, x);

    x->until = until;
    x->tick = gs_loop_after(x->loop, 0, poll_tick, x);
    ck_assert_int_eq(gs_loop_run(x->loop, err, sizeof(err)), 0);
    gs_loop_cancel(x->loop, t);
    if (x->tick)
        gs_loop_cancel(x->loop, x->tick);
    x->tick = 0;
    return until(x);
}

static int all_idle(struct ctx *x)
{
    return x->st.pool_idle == x->st.pool_size;
}

static int ten_done(struct ctx *x) { return x->done >= 10; }
static int fifty_done(struct ctx *x) { return x->done >= 50; }
static int one_done(struct ctx *x) { return x->done >= 1; }

static void setup_timeout(struct ctx *x, const char *ci, int size, long timeout_ms)
{
    struct pg_pool_config cfg = { .conninfo = ci, .size = size, .stmts = stmts,
                                  .nstmts = sizeof(stmts) / sizeof(stmts[0]), .log = stderr,
                                  .stats = &x->st, .timeout_ms = timeout_ms };
    char err[128];

    memset(x, 0, sizeof(*x));
    x->loop = gs_loop_new();
    ck_assert_ptr_nonnull(x->loop);
    x->pool = pg_pool_new(x->loop, &cfg, err, sizeof(err));
    ck_assert_msg(x->pool != NULL, "pg_pool_new: %s", err);
}

static void setup(struct ctx *x, const char *ci, int size)
{
    setup_timeout(x, ci, size, 0);
}

static void teardown(struct ctx *x)
{
    pg_pool_free(x->pool);
    gs_loop_free(x->loop);
}

static struct pg_ticket submit(struct ctx *x, const char *stmt, long param, uint64_t token)
{
    char buf[32];
    const char *v[1] = { buf };
    struct pg_ticket t;

    snprintf(buf, sizeof(buf), "%ld", param);
    ck_assert_int_eq(pg_pool_submit(x->pool, stmt, 1, v, on_done, x, token, &t), PG_OK);
    return t;
}

/* Gauges back where an idle pool has them. */
static void assert_quiet(struct ctx *x)
{
    ck_assert_int_eq(x->st.queries_in_flight, 0);
    ck_assert_int_eq(x->st.queued, 0);
    ck_assert_int_eq(x->st.pool_busy, 0);
    ck_assert_int_eq(x->st.pool_idle, x->st.pool_size);
}

START_TEST(rows_match_the_ids_asked_for)
{
    struct ctx x;

    setup(&x, conninfo(), 4);
    ck_assert(run_until(&x, all_idle, 5000));
    ck_assert_int_eq(x.st.reconnects, 4);
    for (long id = 1; id <= 10; id++)
        submit(&x, "world", id * 997 % 10000 + 1, (uint64_t)(id * 997 % 10000 + 1));
    ck_assert(run_until(&x, ten_done, 5000));
    ck_assert_int_eq(x.ok, 10);
    ck_assert_int_eq(x.wrong, 0);
    ck_assert_int_eq(x.st.queries_total, 10);
    assert_quiet(&x);
    teardown(&x);
}
END_TEST

/* Submitted before any connection is open: they wait, then run. */
START_TEST(jobs_submitted_at_start_wait_for_the_pool)
{
    struct ctx x;

    setup(&x, conninfo(), 2);
    for (long id = 1; id <= 10; id++)
        submit(&x, "world", id, (uint64_t)id);
    ck_assert_int_eq(x.done, 0);           /* never answered from inside submit */
    ck_assert(run_until(&x, ten_done, 5000));
    ck_assert_int_eq(x.ok, 10);
    ck_assert_int_eq(x.wrong, 0);
    teardown(&x);
}
END_TEST

START_TEST(pool_of_two_serves_fifty_in_order)
{
    struct ctx x;

    setup(&x, conninfo(), 2);
    ck_assert(run_until(&x, all_idle, 5000));
    for (long i = 1; i <= 50; i++)
        submit(&x, "world", i, (uint64_t)i);
    ck_assert_int_eq(x.st.queued, 48);
    ck_assert_int_eq(x.st.queries_in_flight, 2);
    ck_assert(run_until(&x, fifty_done, 10000));
    ck_assert_int_eq(x.ok, 50);
    ck_assert_int_eq(x.wrong, 0);
    /* FIFO: job k starts only after k-2 have finished, so the (i+1)th answer is job <= i+2 */
    for (int i = 0; i < 50; i++)
        ck_assert_msg(x.order[i] <= (uint64_t)i + 2, "job %llu finished %dth",
                      (unsigned long long)x.order[i], i + 1);
    assert_quiet(&x);
    teardown(&x);
}
END_TEST

START_TEST(database_error_is_500_and_connection_stays)
{
    struct ctx x;

    setup(&x, conninfo(), 1);
    ck_assert(run_until(&x, all_idle, 5000));
    submit(&x, "div", 0, 0);                    /* division by zero */
    ck_assert(run_until(&x, one_done, 5000));
    ck_assert_int_eq(x.err, 1);
    ck_assert_int_eq(x.st.errors, 1);
    x.done = 0;
    submit(&x, "world", 42, 42);
    ck_assert(run_until(&x, one_done, 5000));
    ck_assert_int_eq(x.ok, 1);
    ck_assert_int_eq(x.wrong, 0);
    ck_assert_int_eq(x.st.retired, 0);
    ck_assert_int_eq(x.st.reconnects, 1);       /* the same connection served both */
    assert_quiet(&x);
    teardown(&x);
}
END_TEST

static int retired_and_refilled(struct ctx *x)
{
    return x->st.retired == 1 && all_idle(x);
}

START_TEST(cancel_mid_query_retires_and_refills)
{
    struct ctx x;
    struct pg_ticket running, queued;

    setup(&x, conninfo(), 1);
    ck_assert(run_until(&x, all_idle, 5000));
    running = submit(&x, "sleep", 2000, 0);
    queued = submit(&x, "world", 7, 7);
    ck_assert_int_eq(x.st.queries_in_flight, 1);
    ck_assert_int_eq(x.st.queued, 1);
    ck_assert_int_eq(pg_pool_cancel(x.pool, queued), 1);
    ck_assert_int_eq(x.st.queued, 0);
    ck_assert_int_eq(pg_pool_cancel(x.pool, running), 1);
    ck_assert_int_eq(pg_pool_cancel(x.pool, running), 0);   /* stale ticket: no effect */
    ck_assert_int_eq(x.st.queries_in_flight, 0);
    ck_assert(run_until(&x, retired_and_refilled, 5000));  /* well before the 2 s sleep */
    ck_assert_int_eq(x.done, 0);                             /* no callback for either */
    submit(&x, "world", 9, 9);
    ck_assert(run_until(&x, one_done, 5000));
    ck_assert_int_eq(x.ok, 1);
    ck_assert_int_eq(x.wrong, 0);
    ck_assert_int_eq(x.st.reconnects, 2);
    teardown(&x);
}
END_TEST

START_TEST(stale_ticket_never_cancels_a_newer_job)
{
    struct ctx x;
    struct pg_ticket first, second;

    setup(&x, conninfo(), 1);
    ck_assert(run_until(&x, all_idle, 5000));
    first = submit(&x, "world", 1, 1);
    ck_assert(run_until(&x, one_done, 5000));
    second = submit(&x, "world", 2, 2);            /* reuses the freed slot */
    ck_assert_int_eq(second.slot, first.slot);
    ck_assert_int_eq(pg_pool_cancel(x.pool, first), 0);
    ck_assert(run_until(&x, all_idle, 5000));
    ck_assert_int_eq(x.ok, 2);
    ck_assert_int_eq(x.st.retired, 0);
    teardown(&x);
}
END_TEST

static int two_done(struct ctx *x) { return x->done >= 2; }

START_TEST(hung_query_times_out_and_retires)
{
    struct ctx x;

    setup_timeout(&x, conninfo(), 1, 300);
    ck_assert(run_until(&x, all_idle, 5000));
    submit(&x, "sleep", 3000, 0);               /* runs, then hangs past the timeout */
    submit(&x, "world", 5, 5);                  /* waits behind it */
    ck_assert(run_until(&x, two_done, 2000));   /* well before the 3 s sleep ends */
    /* The running job always times out and retires its connection. The queued one is due a
     * moment later (up to a millisecond on the clock the pool keeps), so it either times out
     * in the queue at the same sweep or is served by the replacement connection within its
     * deadline; both are right, and it must end exactly once, never wrongly. */
    ck_assert_int_eq(x.st.retired, 1);
    ck_assert_int_ge(x.unavail, 1);
    ck_assert_int_eq(x.unavail + x.ok, 2);
    ck_assert_int_eq(x.st.timeouts, x.unavail);
    ck_assert_int_eq(x.wrong, 0);
    x.ok = 0;
    x.done = 0;
    submit(&x, "world", 6, 6);                  /* the replacement connection serves */
    ck_assert(run_until(&x, one_done, 5000));
    ck_assert_int_eq(x.ok, 1);
    ck_assert_int_eq(x.wrong, 0);
    ck_assert(run_until(&x, all_idle, 5000));
    assert_quiet(&x);
    teardown(&x);
}
END_TEST

static int unreachable(struct ctx *x)
{
    return !x->st.db_reachable && x->done >= x->want;
}

START_TEST(unreachable_database_answers_unavailable)
{
    struct ctx x;
    char buf[32] = "1";
    const char *v[1] = { buf };
    struct pg_ticket t;

    setup(&x, "host=/nonexistent-kb-socket-dir port=1 dbname=kb connect_timeout=1", 2);
    for (long i = 1; i <= 3 && pg_pool_reachable(x.pool); i++, x.want++)
        submit(&x, "world", i, (uint64_t)i);        /* accepted while still trying */
    ck_assert(run_until(&x, unreachable, 5000));
    ck_assert_int_eq(x.ok, 0);
    ck_assert_int_eq(x.unavail, x.want);            /* every accepted job got its 503 */
    ck_assert_int_eq(x.st.queued, 0);
    ck_assert_int_eq(pg_pool_submit(x.pool, "world", 1, v, on_done, &x, 1, &t), PG_UNAVAILABLE);
    ck_assert_int_eq(x.st.pool_idle, 0);
    teardown(&x);
}
END_TEST

static Suite *suite(void)
{
    Suite *s = suite_create("pgpool");
    TCase *tc = tcase_create("cluster");

    tcase_set_timeout(tc, 30);
    tcase_add_test(tc, rows_match_the_ids_asked_for);
    tcase_add_test(tc, jobs_submitted_at_start_wait_for_the_pool);
    tcase_add_test(tc, pool_of_two_serves_fifty_in_order);
    tcase_add_test(tc, database_error_is_500_and_connection_stays);
    tcase_add_test(tc, cancel_mid_query_retires_and_refills);
    tcase_add_test(tc, stale_ticket_never_cancels_a_newer_job);
    tcase_add_test(tc, hung_query_times_out_and_retires);
    tcase_add_test(tc, unreachable_database_answers_unavailable);
    suite_add_tcase(s, tc);
    return s;
}

int main(void)
{
    return kb_check_run(suite(), "pgpool");
}
