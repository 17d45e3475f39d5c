/* test_opts.c -- the one way every command reads a number option (runner/util/opts.h): the
 * values issue 26 found cast, defaulted or misread (1e12 threads, 1e10 connections, an inf
 * duration, port 70000, a 30s soak) are read or refused here, and a refusal names the
 * option, its form and its range in the same words whatever the kind. */
#include "runner/util/opts.h"
#include "tests/lib/kb_check.h"

#include <limits.h>
#include <string.h>

static char err[512];

START_TEST(the_table_is_sane)
{
    for (int i = 0; i < KB_B_COUNT; i++) {
        const struct kb_bound *b = &kb_bounds[i];
        ck_assert_msg(b->hi > b->lo, "bound %d: [%g, %g]", i, b->lo, b->hi);
        ck_assert_msg(b->lo >= 0, "bound %d: no option takes a sign", i);
    }
    /* the bounds kb_opt_int reads into an int fit one */
    ck_assert(KB_BOUND(REQLOG_LINES)->hi <= INT_MAX && KB_BOUND(PID)->hi <= INT_MAX);
    ck_assert(KB_BOUND(TIMEOUT_MS)->hi <= INT_MAX);
    /* the load generator's limits, which every command that plans a load child checks */
    ck_assert_double_eq(KB_BOUND(THREADS)->hi, 256);
    ck_assert_double_eq(KB_BOUND(CONNECTIONS)->hi, 60000);
    ck_assert_double_eq(KB_BOUND(PORT)->hi, 65535);
}
END_TEST

START_TEST(whole_numbers)
{
    int n = 42;
    long l = 42;
    ck_assert_int_eq(kb_opt_int("--threads", "256", KB_BOUND(THREADS), &n, err, sizeof(err)), 0);
    ck_assert_int_eq(n, 256);
    static const char *const bad[] = { "1e12", "257", "0", "-1", "+4", " 4", "4 ", "4x", "0x10",
                                       "4.0", "", "99999999999999999999999" };
    for (size_t i = 0; i < sizeof(bad) / sizeof(bad[0]); i++) {
        n = 42;
        ck_assert_msg(kb_opt_int("--threads", bad[i], KB_BOUND(THREADS), &n, err,
                                 sizeof(err)) == -1, "'%s' taken", bad[i]);
        ck_assert_int_eq(n, 42);
    }
    kb_opt_int("--threads", "1e12", KB_BOUND(THREADS), &n, err, sizeof(err));
    ck_assert_str_eq(err, "--threads must be a whole number in 1..256, not '1e12'");
    ck_assert_int_eq(kb_opt_long("--connections", "1e10", KB_BOUND(CONNECTIONS), &l, err,
                                 sizeof(err)), -1);
    ck_assert_str_eq(err, "--connections must be a whole number in 1..60000, not '1e10'");
    ck_assert_int_eq(kb_opt_int("--port", "70000", KB_BOUND(PORT), &n, err, sizeof(err)), -1);
    ck_assert_str_eq(err, "--port must be a whole number in 1..65535, not '70000'");
    ck_assert_int_eq(kb_opt_int("--port", "0", KB_BOUND(PORT), &n, err, sizeof(err)), -1);
    ck_assert_int_eq(kb_opt_int("--port", "0", KB_BOUND(LISTEN_PORT), &n, err, sizeof(err)), 0);
    ck_assert_int_eq(n, 0);
}
END_TEST

START_TEST(durations)
{
    double s = -1;
    ck_assert_int_eq(kb_opt_duration("--duration", "30s", KB_BOUND(DURATION), &s, err,
                                     sizeof(err)), 0);
    ck_assert_double_eq(s, 30);
    ck_assert_int_eq(kb_opt_duration("--duration", "2m", KB_BOUND(DURATION), &s, err,
                                     sizeof(err)), 0);
    ck_assert_double_eq(s, 120);
    ck_assert_int_eq(kb_opt_duration("--duration", "inf", KB_BOUND(DURATION), &s, err,
                                     sizeof(err)), -1);
    ck_assert_double_eq(s, 120);
    ck_assert_str_eq(err, "--duration must be a duration in (0, 24h] (30, 30s, 500ms, 2m), "
                     "not 'inf'");
    /* the open end: a zero duration measures nothing; a zero warmup is wrk2's */
    ck_assert_int_eq(kb_opt_duration("-d", "0ms", KB_BOUND(DURATION), &s, err, sizeof(err)), -1);
    ck_assert_int_eq(kb_opt_duration("--warmup", "0", KB_BOUND(WARMUP), &s, err, sizeof(err)), 0);
    ck_assert_int_eq(kb_opt_duration("--drain", "11m", KB_BOUND(DRAIN), &s, err, sizeof(err)), -1);
    ck_assert_str_eq(err, "--drain must be a duration in [0, 10m] (30, 30s, 500ms, 2m), not '11m'");
    ck_assert_int_eq(kb_opt_duration("-T", "500us", KB_BOUND(TIMEOUT), &s, err, sizeof(err)), -1);
    ck_assert_str_eq(err, "-T must be a duration in [1ms, 1h] (30, 30s, 500ms, 2m), not '500us'");
    ck_assert_int_eq(kb_opt_duration("--duration", "1e3", KB_BOUND(DURATION), &s, err,
                                     sizeof(err)), -1);
}
END_TEST

