/* report_int.h -- what the report's own files (runner/report*.c) share and nothing else
 * uses: the queue's per-second series, the rankings and ratios the writers print, the
 * calibration's part of kb_report_load, and the plan's rates. White-box tests include it;
 * the rest of the runner sees runner/report/report.h only. */
#ifndef KB_REPORT_INT_H
#define KB_REPORT_INT_H

#include <stddef.h>
#include <stdio.h>

#include "runner/report/report.h"
#include "contract/contract.h"

/* One second of a point's series.csv. Latency in us; < 0 when the second has none (an empty
 * field, or nothing completed). The _bound flags: that figure is only a lower bound (newer
 * series.csv files; older ones lack the columns and nothing is a bound). */
struct kb_report_sec {
    double start_s, length_s, achieved_rps, p50_us, p99_us, max_us;
    long long completed, errors, bounded;
    int p50_bound, p99_bound, max_bound;
};

/* A runtime's first uncontrolled point on a route and its series (n == 0: note says why).
 * A client-limited point is never uncontrolled, so where the client was not trusted the
 * first point whose own figures are uncontrolled (its server verdict) stands in
 * (past_margin). */
struct kb_report_series {
    char runtime[32], route[32], point[128];
    long rate;
    int past_margin;             /* client-limited, its own figures past the criteria (the
                                    queue behind the mark) */
    size_t n;
    struct kb_report_sec *v;     /* owned */
    char note[256];              /* "" when the series was read */
};

/* The highest rate whose aggregated verdict is controlled; 0 when none. */
long kb_report_highest(const struct kb_report *r, const char *runtime, const char *route);

/* runtime's level over the baseline's on route; 0 when either has none, or the plan names
 * no baseline. *soft: either side is a lower bound (client-limited above it) or indicative,
 * so the ratio is too. */
double kb_report_answer_ratio(const struct kb_report *r, const char *runtime, const char *route,
                              int *soft);

/* ---- the paper's figures for a point (report_paper.c) ---- */

/* The paper's figures for runtime on route at rate: r->published's points (the contract's
 * published.points.figures), or NULL. Orientation only: no verdict reads them. */
json_t *kb_report_paper_point(const struct kb_report *r, const char *runtime,
                              const char *route, long rate);
/* 1 when the paper gives figures for any of the plan's rates of runtime on route: its
 * table then has the paper's column. */
int kb_report_paper_any(const struct kb_report *r, const char *runtime, const char *route);
/* The point's figures as one cell, as the paper states them: "59259.63/s, p50 1.93 ms, p99
 * 85.76 ms, p99.9 97.15 ms (section 8)"; "" for NULL. Returns b. */
const char *kb_report_paper_cell(char *b, size_t len, json_t *p);

/* ---- the side-by-side comparison (report_side.c) ---- */

/* The run's floor/<id>/floor.json files into r->floor (NULL when there are none). */
void kb_report_load_floor(struct kb_report *r, const char *dir);
/* The floor sample id's CPU us per response; 0 when it has none. */
double kb_report_floor_us(const struct kb_report *r, const char *id);
/* The floor over the run: its samples that measured, their CPU us per response (median,
 * min, max) and the most the host stole from the server CPUs during one. n 0: none. */
struct kb_report_floor {
    int n;
    double med, min, max, steal_max;
};
void kb_report_floor_of(const struct kb_report *r, struct kb_report_floor *f);
/* One runtime beside the baseline on one route, each figure measured side by side:
 * cost: the ratio of their median CPU per response at every rate both were measured at,
 *   median over those rates (n_rates), with its min and max;
 * floor: the runtime's CPU per response as a multiple of the host's floor measured before
 *   each point, median over its rates, min and max (n_floor);
 * knee: the runtime's knee over the baseline's (refined brackets where the run refined,
 *   else the grid cells), with the range the brackets allow (lo, hi; hi 0: open above);
 *   knee_bound, base_bound: the runtime's knee, the baseline's, is only a lower bound (the
 *   client limited the point above it) or indicative, so the ratio is at least, or at most,
 *   what it says. knee 0: either held nothing. */
struct kb_report_side {
    int n_rates, n_floor, knee_bound, base_bound, refined;
    double cost, cost_min, cost_max;
    double floor, floor_min, floor_max;
    double knee, knee_lo, knee_hi;
};
void kb_report_side_of(const struct kb_report *r, const char *runtime, const char *route,
                       struct kb_report_side *s);
/* What a lower-bound knee makes of s's knee ratio, printed before it: ">= " (the runtime's
 * knee is a bound), "<= " (the baseline's), "~" (both), "" (neither, or no ratio). */
