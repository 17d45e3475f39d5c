/* loop.c -- the application-owned epoll loop (see loop.h).
 *
 * Design. One epoll set, level-triggered. Registrations live in a table indexed by fd; each
 * registration carries a generation number that also rides in the epoll event's data, so an
 * event fetched in the same batch as the deletion (or re-use) of its fd is dropped instead of
 * reaching the wrong callback. Timers are a binary min-heap on a monotonic millisecond clock;
 * cancel is a linear search because few timers are ever pending (the db route's connect and
 * query deadlines: at most a pool's worth). gs_loop_stop writes an eventfd so that a signal
 * handler or another thread (the tests) can stop the loop; the loop itself is single-threaded.
 *
 * One iteration: wait (bounded by the next timer, the owner's wait_ms and a pending wake),
 * dispatch I/O callbacks, fire due timers, then call the owner's on_wake once if anyone woke
 * the loop or the owner's bound expired. For the server, on_wake is MHD_run, so MHD runs once
 * per iteration after every other module has done its I/O (and possibly resumed connections). */
#define _GNU_SOURCE
#include "gray-static/loop.h"

#include <errno.h>
#include <stdatomic.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/epoll.h>
#include <sys/eventfd.h>
#include <time.h>
#include <unistd.h>

#define GS_LOOP_BATCH 256

struct gs_slot {
    gs_io_cb cb;
    void *arg;
    uint32_t gen;
    int used;
};

struct gs_timer {
    long long due_ms;
    long id;
    void (*cb)(void *arg);
    void *arg;
};

struct gs_loop {
    int ep;
    int stopfd;           /* eventfd: wakes a blocked epoll_wait when a stop is asked */
    atomic_int stop_req;  /* set by gs_loop_stop from any thread or a signal handler */
    int woken;
    struct gs_slot *slots;
    size_t nslots;
    uint32_t gen;
    struct gs_timer *heap;
    size_t nheap, capheap;
    long next_id;
    long (*wait_ms)(void *arg);
    void (*on_wake)(void *arg);
    void *owner;
};

static long long now_ms(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (long long)ts.tv_sec * 1000 + ts.tv_nsec / 1000000;
}

struct gs_loop *gs_loop_new(void)
{
    struct gs_loop *l = calloc(1, sizeof(*l));
    struct epoll_event ev = { .events = EPOLLIN };

    if (!l)
        return NULL;
    l->ep = epoll_create1(EPOLL_CLOEXEC);
    l->stopfd = eventfd(0, EFD_NONBLOCK | EFD_CLOEXEC);
    ev.data.u64 = UINT64_MAX; /* never a registration's (gen << 32 | fd) */
    if (l->ep < 0 || l->stopfd < 0 || epoll_ctl(l->ep, EPOLL_CTL_ADD, l->stopfd, &ev) < 0)
        goto fail;
    return l;
fail:
    gs_loop_free(l);
    return NULL;
}

void gs_loop_free(struct gs_loop *l)
{
    if (!l)
        return;
    if (l->ep >= 0)
        close(l->ep);
    if (l->stopfd >= 0)
        close(l->stopfd);
    free(l->slots);
    free(l->heap);
    free(l);
}

static int grow_slots(struct gs_loop *l, int fd)
{
    size_t n = l->nslots ? l->nslots : 64;
    struct gs_slot *s;

    while (n <= (size_t)fd)
        n *= 2;
    if (!(s = realloc(l->slots, n * sizeof(*s))))
        return -1;
    memset(s + l->nslots, 0, (n - l->nslots) * sizeof(*s));
    l->slots = s;
    l->nslots = n;
    return 0;
}

static int ctl(struct gs_loop *l, int op, int fd, uint32_t events, gs_io_cb cb, void *arg)
{
    struct epoll_event ev = { .events = events };
    struct gs_slot *s;
    uint32_t gen;

    if (fd < 0 || !cb) {
        errno = EINVAL;
        return -1;
    }
    if ((size_t)fd >= l->nslots && grow_slots(l, fd) < 0)
        return -1;
    s = &l->slots[fd];
    if ((op == EPOLL_CTL_ADD) == (s->used != 0)) {
        errno = op == EPOLL_CTL_ADD ? EEXIST : ENOENT;
        return -1;
    }
    gen = op == EPOLL_CTL_ADD ? ++l->gen : s->gen;
    ev.data.u64 = (uint64_t)gen << 32 | (uint32_t)fd;
    if (epoll_ctl(l->ep, op, fd, &ev) < 0)
        return -1;
    *s = (struct gs_slot){ .cb = cb, .arg = arg, .gen = gen, .used = 1 };
    return 0;
}

int gs_loop_add(struct gs_loop *l, int fd, uint32_t events, gs_io_cb cb, void *arg)
{
    return ctl(l, EPOLL_CTL_ADD, fd, events, cb, arg);
}

int gs_loop_mod(struct gs_loop *l, int fd, uint32_t events, gs_io_cb cb, void *arg)
{
    return ctl(l, EPOLL_CTL_MOD, fd, events, cb, arg);
}

int gs_loop_del(struct gs_loop *l, int fd)
{
    if (fd < 0 || (size_t)fd >= l->nslots || !l->slots[fd].used) {
        errno = ENOENT;
        return -1;
    }
    l->slots[fd].used = 0;
    /* The fd may already be closed (epoll dropped it then); the slot is what matters. */
    if (epoll_ctl(l->ep, EPOLL_CTL_DEL, fd, NULL) < 0 && errno != EBADF && errno != ENOENT)
        return -1;
    return 0;
}

