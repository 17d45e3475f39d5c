/* test_loadrun.c -- runner/load/loadgen.c's kb_load_run, the whole loop, over loopback
 * against a fake server on a thread of this test: the schedule kept (every measured request
 * sent and answered once), a stalled server's requests queued up to the bound and the rest
 * refused and counted, the error kinds a closing or garbled server causes, the drain that
 * ends unanswered requests as timeouts at a lower bound, and the timerfd taken when a
 * seccomp filter refuses epoll_pwait2. Each load lasts under 1.5 s. */
#define _GNU_SOURCE
#include "runner/load/loadgen.h"
#include "tests/lib/kb_check.h"

#include <arpa/inet.h>
#include <errno.h>
#include <fcntl.h>
#include <linux/filter.h>
#include <linux/seccomp.h>
#include <poll.h>
#include <pthread.h>
#include <stddef.h>
#include <stdio.h>
#include <string.h>
#include <sys/epoll.h>
#include <sys/prctl.h>
#include <sys/socket.h>
#include <sys/syscall.h>
#include <unistd.h>

enum mode { ANSWER, STALL, CLOSE, GARBLE };

#define MAX_FDS 64
#define REQUEST "GET /plaintext HTTP/1.1\r\nHost: 127.0.0.1\r\n\r\n"
#define REPLY "HTTP/1.1 200 OK\r\nContent-Type: text/plain\r\nContent-Length: 2\r\n\r\nok"

struct server {
    enum mode mode;
    int ls, stop[2];
    pthread_t th;
};

/* Each whole request read is answered by the mode: ANSWER replies, STALL keeps silent,
 * CLOSE hangs up, GARBLE replies with what is not HTTP. */
static void serve_conn(struct server *s, struct pollfd *p, size_t *seen)
{
    char buf[4096];
    ssize_t n = read(p->fd, buf, sizeof(buf));
    if (n <= 0 || s->mode == CLOSE) {
        close(p->fd);
        p->fd = -1;
        return;
    }
    for (ssize_t i = 0; i < n; i++) {
        /* a request ends at its blank line: count "\r\n\r\n" across reads */
        static const char end[] = "\r\n\r\n";
        *seen = buf[i] == end[*seen] ? *seen + 1 : buf[i] == '\r';
        if (*seen < 4)
            continue;
        *seen = 0;
        if (s->mode == ANSWER)
            (void)!write(p->fd, REPLY, sizeof(REPLY) - 1);
        else if (s->mode == GARBLE)
            (void)!write(p->fd, "NOT HTTP\r\n\r\n", 12);
    }
}

static void *serve(void *arg)
{
    struct server *s = arg;
    struct pollfd p[MAX_FDS + 2];
    size_t seen[MAX_FDS + 2] = { 0 };
    size_t n = 2;
    p[0] = (struct pollfd){ .fd = s->stop[0], .events = POLLIN };
    p[1] = (struct pollfd){ .fd = s->ls, .events = POLLIN };
    while (poll(p, n, -1) >= 0 && !p[0].revents) {
        if (p[1].revents && n < MAX_FDS + 2) {
            int c = accept(s->ls, NULL, NULL);
            if (c >= 0) {
                seen[n] = 0;
                p[n++] = (struct pollfd){ .fd = c, .events = POLLIN };
            }
        }
        for (size_t i = 2; i < n; i++)
            if (p[i].fd >= 0 && p[i].revents)
                serve_conn(s, &p[i], &seen[i]);
    }
    for (size_t i = 2; i < n; i++)
        if (p[i].fd >= 0)
            close(p[i].fd);
    return NULL;
}

static struct sockaddr_in server_start(struct server *s, enum mode mode)
{
    struct sockaddr_in a = { .sin_family = AF_INET, .sin_addr.s_addr = htonl(INADDR_LOOPBACK) };
    socklen_t len = sizeof(a);
    s->mode = mode;
    s->ls = socket(AF_INET, SOCK_STREAM | SOCK_CLOEXEC, 0);
    ck_assert_int_ge(s->ls, 0);
    ck_assert_int_eq(bind(s->ls, (struct sockaddr *)&a, sizeof(a)), 0);
    ck_assert_int_eq(listen(s->ls, 64), 0);
    ck_assert_int_eq(getsockname(s->ls, (struct sockaddr *)&a, &len), 0);
    ck_assert_int_eq(pipe2(s->stop, O_CLOEXEC), 0);
    ck_assert_int_eq(pthread_create(&s->th, NULL, serve, s), 0);
    return a;
}

