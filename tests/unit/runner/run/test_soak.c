/* test_soak.c -- the soak's slope fit and growth verdict on synthetic series: an exact line
 * is recovered, a flat (noisy) series passes, a steady climb fails, the floor and the
 * percentage both have to be crossed, too few samples fail, and the phase verdict keeps
 * the curve's failure causes and adds growth and counters at rest. */
#define _POSIX_C_SOURCE 200809L
#include "runner/run/soak/soak.h"
#include "tests/lib/kb_check.h"

#include <math.h>
#include <string.h>

static char why[512];
static const struct kb_soak_criteria crit = {
    .min_delivery = 0.995, .client_cpu_max_fraction = 0.80, .client_lag_p99_max_us = 1000,
    .min_samples = 2, .rss = { 1.0, 65536 }, .fds = { 1.0, 1.0 },
    .decay = { 300, 0.005, 2.0, 10000 },
};

/* Two windows of a phase: achieved and corrected p99 in each. */
static struct kb_soakwin win;

static const struct kb_soakwin *windows(double p0, double p1)
{
    memset(&win, 0, sizeof(win));
    win.n = 2;
    win.window_s = 300;
    for (int k = 0; k < 2; k++)
        win.w[k] = (struct kb_soak_window){ 300.0 * k, 300.0 * (k + 1), 300, 1200000, 0, 4000,
                                            k ? p1 : p0, 0 };
    return &win;
}

/* n samples every dt seconds starting at t0: y = base + per_s * t (+ alternating noise) */
static void series(double *t, double *y, size_t n, double t0, double dt, double base,
                   double per_s, double noise)
{
    for (size_t i = 0; i < n; i++) {
        t[i] = t0 + dt * (double)i;
        y[i] = base + per_s * (t[i] - t0) + ((i % 2) ? noise : -noise);
    }
}

START_TEST(fit_recovers_a_line)
{
    double t[50], y[50];
    struct kb_slope s;
    /* a large clock offset must not cost precision (centred sums) */
    series(t, y, 50, 1.7e9, 10, 1000, 2.5, 0);
    ck_assert_int_eq(kb_soak_fit(t, y, 50, &s), 0);
    ck_assert_double_eq_tol(s.slope_per_s, 2.5, 1e-6);
    ck_assert_double_eq_tol(s.per_hour, 9000, 1e-3);
    ck_assert_double_eq_tol(s.window_s, 490, 1e-6);
    ck_assert_double_eq_tol(s.rise, 1225, 1e-3);
    ck_assert_double_eq_tol(s.first, 1000, 1e-9);
    ck_assert_double_eq_tol(s.last, 1000 + 2.5 * 490, 1e-6);
    ck_assert_uint_eq(s.n, 50);
}
END_TEST

START_TEST(fit_needs_two_distinct_times)
{
    double t[2] = { 5, 5 }, y[2] = { 1, 2 };
    struct kb_slope s;
    ck_assert_int_eq(kb_soak_fit(t, y, 1, &s), -1);
    ck_assert_int_eq(kb_soak_fit(t, y, 2, &s), -1);
    t[1] = 6;
    ck_assert_int_eq(kb_soak_fit(t, y, 2, &s), 0);
    ck_assert_double_eq_tol(s.slope_per_s, 1, 1e-12);
}
END_TEST

