/* agent_client.c -- connect to a serve-agent and exchange command/answer lines. */
#define _GNU_SOURCE
#include "runner/sandbox/agent_client.h"

#include <errno.h>
#include <fcntl.h>
#include <netdb.h>
#include <poll.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <unistd.h>

#include "runner/sandbox/agent.h"
#include "runner/sandbox/agent_auth.h"

struct kb_agent_conn {
    int fd;
    char buf[4096];
    size_t len;
};

static int split_hostport(const char *hostport, char *host, size_t hostlen, char *port,
                          size_t portlen)
{
    const char *colon = strrchr(hostport, ':');

    if (!colon || colon == hostport || (size_t)(colon - hostport) >= hostlen ||
        strlen(colon + 1) == 0 || strlen(colon + 1) >= portlen)
        return -1;
    memcpy(host, hostport, (size_t)(colon - hostport));
    host[colon - hostport] = '\0';
    snprintf(port, portlen, "%s", colon + 1);
    return 0;
}

/* Non-blocking connect bounded by timeout_ms; the socket is left blocking. */
static int connect_bounded(const struct addrinfo *ai, int timeout_ms)
{
    int fd = socket(ai->ai_family, ai->ai_socktype | SOCK_CLOEXEC | SOCK_NONBLOCK, 0), e = 0;
    socklen_t elen = sizeof(e);
    struct pollfd p;

    if (fd < 0)
        return -1;
    if (connect(fd, ai->ai_addr, ai->ai_addrlen) < 0 && errno != EINPROGRESS)
        goto fail;
    p = (struct pollfd){ .fd = fd, .events = POLLOUT };
    if (poll(&p, 1, timeout_ms) != 1 || getsockopt(fd, SOL_SOCKET, SO_ERROR, &e, &elen) < 0)
        goto fail;
    if (e) {
        errno = e;
        goto fail;
    }
    if (fcntl(fd, F_SETFL, fcntl(fd, F_GETFL) & ~O_NONBLOCK) < 0)
        goto fail;
    return fd;
fail:
    e = errno ? errno : ETIMEDOUT;
    close(fd);
    errno = e;
    return -1;
}

static int send_line(int fd, const char *line);
static long read_line(struct kb_agent_conn *c, int timeout_ms);

/* The agent's greeting, then "auth PROOF" and its answer. 0, or -1 with err. */
static int authenticate(struct kb_agent_conn *c, const char *hostport, const char *token,
                        int timeout_ms, char *err, size_t errlen)
{
    char want[64], line[KB_AGENT_PROOF_HEX + 8], proof[KB_AGENT_PROOF_HEX];
    long n = read_line(c, timeout_ms);
    int ok;
    snprintf(want, sizeof(want), KB_AGENT_GREETING " %d ", KB_AGENT_PROTOCOL);
    if (n < 0 || strncmp(c->buf, want, strlen(want))) {
        snprintf(err, errlen, "agent %s: %s%.200s", hostport, n < 0 ? "no greeting"
                 : "not a serve-agent speaking this protocol: ", n < 0 ? "" : c->buf);
        return -1;
    }
    if (kb_agent_proof(token, c->buf, proof) < 0) {
        snprintf(err, errlen, "agent %s: HMAC failed", hostport);
        return -1;
    }
    memmove(c->buf, c->buf + n + 1, c->len - (size_t)n - 1);
    c->len -= (size_t)n + 1;
    snprintf(line, sizeof(line), "auth %s", proof);
    if (send_line(c->fd, line) < 0 || (n = read_line(c, timeout_ms)) < 0) {
        snprintf(err, errlen, "agent %s: no answer to auth", hostport);
        return -1;
    }
    ok = !strncmp(c->buf, "ok ", 3);
    if (!ok)
        snprintf(err, errlen, "agent %s: %.300s", hostport,
                 !strncmp(c->buf, "err ", 4) ? c->buf + 4 : c->buf);
    memmove(c->buf, c->buf + n + 1, c->len - (size_t)n - 1);
    c->len -= (size_t)n + 1;
    return ok ? 0 : -1;
}

