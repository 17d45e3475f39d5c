/* loop.h -- gray-static's one event loop: epoll readiness callbacks, one-shot timers, a
 * wake flag, and a thread-safe stop.
 *
 * The server owns the loop and drives libmicrohttpd from it (MHD's epoll fd is one of the
 * registered fds; MHD_run is the owner's wake hook). Other modules (the PostgreSQL route)
 * register their own fds and timers on the same loop, so everything runs on one thread.
 * Everything but gs_loop_stop() must be called from the thread running gs_loop_run(). */
#ifndef GS_LOOP_H
#define GS_LOOP_H

#include <stddef.h>
#include <stdint.h>

struct gs_loop;                                        /* one epoll loop, owned by server */
typedef void (*gs_io_cb)(void *arg, uint32_t events);  /* events: EPOLLIN|EPOLLOUT|EPOLLERR|EPOLLHUP */

/* NULL when out of memory or descriptors. gs_loop_free closes the loop's own descriptors,
 * never the registered ones (their owners close them). */
struct gs_loop *gs_loop_new(void);
void gs_loop_free(struct gs_loop *l);

/* Register, change or remove fd. 0, or -1 with errno set. cb(arg, events) runs from
 * gs_loop_run when fd is ready; it may add, modify or delete any fd, itself included. */
int gs_loop_add(struct gs_loop *l, int fd, uint32_t events, gs_io_cb cb, void *arg);
int gs_loop_mod(struct gs_loop *l, int fd, uint32_t events, gs_io_cb cb, void *arg);
int gs_loop_del(struct gs_loop *l, int fd);

/* one-shot timer in milliseconds; returns an id >0, cancel with gs_loop_cancel */
long gs_loop_after(struct gs_loop *l, long ms, void (*cb)(void *arg), void *arg);
void gs_loop_cancel(struct gs_loop *l, long id);

/* run after the current iteration's I/O (used to call MHD_run after MHD_resume_connection) */
void gs_loop_wake(struct gs_loop *l);

/* The owner's two hooks. wait_ms(arg) bounds every wait in milliseconds (-1: no bound; the
 * server returns MHD_get_timeout); on_wake(arg) runs once at the end of an iteration in which
 * gs_loop_wake was called or that bound expired (the server calls MHD_run). */
void gs_loop_set_owner(struct gs_loop *l, long (*wait_ms)(void *arg), void (*on_wake)(void *arg),
                       void *arg);

/* Run until gs_loop_stop. 0, or -1 with the reason in err. */
int gs_loop_run(struct gs_loop *l, char *err, size_t errlen);
/* Ask gs_loop_run to return after its current iteration (if it is not running, the next
 * gs_loop_run returns at once). Safe from any thread and from a signal
 * handler (an atomic flag and a write to an eventfd). */
void gs_loop_stop(struct gs_loop *l);

#endif
