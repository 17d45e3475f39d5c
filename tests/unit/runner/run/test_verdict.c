/* test_verdict.c -- every verdict and failure reason from constructed evidence, the criteria
 * edges (95 % delivery inclusive, 100 ms p99 exclusive), and the client's trust at each of
 * its edges, for a curve point and for a calibration rung (runner/load/loadjson.c's reader has
 * its own suite, test_loadjson.c). */
#define _POSIX_C_SOURCE 200809L
#include "runner/run/verdict.h"
#include "tests/lib/kb_check.h"

#include <math.h>
#include <string.h>

static const struct kb_criteria crit = { .min_delivery = 0.95, .max_p99_us = 100000,
                                         .client_cpu_max_fraction = 0.80,
                                         .client_lag_p99_max_us = 1000,
                                         .client_rx_delay_p99_max_us = 1000 };
static char why[512];

static struct kb_point_load good(void)
{
    struct kb_point_load r;
    memset(&r, 0, sizeof(r));
    r.requested_rps = 1000;
    r.achieved_rps = 1000;
    r.delivery = 1.0;
    r.corrected.p99 = 5000;
    r.lag.p99 = 100;
    r.rx_delay.p99 = 100;
    r.client_cpu_fraction = 0.1;
    r.client_cpus = 1;
    return r;
}

static const struct kb_point_obs ok_obs = { .have_load = 1 };

START_TEST(controlled_and_edges)
{
    struct kb_point_load r = good();
    ck_assert_int_eq(kb_verdict_judge(&r, &ok_obs, &crit, why, sizeof(why)), KB_CONTROLLED);
    r.delivery = 0.95;
    ck_assert_int_eq(kb_verdict_judge(&r, &ok_obs, &crit, why, sizeof(why)), KB_CONTROLLED);
    r.delivery = 0.9499;
    ck_assert_int_eq(kb_verdict_judge(&r, &ok_obs, &crit, why, sizeof(why)), KB_UNCONTROLLED);
    r = good();
    r.corrected.p99 = 100000;
    ck_assert_int_eq(kb_verdict_judge(&r, &ok_obs, &crit, why, sizeof(why)), KB_UNCONTROLLED);
    r.corrected.p99 = 99999;
    ck_assert_int_eq(kb_verdict_judge(&r, &ok_obs, &crit, why, sizeof(why)), KB_CONTROLLED);
}
END_TEST

START_TEST(client_limited)
{
    struct kb_point_load r = good();
    r.client_cpu_fraction = 0.81;
    ck_assert_int_eq(kb_verdict_judge(&r, &ok_obs, &crit, why, sizeof(why)), KB_CLIENT_LIMITED);
    ck_assert_ptr_nonnull(strstr(why, "client CPU"));
    r = good();
    r.lag.p99 = 1001;
    ck_assert_int_eq(kb_verdict_judge(&r, &ok_obs, &crit, why, sizeof(why)), KB_CLIENT_LIMITED);
    ck_assert_ptr_nonnull(strstr(why, "lag"));
    /* an uncontrolled point with a limited client is client-limited: never promoted */
    r.delivery = 0.5;
    ck_assert_int_eq(kb_verdict_judge(&r, &ok_obs, &crit, why, sizeof(why)), KB_CLIENT_LIMITED);
}
END_TEST

/* The direct signals: a client late in reading is as untrusted as one late in sending,
 * whatever its CPU reads; every cause is named. */
