/* server.c -- the libmicrohttpd daemon, its request lifecycle, and who runs its event loop.
 *
 * Design. By default the application owns the event loop (loop.c): MHD is started with
 * MHD_USE_EPOLL and no internal thread, its epoll fd (MHD_DAEMON_INFO_EPOLL_FD) is one fd in
 * our epoll set, and MHD_run runs once per loop iteration after it became readable, after
 * gs_loop_wake (a resumed connection), or when MHD_get_timeout's bound expires. One thread
 * serves every connection; other modules (the PostgreSQL route) put their sockets on the same
 * loop and park requests with MHD_suspend_connection (MHD_ALLOW_SUSPEND_RESUME is always on).
 *
 * Why this loop (measured here with libmicrohttpd 0.9.75; command and figures in
 * gray-static/LOOP.md): MHD's internal epoll thread stalled (~25-240 req/s) when 256
 * connections opened at once; internal poll, internal select and this loop did not, and their
 * server CPU per request was the same within the shared host's noise (7-9 us). Of those,
 * only this loop lets another module's sockets (the PostgreSQL route) and MHD share one
 * thread without locks, and it has neither select's FD_SETSIZE ceiling nor poll's scan of
 * every descriptor per wake-up. MHD_USE_TURBO gave no consistent gain, so it is a flag. The
 * internal-thread loops stay selectable (--loop) so that the comparison can be repeated.
 *
 * Request lifecycle. MHD calls on_request_line when a request line is in (the gs_request is
 * allocated then, and the raw target checked), on_request first when the headers are in:
 * we only check them then.
 * Answering on that first call makes 0.9.75 mark the connection "must close" (it stops
 * reading the request), which is what a refused head gets (hdrcheck.h); every other response
 * is queued on a later call, once the request (and any body, which no route reads) is
 * complete. MHD_OPTION_NOTIFY_COMPLETED ends the request: the route's on_done runs and the
 * gs_request is freed.
 *
 * Responses. Every response is built with libmicrohttpd's own objects. One whose body is
 * static (GS_BODY_STATIC: /plaintext, 404) and that has no extra header is the same for every
 * request in a second, so it is built once that second and queued on each of them (MHD counts
 * the references); any other (/json, serialised per request) is built per request. Cost per
 * response, measured: gray-static/PERF.md.
 *
 * Hostile peers (conns.h). MHD bounds a connection only by an idle timeout that every byte
 * restarts, and at its connection limit stops accepting, so slow or silent peers could hold
 * every slot. MHD_OPTION_NOTIFY_CONNECTION and the callbacks above keep a table of who waits
 * for a request, and since when; a loop timer closes those past their deadlines, and a
 * connection over the limit makes the longest waiting one close. MHD has no call to close a
 * connection it owns, so "close" is shutdown() of its socket: MHD reads the end and closes
 * it itself. In the epoll loops each socket is also watched (a second epoll set, in our
 * loop) for the peer's FIN: MHD's edge-triggered epoll misses a FIN that came with the
 * request, and the socket would sit in CLOSE_WAIT until the idle timeout, so such a
 * connection is shut for reading once it waits, which MHD sees as a fresh edge. */
#define _GNU_SOURCE
#include "gray-static/server.h"
#include "gray-static/conns.h"
#include "gray-static/date.h"
#include "gray-static/hdrcheck.h"
#include "gray-static/hello.h"
#include "gray-static/mhd09.h"

#include <errno.h>
#include <limits.h>
#include <netdb.h>
#include <pthread.h>
#include <signal.h>
#include <stdarg.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>
#include <sys/epoll.h>
#include <sys/signalfd.h>
#include <sys/socket.h>
#include <time.h>
#include <unistd.h>

#define GS_MAX_STOP_HOOKS 8
#define GS_TICK_MS 100 /* how often deadlines are swept and departed peers poked */

/* Client parsing left to hdrcheck.c: 0.9.75's strict mode (MHD_OPTION_STRICT_FOR_CLIENT 1)
 * answers an HTTP/1.1 request without Host with its 400 status line and headers twice (its
 * error path builds the head, then its reply state builds it again), so level 0 here and
 * the Host requirement is ours (a 400 sent once). Level 0 also lets a space into the target,
 * which hdrcheck.c refuses as Go and nginx do. libmicrohttpd 1.0 renamed the option, and its
 * default level 0 answers 400 for a missing Host, a NUL in a value, whitespace before a
 * colon and a line without one; level 1 also refuses bare-LF line ends, which RFC 9112 2.2
 * lets a server accept, so 1.0 gets level 0 too (tested on 1.0.0 and 1.0.1: tests/e2e/mhd1). */
#if MHD_VERSION >= 0x00097701
#define GS_STRICT_OPTION MHD_OPTION_CLIENT_DISCIPLINE_LVL
#define GS_STRICT_LEVEL 0
#else
#define GS_STRICT_OPTION MHD_OPTION_STRICT_FOR_CLIENT
#define GS_STRICT_LEVEL 0
#endif

