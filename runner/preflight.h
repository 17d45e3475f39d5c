/* preflight.h -- a tiny blocking HTTP/1.1 client that checks one route against the contract.
 *
 * Used before a runtime's points (preflight) and after each point (postflight); waiting
 * until a fixture accepts connections is spawn.h's. One request per connection, with a deadline; it
 * reads exactly Content-Length bytes of body. Never prints. The plain functions talk to
 * 127.0.0.1; the _at ones to an IPv4 host (the curve's --target with a remote fixture;
 * NULL = 127.0.0.1). */
#ifndef KB_PREFLIGHT_H
#define KB_PREFLIGHT_H

#include "contract.h"

#include <stddef.h>

struct kb_http_reply {
    int status;
    char content_type[128];
    int has_length, has_date, has_server;
    char body[4096];
    size_t body_len;
};

/* GET path from 127.0.0.1:port. 0, or -1 with the reason in err. */
int kb_http_get(int port, const char *path, int timeout_ms, struct kb_http_reply *out,
                char *err, size_t errlen);

int kb_http_get_at(const char *host, int port, const char *path, int timeout_ms,
                   struct kb_http_reply *out, char *err, size_t errlen);

/* 0 when the reply matches the route exactly (status, Content-Type, body or body_regex,
 * the required headers); -1 with what differs in reason. */
int kb_preflight_match(const struct kb_route *r, const struct kb_http_reply *rep, char *reason,
                       size_t reasonlen);

/* GET the route and match it. 0 or -1 with the reason. */
int kb_preflight_route(int port, const struct kb_route *r, char *reason, size_t reasonlen);
int kb_preflight_route_at(const char *host, int port, const struct kb_route *r, char *reason,
                          size_t reasonlen);

#endif
