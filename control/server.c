/* server.c -- raw epoll HTTP/1.1 for fixed GET routes.
 *
 * Level-triggered epoll; each readable connection is read once per wake-up (up to 16 KB),
 * every complete request in its buffer is answered into its output buffer, and the output
 * is written at once; EPOLLOUT is armed only while output is pending, and reading pauses
 * while it is. Requests are parsed just enough to route them (request.h): the request line,
 * the field lines and the empty line that ends them (CR LF or bare LF); a request with a
 * body (Content-Length other than 0, or Transfer-Encoding) or a malformed field line is
 * refused with 400 and the connection closed, which keeps the framing honest without a
 * body parser. */
#define _GNU_SOURCE
#include "control/server.h"
#include "control/request.h"

#include <arpa/inet.h>
#include <errno.h>
#include <netinet/in.h>
#include <netinet/tcp.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>
#include <sys/epoll.h>
#include <sys/socket.h>
#include <time.h>
#include <unistd.h>

#define IN_CAP 16384
#define OUT_MAX (1 << 20)

struct kbc_conn {
    int fd;
    int want_out;
    int closing;           /* close once the output is written */
    size_t in_len;
    char in[IN_CAP];
    char *out;
    size_t out_len, out_off, out_cap;
};

int kbc_server_open(struct kbc_server *s, const char *bind_addr, int port, struct kbc_routes *routes,
                    char *err, size_t errlen)
{
    struct sockaddr_in a = { .sin_family = AF_INET, .sin_port = htons((uint16_t)port) };
    socklen_t alen = sizeof(a);
    int one = 1;
    struct epoll_event ev = { .events = EPOLLIN, .data.fd = -1 };
    memset(s, 0, sizeof(*s));
    s->routes = routes;
    s->epfd = -1;
    if (inet_pton(AF_INET, bind_addr, &a.sin_addr) != 1) {
        snprintf(err, errlen, "--bind must be an IPv4 address, not '%s'", bind_addr);
        return -1;
    }
    s->listen_fd = socket(AF_INET, SOCK_STREAM | SOCK_NONBLOCK | SOCK_CLOEXEC, 0);
    if (s->listen_fd < 0)
        goto fail;
    setsockopt(s->listen_fd, SOL_SOCKET, SO_REUSEADDR, &one, sizeof(one));
    if (bind(s->listen_fd, (struct sockaddr *)&a, sizeof(a)) || listen(s->listen_fd, 4096) ||
        getsockname(s->listen_fd, (struct sockaddr *)&a, &alen))
        goto fail;
    s->port = ntohs(a.sin_port);
    s->epfd = epoll_create1(EPOLL_CLOEXEC);
    if (s->epfd < 0 || epoll_ctl(s->epfd, EPOLL_CTL_ADD, s->listen_fd, &ev))
        goto fail;
    return 0;
fail:
    snprintf(err, errlen, "cannot listen on %s:%d: %s", bind_addr, port, strerror(errno));
    kbc_server_close(s);
    return -1;
}

static void conn_free(struct kbc_server *s, int fd)
{
    struct kbc_conn *c = s->conns[fd];
    close(fd);
    free(c->out);
    free(c);
    s->conns[fd] = NULL;
}

static int track(struct kbc_server *s, int fd)
{
    struct kbc_conn *c;
    struct epoll_event ev = { .events = EPOLLIN, .data.fd = fd };
    if (fd >= s->nconns_cap) {
        int cap = fd * 2 + 64;
        struct kbc_conn **n = realloc(s->conns, (size_t)cap * sizeof(*n));
        if (!n)
            return -1;
        memset(n + s->nconns_cap, 0, (size_t)(cap - s->nconns_cap) * sizeof(*n));
        s->conns = n;
        s->nconns_cap = cap;
    }
    if (!(c = calloc(1, sizeof(*c))))
        return -1;
    c->fd = fd;
    s->conns[fd] = c;
    if (epoll_ctl(s->epfd, EPOLL_CTL_ADD, fd, &ev)) {
        conn_free(s, fd);
        return -1;
    }
    return 0;
}

static void accept_all(struct kbc_server *s)
{
    for (;;) {
        int one = 1, fd = accept4(s->listen_fd, NULL, NULL, SOCK_NONBLOCK | SOCK_CLOEXEC);
        if (fd < 0)
            return;
        setsockopt(fd, IPPROTO_TCP, TCP_NODELAY, &one, sizeof(one));
        if (track(s, fd))
            close(fd);
    }
}

