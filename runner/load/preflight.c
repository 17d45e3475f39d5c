/* preflight.c -- blocking HTTP GET and contract match for pre/postflight, reading through
 * runner/load/http_resp.c (see preflight.h). */
#define _POSIX_C_SOURCE 200809L
#include "runner/load/preflight.h"

#include <arpa/inet.h>
#include <errno.h>
#include <netinet/in.h>
#include <poll.h>
#include <regex.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>
#include <sys/socket.h>
#include <time.h>
#include <unistd.h>

static long now_ms(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return ts.tv_sec * 1000L + ts.tv_nsec / 1000000L;
}

/* host: an IPv4 address; NULL = 127.0.0.1. -1 with errno (EINVAL for a malformed host). */
static int connect_to(const char *host, int port)
{
    struct sockaddr_in a = { .sin_family = AF_INET, .sin_port = htons((uint16_t)port) };
    int fd;
    a.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
    if (host && inet_pton(AF_INET, host, &a.sin_addr) != 1) {
        errno = EINVAL;
        return -1;
    }
    if ((fd = socket(AF_INET, SOCK_STREAM | SOCK_CLOEXEC, 0)) < 0)
        return -1;
    if (connect(fd, (struct sockaddr *)&a, sizeof(a)) < 0) {
        close(fd);
        return -1;
    }
    return fd;
}

int kb_http_read_init(struct kb_http_read *rd, const struct kb_route *r,
                      struct kb_http_reply *out, char *err, size_t errlen)
{
    memset(out, 0, sizeof(*out));
    memset(&rd->expect, 0, sizeof(rd->expect));
    memset(&rd->keep, 0, sizeof(rd->keep));
    rd->out = out;
    if (r && kb_resp_expect_route(r, &rd->expect, &rd->re) < 0) {
        snprintf(err, errlen, "%s: the contract's body_regex does not compile", r->path);
        return -1;
    }
    out->judged = r != NULL;
    kb_resp_init(&rd->parser, &rd->expect);
    rd->keep.body = out->body;
    rd->keep.body_cap = sizeof(out->body);
    kb_resp_keep(&rd->parser, &rd->keep);
    return 0;
}

void kb_http_read_free(struct kb_http_read *rd)
{
    if (rd->expect.body_regex)
        regfree(&rd->re);
    rd->expect.body_regex = NULL;
}

/* A complete response: what the reply keeps of it, and the parser's verdict. */
static enum kb_resp_rc fill(struct kb_http_read *rd)
{
    struct kb_http_reply *out = rd->out;
    const struct kb_resp *p = &rd->parser;
    out->status = p->status;
    snprintf(out->content_type, sizeof(out->content_type), "%s", rd->keep.content_type);
    out->has_length = rd->keep.has_content_length;
    out->has_date = rd->keep.has_date;
    out->has_server = rd->keep.has_server;
    out->body_len = rd->keep.body_len;
    out->body_truncated = rd->keep.body_truncated;
    if (out->judged) {
        out->status_ok = kb_resp_status_ok(p);
        out->ct_ok = kb_resp_ct_ok(p);
        out->body_ok = kb_resp_body_ok(p);
    }
    return KB_RESP_DONE;
}

enum kb_resp_rc kb_http_read_feed(struct kb_http_read *rd, const char *buf, size_t len)
{
    size_t used;
    enum kb_resp_rc rc = kb_resp_feed(&rd->parser, buf, len, &used);
    return rc == KB_RESP_DONE ? fill(rd) : rc;
}

enum kb_resp_rc kb_http_read_eof(struct kb_http_read *rd)
{
    enum kb_resp_rc rc = kb_resp_eof(&rd->parser);
    return rc == KB_RESP_DONE ? fill(rd) : rc;
}

/* Reads fd into rd until the response is complete (0), or -1 with err: the deadline passed,
 * the reply was malformed, or the peer closed before a whole one. */
static int read_reply(int fd, struct kb_http_read *rd, int timeout_ms, const char *path,
                      char *err, size_t errlen)
{
    long deadline = now_ms() + timeout_ms;
    char buf[4096];
    for (;;) {
        struct pollfd pf = { fd, POLLIN, 0 };
        long left = deadline - now_ms();
        enum kb_resp_rc rc;
        ssize_t n;
        int ready = left > 0 ? poll(&pf, 1, (int)left) : 0;
        if (ready < 0 && errno == EINTR)
            continue;
        if (ready <= 0) {
            snprintf(err, errlen, "GET %s: no complete reply within %d ms%s", path, timeout_ms,
                     kb_resp_started(&rd->parser) ? " (part of one came)" : "");
            return -1;
        }
        if ((n = read(fd, buf, sizeof(buf))) < 0) {
            if (errno == EINTR)
                continue;
            snprintf(err, errlen, "GET %s: read: %s", path, strerror(errno));
            return -1;
        }
        rc = n == 0 ? kb_http_read_eof(rd) : kb_http_read_feed(rd, buf, (size_t)n);
        if (rc == KB_RESP_DONE)
            return 0;
        if (rc == KB_RESP_MALFORMED) {
            snprintf(err, errlen, "GET %s: malformed reply: %s", path, rd->parser.error);
            return -1;
        }
        if (n == 0) {
            snprintf(err, errlen, "GET %s: connection closed before any reply", path);
            return -1;
        }
    }
}

