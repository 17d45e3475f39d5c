/* test_qualify.c -- the db qualification's rules on synthetic evidence: zero growth means no
 * sample above the first (a page more fails, a fall does not), the /stats series' density is
 * counted inside the measured interval only, its longest gap and most suspended handlers
 * found, the final sample's gauges checked by name (missing is not zero), and the verdict
 * names every failed criterion and keeps the curve's failure and trust rules. */
#define _POSIX_C_SOURCE 200809L
#include "runner/run/qualjudge.h"
#include "tests/lib/kb_check.h"

#include <string.h>

static char why[1024];
static char *gauges[] = { "suspended_now", "queued", "pool_busy" };

START_TEST(growth_is_any_rise_above_the_first_sample)
{
    double t[5] = { 10, 11, 12, 13.5, 14 }, y[5] = { 100, 100, 100, 100, 100 };
    struct kb_growth g;
    ck_assert_int_eq(kb_qual_growth(t, y, 5, &g), 0);
    ck_assert(g.rise == 0 && g.first == 100 && g.last == 100);
    ck_assert_double_eq_tol(g.every_s, 1.5, 1e-12);    /* the largest spacing */
    ck_assert_double_eq_tol(g.window_s, 4, 1e-12);
    y[2] = 104;                                        /* up then back: still growth */
    ck_assert_int_eq(kb_qual_growth(t, y, 5, &g), 0);
    ck_assert(g.rise == 4 && g.max == 104 && g.last == 100);
    y[2] = 100;
    y[4] = 96;                                         /* a fall is not growth */
    ck_assert_int_eq(kb_qual_growth(t, y, 5, &g), 0);
    ck_assert(g.rise == 0 && g.min == 96);
    ck_assert_int_eq(kb_qual_growth(t, y, 1, &g), -1);
    ck_assert_uint_eq(g.n, 1);
}
END_TEST

static json_t *stats(long now, long queued, long busy, long hwm)
{
    return json_pack("{s:I,s:I,s:I,s:I,s:I}", "suspended_now", (json_int_t)now, "queued",
                     (json_int_t)queued, "pool_busy", (json_int_t)busy, "pool_idle",
                     (json_int_t)(64 - busy), "suspended_max", (json_int_t)hwm);
}

/* Samples every 0.1 s from 0 to 7 s (warmup 2, measured 2..7), the last one at rest. */
static size_t make_series(struct kb_stats_sample *s, size_t max)
{
    size_t n = 0;
    for (double t = 0; t < 7.05 && n < max; t += 0.1, n++) {
        s[n].t_s = t;
        s[n].ok = 1;
        s[n].stats = stats(n % 7, 0, n % 7, 90);
    }
    s[n].t_s = 7.2;
    s[n].ok = 1;
    s[n].stats = stats(0, 0, 0, 90);
    return n + 1;
}

static void free_series(struct kb_stats_sample *s, size_t n)
{
    for (size_t i = 0; i < n; i++)
        json_decref(s[i].stats);
}

START_TEST(stats_summary_counts_the_measured_interval)
{
    struct kb_stats_sample s[100];
    struct kb_stats_summary m;
    size_t n = make_series(s, 99);
    kb_qual_stats_summary(s, n, 2.0, 7.0, gauges, 3, &m);
    ck_assert_uint_eq(m.samples, n);
    ck_assert_uint_eq(m.ok, n);
    ck_assert_uint_ge(m.ok_measured, 49);                 /* 2.0 .. 7.0 every 0.1 s */
    ck_assert_uint_le(m.ok_measured, 51);
    ck_assert_double_eq_tol(m.per_s, (double)m.ok_measured / 5.0, 1e-9);
    ck_assert_double_le(m.max_gap_s, 0.11);
    ck_assert_int_eq(m.suspended_now_max, 6);
    ck_assert_int_eq(m.suspended_max_server, 90);
    ck_assert(m.final_ok && m.final_zero);
    /* a hole of a second in the middle, failed reads around it */
    for (size_t i = 30; i < 40; i++)
        s[i].ok = 0;
    kb_qual_stats_summary(s, n, 2.0, 7.0, gauges, 3, &m);
    ck_assert_double_ge(m.max_gap_s, 0.99);
    ck_assert_uint_eq(m.ok, n - 10);
    /* the final sample not at zero, or lacking a gauge */
    json_decref(s[n - 1].stats);
    s[n - 1].stats = json_pack("{s:i,s:i}", "suspended_now", 0, "queued", 2);
    kb_qual_stats_summary(s, n, 2.0, 7.0, gauges, 3, &m);
    ck_assert(m.final_ok && !m.final_zero);
    ck_assert_msg(strstr(m.final_nonzero, "queued=2") &&
                  strstr(m.final_nonzero, "pool_busy=missing"), "%s", m.final_nonzero);
    s[n - 1].ok = 0;
    kb_qual_stats_summary(s, n, 2.0, 7.0, gauges, 3, &m);
    ck_assert(!m.final_ok && !m.final_zero);
    kb_qual_stats_summary(s, 0, 2.0, 7.0, gauges, 3, &m);
    ck_assert(!m.final_ok && m.per_s == 0 && m.suspended_now_max == -1);
    free_series(s, n);
}
END_TEST