START_TEST(flat_passes_climb_fails)
{
    /* an hour at 10 s: 358 samples of ~10 MiB, the paper's shape */
    double t[358], y[358];
    struct kb_slope s;
    series(t, y, 358, 15, 10, 10284.0 * 1024, 0, 4096);         /* one page of jitter */
    ck_assert_int_eq(kb_soak_fit(t, y, 358, &s), 0);
    ck_assert_int_eq(kb_soak_growth(&s, &crit.rss, "rss", why, sizeof(why)), 0);
    ck_assert_msg(strstr(why, "flat") != NULL, "%s", why);
    /* a leak of 1 MiB an hour (10 % of the mean) is growth */
    series(t, y, 358, 15, 10, 10284.0 * 1024, 1048576.0 / 3600, 4096);
    ck_assert_int_eq(kb_soak_fit(t, y, 358, &s), 0);
    ck_assert_double_eq_tol(s.per_hour, 1048576.0, 1048.576);   /* the jitter biases it < 0.1 % */
    ck_assert_int_eq(kb_soak_growth(&s, &crit.rss, "rss", why, sizeof(why)), 1);
    ck_assert_msg(strstr(why, "grows") != NULL, "%s", why);
    /* a shrinking series is not growth */
    series(t, y, 358, 15, 10, 10284.0 * 1024, -100, 0);
    ck_assert_int_eq(kb_soak_fit(t, y, 358, &s), 0);
    ck_assert_int_eq(kb_soak_growth(&s, &crit.rss, "rss", why, sizeof(why)), 0);
}
END_TEST

START_TEST(both_threshold_and_floor_must_be_crossed)
{
    double t[4], y[4];
    struct kb_slope s;
    struct kb_growth_rule r = { 1.0, 1.0 };
    /* 3 descriptors gained in 3 s: far above 1 %/h of 262 and above the 1-descriptor floor */
    series(t, y, 4, 0, 1, 262, 1, 0);
    ck_assert_int_eq(kb_soak_fit(t, y, 4, &s), 0);
    ck_assert_int_eq(kb_soak_growth(&s, &r, "fds", why, sizeof(why)), 1);
    /* half a descriptor of fitted rise over the window: under the floor, noise */
    series(t, y, 4, 0, 1, 262, 0.5 / 3, 0);
    ck_assert_int_eq(kb_soak_fit(t, y, 4, &s), 0);
    ck_assert_int_eq(kb_soak_growth(&s, &r, "fds", why, sizeof(why)), 0);
    /* above the floor but within the percentage: 2 descriptors over a day's window */
    series(t, y, 4, 0, 28800, 262, 2.0 / 86400, 0);
    ck_assert_int_eq(kb_soak_fit(t, y, 4, &s), 0);
    ck_assert_double_eq_tol(s.rise, 2.0, 1e-9);
    ck_assert_int_eq(kb_soak_growth(&s, &r, "fds", why, sizeof(why)), 0);
}
END_TEST

static struct kb_point_load good(void)
{
    struct kb_point_load r;
    memset(&r, 0, sizeof(r));
    r.requested_rps = 4000;
    r.achieved_rps = 3999.9;
    r.delivery = 0.99997;
    r.corrected.p99 = 802820;   /* the paper's db tail: reported, not judged */
    r.lag.p99 = 100;
    r.client_cpu_fraction = 0.1;
    r.client_cpus = 1;
    return r;
}

static struct kb_soak_obs flat_obs(void)
{
    static double t[10], y[10], f[10];
    struct kb_soak_obs o;
    memset(&o, 0, sizeof(o));
    o.point.have_load = 1;
    series(t, y, 10, 0, 10, 14065664, 0, 0);
    series(t, f, 10, 0, 10, 263, 0, 0);
    o.have_rss = kb_soak_fit(t, y, 10, &o.rss) == 0;
    o.have_fds = kb_soak_fit(t, f, 10, &o.fds) == 0;
    o.windows = windows(802820, 790000);
    return o;
}