START_TEST(rx_delay_and_every_cause_named)
{
    struct kb_point_load r = good();
    char trust[256];
    r.rx_delay.p99 = 1001;
    ck_assert_int_eq(kb_verdict_judge(&r, &ok_obs, &crit, why, sizeof(why)), KB_CLIENT_LIMITED);
    ck_assert_ptr_nonnull(strstr(why, "rx delay p99 1001"));
    r.rx_delay.p99 = 1000;
    ck_assert_int_eq(kb_trust_judge(&r, &crit, trust, sizeof(trust)), 1);
    r.rx_delay.p99 = 5000;
    r.lag.p99 = 3000;
    r.client_cpu_fraction = 0.9;
    ck_assert_int_eq(kb_trust_judge(&r, &crit, trust, sizeof(trust)), 0);
    ck_assert_ptr_nonnull(strstr(trust, "send lag p99 3000"));
    ck_assert_ptr_nonnull(strstr(trust, "rx delay p99 5000"));
    ck_assert_ptr_nonnull(strstr(trust, "client CPU 90"));
    /* a load JSON from before rx delay was measured (p99 < 0) is judged on the rest */
    r = good();
    r.rx_delay.p99 = -1;
    ck_assert_int_eq(kb_trust_judge(&r, &crit, trust, sizeof(trust)), 1);
}
END_TEST

/* A server that breaks the protocol fails the point even when every response matched. */
START_TEST(protocol_breaches_fail)
{
    struct kb_point_load r = good();
    r.unsolicited = 3;
    ck_assert_int_eq(kb_verdict_judge(&r, &ok_obs, &crit, why, sizeof(why)), KB_FAILED);
    ck_assert_ptr_nonnull(strstr(why, "unsolicited bytes from the server 3 times"));
    r = good();
    r.keepalive_breaks = 1499;
    ck_assert_int_eq(kb_verdict_server(&r, &ok_obs, &crit, why, sizeof(why)), KB_FAILED);
    ck_assert_ptr_nonnull(strstr(why, "keep-alive broken 1499 times"));
}
END_TEST

/* A client-limited point keeps what its own figures say. */
START_TEST(server_verdict_under_a_limited_client)
{
    struct kb_point_load r = good();
    r.lag.p99 = 5000;
    ck_assert_int_eq(kb_verdict_server(&r, &ok_obs, &crit, why, sizeof(why)), KB_CONTROLLED);
    ck_assert_int_eq(kb_verdict_judge(&r, &ok_obs, &crit, why, sizeof(why)), KB_CLIENT_LIMITED);
    r.delivery = 0.5;
    ck_assert_int_eq(kb_verdict_server(&r, &ok_obs, &crit, why, sizeof(why)), KB_UNCONTROLLED);
    ck_assert_ptr_nonnull(strstr(why, "delivery 50.0 %"));
    r.non2xx = 1;    /* a failure stays a failure whatever the client did */
    ck_assert_int_eq(kb_verdict_judge(&r, &ok_obs, &crit, why, sizeof(why)), KB_FAILED);
}
END_TEST

/* Nothing answered: no latency at all is not "0 ms", and a bounded p99 says so. */
START_TEST(empty_and_bounded_latency)
{
    struct kb_point_load r = good();
    r.corrected.p99 = NAN;
    ck_assert_int_eq(kb_verdict_server(&r, &ok_obs, &crit, why, sizeof(why)), KB_UNCONTROLLED);
    r = good();
    r.corrected.p99 = 1900000;
    r.corrected_p99_is_bound = 1;
    ck_assert_int_eq(kb_verdict_server(&r, &ok_obs, &crit, why, sizeof(why)), KB_UNCONTROLLED);
    ck_assert_ptr_nonnull(strstr(why, "p99 >= 1900.00 ms"));
}
END_TEST

