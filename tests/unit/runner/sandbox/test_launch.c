/* test_launch.c -- starting a child: an exec, an affinity, a cgroup or a directory that fails
 * is -1 with the step named (the child reaped), and one that starts runs on the asked CPU,
 * with its log, directory, environment (PATH included) and session. */
#define _GNU_SOURCE
#include "runner/sandbox/launch.h"
#include "runner/sandbox/spawn.h"
#include "tests/unit/runner/tmpdir.h"

#include <errno.h>
#include <fcntl.h>
#include <sched.h>
#include <stdio.h>
#include <string.h>
#include <sys/wait.h>
#include <unistd.h>

/* The child's log, read whole, once it has exited 0. */
static void run_to_end(const struct kb_launch *l, char *out, size_t len)
{
    char err[256] = "";
    int st = 0;
    size_t n;
    FILE *f;
    pid_t pid = kb_launch(l, err, sizeof(err));
    ck_assert_msg(pid > 0, "%s", err);
    ck_assert_int_eq(kb_wait_exit(pid, 5000, &st), 0);
    ck_assert(WIFEXITED(st) && WEXITSTATUS(st) == 0);
    ck_assert_ptr_nonnull(f = fopen(l->log, "r"));
    n = fread(out, 1, len - 1, f);
    out[n] = '\0';
    fclose(f);
}

/* No child of ours left behind by a refused start. */
static void none_left(void)
{
    ck_assert_int_eq(waitpid(-1, NULL, WNOHANG), -1);
    ck_assert_int_eq(errno, ECHILD);
}

START_TEST(exec_failure_reported)
{
    char *argv[] = { "/nonexistent/kb-server", NULL }, err[256] = "";
    struct kb_launch l = { .argv = argv };
    ck_assert_int_eq(kb_launch(&l, err, sizeof(err)), -1);
    ck_assert_ptr_nonnull(strstr(err, "exec /nonexistent/kb-server"));
    ck_assert_ptr_nonnull(strstr(err, strerror(ENOENT)));
    none_left();
    /* a path of its own (the load child's /proc/self/exe) is the one named */
    l.path = "/nonexistent/other";
    ck_assert_int_eq(kb_launch(&l, err, sizeof(err)), -1);
    ck_assert_ptr_nonnull(strstr(err, "exec /nonexistent/other"));
    none_left();
}
END_TEST

START_TEST(path_searched_is_the_childs)
{
    char *argv[] = { "true", NULL }, *add[] = { "PATH=/nonexistent", NULL }, err[256] = "";
    struct kb_launch l = { .argv = argv, .env_add = add };
    ck_assert_int_eq(kb_launch(&l, err, sizeof(err)), -1);
    ck_assert_ptr_nonnull(strstr(err, "exec true"));
    none_left();
}
END_TEST

START_TEST(affinity_failure_reported)
{
    char *argv[] = { "true", NULL }, err[256] = "";
    cpu_set_t none;
    struct kb_launch l = { .argv = argv, .cpus = &none };
    CPU_ZERO(&none);
    CPU_SET(CPU_SETSIZE - 1, &none);       /* no host has it online */
    ck_assert_int_eq(kb_launch(&l, err, sizeof(err)), -1);
    ck_assert_ptr_nonnull(strstr(err, "CPU affinity"));
    none_left();
}
END_TEST

START_TEST(cgroup_and_dir_failures_reported)
{
    char *argv[] = { "true", NULL }, err[256] = "";
    const char *cgroups[] = { "/nonexistent/cg", NULL };
    struct kb_launch l = { .argv = argv, .cgroups = cgroups };
    ck_assert_int_eq(kb_launch(&l, err, sizeof(err)), -1);
    ck_assert_ptr_nonnull(strstr(err, "joining cgroup /nonexistent/cg"));
    l.cgroups = NULL;
    l.dir = "/nonexistent/dir";
    ck_assert_int_eq(kb_launch(&l, err, sizeof(err)), -1);
    ck_assert_ptr_nonnull(strstr(err, "chdir /nonexistent/dir"));
    none_left();
}
END_TEST

