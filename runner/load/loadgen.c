/* loadgen.c -- threads, connections and the epoll loop of `kneebench load`.
 *
 * Design. Each thread owns a slice of the connections, one epoll instance, one schedule
 * (runner/load/schedule.h) and one FIFO of due-but-unsent requests (with per-connection
 * dispatch, one per connection instead); threads share nothing while
 * running, and the main thread merges their counters and histograms after joining them.
 * The caller sizes the thread count to the client's CPUs (cmd_load.c): on a VM a wake-up
 * costs more CPU than the send it serves, and threads sharing a CPU multiply the wake-ups,
 * so four threads on one CPU cost twice what one does at 20k req/s. With a CPU per thread
 * each is pinned to its own.
 * Startup: every thread opens all its connections, then two barriers let the main thread
 * fix the common start time t0 once every connection is up (no staggering). The loop:
 *   1. take every request whose intended time has come (never early, never ahead) into
 *      the FIFO; 2. hand FIFO requests, oldest first, to free connections (one request in
 *      flight per connection; none free: they wait, their latency counting from the intended
 *      time); 3. sleep in epoll_pwait2 until the next intended time (1 ns timer slack, so
 *      the wake-up is within microseconds), or with a send quantum until the grid point
 *      after it (see send_quantum); 4. read responses, parse and check them.
 * Response times come from the kernel's receive timestamp (SO_TIMESTAMPNS) unless
 * --eager-rx, so while a send is due within LAZY_NS and no request is queued the thread
 * need not wake for each response: it sleeps until the send and collects responses then,
 * with their true arrival times -- one wake-up per send, at any rate. When requests are
 * queued for connections (an overloaded server), responses are collected on the quantum's
 * grid rather than one wake-up each, so a slow server cannot make the client look busy.
 * The client's own lateness is measured, not guessed from its CPU: send lag (a write past
 * its intended time) and rx delay (a read past the response's arrival or the planned
 * wake-up) are histograms, the direct evidence that a busy client distorted a point.
 * After the last scheduled request the loop drains for at most drain_s; measured requests
 * still queued or in flight then are counted as timeouts, so every request ends once, and
 * enter corrected latency at the lower bound they had reached.
 * The hot path makes no allocation: requests are pre-formatted, the read buffer is per
 * thread, parsers live in the connection slots, and the FIFO only grows (rarely). */
#define _GNU_SOURCE
#include "runner/load/loadgen.h"

#include <arpa/inet.h>
#include <errno.h>
#include <fcntl.h>
#include <netinet/tcp.h>
#include <poll.h>
#include <pthread.h>
#include <stdatomic.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/epoll.h>
#include <sys/resource.h>
#include <sys/socket.h>
#include <sys/timerfd.h>
#include <time.h>
#include <unistd.h>

#include "runner/load/schedule.h"

const char *const kb_load_timer_names[3] = { "auto", "epoll_pwait2", "timerfd" };
const char *const kb_load_dispatch_names[2] = { "any", "per-connection" };

static int64_t kb_load_stagger(const struct kb_load_config *cfg)
{
    if (!cfg->stagger_ns)
        return KB_SCHEDULE_WRK2_STAGGER_NS;
    return cfg->stagger_ns < 0 ? KB_LOAD_STAGGER_EVEN : cfg->stagger_ns;
}

const char *const kb_err_kind_names[KB_ERR_KINDS] = {
    "connect", "read", "write", "timeout", "peer_close", "malformed"
};

#define READ_BUF 65536
#define MAX_EVENTS 256
#define RETRY_NS (100 * KB_NS_PER_MS)      /* back-off after a failed connect */
#define SCAN_NS (10 * KB_NS_PER_MS)        /* how often request timeouts are checked */
/* Sleep through responses when the next send is this close. Their kernel receive times
 * are kept, so collecting them at the send costs no accuracy, and a wake-up per response
 * would make a slow rate dearer per request than a fast one. Not longer than the scan. */
#define LAZY_NS SCAN_NS
/* A thread that ends its drain later than this was not running when the drain ended
 * (stopped, or held off its CPU): what it left unanswered then is its own loss. Well past
 * a wake-up's ordinary lateness, even on a busy host, so that a server's backlog is never
 * charged to a punctual client. */
#define LATE_END_NS (50 * KB_NS_PER_MS)
#define TIMER_TAG UINT32_MAX               /* the timerfd's epoll data: no connection has it */

enum conn_state { C_DOWN, C_CONNECTING, C_READY };

struct pending {
    uint64_t n;
    kb_mono_t intended;
    kb_mono_t taken;         /* when the thread took it from the schedule (>= intended) */
};

/* Due requests not yet on a connection, oldest first: the thread's one queue, or with
 * --dispatch per-connection each connection's own. It only grows (rarely). */
struct queue {
    struct pending *v;
    size_t cap, head, len;
};

struct conn {
    int fd;
    enum conn_state state;
    int busy;                /* a request is assigned */
    int written;             /* ...and fully written */
    int in_free;             /* listed in the free stack */
    int want_out;            /* EPOLLOUT currently registered */
    int measured;
    int fresh;               /* opened since its last request: the next one pays the connect */
    uint64_t n;
    kb_mono_t intended, taken, assigned, sent;
    kb_mono_t own;           /* the client's own delay of this request so far: its send lag */
    kb_mono_t avail;         /* when it could last take a request: connected, or its last response ended */
    size_t woff;
    kb_mono_t retry_at;      /* C_DOWN: when to reconnect */
    struct queue q;          /* per-connection dispatch: the requests of its own schedule */
    struct kb_resp parser;
};

struct thread {
    const struct kb_load_config *cfg;
    unsigned index;
    pthread_t tid;
    int epfd;
    int tfd;                 /* the timerfd the thread sleeps on (TIMERFD), else -1 */
    struct conn *conns;
    int nconns;
    int *free_ring;          /* free connections, longest free first */
    int free_head, nfree;
    struct queue fifo;       /* any-free-connection dispatch */
    uint64_t queued;         /* due requests waiting for a connection, in any queue */
    uint64_t queue_max;      /* the most that may wait (cfg->queue_max) */
    struct kb_schedule sched;
    kb_mono_t *phase;        /* per-connection: the connections' sorted phases */
    unsigned *slot_conn;     /* per-connection: the connection of each phase slot */
    kb_mono_t measure_start; /* intended time of the first measured request */
    kb_mono_t measure_end;   /* intended time of the first request after the interval */
    uint64_t measured_outstanding;
    kb_mono_t real_offset;   /* CLOCK_REALTIME - CLOCK_MONOTONIC, refreshed every wake-up */
    struct kb_load_counts c;
    struct kb_hist corrected, uncorrected, lag, conn_wait, rx_delay;
    struct kb_hist client_delay, less_client;
    int64_t bound_from_us;   /* smallest lower bound recorded in corrected */
    int64_t less_bound_from_us;   /* ...and in less_client */
    kb_mono_t look_at;       /* when this wake-up meant to read the sockets: a lazy sleep's
                                end, else 0 (at each response's arrival) */
    struct kb_hlog_recorder rec;  /* per-second series, when the run collects one */
    int recording;
    struct kb_load_req_record *log;  /* --requests-log: preallocated, at most this thread's share */
    uint64_t log_n, log_cap;
    int log_truncated;
    kb_mono_t log_base;              /* the measured interval's start */
    int got_rt, unpinned;
    kb_mono_t late_at_end;   /* how late the thread ended its drain, past LATE_END_NS, else 0 */
    char first_error[256];
    char setup_error[256];
    struct shared *shared;
    char buf[READ_BUF];
};

struct shared {
    pthread_mutex_t mu;
    pthread_cond_t cv;
    int go;                  /* 1: every thread exists, start; -1: setup failed, leave */
    pthread_barrier_t opened, started;
    _Atomic kb_mono_t t0;
    struct kb_hlog_collector *series;   /* set before the start barrier, or NULL */
};