START_TEST(failures_with_reasons)
{
    struct kb_point_load r = good();
    struct kb_point_obs o = ok_obs;
    r.errors_total = 3;
    r.err_read = 3;
    ck_assert_int_eq(kb_verdict_judge(&r, &o, &crit, why, sizeof(why)), KB_FAILED);
    ck_assert_ptr_nonnull(strstr(why, "socket errors: 3"));
    r = good();
    r.non2xx = 1;
    ck_assert_int_eq(kb_verdict_judge(&r, &o, &crit, why, sizeof(why)), KB_FAILED);
    ck_assert_ptr_nonnull(strstr(why, "non-2xx"));
    r = good();
    r.mismatches = r.mm_body = 2;
    ck_assert_int_eq(kb_verdict_judge(&r, &o, &crit, why, sizeof(why)), KB_FAILED);
    ck_assert_ptr_nonnull(strstr(why, "mismatched"));
    r = good();
    o.fixture_exited = 1;
    strcpy(o.exit_reason, "signal 9");
    r.errors_total = 10;   /* the exit explains the errors: it is named first */
    ck_assert_int_eq(kb_verdict_judge(&r, &o, &crit, why, sizeof(why)), KB_FAILED);
    ck_assert_str_eq(why, "process exited (signal 9)");
    o = ok_obs;
    o.identity_changed = 1;
    ck_assert_int_eq(kb_verdict_judge(&r, &o, &crit, why, sizeof(why)), KB_FAILED);
    ck_assert_str_eq(why, "changed fixture identity");
    o = ok_obs;
    o.have_load = 0;
    strcpy(o.load_problem, "no load.json");
    ck_assert_int_eq(kb_verdict_judge(&r, &o, &crit, why, sizeof(why)), KB_FAILED);
    ck_assert_ptr_nonnull(strstr(why, "missing load evidence"));
    r = good();
    o = ok_obs;
    o.postflight_failed = 1;
    strcpy(o.postflight_reason, "/json: status 500");
    ck_assert_int_eq(kb_verdict_judge(&r, &o, &crit, why, sizeof(why)), KB_FAILED);
    o = ok_obs;
    o.preflight_failed = 1;
    strcpy(o.preflight_reason, "start failed");
    ck_assert_int_eq(kb_verdict_judge(&r, &o, &crit, why, sizeof(why)), KB_FAILED);
    ck_assert_ptr_nonnull(strstr(why, "preflight failed: start failed"));
}
END_TEST

/* An overloaded server's queue at the end of the drain is not a socket error: the point is
 * uncontrolled, not failed; a real timeout beside it still fails it. A sliver of unanswered
 * requests (<= 1 %) leaves the p99 criterion to decide. */
START_TEST(unanswered_at_drain_end_is_uncontrolled_not_failed)
{
    struct kb_point_load r = good();
    r.scheduled = 10000;
    r.errors_total = r.err_timeout = r.unfinished = 500;
    ck_assert_int_eq(kb_verdict_judge(&r, &ok_obs, &crit, why, sizeof(why)), KB_UNCONTROLLED);
    ck_assert_ptr_nonnull(strstr(why, "unanswered at drain end 500"));
    r.errors_total = r.err_timeout = r.unfinished = 100;
    ck_assert_int_eq(kb_verdict_judge(&r, &ok_obs, &crit, why, sizeof(why)), KB_CONTROLLED);
    r.errors_total = r.err_timeout = 101;
    ck_assert_int_eq(kb_verdict_judge(&r, &ok_obs, &crit, why, sizeof(why)), KB_FAILED);
    ck_assert_ptr_nonnull(strstr(why, "socket errors: 1 "));
    ck_assert_ptr_nonnull(strstr(why, "timeout 1,"));
}
END_TEST

/* The trust edges, one documented set (verdict.h): each bound is inclusive -- a figure at
 * its bound is trusted, the least step above is not -- a bound <= 0 checks nothing, and an
 * empty histogram (NAN) or a figure an older load JSON lacks (< 0) is no evidence. */