/* A static body's whole response (status, headers, body), built once a second, when its
 * Date changes, and queued on every request for that body in that second. MHD counts a
 * response's references, so one replaced here lives on until its last connection is done.
 * Keyed by the body's address: GS_BODY_STATIC bodies live as long as the process. */
#define GS_CACHED_RESPONSES 4
struct gs_cached {
    const void *body;          /* NULL: a free slot */
    size_t len;
    unsigned status;
    const char *ctype;
    time_t sec;                /* the second its Date names */
    struct MHD_Response *r;
};

struct gs_stop_hook {
    void (*cb)(void *arg);
    void *arg;
};

struct gs_server {
    struct gs_config cfg;
    struct gs_loop *loop;
    struct MHD_Daemon *mhd;
    int mhd_fd;        /* MHD's epoll fd while it is in our loop, else -1 */
    int sigfd;         /* signalfd for SIGTERM/SIGINT, or -1 */
    struct gs_routes routes;
    struct gs_date_cache date;
    struct gs_cached cached[GS_CACHED_RESPONSES];
    struct gs_stop_hook hooks[GS_MAX_STOP_HOOKS];
    size_t nhooks;
    struct gs_request *parked; /* suspended requests, newest first */
    struct gs_request *heads;  /* requests from their request line to their head's first call */
    struct gs_conns conns;     /* every connection MHD holds (conns.h) */
    int threaded;              /* MHD runs its own thread: conns is shared, under mu */
    pthread_mutex_t mu;
    int fin_ep;                /* epoll set watching sockets for the peer's FIN, or -1 */
    long tick;                 /* the loop timer sweeping conns, or 0 */
};

static const char *const loop_names[] = {
    [GS_LOOP_EPOLL] = "epoll",
    [GS_LOOP_MHD_EPOLL] = "mhd-epoll",
    [GS_LOOP_MHD_POLL] = "poll",
    [GS_LOOP_MHD_SELECT] = "select",
};

void gs_config_defaults(struct gs_config *c)
{
    *c = (struct gs_config){
        .bind = "127.0.0.1",
        .port = 0,
        .loop = GS_LOOP_EPOLL,
        .conn_limit = 4096,      /* 16x the comparison's 256 connections */
        .backlog = 1024,         /* 256 connections may arrive in one burst */
        /* MHD zeroes a connection's whole pool for every request (about 1.5x its size:
         * the read buffer's shrink and the reset), so its size is paid per response: 8 KiB
         * cost 0.6-1.0 us less than MHD's default 32 KiB at 60,000 req/s, and 256 pools
         * touch 2 MiB, not 8. A head of up to about 7.9 KB in one field, 5 KB in many, is
         * served; a longer one gets 431 (gray-static/PERF.md). */
        .conn_memory = 8 * 1024,
        .idle_timeout_s = 60,
        .head_timeout_s = 10,    /* as the go fixture's ReadHeaderTimeout */
        .turbo = 0,
        .log = NULL,
    };
}

int gs_loop_kind_parse(const char *s, enum gs_loop_kind *k)
{
    for (size_t i = 0; i < sizeof(loop_names) / sizeof(loop_names[0]); i++)
        if (!strcmp(s, loop_names[i])) {
            *k = (enum gs_loop_kind)i;
            return 0;
        }
    return -1;
}

const char *gs_loop_kind_name(enum gs_loop_kind k)
{
    return (unsigned)k < sizeof(loop_names) / sizeof(loop_names[0]) ? loop_names[k] : "?";
}

struct gs_server *gs_server_new(const struct gs_config *c, char *err, size_t errlen)
{
    struct gs_server *s = calloc(1, sizeof(*s));

    if (!s) {
        snprintf(err, errlen, "out of memory");
        return NULL;
    }
    s->cfg = *c;
    s->mhd_fd = s->sigfd = s->fin_ep = -1;
    pthread_mutex_init(&s->mu, NULL);
    gs_routes_init(&s->routes);
    gs_date_cache_init(&s->date);
    if (!(s->loop = gs_loop_new())) {
        snprintf(err, errlen, "event loop: %s", strerror(errno));
        goto fail;
    }
    if (gs_hello_add_routes(s, err, errlen) < 0)
        goto fail;
    return s;
fail:
    gs_server_free(s);
    return NULL;
}

int gs_server_add_route(struct gs_server *s, const struct gs_route *r, char *err, size_t errlen)
{
    if (s->mhd) {
        snprintf(err, errlen, "route %s %s: the server has already started", r->method, r->path);
        return -1;
    }
    if (gs_routes_add(&s->routes, r) < 0) {
        snprintf(err, errlen, "route %s %s: %s", r->method ? r->method : "?",
                 r->path ? r->path : "?", strerror(errno));
        return -1;
    }
    return 0;
}

