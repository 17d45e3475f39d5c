/* test_sandbox_remote.c -- runner/sandbox_remote: the "remote" backend drives a fixture
 * through the agent protocol. A fake agent (a thread on 127.0.0.1, canned answers) records
 * the lines it receives, so the test checks both what the backend sends and how it reads
 * the answers, refusals and a lost agent. */
#define _GNU_SOURCE
#include "runner/agent_client.h"
#include "runner/procs.h"
#include "runner/sandbox.h"
#include "tests/lib/kb_check.h"

#include <arpa/inet.h>
#include <netinet/in.h>
#include <pthread.h>
#include <signal.h>
#include <stdatomic.h>
#include <string.h>
#include <sys/socket.h>
#include <unistd.h>

struct fake {
    int lfd, port;
    pthread_t tid;
    atomic_int protocol, alive, stop, hangup;   /* hangup: close on the next line */
    char seen[32][128];
    atomic_int nseen;
};

static void answer(struct fake *f, int fd, const char *line)
{
    char out[512];

    if (!strcmp(line, "identity"))
        snprintf(out, sizeof(out), "ok {\"protocol\":%d,\"runtimes\":[\"go\"]}\n",
                 atomic_load(&f->protocol));
    else if (!strcmp(line, "start go 8083"))
        snprintf(out, sizeof(out), "ok {\"started\":\"go\",\"port\":8083}\n");
    else if (!strncmp(line, "start ", 6))
        snprintf(out, sizeof(out), "err refused: not a runtime of the contract\n");
    else if (!strcmp(line, "sample"))
        snprintf(out, sizeof(out), "ok {\"alive\":%s,\"exit_reason\":\"%s\",\"processes\":2,"
                 "\"cpu_seconds\":1.5,\"rss_bytes\":1000,\"pss_bytes\":900,\"fds\":7,"
                 "\"threads\":3}\n", atomic_load(&f->alive) ? "true" : "false",
                 atomic_load(&f->alive) ? "" : "exit 1");
    else if (!strcmp(line, "limits"))
        snprintf(out, sizeof(out), "ok {\"cgroup_version\":1,\"cpu_quota_us\":100000,"
                 "\"cpu_period_us\":100000,\"cpus\":1.0,\"cpuset\":\"0\",\"memory_bytes\":"
                 "536870912,\"memsw_bytes\":-1,\"pids_max\":256,\"paths\":\"/sys/x\"}\n");
    else if (!strcmp(line, "stop"))
        snprintf(out, sizeof(out), "ok {\"stopped\":\"go\"}\n");
    else
        snprintf(out, sizeof(out), "err refused\n");
    if (write(fd, out, strlen(out)) < 0)
        return;
}

static void serve_conn(struct fake *f, int fd)
{
    char buf[512];
    size_t len = 0;
    ssize_t r;

    while ((r = read(fd, buf + len, sizeof(buf) - 1 - len)) > 0) {
        char *nl;
        len += (size_t)r;
        while ((nl = memchr(buf, '\n', len))) {
            int n = atomic_load(&f->nseen);
            *nl = '\0';
            if (n < 32) {
                snprintf(f->seen[n], sizeof(f->seen[n]), "%.120s", buf);
                atomic_store(&f->nseen, n + 1);
            }
            if (atomic_load(&f->hangup)) {
                close(fd);
                return;
            }
            answer(f, fd, buf);
            len -= (size_t)(nl + 1 - buf);
            memmove(buf, nl + 1, len);
        }
    }
    close(fd);
}

static void *fake_main(void *arg)
{
    struct fake *f = arg;
    int fd;

    while (!atomic_load(&f->stop) && (fd = accept(f->lfd, NULL, NULL)) >= 0)
        serve_conn(f, fd);
    return NULL;
}

static struct fake fake;

static void fake_start(void)
{
    struct sockaddr_in a = { .sin_family = AF_INET, .sin_addr.s_addr = htonl(INADDR_LOOPBACK) };
    socklen_t len = sizeof(a);
    char addr[64], err[256];

    memset(&fake, 0, sizeof(fake));
    atomic_store(&fake.protocol, 1);
    atomic_store(&fake.alive, 1);
    fake.lfd = socket(AF_INET, SOCK_STREAM, 0);
    ck_assert_int_ge(fake.lfd, 0);
    ck_assert_int_eq(bind(fake.lfd, (struct sockaddr *)&a, sizeof(a)), 0);
    ck_assert_int_eq(listen(fake.lfd, 4), 0);
    ck_assert_int_eq(getsockname(fake.lfd, (struct sockaddr *)&a, &len), 0);
    fake.port = ntohs(a.sin_port);
    ck_assert_int_eq(pthread_create(&fake.tid, NULL, fake_main, &fake), 0);
    snprintf(addr, sizeof(addr), "127.0.0.1:%d", fake.port);
    ck_assert_msg(kb_sandbox_remote_set_agent(addr, err, sizeof(err)) == 0, "%s", err);
}

static void fake_stop(void)
{
    atomic_store(&fake.stop, 1);
    shutdown(fake.lfd, SHUT_RDWR);
    close(fake.lfd);
    pthread_join(fake.tid, NULL);
}

