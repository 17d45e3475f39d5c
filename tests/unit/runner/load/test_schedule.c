/* test_schedule.c -- runner/load/schedule.c: exact counts for a duration, even spacing per thread
 * and in aggregate, no request early, every request owned by exactly one thread; and the
 * load generator's pure arithmetic around it (the round-robin split of connections and the
 * requests log, the send quantum in force, the grid wake-up and the grouping it makes). */
#include <check.h>
#include <stdint.h>
#include <stdlib.h>

#include "runner/load/schedule.h"
#include "tests/lib/kb_check.h"

START_TEST(exact_count_for_duration)
{
    struct kb_schedule s;
    ck_assert_int_eq(kb_schedule_init(&s, 1000, 45000, 5, 30, 0, 4), 0);
    ck_assert_uint_eq(s.warmup_n, 225000);
    ck_assert_uint_eq(s.measured_n, 1350000);
    ck_assert_int_eq(kb_schedule_init(&s, 0, 333.3, 0, 3, 0, 1), 0);
    ck_assert_uint_eq(s.measured_n, 1000);
    ck_assert_int_eq(kb_schedule_init(&s, 0, 0, 0, 3, 0, 1), -1);
    ck_assert_int_eq(kb_schedule_init(&s, 0, 100, 0, 3, 4, 4), -1);
    ck_assert_int_eq(kb_schedule_init(&s, 0, 100, 0, 0, 0, 1), -1);
}
END_TEST

/* Drain every thread's schedule with time far in the future; shares must add up exactly. */
START_TEST(threads_share_every_request_once)
{
    enum { T = 3 };
    uint64_t total = 0, measured = 0;
    uint64_t want;
    struct kb_schedule s[T];
    char *seen;
    for (unsigned i = 0; i < T; i++)
        ck_assert_int_eq(kb_schedule_init(&s[i], 0, 1001, 0.5, 2, i, T), 0);
    want = kb_schedule_total(&s[0]);
    seen = calloc(want, 1);
    for (unsigned i = 0; i < T; i++) {
        uint64_t n;
        kb_mono_t at;
        measured += kb_schedule_thread_measured(&s[i]);
        while (kb_schedule_take(&s[i], UINT64_MAX - 1, &n, &at)) {
            ck_assert_uint_eq(n % T, i);
            ck_assert_int_eq(seen[n], 0);
            seen[n] = 1;
            total++;
        }
        ck_assert_uint_eq(at, UINT64_MAX);
    }
    ck_assert_uint_eq(total, want);
    ck_assert_uint_eq(measured, s[0].measured_n);
    free(seen);
}
END_TEST

START_TEST(evenly_spaced_never_early)
{
    struct kb_schedule s;
    uint64_t n, count = 0;
    kb_mono_t at, prev = 0, now = 5000, start = 5000;
    /* thread 1 of 4 at 40000/s: every 100 us, offset by 25 us */
    ck_assert_int_eq(kb_schedule_init(&s, start, 40000, 0, 1, 1, 4), 0);
    for (;;) {
        int got = kb_schedule_take(&s, now, &n, &at);
        if (!got && at == UINT64_MAX)
            break;
        if (!got) {
            ck_assert_uint_gt(at, now);
            now = at;             /* advance the clock to the next due time */
            continue;
        }
        ck_assert_uint_le(at, now);
        if (count == 0)
            ck_assert_uint_eq(at, start + 25000);
        else
            ck_assert_uint_eq(at - prev, 100000);
        prev = at;
        count++;
    }
    ck_assert_uint_eq(count, 10000);
    ck_assert_uint_eq(count, kb_schedule_thread_measured(&s));
}
END_TEST

START_TEST(aggregate_evenly_spaced_and_no_drift)
{
    struct kb_schedule s;
    ck_assert_int_eq(kb_schedule_init(&s, 0, 75000, 0, 30, 0, 4), 0);
    for (uint64_t n = 1; n < 2250000; n += 997) {
        kb_mono_t d = kb_schedule_time(&s, n) - kb_schedule_time(&s, n - 1);
        ck_assert(d == 13333 || d == 13334);
    }
    /* the last intended time is n/rate exactly, to the nanosecond: no accumulated rounding */
    ck_assert_uint_eq(kb_schedule_time(&s, 2250000), 30ULL * KB_NS_PER_S);
    ck_assert(kb_schedule_is_measured(&s, 0) && !kb_schedule_is_measured(&s, 2250000));
}
END_TEST