int gs_server_on_stop(struct gs_server *s, void (*cb)(void *arg), void *arg)
{
    if (s->nhooks == GS_MAX_STOP_HOOKS)
        return -1;
    s->hooks[s->nhooks++] = (struct gs_stop_hook){ cb, arg };
    return 0;
}

struct gs_loop *gs_server_loop(struct gs_server *s)
{
    return s->loop;
}

/* ---- responses ---- */

static struct MHD_Response *make_response(const void *body, size_t len, enum gs_body how)
{
    switch (how) {
    case GS_BODY_STATIC:
#if MHD_VERSION >= 0x00097701
        return MHD_create_response_from_buffer_static(len, body);
#else
        return MHD_create_response_from_buffer(len, (void *)body, MHD_RESPMEM_PERSISTENT);
#endif
    case GS_BODY_FREE:
        return MHD_create_response_from_buffer_with_free_callback(len, (void *)body, &free);
    case GS_BODY_COPY:
        return MHD_create_response_from_buffer(len, (void *)body, MHD_RESPMEM_MUST_COPY);
    }
    return NULL;
}

/* Content-Type, Date (ours, cached per second: it also stops MHD formatting its own per
 * response), Server and one optional header, in the order the contract's bytes have them.
 * A Connection header goes first: MHD puts it first on the wire anyway, and 0.9.75 forgets
 * an earlier Date when one is added (it assigns its header flags), then adds its own Date
 * beside ours. MHD_YES, or MHD_NO when out of memory. */
static enum MHD_Result add_headers(struct MHD_Response *r, const char *ctype, const char *date,
                                   const char *hname, const char *hval)
{
    int first = hname && !strcasecmp(hname, MHD_HTTP_HEADER_CONNECTION);

    if ((!first || MHD_add_response_header(r, hname, hval) == MHD_YES) &&
        MHD_add_response_header(r, MHD_HTTP_HEADER_CONTENT_TYPE, ctype) == MHD_YES &&
        MHD_add_response_header(r, MHD_HTTP_HEADER_DATE, date) == MHD_YES &&
        MHD_add_response_header(r, MHD_HTTP_HEADER_SERVER, GS_SERVER_NAME) == MHD_YES &&
        (!hname || first || MHD_add_response_header(r, hname, hval) == MHD_YES))
        return MHD_YES;
    return MHD_NO;
}

/* The slot for this static response: its own, else a free one, else the oldest. */
static struct gs_cached *cached_slot(struct gs_server *s, unsigned status, const char *ctype,
                                     const void *body, size_t len)
{
    struct gs_cached *c = s->cached, *oldest = &s->cached[0];

    for (size_t i = 0; i < GS_CACHED_RESPONSES; i++, c++) {
        if (!c->body || (c->body == body && c->len == len && c->status == status &&
                         c->ctype == ctype))
            return c;
        if (c->sec < oldest->sec)
            oldest = c;
    }
    return oldest;
}

/* A static body without an extra header: the whole response is the same for every request
 * in a second, so it is built once that second (see struct gs_cached). */
static enum MHD_Result respond_cached(struct gs_request *req, unsigned status, const char *ctype,
                                      const void *body, size_t len)
{
    struct gs_server *s = req->server;
    time_t now = time(NULL);
    struct gs_cached *c = cached_slot(s, status, ctype, body, len);

    if (c->body != body || c->sec != now || !c->r) {
        struct MHD_Response *r = make_response(body, len, GS_BODY_STATIC);
        if (!r)
            return MHD_NO;
        if (add_headers(r, ctype, gs_date_get(&s->date, now), NULL, NULL) != MHD_YES) {
            MHD_destroy_response(r);
            return MHD_NO;
        }
        if (c->r)
            MHD_destroy_response(c->r); /* connections still sending it hold their own */
        *c = (struct gs_cached){ body, len, status, ctype, now, r };
    }
    req->responded = 1;
    return MHD_queue_response(req->conn, status, c->r);
}

static void drop_cached(struct gs_server *s)
{
    for (size_t i = 0; i < GS_CACHED_RESPONSES; i++)
        if (s->cached[i].r)
            MHD_destroy_response(s->cached[i].r);
    memset(s->cached, 0, sizeof(s->cached));
}

static enum MHD_Result respond(struct gs_request *req, unsigned status, const char *ctype,
                               const void *body, size_t len, enum gs_body how,
                               const char *hname, const char *hval)
{
    struct MHD_Response *r;
    enum MHD_Result ret = MHD_NO;

    if (how == GS_BODY_STATIC && !hname)
        return respond_cached(req, status, ctype, body, len);
    if (!(r = make_response(body, len, how))) {
        if (how == GS_BODY_FREE)
            free((void *)body);
        return MHD_NO;
    }
    if (add_headers(r, ctype, gs_date_get(&req->server->date, time(NULL)), hname, hval) == MHD_YES) {
        req->responded = 1;
        ret = MHD_queue_response(req->conn, status, r);
    }
    MHD_destroy_response(r); /* MHD holds its own reference while sending */
    return ret;
}

