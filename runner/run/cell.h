/* cell.h -- the judgement of a cell (one runtime x route x rate) from its samples: the
 * matrix's repeats and the confirmation samples aggregated into one row of medians with
 * min-max ranges and one verdict, and where each runtime-route's curve stops holding (its
 * boundary) and how many more samples that boundary wants. The curve's rounds ask it
 * (runner/run/curve/curve_rounds.h) and the report renders what it says
 * (runner/report/report.h), so the two never disagree on a cell. */
#ifndef KB_CELL_H
#define KB_CELL_H

#include <jansson.h>
#include <stddef.h>

/* The most runtimes, routes or rates a plan may hold: the charts and tables keep one slot
 * per runtime on the stack, and a plan past it is refused when read, never drawn in part. */
#define KB_CELLS_MAX_AXIS 64
#define KB_CONFIRM_MAX 9         /* most samples a boundary rate may ask for */

/* One figure over a row's repeats. Latency is in microseconds throughout the model, as in
 * load.json and series.csv, so no writer converts back and forth. n counts the repeats that
 * had the figure: an empty histogram has none (JSON null), and n == 0 prints as "-" or null,
 * never as 0. bound: some repeat's figure was only a lower bound (requests still unanswered
 * when the drain ended, recorded at drain end minus intended time). Raising any input can
 * only raise a median, min or max, so each of the three is then a lower bound too. */
struct kb_stat {
    double med, min, max;
    int n, bound;
};

struct kb_cell {
    char runtime[32], route[32];
    char id[128];                /* runtime-route-rate: the point id, less -rN with repeats */
    char first_id[128];          /* the first complete repeat's point id, "" when none */
    char unc_id[128];            /* the first repeat whose own or server verdict is uncontrolled */
    long rate;
    int planned;                 /* the plan has points here (db: gray-static only) */
    int n;                       /* repeats found (the matrix's and the confirmation samples) */
    int controlled_n;            /* of them, those whose own verdict was controlled */
    int client_limited_n;        /* of them, those whose client was not trusted */
    char verdict[16];            /* aggregated verdict */
    char reason[512];            /* first failure/client-limit reason, or the last point's */
    /* What the figures alone give, trusted client or not (verdict.json's server_verdict).
     * "" when unknown. */
    char server_verdict[16];
    char server_reason[512];
    int trust_known, trust_ok;   /* client_trust: known for every repeat; ok in every one */
    char trust_reason[512];      /* the first repeat's reason when not ok */
    struct kb_stat achieved, delivery, p50, p90, p99, p999, max;   /* latency in us */
    long long errors, non2xx, mismatches;                          /* summed over repeats */
    /* errors apart, summed: socket errors (connect, read, write, peer close, malformed),
     * timeouts before the drain's end, requests only unanswered when the drain ended (in
     * errors too, but an overloaded server's queue, not a failure), and completions */
    long long err_io, err_timeout, unanswered, completed;
    long long scheduled, bounded;            /* summed; bounded: recorded at a lower bound */
    double bound_from_us;                    /* smallest lower bound of any repeat; -1 none */
    double client_cpu_max;                   /* fraction of the client's CPUs, max over repeats */
    double lag_p99_max_us, rx_p99_max_us;    /* client send lag / receive delay p99; -1 absent */
    int threads_min, threads_max, threads_requested;   /* the client's threads; 0 unknown */
    int client_cpus;                         /* CPUs the client was given, max; 0 unknown */
    double server_cpu_med;                   /* fraction of one CPU, median */
    struct kb_stat cpu_interval_s;           /* server CPU seconds over the measured interval */
    struct kb_stat cpu_us_per_response;      /* that over the responses completed in it */
    struct kb_stat floor_multiple;           /* that over the host's floor measured before
                                                it (an interleaved run's; n 0 otherwise) */
    long long rss_max;
    long long pss_max;                       /* the whole fixture's PSS: shared pages counted
                                                once across its processes; 0 unknown */
    /* What the host withheld (verdict.json's host): the largest per-second steal share of
     * the server's and the client's CPUs over the repeats, -1 where none was read; and
     * whether in some repeat it was enough to explain the verdict. */
    double steal_server_max, steal_client_max;
    int host_could_decide;
    int queue_grew_n;                        /* repeats whose queue grew through their
                                                measured seconds (runner/run/curve/backlog.h) */
    json_t *point_ids;                       /* array of the repeats' ids; owned */
};

