/* routes.h -- gray-static's route table: (method, path) -> handler, or 404 / 405.
 *
 * Matching is pure (no I/O, no MHD calls) so it is unit-tested on its own. A handler runs on
 * the loop thread once the request is complete (headers and any body read), and again after
 * every MHD_resume_connection of its request. It either queues a response (gs_respond) or
 * suspends the connection (gs_request_suspend) and returns MHD_YES; MHD_NO closes the
 * connection. The table copies each entry; the strings and arg must outlive it. */
#ifndef GS_ROUTES_H
#define GS_ROUTES_H

#include <stddef.h>
#include <stdint.h>
#include <sys/types.h>
#include <sys/socket.h>
#include <microhttpd.h>

#if MHD_VERSION < 0x00097002
enum MHD_Result { MHD_NO = 0, MHD_YES = 1 }; /* older headers return int */
#endif

struct gs_request;
typedef enum MHD_Result (*gs_handler)(struct gs_request *req);

/* The handler suspends its connection: it needs the application-owned loop (--loop=epoll). */
#define GS_ROUTE_ASYNC 1u

struct gs_route {
    const char *method;  /* "GET" */
    const char *path;    /* exact match on the path, query string excluded */
    gs_handler handler;
    void *arg;           /* the route's own context, handed back in req->route->arg */
    unsigned flags;      /* GS_ROUTE_* */
};

struct gs_routes {
    struct gs_route *v;
    size_t n, cap;
};

enum gs_match { GS_MATCH_OK, GS_MATCH_NOT_FOUND, GS_MATCH_BAD_METHOD };

void gs_routes_init(struct gs_routes *t);
void gs_routes_free(struct gs_routes *t);
/* 0; -1 when out of memory or (method, path) is already taken (errno EEXIST). */
int gs_routes_add(struct gs_routes *t, const struct gs_route *r);
/* GS_MATCH_OK with *out set; otherwise *out is NULL. */
enum gs_match gs_routes_match(const struct gs_routes *t, const char *method, const char *path,
                              const struct gs_route **out);
/* The Allow header value for path ("GET" or "GET, POST"), written into buf; returns the
 * number of methods found (0: unknown path, buf ""). */
size_t gs_routes_allow(const struct gs_routes *t, const char *path, char *buf, size_t len);

#endif
