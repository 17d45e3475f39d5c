/* test_pin.c -- a process tree pinned to a CPU set: a child and its grandchild (forked before
 * the pinning) both read back on that set from the kernel and the record names both; a PID
 * that does not exist is refused with the reason. Every process it forks is killed by PID. */
#define _GNU_SOURCE
#include "runner/sandbox/pin.h"
#include "tests/lib/kb_check.h"

#include <signal.h>
#include <string.h>
#include <sys/prctl.h>
#include <sys/wait.h>
#include <unistd.h>

/* A child that forks one grandchild, then both wait for a signal. */
static pid_t family(void)
{
    pid_t pid;
    prctl(PR_SET_CHILD_SUBREAPER, 1);   /* the orphaned grandchild is ours to reap */
    pid = fork();
    if (pid == 0) {
        if (fork() == 0)
            pause();
        pause();
        _exit(0);
    }
    usleep(100 * 1000);
    return pid;
}

static cpu_set_t one_allowed_cpu(char *name, size_t len)
{
    cpu_set_t mine, one;
    CPU_ZERO(&one);
    ck_assert_int_eq(sched_getaffinity(0, sizeof(mine), &mine), 0);
    for (int i = 0; i < CPU_SETSIZE; i++)
        if (CPU_ISSET(i, &mine)) {
            CPU_SET(i, &one);
            snprintf(name, len, "%d", i);
            break;
        }
    return one;
}

START_TEST(tree_pinned_and_read_back)
{
    char want[16], got[64], err[256];
    cpu_set_t set = one_allowed_cpu(want, sizeof(want));
    pid_t pid = family();
    json_t *rec = NULL, *procs;
    ck_assert_msg(kb_pin_tree(pid, &set, &rec, err, sizeof(err)) == 0, "%s", err);
    procs = json_object_get(rec, "processes");
    ck_assert_uint_eq(json_array_size(procs), 2);
    for (size_t i = 0; i < 2; i++)
        ck_assert_str_eq(json_string_value(json_object_get(json_array_get(procs, i),
                                                           "cpus_allowed_list")), want);
    ck_assert(json_is_true(json_object_get(rec, "all_pinned")));
    ck_assert_int_eq(kb_pin_read_allowed(pid, got, sizeof(got)), 0);
    ck_assert_str_eq(got, want);
    for (size_t i = 0; i < 2; i++)      /* the grandchild too, which no one would reap */
        kill((pid_t)json_integer_value(json_object_get(json_array_get(procs, i), "pid")),
             SIGKILL);
    while (waitpid(-1, NULL, 0) > 0)
        ;
    json_decref(rec);
}
END_TEST

START_TEST(missing_process_refused)
{
    char want[16], err[256];
    cpu_set_t set = one_allowed_cpu(want, sizeof(want));
    json_t *rec = NULL;
    pid_t pid = fork();
    if (pid == 0)
        _exit(0);
    waitpid(pid, NULL, 0);
    ck_assert_int_eq(kb_pin_tree(pid, &set, &rec, err, sizeof(err)), -1);
    ck_assert_ptr_nonnull(strstr(err, "no process"));
    json_decref(rec);
}
END_TEST

static Suite *suite(void)
{
    Suite *s = suite_create("pin");
    TCase *tc = tcase_create("pin");
    tcase_add_test(tc, tree_pinned_and_read_back);
    tcase_add_test(tc, missing_process_refused);
    suite_add_tcase(s, tc);
    return s;
}

int main(void)
{
    return kb_check_run(suite(), "pin");
}