/* Threads wait here until all of them were created, so that a failed pthread_create can
 * still be unwound (the barriers count every thread). */
static int wait_go(struct shared *sh)
{
    int go;
    pthread_mutex_lock(&sh->mu);
    while (!sh->go)
        pthread_cond_wait(&sh->cv, &sh->mu);
    go = sh->go;
    pthread_mutex_unlock(&sh->mu);
    return go;
}

static void set_go(struct shared *sh, int go)
{
    pthread_mutex_lock(&sh->mu);
    sh->go = go;
    pthread_cond_broadcast(&sh->cv);
    pthread_mutex_unlock(&sh->mu);
}

/* strerror for the load threads: strerror may share one buffer between threads. */
#define ERRSTR(e) strerror_r((e), (char[128]){ 0 }, 128)

/* A server that closes after a response, HTTP/1.1-legal, is outside the load model: said as
 * such, since it is the first thing to know about the run (the verdict fails it). */
#define KEEPALIVE_ONLY "the server closed its connection after a response; kneebench " \
    "measures keep-alive servers only (persistent connections, runner/README-load.md)"

static void note_error(struct thread *t, const char *what, const char *detail)
{
    if (!t->first_error[0])
        snprintf(t->first_error, sizeof(t->first_error), "%s%s%s", what, detail ? ": " : "",
                 detail ? detail : "");
}

/* A spin-wait hint to the CPU: x86's pause, arm64's yield, elsewhere only a compiler barrier
 * (the loop stays correct, only less kind to a sibling hyperthread). */
static inline void cpu_relax(void)
{
#if defined(__x86_64__) || defined(__i386__)
    __builtin_ia32_pause();
#elif defined(__aarch64__) || defined(__arm__)
    __asm__ __volatile__("yield" ::: "memory");
#else
    __asm__ __volatile__("" ::: "memory");
#endif
}

/* ---- connections ---------------------------------------------------------------------- */

static void free_push(struct thread *t, int i)
{
    struct conn *c = &t->conns[i];
    if (c->in_free || c->busy || c->state == C_DOWN)
        return;
    c->in_free = 1;
    t->free_ring[(t->free_head + t->nfree++) % t->nconns] = i;
}

/* Oldest free first: a request then goes out on a connection that was free before any
 * other, so that when responses are collected late (at a grid wake-up, or lazily) a
 * connection freed a moment ago does not make its wait look like conn_wait, the server's
 * doing, while others had been idle all along. */
static int free_pop(struct thread *t)
{
    while (t->nfree > 0) {
        int i = t->free_ring[t->free_head];
        struct conn *c = &t->conns[i];
        t->free_head = (t->free_head + 1) % t->nconns;
        t->nfree--;
        c->in_free = 0;
        if (!c->busy && c->state != C_DOWN)
            return i;
    }
    return -1;
}

/* 0, or -1 when the epoll set would not take the change: the connection can then neither be
 * told writable nor stop being told so, and its caller retires it. */
static int set_events(struct thread *t, int i, int want_out)
{
    struct conn *c = &t->conns[i];
    struct epoll_event ev = { .events = EPOLLIN | (want_out ? EPOLLOUT : 0), .data.u32 = (uint32_t)i };
    if (c->want_out == want_out)
        return 0;
    if (epoll_ctl(t->epfd, EPOLL_CTL_MOD, c->fd, &ev) < 0) {
        note_error(t, "epoll_ctl", ERRSTR(errno));
        return -1;
    }
    c->want_out = want_out;
    return 0;
}

/* Start a non-blocking connect. On immediate failure the slot backs off. */
static void conn_open(struct thread *t, int i, kb_mono_t now)
{
    struct conn *c = &t->conns[i];
    int one = 1, fd = socket(AF_INET, SOCK_STREAM | SOCK_NONBLOCK | SOCK_CLOEXEC, 0);
    struct epoll_event ev = { .events = EPOLLIN | EPOLLOUT, .data.u32 = (uint32_t)i };
    c->fd = fd;
    if (fd < 0)
        goto fail;
    setsockopt(fd, IPPROTO_TCP, TCP_NODELAY, &one, sizeof(one));
    if (t->cfg->rx_timestamps)
        setsockopt(fd, SOL_SOCKET, SO_TIMESTAMPNS, &one, sizeof(one));
    if (connect(fd, (const struct sockaddr *)&t->cfg->addr, sizeof(t->cfg->addr)) < 0 &&
        errno != EINPROGRESS)
        goto fail;
    if (epoll_ctl(t->epfd, EPOLL_CTL_ADD, fd, &ev) < 0)
        goto fail;
    c->state = C_CONNECTING;
    c->want_out = 1;
    c->fresh = 1;
    free_push(t, i);
    return;
fail:
    note_error(t, "connect", ERRSTR(errno));
    if (fd >= 0)
        close(fd);
    c->fd = -1;
    c->state = C_DOWN;
    c->retry_at = now + RETRY_NS;
    t->c.connect_failures++;
}

static void conn_close(struct thread *t, int i)
{
    struct conn *c = &t->conns[i];
    if (c->fd >= 0)
        close(c->fd);     /* close() also removes it from the epoll set */
    c->fd = -1;
    c->state = C_DOWN;
    c->want_out = 0;
}

/* Close and reconnect at once (a peer close, Connection: close, a timeout). */
static void conn_recycle(struct thread *t, int i, kb_mono_t now)
{
    conn_close(t, i);
    t->c.reconnects++;
    conn_open(t, i, now);
}

/* ---- request outcomes ----------------------------------------------------------------- */

/* --requests-log: one store into the thread's preallocated array, nothing else on the hot
 * path; past the thread's share the record is dropped and the run says it was truncated. */
static void log_request(struct thread *t, kb_mono_t intended, kb_mono_t sent, kb_mono_t received,
                        int status, int err)
{
    struct kb_load_req_record *r;
    if (!t->cfg->requests_log_max)
        return;
    if (t->log_n >= t->log_cap) {
        t->log_truncated = 1;
        return;
    }
    r = &t->log[t->log_n++];
    r->intended = (int64_t)(intended - t->log_base);
    r->sent = sent ? (int64_t)(sent - t->log_base) : -1;
    r->received = received ? (int64_t)(received - t->log_base) : -1;
    r->status = status;
    r->err = err;
}

static void request_done(struct thread *t, struct conn *c)
{
    c->busy = 0;
    if (c->measured)
        t->measured_outstanding--;
}

/* A measured request's latency beside the client's own delay in it (own: send lag plus
 * rx delay, ns), and that latency less the delay: what a punctual client would have
 * measured at most (loadgen.h, "The client's own delay"). */
static void record_own(struct thread *t, kb_mono_t latency, kb_mono_t own)
{
    kb_hist_record(&t->client_delay, (int64_t)(own / KB_NS_PER_US));
    kb_hist_record(&t->less_client, (int64_t)((latency > own ? latency - own : 0) / KB_NS_PER_US));
}

/* A measured request given up unanswered at now: its latency is at least now - intended,
 * and that lower bound goes into corrected (runner/load/loadgen.h says why), and less the
 * client's own delay (its send lag, when it was written) into less_client. */
static void record_bound(struct thread *t, kb_mono_t intended, kb_mono_t own, kb_mono_t now)
{
    kb_mono_t lat = now > intended ? now - intended : 0;
    int64_t us = (int64_t)(lat / KB_NS_PER_US), less = (int64_t)((lat > own ? lat - own : 0) / KB_NS_PER_US);
    kb_hist_record(&t->corrected, us);
    record_own(t, lat, own);
    t->c.bounded++;
    if (us < t->bound_from_us)
        t->bound_from_us = us;
    if (less < t->less_bound_from_us)
        t->less_bound_from_us = less;
    if (t->recording)
        kb_hlog_recorder_bound(&t->rec, (int64_t)lat, now);     /* the series is in ns */
}