enum MHD_Result gs_respond(struct gs_request *req, unsigned status, const char *content_type,
                           const void *body, size_t len, enum gs_body how)
{
    return respond(req, status, content_type, body, len, how, NULL, NULL);
}

/* A request is on one of the server's lists at a time, if any: heads, then parked. */
static void list_push(struct gs_request **first, struct gs_request *req)
{
    req->next = *first;
    req->prev = NULL;
    if (*first)
        (*first)->prev = req;
    *first = req;
}

static void list_del(struct gs_request **first, struct gs_request *req)
{
    if (req->prev)
        req->prev->next = req->next;
    else
        *first = req->next;
    if (req->next)
        req->next->prev = req->prev;
    req->next = req->prev = NULL;
}

static void unpark(struct gs_request *req)
{
    list_del(&req->server->parked, req);
}

/* Suspended requests are kept on a list: MHD aborts the process when it is stopped with a
 * connection still suspended, so stop_daemon resumes whatever the routes left parked. */
void gs_request_suspend(struct gs_request *req)
{
    struct gs_server *s = req->server;

    if (req->suspended)
        return;
    req->suspended = 1;
    list_push(&s->parked, req);
    MHD_suspend_connection(req->conn);
}

void gs_request_resume(struct gs_request *req)
{
    struct gs_server *s = req->server;

    if (!req->suspended)
        return;
    req->suspended = 0;
    unpark(req);
    MHD_resume_connection(req->conn);
    gs_loop_wake(s->loop); /* MHD_run must see the resumption this iteration */
}

/* ---- the connection table (conns.h) ---- */

/* Deadlines are seconds; the coarse clock (a few ms) is the cheapest there is per request. */
static long long coarse_ms(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC_COARSE, &ts);
    return (long long)ts.tv_sec * 1000 + ts.tv_nsec / 1000000;
}

static void conns_lock(struct gs_server *s)
{
    if (s->threaded)
        pthread_mutex_lock(&s->mu);
}

static void conns_unlock(struct gs_server *s)
{
    if (s->threaded)
        pthread_mutex_unlock(&s->mu);
}

/* Never close(): MHD owns the descriptor. It reads the end on its next look and closes the
 * connection itself; under the lock (threaded loops), MHD cannot have closed it yet. */
static void shut_conn(void *arg, int fd, enum gs_conn_shut how)
{
    (void)arg;
    shutdown(fd, how == GS_SHUT_EVICT ? SHUT_RDWR : SHUT_RD);
}

/* One event when the peer's FIN (or an error) arrives, even if it came before this call. */
static void watch_fin(struct gs_server *s, struct gs_conn *c)
{
    struct epoll_event ev = { .events = EPOLLRDHUP | EPOLLONESHOT, .data.ptr = c };

    /* On failure the connection is only without pokes; its deadlines still hold. */
    if (s->fin_ep >= 0 && c->state != GS_CONN_EVICTED)
        epoll_ctl(s->fin_ep, EPOLL_CTL_ADD, c->fd, &ev);
}

static void on_connection(void *cls, struct MHD_Connection *conn, void **socket_context,
                          enum MHD_ConnectionNotificationCode code)
{
    struct gs_server *s = cls;
    struct gs_conn *c = *socket_context;
    const union MHD_ConnectionInfo *ci;

    conns_lock(s);
    if (code == MHD_CONNECTION_NOTIFY_STARTED) {
        c = NULL;
        if ((ci = MHD_get_connection_info(conn, MHD_CONNECTION_INFO_CONNECTION_FD)) &&
            (c = gs_conns_open(&s->conns, ci->connect_fd, coarse_ms())))
            watch_fin(s, c);
        *socket_context = c;
    } else if (c) {
        /* Before MHD closes the descriptor, and under the lock: no FIN event for c after. */
        if (s->fin_ep >= 0)
            epoll_ctl(s->fin_ep, EPOLL_CTL_DEL, c->fd, NULL);
        gs_conns_close(&s->conns, c);
        *socket_context = NULL;
    }
    conns_unlock(s);
}

/* The connection's request is whole (or refused): it is no longer waiting. */
static void conns_busy(struct gs_server *s, struct gs_request *req)
{
    if (!req->tracked)
        return;
    conns_lock(s);
    gs_conns_busy(&s->conns, req->tracked);
    conns_unlock(s);
}

static void on_tick(void *arg)
{
    struct gs_server *s = arg;

    conns_lock(s);
    gs_conns_sweep(&s->conns, coarse_ms());
    gs_conns_poke_fins(&s->conns);
    conns_unlock(s);
    s->tick = gs_loop_after(s->loop, GS_TICK_MS, on_tick, s);
}

