/* trial.c -- a few requests before any load (trial.h). */
#define _POSIX_C_SOURCE 200809L
#include "runner/load/trial.h"

#include <errno.h>
#include <fcntl.h>
#include <poll.h>
#include <stdio.h>
#include <string.h>
#include <sys/socket.h>
#include <time.h>
#include <unistd.h>

static long now_ms(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return ts.tv_sec * 1000L + ts.tv_nsec / 1000000L;
}

/* A connection to t within the deadline: the descriptor (blocking), or -1 with err. */
static int open_conn(const struct kb_target *t, long deadline, char *err, size_t errlen)
{
    int fd = socket(AF_INET, SOCK_STREAM | SOCK_NONBLOCK | SOCK_CLOEXEC, 0), soerr = 0;
    socklen_t sl = sizeof(soerr);
    struct pollfd pf;
    if (fd < 0) {
        snprintf(err, errlen, "socket: %s", strerror(errno));
        return -1;
    }
    if (connect(fd, (const struct sockaddr *)&t->addr, sizeof(t->addr)) < 0) {
        long left = deadline - now_ms();
        if (errno != EINPROGRESS) {
            soerr = errno;
        } else {
            pf = (struct pollfd){ fd, POLLOUT, 0 };
            if (left <= 0 || poll(&pf, 1, (int)left) <= 0)
                soerr = ETIMEDOUT;
            else
                getsockopt(fd, SOL_SOCKET, SO_ERROR, &soerr, &sl);
        }
    }
    if (soerr) {
        snprintf(err, errlen, "cannot connect to %s: %s", t->host, strerror(soerr));
        close(fd);
        return -1;
    }
    fcntl(fd, F_SETFL, fcntl(fd, F_GETFL) & ~O_NONBLOCK);
    return fd;
}

/* Wait for fd to be readable until the deadline: 1, or 0 when it passed. */
static int wait_in(int fd, long deadline)
{
    for (;;) {
        struct pollfd pf = { fd, POLLIN, 0 };
        long left = deadline - now_ms();
        int r = left > 0 ? poll(&pf, 1, (int)left) : 0;
        if (r < 0 && errno == EINTR)
            continue;
        return r > 0;
    }
}

/* One reply read into p (keep k) from fd: 0 complete (*closed when the server closed it
 * after), or -1 with err. */
static int read_reply(int fd, struct kb_resp *p, long deadline, int *closed, char *err,
                      size_t errlen)
{
    char buf[8192];
    size_t used;
    for (;;) {
        ssize_t n;
        enum kb_resp_rc rc;
        if (!wait_in(fd, deadline)) {
            snprintf(err, errlen, "no complete reply within %d ms%s", KB_TRIAL_DEADLINE_MS,
                     kb_resp_started(p) ? " (part of one came)" : "");
            return -1;
        }
        if ((n = recv(fd, buf, sizeof(buf), 0)) < 0) {
            if (errno == EINTR)
                continue;
            snprintf(err, errlen, "reading the reply: %s", strerror(errno));
            return -1;
        }
        rc = n ? kb_resp_feed(p, buf, (size_t)n, &used) : kb_resp_eof(p);
        if (rc == KB_RESP_MALFORMED) {
            snprintf(err, errlen, "a malformed reply: %s", p->error);
            return -1;
        }
        if (rc == KB_RESP_DONE) {
            *closed = n == 0 || p->conn_close;
            return 0;
        }
        if (n == 0) {
            snprintf(err, errlen, "the server closed the connection before any reply");
            return -1;
        }
    }
}