START_TEST(trust_edges)
{
    struct kb_point_load r = good();
    struct kb_criteria c = crit;
    char trust[256];
    r.lag.p99 = 1000;
    r.rx_delay.p99 = 1000;
    r.client_cpu_fraction = 0.80;
    ck_assert_int_eq(kb_trust_judge(&r, &c, trust, sizeof(trust)), 1);
    r.lag.p99 = nextafter(1000, 2000);
    ck_assert_int_eq(kb_trust_judge(&r, &c, trust, sizeof(trust)), 0);
    ck_assert_str_eq(trust, "client send lag p99 1000 us > 1000 us");
    r.lag.p99 = 1000;
    r.rx_delay.p99 = 1000.5;
    ck_assert_int_eq(kb_trust_judge(&r, &c, trust, sizeof(trust)), 0);
    r.rx_delay.p99 = 1000;
    r.client_cpu_fraction = nextafter(0.80, 1);
    ck_assert_int_eq(kb_trust_judge(&r, &c, trust, sizeof(trust)), 0);
    ck_assert_ptr_nonnull(strstr(trust, "client CPU 80 % > 80 %"));
    /* unset bounds check nothing */
    r.lag.p99 = r.rx_delay.p99 = 1e9;
    r.client_cpu_fraction = 5;
    c.client_lag_p99_max_us = 0;
    c.client_rx_delay_p99_max_us = 0;
    c.client_cpu_max_fraction = 0;
    ck_assert_int_eq(kb_trust_judge(&r, &c, trust, sizeof(trust)), 1);
    /* no evidence is not evidence against the client */
    r = good();
    r.lag.p99 = NAN;
    r.rx_delay.p99 = NAN;
    ck_assert_int_eq(kb_trust_judge(&r, &crit, trust, sizeof(trust)), 1);
    r.rx_delay.p99 = -1;
    ck_assert_int_eq(kb_trust_judge(&r, &crit, trust, sizeof(trust)), 1);
}
END_TEST

/* A calibration rung: the same trust, the load's own failure causes as a curve point has
 * them, in-time delivery at least the minimum (inclusive), nothing left unanswered. */
START_TEST(rung_edges)
{
    struct kb_point_load r = good();
    char why_[256];
    r.scheduled = 10000;
    r.completed_in_interval = 9950;
    ck_assert_int_eq(kb_trust_rung(&r, &crit, 0.995, why_, sizeof(why_)), 1);
    /* a held rung says why the client was trusted: calibrate.json keeps it */
    ck_assert_ptr_nonnull(strstr(why_, "client send lag p99"));
    r.completed_in_interval = 9949;
    ck_assert_int_eq(kb_trust_rung(&r, &crit, 0.995, why_, sizeof(why_)), 0);
    ck_assert_str_eq(why_, "delivery in time 0.9949 < 0.995");
    /* an older load JSON: achieved / requested stands in */
    r.completed_in_interval = -1;
    r.achieved_rps = 995;
    ck_assert_int_eq(kb_trust_rung(&r, &crit, 0.995, why_, sizeof(why_)), 1);
    /* the trust's own edge, unchanged by the rung */
    r.lag.p99 = 1000;
    ck_assert_int_eq(kb_trust_rung(&r, &crit, 0.995, why_, sizeof(why_)), 1);
    r.lag.p99 = 1001;
    ck_assert_int_eq(kb_trust_rung(&r, &crit, 0.995, why_, sizeof(why_)), 0);
    ck_assert_str_eq(why_, "client send lag p99 1001 us > 1000 us");
    /* one request unanswered at the drain's end misses the rung, and is named as such, not
     * as a socket error; a socket error beside it is named too */
    r = good();
    r.errors_total = r.err_timeout = r.unfinished = 1;
    ck_assert_int_eq(kb_trust_rung(&r, &crit, 0.995, why_, sizeof(why_)), 0);
    ck_assert_str_eq(why_, "1 unanswered at drain end");
    r.errors_total = 2;
    r.err_read = 1;
    ck_assert_int_eq(kb_trust_rung(&r, &crit, 0.995, why_, sizeof(why_)), 0);
    ck_assert_ptr_nonnull(strstr(why_, "socket errors: 1 (connect 0, read 1"));
    ck_assert_ptr_nonnull(strstr(why_, "; 1 unanswered at drain end"));
    /* wrong answers from the control server are no held rung either */
    r = good();
    r.non2xx = 3;
    ck_assert_int_eq(kb_trust_rung(&r, &crit, 0.995, why_, sizeof(why_)), 0);
    ck_assert_str_eq(why_, "non-2xx responses: 3");
    /* every cause at once, each named, cut short rather than overrun */
    r.lag.p99 = 5000;
    r.completed_in_interval = 0;
    r.scheduled = 10;
    ck_assert_int_eq(kb_trust_rung(&r, &crit, 0.995, why_, sizeof(why_)), 0);
    ck_assert_ptr_nonnull(strstr(why_, "send lag"));
    ck_assert_ptr_nonnull(strstr(why_, "non-2xx"));
    ck_assert_ptr_nonnull(strstr(why_, "delivery in time 0.0000"));
    ck_assert_int_eq(kb_trust_rung(&r, &crit, 0.995, why_, 16), 0);
    ck_assert_uint_eq(strlen(why_), 15);
}
END_TEST