const char *kb_report_side_mark(const struct kb_report_side *s);

/* "By how much" (report_howmuch.c): per route, one sentence per runtime against the
 * baseline, the ratio of their held rates and of their CPU per response there, with the
 * spread of each. Nothing when the plan names no baseline or has one runtime. */
void kb_report_md_how_much(FILE *f, const struct kb_report *r);
/* One of its sentences, "ROUTE: RT holds ...", unwrapped (malloc'd; NULL without memory),
 * and whether the runtime has one on that route (planned there, and not the baseline). */
char *kb_report_how_much_text(const struct kb_report *r, const char *rt, const char *route);
int kb_report_how_much_wanted(const struct kb_report *r, const char *rt, const char *route);

/* What the answer's cells used, so that a writer explains only the notation it printed. */
struct kb_answer_used {
    int bound, unproven, below, failed, missing, refined, past_margin;
};
/* The cell's refinement (refine.json's entry) when it located the knee within the
 * resolution, else NULL: its lo_rps is then the cell's answer (kb_report_answer_of). */
const json_t *kb_report_refined(const struct kb_report *r, const char *rt, const char *route);
/* One cell of the answer as report.md and report.html print it: "60000" proven ("66900
 * (refined)" where --refine located the knee between the grid's rates: its held end);
 * ">= 60000" a lower bound (the point above was client-limited); "; 75000*" after it, what the
 * runtime's own figures gave where the client was not trusted (indicative); "< 8000" the
 * lowest rate already uncontrolled with the client trusted; "failed (8000)"; "none"
 * (nothing proven or lower, the client limited from the start); "missing"; "n/a" (not
 * planned); "^" after a proven rate the calibration's margin does not cover (it held
 * there). u records which of these it used. Returns b. */
const char *kb_report_answer_text(char *b, size_t len, const struct kb_report *r,
                                  const char *rt, const char *route, struct kb_answer_used *u);

/* The runtime every ratio is taken to: plan.json's "baseline" (the contract's
 * comparison.baseline); NULL for a plan written before plans recorded one, where no ratio
 * is taken (the run's contract is not kept, and a guess would name a runtime). */
const char *kb_report_baseline(const struct kb_report *r);
/* The same for a column head or a sentence: the name, or "the baseline" where there is
 * none (the writers then say that the plan names none). */
const char *kb_report_baseline_label(const struct kb_report *r);

/* A runtime's cost on a route where it means something: at its own highest held rate (the
 * highest whose own figures were controlled, trusted client or not), where a server's CPU
 * per response is its lowest before the queue forms. Comparing runtimes at one common rate
 * would measure the slow ones near their knee and the fast ones idling, when a wake-up per
 * request costs more than the request. rate 0: it held nothing; us 0: no CPU figure there.
 * capacity_rps is one CPU over that cost, never below the rate it held (capacity_floor:
 * the estimate fell below it, so the measured rate stands instead). */
struct kb_report_cost {
    long rate;
    double us;
    double capacity_rps;
    int capacity_floor;
};
void kb_report_cost_of(const struct kb_report *r, const char *runtime, const char *route,
                       struct kb_report_cost *c);
/* The geometric mean, over the routes where both have a cost, of runtime's CPU per
 * response over the baseline's, each at its own highest held rate; 0 when there is none. */
double kb_report_efficiency_ratio(const struct kb_report *r, const char *runtime);

/* The runtimes ranked: order[i] is the plan index of the runtime at place i, rank[i] its
 * rank (equal ranks for ties). Ordered by the sum over the routes every runtime runs of
 * their answers' levels, then by efficiency (lower CPU per response first), then by the
 * delivery at the lowest rate. Returns the count. */
size_t kb_report_rank(const struct kb_report *r, size_t *order, int *rank, size_t max);

/* The series chart's data for runtime/route, or NULL when it has no uncontrolled row. */
const struct kb_report_series *kb_report_series_of(const struct kb_report *r, const char *runtime,
                                                   const char *route);
/* The shortest last slice of a series.csv the report keeps: a shorter one is dropped (its
 * errors and lower bounds counted with the second before it), never drawn as a second. */
#define KB_SERIES_SLIVER_S 0.1
/* Reads a series.csv (header names the columns; start_s, achieved_rps, p50_us, p99_us,
 * max_us needed) into s->v/s->n, replacing what was there. 0, or -1 with err. */
int kb_report_read_series(const char *path, struct kb_report_series *s, char *err, size_t errlen);
/* 1 when the calibration's proven margin covers a point requested at rate, 0 when not,
 * -1 when the run has no calibration. */
int kb_report_covers(const struct kb_report *r, long rate);

