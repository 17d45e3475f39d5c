/* test_spawn.c -- the command template (every placeholder, NULL as "", unknown names and
 * stray braces left as they are, argv and env bounded and terminated), waiting until a port
 * accepts (a listener, none by the deadline, a process that died, a malformed host), a
 * child's end within a bound, and a free loopback port. */
#define _GNU_SOURCE
#include "runner/sandbox/spawn.h"
#include "tests/lib/kb_check.h"

#include <arpa/inet.h>
#include <netinet/in.h>
#include <signal.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

static const struct kb_tmpl_vars vars = { .root = "/r", .build = "/b", .bind = "0.0.0.0",
                                          .rundir = "/run/x", .port = 8123, .cpus = 2 };

START_TEST(expand_every_placeholder)
{
    char *s = kb_tmpl_expand("{root}/a {build}/b --port {port} --bind {bind} --dir {rundir} "
                             "-c {cpus} {conninfo} {port", &vars);
    ck_assert_str_eq(s, "/r/a /b/b --port 8123 --bind 0.0.0.0 --dir /run/x -c 2 {conninfo} "
                        "{port");
    free(s);
}
END_TEST

START_TEST(expand_null_reads_as_empty)
{
    struct kb_tmpl_vars v = { .port = 1 };
    char *s = kb_tmpl_expand("[{root}][{build}][{bind}][{rundir}][{port}][{cpus}]", &v);
    ck_assert_str_eq(s, "[][][][][1][0]");
    free(s);
}
END_TEST

START_TEST(argv_and_env_bounded)
{
    char *t[] = { "{build}/srv", "--port", "{port}" }, *k[] = { "A", "B" },
         *vv[] = { "{rundir}", "x{cpus}" };
    struct kb_strlist cmd = { t, 3 }, keys = { k, 2 }, vals = { vv, 2 };
    char *argv[8] = { 0 }, *small[3] = { 0 }, *env[4] = { 0 };
    ck_assert_int_eq(kb_tmpl_argv(&cmd, &vars, argv, 8), 3);
    ck_assert_str_eq(argv[0], "/b/srv");
    ck_assert_str_eq(argv[2], "8123");
    ck_assert_ptr_null(argv[3]);
    /* too many for the room: what fits is kept and terminated, -1 says it was cut */
    ck_assert_int_eq(kb_tmpl_argv(&cmd, &vars, small, 3), -1);
    ck_assert_str_eq(small[1], "--port");
    ck_assert_ptr_null(small[2]);
    ck_assert_int_eq(kb_tmpl_argv(&cmd, &vars, small, 0), -1);
    ck_assert_int_eq(kb_tmpl_env(&keys, &vals, &vars, env, 4), 2);
    ck_assert_str_eq(env[0], "A=/run/x");
    ck_assert_str_eq(env[1], "B=x2");
    ck_assert_ptr_null(env[2]);
    kb_tmpl_free(argv, 8);
    kb_tmpl_free(small, 3);
    kb_tmpl_free(env, 4);
    ck_assert_ptr_null(argv[0]);
}
END_TEST

static int listener(int *port)
{
    struct sockaddr_in a = { .sin_family = AF_INET };
    socklen_t len = sizeof(a);
    int fd = socket(AF_INET, SOCK_STREAM, 0);
    a.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
    ck_assert_int_eq(bind(fd, (struct sockaddr *)&a, sizeof(a)), 0);
    ck_assert_int_eq(listen(fd, 4), 0);
    ck_assert_int_eq(getsockname(fd, (struct sockaddr *)&a, &len), 0);
    *port = ntohs(a.sin_port);
    return fd;
}

static int dead(void *arg)
{
    (void)arg;
    return 0;
}

START_TEST(wait_accepting_each_outcome)
{
    char err[256];
    int port, fd = listener(&port);
    ck_assert_int_eq(kb_wait_accepting("127.0.0.1", port, 1000, NULL, NULL, err, sizeof(err)), 0);
    /* a listener on every address is reached at the loopback */
    ck_assert_int_eq(kb_wait_accepting("0.0.0.0", port, 1000, NULL, NULL, err, sizeof(err)), 0);
    ck_assert_int_eq(kb_wait_accepting(NULL, port, 1000, NULL, NULL, err, sizeof(err)), 0);
    close(fd);
    ck_assert_int_eq(kb_wait_accepting("127.0.0.1", port, 100, NULL, NULL, err, sizeof(err)), -1);
    ck_assert_ptr_nonnull(strstr(err, "within 100 ms"));
    ck_assert_int_eq(kb_wait_accepting("127.0.0.1", port, 5000, dead, NULL, err, sizeof(err)), -1);
    ck_assert_ptr_nonnull(strstr(err, "exited"));
    ck_assert_int_eq(kb_wait_accepting("localhost", port, 100, NULL, NULL, err, sizeof(err)), -1);
    ck_assert_ptr_nonnull(strstr(err, "IPv4"));
}
END_TEST

START_TEST(wait_exit_bounded)
{
    int st = 0;
    pid_t pid = fork();
    if (pid == 0)
        _exit(7);
    ck_assert_int_eq(kb_wait_exit(pid, 5000, &st), 0);
    ck_assert(WIFEXITED(st) && WEXITSTATUS(st) == 7);
    if ((pid = fork()) == 0)
        _exit(3);
    ck_assert_int_eq(kb_wait_exit(pid, -1, &st), 0);
    ck_assert_int_eq(WEXITSTATUS(st), 3);
    if ((pid = fork()) == 0) {
        pause();
        _exit(0);
    }
    ck_assert_int_eq(kb_wait_exit(pid, 100, &st), -1);
    ck_assert(WIFSIGNALED(st) && WTERMSIG(st) == SIGKILL);
    ck_assert_int_eq(kb_wait_exit(pid, 100, &st), -1);     /* reaped: no child of ours */
}
END_TEST

START_TEST(free_port_is_bindable)
{
    struct sockaddr_in a = { .sin_family = AF_INET };
    char err[128];
    int port = kb_free_port(err, sizeof(err)), fd = socket(AF_INET, SOCK_STREAM, 0);
    ck_assert_int_gt(port, 0);
    a.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
    a.sin_port = htons((unsigned short)port);
    ck_assert_int_eq(bind(fd, (struct sockaddr *)&a, sizeof(a)), 0);
    close(fd);
}
END_TEST

static Suite *suite(void)
{
    Suite *s = suite_create("spawn");
    TCase *tc = tcase_create("spawn");
    tcase_add_test(tc, expand_every_placeholder);
    tcase_add_test(tc, expand_null_reads_as_empty);
    tcase_add_test(tc, argv_and_env_bounded);
    tcase_add_test(tc, wait_accepting_each_outcome);
    tcase_add_test(tc, wait_exit_bounded);
    tcase_add_test(tc, free_port_is_bindable);
    suite_add_tcase(s, tc);
    return s;
}

int main(void)
{
    return kb_check_run(suite(), "spawn");
}