static int out_append(struct kbc_conn *c, const char *b, size_t n)
{
    if (c->out_len + n > c->out_cap) {
        size_t cap = c->out_cap ? c->out_cap : 4096;
        char *o;
        while (cap < c->out_len + n)
            cap *= 2;
        if (cap > OUT_MAX || !(o = realloc(c->out, cap)))
            return -1;
        c->out = o;
        c->out_cap = cap;
    }
    memcpy(c->out + c->out_len, b, n);
    c->out_len += n;
    return 0;
}

/* Answer every complete request in c->in. -1 when the connection must close now. */
static int serve_buffer(struct kbc_server *s, struct kbc_conn *c)
{
    size_t off = 0;
    struct kbc_request rq;
    while (!c->closing && kbc_request_parse(c->in + off, c->in_len - off, &rq)) {
        const struct kbc_response *r = rq.bad ? &s->routes->bad_request
                                              : kbc_routes_find(s->routes, rq.path, rq.path_len);
        if (out_append(c, r->bytes, r->len))
            return -1;
        c->closing = rq.close_after;
        off += rq.head_len;
    }
    memmove(c->in, c->in + off, c->in_len - off);
    c->in_len -= off;
    if (c->in_len == IN_CAP && !c->closing) {
        /* Headers larger than the buffer: refuse and close. */
        if (out_append(c, s->routes->bad_request.bytes, s->routes->bad_request.len))
            return -1;
        c->closing = 1;
        c->in_len = 0;
    }
    return 0;
}

static void arm(struct kbc_server *s, struct kbc_conn *c, int want_out)
{
    struct epoll_event ev = { .events = want_out ? EPOLLOUT : EPOLLIN, .data.fd = c->fd };
    if (c->want_out != want_out) {
        epoll_ctl(s->epfd, EPOLL_CTL_MOD, c->fd, &ev);
        c->want_out = want_out;
    }
}

/* Write pending output. -1 when the connection is finished (error or closing done). */
static int flush_out(struct kbc_server *s, struct kbc_conn *c)
{
    while (c->out_off < c->out_len) {
        ssize_t w = send(c->fd, c->out + c->out_off, c->out_len - c->out_off, MSG_NOSIGNAL);
        if (w < 0) {
            if (errno == EAGAIN || errno == EWOULDBLOCK) {
                arm(s, c, 1);
                return 0;
            }
            if (errno == EINTR)
                continue;
            return -1;
        }
        c->out_off += (size_t)w;
    }
    c->out_off = c->out_len = 0;
    if (c->closing)
        return -1;
    arm(s, c, 0);
    return 0;
}

static void on_event(struct kbc_server *s, int fd, uint32_t events)
{
    struct kbc_conn *c = fd >= 0 && fd < s->nconns_cap ? s->conns[fd] : NULL;
    if (!c)
        return;
    if (events & EPOLLOUT) {
        if (flush_out(s, c))
            conn_free(s, fd);
        return;
    }
    ssize_t r = recv(fd, c->in + c->in_len, IN_CAP - c->in_len, 0);
    if (r == 0 || (r < 0 && errno != EAGAIN && errno != EINTR)) {
        conn_free(s, fd);
        return;
    }
    if (r < 0)
        return;
    c->in_len += (size_t)r;
    if (serve_buffer(s, c) || flush_out(s, c))
        conn_free(s, fd);
}

int kbc_server_run(struct kbc_server *s, volatile sig_atomic_t *stop, char *err, size_t errlen)
{
    struct epoll_event evs[256];
    while (!*stop) {
        int n = epoll_wait(s->epfd, evs, 256, 200);
        if (n < 0) {
            if (errno == EINTR)
                continue;
            snprintf(err, errlen, "epoll_wait: %s", strerror(errno));
            return -1;
        }
        kbc_routes_tick(s->routes, time(NULL));
        for (int i = 0; i < n; i++) {
            if (evs[i].data.fd == -1)
                accept_all(s);
            else
                on_event(s, evs[i].data.fd, evs[i].events);
        }
    }
    return 0;
}

void kbc_server_close(struct kbc_server *s)
{
    for (int fd = 0; fd < s->nconns_cap; fd++)
        if (s->conns[fd])
            conn_free(s, fd);
    free(s->conns);
    s->conns = NULL;
    s->nconns_cap = 0;
    if (s->listen_fd >= 0)
        close(s->listen_fd);
    if (s->epfd >= 0)
        close(s->epfd);
    s->listen_fd = s->epfd = -1;
}
