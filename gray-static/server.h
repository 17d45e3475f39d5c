/* server.h -- gray-static's HTTP server: one libmicrohttpd daemon, one loop, one route table.
 *
 * gs_server_new() reads a config and registers the built-in routes; other modules add theirs
 * with gs_server_add_route() before gs_server_start(). gs_server_run() drives everything on
 * the calling thread until gs_server_stop() (or SIGTERM/SIGINT after gs_server_catch_signals)
 * and then shuts the daemon down. The server owns the loop, the daemon, the table and every
 * gs_request; a route owns req->ctx and frees it in req->on_done. */
#ifndef GS_SERVER_H
#define GS_SERVER_H

#include "gray-static/loop.h"
#include "gray-static/routes.h"

#include <stdio.h>

#define GS_SERVER_NAME "gray-static"
#define GS_SERVER_VERSION "0.1.0"
/* MHD's own connection limit is conn_limit plus this: room for the connections the server
 * has just shut to make way for new ones, until MHD has closed them (conns.h). */
#define GS_CONN_SPARE 64

struct gs_conn;

/* Who runs libmicrohttpd's event loop (see the measurement note in server.c). */
enum gs_loop_kind {
    GS_LOOP_EPOLL,          /* ours: MHD's epoll fd in our epoll, MHD_run on readiness (default) */
    GS_LOOP_MHD_EPOLL,      /* MHD's internal thread, epoll */
    GS_LOOP_MHD_POLL,       /* MHD's internal thread, poll */
    GS_LOOP_MHD_SELECT,     /* MHD's internal thread, select */
};

struct gs_config {
    const char *bind;       /* numeric IPv4 or IPv6 address; default "127.0.0.1" */
    int port;               /* 0: an ephemeral port, read back with gs_server_port */
    enum gs_loop_kind loop;
    unsigned conn_limit;    /* connections kept; past it the longest waiting one is shut */
    unsigned backlog;       /* MHD_OPTION_LISTEN_BACKLOG_SIZE */
    size_t conn_memory;     /* MHD_OPTION_CONNECTION_MEMORY_LIMIT: bytes per connection */
    unsigned idle_timeout_s; /* MHD_OPTION_CONNECTION_TIMEOUT, and the most a connection may
                                wait for a request line however it trickles; 0: none */
    unsigned head_timeout_s; /* request line to the whole request, however it trickles; 0: none */
    int turbo;              /* MHD_USE_TURBO */
    FILE *log;              /* MHD's error messages, or NULL for none */
};

/* One request in flight. Owned by the server from the request line until MHD says it is
 * finished; then on_done (if set) runs and the request is freed. */
struct gs_request {
    struct MHD_Connection *conn;
    struct gs_server *server;
    const struct gs_route *route;  /* NULL for 404 / 405 */
    const char *method;            /* owned by MHD, valid until the request finishes; NULL
                                      until the head is in (no handler sees that) */
    const char *url;
    void *ctx;                     /* the route's per-request state, NULL at first */
    /* Called once when MHD finishes the request: toe is MHD_REQUEST_TERMINATED_COMPLETED_OK,
     * or why it ended early (client gone, timeout, daemon shutdown). Frees ctx. */
    void (*on_done)(struct gs_request *req, enum MHD_RequestTerminationCode toe);
    int suspended;                 /* set by gs_request_suspend, cleared by _resume */
    int responded;                 /* a response was queued (gs_respond) */
    /* internal to server.c */
    struct gs_conn *tracked;       /* the connection's entry in the server's table, or NULL */
    int abandoned;                 /* resumed by the shutdown: closed, handler not called */
    unsigned line_refusal;         /* the request line's status to refuse with, or 0 */
    int heading;                   /* on the server's heads list: line in, first call not yet */
    struct gs_request *prev, *next; /* on the heads list, then on the parked list while suspended */
};

/* How gs_respond treats body: static for the process (never copied, never freed, its bytes
 * never change: the server then queues one response built per second, its Date's, for every
 * request in that second), malloc'd and handed to MHD (freed with free() after sending), or
 * copied. */
enum gs_body { GS_BODY_STATIC, GS_BODY_FREE, GS_BODY_COPY };

void gs_config_defaults(struct gs_config *c);
/* "epoll", "mhd-epoll", "poll", "select" -> kind. 0, or -1 when unknown. */
int gs_loop_kind_parse(const char *s, enum gs_loop_kind *k);
const char *gs_loop_kind_name(enum gs_loop_kind k);

/* NULL with the reason in err. The config is copied (bind and log must outlive the server). */
struct gs_server *gs_server_new(const struct gs_config *c, char *err, size_t errlen);
/* Frees everything; stops the daemon if gs_server_run did not. */
void gs_server_free(struct gs_server *s);

/* Add a route (before gs_server_start). 0, or -1 with the reason in err. */
int gs_server_add_route(struct gs_server *s, const struct gs_route *r, char *err, size_t errlen);
/* Called after the loop stops and before the daemon does: resume your suspended requests
 * here if they should still be answered (their handler runs once more). Requests still
 * suspended after the hooks are resumed by the server and closed without a handler call
 * (on_done still runs). At most 8 hooks. */
int gs_server_on_stop(struct gs_server *s, void (*cb)(void *arg), void *arg);
/* The loop every module shares; valid from gs_server_new to gs_server_free. */
struct gs_loop *gs_server_loop(struct gs_server *s);

/* Block SIGTERM and SIGINT in the calling thread (call it before gs_server_start and before
 * creating threads, so that every thread inherits the mask) and stop the loop when one
 * arrives. 0, or -1 with the reason in err. */
int gs_server_catch_signals(struct gs_server *s, char *err, size_t errlen);
/* Bind and start the daemon. 0, or -1 with the reason in err. */
int gs_server_start(struct gs_server *s, char *err, size_t errlen);
/* The bound port (after gs_server_start). */
int gs_server_port(const struct gs_server *s);
/* Serve until stopped, then run the stop hooks and stop the daemon. 0, or -1 with err. */
int gs_server_run(struct gs_server *s, char *err, size_t errlen);
/* Make gs_server_run return. Safe from any thread and from a signal handler. */
void gs_server_stop(struct gs_server *s);

/* Queue a response with Content-Type, Content-Length, Date and Server. Call it from a
 * handler. Returns MHD's verdict (MHD_NO closes the connection). A handler that returns
 * MHD_YES having neither responded nor suspended its request is answered 500 by the server
 * (a handler with no response never leaves its client waiting). */
enum MHD_Result gs_respond(struct gs_request *req, unsigned status, const char *content_type,
                           const void *body, size_t len, enum gs_body how);
/* Park the request (no more handler calls until resumed) / wake it again: the handler will
 * be called once more from the loop, where it queues its response. */
void gs_request_suspend(struct gs_request *req);
void gs_request_resume(struct gs_request *req);

#endif
