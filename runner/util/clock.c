/* clock.c -- CLOCK_MONOTONIC in nanoseconds, absolute and relative sleeps, timer slack. */
#define _GNU_SOURCE
#include "runner/util/clock.h"

#include <errno.h>
#include <stdio.h>
#include <sys/prctl.h>
#include <time.h>

kb_mono_t kb_mono_now(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (kb_mono_t)ts.tv_sec * KB_NS_PER_S + (kb_mono_t)ts.tv_nsec;
}

void kb_mono_sleep_until(kb_mono_t t)
{
    struct timespec ts = { .tv_sec = (time_t)(t / KB_NS_PER_S), .tv_nsec = (long)(t % KB_NS_PER_S) };
    while (clock_nanosleep(CLOCK_MONOTONIC, TIMER_ABSTIME, &ts, NULL) == EINTR)
        ;
}

void kb_sleep_ms(long ms)
{
    struct timespec ts = { ms / 1000, (ms % 1000) * 1000000L };
    if (ms <= 0)
        return;
    while (nanosleep(&ts, &ts) < 0 && errno == EINTR)
        ;
}

int kb_poll_until(int (*done)(void *arg), int (*go_on)(void *arg), void *arg, long timeout_ms,
                  long every_ms)
{
    kb_mono_t deadline = kb_mono_now() + (kb_mono_t)(timeout_ms > 0 ? timeout_ms : 0) * KB_NS_PER_MS;
    for (;;) {
        if (done(arg))
            return KB_POLL_DONE;
        if (go_on && !go_on(arg))
            return KB_POLL_GAVE_UP;
        if (kb_mono_now() >= deadline)
            return KB_POLL_TIMEOUT;
        kb_sleep_ms(every_ms);
    }
}

int kb_clock_set_slack(uint64_t ns)
{
    return prctl(PR_SET_TIMERSLACK, (unsigned long)(ns ? ns : 1), 0UL, 0UL, 0UL) == 0 ? 0 : -1;
}

void kb_clock_iso8601_utc(char *buf, int len)
{
    time_t now = time(NULL);
    struct tm tm;
    gmtime_r(&now, &tm);
    strftime(buf, (size_t)len, "%Y-%m-%dT%H:%M:%SZ", &tm);
}
