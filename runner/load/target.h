/* target.h -- what one load sends and what it counts as right: the URL's address, the
 * request bytes (with the user's own headers) and the expected response.
 *
 * The expectation is the contract route's when --route names one, or when no --expect-*
 * is given and the URL's path is a route's; otherwise it is the user's: a status (default
 * any 2xx), and optionally an exact body from a file and one header with its value. A route
 * and an --expect-* together are refused: one of them would be silently ignored.
 *
 * Every text given here goes into the request or is compared as it stands, so it is
 * checked first: a header with a CR, LF or other control byte would split the request, and
 * the headers that decide framing or the connection (Connection, Content-Length,
 * Transfer-Encoding) are the client's own. */
#ifndef KB_TARGET_H
#define KB_TARGET_H

#include <netinet/in.h>
#include <regex.h>
#include <stddef.h>

#include "runner/load/http_resp.h"

struct kb_contract;

#define KB_TARGET_HEADERS_MAX 32
#define KB_TARGET_BODY_MAX (16 << 20)    /* --expect-body: compared in place, kept in memory */

struct kb_target_spec {
    const char *url;                     /* http://HOST[:PORT]/PATH, IPv4 */
    const char *route;                   /* --route NAME, or NULL */
    const char *headers[KB_TARGET_HEADERS_MAX];   /* -H 'Name: value', in order */
    int nheaders;
    const char *expect_status;           /* "2xx" or a code 200..299; NULL: 2xx */
    const char *expect_body_file;        /* NULL, or the exact body every response carries */
    const char *expect_header;           /* NULL, or "Name: value" every response carries */
};

struct kb_target {
    struct sockaddr_in addr;
    char host[256];                      /* the Host header: the URL's authority */
    const char *route;                   /* the contract route checked, NULL when the user's */
    char *request;                       /* "GET PATH HTTP/1.1" with every header */
    size_t request_len;
    struct kb_resp_expect expect;
    char expectation[320];               /* the expectation in words, for summaries */
    regex_t re;
    int have_re;
    char *body;                          /* --expect-body's bytes */
    char header_name[128], header_value[512];
};

/* 0, or -1 with err saying which argument is wrong and why (nothing is sent here: the
 * address is resolved, the file read). The contract is only read. kb_target_close() after
 * either outcome. */
int kb_target_open(struct kb_target *t, const struct kb_target_spec *s,
                   const struct kb_contract *ct, char *err, size_t errlen);
void kb_target_close(struct kb_target *t);

/* 1 when the address is in 127.0.0.0/8. */
int kb_target_loopback(const struct kb_target *t);

/* The contract route whose path is the URL's (query and fragment left out), or NULL. */
const char *kb_target_route_of_url(const struct kb_contract *ct, const char *url);

#endif
