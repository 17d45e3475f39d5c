/* test_soakwin.c -- the soak's windows and decay gate: how many windows a phase gets; windows
 * read from a series written as the load generator writes it match an independent merge of
 * the same intervals (the drain left out); the rule fails a phase for a throughput drop or a
 * tail that grew past both the factor and the floor, and for nothing less. */
#define _POSIX_C_SOURCE 200809L
#include "runner/load/hlog.h"
#include "runner/run/soak/soakwin.h"
#include "tests/lib/kb_check.h"
#include "tests/unit/runner/tmpdir.h"

#include <math.h>
#include <stdio.h>
#include <string.h>


static char err[512];

START_TEST(window_count)
{
    ck_assert_uint_eq(kb_soakwin_count(3600, 300), 12);   /* an hour: 5-minute windows */
    ck_assert_uint_eq(kb_soakwin_count(120, 300), 10);    /* shorter: a tenth */
    ck_assert_uint_eq(kb_soakwin_count(1800, 300), 10);
    ck_assert_uint_eq(kb_soakwin_count(4, 300), 4);       /* never under a second */
    ck_assert_uint_eq(kb_soakwin_count(1.5, 300), 1);
    ck_assert_uint_eq(kb_soakwin_count(86400, 300), KB_SOAKWIN_MAX);
}
END_TEST

/* Interval i of a 20 s phase (and one of its drain): n_i values of v_i us each, recorded
 * in nanoseconds as the load generator records its series (runner/load/hlog.h). */
static void interval(struct kb_hist *h, int i)
{
    kb_hist_reset(h);
    for (int k = 0; k < 100 + 10 * i; k++)
        kb_hist_record(h, ((i < 10 ? 1000 : 50000) + 37 * k) * 1000LL);
}

START_TEST(windows_merge_their_intervals)
{
    struct kb_hlog_series *ser = kb_hlog_series_new(NULL, 1700000000.0);
    struct kb_hist h, merged[10];
    struct kb_soakwin *w = calloc(1, sizeof(*w));
    char hlog[256], csv[256];
    ck_assert_int_eq(kb_hist_init(&h, 1, KB_HLOG_HIGHEST_NS, 3), 0);
    for (int k = 0; k < 10; k++)
        ck_assert_int_eq(kb_hist_init(&merged[k], 1, KB_HLOG_HIGHEST_NS, 3), 0);
    for (int i = 0; i < 21; i++) {           /* 20 measured seconds and one of drain */
        interval(&h, i);
        ck_assert_int_eq(kb_hlog_series_add(ser, i, 1.0, &h, 0, err, sizeof(err)), 0);
        if (i < 20)
            ck_assert_int_eq(kb_hist_add(&merged[i / 2], &h), 0);
    }
    snprintf(hlog, sizeof(hlog), "%s/series.hlog", kb_tmp);
    snprintf(csv, sizeof(csv), "%s/series.csv", kb_tmp);
    ck_assert_int_eq(kb_hlog_series_write(ser, hlog, csv, err, sizeof(err)), 0);
    ck_assert_msg(kb_soakwin_read(kb_tmp, 20, 300, w, err, sizeof(err)) == 0, "%s", err);
    ck_assert_uint_eq(w->n, 10);
    ck_assert_double_eq_tol(w->window_s, 2, 1e-9);
    for (int k = 0; k < 10; k++) {
        ck_assert_int_eq(w->w[k].completed, merged[k].total_count);
        ck_assert_double_eq_tol(w->w[k].seconds, 2, 1e-9);
        ck_assert_double_eq_tol(w->w[k].achieved_rps, merged[k].total_count / 2.0, 1e-9);
        ck_assert_double_eq(w->w[k].p99_us,
                            (double)kb_hist_value_at_percentile(&merged[k], 99) / 1000.0);
        ck_assert(!w->w[k].p99_bound);
        kb_hist_free(&merged[k]);
    }
    ck_assert_double_eq_tol(w->w[9].end_s, 20, 1e-9);
    kb_hist_free(&h);
    kb_hlog_series_free(ser);
    /* a phase without its series is not judged from nothing */
    ck_assert_int_eq(kb_soakwin_read("/nonexistent-kb-dir", 20, 300, w, err, sizeof(err)), -1);
    free(w);
}
END_TEST

static void two(struct kb_soakwin *w, double rps0, double p0, double rps1, double p1)
{
    memset(w, 0, sizeof(*w));
    w->n = 2;
    w->window_s = 300;
    w->w[0] = (struct kb_soak_window){ 0, 300, 300, (long long)(rps0 * 300), 0, rps0, p0, 0 };
    w->w[1] = (struct kb_soak_window){ 300, 600, 300, (long long)(rps1 * 300), 0, rps1, p1, 0 };
}

START_TEST(the_rule_judges_first_against_last)
{
    const struct kb_decay_rule r = { 300, 0.005, 2.0, 10000 };
    struct kb_soakwin *w = calloc(1, sizeof(*w));
    struct kb_decay d;
    char why[512];
    two(w, 50000, 7000, 49900, 9000);                 /* -0.2 %, p99 x1.3 */
    ck_assert_int_eq(kb_soakwin_judge(w, &r, &d, why, sizeof(why)), 0);
    ck_assert_msg(strstr(why, "no decay") != NULL, "%s", why);
    two(w, 50000, 7000, 49000, 7000);                 /* -2 % */
    ck_assert_int_eq(kb_soakwin_judge(w, &r, &d, why, sizeof(why)), 1);
    ck_assert(d.rate_decays && !d.tail_grows);
    ck_assert_msg(strstr(why, "throughput decayed") != NULL, "%s", why);
    two(w, 50000, 7000, 50000, 40000);                /* x5.7, +33 ms */
    ck_assert_int_eq(kb_soakwin_judge(w, &r, &d, why, sizeof(why)), 1);
    ck_assert(!d.rate_decays && d.tail_grows);
    ck_assert_msg(strstr(why, "tail grew") != NULL, "%s", why);
    two(w, 4000, 1000, 4000, 9000);                   /* x9 but +8 ms: under the floor */
    ck_assert_int_eq(kb_soakwin_judge(w, &r, &d, why, sizeof(why)), 0);
    two(w, 4000, 800000, 4000, 1500000);              /* +700 ms but x1.9: under the factor */
    ck_assert_int_eq(kb_soakwin_judge(w, &r, &d, why, sizeof(why)), 0);
    two(w, 4000, 1000, 0, NAN);                       /* nothing in the last window */
    ck_assert_int_eq(kb_soakwin_judge(w, &r, &d, why, sizeof(why)), -1);
    w->n = 1;
    ck_assert_int_eq(kb_soakwin_judge(w, &r, &d, why, sizeof(why)), -1);
    free(w);
}
END_TEST

static Suite *suite(void)
{
    Suite *s = suite_create("soakwin");
    TCase *tc = tcase_create("windows");
    tcase_add_checked_fixture(tc, kb_tmp_setup, kb_tmp_teardown);
    tcase_add_test(tc, window_count);
    tcase_add_test(tc, windows_merge_their_intervals);
    tcase_add_test(tc, the_rule_judges_first_against_last);
    suite_add_tcase(s, tc);
    return s;
}

int main(void)
{
    return kb_check_run(suite(), "soakwin");
}