static const struct kb_qual_criteria crit = {
    .point = { .min_delivery = 0.95, .max_p99_us = 100000, .client_cpu_max_fraction = 0.9,
               .client_lag_p99_max_us = 1000, .client_rx_delay_p99_max_us = 1000 },
    .min_stats_per_s = 10,
};

static struct kb_point_load good(void)
{
    struct kb_point_load r;
    memset(&r, 0, sizeof(r));
    r.requested_rps = 8000;
    r.achieved_rps = 7961.48;
    r.delivery = 0.99519;
    r.scheduled = r.sent = r.completed = 240000;
    r.corrected.count = 240000;
    r.corrected.p99 = 4600;
    r.lag.p99 = r.rx_delay.p99 = 100;
    r.client_cpu_fraction = 0.1;
    r.client_cpus = 1;
    r.completed_in_interval = -1;
    return r;
}

static struct kb_qual_obs good_obs(void)
{
    static const double t[3] = { 10, 11, 12 }, rss[3] = { 15286272, 15286272, 15286272 },
                        fds[3] = { 327, 327, 327 };
    struct kb_qual_obs o;
    memset(&o, 0, sizeof(o));
    o.point.have_load = 1;
    o.have_rss = kb_qual_growth(t, rss, 3, &o.rss) == 0;
    o.have_fds = kb_qual_growth(t, fds, 3, &o.fds) == 0;
    o.stats.per_s = 10.87;
    o.stats.final_ok = o.stats.final_zero = 1;
    return o;
}

START_TEST(verdict_names_every_failed_criterion)
{
    struct kb_point_load r = good();
    struct kb_qual_obs o = good_obs();
    ck_assert_int_eq(kb_qual_judge(&r, &o, &crit, why, sizeof(why)), KB_QUAL_PASS);
    /* one page of RSS and one descriptor above the first sample */
    o.rss.rise = 4096;
    o.fds.rise = 1;
    o.stats.per_s = 9.9;
    o.stats.final_zero = 0;
    snprintf(o.stats.final_nonzero, sizeof(o.stats.final_nonzero), "pool_busy=1");
    ck_assert_int_eq(kb_qual_judge(&r, &o, &crit, why, sizeof(why)), KB_QUAL_FAIL);
    ck_assert_msg(strstr(why, "RSS grew 4 KiB") && strstr(why, "descriptors grew by 1") &&
                  strstr(why, "9.9 times a second") && strstr(why, "pool_busy=1"), "%s", why);
    /* the point's own rules: under 95 % delivery, p99 at the bound, a mismatch */
    o = good_obs();
    r.delivery = 0.9499;
    ck_assert_int_eq(kb_qual_judge(&r, &o, &crit, why, sizeof(why)), KB_QUAL_FAIL);
    ck_assert_msg(strstr(why, "uncontrolled") != NULL, "%s", why);
    r = good();
    r.corrected.p99 = 100000;
    ck_assert_int_eq(kb_qual_judge(&r, &o, &crit, why, sizeof(why)), KB_QUAL_FAIL);
    r = good();
    r.mismatches = r.mm_body = 1;
    ck_assert_int_eq(kb_qual_judge(&r, &o, &crit, why, sizeof(why)), KB_QUAL_FAIL);
    ck_assert_msg(strstr(why, "failed") != NULL, "%s", why);
    /* too few resource samples to judge growth */
    r = good();
    o.have_rss = 0;
    ck_assert_int_eq(kb_qual_judge(&r, &o, &crit, why, sizeof(why)), KB_QUAL_FAIL);
    ck_assert_msg(strstr(why, "fewer than 2") != NULL, "%s", why);
    /* a late client is not a pass, and not a fail of the server either */
    o = good_obs();
    r.lag.p99 = 5000;
    ck_assert_int_eq(kb_qual_judge(&r, &o, &crit, why, sizeof(why)), KB_QUAL_CLIENT_LIMITED);
    /* ... unless a criterion of its own failed */
    o.fds.rise = 2;
    ck_assert_int_eq(kb_qual_judge(&r, &o, &crit, why, sizeof(why)), KB_QUAL_FAIL);
    ck_assert_str_eq(kb_qual_verdict_name(KB_QUAL_CLIENT_LIMITED), "client-limited");
}
END_TEST

static Suite *suite(void)
{
    Suite *s = suite_create("qualify");
    TCase *tc = tcase_create("qualify");
    tcase_add_test(tc, growth_is_any_rise_above_the_first_sample);
    tcase_add_test(tc, stats_summary_counts_the_measured_interval);
    tcase_add_test(tc, verdict_names_every_failed_criterion);
    suite_add_tcase(s, tc);
    return s;
}

int main(void)
{
    return kb_check_run(suite(), "qualify");
}
