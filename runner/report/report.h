/* report.h -- a run directory's evidence (and nothing else) read into a model, repeats
 * aggregated, and report.md, report.csv, report.json and the SVG charts written from it.
 *
 * kb_report_load() reads plan.json, run.json, fixtures/<rt>/, each point's verdict.json,
 * DONE and hostclock.json, calibrate/calibrate.json when the curve calibrated, and the
 * series.csv of each runtime's first uncontrolled point per route (where the queue forms);
 * points without DONE are listed in missing. A row is one runtime x route x rate: medians
 * over repeats with min-max ranges. The writers (report_md.c, report_data.c,
 * report_svg.c) only read the model; kb_report_free() frees it. The soak's report is
 * report/soak/report_soak.h's. What only the report's files share is in report_int.h. */
#ifndef KB_REPORT_H
#define KB_REPORT_H

#include "runner/run/cell.h"
#include "runner/util/paths.h"

#include <jansson.h>
#include <stddef.h>
#include <stdio.h>

/* report.csv's and report.json's schema (docs/report-format.md). 2: latency in us with
 * _is_bound flags, a point id per row, units in every name. 3: ratios to the run's baseline
 * (report.json "baseline", "vs_baseline_ratio"), "cost" per runtime at its own highest held
 * rate in place of "efficiency", no per-row capacity estimate; the units reach report.json's
 * copies of the run's criteria, host_clock's count and the readiness curve's points, and a
 * fixture's limits is null, not absent, where none were read back. */
#define KB_REPORT_SCHEMA_VERSION 4
/* The most runtimes, routes or rates a plan may hold (runner/run/cell.h). */
#define KB_REPORT_MAX_AXIS KB_CELLS_MAX_AXIS

struct kb_calibrate_result;      /* runner/run/calibrate.h */

struct kb_rederive;           /* below */

struct kb_report {
    char dir[KB_PATH_MAX];              /* the run directory the evidence was read from */
    json_t *plan, *run;          /* owned */
    json_t *fixtures;            /* {runtime: {limits, identity sha256, preflight}} owned */
    char **missing;              /* ids without a completion marker */
    size_t nmissing;
    struct kb_cell *rows;
    size_t nrows;
    int repeats, unconstrained, partial;
    double min_delivery, max_p99_us;
    struct kb_calibrate_result *cal;   /* calibrate/calibrate.json read, or NULL (owned) */
    json_t *cal_json;            /* the same file as written (criteria, CPUs), or NULL; owned */
    char cal_note[512];          /* when cal is NULL: absent, or why it could not be read */
    int margin_gated;            /* points judged when a margin gated (judgement.h): older runs */
    struct kb_report_series *series;   /* one per runtime x route with an uncontrolled row
                                          (runner/report/report_int.h) */
    size_t nseries;
    /* The papers' highest controlled points (the contract's "published"): {source, host,
     * highest_controlled_rps: {runtime: {route: rps}}, and where the contract has them
     * points: [{runtime, route, rate, section, achieved_rps, delivery, p50_us, p99_us,
     * p999_us}] (the paper's figures at those points, a figure it does not state left
     * out)}, or NULL (published_note says why).
     * For orientation beside this run's: measured on the papers' host, never a target. */
    json_t *published;           /* owned */
    char published_note[256];
    /* The papers' curve for the plan's profile (published.curves; db-readiness, db-baseline):
     * {profile, title, source, host, runtime, route, points: [{rate, achieved_rps, delivery,
     * p99_us}]}, or
     * NULL when that profile has none. Paper's host, beside this run's: never a target. */
    json_t *published_curve;     /* owned */
    struct kb_rederive *rd;      /* the re-derivation the rows came from, or NULL (not owned) */
    json_t *hostclock;           /* the points' CPU clocks (kb_hostclock_summary); owned */
    /* confirm.json: the samples the curve added at each cell's boundary, {samples, points:
     * [{id, runtime, route, rate, sample}]}, rows' repeats beside the plan's; NULL when the
     * run added none. Owned. */
    json_t *confirm;
    /* refine.json: each cell's knee refined between its grid rates (`curve --refine`),
     * {resolution, confirm_samples, cells: [{runtime, route, grid_lo_rps, grid_hi_rps,
     * lo_rps, hi_rps, step, rates}]}; NULL when the run did not refine. Owned. */
    json_t *refine;
    /* Each located cell's refined held end as a row of its own (runtime, route, rate lo_rps),
     * over the samples the refinement took there (points/<id>-f<k>, <id>-h<k>): what the
     * answer, the cost and the charts read for that cell in place of the grid's highest
     * held rate. Never in rows, which stay the grid's (the boundaries the curve confirms and
     * refines are the grid's). Owned. */
    struct kb_cell *fine;
    size_t nfine;
    /* An interleaved run's host floor (floor/<id>/floor.json): {id: floor.json}, the samples
     * of kb-control's CPU per response taken beside the runtimes; NULL when it has none. */
    json_t *floor;
    /* The contract's runtime names in its order, or NULL where it could not be read: a
     * runtime's colour in the charts follows its place there, so it keeps its colour in
     * every report whichever runtimes a run had. Owned. */
    json_t *contract_runtimes;
    /* The contract the published figures and the runtimes' order come from: the run's own
     * copy (contract.json, kept when it began: contract_kept) or, for a run from before runs
     * kept one, the checkout's. contract_note: "" when the copy was read and the checkout's
     * contract is the same; else what a reader must be told (the checkout's differs, the copy
     * is not the one run.json names, no copy was kept), on stderr and in report.md. */
    int contract_kept;
    char contract_note[1024];
    /* The first evidence file whose schema_version this kneebench does not know (a newer
     * one wrote it): the load fails with it. "" when none. */
    char schema_err[512];
};

