/* client.h -- a raw-socket HTTP/1.1 client for the gray-static tests: no library between the
 * test and the server's bytes, so headers, pipelining and hostile input are seen as sent.
 * Static functions only: each test program includes it once. */
#ifndef GS_TEST_CLIENT_H
#define GS_TEST_CLIENT_H

#include <arpa/inet.h>
#include <errno.h>
#include <netinet/in.h>
#include <netinet/tcp.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>
#include <sys/socket.h>
#include <sys/time.h>
#include <unistd.h>

struct tclient {
    int fd;
    size_t len;
    char buf[128 * 1024];
};

struct tresp {
    int status;
    char head[8192];       /* status line and headers, NUL-terminated, "\r\n\r\n" excluded */
    char body[8192];
    size_t body_len;
};

static int tc_connect(struct tclient *c, int port)
{
    struct sockaddr_in sa = { .sin_family = AF_INET, .sin_port = htons((uint16_t)port) };
    struct timeval tv = { .tv_sec = 3 };
    int one = 1;

    sa.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
    c->len = 0;
    if ((c->fd = socket(AF_INET, SOCK_STREAM, 0)) < 0)
        return -1;
    setsockopt(c->fd, SOL_SOCKET, SO_RCVTIMEO, &tv, sizeof(tv));
    setsockopt(c->fd, IPPROTO_TCP, TCP_NODELAY, &one, sizeof(one));
    if (connect(c->fd, (struct sockaddr *)&sa, sizeof(sa)) < 0) {
        close(c->fd);
        c->fd = -1;
        return -1;
    }
    return 0;
}

static struct tclient *tc_new(int port)
{
    struct tclient *c = malloc(sizeof(*c));
    if (c && tc_connect(c, port) < 0) {
        free(c);
        return NULL;
    }
    return c;
}

static void tc_free(struct tclient *c)
{
    if (!c)
        return;
    if (c->fd >= 0)
        close(c->fd);
    free(c);
}

static int tc_send(struct tclient *c, const void *p, size_t n)
{
    const char *s = p;
    while (n) {
        ssize_t w = send(c->fd, s, n, MSG_NOSIGNAL);
        if (w < 0 && errno == EINTR)
            continue;
        if (w <= 0)
            return -1;
        s += w;
        n -= (size_t)w;
    }
    return 0;
}

static int tc_sends(struct tclient *c, const char *s)
{
    return tc_send(c, s, strlen(s));
}

/* The line of the k-th header called name in head (case-insensitive, k from 0), its
 * length in *ll; NULL if there are not that many. */
static const char *tr_header_line(const struct tresp *r, const char *name, int k, size_t *ll)
{
    size_t nl = strlen(name);
    const char *p = strstr(r->head, "\r\n");

    while (p) {
        const char *line = p + 2, *eol = strstr(line, "\r\n");
        *ll = eol ? (size_t)(eol - line) : strlen(line);
        if (*ll > nl && line[nl] == ':' && !strncasecmp(line, name, nl) && k-- == 0)
            return line;
        p = eol;
    }
    return NULL;
}

/* How many headers called name head has. */
static int tr_header_count(const struct tresp *r, const char *name)
{
    size_t ll;
    int n = 0;

    while (tr_header_line(r, name, n, &ll))
        n++;
    return n;
}

/* The value of header name in head (case-insensitive), copied into out; NULL if absent. */
static const char *tr_header(const struct tresp *r, const char *name, char *out, size_t len)
{
    size_t ll;
    const char *line = tr_header_line(r, name, 0, &ll), *v;

    if (!line)
        return NULL;
    v = line + strlen(name) + 1;
    while (*v == ' ' || *v == '\t')
        v++;
    ll -= (size_t)(v - line);
    if (ll >= len)
        ll = len - 1;
    memcpy(out, v, ll);
    out[ll] = '\0';
    return out;
}

/* Read the next response. 1: one in r; 0: the server closed the connection (or reset it)
 * before a complete response; -1: timeout or unparsable bytes. */
static int tc_response(struct tclient *c, struct tresp *r)
{
    for (;;) {
        char *end = memmem(c->buf, c->len, "\r\n\r\n", 4);
        if (end) {
            size_t hl = (size_t)(end - c->buf), need, cl = 0;
            char v[32];
            if (hl >= sizeof(r->head))
                return -1;
            memcpy(r->head, c->buf, hl);
            r->head[hl] = '\0';
            if (sscanf(r->head, "HTTP/1.%*d %d", &r->status) != 1)
                return -1;
            if (tr_header(r, "Content-Length", v, sizeof(v)))
                cl = strtoul(v, NULL, 10);
            need = hl + 4 + cl;
            if (cl < sizeof(r->body) && c->len >= need) {
                memcpy(r->body, end + 4, cl);
                r->body[cl] = '\0';
                r->body_len = cl;
                memmove(c->buf, c->buf + need, c->len - need);
                c->len -= need;
                return 1;
            }
        }
        if (c->len == sizeof(c->buf))
            return -1;
        ssize_t n = recv(c->fd, c->buf + c->len, sizeof(c->buf) - c->len, 0);
        if (n < 0 && errno == EINTR)
            continue;
        if (n < 0 && (errno == EAGAIN || errno == EWOULDBLOCK))
            return -1;
        if (n <= 0)
            return 0;
        c->len += (size_t)n;
    }
}

/* 1 when the server closes the connection (EOF or reset) within the receive timeout. */
static int tc_closed(struct tclient *c)
{
    char b[4096];
    for (;;) {
        ssize_t n = recv(c->fd, b, sizeof(b), 0);
        if (n == 0 || (n < 0 && errno != EINTR && errno != EAGAIN && errno != EWOULDBLOCK))
            return 1;
        if (n < 0 && errno != EINTR)
            return 0;
    }
}

#endif
