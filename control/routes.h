/* routes.h -- the control server's responses: the contract's literal-body routes rendered
 * once into complete HTTP/1.1 response bytes (status line, Server, Date, Content-Type,
 * Content-Length, body), re-rendered when the second changes so Date stays current.
 * No I/O. kbc_routes_init builds, kbc_routes_free releases; lookups return bytes owned by
 * the table, valid until the next kbc_routes_tick that changes the second. */
#ifndef KBC_ROUTES_H
#define KBC_ROUTES_H

#include <stddef.h>
#include <time.h>

#include "contract/contract.h"

#define KBC_MAX_ROUTES 16
#define KBC_DATE_LEN 29   /* "Sun, 06 Nov 1994 08:49:37 GMT" */

struct kbc_response {
    char *path;           /* owned */
    char *content_type;   /* owned */
    char *body;           /* owned */
    size_t body_len;
    int status;
    char *bytes;          /* owned: the whole response */
    size_t len;
    size_t date_off;      /* where the Date value sits in bytes */
};

struct kbc_routes {
    struct kbc_response r[KBC_MAX_ROUTES];
    size_t n;
    struct kbc_response not_found, bad_request;
    time_t second;
};

/* 0, or -1 with err set. Routes whose body is a regex (db) are not served (404). */
int kbc_routes_init(struct kbc_routes *t, const struct kb_contract *c, char *err, size_t errlen);
void kbc_routes_free(struct kbc_routes *t);

/* Refresh the Date in every response when `now` is a new second. */
void kbc_routes_tick(struct kbc_routes *t, time_t now);

/* The response for a GET of path[0..len), or the 404 one. */
const struct kbc_response *kbc_routes_find(const struct kbc_routes *t, const char *path, size_t len);

#endif
