/* test_trial.c -- runner/load/trial.c: the few requests before any load, against a forked
 * server that answers each request with one canned reply: a keep-alive server is seen to
 * keep its connection, an HTTP/1.0 one to close it (so the load reconnects), a 404 and a
 * wrong body are wrong with the status and the body named, a closed port is refused, and a
 * server that never answers is wrong within the trial's deadline. */
#define _GNU_SOURCE
#include "runner/load/trial.h"
#include "tests/lib/kb_check.h"

#include <arpa/inet.h>
#include <netinet/in.h>
#include <signal.h>
#include <stdio.h>
#include <string.h>
#include <sys/socket.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include "contract/contract.h"
#include "runner/util/root.h"

#define KEEP "HTTP/1.1 200 OK\r\nServer: keeper/1\r\nContent-Length: 5\r\n\r\nhello"
#define CLOSE "HTTP/1.0 200 OK\r\nServer: SimpleHTTP/0.6\r\nContent-Length: 5\r\n\r\nhello"
#define MISSING "HTTP/1.1 404 Not Found\r\nContent-Length: 9\r\n\r\nnot here\n"
#define SILENT ""

static struct kb_contract C;
static char err[512];

/* A server on a free loopback port answering every request on a connection with reply,
 * then closing when the reply is HTTP/1.0; "" never answers. Its PID; *port set. */
static pid_t serve(const char *reply, int *port)
{
    struct sockaddr_in a = { .sin_family = AF_INET };
    socklen_t len = sizeof(a);
    int ls = socket(AF_INET, SOCK_STREAM, 0);
    pid_t pid;
    inet_pton(AF_INET, "127.0.0.1", &a.sin_addr);
    ck_assert_int_eq(bind(ls, (struct sockaddr *)&a, sizeof(a)), 0);
    ck_assert_int_eq(listen(ls, 8), 0);
    getsockname(ls, (struct sockaddr *)&a, &len);
    *port = ntohs(a.sin_port);
    if ((pid = fork()) == 0) {
        for (;;) {
            int fd = accept(ls, NULL, NULL);
            char buf[4096];
            while (fd >= 0 && recv(fd, buf, sizeof(buf), 0) > 0) {
                if (!reply[0])
                    continue;
                if (send(fd, reply, strlen(reply), MSG_NOSIGNAL) < 0 || strstr(reply, "HTTP/1.0"))
                    break;
            }
            if (fd >= 0)
                close(fd);
        }
    }
    close(ls);
    return pid;
}

static void stop(pid_t pid)
{
    kill(pid, SIGKILL);
    waitpid(pid, NULL, 0);
}

/* The trial of http://127.0.0.1:port/x with an optional --expect-body file's bytes. */
static enum kb_trial_rc trial_at(int port, const char *body_file, struct kb_trial *tr)
{
    char url[64];
    struct kb_target_spec s = { .url = url, .expect_body_file = body_file };
    struct kb_target t;
    enum kb_trial_rc rc;
    snprintf(url, sizeof(url), "http://127.0.0.1:%d/x", port);
    ck_assert_msg(kb_target_open(&t, &s, &C, err, sizeof(err)) == 0, "%s", err);
    rc = kb_trial_run(&t, tr, err, sizeof(err));
    kb_target_close(&t);
    return rc;
}

static void setup(void)
{
    char why[256];
    ck_assert_msg(kb_contract_load(kb_root_contract(), &C, why, sizeof(why)) == 0, "%s", why);
}

static void teardown(void)
{
    kb_contract_free(&C);
}

START_TEST(a_keep_alive_server_keeps_its_connection)
{
    struct kb_trial tr;
    char line[512];
    int port;
    pid_t pid = serve(KEEP, &port);
    ck_assert_int_eq(trial_at(port, NULL, &tr), KB_TRIAL_OK);
    ck_assert_int_eq(tr.answered, KB_TRIAL_REQUESTS);
    ck_assert_int_eq(tr.status, 200);
    ck_assert_int_eq(tr.body_bytes, 5);
    ck_assert_str_eq(tr.server, "keeper/1");
    ck_assert_int_eq(tr.kept, KB_TRIAL_REQUESTS - 1);
    ck_assert_int_eq(tr.closed, 0);
    ck_assert(!kb_trial_closes(&tr));
    kb_trial_describe(&tr, line, sizeof(line));
    ck_assert_msg(strstr(line, "status 200") && strstr(line, "Server: keeper/1") &&
                  strstr(line, "kept alive"), "%s", line);
    stop(pid);
}
END_TEST