/* Send GET path on fd and read the reply against route r (NULL: judged against nothing).
 * MSG_NOSIGNAL: a peer that closed a kept connection is an error here, not a SIGPIPE. */
static int exchange(int fd, const char *host, int port, const char *path,
                    const struct kb_route *r, int timeout_ms, struct kb_http_reply *out,
                    char *err, size_t errlen)
{
    struct kb_http_read rd;
    char req[512];
    int n, rc;
    if (kb_http_read_init(&rd, r, out, err, errlen) < 0)
        return -1;
    n = snprintf(req, sizeof(req), "GET %s HTTP/1.1\r\nHost: %s:%d\r\n\r\n", path,
                 host ? host : "127.0.0.1", port);
    if (n < 0 || (size_t)n >= sizeof(req) || send(fd, req, (size_t)n, MSG_NOSIGNAL) != n) {
        snprintf(err, errlen, "GET %s: the request could not be sent", path);
        rc = -1;
    } else {
        rc = read_reply(fd, &rd, timeout_ms, path, err, errlen);
    }
    kb_http_read_free(&rd);
    return rc;
}

/* GET path on a connection of its own and read the reply against route r. */
static int get(const char *host, int port, const char *path, const struct kb_route *r,
               int timeout_ms, struct kb_http_reply *out, char *err, size_t errlen)
{
    int fd, rc;
    if ((fd = connect_to(host, port)) < 0) {
        snprintf(err, errlen, "connect %s:%d: %s", host ? host : "127.0.0.1", port,
                 strerror(errno));
        return -1;
    }
    rc = exchange(fd, host, port, path, r, timeout_ms, out, err, errlen);
    close(fd);
    return rc;
}

void kb_http_conn_init(struct kb_http_conn *c, const char *host, int port)
{
    snprintf(c->host, sizeof(c->host), "%s", host ? host : "127.0.0.1");
    c->port = port;
    c->fd = -1;
    c->opened = 0;
}

int kb_http_conn_get(struct kb_http_conn *c, const char *path, int timeout_ms,
                     struct kb_http_reply *out, char *err, size_t errlen)
{
    /* a kept connection the server closed meanwhile gets one fresh try */
    for (int attempt = 0; attempt < 2; attempt++) {
        int reused = c->fd >= 0;
        if (!reused) {
            if ((c->fd = connect_to(c->host, c->port)) < 0) {
                snprintf(err, errlen, "connect %s:%d: %s", c->host, c->port, strerror(errno));
                return -1;
            }
            c->opened++;
        }
        if (exchange(c->fd, c->host, c->port, path, NULL, timeout_ms, out, err, errlen) == 0)
            return 0;
        kb_http_conn_close(c);
        if (!reused)
            return -1;
    }
    return -1;
}

void kb_http_conn_close(struct kb_http_conn *c)
{
    if (c->fd >= 0)
        close(c->fd);
    c->fd = -1;
}

int kb_http_get(int port, const char *path, int timeout_ms, struct kb_http_reply *out,
                char *err, size_t errlen)
{
    return get(NULL, port, path, NULL, timeout_ms, out, err, errlen);
}

int kb_http_get_at(const char *host, int port, const char *path, int timeout_ms,
                   struct kb_http_reply *out, char *err, size_t errlen)
{
    return get(host, port, path, NULL, timeout_ms, out, err, errlen);
}

int kb_preflight_match(const struct kb_route *r, const struct kb_http_reply *rep, char *reason,
                       size_t reasonlen)
{
    if (!rep->judged)
        snprintf(reason, reasonlen, "%s: the reply was not read against the route", r->path);
    else if (!rep->status_ok)
        snprintf(reason, reasonlen, "%s: status %d, want %d", r->path, rep->status, r->status);
    else if (!rep->ct_ok)
        snprintf(reason, reasonlen, "%s: Content-Type '%s', want '%s'", r->path,
                 rep->content_type, r->content_type);
    else if (!rep->body_ok)
        snprintf(reason, reasonlen, "%s: body '%.80s' (%zu bytes%s) differs from the contract",
                 r->path, rep->body, rep->body_len, rep->body_truncated ? " kept, more sent" : "");
    else if (!rep->has_length || !rep->has_date || !rep->has_server)
        snprintf(reason, reasonlen, "%s: missing header(s):%s%s%s", r->path,
                 rep->has_length ? "" : " Content-Length", rep->has_date ? "" : " Date",
                 rep->has_server ? "" : " Server");
    else
        return 0;
    return -1;
}

int kb_preflight_route(int port, const struct kb_route *r, char *reason, size_t reasonlen)
{
    return kb_preflight_route_at(NULL, port, r, reason, reasonlen);
}

int kb_preflight_route_at(const char *host, int port, const struct kb_route *r, char *reason,
                          size_t reasonlen)
{
    struct kb_http_reply rep;
    if (get(host, port, r->path, r, 2000, &rep, reason, reasonlen) < 0)
        return -1;
    return kb_preflight_match(r, &rep, reason, reasonlen);
}