static void on_fin_ready(void *arg, uint32_t events)
{
    struct gs_server *s = arg;
    struct epoll_event evs[64];
    int n;

    (void)events;
    /* Fetched and handled under one lock: a connection closed meanwhile is already out of
     * the set (on_connection), so every pointer here is live. More than 64 ready keep the
     * set readable for the next iteration. */
    conns_lock(s);
    n = epoll_wait(s->fin_ep, evs, sizeof(evs) / sizeof(evs[0]), 0);
    for (int i = 0; i < n; i++)
        gs_conns_fin(&s->conns, evs[i].data.ptr);
    conns_unlock(s);
}

/* ---- the request lifecycle ---- */

/* The route's handler, held to its contract: a response queued, or the request parked.
 * MHD would otherwise call it again at every turn of the loop and the client would wait
 * forever; a handler that forgot to answer is the server's fault, so 500. */
static enum MHD_Result run_handler(struct gs_request *req)
{
    static const char no_response[] = "Internal Server Error: the handler gave no response\n";
    enum MHD_Result r = req->route->handler(req);

    if (r != MHD_YES || req->responded || req->suspended)
        return r;
    if (req->server->cfg.log) {
        fprintf(req->server->cfg.log, "gray-static: %s %s: handler gave no response: 500\n",
                req->method, req->route->path);
        fflush(req->server->cfg.log);
    }
    return respond(req, MHD_HTTP_INTERNAL_SERVER_ERROR, "text/plain", no_response,
                   sizeof(no_response) - 1, GS_BODY_STATIC, NULL, NULL);
}

static enum MHD_Result dispatch(struct gs_server *s, struct gs_request *req)
{
    static const char not_found[] = "Not Found\n", bad_method[] = "Method Not Allowed\n";
    char allow[128];

    if (req->abandoned) /* resumed by the shutdown, not by its route: close it */
        return MHD_NO;
    if (req->route)
        return run_handler(req); /* called again after a resume */
    switch (gs_routes_match(&s->routes, req->method, req->url, &req->route)) {
    case GS_MATCH_OK:
        return run_handler(req);
    case GS_MATCH_BAD_METHOD:
        gs_routes_allow(&s->routes, req->url, allow, sizeof(allow));
        return respond(req, MHD_HTTP_METHOD_NOT_ALLOWED, "text/plain", bad_method,
                       sizeof(bad_method) - 1, GS_BODY_STATIC, MHD_HTTP_HEADER_ALLOW, allow);
    case GS_MATCH_NOT_FOUND:
        break;
    }
    return respond(req, MHD_HTTP_NOT_FOUND, "text/plain", not_found, sizeof(not_found) - 1,
                   GS_BODY_STATIC, NULL, NULL);
}

static const char bad_request[] = "Bad Request\n"; /* every 400's body */

/* ---- heads libmicrohttpd 0.9 refuses itself (mhd09.h) ---- */

/* No lock: only MHD's callbacks touch the heads list, and every loop runs them on one
 * thread (ours, or MHD's one internal thread). */
static void heads_add(struct gs_server *s, struct gs_request *req)
{
    if (GS_MHD09_DOUBLES_ITS_ERRORS) {
        list_push(&s->heads, req);
        req->heading = 1;
    }
}

static void heads_del(struct gs_server *s, struct gs_request *req)
{
    if (req->heading) {
        list_del(&s->heads, req);
        req->heading = 0;
    }
}

/* MHD has refused the head it is parsing and is about to answer it twice. That head is the
 * one listed whose headers are in: MHD parses a head and makes its first call for it in one
 * step, so every other listed head is still arriving. */
static void answer_refusal_once(struct gs_server *s)
{
    const union MHD_ConnectionInfo *fd;

    for (struct gs_request *r = s->heads; r; r = r->next) {
        if (!MHD_get_connection_info(r->conn, MHD_CONNECTION_INFO_REQUEST_HEADER_SIZE) ||
            MHD_get_connection_info(r->conn, MHD_CONNECTION_INFO_HTTP_STATUS) ||
            !(fd = MHD_get_connection_info(r->conn, MHD_CONNECTION_INFO_CONNECTION_FD)))
            continue;
        heads_del(s, r);
        gs_mhd09_answer_once(fd->connect_fd, gs_date_get(&s->date, time(NULL)), GS_SERVER_NAME,
                             bad_request);
        return;
    }
}

/* MHD_OPTION_URI_LOG_CALLBACK: a request line is in. What it returns is the request's
 * *req_cls; NULL (out of memory) makes on_request close the connection. */
