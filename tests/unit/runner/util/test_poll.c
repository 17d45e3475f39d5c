/* test_poll.c -- runner/util/clock.c's kb_poll_until, the one poll-and-wait loop: done at
 * once, done after a few turns, given up when the watched thing is gone, and timed out. */
#include <check.h>

#include "runner/util/clock.h"
#include "tests/lib/kb_check.h"

struct counter {
    int turns, done_at, alive_until;
};

static int done(void *p)
{
    struct counter *c = p;
    return ++c->turns >= c->done_at;
}

static int alive(void *p)
{
    struct counter *c = p;
    return c->turns < c->alive_until;
}

START_TEST(each_way_it_ends)
{
    struct counter now = { 0, 1, 100 }, later = { 0, 4, 100 }, dies = { 0, 100, 3 };
    struct counter never = { 0, 1 << 30, 1 << 30 };
    kb_mono_t t0;
    ck_assert_int_eq(kb_poll_until(done, alive, &now, 1000, 1), KB_POLL_DONE);
    ck_assert_int_eq(now.turns, 1);
    ck_assert_int_eq(kb_poll_until(done, alive, &later, 10000, 1), KB_POLL_DONE);
    ck_assert_int_eq(later.turns, 4);
    ck_assert_int_eq(kb_poll_until(done, alive, &dies, 10000, 1), KB_POLL_GAVE_UP);
    ck_assert_int_eq(dies.turns, 3);
    t0 = kb_mono_now();
    ck_assert_int_eq(kb_poll_until(done, NULL, &never, 50, 5), KB_POLL_TIMEOUT);
    /* at least the timeout: a busy host makes it later, never sooner */
    ck_assert_uint_ge(kb_mono_now() - t0, 50 * KB_NS_PER_MS);
}
END_TEST

static Suite *suite(void)
{
    Suite *s = suite_create("poll");
    TCase *tc = tcase_create("poll");
    tcase_add_test(tc, each_way_it_ends);
    suite_add_tcase(s, tc);
    return s;
}

int main(void)
{
    return kb_check_run(suite(), "runner-poll");
}