/* A measured timeout is a lower bound on latency; other errors end the request there. */
static void count_error(struct thread *t, enum kb_err_kind kind, kb_mono_t intended, kb_mono_t own,
                        kb_mono_t now)
{
    t->c.errors[kind]++;
    if (kind == KB_ERR_TIMEOUT)
        record_bound(t, intended, own, now);
    else if (t->recording)
        kb_hlog_recorder_error(&t->rec, now);
}

/* own: the client's own delay in the request (ns). */
static void request_failed_own(struct thread *t, struct conn *c, enum kb_err_kind kind,
                               const char *detail, kb_mono_t own)
{
    if (c->measured) {
        count_error(t, kind, c->intended, own, kb_mono_now());
        log_request(t, c->intended, c->written ? c->sent : 0, 0, 0, (int)kind);
    }
    note_error(t, kb_err_kind_names[kind], detail);
    request_done(t, c);
}

static void request_failed(struct thread *t, struct conn *c, enum kb_err_kind kind, const char *detail)
{
    request_failed_own(t, c, kind, detail, c->written ? c->own : 0);
}

/* own: the client's own delay in this request (send lag plus rx delay, ns). */
static void record_response(struct thread *t, struct conn *c, kb_mono_t now, kb_mono_t own)
{
    const struct kb_resp *p = &c->parser;
    int mismatch = 0;
    kb_mono_t punctual = now > own ? now - own : 0;
    /* What the server delivered while the interval ran, whichever phase the request was
     * scheduled in: an overloaded server spends the interval's start on the warmup's queue
     * and the drain on the interval's, and counting only measured requests would charge it
     * for the one and credit it with the other. */
    if (now >= t->measure_start && now < t->measure_end)
        t->c.window_completed++;
    /* ...and what it would have delivered there had the client been punctual */
    if (punctual >= t->measure_start && punctual < t->measure_end)
        t->c.window_completed_less_client++;
    if (!c->measured)
        return;
    t->c.completed++;
    if (now < t->measure_end)
        t->c.interval_completed++;
    if (p->status < KB_LOAD_STATUS_MAX)
        t->c.status[p->status]++;
    else
        t->c.status_other++;
    if (p->status < 200 || p->status > 299)
        t->c.non2xx++;
    log_request(t, c->intended, c->sent, now, p->status, -1);
    if (!kb_resp_status_ok(p)) {
        t->c.mm_status++;
        mismatch = 1;
    }
    if (!kb_resp_ct_ok(p)) {
        t->c.mm_content_type++;
        mismatch = 1;
    }
    if (!kb_resp_body_ok(p)) {
        t->c.mm_body++;
        mismatch = 1;
    }
    if (!kb_resp_header_ok(p)) {
        t->c.mm_header++;
        mismatch = 1;
    }
    if (mismatch) {
        t->c.mm_total++;
        note_error(t, "response not as expected (the contract route's, or --expect-*)", NULL);
    }
    kb_hist_record(&t->corrected, (int64_t)((now - c->intended) / KB_NS_PER_US));
    record_own(t, now - c->intended, own);
    if (t->recording)
        kb_hlog_recorder_value(&t->rec, (int64_t)(now - c->intended), now);
    kb_hist_record(&t->uncorrected, (int64_t)((now - c->sent) / KB_NS_PER_US));
}

/* ---- sending -------------------------------------------------------------------------- */

/* Send lag is the client's own lateness in writing a request, in two parts: how late the
 * thread took it from the schedule (it slept past the intended time, was held off its CPU,
 * or was busy), and how long after both that take and a free connection it wrote it. In
 * between, waiting for a connection -- all of them busy with a slow server, or reconnecting
 * after the server closed one -- is the server's doing and goes to conn_wait instead; both
 * still count in corrected latency. Were the wait charged to lag, every overloaded point
 * would look client-limited; were a late take charged to the wait, a client that woke from
 * a stall and sent its backlog at once would charge the server for the connections its own
 * burst held. */
static void record_send(struct thread *t, struct conn *c, kb_mono_t now)
{
    kb_mono_t free_at = c->avail > c->taken ? c->avail : c->taken;
    c->own = (c->taken - c->intended) + (now > free_at ? now - free_at : 0);
    if (!c->measured)
        return;
    kb_hist_record(&t->lag, (int64_t)(c->own / KB_NS_PER_US));
    kb_hist_record(&t->conn_wait, (int64_t)((free_at - c->taken) / KB_NS_PER_US));
}

static void try_write(struct thread *t, int i, kb_mono_t now)
{
    struct conn *c = &t->conns[i];
    const char *req = t->cfg->request;
    size_t len = t->cfg->request_len;
    if (c->woff == 0) {
        /* A fresh reading: earlier sends of the same wake-up took their own time, and this
         * request's lag and uncorrected latency must start at its own write. */
        now = kb_mono_now();
        c->sent = now;
        record_send(t, c, now);
        if (c->fresh && c->measured)
            t->c.fresh_conn_sends++;
        c->fresh = 0;
    }
    while (c->woff < len) {
        ssize_t w = send(c->fd, req + c->woff, len - c->woff, MSG_NOSIGNAL);
        if (w < 0) {
            if (errno == EAGAIN || errno == EWOULDBLOCK) {
                if (set_events(t, i, 1) < 0) {
                    request_failed(t, c, KB_ERR_WRITE, "epoll_ctl would not watch the socket");
                    conn_recycle(t, i, now);
                }
                return;
            }
            if (errno == EINTR)
                continue;
            request_failed(t, c, KB_ERR_WRITE, ERRSTR(errno));
            conn_recycle(t, i, now);
            return;
        }
        c->woff += (size_t)w;
    }
    c->written = 1;
    if (c->measured)
        t->c.sent++;
    if (c->want_out && set_events(t, i, 0) < 0) {
        request_failed(t, c, KB_ERR_WRITE, "epoll_ctl would not stop watching the socket");
        conn_recycle(t, i, now);
    }
}

static void assign(struct thread *t, int i, const struct pending *p, kb_mono_t now)
{
    struct conn *c = &t->conns[i];
    c->busy = 1;
    c->written = 0;
    c->woff = 0;
    c->n = p->n;
    c->intended = p->intended;
    c->taken = p->taken;
    c->assigned = now;
    c->measured = kb_schedule_is_measured(&t->sched, p->n);
    kb_resp_init(&c->parser, t->cfg->expect);
    if (c->state == C_READY)
        try_write(t, i, now);
}

static int queue_push(struct queue *q, uint64_t n, kb_mono_t intended, kb_mono_t now)
{
    if (q->len == q->cap) {
        size_t cap = q->cap ? q->cap * 2 : 4;
        struct pending *f = malloc(cap * sizeof(*f));
        if (!f)
            return -1;
        for (size_t k = 0; k < q->len; k++)
            f[k] = q->v[(q->head + k) % q->cap];
        free(q->v);
        q->v = f;
        q->cap = cap;
        q->head = 0;
    }
    q->v[(q->head + q->len) % q->cap] = (struct pending){ n, intended, now > intended ? now : intended };
    q->len++;
    return 0;
}

static const struct pending *queue_head(const struct queue *q)
{
    return q->len ? &q->v[q->head] : NULL;
}

static void queue_pop(struct queue *q)
{
    q->head = (q->head + 1) % q->cap;
    q->len--;
}

/* The queue a request waits in: the thread's, or under per-connection dispatch the one of
 * the connection its index falls to (request k of this thread goes to connection k mod C,
 * so each connection has its own evenly spaced schedule, as wrk2 gives it). */
static int conn_of(const struct thread *t, uint64_t n)
{
    if (!t->cfg->per_connection)
        return -1;
    return (int)t->slot_conn[(n / (uint64_t)t->cfg->threads) % (uint64_t)t->nconns];
}

static void assign_head(struct thread *t, int i, struct queue *q, kb_mono_t now)
{
    assign(t, i, queue_head(q), now);
    queue_pop(q);
    t->queued--;
}

