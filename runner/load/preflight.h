/* preflight.h -- a tiny blocking HTTP/1.1 client that checks one route against the contract.
 *
 * Used before a runtime's points (preflight), after each point (postflight) and by the soak and
 * the qualification to read /stats; waiting until a fixture accepts connections is spawn.h's.
 * One request per connection (kb_http_conn: many on one kept open), with a deadline.
 * Responses are read by the load generator's own parser (runner/load/http_resp.h:
 * incremental, Content-Length, chunked or until close, any split) and judged by its checks
 * (status, Content-Type compared case-insensitively, exact body or body_regex), so preflight
 * cannot fail a response the load generator would pass for how it was framed or read. Beside
 * those checks preflight holds the contract's required headers (Content-Length, Date, Server:
 * headers.required in contract/contract.json), which the load generator does not look at per
 * request. Never prints. The plain functions talk to 127.0.0.1; the _at ones to an IPv4 host
 * (the engine host's address for a fixture elsewhere; NULL = 127.0.0.1). */
#ifndef KB_PREFLIGHT_H
#define KB_PREFLIGHT_H

#include <regex.h>
#include <stddef.h>

#include "contract/contract.h"
#include "runner/load/http_resp.h"

/* One response as preflight keeps it: the parser's verdict against the route (when read
 * for one) and what a reason shows. */
struct kb_http_reply {
    int status;
    char content_type[128];
    int has_length, has_date, has_server;
    char body[4096];           /* de-chunked, NUL-terminated, cut at 4095 bytes */
    size_t body_len;
    int body_truncated;        /* more body came than body[] holds */
    int judged;                /* read against a route: the three below are its verdict */
    int status_ok, ct_ok, body_ok;
};

/* Reading one response, fed in pieces as they arrive (the socket code below, or a test). */
struct kb_http_read {
    struct kb_resp parser;
    struct kb_resp_keep keep;
    struct kb_resp_expect expect;
    regex_t re;
    struct kb_http_reply *out;
};

/* Ready rd to read into out a response to route r (NULL: any response, judged against
 * nothing). 0, or -1 with err when r's body_regex does not compile. kb_http_read_free
 * after a 0. */
int kb_http_read_init(struct kb_http_read *rd, const struct kb_route *r,
                      struct kb_http_reply *out, char *err, size_t errlen);
/* KB_RESP_DONE once the response is complete (out filled), KB_RESP_MORE for more bytes,
 * KB_RESP_MALFORMED with rd->parser.error. Bytes past the response are ignored. */
enum kb_resp_rc kb_http_read_feed(struct kb_http_read *rd, const char *buf, size_t len);
/* The peer closed: DONE for a body delimited by the close, else what kb_resp_eof says. */
enum kb_resp_rc kb_http_read_eof(struct kb_http_read *rd);
void kb_http_read_free(struct kb_http_read *rd);

/* GET path from 127.0.0.1:port. 0, or -1 with the reason in err. */
int kb_http_get(int port, const char *path, int timeout_ms, struct kb_http_reply *out,
                char *err, size_t errlen);

int kb_http_get_at(const char *host, int port, const char *path, int timeout_ms,
                   struct kb_http_reply *out, char *err, size_t errlen);

/* One connection kept open for repeated GETs (the qualification's /stats sampler: a reader
 * that opened a connection per read would itself move the descriptor count it samples).
 * Opened by the first get; any failure closes it and the next get opens a new one (opened
 * counts them). A reused connection that fails is retried once on a fresh one: the server
 * may close an idle connection. */
struct kb_http_conn {
    char host[64];
    int port, fd;
    long opened;
};
void kb_http_conn_init(struct kb_http_conn *c, const char *host, int port);
/* GET path on the connection, the reply judged against nothing. 0, or -1 with err. */
int kb_http_conn_get(struct kb_http_conn *c, const char *path, int timeout_ms,
                     struct kb_http_reply *out, char *err, size_t errlen);
void kb_http_conn_close(struct kb_http_conn *c);

/* 0 when a reply read for route r matches it exactly (the parser's status, Content-Type
 * and body checks, then the required headers); -1 with what differs in reason (also for a
 * reply not read against a route). */
int kb_preflight_match(const struct kb_route *r, const struct kb_http_reply *rep, char *reason,
                       size_t reasonlen);

/* GET the route and match it. 0 or -1 with the reason. */
int kb_preflight_route(int port, const struct kb_route *r, char *reason, size_t reasonlen);
int kb_preflight_route_at(const char *host, int port, const struct kb_route *r, char *reason,
                          size_t reasonlen);

#endif
