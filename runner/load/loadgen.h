/* loadgen.h -- the open-loop load generator: T threads, each an epoll loop over its share of
 * C persistent connections, sending on the schedule of runner/load/schedule.h and checking every
 * response with runner/load/http_resp.h. It returns counters and merged histograms; it prints
 * nothing (cmd_load.c and loadout.c present the result).
 *
 * Accounting: every measured request ends exactly once -- completed, or one error kind
 * (connect, read, write, timeout, peer_close, malformed). Requests still queued or in flight
 * when the drain ends are timeouts. So scheduled == completed + errors.total. */
#ifndef KB_LOADGEN_H
#define KB_LOADGEN_H

/* cpu_set_t comes from <sched.h> without _GNU_SOURCE; only the CPU_* macros need it. */
#include <netinet/in.h>
#include <sched.h>
#include <stddef.h>
#include <stdint.h>

#include "runner/util/clock.h"
#include "runner/load/hlog.h"
#include "runner/load/hist.h"
#include "runner/load/http_resp.h"

/* Histogram range: 1 us to one hour, 3 significant figures. */
#define KB_LOAD_HIST_MAX_US 3600000000LL
#define KB_LOAD_STATUS_MAX 600
/* A stalled server must not make the client grow without bound: past this many requests
 * waiting in one thread (24 MiB of them), a due request is refused (counts.queue_refused). */
#define KB_LOAD_QUEUE_MAX (1u << 20)

enum kb_err_kind {
    KB_ERR_CONNECT, KB_ERR_READ, KB_ERR_WRITE, KB_ERR_TIMEOUT, KB_ERR_PEER_CLOSE,
    KB_ERR_MALFORMED, KB_ERR_KINDS
};
extern const char *const kb_err_kind_names[KB_ERR_KINDS];

/* How a load thread sleeps until its next send: epoll_pwait2 (Linux 5.11+, a nanosecond
 * timeout), or where the kernel lacks it epoll_wait on a timerfd armed for that instant (the
 * same precision, a descriptor more per thread). AUTO probes once. */
enum kb_load_timer { KB_TIMER_AUTO, KB_TIMER_PWAIT2, KB_TIMER_TIMERFD };
extern const char *const kb_load_timer_names[3];
/* --dispatch: "any" (a due request takes any free connection) or "per-connection" (wrk2's). */
extern const char *const kb_load_dispatch_names[2];
#define KB_LOAD_STAGGER_EVEN (-1)

struct kb_load_config {
    struct sockaddr_in addr;
    const char *request;               /* pre-formatted request bytes; owned by the caller */
    size_t request_len;
    const struct kb_resp_expect *expect;
    double rate;                       /* requests per second, all threads */
    double warmup_s, duration_s, drain_s;
    int threads, connections;
    int64_t timeout_ms;                /* per request, from its write */
    int64_t spin_ns;                   /* busy-wait this close to a send instead of sleeping */
    int64_t timer_slack_ns;            /* 0: 1 ns, precise wake-ups */
    int64_t send_quantum_ns;           /* >0: sends closer than this share a wake-up (see loadgen.c) */
    int rx_timestamps;                 /* time responses by SO_TIMESTAMPNS and collect them lazily */
    const char *series_tag;            /* non-NULL: collect a per-second series (runner/load/hlog.h) */
    const cpu_set_t *cpus;             /* pin the load threads to these, or NULL; with at least
                                          as many CPUs as threads, each thread gets one of its own */
    int rt;                            /* ask for SCHED_FIFO 1 on every load thread */
    uint64_t requests_log_max;         /* >0: keep up to this many per-request records (all threads) */
    uint64_t queue_max;                /* most due requests a thread holds waiting for a
                                          connection; 0: KB_LOAD_QUEUE_MAX */
    enum kb_load_timer timer;          /* AUTO: epoll_pwait2 where the kernel has it */
    /* 0: a due request goes out on any free connection of its thread, oldest first.
     * 1: request k of a thread belongs to its connection k mod C and waits for that one
     * alone, as wrk2 dispatches: a connection the server serves slowly delays its own later
     * requests. Latency runs from the intended time in both. */
    int per_connection;
    /* Under per-connection dispatch, connection i of a thread begins its schedule
     * i * stagger_ns after the first, as wrk2 staggers its connects: its phase within the
     * period C / (rate / T) is (i * stagger_ns) mod period. 0: wrk2's 5 ms; < 0
     * (KB_LOAD_STAGGER_EVEN): phases spread evenly, the plain schedule's times. */
    int64_t stagger_ns;
    /* 1: a server that closes its connections (Connection: close, HTTP/1.0, a body ended
     * by the close, an idle connection closed) is served as wrk serves it: the connection
     * reconnects, the connect time counts in the next request's latency (still from its
     * intended time), and the closes are counted in server_closes, not as keep-alive
     * breaks. 0: the contract's fixtures, which must keep their connections. */
    int reconnect;
};

/* One measured request's record (--requests-log): times in ns from the measured interval's
 * start (may be negative for nothing; a request of the interval is never intended before it).
 * sent < 0: never written; received < 0: no response; err < 0: completed. */
struct kb_load_req_record {
    int64_t intended, sent, received;
    int32_t status;    /* 0 when no response */
    int32_t err;       /* enum kb_err_kind, or -1 */
};

