/* test_sandbox_remote.c -- runner/sandbox_remote: the "remote" backend drives a fixture
 * through the agent protocol. A fake agent (a thread on 127.0.0.1, canned answers) records
 * the lines it receives, so the test checks both what the backend sends and how it reads
 * the answers, refusals and a lost agent, and what the sandbox handle says of a fixture on
 * another host (its target, its identity, the run's evidence). */
#define _GNU_SOURCE
#include "runner/sandbox/agent.h"
#include "runner/sandbox/agent_auth.h"
#include "runner/sandbox/procs.h"
#include "runner/sandbox/sandbox.h"
#include "tests/lib/kb_check.h"

#include <arpa/inet.h>
#include <fcntl.h>
#include <netinet/in.h>
#include <pthread.h>
#include <signal.h>
#include <stdatomic.h>
#include <string.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <unistd.h>

#define FAKE_TOKEN "a secret of the fake agent's, 0123456789"
#define FAKE_HELLO KB_AGENT_GREETING " 2 00112233445566778899aabbccddeeff"

struct fake {
    int lfd, port;
    pthread_t tid;
    atomic_int protocol, alive, stop, hangup;   /* hangup: close on the next line */
    atomic_int loopback_only;                   /* its fixtures bind 127.0.0.1, not 0.0.0.0 */
    char seen[32][128];
    atomic_int nseen;
};

