/* test_backlog.c -- runner/run/curve/backlog.c: a queue that grew through the measured seconds,
 * read from the series the load writes: a rise every second by more than noise is flagged;
 * a flat, a noisy, a single-step, a drain-only or a too-short rise is not; a malformed series
 * is refused. */
#define _GNU_SOURCE
#include "runner/run/curve/backlog.h"
#include "tests/lib/kb_check.h"

#include <string.h>

#define HEAD "start_s,length_s,completed,achieved_rps,p50_us,p99_us,max_us,errors,bounded," \
             "p50_is_bound,p99_is_bound,max_is_bound\n"

static int read_text(const char *csv, double duration, struct kb_backlog *b)
{
    return kb_backlog_read(csv, strlen(csv), duration, b);
}

START_TEST(a_median_that_rises_every_second_is_a_growing_queue)
{
    /* 2 % past capacity for 3 s: about 20 ms more work queued each second, p99 still < 100 ms */
    struct kb_backlog b;
    ck_assert_int_eq(read_text(HEAD "0.000,1.000,9800,9800.0,11000,21000,22000,0,0,0,0,0\n"
                               "1.000,1.000,9800,9800.0,31000,41000,42000,0,0,0,0,0\n"
                               "2.000,1.000,9800,9800.0,52000,61000,62000,0,0,0,0,0\n"
                               "3.000,0.400,3900,9750.0,60000,70000,70000,0,0,0,0,0\n", 3, &b), 0);
    ck_assert_int_eq(b.seconds, 3);
    ck_assert(b.grew);
    ck_assert(b.first_p50_us == 11000 && b.last_p50_us == 52000);
}
END_TEST

START_TEST(below_the_knee_no_queue_grows)
{
    struct kb_backlog b;
    /* flat medians */
    ck_assert_int_eq(read_text(HEAD "0.000,1.000,9800,9800.0,900,2100,2200,0,0,0,0,0\n"
                               "1.000,1.000,9800,9800.0,950,2000,2400,0,0,0,0,0\n"
                               "2.000,1.000,9800,9800.0,1000,2500,3000,0,0,0,0,0\n", 3, &b), 0);
    ck_assert(!b.grew);       /* risen every second, but by a tenth of a millisecond */
    /* one disturbed second, then back */
    ck_assert_int_eq(read_text(HEAD "0.000,1.000,9800,9800.0,900,2100,2200,0,0,0,0,0\n"
                               "1.000,1.000,9800,9800.0,30000,80000,90000,0,0,0,0,0\n"
                               "2.000,1.000,9800,9800.0,1000,2500,3000,0,0,0,0,0\n", 3, &b), 0);
    ck_assert(!b.grew);
    /* two seconds are not a trend */
    ck_assert_int_eq(read_text(HEAD "0.000,1.000,9800,9800.0,1000,2100,2200,0,0,0,0,0\n"
                               "1.000,1.000,9800,9800.0,30000,80000,90000,0,0,0,0,0\n", 2, &b), 0);
    ck_assert(!b.grew);
    ck_assert_int_eq(b.seconds, 2);
    /* a rise only in the drain's seconds is the drain's, not the interval's */
    ck_assert_int_eq(read_text(HEAD "0.000,1.000,9800,9800.0,1000,2100,2200,0,0,0,0,0\n"
                               "1.000,1.000,9800,9800.0,1000,2000,2200,0,0,0,0,0\n"
                               "2.000,1.000,9800,9800.0,1000,2000,2200,0,0,0,0,0\n"
                               "3.000,1.000,9800,9800.0,9000,12000,22000,0,0,0,0,0\n"
                               "4.000,1.000,9800,9800.0,19000,32000,42000,0,0,0,0,0\n", 3, &b), 0);
    ck_assert(!b.grew);
    ck_assert_int_eq(b.seconds, 3);
}
END_TEST

START_TEST(a_second_without_latency_is_skipped_and_a_bad_series_refused)
{
    struct kb_backlog b;
    ck_assert_int_eq(read_text(HEAD "0.000,1.000,0,0.0,,,,5,0,0,0,0\n", 3, &b), 0);
    ck_assert_int_eq(b.seconds, 0);
    ck_assert(!b.grew);
    ck_assert_int_eq(read_text("time,value\n1,2\n", 3, &b), -1);
    ck_assert_int_eq(read_text(HEAD "zero,1.000,0,0.0,1,1,1,0,0,0,0,0\n", 3, &b), -1);
    ck_assert_int_eq(read_text("", 3, &b), -1);
    ck_assert_int_eq(kb_backlog_file("/nonexistent/series.csv", 3, &b), -1);
    ck_assert_int_eq(kb_backlog_file("/proc/self/status", 3, &b), -1);
}
END_TEST

static Suite *suite(void)
{
    Suite *s = suite_create("backlog");
    TCase *tc = tcase_create("backlog");
    tcase_add_test(tc, a_median_that_rises_every_second_is_a_growing_queue);
    tcase_add_test(tc, below_the_knee_no_queue_grows);
    tcase_add_test(tc, a_second_without_latency_is_skipped_and_a_bad_series_refused);
    suite_add_tcase(s, tc);
    return s;
}

int main(void)
{
    return kb_check_run(suite(), "backlog");
}
