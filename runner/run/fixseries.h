/* fixseries.h -- a fixture's processes over a load, sample by sample: the one record the
 * curve, the soak and the qualification keep of what they sample (runner/run/fixture.h's
 * kb_fixture_sample_server), each then drawing its own figures from it -- the curve its CPU
 * per response (the CPU between the load's interval ends, interpolated) and its maxima, the
 * soak and the qualification their RSS and descriptor slopes.
 *
 * Owns the series (growable, bounded), the maxima and the mean CPU fraction. A full series
 * drops every other sample and keeps one in two from then on: it always spans the whole load,
 * evenly, with its newest sample last, however long the load. A sample that
 * read no process (the fixture gone, or not started) is kept out: its zeros are not the
 * server's. Pure memory; nothing here reads /proc or prints. */
#ifndef KB_FIXSERIES_H
#define KB_FIXSERIES_H

#include <stddef.h>

#include "runner/sandbox/procs.h"

struct kb_fixseries {
    double *t, *cpu, *rss, *fds;   /* seconds (the caller's clock), CPU seconds, bytes, count */
    size_t n, cap, max;            /* max: the most samples kept at once (at least 4) */
    size_t stride;                 /* one sample in stride is kept, the newest always */
    int provisional;               /* the last kept is the newest, off the stride */
    size_t seen;                   /* samples that read a process, kept or not */
    double last_t, last_cpu;       /* the newest sample read, for the next fraction */
    long long rss_max, pss_max;    /* pss_max -1 while no sample offered it */
    long fds_max, threads_max, procs_max;
    double frac_sum;               /* CPU fraction between consecutive samples, summed */
    size_t nfrac;
};

void kb_fixseries_init(struct kb_fixseries *s, size_t max);
void kb_fixseries_free(struct kb_fixseries *s);

/* One sample at time t. Returns the CPU fraction since the previous sample that read a
 * process (of one CPU), or a negative value when there is none (the first, or a sample
 * without process). */
double kb_fixseries_add(struct kb_fixseries *s, double t, const struct kb_proc_sample *p);

/* The cumulative CPU seconds at time t, interpolated between the samples around it; NAN
 * outside them. */
double kb_fixseries_cpu_at(const struct kb_fixseries *s, double t);

/* The mean of the fractions kb_fixseries_add returned; 0 with none. */
double kb_fixseries_cpu_mean(const struct kb_fixseries *s);

#endif