static void *on_request_line(void *cls, const char *uri, struct MHD_Connection *conn)
{
    struct gs_server *s = cls;
    const union MHD_ConnectionInfo *ci;
    struct gs_request *req = calloc(1, sizeof(*req));

    if (!req)
        return NULL;
    ci = MHD_get_connection_info(conn, MHD_CONNECTION_INFO_SOCKET_CONTEXT);
    /* the target as received: MHD decodes it before on_request sees it */
    *req = (struct gs_request){ .conn = conn, .server = s,
                                .line_refusal = uri ? gs_line_refusal(uri) : 400 };
    req->tracked = ci ? ci->socket_context : NULL;
    if (req->tracked) {
        conns_lock(s);
        gs_conns_head(&s->conns, req->tracked, coarse_ms());
        conns_unlock(s);
    }
    heads_add(s, req);
    return req;
}

/* A head refused as it arrives (hdrcheck.h): answered on this first call, so MHD reads no
 * more of it, and closed, since whatever follows cannot be framed. */
static enum MHD_Result refuse(struct gs_server *s, struct gs_request *req, unsigned status)
{
    static const char not_impl[] = "Not Implemented\n", too_large[] = "Content Too Large\n";
    const char *body = status == MHD_HTTP_NOT_IMPLEMENTED ? not_impl
                       : status == MHD_HTTP_CONTENT_TOO_LARGE ? too_large : bad_request;

    conns_busy(s, req);
    return respond(req, status, "text/plain", body, strlen(body), GS_BODY_STATIC,
                   MHD_HTTP_HEADER_CONNECTION, "close");
}

static enum MHD_Result on_request(void *cls, struct MHD_Connection *conn, const char *url,
                                  const char *method, const char *version,
                                  const char *upload_data, size_t *upload_data_size,
                                  void **req_cls)
{
    struct gs_server *s = cls;
    struct gs_request *req = *req_cls;
    unsigned status;

    (void)upload_data;
    if (!req)
        return MHD_NO;
    if (!req->method) { /* the head is in: see "Request lifecycle" above */
        heads_del(s, req);
        req->method = method;
        req->url = url;
        status = req->line_refusal ? req->line_refusal
                                   : gs_head_refusal(conn, s->cfg.conn_memory, method, version);
        return status ? refuse(s, req, status) : MHD_YES;
    }
    if (*upload_data_size) { /* no route reads a body: consume and drop it */
        *upload_data_size = 0;
        return MHD_YES;
    }
    conns_busy(s, req);
    return dispatch(s, req);
}

static void on_completed(void *cls, struct MHD_Connection *conn, void **req_cls,
                         enum MHD_RequestTerminationCode toe)
{
    struct gs_server *s = cls;
    struct gs_request *req = *req_cls;

    (void)conn;
    if (!req)
        return;
    heads_del(s, req); /* listed still: MHD refused the head itself, or the peer left first */
    if (req->tracked) { /* waits for its next request (or is about to be closed) */
        conns_lock(s);
        gs_conns_idle(&s->conns, req->tracked, coarse_ms());
        conns_unlock(s);
    }
    if (req->suspended) /* not expected from MHD; never leave a freed request listed */
        unpark(req);
    if (req->on_done)
        req->on_done(req, toe);
    free(req);
    *req_cls = NULL;
}

static void mhd_log(void *cls, const char *fmt, va_list ap)
{
    struct gs_server *s = cls;

    if (GS_MHD09_DOUBLES_ITS_ERRORS && gs_mhd09_is_refusal(fmt))
        answer_refusal_once(s);
    if (s->cfg.log)
        vfprintf(s->cfg.log, fmt, ap);
}

/* ---- the application-owned loop's hooks ---- */

static void on_mhd_ready(void *arg, uint32_t events)
{
    struct gs_server *s = arg;
    (void)events;
    gs_loop_wake(s->loop);
}

static long mhd_wait_ms(void *arg)
{
    struct gs_server *s = arg;
    MHD_UNSIGNED_LONG_LONG t;

    if (MHD_get_timeout(s->mhd, &t) != MHD_YES)
        return -1;
    return t > LONG_MAX ? LONG_MAX : (long)t;
}

static void mhd_run(void *arg)
{
    struct gs_server *s = arg;
    MHD_run(s->mhd);
}

/* ---- signals ---- */

static void on_signal(void *arg, uint32_t events)
{
    struct gs_server *s = arg;
    struct signalfd_siginfo si;

    (void)events;
    while (read(s->sigfd, &si, sizeof(si)) == (ssize_t)sizeof(si))
        ;
    gs_loop_stop(s->loop);
}

int gs_server_catch_signals(struct gs_server *s, char *err, size_t errlen)
{
    sigset_t set;
    int e;

    sigemptyset(&set);
    sigaddset(&set, SIGTERM);
    sigaddset(&set, SIGINT);
    if ((e = pthread_sigmask(SIG_BLOCK, &set, NULL)) != 0) {
        snprintf(err, errlen, "sigmask: %s", strerror(e));
        return -1;
    }
    if ((s->sigfd = signalfd(-1, &set, SFD_NONBLOCK | SFD_CLOEXEC)) < 0 ||
        gs_loop_add(s->loop, s->sigfd, EPOLLIN, on_signal, s) < 0) {
        snprintf(err, errlen, "signalfd: %s", strerror(errno));
        return -1;
    }
    return 0;
}