/* ---- timers: a min-heap on due_ms ---- */

static void heap_swap(struct gs_timer *h, size_t a, size_t b)
{
    struct gs_timer t = h[a];
    h[a] = h[b];
    h[b] = t;
}

static void sift_up(struct gs_timer *h, size_t i)
{
    while (i > 0 && h[(i - 1) / 2].due_ms > h[i].due_ms) {
        heap_swap(h, i, (i - 1) / 2);
        i = (i - 1) / 2;
    }
}

static void sift_down(struct gs_timer *h, size_t n, size_t i)
{
    for (;;) {
        size_t m = i, c = 2 * i + 1;
        if (c < n && h[c].due_ms < h[m].due_ms)
            m = c;
        if (c + 1 < n && h[c + 1].due_ms < h[m].due_ms)
            m = c + 1;
        if (m == i)
            return;
        heap_swap(h, i, m);
        i = m;
    }
}

static void heap_remove(struct gs_loop *l, size_t i)
{
    l->heap[i] = l->heap[--l->nheap];
    if (i < l->nheap) {
        sift_down(l->heap, l->nheap, i);
        sift_up(l->heap, i);
    }
}

long gs_loop_after(struct gs_loop *l, long ms, void (*cb)(void *arg), void *arg)
{
    if (!cb)
        return -1;
    if (l->nheap == l->capheap) {
        size_t n = l->capheap ? l->capheap * 2 : 16;
        struct gs_timer *h = realloc(l->heap, n * sizeof(*h));
        if (!h)
            return -1;
        l->heap = h;
        l->capheap = n;
    }
    l->heap[l->nheap] = (struct gs_timer){ now_ms() + (ms > 0 ? ms : 0), ++l->next_id, cb, arg };
    sift_up(l->heap, l->nheap++);
    return l->next_id;
}

void gs_loop_cancel(struct gs_loop *l, long id)
{
    for (size_t i = 0; i < l->nheap; i++)
        if (l->heap[i].id == id) {
            heap_remove(l, i);
            return;
        }
}

static void fire_timers(struct gs_loop *l, long long now)
{
    /* Pop before calling: a callback may add or cancel timers. */
    while (l->nheap && l->heap[0].due_ms <= now) {
        struct gs_timer t = l->heap[0];
        heap_remove(l, 0);
        t.cb(t.arg);
    }
}

/* ---- the loop ---- */

void gs_loop_wake(struct gs_loop *l)
{
    l->woken = 1;
}

void gs_loop_set_owner(struct gs_loop *l, long (*wait_ms)(void *arg), void (*on_wake)(void *arg),
                       void *arg)
{
    l->wait_ms = wait_ms;
    l->on_wake = on_wake;
    l->owner = arg;
}

void gs_loop_stop(struct gs_loop *l)
{
    uint64_t one = 1;
    ssize_t w;

    atomic_store(&l->stop_req, 1); /* lock-free on Linux: async-signal-safe */
    w = write(l->stopfd, &one, sizeof(one)); /* EAGAIN: already pending, fine */
    (void)w;
}

/* The wait bound for this iteration; *owner_due is when the owner's bound expires (or -1). */
static int wait_bound(struct gs_loop *l, long long now, long long *owner_due)
{
    long long t = -1;

    *owner_due = -1;
    if (l->wait_ms) {
        long w = l->wait_ms(l->owner);
        if (w >= 0)
            t = w, *owner_due = now + w;
    }
    if (l->nheap) {
        long long d = l->heap[0].due_ms - now;
        if (d < 0)
            d = 0;
        if (t < 0 || d < t)
            t = d;
    }
    if (l->woken)
        t = 0;
    return t > 1000000 ? 1000000 : (int)t;
}

static void dispatch(struct gs_loop *l, const struct epoll_event *ev)
{
    uint32_t fd = (uint32_t)ev->data.u64, gen = (uint32_t)(ev->data.u64 >> 32);
    struct gs_slot *s;

    if (ev->data.u64 == UINT64_MAX) {
        uint64_t n;
        ssize_t r = read(l->stopfd, &n, sizeof(n));
        (void)r; /* only a wake-up; stop_req says stop */
        return;
    }
    if (fd >= l->nslots)
        return;
    s = &l->slots[fd];
    if (s->used && s->gen == gen)
        s->cb(s->arg, ev->events);
}

int gs_loop_run(struct gs_loop *l, char *err, size_t errlen)
{
    struct epoll_event evs[GS_LOOP_BATCH];

    while (!atomic_load(&l->stop_req)) {
        long long now = now_ms(), owner_due;
        int n = epoll_wait(l->ep, evs, GS_LOOP_BATCH, wait_bound(l, now, &owner_due));

        if (n < 0) {
            if (errno == EINTR)
                continue;
            snprintf(err, errlen, "epoll_wait: %s", strerror(errno));
            return -1;
        }
        for (int i = 0; i < n; i++)
            dispatch(l, &evs[i]);
        now = now_ms();
        fire_timers(l, now);
        if (l->woken || (owner_due >= 0 && now >= owner_due)) {
            l->woken = 0;
            if (l->on_wake)
                l->on_wake(l->owner);
        }
    }
    atomic_store(&l->stop_req, 0); /* a later gs_loop_run runs again */
    return 0;
}