static void server_stop(struct server *s)
{
    (void)!write(s->stop[1], "x", 1);
    pthread_join(s->th, NULL);
    close(s->ls);
    close(s->stop[0]);
    close(s->stop[1]);
}

static const struct kb_resp_expect expect = {
    .status = 200, .content_type = "text/plain", .body = "ok", .body_len = 2,
};

static struct kb_load_config config(struct sockaddr_in a)
{
    return (struct kb_load_config){
        .addr = a, .request = REQUEST, .request_len = sizeof(REQUEST) - 1, .expect = &expect,
        .rate = 400, .warmup_s = 0.1, .duration_s = 0.5, .drain_s = 0.5, .threads = 1,
        .connections = 4, .timeout_ms = 10000, .rx_timestamps = 1,
    };
}

/* Every measured request ends exactly once (loadgen.h's accounting). */
static void assert_accounted(const struct kb_load_result *r)
{
    ck_assert_uint_eq(r->c.scheduled, r->c.completed + kb_load_errors_total(&r->c));
}

static void run(struct kb_load_config *cfg, struct kb_load_result *r)
{
    char err[512] = "";
    ck_assert_msg(kb_load_run(cfg, r, err, sizeof(err)) == 0, "kb_load_run: %s", err);
}

START_TEST(the_schedule_is_kept_and_every_request_answered)
{
    struct server s;
    struct kb_load_config cfg = config(server_start(&s, ANSWER));
    struct kb_load_result r;
    run(&cfg, &r);
    server_stop(&s);
    /* rate x duration measured requests, each sent and answered once */
    ck_assert_uint_eq(r.c.scheduled, 200);
    ck_assert_uint_eq(r.c.sent, 200);
    ck_assert_uint_eq(r.c.completed, 200);
    ck_assert_uint_eq(kb_load_errors_total(&r.c), 0);
    ck_assert_uint_eq(r.c.status[200], 200);
    ck_assert_uint_eq(r.c.queue_refused + r.c.client_dropped + r.c.bounded, 0);
    ck_assert_int_eq(r.bound_from_us, INT64_MAX);
    ck_assert(r.interval_s > 0.45 && r.interval_s < 0.7);
    assert_accounted(&r);
    kb_load_result_free(&r);
}
END_TEST

/* A server that reads and never answers: each connection holds one request, queue_max more
 * wait, the rest are refused as they fall due; the drain runs out and ends the waiting and
 * the in-flight as timeouts, recorded at a lower bound of at least the drain. */
START_TEST(a_stalled_server_fills_the_bounded_queue_and_the_drain_ends_it)
{
    struct server s;
    struct kb_load_config cfg = config(server_start(&s, STALL));
    struct kb_load_result r;
    cfg.connections = 2;
    cfg.queue_max = 50;
    run(&cfg, &r);
    server_stop(&s);
    ck_assert_uint_eq(r.c.scheduled, 200);
    ck_assert_uint_eq(r.c.completed, 0);
    ck_assert_uint_eq(r.c.errors[KB_ERR_TIMEOUT], 200);
    /* 240 fall due (40 in the warmup); the first 2 + 50 are held to the end, the rest
     * refused: so 12 measured ones wait out the drain */
    ck_assert_uint_eq(r.c.queue_refused, 240 - 52);
    ck_assert_uint_eq(r.c.unfinished, 12);
    ck_assert_uint_eq(r.c.client_dropped, 0);
    ck_assert_uint_eq(r.c.bounded, 200);
    ck_assert(r.drain_used_s >= 0.45);             /* the drain waited its whole length */
    ck_assert_int_ge(kb_hist_max(&r.corrected), 450000);   /* at least the drain, in us */
    assert_accounted(&r);
    kb_load_result_free(&r);
}
END_TEST

/* At 100 req/s against a server in mode: nothing completes, and at least one request ends
 * as kind. The caller frees r. */
