/* test_readiness.c -- where a readiness curve's knee lies, read on delivery and corrected p99
 * together: the last rate that held with every rate below it, the next one and what it
 * missed (delivery, latency or both), whether achieved still rose there; a curve that holds
 * throughout or misses at once; absent rates skipped. And the published curve read into the
 * model: the figure the paper did not state derived from the one it did. */
#define _GNU_SOURCE
#include "runner/report/report_int.h"
#include "tests/lib/kb_check.h"

#include <math.h>
#include <string.h>

static struct kb_knee_point pt(long rate, double achieved, double p99_us, double min_d,
                               double max_us)
{
    struct kb_knee_point p = { .rate = rate, .present = 1, .achieved_rps = achieved,
                               .delivery = achieved / (double)rate, .p99_us = p99_us };
    p.held = p.delivery >= min_d && p99_us < max_us;
    return p;
}

START_TEST(knee_between_last_held_and_first_missed)
{
    struct kb_knee_point c[5] = { pt(4000, 3966, 4530, 0.95, 1e5), pt(8000, 7810, 21660, 0.95, 1e5),
                                  pt(12000, 11879, 49410, 0.95, 1e5),
                                  pt(16000, 15147, 805890, 0.95, 1e5),
                                  pt(20000, 15053, 3.4e6, 0.95, 1e5) };
    struct kb_knee k;
    kb_report_knee(c, 5, 0.95, 1e5, &k);
    ck_assert_int_eq(k.last_held, 12000);
    ck_assert_int_eq(k.first_missed, 16000);
    ck_assert(k.missed_delivery && k.missed_p99);
    ck_assert(k.still_rising);
    ck_assert_uint_eq(k.npoints, 5);
}
END_TEST

/* Latency alone breaks at 8000 while delivery holds; a later rate that holds again is no
 * knee: the curve stopped holding below it. */
START_TEST(latency_alone_and_no_recovery)
{
    struct kb_knee_point c[3] = { pt(4000, 4000, 5000, 0.95, 1e5), pt(8000, 7990, 2e5, 0.95, 1e5),
                                  pt(12000, 11990, 9000, 0.95, 1e5) };
    struct kb_knee k;
    kb_report_knee(c, 3, 0.95, 1e5, &k);
    ck_assert_int_eq(k.last_held, 4000);
    ck_assert_int_eq(k.first_missed, 8000);
    ck_assert(!k.missed_delivery && k.missed_p99);
    /* a stricter criterion moves it (re-judging) */
    c[0].held = 0;
    kb_report_knee(c, 3, 0.95, 4000, &k);
    ck_assert_int_eq(k.last_held, 0);
    ck_assert_int_eq(k.first_missed, 4000);
    ck_assert(k.missed_p99 && !k.still_rising);
}
END_TEST

START_TEST(all_held_and_absent_skipped)
{
    struct kb_knee_point c[3] = { pt(500, 500, 3000, 0.95, 1e5), { .rate = 800 },
                                  pt(1000, 999, 4000, 0.95, 1e5) };
    struct kb_knee k;
    kb_report_knee(c, 3, 0.95, 1e5, &k);
    ck_assert_int_eq(k.last_held, 1000);
    ck_assert_int_eq(k.first_missed, 0);
    ck_assert_uint_eq(k.npoints, 2);
}
END_TEST

/* A figure never recorded (NAN) is not said to have missed. */
START_TEST(nan_is_not_a_miss)
{
    struct kb_knee_point c[1] = { { .rate = 500, .present = 1, .achieved_rps = NAN,
                                    .delivery = NAN, .p99_us = NAN } };
    struct kb_knee k;
    kb_report_knee(c, 1, 0.95, 1e5, &k);
    ck_assert_int_eq(k.first_missed, 500);
    ck_assert(!k.missed_delivery && !k.missed_p99);
}
END_TEST

START_TEST(published_curve_derives_the_unstated_figure)
{
    struct kb_published_point pts[2] = { { 4000, 3965.82, -1, 4530 }, { 16000, -1, 0.94666, 805890 } };
    struct kb_published_curve c = { "db-readiness", "src", "host", "gray-static", "db", pts, 2,
                                    NULL };
    struct kb_report r;
    struct kb_knee_point p;
    long rates[8];
    memset(&r, 0, sizeof(r));
    r.min_delivery = 0.95;
    r.max_p99_us = 1e5;
    r.plan = json_pack("{s:[i]}", "rates", 500);
    r.published = json_pack("{s:{}}", "highest_controlled_rps");
    kb_report_load_curve(&r, &c);
    ck_assert_ptr_nonnull(r.published_curve);
    kb_report_curve_paper(&r, 16000, &p);
    ck_assert(p.present && !p.held);
    ck_assert_double_eq_tol(p.achieved_rps, 0.94666 * 16000, 1e-6);
    kb_report_curve_paper(&r, 4000, &p);
    ck_assert_double_eq_tol(p.delivery, 3965.82 / 4000, 1e-9);
    ck_assert(p.held);
    ck_assert_uint_eq(kb_report_curve_rates(&r, rates, 8), 3);
    ck_assert_int_eq(rates[0], 500);
    ck_assert_int_eq(rates[2], 16000);
    /* its highest held rate joins the papers' highest controlled points */
    ck_assert_int_eq(json_integer_value(json_object_get(json_object_get(
        json_object_get(r.published, "highest_controlled_rps"), "gray-static"), "db")), 4000);
    json_decref(r.plan);
    json_decref(r.published);
    json_decref(r.published_curve);
}
END_TEST

static Suite *suite(void)
{
    Suite *s = suite_create("readiness");
    TCase *tc = tcase_create("readiness");
    tcase_add_test(tc, knee_between_last_held_and_first_missed);
    tcase_add_test(tc, latency_alone_and_no_recovery);
    tcase_add_test(tc, all_held_and_absent_skipped);
    tcase_add_test(tc, nan_is_not_a_miss);
    tcase_add_test(tc, published_curve_derives_the_unstated_figure);
    suite_add_tcase(s, tc);
    return s;
}

int main(void)
{
    return kb_check_run(suite(), "readiness");
}
