/* test_fixseries.c -- runner/run/fixseries.c: the one record curve, soak and qualify keep of
 * a fixture's samples: fractions between samples, a sample without a process kept out, the
 * CPU interpolated at the interval's ends, the maxima, and the bound (decimation). */
#include <check.h>
#include <math.h>

#include "runner/run/fixseries.h"
#include "tests/lib/kb_check.h"

static struct kb_proc_sample at(double cpu, long long rss, long fds, size_t nprocs)
{
    return (struct kb_proc_sample){ .cpu_seconds = cpu, .rss_bytes = rss, .pss_bytes = rss / 2,
                                    .fds = fds, .threads = 3, .nprocs = nprocs };
}

START_TEST(fractions_maxima_and_interpolation)
{
    struct kb_fixseries s;
    struct kb_proc_sample a = at(10, 1000, 5, 1), b = at(10.5, 3000, 9, 2), gone = at(0, 0, 0, 0);
    struct kb_proc_sample c = at(11.5, 2000, 7, 1);
    kb_fixseries_init(&s, 100);
    ck_assert(kb_fixseries_add(&s, 100, &a) < 0);             /* the first: no fraction */
    ck_assert_double_eq_tol(kb_fixseries_add(&s, 101, &b), 0.5, 1e-12);
    ck_assert(kb_fixseries_add(&s, 101.5, &gone) < 0);        /* the fixture gone: left out */
    ck_assert_double_eq_tol(kb_fixseries_add(&s, 103, &c), 0.5, 1e-12);
    ck_assert_uint_eq(s.n, 3);
    ck_assert_uint_eq(s.seen, 3);
    ck_assert_double_eq_tol(kb_fixseries_cpu_mean(&s), 0.5, 1e-12);
    ck_assert_double_eq_tol(kb_fixseries_cpu_at(&s, 100.5), 10.25, 1e-12);
    ck_assert_double_eq_tol(kb_fixseries_cpu_at(&s, 102), 11.0, 1e-12);
    ck_assert(isnan(kb_fixseries_cpu_at(&s, 99)) && isnan(kb_fixseries_cpu_at(&s, 104)));
    ck_assert_int_eq(s.rss_max, 3000);
    ck_assert_int_eq(s.pss_max, 1500);
    ck_assert_int_eq(s.fds_max, 9);
    ck_assert_int_eq(s.procs_max, 2);
    ck_assert_double_eq(s.rss[2], 2000);
    ck_assert_double_eq(s.fds[1], 9);
    kb_fixseries_free(&s);
    ck_assert_uint_eq(s.n, 0);
}
END_TEST

/* A server at a quarter of a CPU for ten minutes, then three quarters: its cumulative CPU. */
static double cpu_of(double t)
{
    return t <= 600 ? 0.25 * t : 150 + 0.75 * (t - 600);
}

/* A 20-minute point sampled once a second (a fake clock) into the 1,024 samples a curve
 * point used to keep: the series still reaches the end, the fractions are measured between
 * consecutive samples, and the CPU at the interval's ends is known. */
START_TEST(a_twenty_minute_point_keeps_its_series)
{
    struct kb_fixseries s;
    kb_fixseries_init(&s, 1024);
    for (int i = 0; i <= 1200; i++) {
        struct kb_proc_sample p = at(cpu_of(i), 1000 + i, 5, 1);
        double frac = kb_fixseries_add(&s, i, &p);
        if (i > 0)
            ck_assert_double_eq_tol(frac, i <= 600 ? 0.25 : 0.75, 1e-9);
    }
    ck_assert_uint_le(s.n, 1024);
    ck_assert_uint_eq(s.seen, 1201);
    ck_assert_double_eq(s.t[0], 0);
    ck_assert_double_eq(s.t[s.n - 1], 1200);         /* the newest sample is kept */
    ck_assert_double_eq_tol(kb_fixseries_cpu_mean(&s), 0.5, 1e-9);
    ck_assert_double_eq_tol(kb_fixseries_cpu_at(&s, 5.5), cpu_of(5.5), 1e-9);
    ck_assert_double_eq_tol(kb_fixseries_cpu_at(&s, 1195.5), cpu_of(1195.5), 1e-9);
    ck_assert_double_eq_tol(kb_fixseries_cpu_at(&s, 1200), cpu_of(1200), 1e-9);
    ck_assert_int_eq(s.rss_max, 2200);               /* maxima over every sample */
    for (size_t i = 1; i < s.n; i++)                 /* evenly spaced, but for the newest */
        if (i + 1 < s.n)
            ck_assert_double_eq(s.t[i] - s.t[i - 1], s.t[1] - s.t[0]);
    kb_fixseries_free(&s);
}
END_TEST

/* Far past its bound (a day at one sample a second into 300), the series keeps halving. */
START_TEST(the_bound_decimates_and_still_counts)
{
    struct kb_fixseries s;
    kb_fixseries_init(&s, 300);
    for (int i = 0; i < 86400; i++) {
        struct kb_proc_sample p = at(i * 0.1, 1000 + i, 5, 1);
        kb_fixseries_add(&s, i, &p);
    }
    ck_assert_uint_le(s.n, 300);
    ck_assert_uint_ge(s.n, 150);
    ck_assert_uint_eq(s.seen, 86400);
    ck_assert_double_eq(s.t[s.n - 1], 86399);
    ck_assert_double_eq_tol(kb_fixseries_cpu_at(&s, 43210.5), 4321.05, 1e-6);
    ck_assert_double_eq_tol(kb_fixseries_cpu_mean(&s), 0.1, 1e-9);
    ck_assert_int_eq(s.rss_max, 87399);
    kb_fixseries_free(&s);
}
END_TEST

static Suite *suite(void)
{
    Suite *s = suite_create("fixseries");
    TCase *tc = tcase_create("fixseries");
    tcase_add_test(tc, fractions_maxima_and_interpolation);
    tcase_add_test(tc, a_twenty_minute_point_keeps_its_series);
    tcase_add_test(tc, the_bound_decimates_and_still_counts);
    suite_add_tcase(s, tc);
    return s;
}

int main(void)
{
    return kb_check_run(suite(), "runner-fixseries");
}
