/* http_resp.h -- an incremental HTTP/1.1 response parser that also checks the response
 * against what the contract expects (status, Content-Type, exact body or a body regex).
 *
 * Bytes may arrive split at any point; the parser keeps only a bounded header-line buffer
 * and never stores a body (a literal body is compared as it streams, a regex body is kept
 * up to KB_RESP_REGEX_BODY_MAX bytes). Content-Length, chunked transfer coding and
 * read-until-close bodies are understood. One parser per connection; no allocation. The
 * load generator and preflight both read responses through it, so a response one of them
 * passes the other cannot fail for how it was framed or split. */
#ifndef KB_HTTP_RESP_H
#define KB_HTTP_RESP_H

#include <regex.h>
#include <stddef.h>
#include <stdint.h>

#define KB_RESP_LINE_MAX 4096
#define KB_RESP_REGEX_BODY_MAX 4096

/* What a correct response looks like; owned by the caller, shared read-only by parsers.
 * A contract route fixes the status, the type and the body; a server outside the contract
 * (`kneebench load URL`) may be held to less: a status range, any type, any body, and one
 * header that must be there with its value. */
struct kb_resp_expect {
    int status;
    int status_hi;                 /* 0: status exactly; else status..status_hi (200..299) */
    const char *content_type;      /* compared case-insensitively, surrounding space trimmed;
                                      NULL: any */
    const char *body;              /* exact bytes, or NULL when body_regex applies */
    size_t body_len;
    const regex_t *body_regex;     /* compiled by the caller (REG_EXTENDED | REG_NOSUB) */
    int any_body;                  /* neither body nor body_regex: any body is right */
    const char *header_name;       /* NULL, or a header every response must carry ... */
    const char *header_value;      /* ... with this value (trimmed, case-insensitively) */
};

/* The expectation of a contract route (contract/contract.h): the route's status, type and
 * body, its body_regex compiled into *re. 0, or -1 when the regex does not compile. The
 * caller regfree()s re when e->body_regex is set, once no parser uses it. */
struct kb_route;
int kb_resp_expect_route(const struct kb_route *r, struct kb_resp_expect *e, regex_t *re);

/* What a caller that wants more than the verdict keeps of one response: preflight checks
 * the contract's required headers and shows the Content-Type and body in its reasons, the
 * soak parses /stats' body. Optional (kb_resp_keep): the load generator keeps nothing. */
struct kb_resp_keep {
    char content_type[128];        /* the first Content-Type's value, trimmed, cut to fit */
    int has_content_length, has_date, has_server;
    char server[128];              /* the first Server header's value, trimmed, cut to fit */
    char *body;                    /* the caller's buffer of body_cap bytes, or NULL: the body
                                      (de-chunked), cut to body_cap - 1 bytes, NUL-terminated */
    size_t body_cap, body_len;
    int body_truncated;            /* the body was longer than that */
};

enum kb_resp_rc {
    KB_RESP_MORE = 0,              /* all input consumed, response not complete yet */
    KB_RESP_DONE = 1,              /* one response complete; *consumed says how much input */
    KB_RESP_MALFORMED = -1         /* not HTTP; p->error names what */
};

struct kb_resp {
    const struct kb_resp_expect *expect;
    int state;
    int status;
    int conn_close;                /* Connection: close, or HTTP/1.0 without keep-alive */
    int chunked;
    int64_t content_length;        /* -1 when absent */
    int64_t remaining;             /* body or chunk bytes still to come */
    int64_t body_seen;
    int ct_seen, ct_ok, body_ok;
    int header_ok;                 /* expect->header_name was seen with its value */
    const char *error;             /* static text, set on KB_RESP_MALFORMED */
    struct kb_resp_keep *keep;     /* NULL unless kb_resp_keep() asked for it */
    size_t line_len;
    size_t regex_len;
    char line[KB_RESP_LINE_MAX];
    char regex_body[KB_RESP_REGEX_BODY_MAX + 1];
};

/* Ready the parser for the next response on a connection (keeping nothing). */
void kb_resp_init(struct kb_resp *p, const struct kb_resp_expect *e);

/* After kb_resp_init: keep k's share of the response now parsed (k emptied here; an interim
 * 1xx response's headers are forgotten with it). */
void kb_resp_keep(struct kb_resp *p, struct kb_resp_keep *k);

/* Feed len bytes. *consumed is set to the bytes used (on DONE, any rest belongs to the
 * next response). */
enum kb_resp_rc kb_resp_feed(struct kb_resp *p, const char *buf, size_t len, size_t *consumed);

/* The peer closed the connection: DONE when the body was delimited by close, MALFORMED when
 * a response was partly received, MORE when nothing of a response had arrived. */
enum kb_resp_rc kb_resp_eof(struct kb_resp *p);

/* 1 when any byte of the current response has been seen. */
int kb_resp_started(const struct kb_resp *p);

/* After DONE: which checks failed. */
static inline int kb_resp_status_ok(const struct kb_resp *p)
{
    const struct kb_resp_expect *e = p->expect;
    return e->status_hi ? p->status >= e->status && p->status <= e->status_hi
                        : p->status == e->status;
}
static inline int kb_resp_ct_ok(const struct kb_resp *p)
{
    return !p->expect->content_type || (p->ct_seen && p->ct_ok);
}
static inline int kb_resp_header_ok(const struct kb_resp *p)
{
    return !p->expect->header_name || p->header_ok;
}
int kb_resp_body_ok(const struct kb_resp *p);

#endif
