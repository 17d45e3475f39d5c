/* gray-static loop: fd callbacks, registration errors, stale events after a delete, timers in
 * due order with cancel, the owner's wake and wait bound, and a stop from another thread. */
#define _GNU_SOURCE
#include "gray-static/loop.h"
#include "tests/lib/kb_check.h"

#include <errno.h>
#include <pthread.h>
#include <sys/epoll.h>
#include <time.h>
#include <unistd.h>

static struct gs_loop *l;
static char err[256];

static void setup(void)
{
    ck_assert_ptr_nonnull(l = gs_loop_new());
}

static void teardown(void)
{
    gs_loop_free(l);
}

static long long ms_now(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (long long)ts.tv_sec * 1000 + ts.tv_nsec / 1000000;
}

/* ---- fds ---- */

struct reader {
    int fd, calls;
    uint32_t events;
};

static void on_read(void *arg, uint32_t events)
{
    struct reader *r = arg;
    char b[16];
    r->calls++;
    r->events = events;
    ck_assert_int_gt(read(r->fd, b, sizeof(b)), 0);
    gs_loop_stop(l);
}

START_TEST(readable_fd_calls_back)
{
    int p[2];
    struct reader r = { 0 };
    ck_assert_int_eq(pipe(p), 0);
    r.fd = p[0];
    ck_assert_int_eq(gs_loop_add(l, p[0], EPOLLIN, on_read, &r), 0);
    ck_assert_int_eq(write(p[1], "ab", 2), 2);
    ck_assert_int_eq(gs_loop_run(l, err, sizeof(err)), 0);
    ck_assert_int_eq(r.calls, 1);
    ck_assert(r.events & EPOLLIN);
    ck_assert_int_eq(gs_loop_del(l, p[0]), 0);
    close(p[0]);
    close(p[1]);
}
END_TEST

START_TEST(registration_errors)
{
    int p[2];
    struct reader r = { 0 };
    ck_assert_int_eq(pipe(p), 0);
    ck_assert_int_eq(gs_loop_add(l, p[0], EPOLLIN, on_read, &r), 0);
    errno = 0;
    ck_assert_int_eq(gs_loop_add(l, p[0], EPOLLIN, on_read, &r), -1);
    ck_assert_int_eq(errno, EEXIST);
    ck_assert_int_eq(gs_loop_mod(l, p[1], EPOLLOUT, on_read, &r), -1);
    ck_assert_int_eq(errno, ENOENT);
    ck_assert_int_eq(gs_loop_del(l, p[1]), -1);
    ck_assert_int_eq(errno, ENOENT);
    ck_assert_int_eq(gs_loop_add(l, -1, EPOLLIN, on_read, &r), -1);
    ck_assert_int_eq(gs_loop_add(l, p[1], EPOLLOUT, NULL, &r), -1);
    ck_assert_int_eq(gs_loop_add(l, 5000, EPOLLIN, on_read, &r), -1); /* not open: EBADF */
    ck_assert_int_eq(gs_loop_del(l, p[0]), 0);
    ck_assert_int_eq(gs_loop_del(l, p[0]), -1);
    close(p[0]);
    close(p[1]);
}
END_TEST

static struct reader ra, rb;
static int pa[2], pb[2], fresh_calls;

static void on_fresh(void *arg, uint32_t events)
{
    (void)arg;
    (void)events;
    fresh_calls++;
}

/* Whichever of a or b runs first deletes and closes the other, re-opens a pipe on (likely) the
 * same fd number and registers it with another callback: the old event must go nowhere. */
static void on_first(void *arg, uint32_t events)
{
    struct reader *me = arg, *other = me == &ra ? &rb : &ra;
    int *op = me == &ra ? pb : pa, np[2];
    (void)events;
    me->calls++;
    ck_assert_int_eq(gs_loop_del(l, other->fd), 0);
    close(op[0]);
    ck_assert_int_eq(pipe(np), 0);
    op[0] = np[0];
    close(op[1]);
    op[1] = np[1];
    ck_assert_int_eq(gs_loop_add(l, np[0], EPOLLIN, on_fresh, NULL), 0);
    gs_loop_del(l, me->fd);
    gs_loop_stop(l);
}

START_TEST(deleted_fd_gets_no_stale_event)
{
    ck_assert_int_eq(pipe(pa), 0);
    ck_assert_int_eq(pipe(pb), 0);
    ra = (struct reader){ .fd = pa[0] };
    rb = (struct reader){ .fd = pb[0] };
    ck_assert_int_eq(write(pa[1], "x", 1), 1);
    ck_assert_int_eq(write(pb[1], "x", 1), 1);
    ck_assert_int_eq(gs_loop_add(l, pa[0], EPOLLIN, on_first, &ra), 0);
    ck_assert_int_eq(gs_loop_add(l, pb[0], EPOLLIN, on_first, &rb), 0);
    ck_assert_int_eq(gs_loop_run(l, err, sizeof(err)), 0);
    ck_assert_int_eq(ra.calls + rb.calls, 1);
    ck_assert_int_eq(fresh_calls, 0);
    for (int i = 0; i < 2; i++) {
        close(pa[i]);
        close(pb[i]);
    }
}
END_TEST

static int mod_calls;

static void on_writable(void *arg, uint32_t events)
{
    (void)arg;
    ck_assert(events & EPOLLOUT);
    if (++mod_calls == 3)
        gs_loop_stop(l);
}