/* A load with the client's own delay kept (loadjson.h): as measured and without that delay. */
static struct kb_point_load with_delay(double p99, double less_p99, double delivery,
                                       double delivery_less)
{
    struct kb_point_load r = good();
    r.has_less_client = 1;
    r.corrected.p99 = p99;
    r.less_client.p99 = less_p99;
    r.delivery = delivery;
    r.delivery_less_client = delivery_less;
    r.client_delay.p99 = p99 - less_p99;
    r.client_delay.max = 2 * (p99 - less_p99);
    r.lag.p99 = 6000;              /* past the old 1 ms bound: no longer decides alone */
    r.rx_delay.p99 = 3000;
    return r;
}

/* The rule: trusted exactly when the verdict as measured and without the client's own
 * delay agree (each criterion at its own edge), the client lost nothing, and its CPU is
 * within the guard. */
START_TEST(trust_by_could_decide)
{
    struct kb_point_load r = with_delay(8000, 2000, 1.0, 1.0);
    char t[512];
    int a, b;
    ck_assert_int_eq(kb_trust_judge(&r, &crit, t, sizeof(t)), 1);
    ck_assert_ptr_nonnull(strstr(t, "cannot change the verdict: controlled either way"));
    ck_assert_int_eq(kb_trust_sides(&r, &crit, &a, &b), 0);
    ck_assert(a && b);
    ck_assert_int_eq(kb_verdict_judge(&r, &ok_obs, &crit, why, sizeof(why)), KB_CONTROLLED);
    /* uncontrolled either way: a seconds-long tail is the server's */
    r = with_delay(2.5e6, 2.49e6, 0.7, 0.7);
    ck_assert_int_eq(kb_trust_judge(&r, &crit, t, sizeof(t)), 1);
    ck_assert_int_eq(kb_verdict_judge(&r, &ok_obs, &crit, why, sizeof(why)), KB_UNCONTROLLED);
    /* p99: the client's delay takes it under the bound (strict) -- the client decided */
    r = with_delay(150000, 99999, 1.0, 1.0);
    ck_assert_int_eq(kb_trust_judge(&r, &crit, t, sizeof(t)), 0);
    ck_assert_ptr_nonnull(strstr(t, "decides the verdict: as measured uncontrolled (p99 150.00 ms"));
    ck_assert_ptr_nonnull(strstr(t, "without it controlled (p99 100.00 ms"));
    ck_assert_int_eq(kb_trust_sides(&r, &crit, &a, &b), 0);
    ck_assert(!a && b);
    ck_assert_int_eq(kb_verdict_judge(&r, &ok_obs, &crit, why, sizeof(why)), KB_CLIENT_LIMITED);
    ck_assert_int_eq(kb_verdict_server(&r, &ok_obs, &crit, why, sizeof(why)), KB_UNCONTROLLED);
    r = with_delay(150000, 100000, 1.0, 1.0);
    ck_assert_int_eq(kb_trust_judge(&r, &crit, t, sizeof(t)), 1);
    /* delivery: at least the minimum without the client's delay (inclusive) */
    r = with_delay(5000, 4000, 0.94, 0.95);
    ck_assert_int_eq(kb_trust_judge(&r, &crit, t, sizeof(t)), 0);
    r.delivery_less_client = nextafter(0.95, 0);
    ck_assert_int_eq(kb_trust_judge(&r, &crit, t, sizeof(t)), 1);
    /* a client that lost a request is never trusted, nor one past its CPU guard */
    r = with_delay(5000, 4000, 1.0, 1.0);
    r.client_dropped = 1;
    ck_assert_int_eq(kb_trust_judge(&r, &crit, t, sizeof(t)), 0);
    ck_assert_ptr_nonnull(strstr(t, "the client lost 1 scheduled request"));
    r.client_dropped = 0;
    r.in_flight_at_end = 2;
    ck_assert_int_eq(kb_trust_judge(&r, &crit, t, sizeof(t)), 0);
    r.in_flight_at_end = 0;
    r.client_cpu_fraction = nextafter(0.80, 1);
    ck_assert_int_eq(kb_trust_judge(&r, &crit, t, sizeof(t)), 0);
    ck_assert_ptr_nonnull(strstr(t, "client CPU 80 % > 80 %"));
    /* evidence without the client's own delay is judged by the lateness bounds */
    r = good();
    ck_assert_int_eq(kb_trust_sides(&r, &crit, &a, &b), -1);
    r.lag.p99 = 6000;
    ck_assert_int_eq(kb_trust_judge(&r, &crit, t, sizeof(t)), 0);
}
END_TEST

