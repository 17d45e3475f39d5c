/* preflight.c -- blocking HTTP GET and contract match for pre/postflight. */
#define _GNU_SOURCE
#include "runner/preflight.h"

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

/* Read until the headers are complete and Content-Length bytes of body arrived. */
static ssize_t read_reply(int fd, char *buf, size_t cap, long deadline)
{
    size_t len = 0;
    while (len < cap - 1) {
        struct pollfd p = { fd, POLLIN, 0 };
        long left = deadline - now_ms();
        char *end, *cl;
        if (left <= 0 || poll(&p, 1, (int)left) <= 0)
            return -1;
        ssize_t n = read(fd, buf + len, cap - 1 - len);
        if (n <= 0)
            return len ? (ssize_t)len : -1;
        len += (size_t)n;
        buf[len] = '\0';
        if (!(end = strstr(buf, "\r\n\r\n")))
            continue;
        cl = strcasestr(buf, "\r\ncontent-length:");
        if (!cl || cl > end || len >= (size_t)(end + 4 - buf) + strtoul(cl + 17, NULL, 10))
            return (ssize_t)len;
    }
    return (ssize_t)len;
}

static void parse_headers(char *buf, char *end, struct kb_http_reply *out)
{
    for (char *line = strstr(buf, "\r\n") + 2; line < end;) {
        char *eol = strstr(line, "\r\n"), *colon = memchr(line, ':', (size_t)(eol - line));
        if (colon) {
            char *v = colon + 1;
            size_t klen = (size_t)(colon - line);
            while (*v == ' ')
                v++;
            if (klen == 12 && !strncasecmp(line, "Content-Type", 12))
                snprintf(out->content_type, sizeof(out->content_type), "%.*s", (int)(eol - v), v);
            out->has_length |= klen == 14 && !strncasecmp(line, "Content-Length", 14);
            out->has_date |= klen == 4 && !strncasecmp(line, "Date", 4);
            out->has_server |= klen == 6 && !strncasecmp(line, "Server", 6);
        }
        line = eol + 2;
    }
}

int kb_http_get(int port, const char *path, int timeout_ms, struct kb_http_reply *out,
                char *err, size_t errlen)
{
    return kb_http_get_at(NULL, port, path, timeout_ms, out, err, errlen);
}

int kb_http_get_at(const char *host, int port, const char *path, int timeout_ms,
                   struct kb_http_reply *out, char *err, size_t errlen)
{
    char req[512], buf[8192], *end;
    long deadline = now_ms() + timeout_ms;
    int fd, n;
    ssize_t len;
    memset(out, 0, sizeof(*out));
    if (!host)
        host = "127.0.0.1";
    if ((fd = connect_to(host, port)) < 0) {
        snprintf(err, errlen, "connect %s:%d: %s", host, port, strerror(errno));
        return -1;
    }
    n = snprintf(req, sizeof(req), "GET %s HTTP/1.1\r\nHost: %s:%d\r\n\r\n", path, host, port);
    if (write(fd, req, (size_t)n) != n || (len = read_reply(fd, buf, sizeof(buf), deadline)) < 0) {
        snprintf(err, errlen, "GET %s: no complete reply within %d ms", path, timeout_ms);
        close(fd);
        return -1;
    }
    close(fd);
    if (sscanf(buf, "HTTP/1.%*d %d", &out->status) != 1 || !(end = strstr(buf, "\r\n\r\n"))) {
        snprintf(err, errlen, "GET %s: malformed reply", path);
        return -1;
    }
    parse_headers(buf, end + 2, out);
    out->body_len = (size_t)len - (size_t)(end + 4 - buf);
    if (out->body_len >= sizeof(out->body))
        out->body_len = sizeof(out->body) - 1;
    memcpy(out->body, end + 4, out->body_len);
    out->body[out->body_len] = '\0';
    return 0;
}

static int body_matches(const struct kb_route *r, const struct kb_http_reply *rep)
{
    regex_t re;
    int ok;
    if (r->body)
        return rep->body_len == r->body_len && !memcmp(rep->body, r->body, r->body_len);
    if (!r->body_regex || regcomp(&re, r->body_regex, REG_EXTENDED | REG_NOSUB))
        return 0;
    ok = regexec(&re, rep->body, 0, NULL, 0) == 0;
    regfree(&re);
    return ok;
}

int kb_preflight_match(const struct kb_route *r, const struct kb_http_reply *rep, char *reason,
                       size_t reasonlen)
{
    if (rep->status != r->status)
        snprintf(reason, reasonlen, "%s: status %d, want %d", r->path, rep->status, r->status);
    else if (strcmp(rep->content_type, r->content_type))
        snprintf(reason, reasonlen, "%s: Content-Type '%s', want '%s'", r->path,
                 rep->content_type, r->content_type);
    else if (!body_matches(r, rep))
        snprintf(reason, reasonlen, "%s: body '%.80s' (%zu bytes) differs from the contract",
                 r->path, rep->body, rep->body_len);
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
    if (kb_http_get_at(host, port, r->path, 2000, &rep, reason, reasonlen) < 0)
        return -1;
    return kb_preflight_match(r, &rep, reason, reasonlen);
}
