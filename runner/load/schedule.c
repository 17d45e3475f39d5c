/* schedule.c -- intended send times as exact arithmetic on the request index, so that
 * rounding never accumulates and no request is ever skipped or sent early. */
#include "runner/load/schedule.h"

#include <math.h>
#include <stdlib.h>

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
    s->phase = NULL;
    s->nphase = 0;
    s->period_ns = 0;
    return 0;
}

static double period_ns(double rate, unsigned nthreads, unsigned nconns)
{
    return (double)nconns * (double)nthreads * (double)KB_NS_PER_S / rate;
}

struct slot { double at; unsigned conn; };

static int slot_cmp(const void *a, const void *b)
{
    const struct slot *x = a, *y = b;
    if (x->at != y->at)
        return x->at < y->at ? -1 : 1;
    return x->conn < y->conn ? -1 : x->conn > y->conn;
}

int kb_schedule_phases(double rate, unsigned nthreads, unsigned nconns, double stagger_ns,
                       kb_mono_t *phase, unsigned *conn)
{
    struct slot *v;
    double p;
    if (!(rate > 0) || nthreads == 0 || nconns == 0)
        return -1;
    p = period_ns(rate, nthreads, nconns);
    v = malloc(nconns * sizeof(*v));
    if (!v)
        return -1;
    for (unsigned i = 0; i < nconns; i++) {
        v[i].at = stagger_ns < 0 ? (double)i * p / nconns : fmod((double)i * stagger_ns, p);
        v[i].conn = i;
    }
    qsort(v, nconns, sizeof(*v), slot_cmp);
    for (unsigned i = 0; i < nconns; i++) {
        phase[i] = (kb_mono_t)v[i].at;
        conn[i] = v[i].conn;
    }
    free(v);
    return 0;
}

void kb_schedule_set_phases(struct kb_schedule *s, const kb_mono_t *phase, unsigned nphase)
{
    s->phase = nphase ? phase : NULL;
    s->nphase = nphase;
    s->period_ns = nphase ? period_ns(s->rate, s->nthreads, nphase) : 0;
}

kb_mono_t kb_schedule_time(const struct kb_schedule *s, uint64_t n)
{
    uint64_t k, round;
    if (!s->phase)  /* n * 1e9 stays exact in a double up to 2^53 ns (104 days at 1 req/s) */
        return s->start + (kb_mono_t)((double)n * (double)KB_NS_PER_S / s->rate);
    k = n / s->nthreads;
    round = k / s->nphase;
    return s->start + s->phase[k % s->nphase] +
           (kb_mono_t)((double)round * s->period_ns +
                       (double)(n % s->nthreads) * (double)KB_NS_PER_S / s->rate);
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