static int conn_idle(const struct conn *c)
{
    return !c->busy && !c->in_free && c->state != C_DOWN;
}

/* Moves due requests into their queues and queued requests onto free connections. Any
 * free connection takes the thread's queue's oldest; under per-connection dispatch a
 * connection takes only its own, and one idle off the free ring takes its request at once.
 * Returns the next intended time (UINT64_MAX when the schedule is exhausted). */
static kb_mono_t dispatch(struct thread *t, kb_mono_t now)
{
    uint64_t n;
    kb_mono_t next;
    int i;
    while (kb_schedule_take(&t->sched, now, &n, &next)) {
        int own = conn_of(t, n);
        struct queue *q = own < 0 ? &t->fifo : &t->conns[own].q;
        if (kb_schedule_is_measured(&t->sched, n)) {
            t->c.scheduled++;
            t->measured_outstanding++;
        }
        /* The load path checks its allocations instead of aborting (runner/util/xalloc.h
         * is the harness's): out of memory, the request cannot wait, so it ends here as a
         * timeout the client, not the server, lost (client_dropped). Past the bound, the
         * server stalled: a timeout of the server's, counted as refused. */
        int full = t->queued >= t->queue_max;
        if (full || queue_push(q, n, next, now) < 0) {
            if (full)
                t->c.queue_refused++;
            else
                t->c.client_dropped++;
            if (kb_schedule_is_measured(&t->sched, n)) {
                count_error(t, KB_ERR_TIMEOUT, next, 0, now);
                log_request(t, next, 0, 0, 0, KB_ERR_TIMEOUT);
                t->measured_outstanding--;
            }
            note_error(t, "timeout", full ? "request queue full (the server stalled)"
                                          : "request queue could not grow");
            continue;
        }
        t->queued++;
        if (own >= 0 && conn_idle(&t->conns[own]))
            assign_head(t, own, q, now);
    }
    while (t->queued > 0 && (i = free_pop(t)) >= 0) {
        struct queue *q = t->cfg->per_connection ? &t->conns[i].q : &t->fifo;
        if (q->len)
            assign_head(t, i, q, now);
    }
    return next;
}

/* ---- receiving ------------------------------------------------------------------------ */

static void on_connected(struct thread *t, int i, kb_mono_t now)
{
    struct conn *c = &t->conns[i];
    int soerr = 0;
    socklen_t sl = sizeof(soerr);
    getsockopt(c->fd, SOL_SOCKET, SO_ERROR, &soerr, &sl);
    if (soerr) {
        t->c.connect_failures++;
        note_error(t, "connect", ERRSTR(soerr));
        if (c->busy)
            request_failed(t, c, KB_ERR_CONNECT, ERRSTR(soerr));
        conn_close(t, i);
        c->retry_at = now + RETRY_NS;
        return;
    }
    c->state = C_READY;
    c->avail = now;
    if (c->busy) {
        try_write(t, i, now);
    } else if (set_events(t, i, 0) < 0) {
        conn_close(t, i);
        c->retry_at = now + RETRY_NS;
    }
}

/* The server ended a connection after a response, or an idle one: under --reconnect a
 * close to serve by reconnecting, else a broken keep-alive. */
static void server_closed(struct thread *t, const char *how)
{
    if (t->cfg->reconnect) {
        t->c.server_closes++;
        return;
    }
    if (how)
        note_error(t, KEEPALIVE_ONLY, how);
    t->c.keepalive_breaks++;
}

/* The peer closed (read returned 0) or reset the connection. */
static void on_closed(struct thread *t, int i, kb_mono_t now, int err)
{
    struct conn *c = &t->conns[i];
    if (c->busy && c->written && !err && kb_resp_eof(&c->parser) == KB_RESP_DONE) {
        record_response(t, c, now, c->own);
        request_done(t, c);
        server_closed(t, "a body ended by the close");
    } else if (!c->busy && !err) {
        server_closed(t, NULL);       /* an idle keep-alive connection closed under load */
    } else if (c->busy && c->written) {
        if (err)
            request_failed(t, c, KB_ERR_READ, ERRSTR(err));
        else
            request_failed(t, c, KB_ERR_PEER_CLOSE, kb_resp_started(&c->parser) ?
                           "connection closed mid-response" : "connection closed before a response");
    } else if (c->busy) {
        request_failed(t, c, KB_ERR_WRITE, "connection closed before the request was written");
    }
    conn_recycle(t, i, now);
}

/* recv, and when the socket has SO_TIMESTAMPNS, the kernel's receive time of the data
 * (CLOCK_REALTIME, converted with the thread's offset) in *at; else *at stays `now`. */
static ssize_t recv_stamped(struct thread *t, int fd, kb_mono_t now, kb_mono_t *at)
{
    union { char buf[CMSG_SPACE(sizeof(struct timespec)) * 2]; struct cmsghdr align; } ctl;
    struct iovec iov = { .iov_base = t->buf, .iov_len = sizeof(t->buf) };
    struct msghdr m = { .msg_iov = &iov, .msg_iovlen = 1 };
    ssize_t r;
    *at = now;
    if (!t->cfg->rx_timestamps)
        return recv(fd, t->buf, sizeof(t->buf), 0);
    m.msg_control = ctl.buf;
    m.msg_controllen = sizeof(ctl.buf);
    r = recvmsg(fd, &m, 0);
    for (struct cmsghdr *cm = r > 0 ? CMSG_FIRSTHDR(&m) : NULL; cm; cm = CMSG_NXTHDR(&m, cm))
        if (cm->cmsg_level == SOL_SOCKET && cm->cmsg_type == SCM_TIMESTAMPNS) {
            struct timespec ts;
            uint64_t real;
            memcpy(&ts, CMSG_DATA(cm), sizeof(ts));
            real = (uint64_t)ts.tv_sec * KB_NS_PER_S + (uint64_t)ts.tv_nsec;
            /* Only a time between the offset's origin and now is believable. */
            if (real > t->real_offset && real - t->real_offset < now)
                *at = real - t->real_offset;
        }
    return r;
}

/* How late the client read a response that arrived at `at`: counted from the arrival, or
 * from the end of a lazy sleep the thread chose (a planned wait, not lateness). A busy or
 * starved client shows here and in its send lag, whatever its CPU reads. */
static kb_mono_t rx_delay(const struct thread *t, kb_mono_t at)
{
    kb_mono_t from = at > t->look_at ? at : t->look_at, now = kb_mono_now();
    return now > from ? now - from : 0;
}

static void on_readable(struct thread *t, int i, kb_mono_t now)
{
    struct conn *c = &t->conns[i];
    kb_mono_t at, rx;
    ssize_t r = recv_stamped(t, c->fd, now, &at);
    size_t off = 0, used;
    if (r == 0 || (r < 0 && errno != EAGAIN && errno != EWOULDBLOCK && errno != EINTR)) {
        on_closed(t, i, now, r < 0 ? errno : 0);
        return;
    }
    if (r < 0)
        return;
    if (!c->busy || !c->written) {
        note_error(t, "unsolicited bytes from the server", NULL);
        t->c.unsolicited++;
        if (c->busy)
            request_failed(t, c, KB_ERR_MALFORMED, "response before the request was written");
        conn_recycle(t, i, now);
        return;
    }
    switch (kb_resp_feed(&c->parser, t->buf, (size_t)r, &used)) {
    case KB_RESP_MORE:
        return;
    case KB_RESP_MALFORMED:
        request_failed(t, c, KB_ERR_MALFORMED, c->parser.error);
        conn_recycle(t, i, now);
        return;
    case KB_RESP_DONE:
        off = used;
        /* The response cannot have ended before its request was written. */
        c->avail = at > c->sent ? at : c->sent;
        if (off < (size_t)r) {
            /* More bytes than the response framed: the stream is out of step, and which
             * bytes answered this request is unknowable. */
            request_failed(t, c, KB_ERR_MALFORMED, "bytes after the end of a response");
            t->c.unsolicited++;
            conn_recycle(t, i, now);
            return;
        }
        rx = rx_delay(t, c->avail);
        if (c->measured)
            kb_hist_record(&t->rx_delay, (int64_t)(rx / KB_NS_PER_US));
        record_response(t, c, c->avail, c->own + rx);
        request_done(t, c);
        if (c->parser.conn_close) {
            server_closed(t, "Connection: close");
            conn_recycle(t, i, now);
        } else {
            free_push(t, i);
        }
        return;
    }
}