/* A rung under the rule: its own p99 must be under the criterion (the harness's floor), and
 * a late client that cannot decide still holds it. */
START_TEST(rung_by_could_decide)
{
    struct kb_point_load r = with_delay(6000, 500, 1.0, 1.0);
    char w[512];
    r.scheduled = 10000;
    r.completed_in_interval = 10000;
    ck_assert_int_eq(kb_trust_rung(&r, &crit, 0.995, w, sizeof(w)), 1);
    ck_assert_ptr_nonnull(strstr(w, "cannot change the verdict"));
    r = with_delay(100000, 100000, 1.0, 1.0);
    r.scheduled = r.completed_in_interval = 10000;
    ck_assert_int_eq(kb_trust_rung(&r, &crit, 0.995, w, sizeof(w)), 0);
    ck_assert_ptr_nonnull(strstr(w, "the harness itself is past the criterion"));
}
END_TEST

START_TEST(names_round_trip)
{
    for (int v = KB_CONTROLLED; v <= KB_CLIENT_LIMITED; v++)
        ck_assert_int_eq(kb_verdict_from_name(kb_verdict_name((enum kb_verdict)v)), v);
    ck_assert_int_eq(kb_verdict_from_name("great"), -1);
}
END_TEST

static Suite *suite(void)
{
    Suite *s = suite_create("verdict");
    TCase *tc = tcase_create("judge");
    tcase_add_test(tc, controlled_and_edges);
    tcase_add_test(tc, client_limited);
    tcase_add_test(tc, rx_delay_and_every_cause_named);
    tcase_add_test(tc, server_verdict_under_a_limited_client);
    tcase_add_test(tc, empty_and_bounded_latency);
    tcase_add_test(tc, protocol_breaches_fail);
    tcase_add_test(tc, failures_with_reasons);
    tcase_add_test(tc, unanswered_at_drain_end_is_uncontrolled_not_failed);
    tcase_add_test(tc, trust_edges);
    tcase_add_test(tc, rung_edges);
    tcase_add_test(tc, trust_by_could_decide);
    tcase_add_test(tc, rung_by_could_decide);
    tcase_add_test(tc, names_round_trip);
    suite_add_tcase(s, tc);
    return s;
}

int main(void)
{
    return kb_check_run(suite(), "verdict");
}
