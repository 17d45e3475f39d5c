/* conns.h -- who holds a connection while sending no request, since when, and whom to close.
 *
 * libmicrohttpd 0.9.75 bounds a connection only by its idle timeout, which every byte
 * restarts, and stops accepting at its connection limit: 4,096 peers that connect and
 * trickle a header (or send nothing) held the server for ever, and every new client waited
 * in the listen backlog. This table adds what MHD lacks, as policy only (the server does the
 * I/O through the shut callback):
 *
 * - a connection waiting for a request is "idle" from its accept, or from the end of its
 *   previous response, until its request line is in; then "head" until the whole request
 *   (head and any body) is in; then "busy" until the response is done. Busy connections
 *   (being answered, or parked by a route) are never closed here.
 * - deadlines that trickled bytes do not move: idle_ms from the start of the wait to the
 *   request line (what MHD's idle timeout means for a silent peer, also for one that sends a
 *   byte now and then), head_ms from the request line to the whole request.
 * - a limit: when a new connection makes more than `limit` live ones, the one waiting
 *   longest (idle or head, by when that wait began) is closed, so that new clients keep being
 *   served; if every other connection is busy, the newcomer itself is closed at once.
 * - the peer's FIN: a connection whose peer has shut its side is "poked" (shut for reading)
 *   whenever it waits, so that an edge-triggered MHD looks at it again and sees the end.
 *
 * Times are milliseconds on any monotonic clock the caller chooses. Not thread-safe: the
 * server serialises calls. */
#ifndef GS_CONNS_H
#define GS_CONNS_H

#include <stddef.h>

enum gs_conn_state { GS_CONN_IDLE, GS_CONN_HEAD, GS_CONN_BUSY, GS_CONN_EVICTED };

/* How the shut callback is asked to act on a connection's socket. */
enum gs_conn_shut {
    GS_SHUT_EVICT, /* close it: shutdown(SHUT_RDWR); its owner sees the end and closes */
    GS_SHUT_POKE,  /* look again: shutdown(SHUT_RD), a fresh readiness edge, nothing lost */
};

struct gs_conn {
    struct gs_conn *prev, *next;         /* on the idle or the head list */
    struct gs_conn *fin_prev, *fin_next; /* on the fin list */
    long long since;                     /* when the current wait (idle or head) began */
    int fd;
    enum gs_conn_state state;
    unsigned char fin;                   /* the peer shut its side */
    unsigned char fin_listed;
};

struct gs_conn_list {
    struct gs_conn *first, *last;
    size_t n;
};

struct gs_conns_cfg {
    size_t limit;   /* live connections kept; 0: no limit */
    long idle_ms;   /* 0: no idle deadline */
    long head_ms;   /* 0: no head deadline */
    void (*shut)(void *arg, int fd, enum gs_conn_shut how);
    void *arg;
};

struct gs_conns {
    struct gs_conns_cfg cfg;
    struct gs_conn_list idle, head, fin;
    size_t live;    /* opened, neither closed nor evicted */
    /* totals */
    unsigned long evicted_limit;  /* closed for a newcomer over the limit */
    unsigned long refused;        /* of those, the newcomer itself (all others busy) */
    unsigned long evicted_idle;   /* past the idle deadline */
    unsigned long evicted_head;   /* past the head deadline */
};

void gs_conns_init(struct gs_conns *t, const struct gs_conns_cfg *cfg);
/* Frees every connection still listed (the server's stop closes them all first). */
void gs_conns_clear(struct gs_conns *t);

/* A connection was accepted on fd: it waits, idle. May evict another one, or this one (then
 * it comes back EVICTED). NULL when out of memory (the connection is then not tracked). */
struct gs_conn *gs_conns_open(struct gs_conns *t, int fd, long long now);
/* Its owner closed it: forget and free it. */
void gs_conns_close(struct gs_conns *t, struct gs_conn *c);
/* Its request line is in. */
void gs_conns_head(struct gs_conns *t, struct gs_conn *c, long long now);
/* Its whole request is in: it is being answered. Idempotent. */
void gs_conns_busy(struct gs_conns *t, struct gs_conn *c);
/* Its response is done: it waits for the next request (poked at once if the peer is gone). */
void gs_conns_idle(struct gs_conns *t, struct gs_conn *c, long long now);
/* The peer shut its side. A waiting connection is listed for gs_conns_poke_fins. */
void gs_conns_fin(struct gs_conns *t, struct gs_conn *c);

/* Evict every waiting connection past its deadline. */
void gs_conns_sweep(struct gs_conns *t, long long now);
/* Poke every waiting connection whose peer is gone; they stay listed until they leave the
 * wait (a poke can come before the owner read the last bytes; the next one will not). */
void gs_conns_poke_fins(struct gs_conns *t);

#endif