static void on_event(struct thread *t, const struct epoll_event *ev, kb_mono_t now)
{
    int i = (int)ev->data.u32;
    struct conn *c;
    if (ev->data.u32 == TIMER_TAG) {
        uint64_t expirations;
        /* the wake-up itself; cleared so that it does not wake the next wait */
        if (read(t->tfd, &expirations, sizeof(expirations)) < 0 && errno != EAGAIN)
            note_error(t, "timerfd read", ERRSTR(errno));
        return;
    }
    c = &t->conns[i];
    if (c->fd < 0)
        return;
    if (c->state == C_CONNECTING) {
        if (ev->events & (EPOLLOUT | EPOLLERR | EPOLLHUP))
            on_connected(t, i, now);
        if (c->state != C_READY)
            return;
        free_push(t, i);
    }
    if (ev->events & (EPOLLIN | EPOLLERR | EPOLLHUP))
        on_readable(t, i, now);
    else if ((ev->events & EPOLLOUT) && c->busy && !c->written && c->fd >= 0)
        try_write(t, i, now);
}

/* Request timeouts, and reconnecting slots whose back-off has passed. */
static void scan(struct thread *t, kb_mono_t now)
{
    kb_mono_t limit = (kb_mono_t)t->cfg->timeout_ms * KB_NS_PER_MS;
    for (int i = 0; i < t->nconns; i++) {
        struct conn *c = &t->conns[i];
        if (c->state == C_DOWN) {
            if (now >= c->retry_at)
                conn_open(t, i, now);
            continue;
        }
        if (c->busy && now - (c->written ? c->sent : c->assigned) > limit) {
            request_failed(t, c, KB_ERR_TIMEOUT, "no response within --timeout-ms");
            conn_recycle(t, i, now);
        }
    }
}

/* Requests still waiting for a connection when the drain ended: never sent. late: the
 * thread was not running then (finish()), and each is the client's delay in full. */
static void unsent(struct thread *t, struct queue *q, kb_mono_t now, int late)
{
    for (; q->len > 0; queue_pop(q)) {
        const struct pending *p = queue_head(q);
        t->queued--;
        if (!kb_schedule_is_measured(&t->sched, p->n))
            continue;
        count_error(t, KB_ERR_TIMEOUT, p->intended,
                    late && now > p->intended ? now - p->intended : 0, now);
        t->c.unfinished++;
        t->c.unfinished_client += (uint64_t)late;
        log_request(t, p->intended, 0, 0, 0, KB_ERR_TIMEOUT);
        t->measured_outstanding--;
        note_error(t, "timeout", late ? "never sent: the client was not running when the "
                   "drain ended" : "never sent: no free connection before the drain ended");
    }
}

/* End of the drain: whatever is measured and unfinished is a timeout, recorded at the
 * latency it had reached. A thread that was not running when the drain ended (LATE_END_NS)
 * never had the chance to send or to read what it leaves: each such request is the client's
 * delay in full (own = its whole latency) and counts in unfinished_client, so the verdict
 * can never blame the server for it. */
static void finish(struct thread *t, kb_mono_t drain_end)
{
    kb_mono_t now = kb_mono_now();
    int late = now > drain_end && now - drain_end > LATE_END_NS;
    if (late)
        t->late_at_end = now - drain_end;
    for (int i = 0; i < t->nconns; i++) {
        struct conn *c = &t->conns[i];
        if (c->busy) {
            if (c->measured) {
                t->c.unfinished++;
                t->c.unfinished_client += (uint64_t)late;
            }
            if (late)
                request_failed_own(t, c, KB_ERR_TIMEOUT, "unanswered: the client was not "
                                   "running when the drain ended",
                                   now > c->intended ? now - c->intended : 0);
            else
                request_failed(t, c, KB_ERR_TIMEOUT, "still in flight when the drain ended");
        }
        conn_close(t, i);
    }
    unsent(t, &t->fifo, now, late);
    for (int i = 0; i < t->nconns; i++)
        unsent(t, &t->conns[i].q, now, late);
}

/* Sleep in the timerfd until `until` (CLOCK_MONOTONIC, absolute), or not at all when it has
 * passed: epoll_wait's millisecond timeout would round a send up to 1 ms late. */
static int wait_timerfd(struct thread *t, struct epoll_event *evs, kb_mono_t now, kb_mono_t until)
{
    struct itimerspec its = { .it_value = { (time_t)(until / KB_NS_PER_S),
                                            (long)(until % KB_NS_PER_S) } };
    if (until <= now)
        return epoll_wait(t->epfd, evs, MAX_EVENTS, 0);
    if (timerfd_settime(t->tfd, TFD_TIMER_ABSTIME, &its, NULL) < 0) {
        note_error(t, "timerfd_settime", ERRSTR(errno));
        return epoll_wait(t->epfd, evs, MAX_EVENTS, (int)((until - now) / KB_NS_PER_MS) + 1);
    }
    return epoll_wait(t->epfd, evs, MAX_EVENTS, -1);
}

static void wait_events(struct thread *t, kb_mono_t now, kb_mono_t until)
{
    struct epoll_event evs[MAX_EVENTS];
    struct timespec ts = { 0, 0 };
    int n;
    if (t->tfd >= 0) {
        n = wait_timerfd(t, evs, now, until);
    } else {
        if (until > now) {
            kb_mono_t d = until - now;
            ts.tv_sec = (time_t)(d / KB_NS_PER_S);
            ts.tv_nsec = (long)(d % KB_NS_PER_S);
        }
        n = epoll_pwait2(t->epfd, evs, MAX_EVENTS, &ts, NULL);
    }
    if (n <= 0)
        return;
    now = kb_mono_now();
    if (t->cfg->rx_timestamps) {
        struct timespec rt;
        clock_gettime(CLOCK_REALTIME, &rt);
        t->real_offset = (kb_mono_t)rt.tv_sec * KB_NS_PER_S + (kb_mono_t)rt.tv_nsec - now;
    }
    for (int k = 0; k < n; k++)
        on_event(t, &evs[k], now);
}

/* --send-quantum-us Q. A wake-up costs the client more than the send it serves (on the
 * development VM about 20 us of CPU against 8: the timer, the halt and the wake of an idle
 * server are each a VM exit), so a thread whose sends are less than Q apart wakes only on
 * multiples of Q on CLOCK_MONOTONIC and sends everything due by then. The grid is the same
 * for every thread, so threads sharing a CPU share its wake-ups too. A thread whose sends
 * are Q or more apart (rate / threads <= 1/Q) keeps one exact wake-up per send: the quantum
 * changes nothing at low rates. The wait is send lag, bounded by Q, recorded and charged
 * to corrected latency like any other lateness of the client. Returns 0 for exact wakes. */
static kb_mono_t send_quantum(const struct kb_load_config *cfg)
{
    return kb_schedule_quantum(cfg->rate, cfg->threads, cfg->send_quantum_ns);
}

/* Sleeps through socket events until `until`, then reads them with their kernel receive
 * times: one wake-up however many responses came meanwhile. */
static void lazy_sleep(struct thread *t, kb_mono_t until)
{
    kb_mono_sleep_until(until);
    t->look_at = until;
    wait_events(t, until, until);
}

