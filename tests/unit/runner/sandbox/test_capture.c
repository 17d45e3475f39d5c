/* test_capture.c -- the one output capture: merged and separate streams, the exit status
 * (and 128 + a signal), a bounded buffer that drops the rest without blocking the child, a
 * time bound that kills, output to a descriptor, a program that cannot run, and signals
 * arriving all the while (every poll, read and waitpid resumes). */
#define _GNU_SOURCE
#include "runner/sandbox/capture.h"
#include "tests/lib/kb_check.h"

#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/time.h>
#include <time.h>
#include <unistd.h>

static double now_s(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (double)ts.tv_sec + ts.tv_nsec / 1e9;
}

START_TEST(first_line_merged)
{
    char line[128];
    char *echo[] = { "echo", "one", NULL };
    char *fail[] = { "sh", "-c", "echo why >&2; exit 1", NULL };
    ck_assert_int_eq(kb_capture_line(echo, line, sizeof(line)), 0);
    ck_assert_str_eq(line, "one");
    ck_assert_int_eq(kb_capture_line(fail, line, sizeof(line)), -1);
    ck_assert_str_eq(line, "why");
}
END_TEST

START_TEST(streams_apart_and_status)
{
    char out[64], err[64], why[256];
    char *argv[] = { "sh", "-c", "echo out; echo err >&2; exit 3", NULL };
    char *sig[] = { "sh", "-c", "kill -TERM $$", NULL };
    struct kb_capture c = { .out = out, .out_cap = sizeof(out), .err = err,
                            .err_cap = sizeof(err) };
    ck_assert_int_eq(kb_capture_run(argv, &c, why, sizeof(why)), 3);
    ck_assert_str_eq(out, "out\n");
    ck_assert_str_eq(err, "err\n");
    ck_assert_uint_eq(c.out_len, 4);
    ck_assert_int_eq(c.truncated, 0);
    ck_assert_int_eq(kb_capture_run(sig, &c, why, sizeof(why)), 128 + SIGTERM);
}
END_TEST

START_TEST(bounded_buffer_drops_the_rest)
{
    char out[16], why[256];
    char *argv[] = { "seq", "1", "100000", NULL };   /* ~600 KB: more than a pipe holds */
    struct kb_capture c = { .out = out, .out_cap = sizeof(out) };
    ck_assert_int_eq(kb_capture_run(argv, &c, why, sizeof(why)), 0);
    ck_assert_int_eq(c.truncated, 1);
    ck_assert_uint_eq(c.out_len, sizeof(out) - 1);
    ck_assert_str_eq(out, "1\n2\n3\n4\n5\n6\n7\n8");
}
END_TEST

START_TEST(time_bound_kills)
{
    char out[16], why[256];
    char *argv[] = { "sleep", "10", NULL };
    struct kb_capture c = { .out = out, .out_cap = sizeof(out), .timeout_ms = 200,
                            .own_pgroup = 1 };
    double t0 = now_s();
    ck_assert_int_eq(kb_capture_run(argv, &c, why, sizeof(why)), -1);
    ck_assert_int_eq(c.timed_out, 1);
    ck_assert_double_lt(now_s() - t0, 5.0);
    ck_assert_ptr_nonnull(strstr(why, "sleep"));
}
END_TEST

START_TEST(to_a_descriptor)
{
    char path[] = "/tmp/kb-capture-XXXXXX", out[8] = "x", why[256], buf[64] = "";
    char *argv[] = { "sh", "-c", "echo a; echo b >&2", NULL };
    int fd = mkstemp(path);
    FILE *f;
    struct kb_capture c = { .out = out, .out_cap = sizeof(out), .to_fd = fd };
    ck_assert_int_gt(fd, 0);
    ck_assert_int_eq(kb_capture_run(argv, &c, why, sizeof(why)), 0);
    ck_assert_str_eq(out, "");
    close(fd);
    f = fopen(path, "r");
    ck_assert_uint_eq(fread(buf, 1, sizeof(buf) - 1, f), 4);
    fclose(f);
    unlink(path);
    ck_assert_str_eq(buf, "a\nb\n");
}
END_TEST

START_TEST(cannot_run)
{
    char out[16], why[256];
    char *argv[] = { "no-such-program-kb", NULL };
    struct kb_capture c = { .out = out, .out_cap = sizeof(out) };
    ck_assert_int_eq(kb_capture_run(argv, &c, why, sizeof(why)), -1);
    ck_assert_ptr_nonnull(strstr(why, "no-such-program-kb"));
    ck_assert_int_eq(c.timed_out, 0);
}
END_TEST

static volatile sig_atomic_t ticks;

static void tick(int sig)
{
    (void)sig;
    ticks++;
}

START_TEST(signals_do_not_cut_it_short)
{
    struct sigaction sa = { .sa_handler = tick };      /* no SA_RESTART: calls see EINTR */
    struct itimerval every_ms = { { 0, 1000 }, { 0, 1000 } }, off = { { 0, 0 }, { 0, 0 } };
    char out[64], why[256];
    char *argv[] = { "sh", "-c", "sleep 0.3; echo done", NULL };
    struct kb_capture c = { .out = out, .out_cap = sizeof(out), .timeout_ms = 10000 };
    int rc;
    sigaction(SIGALRM, &sa, NULL);
    setitimer(ITIMER_REAL, &every_ms, NULL);
    rc = kb_capture_run(argv, &c, why, sizeof(why));
    setitimer(ITIMER_REAL, &off, NULL);
    ck_assert_msg(rc == 0, "rc %d: %s", rc, why);
    ck_assert_str_eq(out, "done\n");
    ck_assert_int_gt(ticks, 10);
}
END_TEST

static Suite *suite(void)
{
    Suite *s = suite_create("capture");
    TCase *tc = tcase_create("run");
    tcase_add_test(tc, first_line_merged);
    tcase_add_test(tc, streams_apart_and_status);
    tcase_add_test(tc, bounded_buffer_drops_the_rest);
    tcase_add_test(tc, time_bound_kills);
    tcase_add_test(tc, to_a_descriptor);
    tcase_add_test(tc, cannot_run);
    tcase_add_test(tc, signals_do_not_cut_it_short);
    suite_add_tcase(s, tc);
    return s;
}

int main(void)
{
    return kb_check_run(suite(), "capture");
}
