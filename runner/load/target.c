/* target.c -- the URL, the request and the expectation of one load (target.h). */
#define _GNU_SOURCE
#include "runner/load/target.h"

#include <arpa/inet.h>
#include <ctype.h>
#include <errno.h>
#include <fcntl.h>
#include <netdb.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>
#include <sys/stat.h>
#include <unistd.h>

#include "contract/contract.h"

static int fail(char *err, size_t errlen, const char *fmt, ...)
{
    va_list ap;
    va_start(ap, fmt);
    vsnprintf(err, errlen, fmt, ap);
    va_end(ap);
    return -1;
}

/* 1 when path is all visible ASCII: it goes into the request line as is, where a control
 * character, a space or a byte past 0x7e would split or corrupt the request. */
static int path_printable(const char *path)
{
    for (const unsigned char *p = (const unsigned char *)path; *p; p++)
        if (*p <= 0x20 || *p >= 0x7f)
            return 0;
    return 1;
}

static int parse_port(const char *s, long *port)
{
    char *end;
    /* digits only: strtol would take a sign or leading space ("+80", " 80") */
    if (!isdigit((unsigned char)*s))
        return -1;
    errno = 0;
    *port = strtol(s, &end, 10);
    return errno || end == s || *end || *port < 1 || *port > 65535 ? -1 : 0;
}

/* http://HOST[:PORT]/PATH -> address, Host header and path. IPv4 only. */
static int parse_url(struct kb_target *t, const char *url, const char **path, char *err,
                     size_t errlen)
{
    const char *h = url + 7, *slash, *colon;
    char name[256];
    long port = 80;
    struct addrinfo hints = { .ai_family = AF_INET, .ai_socktype = SOCK_STREAM }, *ai = NULL;
    if (strncmp(url, "http://", 7) || !(slash = strchr(h, '/')) || slash == h ||
        (size_t)(slash - h) >= sizeof(t->host))
        return fail(err, errlen, "the URL must be http://HOST[:PORT]/PATH, not '%s'", url);
    memcpy(t->host, h, (size_t)(slash - h));
    t->host[slash - h] = '\0';
    /* said before the port, whose colon they would otherwise be read as */
    if (strchr(t->host, '@'))
        return fail(err, errlen, "the URL may not carry user information ('user:password@'): "
                    "give credentials as a header, -H 'Authorization: ...', not in '%s'", url);
    if (t->host[0] == '[')
        return fail(err, errlen, "the URL's host is an IPv6 literal, '%s': load drives IPv4 "
                    "only (127.0.0.1, or a name with an IPv4 address)", t->host);
    colon = strchr(t->host, ':');
    if (colon && parse_port(colon + 1, &port))
        return fail(err, errlen, "the URL's port must be 1..65535, not '%s'", colon + 1);
    snprintf(name, sizeof(name), "%.*s", colon ? (int)(colon - t->host) : (int)strlen(t->host),
             t->host);
    if (getaddrinfo(name, NULL, &hints, &ai) || !ai)
        return fail(err, errlen, "the URL's host '%s' has no IPv4 address", name);
    t->addr = *(struct sockaddr_in *)ai->ai_addr;
    t->addr.sin_port = htons((uint16_t)port);
    freeaddrinfo(ai);
    if (!path_printable(slash))
        return fail(err, errlen, "the URL's path must be visible ASCII (percent-encode the "
                    "rest), not '%s'", slash);
    *path = slash;
    return 0;
}

/* RFC 9110's token: the characters a header name may hold. */
static int token_char(int c)
{
    return isalnum(c) || (c && strchr("!#$%&'*+-.^_`|~", c));
}

/* "Name: value" -> name and value (the value's surrounding space trimmed). 0, or -1 with
 * err. what names the option in the message. */
static int split_header(const char *h, char *name, size_t namelen, char *value,
                        size_t valuelen, const char *what, char *err, size_t errlen)
{
    const char *colon = strchr(h, ':'), *v, *end;
    size_t n;
    if (!colon || colon == h)
        return fail(err, errlen, "%s must be 'Name: value', not '%s'", what, h);
    for (const char *p = h; p < colon; p++)
        if (!token_char((unsigned char)*p))
            return fail(err, errlen, "%s: the header name '%.*s' holds a character a name "
                        "cannot", what, (int)(colon - h), h);
    for (v = colon + 1; *v == ' ' || *v == '\t'; v++)
        ;
    for (end = v + strlen(v); end > v && (end[-1] == ' ' || end[-1] == '\t'); end--)
        ;
    for (const unsigned char *p = (const unsigned char *)v; p < (const unsigned char *)end; p++)
        if ((*p < 0x20 && *p != '\t') || *p == 0x7f)
            return fail(err, errlen, "%s: the value of '%.*s' holds a control character",
                        what, (int)(colon - h), h);
    n = (size_t)(colon - h);
    if (n >= namelen || (size_t)(end - v) >= valuelen)
        return fail(err, errlen, "%s: '%.40s...' is longer than a header may be here", what, h);
    memcpy(name, h, n);
    name[n] = '\0';
    memcpy(value, v, (size_t)(end - v));
    value[end - v] = '\0';
    return 0;
}