START_TEST(catch_up_is_only_what_is_due)
{
    struct kb_schedule s;
    uint64_t n, got = 0;
    kb_mono_t at;
    /* A thread that wakes 10 ms late takes exactly the requests due by then, not more. */
    ck_assert_int_eq(kb_schedule_init(&s, 0, 10000, 0, 1, 0, 1), 0);
    while (kb_schedule_take(&s, 10 * KB_NS_PER_MS, &n, &at))
        got++;
    ck_assert_uint_eq(got, 101);   /* n = 0..100 are due at 0..10 ms inclusive */
    ck_assert_uint_eq(at, 10100000);
}
END_TEST

/* ---- the load generator's arithmetic around the schedule ----------------------------- */

/* Round-robin shares: every thing has one owner, the first total % T threads one more. */
START_TEST(share_deals_round_robin)
{
    uint64_t sum = 0;
    for (unsigned i = 0; i < 4; i++)
        sum += kb_schedule_share(10, i, 4);
    ck_assert_uint_eq(sum, 10);
    ck_assert_uint_eq(kb_schedule_share(10, 0, 4), 3);
    ck_assert_uint_eq(kb_schedule_share(10, 1, 4), 3);
    ck_assert_uint_eq(kb_schedule_share(10, 2, 4), 2);
    ck_assert_uint_eq(kb_schedule_share(10, 3, 4), 2);
    ck_assert_uint_eq(kb_schedule_share(256, 3, 4), 64);     /* divisible: all equal */
    ck_assert_uint_eq(kb_schedule_share(3, 3, 4), 0);        /* fewer things than threads */
    ck_assert_uint_eq(kb_schedule_share(3, 2, 4), 1);
    ck_assert_uint_eq(kb_schedule_share(0, 0, 1), 0);
    ck_assert_uint_eq(kb_schedule_share(7, 0, 0), 0);        /* no threads, no shares */
    ck_assert_uint_eq(kb_schedule_share(7, 4, 4), 0);
    ck_assert_uint_eq(kb_schedule_share(UINT64_MAX, 0, 1), UINT64_MAX);
}
END_TEST

/* The same split as the schedule's own: a thread's measured requests are its share of the
 * requests up to the end minus its share of the warmup's. */
START_TEST(share_agrees_with_the_schedule)
{
    struct kb_schedule s;
    for (unsigned i = 0; i < 3; i++) {
        ck_assert_int_eq(kb_schedule_init(&s, 0, 1000, 0.0105, 0.0107, i, 3), 0);
        ck_assert_uint_eq(kb_schedule_thread_measured(&s),
                          kb_schedule_share(kb_schedule_total(&s), i, 3) -
                          kb_schedule_share(s.warmup_n, i, 3));
    }
}
END_TEST

/* The quantum applies only when a thread's sends are closer than it: at exactly one
 * quantum apart each send keeps its own exact wake-up. */
START_TEST(quantum_in_force_edges)
{
    const int64_t q = 200 * (int64_t)KB_NS_PER_US;
    ck_assert_uint_eq(kb_schedule_quantum(5000, 1, q), 0);          /* 200 us apart */
    ck_assert_uint_eq(kb_schedule_quantum(5001, 1, q), (kb_mono_t)q);
    ck_assert_uint_eq(kb_schedule_quantum(20000, 4, q), 0);         /* 4 x 1/20000 = 200 us */
    ck_assert_uint_eq(kb_schedule_quantum(20001, 4, q), (kb_mono_t)q);
    ck_assert_uint_eq(kb_schedule_quantum(75000, 1, q), (kb_mono_t)q);
    ck_assert_uint_eq(kb_schedule_quantum(75000, 1, 0), 0);         /* no quantum asked */
    ck_assert_uint_eq(kb_schedule_quantum(75000, 1, -5), 0);
    ck_assert_uint_eq(kb_schedule_quantum(0, 1, q), 0);             /* no schedule */
    ck_assert_uint_eq(kb_schedule_quantum(75000, 0, q), 0);
}
END_TEST