static int seen(const char *line)
{
    for (int i = 0; i < atomic_load(&fake.nseen); i++)
        if (!strcmp(fake.seen[i], line))
            return 1;
    return 0;
}

static const struct kb_fixture_spec go_spec = { .name = "go", .port = 8083 };

START_TEST(test_refuses_a_malformed_agent_address)
{
    char err[256];

    ck_assert_int_eq(kb_sandbox_remote_set_agent("nocolon", err, sizeof(err)), -1);
    ck_assert_int_eq(kb_sandbox_remote_set_agent(":80", err, sizeof(err)), -1);
    ck_assert_int_eq(kb_sandbox_remote_set_agent("host:", err, sizeof(err)), -1);
    ck_assert_ptr_nonnull(strstr(err, "HOST:PORT"));
}
END_TEST

START_TEST(test_drives_a_fixture_through_the_agent)
{
    const struct kb_sandbox_ops *ops = &kb_sandbox_remote;
    struct kb_limits_applied la;
    struct kb_proc_sample ps;
    struct kb_sandbox *sb;
    pid_t pids[4];
    char err[256] = "";

    fake_start();
    ck_assert_msg(ops->available(err, sizeof(err)) == 0, "%s", err);
    ck_assert(seen("identity"));
    ck_assert_ptr_nonnull(sb = ops->start(&go_spec, err, sizeof(err)));
    ck_assert(seen("start go 8083"));
    ck_assert_uint_eq(ops->pids(sb, pids, 4), 0);
    ck_assert_int_eq(ops->alive(sb), 1);
    ck_assert_str_eq(ops->exit_reason(sb), "");
    ck_assert_int_eq(ops->limits_applied(sb, &la, err, sizeof(err)), 0);
    ck_assert_str_eq(la.backend, "remote");
    ck_assert_int_eq(la.cpu_quota_us, 100000);
    ck_assert_double_eq(la.cpus, 1.0);
    ck_assert_str_eq(la.cpuset, "0");
    ck_assert_int_eq(la.memory_bytes, 536870912LL);
    ck_assert_int_eq(la.memsw_bytes, -1);
    ck_assert_int_eq(la.pids_max, 256);
    ck_assert_ptr_nonnull(strstr(la.paths, "/sys/x"));
    ck_assert_int_eq(kb_sandbox_remote_sample(sb, &ps, err, sizeof(err)), 0);
    ck_assert_double_eq(ps.cpu_seconds, 1.5);
    ck_assert_int_eq(ps.rss_bytes, 1000);
    ck_assert_int_eq(ps.fds, 7);
    ck_assert_uint_eq(ps.nprocs, 2);
    atomic_store(&fake.alive, 0);
    ck_assert_int_eq(ops->alive(sb), 0);
    ck_assert_str_eq(ops->exit_reason(sb), "exit 1");
    ck_assert_int_eq(ops->stop(sb, err, sizeof(err)), 0);
    ck_assert(seen("stop"));
    fake_stop();
}
END_TEST

START_TEST(test_reports_refusals_and_protocol_mismatch)
{
    const struct kb_sandbox_ops *ops = &kb_sandbox_remote;
    struct kb_fixture_spec spec = { .name = "nope", .port = 1 };
    char err[256] = "";

    fake_start();
    ck_assert_ptr_null(ops->start(&spec, err, sizeof(err)));
    ck_assert_msg(strstr(err, "refused") != NULL, "%s", err);
    atomic_store(&fake.protocol, 2);
    ck_assert_int_eq(ops->available(err, sizeof(err)), -1);
    ck_assert_ptr_nonnull(strstr(err, "protocol"));
    fake_stop();
}
END_TEST

START_TEST(test_a_lost_agent_reads_as_a_dead_fixture)
{
    const struct kb_sandbox_ops *ops = &kb_sandbox_remote;
    struct kb_sandbox *sb;
    char err[256] = "";

    fake_start();
    ck_assert_ptr_nonnull(sb = ops->start(&go_spec, err, sizeof(err)));
    atomic_store(&fake.hangup, 1);       /* the agent dies: no answer, the connection closes */
    ck_assert_int_eq(ops->alive(sb), 0);
    ck_assert_int_eq(ops->alive(sb), 0);
    ck_assert_ptr_nonnull(strstr(ops->exit_reason(sb), "agent"));
    ck_assert_int_eq(ops->stop(sb, err, sizeof(err)), -1);   /* freed either way */
    fake_stop();
}
END_TEST

static Suite *suite(void)
{
    Suite *s = suite_create("sandbox_remote");
    TCase *tc = tcase_create("remote");

    tcase_set_timeout(tc, 30);
    tcase_add_test(tc, test_refuses_a_malformed_agent_address);
    tcase_add_test(tc, test_drives_a_fixture_through_the_agent);
    tcase_add_test(tc, test_reports_refusals_and_protocol_mismatch);
    tcase_add_test(tc, test_a_lost_agent_reads_as_a_dead_fixture);
    suite_add_tcase(s, tc);
    return s;
}

int main(void)
{
    signal(SIGPIPE, SIG_IGN);
    return kb_check_run(suite(), "sandbox_remote");
}
