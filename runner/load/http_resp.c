/* http_resp.c -- a byte-at-a-time state machine for status line, headers, and body.
 *
 * Header lines are gathered in p->line (bounded: a longer line is malformed) and interpreted
 * when complete; body bytes are compared in place against the expected body, so a response
 * split at any byte yields the same verdict as one read whole. */
#define _DEFAULT_SOURCE
#include "runner/load/http_resp.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>

#include "contract/contract.h"

enum {
    S_STATUS, S_HEADER, S_BODY, S_CHUNK_SIZE, S_CHUNK_DATA, S_CHUNK_DATA_END, S_TRAILER,
    S_UNTIL_CLOSE, S_DONE
};

void kb_resp_init(struct kb_resp *p, const struct kb_resp_expect *e)
{
    p->expect = e;
    p->state = S_STATUS;
    p->status = 0;
    p->conn_close = 0;
    p->chunked = 0;
    p->content_length = -1;
    p->remaining = 0;
    p->body_seen = 0;
    p->ct_seen = p->ct_ok = 0;
    p->header_ok = 0;
    p->body_ok = 1;
    p->error = NULL;
    p->keep = NULL;
    p->line_len = 0;
    p->regex_len = 0;
}

void kb_resp_keep(struct kb_resp *p, struct kb_resp_keep *k)
{
    p->keep = k;
    if (!k)
        return;
    k->content_type[0] = k->server[0] = '\0';
    k->has_content_length = k->has_date = k->has_server = 0;
    k->body_len = 0;
    k->body_truncated = 0;
    if (k->body && k->body_cap)
        k->body[0] = '\0';
}

int kb_resp_expect_route(const struct kb_route *r, struct kb_resp_expect *e, regex_t *re)
{
    memset(e, 0, sizeof(*e));
    e->status = r->status;
    e->content_type = r->content_type;
    e->body = r->body;
    e->body_len = r->body_len;
    e->body_regex = NULL;
    if (!r->body && r->body_regex) {
        if (regcomp(re, r->body_regex, REG_EXTENDED | REG_NOSUB))
            return -1;
        e->body_regex = re;
    }
    return 0;
}

int kb_resp_started(const struct kb_resp *p)
{
    return p->state != S_STATUS || p->line_len > 0;
}

static enum kb_resp_rc bad(struct kb_resp *p, const char *why)
{
    p->error = why;
    return KB_RESP_MALFORMED;
}

static void trim(char **s, size_t *len)
{
    while (*len && (**s == ' ' || **s == '\t')) {
        (*s)++;
        (*len)--;
    }
    while (*len && ((*s)[*len - 1] == ' ' || (*s)[*len - 1] == '\t'))
        (*len)--;
}

static int parse_status_line(struct kb_resp *p)
{
    const char *l = p->line;
    if (p->line_len < 12 || strncmp(l, "HTTP/1.", 7) || (l[7] != '0' && l[7] != '1') || l[8] != ' ')
        return -1;
    for (int i = 9; i < 12; i++)
        if (l[i] < '0' || l[i] > '9')
            return -1;
    if (p->line_len > 12 && l[12] != ' ')
        return -1;
    p->status = (l[9] - '0') * 100 + (l[10] - '0') * 10 + (l[11] - '0');
    p->conn_close = l[7] == '0';     /* HTTP/1.0 closes unless it says keep-alive */
    return 0;
}

static int parse_length(const char *v, size_t len, int base, int64_t *out)
{
    int64_t n = 0;
    if (len == 0 || len > 15)
        return -1;
    for (size_t i = 0; i < len; i++) {
        int d;
        if (v[i] >= '0' && v[i] <= '9')
            d = v[i] - '0';
        else if (base == 16 && v[i] >= 'a' && v[i] <= 'f')
            d = v[i] - 'a' + 10;
        else if (base == 16 && v[i] >= 'A' && v[i] <= 'F')
            d = v[i] - 'A' + 10;
        else
            return -1;
        n = n * base + d;
    }
    *out = n;
    return 0;
}

static int header_is(const char *name, size_t nlen, const char *want)
{
    return nlen == strlen(want) && !strncasecmp(name, want, nlen);
}

static int value_is(const char *v, size_t vlen, const char *want)
{
    return vlen == strlen(want) && !strncasecmp(v, want, vlen);
}