/* The request: the path, the Host (the user's own when -H gives one) and every -H. */
static int build_request(struct kb_target *t, const struct kb_target_spec *s, const char *path,
                         char *err, size_t errlen)
{
    static const char *const owned[] = { "Connection", "Content-Length", "Transfer-Encoding" };
    char name[128], value[4096];
    size_t cap = strlen(path) + strlen(t->host) + 64, len;
    int own_host = 0;
    for (int i = 0; i < s->nheaders; i++) {
        if (split_header(s->headers[i], name, sizeof(name), value, sizeof(value), "-H", err,
                         errlen))
            return -1;
        for (size_t k = 0; k < sizeof(owned) / sizeof(owned[0]); k++)
            if (!strcasecmp(name, owned[k]))
                return fail(err, errlen, "-H %s: the client keeps every connection open and "
                            "sends no body, so this header is its own", owned[k]);
        own_host |= !strcasecmp(name, "Host");
        cap += strlen(name) + strlen(value) + 4;
    }
    if (!(t->request = malloc(cap)))
        return fail(err, errlen, "out of memory for the request");
    len = (size_t)snprintf(t->request, cap, "GET %s HTTP/1.1\r\n", path);
    if (!own_host)
        len += (size_t)snprintf(t->request + len, cap - len, "Host: %s\r\n", t->host);
    for (int i = 0; i < s->nheaders; i++) {
        split_header(s->headers[i], name, sizeof(name), value, sizeof(value), "-H", err, errlen);
        len += (size_t)snprintf(t->request + len, cap - len, "%s: %s\r\n", name, value);
    }
    len += (size_t)snprintf(t->request + len, cap - len, "\r\n");
    t->request_len = len;
    return 0;
}

static int read_body(struct kb_target *t, const char *file, char *err, size_t errlen)
{
    /* O_NONBLOCK: a FIFO must not hold the run at open() before it is refused */
    int fd = open(file, O_RDONLY | O_NONBLOCK | O_CLOEXEC);
    struct stat st;
    FILE *f;
    size_t cap = 4096, len = 0, n;
    if (fd < 0)
        return fail(err, errlen, "--expect-body: cannot read '%s': %s", file, strerror(errno));
    /* A directory, a device or /proc/self/mem reads as no body, or as endless bytes: only a
     * regular file holds a body, and its size is known before a byte is read. */
    errno = 0;
    if (fstat(fd, &st) < 0 || !S_ISREG(st.st_mode) || st.st_size > KB_TARGET_BODY_MAX) {
        int e = errno;
        close(fd);
        if (!e && !S_ISREG(st.st_mode))
            return fail(err, errlen, "--expect-body: '%s' is not a regular file", file);
        if (!e)
            return fail(err, errlen, "--expect-body: '%s' is over %d MiB", file,
                        KB_TARGET_BODY_MAX >> 20);
        return fail(err, errlen, "--expect-body: cannot read '%s': %s", file, strerror(e));
    }
    if (!(f = fdopen(fd, "rb"))) {
        close(fd);
        return fail(err, errlen, "--expect-body: cannot read '%s': %s", file, strerror(errno));
    }
    t->body = malloc(cap);
    while (t->body && (n = fread(t->body + len, 1, cap - len, f)) > 0) {
        len += n;
        if (len == cap && cap < KB_TARGET_BODY_MAX + 1) {
            char *b = realloc(t->body, cap * 2);
            if (!b) {
                free(t->body);
                t->body = NULL;
            }
            t->body = b;
            cap *= 2;
        }
    }
    n = (size_t)ferror(f);
    fclose(f);
    if (!t->body)
        return fail(err, errlen, "--expect-body: out of memory reading '%s'", file);
    /* /proc/self/mem is a regular file that fails to read: no empty body in its place; and
     * a file whose bytes are not its size (procfs, a file being written) is no fixed body */
    if (n || len != (size_t)st.st_size) {
        free(t->body);
        t->body = NULL;
        return fail(err, errlen, "--expect-body: cannot read '%s': %s", file,
                    n ? "a read failed" : "its bytes are not its size (not a plain file?)");
    }
    if (len > KB_TARGET_BODY_MAX)
        return fail(err, errlen, "--expect-body: '%s' is over %d MiB", file,
                    KB_TARGET_BODY_MAX >> 20);
    t->expect.body = t->body;
    t->expect.body_len = len;
    t->expect.any_body = 0;
    return 0;
}

