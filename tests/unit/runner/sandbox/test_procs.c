/* test_procs.c -- runner/procs: /proc/PID/stat's text parsed past a command with spaces and
 * parentheses, a process's start time and liveness (a zombie is not running), and the tree under a process, which must follow a child that started a
 * session of its own (as nginx and php-fpm do under php-fpm/run.sh). */
#define _GNU_SOURCE
#include "runner/sandbox/procs.h"
#include "tests/lib/kb_check.h"

#include <signal.h>
#include <stdlib.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

static int has(const pid_t *v, size_t n, pid_t p)
{
    for (size_t i = 0; i < n; i++)
        if (v[i] == p)
            return 1;
    return 0;
}

static void sleep_ms(long ms)
{
    struct timespec ts = { ms / 1000, (ms % 1000) * 1000000L };
    nanosleep(&ts, NULL);
}

START_TEST(stat_parsed_past_the_command)
{
    struct kb_proc_stat st;
    const char *text = "123 (a (b) c) S 1 120 119 0 -1 4194560 10 0 0 0 57 13 0 0 20 0 3 0 "
                       "987654 1000 200 18446744073709551615\n";
    ck_assert_int_eq(kb_procs_stat_parse(text, &st), 0);
    ck_assert_int_eq(st.state, 'S');
    ck_assert_int_eq(st.ppid, 1);
    ck_assert_int_eq(st.pgrp, 120);
    ck_assert_int_eq(st.sid, 119);
    ck_assert_uint_eq(st.utime, 57);
    ck_assert_uint_eq(st.stime, 13);
    ck_assert_int_eq(st.threads, 3);
    ck_assert_uint_eq(st.start, 987654);
    /* a ") Z 9 " inside the command is the command's: the last ')' ends it */
    ck_assert_int_eq(kb_procs_stat_parse("7 (x) Z 9 9) R 2 3 4 0 0 0 0 0 0 0 1 2 0 0 0 0 1 0 5",
                                         &st), 0);
    ck_assert_int_eq(st.state, 'R');
    ck_assert_uint_eq(st.start, 5);
    ck_assert_int_eq(kb_procs_stat_parse("", &st), -1);
    ck_assert_int_eq(kb_procs_stat_parse("1 (cut short) S 1 2", &st), -1);
    ck_assert_int_eq(kb_procs_stat(getpid(), &st), 0);
    ck_assert_int_eq(st.ppid, getppid());
}
END_TEST

START_TEST(start_time_and_running)
{
    pid_t child = fork();
    if (child == 0)
        _exit(0);
    ck_assert_int_gt(kb_procs_start_time(getpid()), 0);
    ck_assert_int_ge(kb_procs_start_time(child), kb_procs_start_time(getpid()));
    ck_assert_int_eq(kb_procs_running(getpid()), 1);
    sleep_ms(200);      /* exited, not reaped: a zombie */
    ck_assert_int_eq(kb_procs_running(child), 0);
    ck_assert_int_gt(kb_procs_start_time(child), 0);
    waitpid(child, NULL, 0);
    ck_assert_int_eq(kb_procs_start_time(child), -1);
    ck_assert_int_eq(kb_procs_running(child), 0);
}
END_TEST

START_TEST(tree_follows_new_sessions)
{
    int fds[2];
    pid_t root, pids[64], inner = 0, outer = 0;
    size_t n;
    ck_assert_int_eq(pipe(fds), 0);
    if ((root = fork()) == 0) {
        pid_t a, b;
        setsid();
        if ((a = fork()) == 0) {        /* a session of its own, child of root */
            setsid();
            if (fork() == 0)            /* and its child */
                pause();
            pause();
        }
        if ((b = fork()) == 0)          /* root's session */
            pause();
        if (write(fds[1], &a, sizeof(a)) < 0 || write(fds[1], &b, sizeof(b)) < 0)
            _exit(1);
        pause();
    }
    ck_assert_int_eq(read(fds[0], &inner, sizeof(inner)), sizeof(inner));
    ck_assert_int_eq(read(fds[0], &outer, sizeof(outer)), sizeof(outer));
    sleep_ms(100);
    n = kb_procs_tree(root, pids, 64);
    ck_assert_uint_eq(n, 4);
    ck_assert(has(pids, n, root) && has(pids, n, inner) && has(pids, n, outer));
    ck_assert(!has(pids, n, getpid()));
    for (size_t i = 0; i < n; i++)
        kill(pids[i], SIGKILL);
    waitpid(root, NULL, 0);
    ck_assert_uint_eq(kb_procs_tree(-1, pids, 64), 0);
}
END_TEST

static Suite *suite(void)
{
    Suite *s = suite_create("procs");
    TCase *tc = tcase_create("ids");
    tcase_add_test(tc, stat_parsed_past_the_command);
    tcase_add_test(tc, start_time_and_running);
    tcase_add_test(tc, tree_follows_new_sessions);
    suite_add_tcase(s, tc);
    return s;
}

int main(void)
{
    return kb_check_run(suite(), "procs");
}