static void run_loop(struct thread *t)
{
    kb_mono_t end_sched = kb_schedule_time(&t->sched, kb_schedule_total(&t->sched));
    kb_mono_t drain_end = end_sched + (kb_mono_t)(t->cfg->drain_s * (double)KB_NS_PER_S);
    kb_mono_t next_scan = 0, spin = (kb_mono_t)t->cfg->spin_ns, q = send_quantum(t->cfg);
    for (;;) {
        kb_mono_t now = kb_mono_now(), next, until;
        if (now >= next_scan) {
            scan(t, now);
            next_scan = now + SCAN_NS;
        }
        next = dispatch(t, now);
        if (next == UINT64_MAX && (t->measured_outstanding == 0 || now >= drain_end))
            break;
        next = kb_schedule_wake_for(next, q);
        if (next != UINT64_MAX && next - now <= spin) {
            /* --spin-us: the last microseconds before a send are busy-waited, trading CPU
             * for wake-up precision; events that arrive meanwhile wait for the next turn. */
            while (kb_mono_now() < next)
                cpu_relax();
            continue;
        }
        until = next < next_scan ? next - spin : next_scan;
        if (next == UINT64_MAX && drain_end < until)
            until = drain_end;
        if (t->cfg->rx_timestamps && next != UINT64_MAX && next - now <= LAZY_NS && t->queued == 0) {
            /* The next send is close and nothing waits for a connection: sleep through
             * response arrivals (their kernel receive times are kept) and collect them when
             * waking to send -- one wake-up per send instead of two. */
            lazy_sleep(t, until);
        } else if (t->cfg->rx_timestamps && t->queued > 0 && t->cfg->send_quantum_ns > 0) {
            /* Requests wait for connections (an overloaded server): each response frees one,
             * and waking for every response would cost the client most exactly where the
             * server is slowest. Collect them on the quantum's grid instead; the wait before
             * the freed connection carries its request is the client's, at most the quantum,
             * and goes to send lag (record_send) like the quantum's own. */
            kb_mono_t grid = kb_schedule_wake_for(now + 1, (kb_mono_t)t->cfg->send_quantum_ns);
            lazy_sleep(t, grid < until ? grid : until);
        } else {
            t->look_at = 0;
            wait_events(t, now, until);
        }
    }
    finish(t, drain_end);
}

/* ---- thread setup --------------------------------------------------------------------- */

/* The records are allocated while the connections open, before the common start time is
 * fixed, and touched once so that no page fault lands on the hot path; sized to what this
 * thread can need: its measured requests (which do not depend on the start time), capped
 * by its share of the bound (split as the schedule splits requests). An allocation failure
 * records nothing and reports the log truncated. */
static void log_alloc(struct thread *t)
{
    uint64_t max = t->cfg->requests_log_max, T = (uint64_t)t->cfg->threads, mine, share;
    struct kb_schedule s;
    if (!max || kb_schedule_init(&s, 0, t->cfg->rate, t->cfg->warmup_s, t->cfg->duration_s,
                                 t->index, (unsigned)T) < 0)
        return;
    share = kb_schedule_share(max, t->index, (unsigned)T);
    mine = kb_schedule_thread_measured(&s);
    t->log_cap = mine < share ? mine : share;
    if (t->log_cap && !(t->log = malloc(t->log_cap * sizeof(*t->log))))
        t->log_cap = 0;
    if (t->log)
        memset(t->log, 0, t->log_cap * sizeof(*t->log));
}

/* With a CPU for every thread, each thread gets its own (the index-th of the set): threads
 * sharing a CPU pay each other's wake-ups and context switches. Else all share the set. */
static void pin_thread(struct thread *t)
{
    cpu_set_t one;
    int k = 0;
    /* a thread the kernel will not pin runs where it may, counted (res.unpinned_threads) */
    if (CPU_COUNT(t->cfg->cpus) < t->cfg->threads) {
        t->unpinned = pthread_setaffinity_np(pthread_self(), sizeof(cpu_set_t), t->cfg->cpus) != 0;
        return;
    }
    for (int cpu = 0; cpu < CPU_SETSIZE; cpu++)
        if (CPU_ISSET(cpu, t->cfg->cpus) && k++ == (int)t->index) {
            CPU_ZERO(&one);
            CPU_SET(cpu, &one);
            t->unpinned = pthread_setaffinity_np(pthread_self(), sizeof(one), &one) != 0;
            return;
        }
}

static void *thread_main(void *arg)
{
    struct thread *t = arg;
    kb_mono_t now, deadline;
    if (wait_go(t->shared) < 0)
        return NULL;
    now = kb_mono_now();
    deadline = now + 2 * KB_NS_PER_S;
    kb_clock_set_slack((uint64_t)t->cfg->timer_slack_ns);
    if (t->cfg->rt) {
        /* Above every ordinary task on the client's CPUs, so that other work there cannot
         * delay a send past its intended time; the threads block between sends, and the
         * kernel's RT throttling still leaves the rest of the CPU to others. */
        struct sched_param sp = { .sched_priority = 1 };
        t->got_rt = pthread_setschedparam(pthread_self(), SCHED_FIFO, &sp) == 0;
    }
    if (t->cfg->cpus)
        pin_thread(t);
    for (int i = 0; i < t->nconns; i++)
        conn_open(t, i, now);
    /* All connections up before the warmup: wait for every connect to finish. */
    for (;;) {
        int pending = 0;
        for (int i = 0; i < t->nconns; i++)
            pending += t->conns[i].state == C_CONNECTING;
        now = kb_mono_now();
        if (!pending || now >= deadline)
            break;
        wait_events(t, now, now + 10 * KB_NS_PER_MS);
    }
    log_alloc(t);
    pthread_barrier_wait(&t->shared->opened);
    pthread_barrier_wait(&t->shared->started);
    if (kb_schedule_init(&t->sched, atomic_load(&t->shared->t0), t->cfg->rate, t->cfg->warmup_s,
                         t->cfg->duration_s, t->index, (unsigned)t->cfg->threads) < 0) {
        snprintf(t->setup_error, sizeof(t->setup_error), "the schedule cannot be built (rate "
                 "%g/s over %g s)", t->cfg->rate, t->cfg->duration_s);
        return NULL;
    }
    if (t->cfg->per_connection)
        kb_schedule_set_phases(&t->sched, t->phase, (unsigned)t->nconns);
    t->measure_start = kb_schedule_time(&t->sched, t->sched.warmup_n);
    t->measure_end = kb_schedule_time(&t->sched, kb_schedule_total(&t->sched));
    t->log_base = t->measure_start;    /* the log's times count from the interval's start */
    if (t->shared->series)
        t->recording = kb_hlog_recorder_init(&t->rec, t->shared->series,
                                             kb_schedule_time(&t->sched, t->sched.warmup_n)) == 0;
    run_loop(t);
    if (t->recording)
        kb_hlog_recorder_finish(&t->rec, kb_mono_now());
    t->recording = 0;
    return NULL;
}

static void thread_free(struct thread *t)
{
    if (t->epfd >= 0)
        close(t->epfd);
    if (t->tfd >= 0)
        close(t->tfd);
    free(t->free_ring);
    free(t->phase);
    free(t->slot_conn);
    for (int i = 0; t->conns && i < t->nconns; i++)
        free(t->conns[i].q.v);
    free(t->conns);
    free(t->fifo.v);
    free(t->log);
    kb_hist_free(&t->corrected);
    kb_hist_free(&t->uncorrected);
    kb_hist_free(&t->lag);
    kb_hist_free(&t->conn_wait);
    kb_hist_free(&t->rx_delay);
    kb_hist_free(&t->client_delay);
    kb_hist_free(&t->less_client);
}

