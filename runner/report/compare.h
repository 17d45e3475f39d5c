/* compare.h -- two runs side by side (`kneebench compare`): per runtime and route the highest
 * controlled points, and per point present in both runs (runtime-route-rate with evidence in
 * each) the change in achieved rate and corrected p99, judged against the spread of each
 * run's repeats. Built from two report models (runner/report/report.h, kb_report_load), so it reads
 * exactly the evidence the reports read. kb_cmp_build() and kb_cmp_judge() are pure; the
 * writers (compare_out.c) only format the model onto a stream. */
#ifndef KB_COMPARE_H
#define KB_COMPARE_H

#include <stddef.h>
#include <stdio.h>

#include "runner/report/report.h"

/* The default floor of --min-change: below saturation the achieved rate is the requested
 * rate to within the schedule's rounding, so the ranges of a few repeats can miss each other
 * by a hundredth of a percent; a change that small is not what anyone asks about. */
#define KB_CMP_FLOOR_PCT 1.0

enum kb_cmp_call {
    KB_CMP_NO_FIGURE,          /* a run has no figure here (an empty histogram) */
    KB_CMP_WITHIN,             /* the ranges overlap, or the change is under the floor */
    KB_CMP_BETTER,             /* the ranges are apart, the good way */
    KB_CMP_WORSE,
    KB_CMP_UNJUDGED_REPEATS,   /* a run has one repeat: no spread to judge against */
    KB_CMP_UNJUDGED_BOUND,     /* a lower bound leaves the direction unknown */
};

/* One figure in both runs: medians, min-max over repeats, and the call on its change. */
struct kb_cmp_change {
    struct kb_stat a, b;
    double pct;                /* (b.med - a.med) / a.med x 100; 0 when a.med is 0 */
    enum kb_cmp_call call;
};

struct kb_cmp_point {
    char runtime[32], route[32], id[128];
    long rate;
    char verdict_a[16], verdict_b[16];
    struct kb_cmp_change achieved, p99;
};

/* A runtime x route planned in either run: its answer in each (proven is the highest
 * controlled rate; client_from says it is only a lower bound). */
struct kb_cmp_top {
    char runtime[32], route[32];
    struct kb_report_answer a, b;
};

/* Per runtime: how its points moved, for the summary line. */
struct kb_cmp_tally {
    char runtime[32];
    int points, worse, better, unjudged, achieved_worse, p99_worse;
};

struct kb_cmp {
    struct kb_cmp_top *tops;
    size_t ntops;
    struct kb_cmp_point *points;
    size_t npoints;
    struct kb_cmp_tally *tally;
    size_t ntally;
    size_t only_a, only_b;     /* points with evidence in one run only */
    double floor_pct;
};

/* The call on one figure's change from a to b. lower_is_better: latency (a rise is worse);
 * otherwise a fall is worse (achieved rate). Apart means b's range lies wholly above or
 * below a's; a lower bound (stat.bound) can only hide a higher true value, so a rise is
 * certain only when a is exact and a fall only when b is. */
enum kb_cmp_call kb_cmp_judge(const struct kb_stat *a, const struct kb_stat *b,
                              int lower_is_better, double floor_pct);
const char *kb_cmp_call_name(enum kb_cmp_call c);     /* CSV: "worse", "unjudged_1_repeat" */
const char *kb_cmp_call_words(enum kb_cmp_call c);    /* markdown: "worse, beyond noise" */

/* Fills c from two loaded runs (a is the baseline). 0, or -1 with err (no memory). */
int kb_cmp_build(const struct kb_report *a, const struct kb_report *b, double floor_pct,
                 struct kb_cmp *c, char *err, size_t errlen);
void kb_cmp_free(struct kb_cmp *c);

/* Writers (compare_out.c): 0, or -1 when the stream failed. name_a/name_b head the columns'
 * explanation (the run directories). */
int kb_cmp_write_md(FILE *f, const struct kb_cmp *c, const struct kb_report *a,
                    const struct kb_report *b, const char *name_a, const char *name_b);
int kb_cmp_write_csv(FILE *f, const struct kb_cmp *c);

#endif
