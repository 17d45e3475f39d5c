/* test_knee.c -- runner/run/kneesearch.c: the search against model servers whose knee is known:
 * it brackets the knee within the resolution, confirms both ends, survives a disturbed
 * sample, and ends on each bound (max-rate, min-rate, the client) as it should. */
#define _GNU_SOURCE
#include <check.h>
#include <math.h>
#include <string.h>

#include "runner/run/kneesearch.h"
#include "tests/lib/kb_check.h"

static const struct kb_criteria CRIT = { .min_delivery = 0.95, .max_p99_us = 100000 };

static struct kb_knee_opts opts(void)
{
    return (struct kb_knee_opts){ .start_rate = 1000, .min_rate = 10, .max_rate = 1000000,
                                  .factor = 2, .resolution = 0.05, .confirm = 3,
                                  .crit = CRIT };
}

/* A model server: held below knee, past it the p99 is seconds. */
struct model {
    long knee;
    long client_max;             /* the client is limited at and above this (0: never) */
    int disturb_at;              /* the n-th sample (from 1) is disturbed: reads missed */
    int fail_above;              /* rates >= knee fail (wrong responses) instead of missing */
    long hold_knee;              /* hold samples miss at and above this (0: the knee) */
    int hold_client;             /* every hold sample is client-limited */
};

static struct kb_knee_sample measure(const struct model *m, long rate, size_t n, int hold)
{
    struct kb_knee_sample s = { .rate = rate, .verdict = KB_CONTROLLED, .delivery = 1,
                                .p99_us = 5000, .hold = hold };
    if (hold && m->hold_client) {
        s.verdict = KB_CLIENT_LIMITED;
    } else if (hold && m->hold_knee && rate >= m->hold_knee) {
        /* the backlog a short sample hides: a long one shows it */
        s.verdict = KB_UNCONTROLLED;
        s.p99_us = 800000;
    } else if (m->client_max && rate >= m->client_max)
        s.verdict = KB_CLIENT_LIMITED;
    else if (rate >= m->knee || (int)n + 1 == m->disturb_at) {
        s.verdict = m->fail_above && rate >= m->knee ? KB_FAILED : KB_UNCONTROLLED;
        s.p99_us = 2e6;
        s.delivery = 0.9;
    }
    return s;
}

/* The search run to its end against m; the number of samples it took. */
static size_t search(const struct model *m, const struct kb_knee_opts *o,
                     struct kb_knee_next *x)
{
    static struct kb_knee_sample s[KB_KNEE_MAX_SAMPLES];
    size_t n = 0;
    for (;;) {
        kb_knee_decide(s, n, o, x);
        if (x->step != KB_KNEE_MEASURE)
            return n;
        ck_assert_uint_lt(n, 100);
        s[n] = measure(m, x->rate, n, x->hold);
        n++;
    }
}

START_TEST(a_knee_is_bracketed_within_the_resolution)
{
    static const long knees[] = { 57000, 1500, 2001, 999999, 123456 };
    for (size_t i = 0; i < sizeof(knees) / sizeof(knees[0]); i++) {
        struct model m = { .knee = knees[i] };
        struct kb_knee_opts o = opts();
        struct kb_knee_next x;
        size_t n = search(&m, &o, &x);
        ck_assert_int_eq(x.step, KB_KNEE_LOCATED);
        ck_assert_msg(x.lo < m.knee && m.knee <= x.hi, "knee %ld outside [%ld, %ld]", m.knee,
                      x.lo, x.hi);
        ck_assert_msg((double)x.hi / (double)x.lo - 1 <= o.resolution, "[%ld, %ld] too wide",
                      x.lo, x.hi);
        /* rise + bisect + two more samples at each end: a few dozen at most */
        ck_assert_uint_le(n, 30);
    }
}
END_TEST

START_TEST(both_ends_are_confirmed_by_repeats)
{
    struct model m = { .knee = 57000 };
    struct kb_knee_opts o = opts();
    static struct kb_knee_sample s[KB_KNEE_MAX_SAMPLES];
    static struct kb_knee_row rows[KB_KNEE_MAX_SAMPLES];
    struct kb_knee_next x;
    size_t n = 0, nr;
    for (kb_knee_decide(s, n, &o, &x); x.step == KB_KNEE_MEASURE; kb_knee_decide(s, n, &o, &x)) {
        s[n] = measure(&m, x.rate, n, x.hold);
        n++;
    }
    nr = kb_knee_rows(s, n, &CRIT, rows, KB_KNEE_MAX_SAMPLES);
    for (size_t i = 0; i < nr; i++)
        if (rows[i].rate == x.lo || rows[i].rate == x.hi)
            /* settled (all agree) after 2 of 3: a third cannot move the median */
            ck_assert_int_eq(rows[i].trusted, 2);
    o.confirm = 1;
    search(&m, &o, &x);
    ck_assert_int_eq(x.step, KB_KNEE_LOCATED);
}
END_TEST