START_TEST(rates)
{
    double r = -1;
    ck_assert_int_eq(kb_opt_rate("-R", "20k", KB_BOUND(RATE), &r, err, sizeof(err)), 0);
    ck_assert_double_eq(r, 20000);
    ck_assert_int_eq(kb_opt_rate("-R", "0.5", KB_BOUND(RATE), &r, err, sizeof(err)), 0);
    ck_assert_int_eq(kb_opt_rate("-R", "0", KB_BOUND(RATE), &r, err, sizeof(err)), -1);
    ck_assert_str_eq(err, "-R must be a rate in (0, 10M] req/s (45000, 20k, 1.5k), not '0'");
    /* a plan's rates are whole: its point ids carry them */
    ck_assert_int_eq(kb_opt_rate("--rate", "1.5k", KB_BOUND(PLAN_RATE), &r, err, sizeof(err)), 0);
    ck_assert_double_eq(r, 1500);
    ck_assert_int_eq(kb_opt_rate("--rate", "100.5", KB_BOUND(PLAN_RATE), &r, err, sizeof(err)), -1);
    ck_assert_str_eq(err, "--rate must be a whole rate in [1, 10M] req/s (45000, 20k, 1.5k), "
                     "not '100.5'");
    ck_assert_int_eq(kb_opt_rate("--rate", "1e4", KB_BOUND(PLAN_RATE), &r, err, sizeof(err)), -1);
}
END_TEST

START_TEST(rate_lists)
{
    struct kb_rates out;
    char many[4 * KB_RATES_MAX + 8] = "1k";
    ck_assert_int_eq(kb_opt_rates("--rates", "4k,8000,1.5k", KB_BOUND(PLAN_RATE), &out, err,
                                  sizeof(err)), 0);
    ck_assert_uint_eq(out.n, 3);
    ck_assert_int_eq(out.v[0], 4000);
    ck_assert_int_eq(out.v[1], 8000);
    ck_assert_int_eq(out.v[2], 1500);
    ck_assert_int_eq(kb_opt_rates("--rates", "2M", KB_BOUND(PLAN_RATE), &out, err,
                                  sizeof(err)), 0);
    ck_assert_uint_eq(out.n, 1);
    ck_assert_int_eq(out.v[0], 2000000);
    static const char *const bad[] = { "", ",", "4k,", ",4k", "4k,,8k", "4k;8k", "4k,x", "1e3",
                                       "4k, 8k", "0.5" };
    for (size_t i = 0; i < sizeof(bad) / sizeof(bad[0]); i++)
        ck_assert_msg(kb_opt_rates("--rates", bad[i], KB_BOUND(PLAN_RATE), &out, err,
                                   sizeof(err)) == -1, "'%s' taken", bad[i]);
    kb_opt_rates("--rates", "4k,x", KB_BOUND(PLAN_RATE), &out, err, sizeof(err));
    ck_assert_str_eq(err, "--rates must be a whole rate in [1, 10M] req/s (45000, 20k, 1.5k), "
                     "not 'x' in '4k,x'");
    /* more than the list holds is refused, never cut short */
    for (int i = 1; i < KB_RATES_MAX; i++)
        strcat(many, ",1k");
    ck_assert_int_eq(kb_opt_rates("--rates", many, KB_BOUND(PLAN_RATE), &out, err,
                                  sizeof(err)), 0);
    strcat(many, ",1k");
    ck_assert_int_eq(kb_opt_rates("--rates", many, KB_BOUND(PLAN_RATE), &out, err,
                                  sizeof(err)), -1);
    ck_assert_ptr_nonnull(strstr(err, "more than 64 rates"));
}
END_TEST