struct kb_agent_conn *kb_agent_connect(const char *hostport, const char *token, int timeout_ms,
                                       char *err, size_t errlen)
{
    struct addrinfo hints = { .ai_family = AF_INET, .ai_socktype = SOCK_STREAM }, *ai = NULL;
    char host[256], port[16];
    struct kb_agent_conn *c = NULL;
    int fd, gai;

    if (!token || !*token) {
        snprintf(err, errlen, "agent %s: no token to prove (--agent-token FILE)", hostport);
        return NULL;
    }
    if (split_hostport(hostport, host, sizeof(host), port, sizeof(port)) < 0) {
        snprintf(err, errlen, "agent address must be HOST:PORT, not '%s'", hostport);
        return NULL;
    }
    if ((gai = getaddrinfo(host, port, &hints, &ai)) != 0 || !ai) {
        snprintf(err, errlen, "agent %s: %s", hostport, gai_strerror(gai));
        return NULL;
    }
    fd = connect_bounded(ai, timeout_ms);
    freeaddrinfo(ai);
    if (fd < 0) {
        snprintf(err, errlen, "agent %s: %s", hostport, strerror(errno));
        return NULL;
    }
    if (!(c = calloc(1, sizeof(*c)))) {
        close(fd);
        snprintf(err, errlen, "out of memory");
        return NULL;
    }
    c->fd = fd;
    if (authenticate(c, hostport, token, timeout_ms, err, errlen) < 0) {
        kb_agent_close(c);
        return NULL;
    }
    return c;
}

static int send_line(int fd, const char *line)
{
    size_t n = strlen(line);
    char buf[KB_AGENT_LINE_MAX + 2];

    if (n >= KB_AGENT_LINE_MAX || strchr(line, '\n'))
        return -2;
    memcpy(buf, line, n);
    buf[n++] = '\n';
    for (size_t off = 0; off < n;) {
        ssize_t w = send(fd, buf + off, n - off, MSG_NOSIGNAL);
        if (w < 0 && errno == EINTR)
            continue;
        if (w <= 0)
            return -1;
        off += (size_t)w;
    }
    return 0;
}

/* Reads until a whole line is buffered; its length (without the newline), or -1. */
static long read_line(struct kb_agent_conn *c, int timeout_ms)
{
    char *nl;

    while (!(nl = memchr(c->buf, '\n', c->len))) {
        struct pollfd p = { .fd = c->fd, .events = POLLIN };
        ssize_t r;
        if (c->len >= sizeof(c->buf) - 1 || poll(&p, 1, timeout_ms) != 1)
            return -1;
        r = recv(c->fd, c->buf + c->len, sizeof(c->buf) - 1 - c->len, 0);
        if (r < 0 && errno == EINTR)
            continue;
        if (r <= 0)
            return -1;
        c->len += (size_t)r;
    }
    *nl = '\0';
    return nl - c->buf;
}

int kb_agent_call(struct kb_agent_conn *c, const char *line, int timeout_ms, char *reply,
                  size_t replylen, char *err, size_t errlen)
{
    long n;
    int rc = -1, s = send_line(c->fd, line);

    if (s < 0) {
        snprintf(err, errlen, s == -2 ? "command too long or holds a newline"
                 : "agent connection lost while sending");
        return -1;
    }
    if ((n = read_line(c, timeout_ms)) < 0) {
        snprintf(err, errlen, "no answer from the agent within %d ms", timeout_ms);
        return -1;
    }
    if (!strncmp(c->buf, "ok ", 3)) {
        snprintf(reply, replylen, "%s", c->buf + 3);
        rc = 0;
    } else {
        snprintf(err, errlen, "agent: %s", !strncmp(c->buf, "err ", 4) ? c->buf + 4 : c->buf);
    }
    memmove(c->buf, c->buf + n + 1, c->len - (size_t)n - 1);
    c->len -= (size_t)n + 1;
    return rc;
}

void kb_agent_close(struct kb_agent_conn *c)
{
    if (!c)
        return;
    close(c->fd);
    free(c);
}