START_TEST(a_disturbed_sample_is_outvoted)
{
    /* the 3rd sample (4000 req/s, far below the knee) reads missed once: the search
     * brackets it, its repeats hold, and the search rises on past it to the real knee */
    struct model m = { .knee = 57000, .disturb_at = 3 };
    struct kb_knee_next x;
    struct kb_knee_opts o = opts();
    search(&m, &o, &x);
    ck_assert_int_eq(x.step, KB_KNEE_LOCATED);
    ck_assert(x.lo < 57000 && 57000 <= x.hi);
}
END_TEST

START_TEST(the_search_ends_on_its_bounds)
{
    struct kb_knee_opts o = opts();
    struct kb_knee_next x;
    struct model never = { .knee = 10000000 }, always = { .knee = 1 };
    struct model client = { .knee = 500000, .client_max = 64000 };
    struct model failing = { .knee = 3000, .fail_above = 1 };
    o.max_rate = 20000;
    search(&never, &o, &x);
    ck_assert_int_eq(x.step, KB_KNEE_MAX_RATE);
    ck_assert_int_eq(x.lo, 20000);
    o = opts();
    search(&always, &o, &x);
    ck_assert_int_eq(x.step, KB_KNEE_MIN_RATE);
    ck_assert_int_eq(x.hi, 10);
    o = opts();
    search(&client, &o, &x);
    ck_assert_int_eq(x.step, KB_KNEE_CLIENT);
    ck_assert_int_eq(x.lo, 32000);
    ck_assert_int_eq(x.hi, 64000);
    o = opts();
    search(&failing, &o, &x);
    ck_assert_int_eq(x.step, KB_KNEE_LOCATED);
    ck_assert(x.lo < 3000 && 3000 <= x.hi);
}
END_TEST

START_TEST(rows_take_medians_of_trusted_samples)
{
    struct kb_knee_sample s[] = {
        { 1000, KB_CONTROLLED, 1, 5000, 0, 0, 0, NAN }, { 1000, KB_UNCONTROLLED, 0.9, 2e6, 0, 0, 0, NAN },
        { 1000, KB_CONTROLLED, 1, 6000, 0, 0, 0, NAN }, { 2000, KB_CLIENT_LIMITED, 1, 5000, 0, 0, 0, NAN },
        { 3000, KB_CLIENT_LIMITED, 1, 5000, 0, 0, 0, NAN }, { 3000, KB_CONTROLLED, 1, 7000, 0, 0, 0, NAN },
        { 4000, KB_FAILED, 1, 5000, 0, 0, 0, NAN }, { 4000, KB_CONTROLLED, 1, 5000, 0, 0, 0, NAN },
        { 5000, KB_UNCONTROLLED, 1, NAN, 0, 0, 0, NAN },
    };
    struct kb_knee_row r[8];
    size_t n = kb_knee_rows(s, sizeof(s) / sizeof(s[0]), &CRIT, r, 8);
    ck_assert_uint_eq(n, 5);
    ck_assert_int_eq(r[0].rate, 1000);
    ck_assert_int_eq(r[0].state, KB_ROW_HELD);
    ck_assert_int_eq(r[0].held_n, 2);
    ck_assert(fabs(r[0].p99_us - 6000) < 1e-9);
    ck_assert(!r[0].settled);
    ck_assert_int_eq(r[1].state, KB_ROW_UNTRUSTED);
    ck_assert_int_eq(r[2].state, KB_ROW_HELD);
    ck_assert_int_eq(r[2].n, 2);
    ck_assert_int_eq(r[2].trusted, 1);
    ck_assert_int_eq(r[3].state, KB_ROW_FAILED);
    ck_assert_int_eq(r[4].state, KB_ROW_MISSED);      /* nothing completed: the worst p99 */
}
END_TEST