/* Re-derivation (report_rejudge.c): every complete point's verdict derived again from the
 * run's raw files by the curve's own judgement (runner/run/judgement.h) -- load.json, verdict.json's
 * record of what else the judgement read (judged_by), calibrate/calibrate.json -- and set
 * against the stored one. With rejudge, the rows then take the verdicts under min_delivery
 * and max_p99_us in place of the run's, and report.md names that criterion first. */
struct kb_rederive {
    int rejudge;
    double min_delivery, max_p99_us;     /* rejudge: the criterion (fill both) */
    size_t nchecked;                     /* points re-derived */
    char **mismatch;                     /* "point ID: stored verdict X, re-derived Y (why)" */
    size_t nmismatch;
    char **unchecked;                    /* ids with neither a judgement record nor the load
                                            generator's output (hand-made evidence) */
    size_t nunchecked;
    json_t *changed;                     /* rejudge: [{point, stored, rejudged, reason}] or NULL */
};
/* kb_report_load, with every complete point re-derived into rd (zeroed by the caller but for
 * rejudge and its criterion). Mismatches do not fail the load: the caller refuses. */
int kb_report_load_rederived(const char *dir, struct kb_report *r, struct kb_rederive *rd,
                             char *err, size_t errlen);
void kb_rederive_free(struct kb_rederive *rd);

/* 0, or -1 with err (no plan.json, unreadable verdict). Missing points are not an error
 * here; the caller decides (refuse, or --partial). */
int kb_report_load(const char *dir, struct kb_report *r, char *err, size_t errlen);
void kb_report_free(struct kb_report *r);

/* The row for runtime/route/rate, or NULL: the grid's, else a refined held end's (fine). */
const struct kb_cell *kb_report_row(const struct kb_report *r, const char *runtime,
                                    const char *route, long rate);
/* The answer for one runtime x route (report_answer.c): what the report's first table
 * says. Exactly one of proven, below, failed_at is set when the route is planned and has
 * evidence; indicative and below_unproven say what the server's own figures give where the
 * client was not trusted, and are never counted as proven. */
struct kb_report_answer {
    int planned;                 /* the plan has this runtime on this route */
    long proven;                 /* highest controlled rate; 0 none */
    long client_from;            /* the point above proven was client-limited: its rate (then
                                    proven is only a lower bound); 0 otherwise */
    long indicative;             /* highest rate whose server verdict is controlled, when it
                                    is above proven; 0 otherwise */
    long below;                  /* nothing controlled and the lowest rate was trusted and
                                    uncontrolled: that rate (a definite result) */
    long below_unproven;         /* nothing controlled or indicative, the lowest rate
                                    client-limited and its server verdict uncontrolled */
    long failed_at;              /* nothing controlled and the lowest rate failed */
    int past_margin;             /* proven lies above what the calibration's margin covers,
                                    and held there (a run whose margin gated has none) */
    double level;                /* for ranking: max(proven, indicative), 0 when below */
    /* With --refine, where the refinement located the cell's knee: proven is the refined
     * held end (refine.json's lo_rps), refined_hi the lowest rate above it that did not hold,
     * grid_proven the grid's highest controlled rate it replaced. refined 0: proven is the
     * grid's, grid_proven equals it, refined_hi 0. */
    int refined;
    long grid_proven, refined_hi;
};
void kb_report_answer_of(const struct kb_report *r, const char *runtime, const char *route,
                         struct kb_report_answer *a);
/* Every planned runtime x route's boundary (runner/run/cell.h), in plan order; the count. */
size_t kb_report_boundaries(const struct kb_report *r, struct kb_boundary *out, size_t max);

/* Writers: 0 or -1 with err. Each writes atomically into dir. */
int kb_report_write_md(const struct kb_report *r, const char *dir, char *err, size_t errlen);
int kb_report_write_csv(const struct kb_report *r, const char *dir, char *err, size_t errlen);
int kb_report_write_json(const struct kb_report *r, const char *dir, char *err, size_t errlen);
/* charts/achieved-<route>.svg and charts/p99-<route>.svg per route, and
 * charts/series-<runtime>-<route>.svg per read series (latency over time). */
int kb_report_write_svg(const struct kb_report *r, const char *dir, char *err, size_t errlen);
/* report.html: the same answer, tables and charts in one self-contained page (inline SVG and
 * CSS, a few lines of script for the readout, no request to anything), with each point's
 * latency over time and links to its evidence (relative to dir, which lies in r->dir or one
 * level below it). */
int kb_report_write_html(const struct kb_report *r, const char *dir, char *err, size_t errlen);

/* The plan's names in order. */
size_t kb_report_nruntimes(const struct kb_report *r);
const char *kb_report_runtime(const struct kb_report *r, size_t i);
size_t kb_report_nroutes(const struct kb_report *r);
const char *kb_report_route(const struct kb_report *r, size_t i);

#endif