/* The headers the contract requires beside Content-Type: present or not. */
static void keep_header(struct kb_resp_keep *k, const char *name, size_t nlen)
{
    k->has_content_length |= header_is(name, nlen, "Content-Length");
    k->has_date |= header_is(name, nlen, "Date");
    k->has_server |= header_is(name, nlen, "Server");
}

static int parse_header(struct kb_resp *p)
{
    char *colon = memchr(p->line, ':', p->line_len), *v;
    size_t nlen, vlen;
    int64_t cl;
    if (!colon || colon == p->line)
        return -1;
    nlen = (size_t)(colon - p->line);
    v = colon + 1;
    vlen = p->line_len - nlen - 1;
    trim(&v, &vlen);
    if (header_is(p->line, nlen, "Content-Length")) {
        if (parse_length(v, vlen, 10, &cl) || (p->content_length >= 0 && cl != p->content_length))
            return -1;
        p->content_length = cl;
    } else if (header_is(p->line, nlen, "Transfer-Encoding")) {
        if (!value_is(v, vlen, "chunked"))
            return -1;
        p->chunked = 1;
    } else if (header_is(p->line, nlen, "Connection")) {
        if (value_is(v, vlen, "close"))
            p->conn_close = 1;
        else if (value_is(v, vlen, "keep-alive"))
            p->conn_close = 0;
    }
    if (p->expect->header_name && header_is(p->line, nlen, p->expect->header_name) &&
        value_is(v, vlen, p->expect->header_value))
        p->header_ok = 1;
    if (header_is(p->line, nlen, "Content-Type")) {
        const char *want = p->expect->content_type;
        p->ct_ok = !p->ct_seen && want && value_is(v, vlen, want);
        if (p->keep && !p->ct_seen)
            snprintf(p->keep->content_type, sizeof(p->keep->content_type), "%.*s", (int)vlen, v);
        p->ct_seen = 1;
    }
    if (p->keep && !p->keep->has_server && header_is(p->line, nlen, "Server"))
        snprintf(p->keep->server, sizeof(p->keep->server), "%.*s", (int)vlen, v);
    if (p->keep)
        keep_header(p->keep, p->line, nlen);
    return 0;
}

/* The blank line after the headers: decide how the body is delimited. */
static int headers_done(struct kb_resp *p)
{
    int no_body = p->status == 204 || p->status == 304 || (p->status >= 100 && p->status < 200);
    if (p->status >= 100 && p->status < 200 && p->status != 101) {
        /* An interim response: the real one follows. */
        int close = p->conn_close;
        struct kb_resp_keep *k = p->keep;
        kb_resp_init(p, p->expect);
        p->conn_close = close;
        kb_resp_keep(p, k);
        return S_STATUS;
    }
    if (no_body)
        return S_DONE;
    /* RFC 9112 6.3: both framings in one response is a smuggling sign: which one frames
     * it is the attacker's choice, so neither is taken (as two Content-Lengths are not) */
    if (p->chunked && p->content_length >= 0)
        return -1;
    if (p->chunked)
        return S_CHUNK_SIZE;
    if (p->content_length >= 0) {
        p->remaining = p->content_length;
        return p->remaining ? S_BODY : S_DONE;
    }
    p->conn_close = 1;
    return S_UNTIL_CLOSE;
}

static void keep_body(struct kb_resp_keep *k, const char *b, size_t n)
{
    size_t room = k->body_cap - 1 - k->body_len;
    if (n > room) {
        k->body_truncated = 1;
        n = room;
    }
    memcpy(k->body + k->body_len, b, n);
    k->body_len += n;
    k->body[k->body_len] = '\0';
}

static void body_bytes(struct kb_resp *p, const char *b, size_t n)
{
    const struct kb_resp_expect *e = p->expect;
    if (p->keep && p->keep->body && p->keep->body_cap)
        keep_body(p->keep, b, n);
    if (e->any_body) {
        /* nothing to compare: only counted */
    } else if (e->body) {
        if (p->body_ok && ((size_t)p->body_seen + n > e->body_len ||
                           memcmp(e->body + p->body_seen, b, n)))
            p->body_ok = 0;
    } else {
        size_t room = KB_RESP_REGEX_BODY_MAX - p->regex_len;
        if (n > room) {
            p->body_ok = 0;
            n = room;
        }
        memcpy(p->regex_body + p->regex_len, b, n);
        p->regex_len += n;
    }
    p->body_seen += (int64_t)n;
}