START_TEST(wake_for_edges)
{
    ck_assert_uint_eq(kb_schedule_wake_for(0, 200), 0);             /* on the grid: itself */
    ck_assert_uint_eq(kb_schedule_wake_for(200, 200), 200);
    ck_assert_uint_eq(kb_schedule_wake_for(201, 200), 400);         /* never early */
    ck_assert_uint_eq(kb_schedule_wake_for(399, 200), 400);
    ck_assert_uint_eq(kb_schedule_wake_for(12345, 0), 12345);       /* no quantum: exact */
    ck_assert_uint_eq(kb_schedule_wake_for(UINT64_MAX, 200), UINT64_MAX);
    ck_assert_uint_eq(kb_schedule_wake_for(UINT64_MAX - 1, 200), UINT64_MAX);
    ck_assert_uint_eq(kb_schedule_wake_for(UINT64_MAX - 1, 0), UINT64_MAX - 1);
    ck_assert_uint_eq(kb_schedule_wake_for(1, 1), 1);
}
END_TEST

/* The loop's grouping, played on the arithmetic alone: a thread that wakes only at
 * kb_schedule_wake_for(next) and takes everything due then sends every request exactly once,
 * none early, none more than a quantum late, with one wake-up per grid point that has a send
 * -- at 50k req/s on one thread, 10 sends per 200 us point instead of 10 wake-ups. */
START_TEST(quantum_groups_sends)
{
    const kb_mono_t q = 200 * KB_NS_PER_US;
    struct kb_schedule s;
    uint64_t n, taken = 0, wakes = 0, expect_n = 0;
    kb_mono_t next, at = 0;
    ck_assert_int_eq(kb_schedule_init(&s, 1234567, 50000, 0, 0.1, 0, 1), 0);
    ck_assert_uint_eq(kb_schedule_quantum(50000, 1, (int64_t)q), q);
    kb_schedule_take(&s, 0, &n, &next);          /* nothing due yet: the first send's time */
    while (next != UINT64_MAX) {
        at = kb_schedule_wake_for(next, q);
        ck_assert_uint_ge(at, next);
        ck_assert_uint_lt(at - next, q);
        ck_assert_uint_eq(at % q, 0);
        wakes++;
        while (kb_schedule_take(&s, at, &n, &next)) {
            ck_assert_uint_eq(n, expect_n++);
            ck_assert_uint_le(kb_schedule_time(&s, n), at);
            ck_assert_uint_lt(at - kb_schedule_time(&s, n), q);
            taken++;
        }
    }
    ck_assert_uint_eq(taken, 5000);
    /* 5000 sends 20 us apart over 100 ms: 500 or 501 grid points, depending on the phase */
    ck_assert_uint_ge(wakes, 500);
    ck_assert_uint_le(wakes, 501);
    /* without the quantum, one wake-up per send */
    ck_assert_int_eq(kb_schedule_init(&s, 1234567, 50000, 0, 0.1, 0, 1), 0);
    for (wakes = 0, kb_schedule_take(&s, 0, &n, &next); next != UINT64_MAX; wakes++) {
        at = kb_schedule_wake_for(next, 0);
        while (kb_schedule_take(&s, at, &n, &next))
            ;
    }
    ck_assert_uint_eq(wakes, 5000);
}
END_TEST

/* wrk2's 5 ms stagger at 25,600/s on 256 connections: a 10 ms period, so the connections
 * fall into two phases, 128 at 0 and 128 at 5 ms (the bursts wrk2 sends there). */