/* A server that holds 10,000 req/s for 3 s but only 9,500 for 30 s: without a hold the
 * search locates the short samples' knee; with one, the held end that fails its hold moves
 * the bracket down until a held end holds its hold too. */
START_TEST(a_held_end_that_misses_its_hold_moves_the_bracket_down)
{
    struct model m = { .knee = 10000, .hold_knee = 9500 };
    static struct kb_knee_sample s[KB_KNEE_MAX_SAMPLES];
    static struct kb_knee_row rows[KB_KNEE_MAX_SAMPLES];
    struct kb_knee_opts o = opts();
    struct kb_knee_next x;
    size_t n = 0, nr, holds = 0;
    o.start_rate = 2000;
    search(&m, &o, &x);
    ck_assert_int_eq(x.step, KB_KNEE_LOCATED);
    ck_assert_msg(x.lo >= 9500, "without a hold the short knee: lo %ld", x.lo);
    o.hold = 1;
    for (kb_knee_decide(s, n, &o, &x); x.step == KB_KNEE_MEASURE; kb_knee_decide(s, n, &o, &x)) {
        ck_assert_uint_lt(n, 100);
        holds += x.hold;
        s[n] = measure(&m, x.rate, n, x.hold);
        n++;
    }
    ck_assert_int_eq(x.step, KB_KNEE_LOCATED);
    ck_assert_msg(x.lo < 9500 && 9500 <= x.hi, "hold knee 9500 outside [%ld, %ld]", x.lo, x.hi);
    ck_assert_msg((double)x.hi / (double)x.lo - 1 <= o.resolution, "[%ld, %ld]", x.lo, x.hi);
    ck_assert_uint_ge(holds, 2);          /* the first held end missed its hold */
    nr = kb_knee_rows(s, n, &CRIT, rows, KB_KNEE_MAX_SAMPLES);
    for (size_t i = 0; i < nr; i++) {
        if (rows[i].rate == x.lo) {
            ck_assert_int_eq(rows[i].state, KB_ROW_HELD);
            ck_assert_int_eq(rows[i].hold_trusted, 1);
            ck_assert(rows[i].hold_ok);
        } else if (rows[i].hold_n) {
            /* held on its short samples, missed on its long one */
            ck_assert_int_eq(rows[i].held_n, rows[i].trusted);
            ck_assert_int_eq(rows[i].state, KB_ROW_MISSED);
            ck_assert(rows[i].rate >= 9500);
        }
    }
}
END_TEST

START_TEST(a_hold_the_client_cannot_prove_ends_on_the_client)
{
    struct model m = { .knee = 10000, .hold_client = 1 };
    struct kb_knee_opts o = opts();
    struct kb_knee_next x;
    o.hold = 1;
    search(&m, &o, &x);
    ck_assert_int_eq(x.step, KB_KNEE_CLIENT);
    ck_assert(x.lo < 10000 && 10000 <= x.hi);
}
END_TEST

START_TEST(midpoints_are_round_and_inside)
{
    ck_assert_int_eq(kb_knee_midpoint(32000, 64000), 45300);
    ck_assert_int_eq(kb_knee_midpoint(1000, 2000), 1410);
    ck_assert_int_eq(kb_knee_midpoint(10, 11), 0);
    ck_assert_int_eq(kb_knee_midpoint(10, 12), 11);
    for (long lo = 1; lo < 5000; lo += 37) {
        long m = kb_knee_midpoint(lo, lo + 3);
        ck_assert(m > lo && m < lo + 3);
    }
}
END_TEST

static Suite *suite(void)
{
    Suite *s = suite_create("knee");
    TCase *tc = tcase_create("knee");
    tcase_add_test(tc, a_knee_is_bracketed_within_the_resolution);
    tcase_add_test(tc, both_ends_are_confirmed_by_repeats);
    tcase_add_test(tc, a_held_end_that_misses_its_hold_moves_the_bracket_down);
    tcase_add_test(tc, a_hold_the_client_cannot_prove_ends_on_the_client);
    tcase_add_test(tc, a_disturbed_sample_is_outvoted);
    tcase_add_test(tc, the_search_ends_on_its_bounds);
    tcase_add_test(tc, rows_take_medians_of_trusted_samples);
    tcase_add_test(tc, midpoints_are_round_and_inside);
    suite_add_tcase(s, tc);
    return s;
}

int main(void)
{
    return kb_check_run(suite(), "runner-knee");
}