START_TEST(runs_on_the_asked_cpu)
{
    char *argv[] = { "grep", "Cpus_allowed_list", "/proc/self/status", NULL };
    char log[320], out[512], want[64];
    cpu_set_t mine, one;
    int cpu = -1;
    struct kb_launch l = { .argv = argv, .log = log, .cpus = &one };
    ck_assert_int_eq(sched_getaffinity(0, sizeof(mine), &mine), 0);
    for (int i = CPU_SETSIZE - 1; i >= 0 && cpu < 0; i--)
        if (CPU_ISSET(i, &mine))
            cpu = i;                        /* the last: not what a child would inherit */
    CPU_ZERO(&one);
    CPU_SET(cpu, &one);
    snprintf(log, sizeof(log), "%s/cpu.log", kb_tmp);
    run_to_end(&l, out, sizeof(out));
    snprintf(want, sizeof(want), "Cpus_allowed_list:\t%d\n", cpu);
    ck_assert_str_eq(out, want);
}
END_TEST

START_TEST(log_dir_env_and_session)
{
    char *argv[] = { "sh", "-c", "echo $KB_A $KB_B; pwd; cut -d' ' -f6 /proc/$$/stat; echo $$",
                     NULL };
    char *add[] = { "KB_A=new", "KB_B=two", NULL }, log[320], out[512], dir[300];
    struct kb_launch l = { .argv = argv, .log = log, .log_append = 1, .dir = dir,
                           .env_add = add, .new_session = 1 };
    long sid, pid;
    setenv("KB_A", "old", 1);               /* replaced, not doubled */
    snprintf(log, sizeof(log), "%s/run.log", kb_tmp);
    snprintf(dir, sizeof(dir), "%s", kb_tmp);
    kb_tmp_put("run.log", "before\n");      /* appended to */
    run_to_end(&l, out, sizeof(out));
    unsetenv("KB_A");
    ck_assert_int_eq(strncmp(out, "before\nnew two\n", 15), 0);
    ck_assert_int_eq(strncmp(out + 15, kb_tmp, strlen(kb_tmp)), 0);
    ck_assert_int_eq(sscanf(out + 15 + strlen(kb_tmp), " %ld %ld", &sid, &pid), 2);
    ck_assert_int_eq(sid, pid);             /* its own session */
}
END_TEST

/* Two children joined by a pipe, as docker save | docker load: what the first writes the
 * second reads, and the second's stdout is its own pipe end. */
START_TEST(stdio_joins_two_children_by_a_pipe)
{
    char *echo[] = { "printf", "through the pipe", NULL }, *cat[] = { "cat", NULL };
    char err[256] = "", got[64] = "";
    int ab[2], back[2], st = 0;
    ck_assert_int_eq(pipe2(ab, O_CLOEXEC), 0);
    ck_assert_int_eq(pipe2(back, O_CLOEXEC), 0);
    int first[3] = { -1, ab[1], -1 }, second[3] = { ab[0], back[1], -1 };
    struct kb_launch a = { .argv = echo, .stdio = first }, b = { .argv = cat, .stdio = second };
    pid_t pa = kb_launch(&a, err, sizeof(err)), pb = kb_launch(&b, err, sizeof(err));
    ck_assert_msg(pa > 0 && pb > 0, "%s", err);
    close(ab[0]);
    close(ab[1]);
    close(back[1]);
    ck_assert_int_eq(read(back[0], got, sizeof(got) - 1), 16);
    ck_assert_str_eq(got, "through the pipe");
    close(back[0]);
    ck_assert_int_eq(kb_wait_exit(pa, 5000, &st), 0);
    ck_assert(WIFEXITED(st) && WEXITSTATUS(st) == 0);
    ck_assert_int_eq(kb_wait_exit(pb, 5000, &st), 0);
    ck_assert(WIFEXITED(st) && WEXITSTATUS(st) == 0);
}
END_TEST

static Suite *suite(void)
{
    Suite *s = suite_create("launch");
    TCase *tc = tcase_create("launch");
    tcase_add_checked_fixture(tc, kb_tmp_setup, kb_tmp_teardown);
    tcase_add_test(tc, exec_failure_reported);
    tcase_add_test(tc, path_searched_is_the_childs);
    tcase_add_test(tc, affinity_failure_reported);
    tcase_add_test(tc, cgroup_and_dir_failures_reported);
    tcase_add_test(tc, runs_on_the_asked_cpu);
    tcase_add_test(tc, log_dir_env_and_session);
    tcase_add_test(tc, stdio_joins_two_children_by_a_pipe);
    suite_add_tcase(s, tc);
    return s;
}

int main(void)
{
    return kb_check_run(suite(), "launch");
}
