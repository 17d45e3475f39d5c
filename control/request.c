/* request.c -- a request head's framing for kb-control (request.h). */
#define _GNU_SOURCE
#include "control/request.h"

#include <string.h>
#include <strings.h>

/* The line at p (of at most left bytes): its length without CR LF or LF, and in *next the
 * start of the line after it; -1 while the line is not complete. */
static long line_at(const char *p, size_t left, const char **next)
{
    const char *lf = memchr(p, '\n', left);
    size_t len;
    if (!lf)
        return -1;
    len = (size_t)(lf - p);
    *next = lf + 1;
    return (long)(len && p[len - 1] == '\r' ? len - 1 : len);
}

static int is_token(const char *s, size_t len)
{
    static const char extra[] = "!#$%&'*+-.^_`|~";
    if (!len)
        return 0;
    for (size_t i = 0; i < len; i++) {
        unsigned char c = (unsigned char)s[i];
        if (!((c >= '0' && c <= '9') || (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') ||
              (c && memchr(extra, c, sizeof(extra) - 1))))
            return 0;
    }
    return 1;
}

static int named(const char *name, size_t len, const char *want)
{
    return len == strlen(want) && !strncasecmp(name, want, len);
}

/* One field line: framing and connection handling read from it. */
static void field(const char *p, size_t len, struct kbc_request *r)
{
    const char *colon = memchr(p, ':', len), *v;
    size_t nlen, vlen;
    if (!colon || !is_token(p, (size_t)(colon - p))) {
        r->bad = 1;
        return;
    }
    nlen = (size_t)(colon - p);
    v = colon + 1;
    vlen = len - nlen - 1;
    while (vlen && (*v == ' ' || *v == '\t'))
        v++, vlen--;
    while (vlen && (v[vlen - 1] == ' ' || v[vlen - 1] == '\t'))
        vlen--;
    if (named(p, nlen, "Content-Length")) {
        for (size_t i = 0; i < vlen; i++)
            if (v[i] != '0')
                r->bad = 1;           /* a body, or no number */
        r->bad |= vlen == 0;
    } else if (named(p, nlen, "Transfer-Encoding")) {
        r->bad = 1;
    } else if (named(p, nlen, "Connection")) {
        if (vlen == 5 && !strncasecmp(v, "close", 5))
            r->close_after = 1;
        else if (vlen == 10 && !strncasecmp(v, "keep-alive", 10))
            r->close_after = 0;
    }
}

/* "GET SP target SP HTTP/1.x": the path, and HTTP/1.0's close. */
static void request_line(const char *p, size_t len, struct kbc_request *r)
{
    const char *sp1 = memchr(p, ' ', len), *sp2, *q;
    sp2 = sp1 ? memchr(sp1 + 1, ' ', len - (size_t)(sp1 + 1 - p)) : NULL;
    if (!sp2 || sp1 - p != 3 || memcmp(p, "GET", 3) || sp2 == sp1 + 1) {
        r->bad = 1;
        return;
    }
    r->close_after = (size_t)(p + len - sp2 - 1) == 8 && !memcmp(sp2 + 1, "HTTP/1.0", 8);
    q = memchr(sp1 + 1, '?', (size_t)(sp2 - sp1 - 1));
    r->path = sp1 + 1;
    r->path_len = (size_t)((q ? q : sp2) - sp1 - 1);
}

int kbc_request_parse(const char *buf, size_t len, struct kbc_request *r)
{
    const char *p = buf, *next;
    long n = line_at(p, len, &next);
    memset(r, 0, sizeof(*r));
    if (n < 0)
        return 0;
    request_line(p, (size_t)n, r);
    for (;;) {
        p = next;
        if ((n = line_at(p, len - (size_t)(p - buf), &next)) < 0)
            return 0;
        if (n == 0)
            break;
        field(p, (size_t)n, r);
    }
    r->head_len = (size_t)(next - buf);
    if (r->bad)
        r->close_after = 1;
    return 1;
}
