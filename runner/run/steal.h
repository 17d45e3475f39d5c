/* steal.h -- what the host withheld from the server's and the client's CPUs: the steal
 * column of /proc/stat, the time a hypervisor ran something else while a vCPU of this VM
 * wanted to run (always 0 on bare metal).
 *
 * Owns reading it for a set of CPUs (the file a parameter, so tests give a fake one), each
 * role's series over a point (the fraction stolen in every interval between two samples,
 * its largest, the whole point's), the point's record in verdict.json, and the judgement
 * whether that theft could have decided the point's verdict: the point judged as measured
 * and again with the largest stretch the host stole from the server taken off its corrected
 * p99 and the stolen share of its CPU added back to its delivery (docs/protocol.md, "What
 * the host withheld"). A role whose CPUs are on another host is not read: its figures are
 * null, never 0. */
#ifndef KB_STEAL_H
#define KB_STEAL_H

#include <jansson.h>
#include <sched.h>

#include "runner/run/verdict.h"

#define KB_STEAL_PROCSTAT "/proc/stat"

/* One reading, summed over a set of CPUs, in /proc/stat's ticks. */
struct kb_steal_mark {
    unsigned long long steal, total;
    int ok;
};

/* Read the set's CPUs from procstat. 0, or -1 (unreadable, or a CPU of the set missing). */
int kb_steal_read(const char *procstat, const cpu_set_t *set, struct kb_steal_mark *m);

/* The fraction of the set's time stolen from a to b; NAN when either is not ok or no time
 * passed between them. */
double kb_steal_fraction(const struct kb_steal_mark *a, const struct kb_steal_mark *b);

/* One role's CPUs over a point. */
struct kb_steal_track {
    int on;                      /* the CPUs are this host's and were parsed */
    cpu_set_t set;
    struct kb_steal_mark first, prev;
    double last_fraction;        /* the latest interval's; NAN before the second sample */
    double max_fraction;         /* the largest interval's; NAN while there is none */
    double max_stolen_s;         /* the most the role lost in one interval, in seconds of
                                    one CPU: that interval's fraction times its length */
    double prev_t;               /* monotonic seconds of prev */
};

/* cpulist NULL (another host's CPUs) or unparsable: off. */
void kb_steal_track_init(struct kb_steal_track *t, const char *cpulist);
/* A reading at monotonic time now_s from procstat; updates the fractions. */
void kb_steal_track_sample(struct kb_steal_track *t, const char *procstat, double now_s);
/* The whole series' fraction, first reading to the last; NAN when fewer than two. */
double kb_steal_track_mean(const struct kb_steal_track *t);

/* verdict.json's "host": both roles' largest and whole-point fractions, the server's
 * largest stretch, and the judgement below (with why). New reference. */
json_t *kb_steal_json(const struct kb_steal_track *server, const struct kb_steal_track *client,
                      int could_decide, const char *why);

/* 1 when what the host stole from the server could have decided the point's verdict: it
 * held (controlled) without the theft, not as measured; 0 otherwise, and 0 when nothing is
 * known (the server's CPUs not read). why says which way, with the figures. */
int kb_steal_could_decide(const struct kb_point_load *r, const struct kb_criteria *c,
                          const struct kb_steal_track *server, char *why, size_t whylen);

#endif
