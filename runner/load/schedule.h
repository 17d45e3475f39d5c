/* schedule.h -- the open-loop send schedule: intended send times, evenly spaced.
 *
 * The whole run is one sequence n = 0, 1, 2, ... with intended time start + n / rate.
 * Thread i of T owns the requests n = i, i + T, i + 2T, ...: each thread is evenly spaced at
 * rate / T and the threads are phase-offset by 1 / rate, so the aggregate is evenly spaced.
 * Requests n < warmup_n are warmup (discarded); warmup_n <= n < warmup_n + measured_n are the
 * measured interval; there are no others.
 *
 * Under per-connection dispatch a thread's requests can instead follow its connections'
 * phases (kb_schedule_phases): connection c sends every period P = C * T / rate at its own
 * offset within P, as wrk2 gives each connection its own schedule from its own (staggered)
 * connect. Pure arithmetic and no I/O; only kb_schedule_phases allocates, its scratch. */
#ifndef KB_SCHEDULE_H
#define KB_SCHEDULE_H

#include <stdint.h>

#include "runner/util/clock.h"

struct kb_schedule {
    kb_mono_t start;        /* intended time of n = 0 */
    double rate;            /* requests per second, all threads together */
    uint64_t warmup_n;      /* llround(rate * warmup_s) */
    uint64_t measured_n;    /* llround(rate * duration_s): exactly the requests scheduled */
    unsigned thread;        /* this thread's index */
    unsigned nthreads;
    uint64_t next_k;        /* this thread's next request: n = next_k * nthreads + thread */
    const kb_mono_t *phase; /* NULL: evenly spaced; else nphase sorted offsets within period */
    unsigned nphase;
    double period_ns;
};

/* wrk2 starts a thread's connections this far apart and each keeps its schedule from its own
 * start, so connection i sends at phase (i * stagger) mod P (src/wrk.c, "Stagger connects"). */
#define KB_SCHEDULE_WRK2_STAGGER_NS (5 * KB_NS_PER_MS)

/* 0, or -1 when the arguments make no schedule (rate <= 0, no threads, thread out of range). */
int kb_schedule_init(struct kb_schedule *s, kb_mono_t start, double rate, double warmup_s,
                     double duration_s, unsigned thread, unsigned nthreads);

/* The phases of a thread's nconns connections when connection i begins its schedule
 * i * stagger_ns after connection 0 (stagger_ns < 0: spread evenly, phase i * P / nconns,
 * the plain schedule's own times). Fills phase[] sorted ascending in [0, P) and conn[] with
 * the connection at each slot. -1 when the arguments make no period. */
int kb_schedule_phases(double rate, unsigned nthreads, unsigned nconns, double stagger_ns,
                       kb_mono_t *phase, unsigned *conn);

/* From here on request k of this thread (n = k * nthreads + thread) is intended at
 * start + (k / nphase) * P + phase[k % nphase] + thread / rate; phase is borrowed, not
 * copied. Set before the first take. */
void kb_schedule_set_phases(struct kb_schedule *s, const kb_mono_t *phase, unsigned nphase);

/* Intended time of global request n. */
kb_mono_t kb_schedule_time(const struct kb_schedule *s, uint64_t n);

/* Total requests (warmup + measured) in the whole run, all threads. */
uint64_t kb_schedule_total(const struct kb_schedule *s);

/* This thread's share of the measured requests (every n in the measured range with
 * n % nthreads == thread). */
uint64_t kb_schedule_thread_measured(const struct kb_schedule *s);

/* Takes this thread's next request if it is due at `now`: returns 1 and sets *n and
 * *intended, or 0 when the next one is in the future (*intended = its time) or the
 * schedule is exhausted (*intended = UINT64_MAX). Never returns a request early. */
int kb_schedule_take(struct kb_schedule *s, kb_mono_t now, uint64_t *n, kb_mono_t *intended);

/* ---- the load generator's arithmetic around the schedule (runner/load/loadgen.c) ---------- */

/* Of `total` things dealt round-robin to T threads (thing n to thread n % T), how many
 * thread i gets: total / T, one more for each of the first total % T threads. The measured
 * requests, the connections and the requests log's bound are all split this way, so every
 * thing has exactly one owner. 0 when T is 0 or i >= T. */
uint64_t kb_schedule_share(uint64_t total, unsigned i, unsigned T);

/* The send quantum in force (runner/load/loadgen.c, send_quantum): quantum_ns when each thread's
 * sends (threads / rate apart) are closer together than it, so that they share wake-ups on
 * its grid; 0 -- one exact wake-up per send -- when they are quantum_ns or more apart, when
 * quantum_ns <= 0, or when rate or threads make no schedule. */
kb_mono_t kb_schedule_quantum(double rate, int threads, int64_t quantum_ns);

/* When to wake for a send due at `next`: the first multiple of q at or after it, a grid the
 * same for every thread (CLOCK_MONOTONIC), so a send waits less than q and is never early.
 * q = 0: next itself; UINT64_MAX (nothing left to send) stays UINT64_MAX, as does a time
 * whose grid point would not fit. */
kb_mono_t kb_schedule_wake_for(kb_mono_t next, kb_mono_t q);

/* 1 when n belongs to the measured interval. */
static inline int kb_schedule_is_measured(const struct kb_schedule *s, uint64_t n)
{
    return n >= s->warmup_n && n < s->warmup_n + s->measured_n;
}

#endif