/* ---- start, run, stop ---- */

static int resolve_bind(const struct gs_config *c, struct sockaddr_storage *ss, int *v6,
                        char *err, size_t errlen)
{
    struct addrinfo hints = { .ai_flags = AI_NUMERICHOST | AI_PASSIVE, .ai_socktype = SOCK_STREAM };
    struct addrinfo *ai = NULL;
    int rc = getaddrinfo(c->bind, NULL, &hints, &ai);

    if (rc != 0) {
        snprintf(err, errlen, "--bind %s: %s", c->bind, gai_strerror(rc));
        return -1;
    }
    memset(ss, 0, sizeof(*ss));
    memcpy(ss, ai->ai_addr, ai->ai_addrlen);
    *v6 = ai->ai_family == AF_INET6;
    if (*v6)
        ((struct sockaddr_in6 *)ss)->sin6_port = htons((uint16_t)c->port);
    else
        ((struct sockaddr_in *)ss)->sin_port = htons((uint16_t)c->port);
    freeaddrinfo(ai);
    return 0;
}

static unsigned loop_flags(enum gs_loop_kind k)
{
    switch (k) {
    case GS_LOOP_EPOLL:
        return MHD_USE_EPOLL;
    case GS_LOOP_MHD_EPOLL:
        return MHD_USE_INTERNAL_POLLING_THREAD | MHD_USE_EPOLL;
    case GS_LOOP_MHD_POLL:
        return MHD_USE_INTERNAL_POLLING_THREAD | MHD_USE_POLL;
    case GS_LOOP_MHD_SELECT:
        return MHD_USE_INTERNAL_POLLING_THREAD;
    }
    return 0;
}

static int check_routes(const struct gs_server *s, char *err, size_t errlen)
{
    for (size_t i = 0; i < s->routes.n; i++)
        if ((s->routes.v[i].flags & GS_ROUTE_ASYNC) && s->cfg.loop != GS_LOOP_EPOLL) {
            snprintf(err, errlen, "route %s needs --loop=epoll (it suspends requests)",
                     s->routes.v[i].path);
            return -1;
        }
    return 0;
}

static int attach_mhd(struct gs_server *s, char *err, size_t errlen)
{
    const union MHD_DaemonInfo *di = MHD_get_daemon_info(s->mhd, MHD_DAEMON_INFO_EPOLL_FD);

    if (!di || di->epoll_fd < 0) {
        snprintf(err, errlen, "libmicrohttpd gave no epoll fd");
        return -1;
    }
    if (gs_loop_add(s->loop, di->epoll_fd, EPOLLIN, on_mhd_ready, s) < 0) {
        snprintf(err, errlen, "adding MHD's epoll fd: %s", strerror(errno));
        return -1;
    }
    s->mhd_fd = di->epoll_fd;
    gs_loop_set_owner(s->loop, mhd_wait_ms, mhd_run, s);
    gs_loop_wake(s->loop); /* a first MHD_run before the first wait */
    return 0;
}

/* The connection table and what feeds it besides MHD: the sweep timer and, in the epoll
 * loops, the FIN watch (poll and select are level-triggered: MHD sees a FIN whenever it
 * looks). Set up before MHD starts, since an internal thread calls back at once. */
static int watch_conns(struct gs_server *s, char *err, size_t errlen)
{
    const struct gs_conns_cfg cc = {
        .limit = s->cfg.conn_limit,
        .idle_ms = (long)s->cfg.idle_timeout_s * 1000,
        .head_ms = (long)s->cfg.head_timeout_s * 1000,
        .shut = shut_conn,
        .arg = s,
    };

    gs_conns_init(&s->conns, &cc);
    s->threaded = s->cfg.loop != GS_LOOP_EPOLL;
    if (s->cfg.loop == GS_LOOP_EPOLL || s->cfg.loop == GS_LOOP_MHD_EPOLL) {
        if ((s->fin_ep = epoll_create1(EPOLL_CLOEXEC)) < 0 ||
            gs_loop_add(s->loop, s->fin_ep, EPOLLIN, on_fin_ready, s) < 0) {
            snprintf(err, errlen, "epoll for the FIN watch: %s", strerror(errno));
            return -1;
        }
    }
    if ((s->tick = gs_loop_after(s->loop, GS_TICK_MS, on_tick, s)) < 0) {
        s->tick = 0;
        snprintf(err, errlen, "sweep timer: out of memory");
        return -1;
    }
    return 0;
}