static int parse_status(struct kb_target *t, const char *s, char *err, size_t errlen)
{
    char *end;
    long code;
    if (!s || !strcasecmp(s, "2xx")) {
        t->expect.status = 200;
        t->expect.status_hi = 299;
        return 0;
    }
    errno = 0;
    code = strtol(s, &end, 10);
    if (errno || end == s || *end || code < 200 || code > 299)
        return fail(err, errlen, "--expect-status must be 2xx or a code 200..299 (any other "
                    "status counts as an error), not '%s'", s);
    t->expect.status = (int)code;
    return 0;
}

/* The user's expectation, and its description. */
static int user_expect(struct kb_target *t, const struct kb_target_spec *s, char *err,
                       size_t errlen)
{
    size_t n;
    t->expect.any_body = 1;
    if (parse_status(t, s->expect_status, err, errlen))
        return -1;
    if (s->expect_body_file && read_body(t, s->expect_body_file, err, errlen))
        return -1;
    if (s->expect_header) {
        if (split_header(s->expect_header, t->header_name, sizeof(t->header_name),
                         t->header_value, sizeof(t->header_value), "--expect-header", err,
                         errlen))
            return -1;
        t->expect.header_name = t->header_name;
        t->expect.header_value = t->header_value;
    }
    n = (size_t)snprintf(t->expectation, sizeof(t->expectation), "status %s",
                         t->expect.status_hi ? "2xx" : s->expect_status);
    if (s->expect_body_file)
        n += (size_t)snprintf(t->expectation + n, sizeof(t->expectation) - n,
                              ", the body of %.120s (%zu bytes)", s->expect_body_file,
                              t->expect.body_len);
    else
        n += (size_t)snprintf(t->expectation + n, sizeof(t->expectation) - n, ", any body");
    if (t->expect.header_name && n < sizeof(t->expectation))
        snprintf(t->expectation + n, sizeof(t->expectation) - n, ", header %.60s: %.60s",
                 t->header_name, t->header_value);
    return 0;
}

const char *kb_target_route_of_url(const struct kb_contract *ct, const char *url)
{
    const char *path = strncmp(url, "http://", 7) ? NULL : strchr(url + 7, '/');
    size_t len = path ? strcspn(path, "?#") : 0;
    for (size_t i = 0; path && i < ct->nroutes; i++)
        if (strlen(ct->routes[i].path) == len && !strncmp(ct->routes[i].path, path, len))
            return ct->routes[i].name;
    return NULL;
}

/* The contract route's expectation. */
static int route_expect(struct kb_target *t, const struct kb_contract *ct, const char *name,
                        char *err, size_t errlen)
{
    const struct kb_route *r = kb_contract_route(ct, name);
    if (!r)
        return fail(err, errlen, "no route '%s' in the contract", name);
    if (strcmp(r->method, "GET"))
        return fail(err, errlen, "route '%s' is not a GET route", name);
    if (kb_resp_expect_route(r, &t->expect, &t->re))
        return fail(err, errlen, "route '%s' has a body_regex that does not compile", name);
    t->have_re = t->expect.body_regex != NULL;
    t->route = r->name;
    snprintf(t->expectation, sizeof(t->expectation), "the contract's route %s", r->name);
    return 0;
}

int kb_target_open(struct kb_target *t, const struct kb_target_spec *s,
                   const struct kb_contract *ct, char *err, size_t errlen)
{
    int user = s->expect_status || s->expect_body_file || s->expect_header;
    const char *path, *route = s->route;
    memset(t, 0, sizeof(*t));
    if (s->nheaders > KB_TARGET_HEADERS_MAX)
        return fail(err, errlen, "at most %d -H headers", KB_TARGET_HEADERS_MAX);
    if (route && user)
        return fail(err, errlen, "--route checks the contract's response: it cannot be "
                    "combined with --expect-status, --expect-body or --expect-header");
    if (parse_url(t, s->url, &path, err, errlen))
        return -1;
    if (!route && !user)
        route = kb_target_route_of_url(ct, s->url);
    if (route ? route_expect(t, ct, route, err, errlen) : user_expect(t, s, err, errlen))
        return -1;
    return build_request(t, s, path, err, errlen);
}

void kb_target_close(struct kb_target *t)
{
    if (t->have_re)
        regfree(&t->re);
    free(t->request);
    free(t->body);
    t->request = t->body = NULL;
    t->have_re = 0;
}

int kb_target_loopback(const struct kb_target *t)
{
    return (ntohl(t->addr.sin_addr.s_addr) >> 24) == 127;
}