START_TEST(phase_verdict)
{
    struct kb_point_load r = good();
    struct kb_soak_obs o = flat_obs();
    double t[10], y[10];
    ck_assert_int_eq(kb_soak_judge(&r, &o, &crit, why, sizeof(why)), KB_SOAK_PASS);
    /* delivery just short of near-exact */
    r.delivery = 0.994;
    ck_assert_int_eq(kb_soak_judge(&r, &o, &crit, why, sizeof(why)), KB_SOAK_FAIL);
    ck_assert_msg(strstr(why, "delivery") != NULL, "%s", why);
    r = good();
    r.non2xx = 1;
    ck_assert_int_eq(kb_soak_judge(&r, &o, &crit, why, sizeof(why)), KB_SOAK_FAIL);
    r = good();
    o.point.fixture_exited = 1;
    ck_assert_int_eq(kb_soak_judge(&r, &o, &crit, why, sizeof(why)), KB_SOAK_FAIL);
    ck_assert_msg(strstr(why, "exited") != NULL, "%s", why);
    o = flat_obs();
    r.client_cpu_fraction = 0.95;
    ck_assert_int_eq(kb_soak_judge(&r, &o, &crit, why, sizeof(why)), KB_SOAK_CLIENT_LIMITED);
    r = good();
    /* descriptors climbing one per sample */
    series(t, y, 10, 0, 10, 263, 0.1, 0);
    ck_assert_int_eq(kb_soak_fit(t, y, 10, &o.fds), 0);
    ck_assert_int_eq(kb_soak_judge(&r, &o, &crit, why, sizeof(why)), KB_SOAK_FAIL);
    ck_assert_msg(strstr(why, "descriptors grows") != NULL, "%s", why);
    /* one sample is no slope */
    o = flat_obs();
    o.rss.n = 1;
    ck_assert_int_eq(kb_soak_judge(&r, &o, &crit, why, sizeof(why)), KB_SOAK_FAIL);
    ck_assert_msg(strstr(why, "too few") != NULL, "%s", why);
    /* the db phase: counters not back at rest */
    o = flat_obs();
    o.stats_checked = 1;
    snprintf(o.stats_reason, sizeof(o.stats_reason), "queued=3");
    ck_assert_int_eq(kb_soak_judge(&r, &o, &crit, why, sizeof(why)), KB_SOAK_FAIL);
    ck_assert_msg(strstr(why, "queued=3") != NULL, "%s", why);
    o.stats_at_rest = 1;
    ck_assert_int_eq(kb_soak_judge(&r, &o, &crit, why, sizeof(why)), KB_SOAK_PASS);
    ck_assert_msg(strstr(why, "no decay") != NULL, "%s", why);
    /* the decay gate comes last: a tail that grew fails a phase that held everything else */
    o.windows = windows(1200, 60000);
    ck_assert_int_eq(kb_soak_judge(&r, &o, &crit, why, sizeof(why)), KB_SOAK_FAIL);
    ck_assert_msg(strstr(why, "tail grew") != NULL, "%s", why);
    /* windows that could not be read are no pass */
    o.windows = NULL;
    snprintf(o.windows_err, sizeof(o.windows_err), "series.hlog: cannot open");
    ck_assert_int_eq(kb_soak_judge(&r, &o, &crit, why, sizeof(why)), KB_SOAK_FAIL);
    ck_assert_msg(strstr(why, "decay not judged: series.hlog") != NULL, "%s", why);
    /* a phase too short for two windows cannot show decay: said, not failed */
    o.windows = windows(1200, 1200);
    win.n = 1;
    ck_assert_int_eq(kb_soak_judge(&r, &o, &crit, why, sizeof(why)), KB_SOAK_PASS);
    ck_assert_msg(strstr(why, "decay not judged") != NULL, "%s", why);
    ck_assert_str_eq(kb_soak_verdict_name(KB_SOAK_CLIENT_LIMITED), "client-limited");
}
END_TEST

static Suite *suite(void)
{
    Suite *s = suite_create("soak");
    TCase *tc = tcase_create("slope");
    tcase_add_test(tc, fit_recovers_a_line);
    tcase_add_test(tc, fit_needs_two_distinct_times);
    tcase_add_test(tc, flat_passes_climb_fails);
    tcase_add_test(tc, both_threshold_and_floor_must_be_crossed);
    tcase_add_test(tc, phase_verdict);
    suite_add_tcase(s, tc);
    return s;
}

int main(void)
{
    return kb_check_run(suite(), "soak");
}