START_TEST(wrk2_stagger_makes_two_phases_at_a_10ms_period)
{
    kb_mono_t ph[256];
    unsigned conn[256];
    ck_assert_int_eq(kb_schedule_phases(25600, 1, 256, 5e6, ph, conn), 0);
    for (unsigned i = 0; i < 256; i++) {
        ck_assert_uint_eq(ph[i], i < 128 ? 0 : 5 * KB_NS_PER_MS);
        ck_assert_uint_eq(conn[i] % 2, i < 128 ? 0u : 1u);
    }
    /* 25,000/s: a 10.24 ms period spreads them; sorted, each slot a distinct connection */
    ck_assert_int_eq(kb_schedule_phases(25000, 1, 256, 5e6, ph, conn), 0);
    for (unsigned i = 1; i < 256; i++)
        ck_assert_uint_le(ph[i - 1], ph[i]);
    ck_assert_uint_lt(ph[255], 10240 * KB_NS_PER_US);
    ck_assert_int_eq(kb_schedule_phases(0, 1, 256, 5e6, ph, conn), -1);
}
END_TEST

/* Even phases are the plain schedule: the same intended time for every request. */
START_TEST(even_phases_are_the_plain_schedule)
{
    enum { T = 2, C = 5 };
    kb_mono_t ph[C];
    unsigned conn[C];
    struct kb_schedule plain, phased;
    ck_assert_int_eq(kb_schedule_phases(3000, T, C, -1, ph, conn), 0);
    ck_assert_int_eq(kb_schedule_init(&plain, 777, 3000, 1, 2, 1, T), 0);
    ck_assert_int_eq(kb_schedule_init(&phased, 777, 3000, 1, 2, 1, T), 0);
    kb_schedule_set_phases(&phased, ph, C);
    for (uint64_t n = 1; n < 9000; n += T) {
        kb_mono_t a = kb_schedule_time(&plain, n), b = kb_schedule_time(&phased, n);
        ck_assert_uint_le(a > b ? a - b : b - a, 2);
        ck_assert_uint_eq(conn[(n / T) % C], (n / T) % C);
    }
}
END_TEST

/* With wrk2's phases each connection still sends exactly one period apart, the thread's
 * takes stay in order and none is early. */
START_TEST(staggered_connections_each_keep_their_period)
{
    enum { C = 7 };
    kb_mono_t ph[C], last[C] = { 0 };
    unsigned conn[C];
    struct kb_schedule s;
    uint64_t n;
    kb_mono_t next, prev = 0, period = 7 * KB_NS_PER_MS;
    ck_assert_int_eq(kb_schedule_phases(1000, 1, C, 5e6, ph, conn), 0);
    ck_assert_int_eq(kb_schedule_init(&s, 1000, 1000, 0, 1, 0, 1), 0);
    kb_schedule_set_phases(&s, ph, C);
    for (kb_mono_t now = 0; now < 2 * KB_NS_PER_S; now += 100 * KB_NS_PER_US)
        while (kb_schedule_take(&s, now, &n, &next)) {
            unsigned c = conn[n % C];
            ck_assert_uint_le(next, now);
            ck_assert_uint_ge(next, prev);
            if (n >= C)
                ck_assert_uint_eq(next - last[c], period);
            last[c] = prev = next;
        }
    ck_assert_uint_eq(n + 1, 1000);
}
END_TEST

static Suite *suite(void)
{
    Suite *s = suite_create("schedule");
    TCase *tc = tcase_create("schedule");
    tcase_add_test(tc, exact_count_for_duration);
    tcase_add_test(tc, threads_share_every_request_once);
    tcase_add_test(tc, evenly_spaced_never_early);
    tcase_add_test(tc, aggregate_evenly_spaced_and_no_drift);
    tcase_add_test(tc, catch_up_is_only_what_is_due);
    tcase_add_test(tc, share_deals_round_robin);
    tcase_add_test(tc, share_agrees_with_the_schedule);
    tcase_add_test(tc, quantum_in_force_edges);
    tcase_add_test(tc, wake_for_edges);
    tcase_add_test(tc, quantum_groups_sends);
    tcase_add_test(tc, wrk2_stagger_makes_two_phases_at_a_10ms_period);
    tcase_add_test(tc, even_phases_are_the_plain_schedule);
    tcase_add_test(tc, staggered_connections_each_keep_their_period);
    suite_add_tcase(s, tc);
    return s;
}

int main(void)
{
    return kb_check_run(suite(), "runner-schedule");
}
