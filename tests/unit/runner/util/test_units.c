/* test_units.c -- the command line's duration and rate forms (runner/util/units.h): what wrk2,
 * hey, k6 and vegeta users type is taken, everything else refused rather than misread. */
#include "runner/util/units.h"
#include "tests/lib/kb_check.h"

static double dur(const char *s)
{
    double v = -1;
    ck_assert_msg(kb_parse_duration(s, 0, 86400, &v) == 0, "duration '%s' refused", s);
    return v;
}

static double rate(const char *s)
{
    double v = -1;
    ck_assert_msg(kb_parse_rate(s, 1e-3, 1e7, &v) == 0, "rate '%s' refused", s);
    return v;
}

START_TEST(durations_with_units)
{
    ck_assert_double_eq_tol(dur("10"), 10, 1e-12);        /* bare: seconds, as before */
    ck_assert_double_eq_tol(dur("10s"), 10, 1e-12);
    ck_assert_double_eq_tol(dur("500ms"), 0.5, 1e-12);
    ck_assert_double_eq_tol(dur("2m"), 120, 1e-12);
    ck_assert_double_eq_tol(dur("1h"), 3600, 1e-12);
    ck_assert_double_eq_tol(dur("1.5s"), 1.5, 1e-12);
    ck_assert_double_eq_tol(dur("0.25"), 0.25, 1e-12);
    ck_assert_double_eq_tol(dur(".5s"), 0.5, 1e-12);
    ck_assert_double_eq_tol(dur("250us"), 250e-6, 1e-15);
    ck_assert_double_eq_tol(dur("0"), 0, 1e-12);
}
END_TEST

START_TEST(durations_refused)
{
    static const char *const bad[] = { "", "s", "ms", "-1s", "+1s", "1e3", "0x10", "inf", "nan",
        " 10s", "10 s", "10s ", "10S", "10sec", "10x", "1.2.3s", "10ms5", ".", "1..5", "2d" };
    double v = 42;
    for (size_t i = 0; i < sizeof(bad) / sizeof(bad[0]); i++) {
        ck_assert_msg(kb_parse_duration(bad[i], 0, 86400, &v) == -1, "'%s' taken", bad[i]);
        ck_assert_double_eq(v, 42);          /* untouched when refused */
    }
    ck_assert_int_eq(kb_parse_duration(NULL, 0, 1, &v), -1);
}
END_TEST

START_TEST(duration_range_after_the_unit)
{
    double v;
    ck_assert_int_eq(kb_parse_duration("25h", 0, 86400, &v), -1);
    ck_assert_int_eq(kb_parse_duration("24h", 0, 86400, &v), 0);
    ck_assert_int_eq(kb_parse_duration("500us", 1e-3, 10, &v), -1);   /* under 1 ms */
    ck_assert_int_eq(kb_parse_duration("1ms", 1e-3, 10, &v), 0);
    ck_assert_int_eq(kb_parse_duration("11m", 0, 600, &v), -1);
}
END_TEST

START_TEST(rates_with_suffixes)
{
    ck_assert_double_eq_tol(rate("45000"), 45000, 1e-9);
    ck_assert_double_eq_tol(rate("20k"), 20000, 1e-9);
    ck_assert_double_eq_tol(rate("20K"), 20000, 1e-9);
    ck_assert_double_eq_tol(rate("1.5k"), 1500, 1e-9);
    ck_assert_double_eq_tol(rate("2M"), 2e6, 1e-9);
    ck_assert_double_eq_tol(rate("0.5"), 0.5, 1e-12);
}
END_TEST

START_TEST(rates_refused)
{
    static const char *const bad[] = { "", "k", "-5", "2m", "20kk", "20k/s", "1e4", "0x100",
        "fast", "20 k", "inf", "11M", "0" };
    double v = 42;
    for (size_t i = 0; i < sizeof(bad) / sizeof(bad[0]); i++)
        ck_assert_msg(kb_parse_rate(bad[i], 1e-3, 1e7, &v) == -1, "'%s' taken", bad[i]);
    ck_assert_double_eq(v, 42);
}
END_TEST

static Suite *suite(void)
{
    Suite *s = suite_create("units");
    TCase *tc = tcase_create("parse");
    tcase_add_test(tc, durations_with_units);
    tcase_add_test(tc, durations_refused);
    tcase_add_test(tc, duration_range_after_the_unit);
    tcase_add_test(tc, rates_with_suffixes);
    tcase_add_test(tc, rates_refused);
    suite_add_tcase(s, tc);
    return s;
}

int main(void)
{
    return kb_check_run(suite(), "units");
}
