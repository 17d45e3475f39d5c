/* clock.h -- the load generator's monotonic clock: nanoseconds on CLOCK_MONOTONIC in their own
 * type, and precise absolute waits. Every intended send time and every latency is a kb_mono_t.
 * Also owns the runner's one relative sleep, kb_sleep_ms, and its one poll-and-wait loop,
 * kb_poll_until: a fixture's port, its route, a database, gauges at rest. */
#ifndef KB_CLOCK_H
#define KB_CLOCK_H

#include <stdint.h>

typedef uint64_t kb_mono_t;            /* nanoseconds since an arbitrary origin */

#define KB_NS_PER_US 1000ULL
#define KB_NS_PER_MS 1000000ULL
#define KB_NS_PER_S  1000000000ULL

kb_mono_t kb_mono_now(void);

/* Sleep until the absolute time t (clock_nanosleep TIMER_ABSTIME). */
void kb_mono_sleep_until(kb_mono_t t);

/* Sleep ms milliseconds, the whole of them: a signal that interrupts the sleep resumes it
 * for what is left (a caller watching a stop flag sees it at its next turn). ms <= 0: none. */
void kb_sleep_ms(long ms);

/* Wait until done(arg) says 1: it is asked at once, then every every_ms. KB_POLL_DONE (0);
 * KB_POLL_GAVE_UP when go_on(arg) says 0 first (the process being waited for died, or the
 * run was interrupted; NULL: never); KB_POLL_TIMEOUT once timeout_ms have passed. */
enum { KB_POLL_DONE = 0, KB_POLL_GAVE_UP = -1, KB_POLL_TIMEOUT = -2 };
int kb_poll_until(int (*done)(void *arg), int (*go_on)(void *arg), void *arg, long timeout_ms,
                  long every_ms);

/* Set the calling thread's timer slack (how late the kernel may fire its timers, to
 * coalesce wake-ups): 1 ns makes timed waits wake within microseconds instead of the
 * default 50 us. Returns 0 or -1. */
int kb_clock_set_slack(uint64_t ns);

/* ISO-8601 UTC wall-clock time ("2026-11-30T05:03:07Z") into buf. */
void kb_clock_iso8601_utc(char *buf, int len);

#endif