/* The seven histograms a thread and the merged result both keep. */
static int hists_init(struct kb_hist *a, struct kb_hist *b, struct kb_hist *c, struct kb_hist *d,
                      struct kb_hist *e, struct kb_hist *f, struct kb_hist *g)
{
    struct kb_hist *all[] = { a, b, c, d, e, f, g };
    int rc = 0;
    for (size_t i = 0; i < sizeof(all) / sizeof(all[0]); i++)
        rc |= kb_hist_init(all[i], 1, KB_LOAD_HIST_MAX_US, 3);
    return rc;
}

/* The timerfd a TIMERFD thread sleeps on, in its epoll set under TIMER_TAG. */
static int timer_setup(struct thread *t)
{
    struct epoll_event ev = { .events = EPOLLIN, .data.u32 = TIMER_TAG };
    t->tfd = timerfd_create(CLOCK_MONOTONIC, TFD_NONBLOCK | TFD_CLOEXEC);
    return t->tfd < 0 || epoll_ctl(t->epfd, EPOLL_CTL_ADD, t->tfd, &ev) < 0 ? -1 : 0;
}

static int thread_setup(struct thread *t, const struct kb_load_config *cfg,
                        enum kb_load_timer timer, unsigned index, struct shared *sh)
{
    t->cfg = cfg;
    t->index = index;
    t->shared = sh;
    /* C not divisible by T: the first C % T threads take one more, so every one is used. */
    t->nconns = (int)kb_schedule_share((uint64_t)cfg->connections, index, (unsigned)cfg->threads);
    t->epfd = epoll_create1(EPOLL_CLOEXEC);
    t->conns = calloc((size_t)t->nconns, sizeof(*t->conns));
    t->free_ring = calloc((size_t)t->nconns, sizeof(int));
    t->queue_max = cfg->queue_max ? cfg->queue_max : KB_LOAD_QUEUE_MAX;
    t->fifo.cap = 4096;
    t->fifo.v = malloc(t->fifo.cap * sizeof(*t->fifo.v));
    if (cfg->per_connection && t->nconns > 0) {
        t->phase = malloc((size_t)t->nconns * sizeof(*t->phase));
        t->slot_conn = malloc((size_t)t->nconns * sizeof(*t->slot_conn));
        if (!t->phase || !t->slot_conn ||
            kb_schedule_phases(cfg->rate, (unsigned)cfg->threads, (unsigned)t->nconns,
                               (double)kb_load_stagger(cfg), t->phase, t->slot_conn) < 0)
            return -1;
    }
    if (t->epfd < 0 || !t->conns || !t->free_ring || !t->fifo.v ||
        hists_init(&t->corrected, &t->uncorrected, &t->lag, &t->conn_wait, &t->rx_delay,
                   &t->client_delay, &t->less_client))
        return -1;
    t->bound_from_us = INT64_MAX;
    t->less_bound_from_us = INT64_MAX;
    for (int i = 0; i < t->nconns; i++)
        t->conns[i].fd = -1;
    return timer == KB_TIMER_TIMERFD ? timer_setup(t) : 0;
}

static void merge(struct kb_load_result *res, struct thread *t)
{
    struct kb_load_counts *d = &res->c;
    const struct kb_load_counts *s = &t->c;
    d->scheduled += s->scheduled;
    d->sent += s->sent;
    d->completed += s->completed;
    for (int k = 0; k < KB_ERR_KINDS; k++)
        d->errors[k] += s->errors[k];
    for (int k = 0; k < KB_LOAD_STATUS_MAX; k++)
        d->status[k] += s->status[k];
    d->status_other += s->status_other;
    d->non2xx += s->non2xx;
    d->mm_status += s->mm_status;
    d->mm_content_type += s->mm_content_type;
    d->mm_body += s->mm_body;
    d->mm_header += s->mm_header;
    d->mm_total += s->mm_total;
    d->reconnects += s->reconnects;
    d->connect_failures += s->connect_failures;
    d->interval_completed += s->interval_completed;
    d->window_completed += s->window_completed;
    d->window_completed_less_client += s->window_completed_less_client;
    d->client_dropped += s->client_dropped;
    d->queue_refused += s->queue_refused;
    d->unfinished += s->unfinished;
    d->unfinished_client += s->unfinished_client;
    if ((int64_t)(t->late_at_end / KB_NS_PER_US) > res->late_at_end_us)
        res->late_at_end_us = (int64_t)(t->late_at_end / KB_NS_PER_US);
    d->bounded += s->bounded;
    d->unsolicited += s->unsolicited;
    d->keepalive_breaks += s->keepalive_breaks;
    d->server_closes += s->server_closes;
    d->fresh_conn_sends += s->fresh_conn_sends;
    if (t->bound_from_us < res->bound_from_us)
        res->bound_from_us = t->bound_from_us;
    if (t->less_bound_from_us < res->less_bound_from_us)
        res->less_bound_from_us = t->less_bound_from_us;
    res->rt_threads += t->got_rt;
    res->unpinned_threads += t->unpinned;
    kb_hist_add(&res->corrected, &t->corrected);
    kb_hist_add(&res->uncorrected, &t->uncorrected);
    kb_hist_add(&res->lag, &t->lag);
    kb_hist_add(&res->conn_wait, &t->conn_wait);
    kb_hist_add(&res->rx_delay, &t->rx_delay);
    kb_hist_add(&res->client_delay, &t->client_delay);
    kb_hist_add(&res->less_client, &t->less_client);
    if (!res->first_error[0] && t->first_error[0])
        memcpy(res->first_error, t->first_error, sizeof(res->first_error));
}

static int cmp_intended(const void *a, const void *b)
{
    const struct kb_load_req_record *x = a, *y = b;
    return x->intended < y->intended ? -1 : x->intended > y->intended;
}

/* After the run: every thread's records into one array, in intended-time order. */
static int merge_log(struct kb_load_result *res, struct thread *ts, int n)
{
    uint64_t total = 0, k = 0;
    for (int i = 0; i < n; i++) {
        total += ts[i].log_n;
        res->requests_truncated |= ts[i].log_truncated;
    }
    if (total && !(res->requests = malloc(total * sizeof(*res->requests))))
        return -1;
    for (int i = 0; i < n; i++) {
        if (ts[i].log_n)
            memcpy(res->requests + k, ts[i].log, ts[i].log_n * sizeof(*ts[i].log));
        k += ts[i].log_n;
    }
    res->requests_n = total;
    if (total > 1)
        qsort(res->requests, total, sizeof(*res->requests), cmp_intended);
    return 0;
}

static double cpu_now(void)
{
    struct rusage ru;
    getrusage(RUSAGE_SELF, &ru);
    return (double)ru.ru_utime.tv_sec + (double)ru.ru_utime.tv_usec / 1e6 +
           (double)ru.ru_stime.tv_sec + (double)ru.ru_stime.tv_usec / 1e6;
}

/* The main thread's part: fix t0, then sample CPU at the interval's two ends. */
static void time_interval(const struct kb_load_config *cfg, struct shared *sh, struct kb_load_result *res)
{
    kb_mono_t t0 = kb_mono_now() + 5 * KB_NS_PER_MS, a, b;
    double cpu0, cpu1;
    struct kb_schedule s;
    kb_schedule_init(&s, t0, cfg->rate, cfg->warmup_s, cfg->duration_s, 0, 1);
    if (cfg->series_tag) {
        /* The series' base is the wall-clock time of the measured interval's start. */
        double base = kb_hlog_epoch_now() +
                      (double)(kb_schedule_time(&s, s.warmup_n) - kb_mono_now()) / (double)KB_NS_PER_S;
        sh->series = res->series = kb_hlog_collector_new(cfg->series_tag, base, 1.0, cfg->threads,
                                                         KB_HLOG_HIGHEST_NS, 3);
    }
    atomic_store(&sh->t0, t0);
    pthread_barrier_wait(&sh->started);
    kb_mono_sleep_until(kb_schedule_time(&s, s.warmup_n));
    a = kb_mono_now();
    cpu0 = cpu_now();
    kb_mono_sleep_until(kb_schedule_time(&s, kb_schedule_total(&s)));
    b = kb_mono_now();
    cpu1 = cpu_now();
    res->cpu_seconds = cpu1 - cpu0;
    res->interval_s = (double)(b - a) / (double)KB_NS_PER_S;
    res->interval_start = a;
    res->interval_end = b;
}