struct kb_load_counts {
    uint64_t scheduled, sent, completed;
    uint64_t errors[KB_ERR_KINDS];
    uint64_t status[KB_LOAD_STATUS_MAX];   /* by status code; codes >= 600 land in status_other */
    uint64_t status_other;
    uint64_t non2xx;
    uint64_t mm_status, mm_content_type, mm_body, mm_header, mm_total;
    uint64_t reconnects;                   /* connections re-opened after a close, any cause */
    uint64_t connect_failures;             /* connection attempts that failed */
    uint64_t interval_completed;           /* completed by the end of the measured interval */
    uint64_t window_completed;             /* responses of ANY phase that ended inside the interval */
    uint64_t window_completed_less_client; /* ...that would have, each moved earlier by the client's
                                              own delay in it */
    uint64_t client_dropped;               /* requests the client itself lost (its queue could not grow) */
    uint64_t queue_refused;                /* of errors[TIMEOUT]: refused at KB_LOAD_QUEUE_MAX
                                              waiting (a stalled server's), at a bound from 0 */
    uint64_t unfinished;                   /* of errors[TIMEOUT]: still queued or in flight when the drain ended */
    uint64_t unfinished_client;            /* of unfinished: left by a thread that was not running
                                              when the drain ended (stopped, starved): the
                                              client's loss, never the server's */
    uint64_t bounded;                      /* timeouts recorded in corrected at a lower bound (see below) */
    /* Protocol breaches that end no request (so outside errors[]), each failing a point:
     * bytes from the server with no request waiting for them (a second response to one
     * request, say), and responses that ended their keep-alive connection (Connection:
     * close, HTTP/1.0, a body delimited by the close) or an idle one the server closed. */
    uint64_t unsolicited;
    uint64_t keepalive_breaks;
    /* With cfg->reconnect: the server's closes, each followed by a reconnect (and so not in
     * keepalive_breaks); and the measured requests written as the first on a new connection
     * -- over sent, the connections each request needed (1 for a server that closes after
     * every response, near 0 for one that keeps them). */
    uint64_t server_closes;
    uint64_t fresh_conn_sends;
};

struct kb_load_result {
    struct kb_load_counts c;
    /* us, from intended send time to response end. A measured request that never got its
     * response (it timed out, or was still queued or in flight when the drain ended) is
     * recorded too, at the lower bound it had reached (then minus intended): leaving it out
     * would make an overloaded point look faster the more it dropped. c.bounded counts them
     * and bound_from_us is the smallest such bound: a figure below it is exact, one at or
     * above it is only a lower bound. */
    struct kb_hist corrected;
    int64_t bound_from_us;         /* INT64_MAX when nothing was bounded */
    struct kb_hist uncorrected;    /* us, from the request's write to response end */
    struct kb_hist lag;            /* us, the client's own lateness: write minus max(intended, connection free) */
    struct kb_hist conn_wait;      /* us, how long a due request waited for a free connection */
    struct kb_hist rx_delay;       /* us, the client's lateness in reading a response: from the later
                                      of its kernel arrival and the moment the thread meant to look
                                      (a lazy sleep's end) to its parsing */
    /* The client's own delay. Per measured request, own = its send lag + its response's rx
     * delay (0 for what was never written): client_delay records own, less_client the
     * corrected latency minus own (at least 0; for an unanswered request its lower bound
     * minus own, the smallest such in less_bound_from_us). The client's lateness only ever
     * adds to corrected latency, so less_client is what a punctual client would have
     * measured at most, and a verdict that differs between the two is the client's. */
    struct kb_hist client_delay, less_client;
    int64_t less_bound_from_us;    /* INT64_MAX when nothing was bounded */
    int64_t late_at_end_us;        /* the latest thread's lateness in ending the drain, when it
                                      was not running then (unfinished_client); else 0 */
    double cpu_seconds;            /* process user+system CPU over the measured interval */
    double interval_s;             /* measured interval length actually observed */
    kb_mono_t interval_start, interval_end;   /* CLOCK_MONOTONIC, the same clock in every process */
    double drain_used_s;           /* time spent draining after the last scheduled send */
    int rt_threads;                /* load threads that got SCHED_FIFO (cfg->rt) */
    int unpinned_threads;          /* load threads the kernel would not pin to their CPUs */
    enum kb_load_timer timer;      /* how the threads slept: PWAIT2 or TIMERFD */
    int per_connection;            /* cfg's dispatch */
    int64_t stagger_ns;            /* per-connection: the stagger in force, -1 even */
    int reconnect;                 /* cfg's reconnect */
    int64_t send_quantum_ns;       /* the quantum in force: cfg's, or 0 when sends were far enough apart */
    char first_error[256];         /* empty when none */
    /* With cfg->series_tag: one-second intervals of corrected latency and errors from the
     * measured interval's start, by completion time (measured requests only). Owned by
     * the caller after the run: kb_hlog_collector_write, then kb_hlog_collector_free
     * (kb_load_result_free frees it too when the caller did not). */
    struct kb_hlog_collector *series;
    /* With cfg->requests_log_max: the records, sorted by intended time (freed by
     * kb_load_result_free). Each thread keeps at most its share of the bound (the bound
     * split evenly, as the schedule splits the requests); truncated: some thread had more. */
    struct kb_load_req_record *requests;
    uint64_t requests_n;
    int requests_truncated;
};

/* One blocking connect with a timeout: 0 when the target accepts connections, else -1
 * with the reason in err. Used before any load is sent. */
int kb_load_probe(const struct sockaddr_in *addr, int timeout_ms, char *err, size_t errlen);

/* Runs the whole warmup + interval + drain. 0, or -1 with err set (setup failure: no load
 * result). On 0, res holds histograms the caller releases with kb_load_result_free. */
int kb_load_run(const struct kb_load_config *cfg, struct kb_load_result *res, char *err, size_t errlen);
void kb_load_result_free(struct kb_load_result *res);

/* errors.total of the counters. */
uint64_t kb_load_errors_total(const struct kb_load_counts *c);

#endif
