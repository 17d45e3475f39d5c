/* schedule.c -- intended send times as exact arithmetic on the request index, so that
 * rounding never accumulates and no request is ever skipped or sent early. */
#include "runner/load/schedule.h"

#include <math.h>

int kb_schedule_init(struct kb_schedule *s, kb_mono_t start, double rate, double warmup_s,
                     double duration_s, unsigned thread, unsigned nthreads)
{
    if (!(rate > 0) || nthreads == 0 || thread >= nthreads || warmup_s < 0 || !(duration_s > 0))
        return -1;
    s->start = start;
    s->rate = rate;
    s->warmup_n = (uint64_t)llround(rate * warmup_s);
    s->measured_n = (uint64_t)llround(rate * duration_s);
    s->thread = thread;
    s->nthreads = nthreads;
    s->next_k = 0;
    return 0;
}

kb_mono_t kb_schedule_time(const struct kb_schedule *s, uint64_t n)
{
    /* n * 1e9 stays exact in a double up to 2^53 ns (104 days at 1 req/s). */
    return s->start + (kb_mono_t)((double)n * (double)KB_NS_PER_S / s->rate);
}

uint64_t kb_schedule_total(const struct kb_schedule *s)
{
    return s->warmup_n + s->measured_n;
}

/* Count of n in [0, end) with n % T == i. */
static uint64_t share_below(uint64_t end, unsigned i, unsigned T)
{
    return end > i ? (end - i + T - 1) / T : 0;
}

uint64_t kb_schedule_share(uint64_t total, unsigned i, unsigned T)
{
    return T > 0 && i < T ? share_below(total, i, T) : 0;
}

kb_mono_t kb_schedule_quantum(double rate, int threads, int64_t quantum_ns)
{
    double spacing_ns;
    if (!(rate > 0) || threads <= 0 || quantum_ns <= 0)
        return 0;
    spacing_ns = (double)threads * (double)KB_NS_PER_S / rate;
    return spacing_ns < (double)quantum_ns ? (kb_mono_t)quantum_ns : 0;
}

kb_mono_t kb_schedule_wake_for(kb_mono_t next, kb_mono_t q)
{
    if (!q || next == UINT64_MAX)
        return next;
    if (next > UINT64_MAX - (q - 1))
        return UINT64_MAX;
    return (next + q - 1) / q * q;
}

uint64_t kb_schedule_thread_measured(const struct kb_schedule *s)
{
    return share_below(kb_schedule_total(s), s->thread, s->nthreads) -
           share_below(s->warmup_n, s->thread, s->nthreads);
}

int kb_schedule_take(struct kb_schedule *s, kb_mono_t now, uint64_t *n, kb_mono_t *intended)
{
    uint64_t next = s->next_k * s->nthreads + s->thread;
    if (next >= kb_schedule_total(s)) {
        *intended = UINT64_MAX;
        return 0;
    }
    *intended = kb_schedule_time(s, next);
    if (*intended > now)
        return 0;
    *n = next;
    s->next_k++;
    return 1;
}