START_TEST(an_http10_server_closes_and_is_right)
{
    struct kb_trial tr;
    char line[512];
    int port;
    pid_t pid = serve(CLOSE, &port);
    ck_assert_int_eq(trial_at(port, NULL, &tr), KB_TRIAL_OK);
    ck_assert_int_eq(tr.answered, KB_TRIAL_REQUESTS);
    ck_assert_int_eq(tr.closed, KB_TRIAL_REQUESTS);
    ck_assert_int_eq(tr.kept, 0);
    ck_assert(kb_trial_closes(&tr));
    kb_trial_describe(&tr, line, sizeof(line));
    ck_assert_msg(strstr(line, "closed after each response"), "%s", line);
    stop(pid);
}
END_TEST

START_TEST(a_404_is_wrong_and_named)
{
    struct kb_trial tr;
    int port;
    pid_t pid = serve(MISSING, &port);
    ck_assert_int_eq(trial_at(port, NULL, &tr), KB_TRIAL_WRONG);
    ck_assert_int_eq(tr.answered, 1);     /* the first wrong one ends it */
    ck_assert_int_eq(tr.status, 404);
    ck_assert_msg(strstr(err, "status 404") && strstr(err, "--expect-status"), "%s", err);
    stop(pid);
}
END_TEST

START_TEST(a_wrong_body_is_wrong)
{
    struct kb_trial tr;
    char path[] = "/tmp/kb-trial-body-XXXXXX";
    int port, fd = mkstemp(path);
    pid_t pid = serve(KEEP, &port);
    ck_assert_int_ge(fd, 0);
    ck_assert_int_eq(write(fd, "bye", 3), 3);
    close(fd);
    ck_assert_int_eq(trial_at(port, path, &tr), KB_TRIAL_WRONG);
    ck_assert_msg(strstr(err, "body") && strstr(err, "hello"), "%s", err);
    unlink(path);
    stop(pid);
}
END_TEST

START_TEST(a_closed_port_is_refused)
{
    struct kb_trial tr;
    int port;
    pid_t pid = serve(KEEP, &port);
    stop(pid);          /* the listener was the child's alone: the port is closed now */
    ck_assert_int_eq(trial_at(port, NULL, &tr), KB_TRIAL_REFUSED);
    ck_assert_msg(strstr(err, "cannot connect"), "%s", err);
    ck_assert_int_eq(tr.answered, 0);
}
END_TEST

START_TEST(a_silent_server_is_wrong_within_the_deadline)
{
    struct kb_trial tr;
    struct timespec a, b;
    int port;
    pid_t pid = serve(SILENT, &port);
    clock_gettime(CLOCK_MONOTONIC, &a);
    ck_assert_int_eq(trial_at(port, NULL, &tr), KB_TRIAL_WRONG);
    clock_gettime(CLOCK_MONOTONIC, &b);
    ck_assert_msg(strstr(err, "no complete reply"), "%s", err);
    ck_assert_double_lt((double)(b.tv_sec - a.tv_sec) + (double)(b.tv_nsec - a.tv_nsec) / 1e9,
                        KB_TRIAL_DEADLINE_MS / 1000.0 + 0.5);
    stop(pid);
}
END_TEST

static Suite *suite(void)
{
    Suite *s = suite_create("trial");
    TCase *tc = tcase_create("server");
    tcase_add_checked_fixture(tc, setup, teardown);
    tcase_set_timeout(tc, 20);
    tcase_add_test(tc, a_keep_alive_server_keeps_its_connection);
    tcase_add_test(tc, an_http10_server_closes_and_is_right);
    tcase_add_test(tc, a_404_is_wrong_and_named);
    tcase_add_test(tc, a_wrong_body_is_wrong);
    tcase_add_test(tc, a_closed_port_is_refused);
    tcase_add_test(tc, a_silent_server_is_wrong_within_the_deadline);
    suite_add_tcase(s, tc);
    return s;
}

int main(void)
{
    return kb_check_run(suite(), "trial");
}