/* A profile's readiness curve (report_readiness.c): this run's points beside the curve the
 * papers published for that profile (the contract's published.curves, read into
 * r->published_curve), and where each one's knee lies, read as the PostgreSQL paper reads it: delivery
 * and corrected p99 together. One point of either curve; NAN where a figure is absent. */
struct kb_knee_point {
    long rate;
    int present;                 /* the curve has this rate */
    int held;                    /* delivery >= min and p99 < max (this run: the point's
                                    server verdict is controlled, which adds no errors) */
    double achieved_rps, delivery, p99_us;
    int p99_bound;               /* p99 only a lower bound (requests never answered) */
    char verdict[16];            /* this run's aggregated verdict; "" for the paper's */
};
/* Where a curve stops holding: the last rate that held with every lower rate held, and the
 * next one, with what it missed. last_held 0: the lowest rate already missed; first_missed
 * 0: every rate held (the knee lies above the top rate). */
struct kb_knee {
    long last_held, first_missed;
    int missed_delivery, missed_p99;   /* what first_missed missed (both may be set) */
    int still_rising;            /* achieved rose from last_held to first_missed: the queue
                                    showed in latency before throughput stopped */
    size_t npoints;
};
/* The rates of both curves, ascending, into rates (at most max); the count. 0 when the run's
 * profile has no published curve. */
size_t kb_report_curve_rates(const struct kb_report *r, long *rates, size_t max);
/* The paper's / this run's point at rate (present 0 when that curve lacks it). */
void kb_report_curve_paper(const struct kb_report *r, long rate, struct kb_knee_point *p);
void kb_report_curve_run(const struct kb_report *r, long rate, struct kb_knee_point *p);
/* The knee over pts (ascending, absent ones skipped); what the first missed point missed is
 * read against the criteria given (the run's, or the re-judged ones). */
void kb_report_knee(const struct kb_knee_point *pts, size_t n, double min_delivery,
                    double max_p99_us, struct kb_knee *k);
/* Both curves and knees for report.json: {profile, title, runtime, route, host, source, points:
 * [{rate, paper: {...}, run: {...}}], paper_knee, run_knee}, or JSON null. New reference. */
json_t *kb_report_readiness_json(const struct kb_report *r);
/* Internal to kb_report_load: the published curve of the plan's profile into
 * r->published_curve (its delivery or achieved derived from the other), or NULL. */
void kb_report_load_curve(struct kb_report *r, const struct kb_published_curve *c);

/* A JSON evidence file of the run (plan.json, verdict.json, ...): NULL when absent or not
 * JSON, and NULL with r->schema_err set (the first such file) when its schema_version is one
 * this kneebench does not know (runner/util/schema.h): kb_report_load then fails, naming it. */
json_t *kb_report_evidence(struct kb_report *r, const char *path);

/* Internal to kb_report_load/kb_report_free (report_proof.c): the calibration (before the
 * rows: a re-derived verdict needs its margin) and the series (after them); neither fails
 * the load, a missing or unreadable file is noted in the model. */
void kb_report_load_calibration(struct kb_report *r, const char *dir);
void kb_report_load_series(struct kb_report *r, const char *dir);
/* One point's verdict.json v re-derived (report_rejudge.c), its load replaced by load.json
 * and, when re-judging, its verdict by the new one. */
void kb_report_rederive_point(struct kb_report *r, const char *dir, const char *id, long rate,
                              json_t *v);
void kb_report_free_proof(struct kb_report *r);

/* The plan's rates in order. */
size_t kb_report_nrates(const struct kb_report *r);
long kb_report_rate(const struct kb_report *r, size_t i);

/* One chart as report_svg.c writes it to charts/<kind>-<route>.svg (kind: achieved, p99,
 * cpu), whole, into f: report.html embeds the same drawing. */
void kb_report_svg_chart(FILE *f, const struct kb_report *r, const char *kind,
                         const char *route);
/* A point's corrected p50 and p99 in each second, small (report.html's grid), on a log axis
 * from lo_ms to hi_ms that its route's points share, the limit line and the drain shaded. */
void kb_report_svg_small_series(FILE *f, const struct kb_report *r,
                                const struct kb_report_series *s, double lo_ms, double hi_ms);

/* report.md's curves section and a profile's readiness curve (report_md_curves.c). */
void kb_report_md_curves(FILE *f, const struct kb_report *r);
/* "Refined knees": each cell's refinement (refine.json), nothing when the run had none. */
void kb_report_md_refined(FILE *f, const struct kb_report *r);
void kb_report_md_readiness(FILE *f, const struct kb_report *r);

#endif