/* The way the threads sleep: as asked, or (AUTO) epoll_pwait2 where this kernel has it, else
 * the timerfd. Asked for epoll_pwait2 on a kernel without it, the run is refused rather than
 * left to spin: every wait would fail at once and every request time out. A seccomp filter
 * (a container's) answers EPERM where an old kernel answers ENOSYS: both mean "not here". */
static int pick_timer(const struct kb_load_config *cfg, enum kb_load_timer *timer, char *err,
                      size_t errlen)
{
    struct epoll_event ev;
    struct timespec zero = { 0, 0 };
    int fd = epoll_create1(EPOLL_CLOEXEC), have, e;
    if (fd < 0) {
        snprintf(err, errlen, "epoll_create1: %s", strerror(errno));
        return -1;
    }
    have = epoll_pwait2(fd, &ev, 1, &zero, NULL) >= 0;
    e = errno;
    close(fd);
    if (!have && e != ENOSYS && e != EPERM) {
        snprintf(err, errlen, "epoll_pwait2: %s", strerror(e));
        return -1;
    }
    if (cfg->timer == KB_TIMER_PWAIT2 && !have) {
        snprintf(err, errlen, "epoll_pwait2 is %s: use the timerfd", e == EPERM
                 ? "refused here (EPERM, a seccomp filter)"
                 : "not in this kernel (it came with Linux 5.11)");
        return -1;
    }
    *timer = cfg->timer == KB_TIMER_AUTO ? (have ? KB_TIMER_PWAIT2 : KB_TIMER_TIMERFD)
                                         : cfg->timer;
    return 0;
}

int kb_load_run(const struct kb_load_config *cfg, struct kb_load_result *res, char *err, size_t errlen)
{
    struct thread *ts = NULL;
    struct shared sh;
    int started = 0, rc = -1;
    kb_mono_t drain_from;
    memset(res, 0, sizeof(*res));
    if (cfg->threads < 1 || cfg->connections < cfg->threads) {
        snprintf(err, errlen, "need threads >= 1 and connections >= threads");
        return -1;
    }
    res->bound_from_us = INT64_MAX;
    res->less_bound_from_us = INT64_MAX;
    if (hists_init(&res->corrected, &res->uncorrected, &res->lag, &res->conn_wait, &res->rx_delay,
                   &res->client_delay, &res->less_client) ||
        !(ts = calloc((size_t)cfg->threads, sizeof(*ts)))) {
        snprintf(err, errlen, "out of memory");
        goto out;
    }
    for (int i = 0; i < cfg->threads; i++)
        ts[i].epfd = ts[i].tfd = -1;   /* thread_free of a slot never set up closes nothing */
    if (pick_timer(cfg, &res->timer, err, errlen) < 0)
        goto out;
    res->per_connection = !!cfg->per_connection;
    res->stagger_ns = cfg->per_connection ? kb_load_stagger(cfg) : 0;
    res->reconnect = !!cfg->reconnect;
    pthread_mutex_init(&sh.mu, NULL);
    pthread_cond_init(&sh.cv, NULL);
    sh.go = 0;
    sh.series = NULL;
    if (pthread_barrier_init(&sh.opened, NULL, (unsigned)cfg->threads + 1) ||
        pthread_barrier_init(&sh.started, NULL, (unsigned)cfg->threads + 1)) {
        snprintf(err, errlen, "pthread_barrier_init failed");
        pthread_cond_destroy(&sh.cv);
        pthread_mutex_destroy(&sh.mu);
        goto out;
    }
    for (int i = 0; i < cfg->threads; i++) {
        if (thread_setup(&ts[i], cfg, res->timer, (unsigned)i, &sh)) {
            snprintf(err, errlen, "thread setup failed: %s", strerror(errno));
            goto out_barriers;
        }
    }
    for (; started < cfg->threads; started++)
        if (pthread_create(&ts[started].tid, NULL, thread_main, &ts[started])) {
            snprintf(err, errlen, "pthread_create failed");
            set_go(&sh, -1);
            for (int i = 0; i < started; i++)
                pthread_join(ts[i].tid, NULL);
            goto out_barriers;
        }
    res->send_quantum_ns = (int64_t)send_quantum(cfg);
    set_go(&sh, 1);
    pthread_barrier_wait(&sh.opened);
    time_interval(cfg, &sh, res);
    drain_from = kb_mono_now();
    for (int i = 0; i < cfg->threads; i++)
        pthread_join(ts[i].tid, NULL);
    res->drain_used_s = (double)(kb_mono_now() - drain_from) / (double)KB_NS_PER_S;
    for (int i = 0; i < cfg->threads; i++)
        if (ts[i].setup_error[0]) {
            snprintf(err, errlen, "load thread %d: %s", i, ts[i].setup_error);
            goto out_barriers;
        }
    for (int i = 0; i < cfg->threads; i++)
        merge(res, &ts[i]);
    if (cfg->requests_log_max && merge_log(res, ts, cfg->threads)) {
        snprintf(err, errlen, "out of memory for the requests log");
        goto out_barriers;
    }
    rc = 0;
out_barriers:
    pthread_barrier_destroy(&sh.opened);
    pthread_barrier_destroy(&sh.started);
    pthread_cond_destroy(&sh.cv);
    pthread_mutex_destroy(&sh.mu);
out:
    if (ts)
        for (int i = 0; i < cfg->threads; i++)
            thread_free(&ts[i]);
    free(ts);
    if (rc)
        kb_load_result_free(res);
    return rc;
}

void kb_load_result_free(struct kb_load_result *res)
{
    if (res->series)
        kb_hlog_collector_free(res->series);
    res->series = NULL;
    free(res->requests);
    res->requests = NULL;
    res->requests_n = 0;
    kb_hist_free(&res->corrected);
    kb_hist_free(&res->uncorrected);
    kb_hist_free(&res->lag);
    kb_hist_free(&res->conn_wait);
    kb_hist_free(&res->rx_delay);
    kb_hist_free(&res->client_delay);
    kb_hist_free(&res->less_client);
}

uint64_t kb_load_errors_total(const struct kb_load_counts *c)
{
    uint64_t n = 0;
    for (int k = 0; k < KB_ERR_KINDS; k++)
        n += c->errors[k];
    return n;
}

int kb_load_probe(const struct sockaddr_in *addr, int timeout_ms, char *err, size_t errlen)
{
    int fd = socket(AF_INET, SOCK_STREAM | SOCK_NONBLOCK | SOCK_CLOEXEC, 0), soerr = 0, rc = -1;
    socklen_t sl = sizeof(soerr);
    struct pollfd pfd;
    char ip[INET_ADDRSTRLEN];
    inet_ntop(AF_INET, &addr->sin_addr, ip, sizeof(ip));
    if (fd < 0) {
        snprintf(err, errlen, "socket: %s", strerror(errno));
        return -1;
    }
    if (connect(fd, (const struct sockaddr *)addr, sizeof(*addr)) == 0) {
        rc = 0;
        goto out;
    }
    if (errno != EINPROGRESS) {
        soerr = errno;
        goto fail;
    }
    pfd = (struct pollfd){ .fd = fd, .events = POLLOUT };
    if (poll(&pfd, 1, timeout_ms) != 1) {
        soerr = ETIMEDOUT;
        goto fail;
    }
    getsockopt(fd, SOL_SOCKET, SO_ERROR, &soerr, &sl);
    if (!soerr) {
        rc = 0;
        goto out;
    }
fail:
    snprintf(err, errlen, "cannot connect to %s:%d: %s", ip, ntohs(addr->sin_port), strerror(soerr));
out:
    close(fd);
    return rc;
}