START_TEST(plain_numbers)
{
    double x = -1;
    ck_assert_int_eq(kb_opt_fraction("--min-delivery", "0.995", KB_BOUND(DELIVERY), &x, err,
                                     sizeof(err)), 0);
    ck_assert_double_eq(x, 0.995);
    ck_assert_int_eq(kb_opt_fraction("--min-delivery", "0", KB_BOUND(DELIVERY), &x, err,
                                     sizeof(err)), -1);
    ck_assert_str_eq(err, "--min-delivery must be a fraction in (0, 1], not '0'");
    ck_assert_int_eq(kb_opt_fraction("--cpu-max", "1.5", KB_BOUND(FRACTION), &x, err,
                                     sizeof(err)), -1);
    ck_assert_int_eq(kb_opt_fraction("--cpu-max", "5e-1", KB_BOUND(FRACTION), &x, err,
                                     sizeof(err)), -1);
    ck_assert_int_eq(kb_opt_number("--max-p99-ms", "nan", KB_BOUND(P99_MS), &x, err,
                                   sizeof(err)), -1);
    ck_assert_str_eq(err, "--max-p99-ms must be a number in (0, 3600000], not 'nan'");
    ck_assert_int_eq(kb_opt_number("--max-p99-ms", "5%", KB_BOUND(P99_MS), &x, err,
                                   sizeof(err)), -1);
    static const struct kb_bound pct = { 0.1, 100, 0, 0 };
    ck_assert_int_eq(kb_opt_percent("--resolution", "5%", &pct, &x, err, sizeof(err)), 0);
    ck_assert_double_eq(x, 5);
    ck_assert_int_eq(kb_opt_percent("--resolution", "5", &pct, &x, err, sizeof(err)), 0);
    ck_assert_int_eq(kb_opt_percent("--resolution", "500%", &pct, &x, err, sizeof(err)), -1);
    ck_assert_str_eq(err, "--resolution must be a percentage in [0.1, 100], not '500%'");
}
END_TEST

START_TEST(pid_lists)
{
    long p[KB_OPT_PIDS_MAX];
    int n = 0;
    /* commas, blanks (a quoted $(pidof nginx)), a repeat skipped, a second --pid adds */
    ck_assert_int_eq(kb_opt_pids("12,13", p, &n, err, sizeof(err)), 0);
    ck_assert_int_eq(n, 2);
    ck_assert_int_eq(p[0], 12);
    ck_assert_int_eq(p[1], 13);
    ck_assert_int_eq(kb_opt_pids(" 14 13\t15 ", p, &n, err, sizeof(err)), 0);
    ck_assert_int_eq(n, 4);
    ck_assert_int_eq(p[2], 14);
    ck_assert_int_eq(p[3], 15);
    /* refused whole, blamed on --pid, nothing added */
    ck_assert_int_eq(kb_opt_pids("16,http://127.0.0.1/", p, &n, err, sizeof(err)), -1);
    ck_assert_int_eq(n, 4);
    ck_assert_msg(strstr(err, "--pid must be a whole number") && strstr(err, "http://"), "%s", err);
    ck_assert_int_eq(kb_opt_pids("0", p, &n, err, sizeof(err)), -1);
    ck_assert_int_eq(kb_opt_pids(" , ", p, &n, err, sizeof(err)), -1);
    ck_assert_msg(strstr(err, "--pid") && strstr(err, "names no process"), "%s", err);
    ck_assert_int_eq(kb_opt_pids("99999999999999999999999999999999999", p, &n, err,
                                 sizeof(err)), -1);
    ck_assert_int_eq(n, 4);
    ck_assert(kb_opt_all_digits("123"));
    ck_assert(!kb_opt_all_digits(""));
    ck_assert(!kb_opt_all_digits("12a"));
    ck_assert(!kb_opt_all_digits("http://1"));
}
END_TEST

static Suite *suite(void)
{
    Suite *s = suite_create("opts");
    TCase *tc = tcase_create("read");
    tcase_add_test(tc, the_table_is_sane);
    tcase_add_test(tc, whole_numbers);
    tcase_add_test(tc, durations);
    tcase_add_test(tc, rates);
    tcase_add_test(tc, rate_lists);
    tcase_add_test(tc, plain_numbers);
    tcase_add_test(tc, pid_lists);
    suite_add_tcase(s, tc);
    return s;
}

int main(void)
{
    return kb_check_run(suite(), "opts");
}