int kb_resp_body_ok(const struct kb_resp *p)
{
    const struct kb_resp_expect *e = p->expect;
    if (e->any_body)
        return 1;
    if (!p->body_ok)
        return 0;
    if (e->body)
        return (size_t)p->body_seen == e->body_len;
    if (!e->body_regex)
        return 0;
    /* regex_body has one spare byte for the terminator; a NUL in the body fails the match
     * as it should (the contract's bodies are text). */
    ((struct kb_resp *)p)->regex_body[p->regex_len] = '\0';
    return strlen(p->regex_body) == p->regex_len && regexec(e->body_regex, p->regex_body, 0, NULL, 0) == 0;
}

/* A complete line (without CRLF) is in p->line: act on it. Returns the next state or -1. */
static int line_done(struct kb_resp *p)
{
    int64_t size;
    char *semi;
    size_t len;
    switch (p->state) {
    case S_STATUS:
        return parse_status_line(p) ? -1 : S_HEADER;
    case S_HEADER:
        if (p->line_len == 0)
            return headers_done(p);
        return parse_header(p) ? -1 : S_HEADER;
    case S_CHUNK_SIZE:
        semi = memchr(p->line, ';', p->line_len);
        len = semi ? (size_t)(semi - p->line) : p->line_len;
        while (len && (p->line[len - 1] == ' ' || p->line[len - 1] == '\t'))
            len--;
        if (parse_length(p->line, len, 16, &size))
            return -1;
        p->remaining = size;
        return size ? S_CHUNK_DATA : S_TRAILER;
    case S_CHUNK_DATA_END:
        return p->line_len == 0 ? S_CHUNK_SIZE : -1;
    case S_TRAILER:
        return p->line_len == 0 ? S_DONE : S_TRAILER;
    default:
        return -1;
    }
}

/* Gather one line; returns 1 when complete, 0 when more input is needed, -1 if malformed. */
static int take_line(struct kb_resp *p, char c)
{
    if (c == '\n') {
        if (p->line_len && p->line[p->line_len - 1] == '\r')
            p->line_len--;
        p->line[p->line_len] = '\0';
        return 1;
    }
    if (p->line_len + 1 >= KB_RESP_LINE_MAX)
        return -1;
    if (c == '\0' || (p->state == S_STATUS && p->line_len == 0 && c != 'H'))
        return -1;          /* garbage: fail at its first byte instead of waiting for a line */
    p->line[p->line_len++] = c;
    return 0;
}

enum kb_resp_rc kb_resp_feed(struct kb_resp *p, const char *buf, size_t len, size_t *consumed)
{
    size_t i = 0;
    while (i < len && p->state != S_DONE) {
        if (p->state == S_BODY || p->state == S_CHUNK_DATA || p->state == S_UNTIL_CLOSE) {
            size_t n = len - i;
            if (p->state != S_UNTIL_CLOSE && (int64_t)n > p->remaining)
                n = (size_t)p->remaining;
            body_bytes(p, buf + i, n);
            i += n;
            if (p->state == S_UNTIL_CLOSE)
                continue;
            p->remaining -= (int64_t)n;
            if (p->remaining == 0)
                p->state = p->state == S_BODY ? S_DONE : S_CHUNK_DATA_END;
            continue;
        }
        int r = take_line(p, buf[i++]);
        if (r < 0) {
            *consumed = i;
            return bad(p, p->state == S_STATUS ? "not an HTTP status line" : "header line too long or invalid");
        }
        if (r == 1) {
            int next = line_done(p);
            if (next < 0) {
                *consumed = i;
                return bad(p, p->state == S_STATUS ? "bad status line" :
                              p->state == S_HEADER ? "bad header" : "bad chunk framing");
            }
            p->state = next;
            p->line_len = 0;
        }
    }
    *consumed = i;
    return p->state == S_DONE ? KB_RESP_DONE : KB_RESP_MORE;
}

enum kb_resp_rc kb_resp_eof(struct kb_resp *p)
{
    if (p->state == S_UNTIL_CLOSE) {
        p->state = S_DONE;
        return KB_RESP_DONE;
    }
    if (!kb_resp_started(p))
        return KB_RESP_MORE;
    return bad(p, "connection closed mid-response");
}