static void answer(struct fake *f, int fd, const char *line)
{
    char out[512];

    if (!strcmp(line, "identity"))
        snprintf(out, sizeof(out), "ok {\"protocol\":%d,\"runtimes\":[\"go\"],\"limits\":true,"
                 "\"hostname\":\"fixhost\",\"serve_bind\":\"%s\"}\n", atomic_load(&f->protocol),
                 atomic_load(&f->loopback_only) ? "127.0.0.1" : "0.0.0.0");
    else if (!strcmp(line, "start go 8083"))
        snprintf(out, sizeof(out), "ok {\"started\":\"go\",\"port\":8083}\n");
    else if (!strcmp(line, "start go 8084"))
        snprintf(out, sizeof(out), "err harness: port 8084 is held by pid 1\n");
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

/* Its greeting, then the token proved as serve-agent asks it; 0 when it was. */
static int fake_auth(int fd, const char *line)
{
    static const char ok[] = "ok {\"session\":1}\n", no[] = "err refused: authentication failed\n";
    int good = !strncmp(line, "auth ", 5) && kb_agent_proof_ok(FAKE_TOKEN, FAKE_HELLO, line + 5);
    if (write(fd, good ? ok : no, good ? sizeof(ok) - 1 : sizeof(no) - 1) < 0)
        return -1;
    return good ? 0 : -1;
}

static void serve_conn(struct fake *f, int fd)
{
    char buf[512];
    size_t len = 0;
    ssize_t r;
    int authed = 0;

    if (write(fd, FAKE_HELLO "\n", sizeof(FAKE_HELLO)) < 0) {
        close(fd);
        return;
    }
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
            if (atomic_load(&f->hangup) || (!authed && fake_auth(fd, buf) < 0)) {
                close(fd);
                return;
            }
            if (authed)
                answer(f, fd, buf);
            authed = 1;
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
static char fake_addr[64], token_file[64] = "/tmp/kb-token-XXXXXX";

/* The token the runner is given, in a file of its own (mode as given). */
static void put_token(const char *secret, mode_t mode)
{
    int fd;
    ck_assert_int_ge(fd = open(token_file, O_WRONLY | O_TRUNC), 0);
    ck_assert_int_eq(write(fd, secret, strlen(secret)), (ssize_t)strlen(secret));
    close(fd);
    ck_assert_int_eq(chmod(token_file, mode), 0);
}

static void fake_start(void)
{
    struct sockaddr_in a = { .sin_family = AF_INET, .sin_addr.s_addr = htonl(INADDR_LOOPBACK) };
    socklen_t len = sizeof(a);

    memset(&fake, 0, sizeof(fake));
    atomic_store(&fake.protocol, KB_AGENT_PROTOCOL);
    atomic_store(&fake.alive, 1);
    fake.lfd = socket(AF_INET, SOCK_STREAM, 0);
    ck_assert_int_ge(fake.lfd, 0);
    ck_assert_int_eq(bind(fake.lfd, (struct sockaddr *)&a, sizeof(a)), 0);
    ck_assert_int_eq(listen(fake.lfd, 4), 0);
    ck_assert_int_eq(getsockname(fake.lfd, (struct sockaddr *)&a, &len), 0);
    fake.port = ntohs(a.sin_port);
    ck_assert_int_eq(pthread_create(&fake.tid, NULL, fake_main, &fake), 0);
    snprintf(fake_addr, sizeof(fake_addr), "127.0.0.1:%d", fake.port);
}

/* A sandbox on the fake agent (or on agent, when given). */
static struct kb_sandbox *open_remote(const char *agent, const char *target, char *err,
                                      size_t errlen)
{
    const struct kb_sandbox_config cfg = { .backend = "remote", .agent = agent ? agent : fake_addr,
                                           .target = target, .agent_token = token_file };
    put_token(FAKE_TOKEN "\n", 0600);
    return kb_sandbox_open(&cfg, err, errlen);
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
    const struct kb_sandbox_config nolimits = { .backend = "remote", .agent = "127.0.0.1:1",
                                                .no_limits = 1 };
    char err[256];

    ck_assert_ptr_null(open_remote("nocolon", NULL, err, sizeof(err)));
    ck_assert_ptr_null(open_remote(":80", NULL, err, sizeof(err)));
    ck_assert_ptr_null(open_remote("host:", NULL, err, sizeof(err)));
    ck_assert_ptr_nonnull(strstr(err, "HOST:PORT"));
    ck_assert_ptr_null(open_remote("", NULL, err, sizeof(err)));
    ck_assert_ptr_nonnull(strstr(err, "needs --agent"));
    ck_assert_ptr_null(open_remote("fixhost:9000", NULL, err, sizeof(err)));
    ck_assert_ptr_nonnull(strstr(err, "IPv4"));
    ck_assert_ptr_null(kb_sandbox_open(&nolimits, err, sizeof(err)));
    ck_assert_ptr_nonnull(strstr(err, "--no-limits is the agent's"));
}
END_TEST

START_TEST(test_every_session_proves_the_token)
{
    const struct kb_sandbox_config none = { .backend = "remote", .agent = "127.0.0.1:1" };
    const struct kb_sandbox_config cfg = { .backend = "remote", .agent = fake_addr,
                                           .agent_token = token_file };
    struct kb_sandbox *box;
    char err[256] = "";

    ck_assert_ptr_null(kb_sandbox_open(&none, err, sizeof(err)));
    ck_assert_ptr_nonnull(strstr(err, "needs --agent-token"));
    fake_start();
    put_token(FAKE_TOKEN "\n", 0644);          /* a token others may read proves nothing */
    ck_assert_ptr_null(kb_sandbox_open(&cfg, err, sizeof(err)));
    ck_assert_msg(strstr(err, "readable by no one else") != NULL, "%s", err);
    put_token("short", 0600);
    ck_assert_ptr_null(kb_sandbox_open(&cfg, err, sizeof(err)));
    ck_assert_msg(strstr(err, "bytes of secret") != NULL, "%s", err);
    put_token("another secret, not the agent's one", 0600);
    ck_assert_ptr_nonnull(box = kb_sandbox_open(&cfg, err, sizeof(err)));
    ck_assert_int_eq(kb_sandbox_available(box, err, sizeof(err)), -1);
    ck_assert_msg(strstr(err, "authentication failed") != NULL, "%s", err);
    ck_assert(!seen("identity"));               /* nothing asked before the proof */
    kb_sandbox_close(box);
    /* an agent whose fixtures bind loopback cannot serve a load from elsewhere */
    atomic_store(&fake.loopback_only, 1);
    ck_assert_ptr_nonnull(box = open_remote(NULL, "127.0.0.2", err, sizeof(err)));
    ck_assert_int_eq(kb_sandbox_available(box, err, sizeof(err)), -1);
    ck_assert_msg(strstr(err, "--serve-bind 127.0.0.2") != NULL, "%s", err);
    kb_sandbox_close(box);
    fake_stop();
}
END_TEST

START_TEST(test_drives_a_fixture_through_the_agent)
{
    struct kb_limits_applied la;
    struct kb_proc_sample ps;
    struct kb_sandbox *box;
    struct kb_sandbox_fixture *sb;
    pid_t pids[4];
    char err[256] = "";

    fake_start();
    ck_assert_ptr_nonnull(box = open_remote(NULL, NULL, err, sizeof(err)));
    ck_assert_int_eq(kb_sandbox_on_this_host(box), 0);
    ck_assert_str_eq(kb_sandbox_target(box), "127.0.0.1");
    ck_assert_msg(kb_sandbox_available(box, err, sizeof(err)) == 0, "%s", err);
    ck_assert(seen("identity"));
    ck_assert_int_eq(kb_sandbox_no_limits(box), 0);     /* the agent said "limits": true */
    ck_assert_int_eq(kb_sandbox_start(box, &go_spec, &sb, err, sizeof(err)), 0);
    ck_assert(seen("start go 8083"));
    ck_assert_uint_eq(kb_sandbox_pids(sb, pids, 4), 0);
    ck_assert_int_eq(kb_sandbox_port_owned(sb, 8083, err, sizeof(err)), 0);
    ck_assert_int_eq(kb_sandbox_alive(sb), 1);
    ck_assert_str_eq(kb_sandbox_exit_reason(sb), "");
    ck_assert_int_eq(kb_sandbox_limits(sb, &la, err, sizeof(err)), 0);
    ck_assert_str_eq(la.backend, "remote");
    ck_assert_int_eq(la.cpu_quota_us, 100000);
    ck_assert_double_eq(la.cpus, 1.0);
    ck_assert_str_eq(la.cpuset, "0");
    ck_assert_int_eq(la.memory_bytes, 536870912LL);
    ck_assert_int_eq(la.memsw_bytes, -1);
    ck_assert_int_eq(la.pids_max, 256);
    ck_assert_ptr_nonnull(strstr(la.paths, "/sys/x"));
    ck_assert_int_eq(kb_sandbox_sample(sb, &ps, err, sizeof(err)), 0);
    ck_assert_double_eq(ps.cpu_seconds, 1.5);
    ck_assert_int_eq(ps.rss_bytes, 1000);
    ck_assert_int_eq(ps.fds, 7);
    ck_assert_uint_eq(ps.nprocs, 2);
    atomic_store(&fake.alive, 0);
    ck_assert_int_eq(kb_sandbox_alive(sb), 0);
    ck_assert_str_eq(kb_sandbox_exit_reason(sb), "exit 1");
    ck_assert_int_eq(kb_sandbox_lost(sb, err, sizeof(err)), 0);     /* the fixture's exit */
    ck_assert_int_eq(kb_sandbox_stop(sb, err, sizeof(err)), 0);
    ck_assert(seen("stop"));
    kb_sandbox_close(box);
    fake_stop();
}
END_TEST

START_TEST(test_reports_refusals_and_protocol_mismatch)
{
    struct kb_fixture_spec spec = { .name = "nope", .port = 1 };
    struct kb_sandbox *box;
    struct kb_sandbox_fixture *sb;
    char err[256] = "";

    fake_start();
    ck_assert_ptr_nonnull(box = open_remote(NULL, NULL, err, sizeof(err)));
    ck_assert_int_eq(kb_sandbox_start(box, &spec, &sb, err, sizeof(err)), -1);
    ck_assert_ptr_null(sb);
    ck_assert_msg(strstr(err, "refused") != NULL, "%s", err);
    atomic_store(&fake.protocol, KB_AGENT_PROTOCOL + 1);
    ck_assert_int_eq(kb_sandbox_available(box, err, sizeof(err)), -1);
    ck_assert_ptr_nonnull(strstr(err, "protocol"));
    kb_sandbox_close(box);
    fake_stop();
}
END_TEST

START_TEST(test_a_lost_agent_reads_as_a_dead_fixture)
{
    struct kb_sandbox *box;
    struct kb_sandbox_fixture *sb;
    struct kb_proc_sample ps;
    char err[256] = "";

    fake_start();
    ck_assert_ptr_nonnull(box = open_remote(NULL, NULL, err, sizeof(err)));
    ck_assert_int_eq(kb_sandbox_start(box, &go_spec, &sb, err, sizeof(err)), 0);
    atomic_store(&fake.hangup, 1);       /* the agent dies: no answer, the connection closes */
    ck_assert_int_eq(kb_sandbox_alive(sb), 0);
    ck_assert_int_eq(kb_sandbox_alive(sb), 0);
    ck_assert_ptr_nonnull(strstr(kb_sandbox_exit_reason(sb), "agent"));
    ck_assert_int_eq(kb_sandbox_lost(sb, err, sizeof(err)), 1);     /* the harness's loss */
    ck_assert_ptr_nonnull(strstr(err, "lost the session"));
    ck_assert_int_eq(kb_sandbox_sample(sb, &ps, err, sizeof(err)), -1);
    ck_assert_uint_eq(ps.nprocs, 0);
    ck_assert_int_eq(kb_sandbox_stop(sb, err, sizeof(err)), -1);   /* freed either way */
    kb_sandbox_close(box);
    fake_stop();
}
END_TEST

START_TEST(test_the_agents_port_refusal_is_the_harness)
{
    struct kb_fixture_spec spec = { .name = "go", .port = 8084 };
    struct kb_sandbox *box;
    struct kb_sandbox_fixture *sb;
    char err[256] = "";

    fake_start();
    ck_assert_ptr_nonnull(box = open_remote(NULL, NULL, err, sizeof(err)));
    ck_assert_int_eq(kb_sandbox_port_free(box, 8084, 0, err, sizeof(err)), 0);  /* not here */
    ck_assert_int_eq(kb_sandbox_start(box, &spec, &sb, err, sizeof(err)), KB_SANDBOX_HARNESS);
    ck_assert_str_eq(err, "port 8084 is held by pid 1");
    kb_sandbox_close(box);
    fake_stop();
}
END_TEST

START_TEST(test_identity_and_evidence_are_the_agents_host)
{
    struct kb_runtime rt = { .name = "go" };
    char *cmd[] = { "{build}/go", "--port", "{port}" };
    struct kb_fixture_parts parts = { .rt = &rt };
    struct kb_sandbox *box;
    json_t *id, *ev, *plan;
    char err[256] = "", where[128];

    rt.command.v = cmd;
    rt.command.n = 3;
    fake_start();
    ck_assert_ptr_nonnull(box = open_remote(NULL, "127.0.0.2", err, sizeof(err)));
    ck_assert_str_eq(kb_sandbox_target(box), "127.0.0.2");
    ck_assert_msg(kb_sandbox_available(box, err, sizeof(err)) == 0, "%s", err);
    ck_assert_ptr_nonnull(id = kb_sandbox_identity(box, &parts, err, sizeof(err)));
    ck_assert_str_eq(json_string_value(json_object_get(json_object_get(id, "agent_host"),
                                                       "hostname")), "fixhost");
    ck_assert_uint_eq(json_array_size(json_object_get(id, "command")), 3);
    ck_assert_uint_eq(strlen(json_string_value(json_object_get(id, "sha256"))), 64);
    ck_assert_ptr_nonnull(ev = kb_sandbox_run_evidence(box, err, sizeof(err)));
    ck_assert_str_eq(json_string_value(json_object_get(json_object_get(ev, "target"), "host")),
                     "127.0.0.2");
    ck_assert_int_eq(json_integer_value(json_object_get(json_object_get(json_object_get(
        ev, "target"), "agent_identity"), "protocol")), KB_AGENT_PROTOCOL);
    plan = kb_sandbox_plan_keys(box);
    ck_assert_str_eq(json_string_value(json_object_get(json_object_get(plan, "target"),
                                                       "agent")), fake_addr);
    ck_assert_ptr_nonnull(strstr(kb_sandbox_runtime_version(box, "go"), "unknown"));
    kb_sandbox_describe(box, where, sizeof(where));
    ck_assert_ptr_nonnull(strstr(where, " target 127.0.0.2 agent "));
    ck_assert_int_eq(kb_sandbox_sweep_stale(box), 0);
    json_decref(id);
    json_decref(ev);
    json_decref(plan);
    kb_sandbox_close(box);
    fake_stop();
}
END_TEST

static Suite *suite(void)
{
    Suite *s = suite_create("sandbox_remote");
    TCase *tc = tcase_create("remote");

    tcase_set_timeout(tc, 30);
    tcase_add_test(tc, test_refuses_a_malformed_agent_address);
    tcase_add_test(tc, test_every_session_proves_the_token);
    tcase_add_test(tc, test_drives_a_fixture_through_the_agent);
    tcase_add_test(tc, test_reports_refusals_and_protocol_mismatch);
    tcase_add_test(tc, test_a_lost_agent_reads_as_a_dead_fixture);
    tcase_add_test(tc, test_the_agents_port_refusal_is_the_harness);
    tcase_add_test(tc, test_identity_and_evidence_are_the_agents_host);
    suite_add_tcase(s, tc);
    return s;
}

int main(void)
{
    int rc, fd = mkstemp(token_file);    /* made here: each test runs in a child of this */
    signal(SIGPIPE, SIG_IGN);
    if (fd < 0)
        return 1;
    close(fd);
    rc = kb_check_run(suite(), "sandbox_remote");
    unlink(token_file);
    return rc;
}