/* What is wrong with a complete reply, in err; 0 when nothing is. */
static int judge(const struct kb_target *t, const struct kb_resp *p, const struct kb_trial *tr,
                 char *err, size_t errlen)
{
    const struct kb_resp_expect *e = &t->expect;
    if (!kb_resp_status_ok(p)) {
        char want[32];
        if (e->status_hi)
            snprintf(want, sizeof(want), "%d..%d", e->status, e->status_hi);
        else
            snprintf(want, sizeof(want), "%d", e->status);
        snprintf(err, errlen, "the server answered status %d, and a right response is %s "
                 "(%s; --expect-status sets another)", p->status, want, t->expectation);
    } else if (!kb_resp_ct_ok(p)) {
        snprintf(err, errlen, "the server answered Content-Type '%s', and a right response "
                 "has '%s'", tr->content_type, e->content_type);
    } else if (!kb_resp_body_ok(p)) {
        snprintf(err, errlen, "the server's body (%lld bytes, '%.60s') is not the expected "
                 "one (%s)", tr->body_bytes, tr->body, t->expectation);
    } else if (!kb_resp_header_ok(p)) {
        snprintf(err, errlen, "the server's reply lacks the header '%s: %s'", e->header_name,
                 e->header_value);
    } else {
        return 0;
    }
    return -1;
}

static void keep_of(struct kb_trial *out, const struct kb_resp *p, const struct kb_resp_keep *k)
{
    out->status = p->status;
    out->body_bytes = p->body_seen;
    snprintf(out->server, sizeof(out->server), "%s", k->server);
    snprintf(out->content_type, sizeof(out->content_type), "%s", k->content_type);
    /* a body shown in a reason stays on one line */
    for (char *c = out->body; *c; c++)
        if ((unsigned char)*c < 0x20)
            *c = ' ';
}

/* Request i on *fd (opened when -1): 0 right, or a trial outcome with err. */
static enum kb_trial_rc one(const struct kb_target *t, int *fd, long deadline,
                            struct kb_trial *out, char *err, size_t errlen)
{
    struct kb_resp p;
    struct kb_resp_keep k = { .body = out->body, .body_cap = sizeof(out->body) };
    long t0 = now_ms();
    int closed = 0;
    if (*fd < 0 && (*fd = open_conn(t, deadline, err, errlen)) < 0)
        return out->answered ? KB_TRIAL_WRONG : KB_TRIAL_REFUSED;
    kb_resp_init(&p, &t->expect);
    kb_resp_keep(&p, &k);
    if (send(*fd, t->request, t->request_len, MSG_NOSIGNAL) != (ssize_t)t->request_len) {
        snprintf(err, errlen, "the request could not be sent: %s", strerror(errno));
        return KB_TRIAL_WRONG;
    }
    if (read_reply(*fd, &p, deadline, &closed, err, errlen))
        return KB_TRIAL_WRONG;
    out->answered++;
    keep_of(out, &p, &k);
    if ((double)(now_ms() - t0) > out->max_ms)
        out->max_ms = (double)(now_ms() - t0);
    if (closed) {
        out->closed++;
        close(*fd);
        *fd = -1;
    }
    return judge(t, &p, out, err, errlen) ? KB_TRIAL_WRONG : KB_TRIAL_OK;
}

enum kb_trial_rc kb_trial_run(const struct kb_target *t, struct kb_trial *out, char *err,
                              size_t errlen)
{
    long deadline = now_ms() + KB_TRIAL_DEADLINE_MS;
    enum kb_trial_rc rc = KB_TRIAL_OK;
    int fd = -1;
    memset(out, 0, sizeof(*out));
    for (int i = 0; i < KB_TRIAL_REQUESTS && rc == KB_TRIAL_OK; i++) {
        int had = fd >= 0, answered = out->answered;
        rc = one(t, &fd, deadline, out, err, errlen);
        /* a reply on the connection the previous one left open: it was kept */
        out->kept += had && out->answered > answered;
    }
    if (fd >= 0)
        close(fd);
    return rc;
}

void kb_trial_describe(const struct kb_trial *tr, char *buf, size_t len)
{
    char server[160];
    if (tr->server[0])
        snprintf(server, sizeof(server), "Server: %s", tr->server);
    else
        snprintf(server, sizeof(server), "no Server header");
    snprintf(buf, len, "status %d, %lld body bytes, %s, %s", tr->status, tr->body_bytes,
             server, tr->kept ? "connection kept alive"
             : tr->closed ? "connection closed after each response" : "one response read");
}
