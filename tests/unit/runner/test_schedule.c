/* test_schedule.c -- runner/schedule.c: exact counts for a duration, even spacing per thread
 * and in aggregate, no request early, every request owned by exactly one thread. */
#include <check.h>
#include <stdint.h>
#include <stdlib.h>

#include "runner/schedule.h"
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

static Suite *suite(void)
{
    Suite *s = suite_create("schedule");
    TCase *tc = tcase_create("schedule");
    tcase_add_test(tc, exact_count_for_duration);
    tcase_add_test(tc, threads_share_every_request_once);
    tcase_add_test(tc, evenly_spaced_never_early);
    tcase_add_test(tc, aggregate_evenly_spaced_and_no_drift);
    tcase_add_test(tc, catch_up_is_only_what_is_due);
    suite_add_tcase(s, tc);
    return s;
}

int main(void)
{
    return kb_check_run(suite(), "runner-schedule");
}