START_TEST(mod_changes_events_and_callback)
{
    int p[2];
    struct reader r = { 0 };
    ck_assert_int_eq(pipe(p), 0);
    ck_assert_int_eq(gs_loop_add(l, p[1], EPOLLIN, on_read, &r), 0); /* never readable */
    ck_assert_int_eq(gs_loop_mod(l, p[1], EPOLLOUT, on_writable, NULL), 0);
    ck_assert_int_eq(gs_loop_run(l, err, sizeof(err)), 0);
    ck_assert_int_eq(mod_calls, 3); /* level-triggered: once per iteration while writable */
    ck_assert_int_eq(r.calls, 0);
    gs_loop_del(l, p[1]);
    close(p[0]);
    close(p[1]);
}
END_TEST

/* ---- timers ---- */

static char order[16];
static size_t norder;
static long long fired_at[8];

static void mark(void *arg)
{
    char c = *(const char *)arg;
    fired_at[norder] = ms_now();
    order[norder++] = c;
    if (c == 'z')
        gs_loop_stop(l);
}

START_TEST(timers_fire_in_due_order_and_cancel)
{
    static const char a = 'a', b = 'b', c = 'c', d = 'd', z = 'z';
    long long t0 = ms_now();
    long ic;
    ck_assert_int_gt(gs_loop_after(l, 60, mark, (void *)&c), 0);
    ck_assert_int_gt(gs_loop_after(l, 20, mark, (void *)&a), 0);
    ck_assert_int_gt(ic = gs_loop_after(l, 30, mark, (void *)&d), 0);
    ck_assert_int_gt(gs_loop_after(l, 40, mark, (void *)&b), 0);
    ck_assert_int_gt(gs_loop_after(l, 80, mark, (void *)&z), 0);
    gs_loop_cancel(l, ic);
    gs_loop_cancel(l, 12345); /* unknown: ignored */
    ck_assert_int_eq(gs_loop_run(l, err, sizeof(err)), 0);
    order[norder] = '\0';
    ck_assert_str_eq(order, "abcz");
    ck_assert_int_ge(fired_at[0] - t0, 20);
    ck_assert_int_ge(fired_at[3] - t0, 80);
    gs_loop_cancel(l, ic); /* after firing or cancel: harmless */
}
END_TEST

static int rearms;

static void rearm(void *arg)
{
    (void)arg;
    if (++rearms < 5)
        ck_assert_int_gt(gs_loop_after(l, 1, rearm, NULL), 0);
    else
        gs_loop_stop(l);
}

START_TEST(timer_callback_may_add_timers)
{
    ck_assert_int_gt(gs_loop_after(l, 0, rearm, NULL), 0);
    ck_assert_int_eq(gs_loop_run(l, err, sizeof(err)), 0);
    ck_assert_int_eq(rearms, 5);
}
END_TEST

/* ---- the owner's hooks ---- */

static int wakes, bound_ms = -1;

static long owner_wait(void *arg)
{
    (void)arg;
    return bound_ms;
}

static void owner_wake(void *arg)
{
    (void)arg;
    if (++wakes == 3)
        gs_loop_stop(l);
}

static void poke(void *arg)
{
    (void)arg;
    gs_loop_wake(l);
}

START_TEST(wake_runs_the_owner_once_per_iteration)
{
    gs_loop_set_owner(l, owner_wait, owner_wake, NULL);
    gs_loop_wake(l);
    gs_loop_wake(l); /* twice before one iteration: one on_wake */
    ck_assert_int_gt(gs_loop_after(l, 10, poke, NULL), 0);
    ck_assert_int_gt(gs_loop_after(l, 30, poke, NULL), 0);
    ck_assert_int_eq(gs_loop_run(l, err, sizeof(err)), 0);
    ck_assert_int_eq(wakes, 3);
}
END_TEST

START_TEST(owner_bound_expiry_runs_the_owner)
{
    long long t0 = ms_now();
    bound_ms = 15;
    gs_loop_set_owner(l, owner_wait, owner_wake, NULL);
    ck_assert_int_eq(gs_loop_run(l, err, sizeof(err)), 0);
    ck_assert_int_eq(wakes, 3);
    ck_assert_int_ge(ms_now() - t0, 3 * 15 - 3);
}
END_TEST

/* ---- stop ---- */

static void *stopper(void *arg)
{
    usleep(50 * 1000);
    gs_loop_stop(arg);
    return NULL;
}

START_TEST(stop_from_another_thread)
{
    pthread_t t;
    long long t0 = ms_now();
    ck_assert_int_eq(pthread_create(&t, NULL, stopper, l), 0);
    ck_assert_int_eq(gs_loop_run(l, err, sizeof(err)), 0);
    pthread_join(t, NULL);
    ck_assert_int_ge(ms_now() - t0, 45);
}
END_TEST

START_TEST(stop_before_run_is_kept)
{
    gs_loop_stop(l);
    ck_assert_int_eq(gs_loop_run(l, err, sizeof(err)), 0);
}
END_TEST

static Suite *suite(void)
{
    Suite *s = suite_create("gray-static loop");
    TCase *tc = tcase_create("loop");
    tcase_add_checked_fixture(tc, setup, teardown);
    tcase_set_timeout(tc, 10);
    tcase_add_test(tc, readable_fd_calls_back);
    tcase_add_test(tc, registration_errors);
    tcase_add_test(tc, deleted_fd_gets_no_stale_event);
    tcase_add_test(tc, mod_changes_events_and_callback);
    tcase_add_test(tc, timers_fire_in_due_order_and_cancel);
    tcase_add_test(tc, timer_callback_may_add_timers);
    tcase_add_test(tc, wake_runs_the_owner_once_per_iteration);
    tcase_add_test(tc, owner_bound_expiry_runs_the_owner);
    tcase_add_test(tc, stop_from_another_thread);
    tcase_add_test(tc, stop_before_run_is_kept);
    suite_add_tcase(s, tc);
    return s;
}

int main(void)
{
    return kb_check_run(suite(), "gray-static-loop");
}