static void unwatch_conns(struct gs_server *s)
{
    if (s->tick > 0)
        gs_loop_cancel(s->loop, s->tick);
    s->tick = 0;
    gs_conns_clear(&s->conns); /* after MHD_stop_daemon: every connection is closed */
    if (s->fin_ep >= 0) {
        gs_loop_del(s->loop, s->fin_ep);
        close(s->fin_ep);
        s->fin_ep = -1;
    }
}

int gs_server_start(struct gs_server *s, char *err, size_t errlen)
{
    struct sockaddr_storage ss;
    unsigned flags = MHD_ALLOW_SUSPEND_RESUME | loop_flags(s->cfg.loop);
    int v6;

    if (s->mhd) {
        snprintf(err, errlen, "already started");
        return -1;
    }
    if (check_routes(s, err, errlen) < 0 || resolve_bind(&s->cfg, &ss, &v6, err, errlen) < 0)
        return -1;
    if (watch_conns(s, err, errlen) < 0) {
        unwatch_conns(s);
        return -1;
    }
    flags |= (v6 ? MHD_USE_IPv6 : 0) | (s->cfg.turbo ? MHD_USE_TURBO : 0) |
             (s->cfg.log || GS_MHD09_DOUBLES_ITS_ERRORS ? MHD_USE_ERROR_LOG : 0);
    /* The logger must be the first option, or MHD's own logger reports the earlier ones.
     * On 0.9 it runs without --log too: it is where a doubled refusal is answered once. */
    s->mhd = MHD_start_daemon(flags, (uint16_t)s->cfg.port, NULL, NULL, on_request, s,
                              MHD_OPTION_EXTERNAL_LOGGER, mhd_log, s,
                              MHD_OPTION_SOCK_ADDR, (struct sockaddr *)&ss,
                              MHD_OPTION_NOTIFY_COMPLETED, on_completed, s,
                              MHD_OPTION_NOTIFY_CONNECTION, on_connection, s,
                              MHD_OPTION_URI_LOG_CALLBACK, on_request_line, s,
                              MHD_OPTION_CONNECTION_LIMIT, s->cfg.conn_limit + GS_CONN_SPARE,
                              MHD_OPTION_LISTEN_BACKLOG_SIZE, s->cfg.backlog,
                              MHD_OPTION_CONNECTION_MEMORY_LIMIT, s->cfg.conn_memory,
                              MHD_OPTION_CONNECTION_TIMEOUT, s->cfg.idle_timeout_s,
                              GS_STRICT_OPTION, (int)GS_STRICT_LEVEL,
                              MHD_OPTION_END);
    if (!s->mhd) {
        snprintf(err, errlen, "cannot start libmicrohttpd on %s port %d (address in use?)",
                 s->cfg.bind, s->cfg.port);
        unwatch_conns(s);
        return -1;
    }
    if (s->cfg.loop == GS_LOOP_EPOLL && attach_mhd(s, err, errlen) < 0) {
        MHD_stop_daemon(s->mhd);
        s->mhd = NULL;
        unwatch_conns(s);
        return -1;
    }
    return 0;
}

int gs_server_port(const struct gs_server *s)
{
    const union MHD_DaemonInfo *di;

    if (!s->mhd || !(di = MHD_get_daemon_info(s->mhd, MHD_DAEMON_INFO_BIND_PORT)))
        return -1;
    return di->port;
}

static void stop_daemon(struct gs_server *s)
{
    for (size_t i = 0; i < s->nhooks; i++)
        s->hooks[i].cb(s->hooks[i].arg);
    s->nhooks = 0;
    while (s->parked) { /* left parked by a route: MHD must not stop with them suspended */
        s->parked->abandoned = 1;
        gs_request_resume(s->parked);
    }
    if (s->mhd_fd >= 0) {
        MHD_run(s->mhd); /* resumed requests get their last handler call */
        gs_loop_del(s->loop, s->mhd_fd);
        gs_loop_set_owner(s->loop, NULL, NULL, NULL);
        s->mhd_fd = -1;
    }
    if (s->mhd) {
        MHD_stop_daemon(s->mhd); /* closes every connection; on_completed frees requests */
        s->mhd = NULL;
        unwatch_conns(s);
    }
}

int gs_server_run(struct gs_server *s, char *err, size_t errlen)
{
    int rc;

    if (!s->mhd) {
        snprintf(err, errlen, "not started");
        return -1;
    }
    rc = gs_loop_run(s->loop, err, errlen);
    stop_daemon(s);
    return rc;
}

void gs_server_stop(struct gs_server *s)
{
    gs_loop_stop(s->loop);
}

void gs_server_free(struct gs_server *s)
{
    if (!s)
        return;
    stop_daemon(s);
    if (s->sigfd >= 0) {
        gs_loop_del(s->loop, s->sigfd);
        close(s->sigfd);
    }
    drop_cached(s);
    gs_loop_free(s->loop);
    gs_routes_free(&s->routes);
    pthread_mutex_destroy(&s->mu);
    free(s);
}