static void run_failing(enum mode mode, enum kb_err_kind kind, struct kb_load_result *r)
{
    struct server s;
    struct kb_load_config cfg = config(server_start(&s, mode));
    cfg.rate = 100;
    run(&cfg, r);
    server_stop(&s);
    ck_assert_uint_eq(r->c.completed, 0);
    ck_assert_uint_ge(r->c.errors[kind], 1);
    assert_accounted(r);
}

START_TEST(a_closing_server_is_peer_close)
{
    struct kb_load_result r;
    run_failing(CLOSE, KB_ERR_PEER_CLOSE, &r);
    ck_assert_uint_ge(r.c.reconnects, 1);
    kb_load_result_free(&r);
}
END_TEST

START_TEST(a_garbled_reply_is_malformed)
{
    struct kb_load_result r;
    run_failing(GARBLE, KB_ERR_MALFORMED, &r);
    ck_assert_str_ne(r.first_error, "");
    kb_load_result_free(&r);
}
END_TEST

#ifndef __NR_epoll_pwait2
#define __NR_epoll_pwait2 441      /* the same number on every architecture (Linux 5.11) */
#endif

/* As a container's seccomp profile may: epoll_pwait2 answers EPERM, everything else runs.
 * Installed in this test's own process (Check forks one per test). */
static int refuse_epoll_pwait2(void)
{
    struct sock_filter f[] = {
        BPF_STMT(BPF_LD | BPF_W | BPF_ABS, offsetof(struct seccomp_data, nr)),
        BPF_JUMP(BPF_JMP | BPF_JEQ | BPF_K, __NR_epoll_pwait2, 0, 1),
        BPF_STMT(BPF_RET | BPF_K, SECCOMP_RET_ERRNO | (EPERM & SECCOMP_RET_DATA)),
        BPF_STMT(BPF_RET | BPF_K, SECCOMP_RET_ALLOW),
    };
    struct sock_fprog prog = { .len = sizeof(f) / sizeof(f[0]), .filter = f };
    if (prctl(PR_SET_NO_NEW_PRIVS, 1, 0, 0, 0) != 0 ||
        prctl(PR_SET_SECCOMP, SECCOMP_MODE_FILTER, &prog) != 0) {
        fprintf(stderr, "test_loadrun: no seccomp filter here (%s): fallback not tested\n",
                strerror(errno));
        return -1;
    }
    return 0;
}

START_TEST(epoll_pwait2_refused_by_seccomp_falls_back_to_the_timerfd)
{
    struct server s;
    struct kb_load_config cfg;
    struct kb_load_result r;
    char err[512] = "";
    const char *fork_mode = getenv("CK_FORK");
    if ((fork_mode && !strcmp(fork_mode, "no")) ||   /* the filter would outlive this test */
        refuse_epoll_pwait2() < 0)
        return;
    cfg = config(server_start(&s, ANSWER));
    cfg.rate = 100;
    run(&cfg, &r);                 /* AUTO: the timerfd, not a refusal */
    ck_assert_int_eq(r.timer, KB_TIMER_TIMERFD);
    ck_assert_uint_eq(r.c.completed, r.c.scheduled);
    kb_load_result_free(&r);
    cfg.timer = KB_TIMER_PWAIT2;   /* asked for by name: refused, saying why */
    ck_assert_int_eq(kb_load_run(&cfg, &r, err, sizeof(err)), -1);
    ck_assert_msg(strstr(err, "seccomp"), "%s", err);
    server_stop(&s);
}
END_TEST

static Suite *suite(void)
{
    Suite *s = suite_create("loadrun");
    TCase *tc = tcase_create("loopback");
    tcase_set_timeout(tc, 30);
    tcase_add_test(tc, the_schedule_is_kept_and_every_request_answered);
    tcase_add_test(tc, a_stalled_server_fills_the_bounded_queue_and_the_drain_ends_it);
    tcase_add_test(tc, a_closing_server_is_peer_close);
    tcase_add_test(tc, a_garbled_reply_is_malformed);
    tcase_add_test(tc, epoll_pwait2_refused_by_seccomp_falls_back_to_the_timerfd);
    suite_add_tcase(s, tc);
    return s;
}

int main(void)
{
    return kb_check_run(suite(), "runner-loadrun");
}
