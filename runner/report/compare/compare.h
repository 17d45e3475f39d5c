/* compare.h -- two runs side by side (`kneebench compare`): what moved, first -- the largest
 * changes beyond noise, the runs' noise floors and the answers that changed -- then per
 * runtime and route the highest controlled points, and per point present in both runs
 * (runtime-route-rate with evidence in each) the change in achieved rate and corrected p99,
 * judged against the spread of each run's samples. Built from two report models
 * (runner/report/report.h, kb_report_load), so it reads exactly the evidence the reports
 * read, a row's samples being its repeats and any confirmation samples the curve added.
 * kb_cmp_build() and kb_cmp_judge() are pure; the writers (compare_out.c) only format the
 * model onto a stream. */
#ifndef KB_COMPARE_H
#define KB_COMPARE_H

#include <stddef.h>
#include <stdio.h>

#include "runner/report/report.h"

/* The default floor of --min-change: below saturation the achieved rate is the requested
 * rate to within the schedule's rounding, so the ranges of a few repeats can miss each other
 * by a hundredth of a percent; a change that small is not what anyone asks about. */
#define KB_CMP_FLOOR_PCT 1.0

/* Beyond noise means every sample of one run lies above every sample of the other. Where
 * nothing changed and a point's samples are alike (exchangeable), that happens by chance with
 * probability 2 a! b! / (a + b)! for a and b samples, whatever their distribution: 10 % for 3
 * and 3, 20 % for 2 and 3, 50 % for 1 and 3. A change is judged only where that chance is at
 * most this much; else no outcome could be told from chance, and it is unjudged. Runs of the
 * usual --repeats 3 sit exactly at it, as they always have. */
#define KB_CMP_MAX_CHANCE 0.1
/* How many of the largest moves the first block lists. */
#define KB_CMP_TOP_MOVES 10

enum kb_cmp_call {
    KB_CMP_NO_FIGURE,          /* a run has no figure here (an empty histogram) */
    KB_CMP_WITHIN,             /* the ranges overlap, or the change is under the floor */
    KB_CMP_BETTER,             /* the ranges are apart, the good way */
    KB_CMP_WORSE,
    KB_CMP_UNJUDGED_FEW,       /* too few samples: even apart, the ranges could be chance */
    KB_CMP_UNJUDGED_BOUND,     /* a lower bound leaves the direction unknown */
};

/* One figure in both runs: medians, min-max over the samples, and the call on its change. */
struct kb_cmp_change {
    struct kb_stat a, b;       /* a.n, b.n: the samples with this figure in each run */
    double pct;                /* (b.med - a.med) / a.med x 100; 0 when a.med is 0 */
    double chance;             /* kb_cmp_chance(a.n, b.n); 1 when a run has no figure */
    enum kb_cmp_call call;
};

enum kb_cmp_figure { KB_CMP_ACHIEVED, KB_CMP_P99 };

struct kb_cmp_point {
    char runtime[32], route[32], id[128];
    long rate;
    char verdict_a[16], verdict_b[16];
    struct kb_cmp_change achieved, p99;
};

/* A figure that moved beyond noise: point index into kb_cmp.points, which figure, and the
 * size of its change (|pct|, what the moves are ordered by). */
struct kb_cmp_move {
    size_t point;
    enum kb_cmp_figure figure;
    double size_pct;
};

/* A runtime x route planned in either run: its answer in each (proven is the highest
 * controlled rate; client_from says it is only a lower bound; indicative and
 * below_unproven what the server's figures gave where the client was not trusted). */
struct kb_cmp_top {
    char runtime[32], route[32];
    struct kb_report_answer a, b;
    int changed;               /* the two answers differ in anything report.md shows */
};

/* A run's noise floor: how far apart a point's own samples lie, (max - min) / median in
 * percent, over the rows with two samples or more (p99: those whose figure is exact). */
struct kb_cmp_noise {
    int rows, rows_sampled;    /* rows with evidence; of them, with 2+ samples */
    int achieved_n, p99_n;     /* spreads measured */
    double achieved_med_pct, achieved_max_pct, p99_med_pct, p99_max_pct;
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
    struct kb_cmp_move *moves; /* every figure beyond noise, the largest change first */
    size_t nmoves;
    size_t judged;             /* figures judged (within or beyond noise) */
    double chance_sum;         /* over those, the sum of their chances: how many calls of
                                  beyond noise chance alone would make, were nothing changed */
    struct kb_cmp_noise noise[2];
    size_t only_a, only_b;     /* points with evidence in one run only */
    double floor_pct;
};

/* 2 a! b! / (a + b)!: the chance that a and b exchangeable samples fall all of one above all
 * of the other; 1 when either count is below 1. */
double kb_cmp_chance(int a, int b);

/* The call on one figure's change from a to b. lower_is_better: latency (a rise is worse);
 * otherwise a fall is worse (achieved rate). Apart means b's range lies wholly above or
 * below a's, judged only where their sample counts make that unlikely by chance
 * (KB_CMP_MAX_CHANCE); a lower bound (stat.bound) can only hide a higher true value, so a
 * rise is certain only when a is exact and a fall only when b is. */
enum kb_cmp_call kb_cmp_judge(const struct kb_stat *a, const struct kb_stat *b,
                              int lower_is_better, double floor_pct);
const char *kb_cmp_call_name(enum kb_cmp_call c);     /* CSV: "worse", "unjudged_few_samples" */
const char *kb_cmp_call_words(enum kb_cmp_call c);    /* markdown: "worse, beyond noise" */

/* A point's figure as the model holds it. */
const struct kb_cmp_change *kb_cmp_figure_of(const struct kb_cmp_point *p,
                                             enum kb_cmp_figure f);

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