/* How the caller reads a sample: sample() gives a complete point's verdict.json (a new
 * reference) or NULL when it is not complete; missing() hears of each planned or confirmed
 * point without one; floor_us() gives the host floor sample's CPU us per response (0: none).
 * The report reads through its own checks and re-derivation; the rounds read plainly. */
struct kb_cell_reader {
    json_t *(*sample)(void *ctx, const char *id, long rate);
    void (*missing)(void *ctx, const char *id);
    double (*floor_us)(void *ctx, const char *floor_sample);
    void *ctx;
};

/* Every cell of a run: rows, one per plan runtime x route x rate (the grid's, with the
 * confirmation samples); fine, each refined cell's held end as a row of its own (never in
 * rows: the boundaries the curve confirms and refines are the grid's). */
struct kb_cells {
    const json_t *plan;          /* runtimes, routes, rates, points, criteria; not owned */
    double min_delivery, max_p99_us;
    struct kb_cell *rows, *fine;
    size_t nrows, nfine;
};

/* The plan's lists each at most KB_CELLS_MAX_AXIS long, every name plain (paths.h), every
 * rate a whole number above 0, every point's id, runtime and route plain. 0, or -1 with err
 * naming the entry (dir names the run). */
int kb_cells_check_plan(const json_t *plan, const char *dir, char *err, size_t errlen);

/* c's rows and fine from plan's points, confirm's (confirm.json, or NULL) and refine's
 * located cells (refine.json, or NULL), read through rd; c->min_delivery and max_p99_us
 * judge them and are the caller's to set first. */
void kb_cells_build(struct kb_cells *c, const json_t *plan, const json_t *confirm,
                    const json_t *refine, const struct kb_cell_reader *rd);
void kb_cells_free(struct kb_cells *c);

/* A run directory's cells as the curve reads them between its rounds: plan.json,
 * confirm.json, refine.json and every complete point's verdict.json, each schema-checked;
 * *plan owns what c->plan points to. 0, or -1 with err. */
int kb_cells_load(const char *dir, struct kb_cells *c, json_t **plan, char *err,
                  size_t errlen);

/* The plan's names in order. */
size_t kb_cells_nruntimes(const struct kb_cells *c);
const char *kb_cells_runtime(const struct kb_cells *c, size_t i);
size_t kb_cells_nroutes(const struct kb_cells *c);
const char *kb_cells_route(const struct kb_cells *c, size_t i);
size_t kb_cells_nrates(const struct kb_cells *c);
long kb_cells_rate(const struct kb_cells *c, size_t i);

/* The row for runtime/route/rate, or NULL: the grid's, else a refined held end's (fine). */
const struct kb_cell *kb_cells_row(const struct kb_cells *c, const char *runtime,
                                   const char *route, long rate);
/* The highest grid rate whose aggregated verdict is controlled; 0 when none. */
long kb_cells_highest(const struct kb_cells *c, const char *runtime, const char *route);

/* ---- a cell's boundary and its confirmation (cellbound.c) ---- */

/* Where a runtime's curve on a route changes: the highest rate whose row is controlled
 * (held) and the next planned rate above it (next; the lowest rate when none is controlled).
 * A rate of 0 is none; strings are the rows' own. */
struct kb_boundary_rate {
    long rps;
    int n, controlled_n;         /* samples, and those controlled on their own figures */
    int settled;                 /* its samples agree so plainly that more cannot move the
                                    median: all controlled, or none and every one past the
                                    same criterion */
    const char *verdict;         /* the row's ("" where rps is 0) */
};
struct kb_boundary {
    const char *runtime, *route;
    struct kb_boundary_rate held, next;
};

/* Every planned runtime x route's boundary, in plan order; the count (at most max). */
size_t kb_cells_boundaries(const struct kb_cells *c, struct kb_boundary *out, size_t max);

/* How many more samples a boundary rate needs for its median over `samples` to be decided:
 * none once more than half of them are in and settled (the rest cannot move a median
 * that all of those agree on), none for a failed or missing row (more samples cannot change
 * what it is), else samples less those it has. A client-limited row is sampled: trusted
 * samples can outvote a client's passing stall (its row is client-limited only where its
 * client-limited samples could decide the medians), and one still client-limited with all
 * its samples in gets two more (samples > 1). */
int kb_boundary_wants(const struct kb_boundary_rate *b, int samples);

#endif
