/* test_report.c -- the report model from a synthetic run directory: missing points named,
 * repeats aggregated into medians with ranges, failed repeats fail the row, highest
 * controlled point, and the writers' files (partial stamp, CSV rows, SVG per route); the
 * client margin from a calibrate.json (or its plain absence), and the first uncontrolled
 * point's per-second series.csv charted. Then newer evidence: figures that are only lower
 * bounds shown as bounds everywhere, empty histograms as no figure, the verdict under a
 * client-limited mark (indicative cells), "below" the lowest rate, the efficiency table,
 * report.csv's schema and point ids. */
#define _GNU_SOURCE
#include "runner/report/report.h"
#include "runner/report/report_int.h"
#include "runner/run/calibrate.h"
#include "runner/util/evidence.h"
#include "runner/util/paths.h"
#include "tests/lib/kb_check.h"

#include <math.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

static char dir[64];
static struct kb_report R;

/* plan: runtimes go, gray-static; route plaintext; rates 100, 200; 3 repeats. */
static void write_plan(void)
{
    char path[128], err[256];
    json_t *pts = json_array(), *plan, *run;
    const char *rts[] = { "go", "gray-static" };
    long rates[] = { 100, 200 };
    for (int r = 1; r <= 3; r++)
        for (int i = 0; i < 2; i++)
            for (int k = 0; k < 2; k++) {
                char id[64];
                snprintf(id, sizeof(id), "%s-plaintext-%ld-r%d", rts[i], rates[k], r);
                json_array_append_new(pts, json_pack("{s:s,s:s,s:s,s:I,s:i}", "id", id,
                    "runtime", rts[i], "route", "plaintext", "rate", (json_int_t)rates[k], "repeat", r));
            }
    plan = json_pack("{s:s,s:f,s:f,s:f,s:i,s:i,s:i,s:[s,s],s:[s],s:[i,i],s:s,s:b,s:s,s:s,"
                     "s:{s:f,s:i,s:f,s:i},s:O,s:s}", "profile", "quick", "duration_s", 1.0,
                     "warmup_s", 0.5, "drain_s", 0.5, "threads", 4, "connections", 256,
                     "repeats", 3, "runtimes", "go", "gray-static", "routes", "plaintext",
                     "rates", 100, 200, "backend", "native", "unconstrained", 0,
                     "server_cpus", "0", "client_cpus", "1", "criteria", "min_delivery", 0.95,
                     "max_p99_us", 100000, "client_cpu_max_fraction", 0.8,
                     "client_lag_p99_max_us", 1000, "points", pts, "baseline", "gray-static");
    ck_assert_ptr_nonnull(plan);
    kb_write_json_atomic(kb_path(path, sizeof(path), dir, "plan.json"), plan, err, sizeof(err));
    run = json_pack("{s:s,s:[s],s:{}}", "started", "now", "command_line", "curve", "host");
    kb_write_json_atomic(kb_path(path, sizeof(path), dir, "run.json"), run, err, sizeof(err));
    json_decref(pts);
    json_decref(plan);
    json_decref(run);
}

/* A point's verdict.json with what every version of it records: the point's own verdict
 * (server_verdict) is the verdict, except under a client-limited mark, where it is left
 * out (unknown) unless own names it. */
static void write_point_own(const char *id, const char *verdict, const char *own,
                            double achieved, double p99_us, long long errors)
{
    char pdir[256], path[300], err[256];
    json_t *v = json_pack("{s:s,s:s,s:s,s:{s:f,s:f,s:{s:I},s:I,s:{s:I},s:f,s:{s:f,s:f,s:f,s:f,s:f},"
                          "s:{s:f}},s:{s:f,s:I}}",
        "point", id, "verdict", verdict, "reason", verdict,
        "load", "achieved_rps", achieved, "delivery", achieved / 100.0,
        "errors", "total", (json_int_t)errors, "non2xx", (json_int_t)0,
        "mismatches", "total", (json_int_t)0, "client_cpu_fraction", 0.1,
        "corrected_us", "p50", p99_us / 2, "p90", p99_us / 1.5, "p99", p99_us, "p999", p99_us,
        "max", p99_us, "lag_us", "p99", 10.0,
        "server", "cpu_mean_fraction", 0.5, "rss_max_bytes", (json_int_t)1000);
    /* a second's warmup beside a second measured: delivery up to 2 is a backlog's answers,
     * which the achieved figures here (up to twice the 100 that stands for the rate) reach */
    json_object_set_new(json_object_get(v, "load"), "warmup_s", json_real(1));
    json_object_set_new(json_object_get(v, "load"), "duration_s", json_real(1));
    if (!own && strcmp(verdict, "client-limited"))
        own = verdict;
    if (own)
        json_object_set_new(v, "server_verdict", json_string(own));
    snprintf(pdir, sizeof(pdir), "%s/points/%s", dir, id);
    kb_mkdirs(pdir, err, sizeof(err));
    kb_write_json_atomic(kb_path(path, sizeof(path), pdir, "verdict.json"), v, err, sizeof(err));
    kb_write_atomic(kb_path(path, sizeof(path), pdir, "DONE"), "{}", 2, err, sizeof(err));
    json_decref(v);
}

static void write_point(const char *id, const char *verdict, double achieved, double p99_us,
                        long long errors)
{
    write_point_own(id, verdict, NULL, achieved, p99_us, errors);
}

static void setup(void)
{
    snprintf(dir, sizeof(dir), "/tmp/kb-report-XXXXXX");
    ck_assert_ptr_nonnull(mkdtemp(dir));
    write_plan();
    for (int r = 1; r <= 3; r++) {
        char id[64];
        /* go: controlled at 100 (p99 1, 2, 3 ms), uncontrolled at 200 */
        snprintf(id, sizeof(id), "go-plaintext-100-r%d", r);
        write_point(id, "controlled", 100, r * 1000.0, 0);
        snprintf(id, sizeof(id), "go-plaintext-200-r%d", r);
        write_point(id, "uncontrolled", 150, 500000, 0);
        /* gray-static: controlled at both, but one 200 repeat failed */
        snprintf(id, sizeof(id), "gray-static-plaintext-100-r%d", r);
        write_point(id, "controlled", 100, 900, 0);
        snprintf(id, sizeof(id), "gray-static-plaintext-200-r%d", r);
        if (r != 3)
            write_point(id, r == 2 ? "failed" : "controlled", 200, 900, r == 2 ? 5 : 0);
    }
}

static void teardown(void)
{
    char cmd[128];
    kb_report_free(&R);
    snprintf(cmd, sizeof(cmd), "rm -rf %s", dir);
    ck_assert_int_eq(system(cmd), 0);
}

START_TEST(missing_named)
{
    char err[256];
    ck_assert_int_eq(kb_report_load(dir, &R, err, sizeof(err)), 0);
    ck_assert_uint_eq(R.nmissing, 1);
    ck_assert_str_eq(R.missing[0], "gray-static-plaintext-200-r3");
}
END_TEST

START_TEST(repeats_aggregate)
{
    char err[256];
    const struct kb_cell *w;
    ck_assert_int_eq(kb_report_load(dir, &R, err, sizeof(err)), 0);
    w = kb_report_row(&R, "go", "plaintext", 100);
    ck_assert_int_eq(w->n, 3);
    ck_assert_double_eq_tol(w->p99.med, 2000, 1e-9);
    ck_assert_double_eq_tol(w->p99.min, 1000, 1e-9);
    ck_assert_double_eq_tol(w->p99.max, 3000, 1e-9);
    ck_assert_int_eq(w->p99.n, 3);
    ck_assert_int_eq(w->p99.bound, 0);
    ck_assert_str_eq(w->verdict, "controlled");
    ck_assert_str_eq(kb_report_row(&R, "go", "plaintext", 200)->verdict, "uncontrolled");
    w = kb_report_row(&R, "gray-static", "plaintext", 200);
    ck_assert_int_eq(w->n, 2);
    ck_assert_str_eq(w->verdict, "failed");       /* one failed repeat fails the row */
    ck_assert_int_eq(w->errors, 5);
    ck_assert_int_eq(kb_report_highest(&R, "go", "plaintext"), 100);
    ck_assert_int_eq(kb_report_highest(&R, "gray-static", "plaintext"), 100);
}
END_TEST

/* Each cell's boundary from the rows, what more samples it wants, and the samples a curve
 * added (confirm.json) aggregated into their rows beside the matrix's, a listed one without
 * its evidence missing. */
START_TEST(boundaries_and_confirmation_samples)
{
    struct kb_boundary b[8];
    char err[256], path[128];
    json_t *cf;
    ck_assert_int_eq(kb_report_load(dir, &R, err, sizeof(err)), 0);
    ck_assert_uint_eq(kb_report_boundaries(&R, b, 8), 2);
    ck_assert_str_eq(b[0].runtime, "go");
    ck_assert_int_eq(b[0].held.rps, 100);
    ck_assert_int_eq(b[0].next.rps, 200);
    ck_assert_int_eq(b[0].held.n, 3);
    ck_assert_int_eq(b[0].held.controlled_n, 3);
    ck_assert_str_eq(b[0].next.verdict, "uncontrolled");
    ck_assert(b[0].held.settled && b[0].next.settled);      /* 3 of 3 held / 3 of 3 at 500 ms */
    ck_assert_int_eq(kb_boundary_wants(&b[0].held, 3), 0);
    ck_assert_int_eq(kb_boundary_wants(&b[0].held, 5), 0);  /* 3 agreeing of 5 decide it */
    ck_assert_int_eq(kb_boundary_wants(&b[0].held, 6), 1);  /* of 6 they do not */
    b[0].held.settled = 0;                                  /* samples that disagree */
    ck_assert_int_eq(kb_boundary_wants(&b[0].held, 5), 2);
    b[0].held.n = 1;
    b[0].held.settled = 1;                                  /* one sample: one more to agree */
    ck_assert_int_eq(kb_boundary_wants(&b[0].held, 3), 1);
    /* gray-static's next rate failed: more samples cannot change that */
    ck_assert_str_eq(b[1].next.verdict, "failed");
    ck_assert_int_eq(kb_boundary_wants(&b[1].next, 5), 0);
    ck_assert_int_eq(kb_boundary_wants(&b[1].held, 7), 1);
    kb_report_free(&R);

    write_point("go-plaintext-200-c4", "controlled", 100, 1000, 0);
    cf = json_pack("{s:i,s:i,s:[{s:s,s:s,s:s,s:i,s:i},{s:s,s:s,s:s,s:i,s:i}]}",
                   "schema_version", 1, "samples", 5, "points",
                   "id", "go-plaintext-200-c4", "runtime", "go", "route", "plaintext",
                   "rate", 200, "sample", 4,
                   "id", "go-plaintext-200-c5", "runtime", "go", "route", "plaintext",
                   "rate", 200, "sample", 5);
    kb_write_json_atomic(kb_path(path, sizeof(path), dir, "confirm.json"), cf, err, sizeof(err));
    json_decref(cf);
    ck_assert_int_eq(kb_report_load(dir, &R, err, sizeof(err)), 0);
    ck_assert_int_eq(kb_report_row(&R, "go", "plaintext", 200)->n, 4);
    ck_assert_int_eq(kb_report_row(&R, "go", "plaintext", 200)->controlled_n, 1);
    ck_assert_str_eq(kb_report_row(&R, "go", "plaintext", 200)->verdict, "uncontrolled");
    ck_assert_uint_eq(R.nmissing, 2);
    ck_assert_str_eq(R.missing[1], "go-plaintext-200-c5");
    /* the curve's rounds read the same cells below the report (runner/run/cell.h) */
    {
        struct kb_cells c;
        struct kb_boundary cb[8], rb[8];
        json_t *plan;
        ck_assert_int_eq(kb_cells_load(dir, &c, &plan, err, sizeof(err)), 0);
        ck_assert_int_eq(kb_cells_row(&c, "go", "plaintext", 200)->n, 4);
        ck_assert_uint_eq(kb_cells_boundaries(&c, cb, 8), kb_report_boundaries(&R, rb, 8));
        ck_assert_int_eq(cb[0].held.rps, rb[0].held.rps);
        ck_assert_int_eq(cb[0].next.n, rb[0].next.n);
        kb_cells_free(&c);
        json_decref(plan);
    }
}
END_TEST

/* A row's client-limited samples decide it only where, taken at their best and at their
 * worst, they could change its medians' verdict (the point's could-decide rule over a row):
 * one stall of the client in one of three samples does not mark a row its two trusted
 * samples agree on; where those disagree, it does. A client-limited boundary rate is sampled
 * again, since trusted samples can outvote it. */
START_TEST(client_limited_sample_decides_only_where_it_could)
{
    char err[256];
    const struct kb_cell *w;
    struct kb_boundary b[8];
    write_point("go-plaintext-100-r3", "client-limited", 100, 900000, 0);
    write_point("go-plaintext-200-r2", "client-limited", 200, 900, 0);
    ck_assert_int_eq(kb_report_load(dir, &R, err, sizeof(err)), 0);
    w = kb_report_row(&R, "go", "plaintext", 100);
    ck_assert_str_eq(w->verdict, "controlled");          /* 1 and 2 ms held */
    ck_assert_int_eq(w->client_limited_n, 1);
    ck_assert_msg(strstr(w->reason, "1 of 3 samples client-limited, which cannot change this"),
                  "%s", w->reason);
    ck_assert_str_eq(kb_report_row(&R, "go", "plaintext", 200)->verdict, "uncontrolled");
    kb_report_free(&R);
    /* the trusted two disagree: the client-limited one decides the median, so the row is it */
    write_point("go-plaintext-100-r2", "uncontrolled", 100, 500000, 0);
    ck_assert_int_eq(kb_report_load(dir, &R, err, sizeof(err)), 0);
    w = kb_report_row(&R, "go", "plaintext", 100);
    ck_assert_str_eq(w->verdict, "client-limited");
    ck_assert_uint_eq(kb_report_boundaries(&R, b, 8), 2);
    ck_assert_int_eq(b[0].held.rps, 0);                  /* nothing held below it */
    ck_assert_int_eq(b[0].next.rps, 100);
    ck_assert(!b[0].next.settled);
    ck_assert_int_eq(kb_boundary_wants(&b[0].next, 5), 2);
    /* all 3 of 3 in and the client could still decide it: two more may outvote it, no more */
    ck_assert_int_eq(kb_boundary_wants(&b[0].next, 3), 2);
    b[0].next.n = 4;
    ck_assert_int_eq(kb_boundary_wants(&b[0].next, 3), 1);
    b[0].next.n = 5;
    ck_assert_int_eq(kb_boundary_wants(&b[0].next, 3), 0);
    ck_assert_int_eq(kb_boundary_wants(&b[0].next, 1), 0);  /* confirmation off stays off */
}
END_TEST

/* A p99 that is only a lower bound counts at its worst in the median: one such sample of
 * three (requests unanswered at its drain end) leaves the two that held to decide the row;
 * two of three decide it the other way. (A row once needed every sample controlled whenever
 * any p99 was a bound.) */
START_TEST(a_bounded_p99_counts_at_its_worst_in_the_median)
{
    char err[256], id[64], path[300];
    json_t *v;
    const struct kb_cell *w;
    for (int k = 3; k >= 2; k--) {
        snprintf(id, sizeof(id), "go-plaintext-100-r%d", k);
        write_point_own(id, "uncontrolled", NULL, 100, 900000, 0);
        snprintf(path, sizeof(path), "%s/points/%s/verdict.json", dir, id);
        v = json_load_file(path, 0, NULL);
        json_object_set_new(json_object_get(json_object_get(v, "load"), "corrected_us"),
                            "is_bound", json_pack("{s:b}", "p99", 1));
        kb_write_json_atomic(path, v, err, sizeof(err));
        json_decref(v);
        ck_assert_int_eq(kb_report_load(dir, &R, err, sizeof(err)), 0);
        w = kb_report_row(&R, "go", "plaintext", 100);
        ck_assert_int_eq(w->p99.bound, 1);
        ck_assert_str_eq(w->verdict, k == 3 ? "controlled" : "uncontrolled");
        kb_report_free(&R);
    }
    memset(&R, 0, sizeof(R));
}
END_TEST

static char *slurp(const char *path)
{
    FILE *f = fopen(path, "r");
    static char buf[1 << 16];
    size_t n;
    ck_assert_ptr_nonnull(f);
    n = fread(buf, 1, sizeof(buf) - 1, f);
    buf[n] = '\0';
    fclose(f);
    return buf;
}

/* A file's text with its line breaks read as spaces: report.md wraps its prose at 100
 * columns, and a phrase may cross a break. */
static char *flat(const char *path)
{
    char *t = slurp(path);
    for (char *p = t; *p; p++)
        if (*p == '\n')
            *p = ' ';
    return t;
}

START_TEST(writers)
{
    char err[256], path[200];
    ck_assert_int_eq(kb_report_load(dir, &R, err, sizeof(err)), 0);
    R.partial = 1;
    ck_assert_int_eq(kb_report_write_md(&R, dir, err, sizeof(err)), 0);
    ck_assert_int_eq(kb_report_write_csv(&R, dir, err, sizeof(err)), 0);
    ck_assert_int_eq(kb_report_write_json(&R, dir, err, sizeof(err)), 0);
    ck_assert_int_eq(kb_report_write_svg(&R, dir, err, sizeof(err)), 0);
    ck_assert_int_eq(kb_report_write_html(&R, dir, err, sizeof(err)), 0);
    ck_assert_ptr_nonnull(strstr(slurp(kb_path(path, sizeof(path), dir, "report.html")),
                                 "<table id=\"answer-table\">"));
    ck_assert_ptr_nonnull(strstr(slurp(kb_path(path, sizeof(path), dir, "report.md")), "PARTIAL"));
    ck_assert_ptr_nonnull(strstr(slurp(path), "gray-static-plaintext-200-r3"));
    ck_assert_ptr_nonnull(strstr(slurp(path), "| go | 100 | - | 30000 |"));   /* no cost figure */
    ck_assert_ptr_nonnull(strstr(slurp(kb_path(path, sizeof(path), dir, "report.csv")),
                                 "go,plaintext,100,3,controlled,"));
    ck_assert_ptr_nonnull(strstr(slurp(kb_path(path, sizeof(path), dir, "charts/p99-plaintext.svg")),
                                 "controlled limit"));
    ck_assert_ptr_nonnull(strstr(slurp(kb_path(path, sizeof(path), dir,
                                 "charts/achieved-plaintext.svg")), "</svg>"));
    ck_assert_ptr_nonnull(strstr(slurp(kb_path(path, sizeof(path), dir, "report.json")),
                                 "\"partial\": true"));
}
END_TEST

/* A controlled cell whose queue grew through its seconds (verdict.json's backlog) keeps its
 * verdict and is said to have grown, in report.md's note and report.json's count. */
START_TEST(a_controlled_cell_whose_queue_grew_says_so)
{
    char err[256], path[300];
    json_t *v;
    snprintf(path, sizeof(path), "%s/points/go-plaintext-100-r2/verdict.json", dir);
    v = json_load_file(path, 0, NULL);
    ck_assert_ptr_nonnull(v);
    json_object_set_new(v, "backlog", json_pack("{s:b,s:i,s:f,s:f}", "grew", 1, "seconds", 3,
                                                "first_p50_us", 9000.0, "last_p50_us", 52000.0));
    ck_assert_int_eq(kb_write_json_atomic(path, v, err, sizeof(err)), 0);
    json_decref(v);
    ck_assert_int_eq(kb_report_load(dir, &R, err, sizeof(err)), 0);
    R.partial = 1;
    ck_assert_int_eq(kb_report_write_md(&R, dir, err, sizeof(err)), 0);
    ck_assert_int_eq(kb_report_write_json(&R, dir, err, sizeof(err)), 0);
    ck_assert_str_eq(kb_report_row(&R, "go", "plaintext", 100)->verdict, "controlled");
    ck_assert_int_eq(kb_report_row(&R, "go", "plaintext", 100)->queue_grew_n, 1);
    ck_assert_int_eq(kb_report_row(&R, "gray-static", "plaintext", 100)->queue_grew_n, 0);
    ck_assert_ptr_nonnull(strstr(flat(kb_path(path, sizeof(path), dir, "report.md")),
                                 "p99 under 100 ms but its queue grew"));
    ck_assert_ptr_nonnull(strstr(slurp(kb_path(path, sizeof(path), dir, "report.json")),
                                 "\"queue_grew_count\": 1"));
}
END_TEST

/* go's 200 points client-limited instead of uncontrolled: its knee was never located, so the
 * table gives 100 as a lower bound and stars the ratio; gray-static's own cell is unchanged. */
START_TEST(client_limited_next_point_is_a_lower_bound)
{
    char err[256], path[200];
    for (int r = 1; r <= 3; r++) {
        char id[64];
        snprintf(id, sizeof(id), "go-plaintext-200-r%d", r);
        write_point(id, "client-limited", 200, 900, 0);
    }
    ck_assert_int_eq(kb_report_load(dir, &R, err, sizeof(err)), 0);
    R.partial = 1;
    ck_assert_int_eq(kb_report_write_md(&R, dir, err, sizeof(err)), 0);
    slurp(kb_path(path, sizeof(path), dir, "report.md"));
    /* a tie on the level (100 each) and no efficiency figures: equal ranks, plan order */
    ck_assert_ptr_nonnull(strstr(slurp(path), "| 1 | go | >= 100 | - | 30000 |"));
    ck_assert_ptr_nonnull(strstr(slurp(path), "| 1 | gray-static | 100 | - | 60000 |"));
    ck_assert_ptr_nonnull(strstr(slurp(path), "\">= N\": the point above N was client-limited"));
    ck_assert_ptr_null(strstr(slurp(path), "| gray-static | >="));
    /* a client-limited point whose verdict.json names no own verdict: unknown, and said so */
    ck_assert_ptr_nonnull(strstr(slurp(path), "| client-limited | [1] |"));
    ck_assert_ptr_nonnull(strstr(flat(path), "; its own figures: unknown (1 row)"));
}
END_TEST

/* calibrate/calibrate.json as kb_calibrate writes it: held at 100, not at 250. */
static void write_calibration(double margin, int proven)
{
    char cdir[128], path[200], err[256];
    json_t *j = json_pack("{s:i,s:s,s:f,s:f,s:f,s:f,s:b,s:s,s:s,s:f,s:f,s:i,s:i,"
                          "s:{s:f,s:f,s:f,s:i},s:[{s:f,s:f,s:f,s:f,s:f,s:f,s:I,s:b,s:s},"
                          "{s:f,s:f,s:f,s:f,s:f,s:f,s:I,s:b,s:s}],s:b}",
        "calibrate_version", 1, "route", "plaintext", "up_to_rps", 200.0, "factor", 1.25,
        "required_rps", 250.0, "margin_rps", margin, "proven", proven, "server_cpus", "0",
        "client_cpus", "1", "duration_s", 3.0, "warmup_s", 1.0, "threads", 1, "connections", 8,
        "criteria", "client_cpu_max_fraction", 0.8, "lag_p99_max_us", 1000.0, "min_delivery",
        0.995, "errors_max", 0, "steps",
        "rate", 100.0, "achieved_rps", 100.0, "delivery", 1.0, "client_cpu_fraction", 0.3,
        "lag_p99_us", 210.0, "corrected_p99_us", 900.0, "errors", (json_int_t)0, "held", 1, "why", "",
        "rate", 250.0, "achieved_rps", 240.0, "delivery", 0.96, "client_cpu_fraction", 0.93,
        "lag_p99_us", 4321.0, "corrected_p99_us", 7000.0, "errors", (json_int_t)0, "held", 0,
        "why", "client CPU 93 % > 80 %", "complete", 1);
    ck_assert_ptr_nonnull(j);
    kb_mkdirs(kb_path(cdir, sizeof(cdir), dir, "calibrate"), err, sizeof(err));
    ck_assert_int_eq(kb_write_json_atomic(kb_path(path, sizeof(path), cdir, "calibrate.json"), j,
                                          err, sizeof(err)), 0);
    json_decref(j);
}

static void write_file(const char *rel, const char *text)
{
    char path[300], err[256];
    snprintf(path, sizeof(path), "%s/%s", dir, rel);
    ck_assert_int_eq(kb_write_atomic(path, text, strlen(text), err, sizeof(err)), 0);
}

static int count(const char *hay, const char *needle)
{
    int n = 0;
    for (const char *p = hay; (p = strstr(p, needle)); p++)
        n++;
    return n;
}

static void write_all(void)
{
    char err[256];
    ck_assert_int_eq(kb_report_write_md(&R, dir, err, sizeof(err)), 0);
    ck_assert_int_eq(kb_report_write_json(&R, dir, err, sizeof(err)), 0);
    ck_assert_int_eq(kb_report_write_svg(&R, dir, err, sizeof(err)), 0);
}

START_TEST(no_calibration_said_plainly)
{
    char err[256], path[200];
    json_t *j;
    ck_assert_int_eq(kb_report_load(dir, &R, err, sizeof(err)), 0);
    ck_assert_ptr_null(R.cal);
    ck_assert_int_eq(kb_report_covers(&R, 100), -1);
    write_all();
    ck_assert_ptr_nonnull(strstr(slurp(kb_path(path, sizeof(path), dir, "report.md")),
                                 "## Client margin"));
    ck_assert_ptr_nonnull(strstr(slurp(path), "this run has no calibration proof (no "
                                 "calibrate/calibrate.json"));
    j = json_load_file(kb_path(path, sizeof(path), dir, "report.json"), 0, NULL);
    ck_assert(json_is_false(json_object_get(json_object_get(j, "calibration"), "present")));
    json_decref(j);
}
END_TEST

START_TEST(calibration_margin_and_coverage)
{
    char err[256], path[200];
    json_t *j, *c;
    write_calibration(200, 0);
    ck_assert_int_eq(kb_report_load(dir, &R, err, sizeof(err)), 0);
    ck_assert_ptr_nonnull(R.cal);
    ck_assert_uint_eq(R.cal->nsteps, 2);
    ck_assert_int_eq(kb_report_covers(&R, 100), 1);    /* 125 <= 200 */
    ck_assert_int_eq(kb_report_covers(&R, 200), 0);    /* 250 > 200 */
    write_all();
    slurp(kb_path(path, sizeof(path), dir, "report.md"));
    ck_assert_ptr_nonnull(strstr(slurp(path), "- proven margin: **200 req/s**"));
    ck_assert_ptr_nonnull(strstr(slurp(path), "- required: 250 req/s (1.25 x the curve's top rate 200"));
    ck_assert_ptr_nonnull(strstr(slurp(path), "- proven: **no**"));
    ck_assert_ptr_nonnull(strstr(slurp(path), "| 2 | 250 | 240 | 96.0 % | 7.00 ms | 93 % | no |"));
    ck_assert_ptr_nonnull(strstr(slurp(path), "Rung 2 missed: client CPU 93 % > 80 %."));
    ck_assert_ptr_null(strstr(slurp(path), "The client also held"));
    ck_assert_ptr_nonnull(strstr(slurp(path), "Covered: 100 req/s. Not covered: 200 req/s"));
    /* at 200: go uncontrolled, gray-static failed -- neither client-limited (these verdicts
     * record no judgement, so the rows stand as written) */
    ck_assert_ptr_nonnull(strstr(flat(path), "Not covered: 200 req/s. A point requested there "
                                 "keeps its own verdict where it held"));
    ck_assert_ptr_nonnull(strstr(flat(path), "0 of the 2 runtime x route row(s) there are "
                                 "client-limited"));
    ck_assert_ptr_null(strstr(slurp(path), "--force"));   /* run.json's command line has none */
    ck_assert_ptr_null(strstr(slurp(path), "NO CALIBRATION PROOF"));
    j = json_load_file(kb_path(path, sizeof(path), dir, "report.json"), 0, NULL);
    c = json_object_get(j, "calibration");
    ck_assert(json_is_true(json_object_get(c, "present")));
    ck_assert(json_is_false(json_object_get(c, "proven")));
    ck_assert_double_eq_tol(json_number_value(json_object_get(c, "margin_rps")), 200, 1e-9);
    ck_assert_double_eq_tol(json_number_value(json_object_get(c, "covers_up_to_rps")), 160, 1e-9);
    ck_assert_int_eq(json_integer_value(json_array_get(json_object_get(c, "rates_covered_rps"), 0)), 100);
    ck_assert_int_eq(json_integer_value(json_array_get(json_object_get(c, "rates_not_covered_rps"), 0)), 200);
    ck_assert_uint_eq(json_array_size(json_object_get(c, "steps")), 2);
    ck_assert_str_eq(json_string_value(json_object_get(c, "client_cpus")), "1");
    json_decref(j);
}
END_TEST

/* A rung tried again says what became of it: held at its second attempt, or missed at both
 * (the report once said "held at attempt 2" of a rung that missed twice). */
START_TEST(a_rung_tried_again_says_whether_it_held)
{
    char err[256], path[200];
    json_t *j, *steps;
    write_calibration(200, 0);
    kb_path(path, sizeof(path), dir, "calibrate/calibrate.json");
    j = json_load_file(path, 0, NULL);
    steps = json_object_get(j, "steps");
    json_object_set_new(json_array_get(steps, 0), "attempts", json_integer(2));
    json_object_set_new(json_array_get(steps, 0), "missed_before", json_string("stall one"));
    json_object_set_new(json_array_get(steps, 1), "attempts", json_integer(2));
    json_object_set_new(json_array_get(steps, 1), "missed_before", json_string("stall two"));
    ck_assert_int_eq(kb_write_json_atomic(path, j, err, sizeof(err)), 0);
    json_decref(j);
    ck_assert_int_eq(kb_report_load(dir, &R, err, sizeof(err)), 0);
    write_all();
    kb_path(path, sizeof(path), dir, "report.md");
    ck_assert_ptr_nonnull(strstr(flat(path), "Rung 1 held at attempt 2; before: stall one."));
    ck_assert_ptr_nonnull(strstr(flat(path), "Rung 2 missed: client CPU 93 % > 80 %."));
    ck_assert_ptr_nonnull(strstr(flat(path), "Rung 2 missed at each of 2 attempts; before the "
                                 "last: stall two."));
    ck_assert_ptr_null(strstr(flat(path), "Rung 2 held"));
}
END_TEST

START_TEST(calibration_proven_covers_all)
{
    char err[256], path[200];
    write_calibration(250, 1);
    ck_assert_int_eq(kb_report_load(dir, &R, err, sizeof(err)), 0);
    ck_assert_int_eq(kb_report_covers(&R, 200), 1);
    write_all();
    ck_assert_ptr_nonnull(strstr(slurp(kb_path(path, sizeof(path), dir, "report.md")),
                                 "- proven: **yes**"));
    ck_assert_ptr_nonnull(strstr(slurp(path), "Covered: 100, 200 req/s. Not covered: none"));
}
END_TEST

/* A rung held above a missed one: said, and kept out of the margin. */
START_TEST(calibration_held_above_a_miss)
{
    char err[256], path[200];
    json_t *j;
    write_calibration(0, 0);
    j = json_load_file(kb_path(path, sizeof(path), dir, "calibrate/calibrate.json"), 0, NULL);
    json_object_set_new(j, "highest_held_rps", json_real(250));
    json_object_set_new(json_object_get(j, "criteria"), "rx_delay_p99_max_us", json_real(1000));
    ck_assert_int_eq(kb_write_json_atomic(path, j, err, sizeof(err)), 0);
    json_decref(j);
    ck_assert_int_eq(kb_report_load(dir, &R, err, sizeof(err)), 0);
    write_all();
    slurp(kb_path(path, sizeof(path), dir, "report.md"));
    ck_assert_ptr_nonnull(strstr(flat(path), "The client also held 250 req/s, above a missed "
                                 "rung: not counted in the margin"));
    /* a calibrate.json of the older rule says so, with its bounds */
    ck_assert_ptr_nonnull(strstr(flat(path), "by an older rule: a rung held when client CPU <= "
                                 "80 %, send-lag and receive-delay p99 <= 1000 us,"));
    ck_assert_ptr_nonnull(strstr(slurp(kb_path(path, sizeof(path), dir, "report.json")),
                                 "\"highest_held_rps\": 250"));
}
END_TEST

START_TEST(calibration_unreadable_noted)
{
    char err[256], path[200];
    write_calibration(250, 1);
    write_file("calibrate/calibrate.json", "{\"complete\": false}");
    ck_assert_int_eq(kb_report_load(dir, &R, err, sizeof(err)), 0);
    ck_assert_ptr_null(R.cal);
    ck_assert_ptr_nonnull(strstr(R.cal_note, "could not be read"));
    write_all();
    ck_assert_ptr_nonnull(strstr(slurp(kb_path(path, sizeof(path), dir, "report.md")),
                                 "NO CALIBRATION PROOF"));
    ck_assert_ptr_nonnull(strstr(slurp(path), "not a complete calibration"));
}
END_TEST

/* go's first uncontrolled row is 200 (all repeats); repeat 1 is charted. The middle second
 * completed nothing: no latency there, a gap in the lines. */
START_TEST(series_of_first_uncontrolled)
{
    char err[256], path[200];
    const struct kb_report_series *s;
    const char *svg;
    write_file("points/go-plaintext-200-r1/series.csv",
               "start_s,length_s,completed,achieved_rps,p50_us,p99_us,max_us,errors\n"
               "0.000,1.000,150,150.0,500,2000,3000,0\n"
               "1.000,1.000,0,0.0,0,0,0,2\n"
               "2.000,1.000,140,140.0,90000,250000,400000,1\n");
    write_file("points/go-plaintext-200-r2/series.csv",
               "start_s,length_s,completed,achieved_rps,p50_us,p99_us,max_us,errors\n"
               "0.000,1.000,1,1.0,1,1,1,0\n");
    ck_assert_int_eq(kb_report_load(dir, &R, err, sizeof(err)), 0);
    ck_assert_ptr_null(kb_report_series_of(&R, "gray-static", "plaintext"));  /* failed, not uncontrolled */
    s = kb_report_series_of(&R, "go", "plaintext");
    ck_assert_ptr_nonnull(s);
    ck_assert_str_eq(s->point, "go-plaintext-200-r1");
    ck_assert_int_eq(s->rate, 200);
    ck_assert_uint_eq(s->n, 3);
    ck_assert_double_eq_tol(s->v[2].p99_us, 250000, 1e-9);
    ck_assert_double_eq_tol(s->v[2].max_us, 400000, 1e-9);
    ck_assert(s->v[1].p99_us < 0);                    /* nothing completed: no latency, not 0 */
    ck_assert_int_eq(s->v[1].completed, 0);
    ck_assert_int_eq(s->v[1].errors, 2);
    write_all();
    svg = slurp(kb_path(path, sizeof(path), dir, "charts/series-go-plaintext.svg"));
    ck_assert_ptr_nonnull(strstr(svg, "go plaintext at 200 req/s: corrected latency per second, "
                                      "first uncontrolled point"));
    ck_assert_ptr_nonnull(strstr(svg, "100 ms: controlled limit"));
    ck_assert_ptr_nonnull(strstr(svg, ">1 s</text>"));                /* log axis up to 1 s */
    ck_assert_int_eq(count(svg, "<circle"), 2);                       /* not the empty second */
    ck_assert_int_eq(count(svg, "<g class=\"second\"><title>second "), 2);   /* each titled */
    ck_assert_ptr_nonnull(strstr(svg, "<title>second 2: p99 250.00 ms</title>"));
    /* the plan measured 1 s: seconds 1 and 2 are the drain, shaded, and the footnote's rate
     * is the measured second's alone */
    ck_assert_int_eq(count(svg, "<g class=\"drain\"><title>drain: "), 1);
    ck_assert_ptr_nonnull(strstr(svg, "shaded: the drain after it"));
    ck_assert_ptr_nonnull(strstr(svg, ": 150-150 req/s per whole measured second, 3 error(s), "
                                      "0 lower bound(s)"));
    ck_assert_int_eq(count(svg, "class=\"bound\""), 1);   /* the legend's: an older file has none */
    slurp(kb_path(path, sizeof(path), dir, "report.md"));
    ck_assert_ptr_nonnull(strstr(slurp(path), "(charts/series-go-plaintext.svg)"));
    ck_assert_ptr_nonnull(strstr(slurp(path), "p99 2.00 ms in the first second, 250 ms in the last"));
    ck_assert_ptr_nonnull(strstr(slurp(kb_path(path, sizeof(path), dir, "report.json")),
                                 "\"chart\": \"charts/series-go-plaintext.svg\""));
}
END_TEST

/* With repeats the chart is of a repeat that itself was uncontrolled, not merely the first. */
START_TEST(series_prefers_a_queued_repeat)
{
    char err[256];
    const char *csv = "start_s,length_s,completed,achieved_rps,p50_us,p99_us,max_us,errors\n"
                      "0.000,1.000,150,150.0,500,2000,3000,0\n";
    write_point("go-plaintext-200-r1", "controlled", 150, 500000, 0);
    write_file("points/go-plaintext-200-r1/series.csv", csv);
    write_file("points/go-plaintext-200-r2/series.csv", csv);
    ck_assert_int_eq(kb_report_load(dir, &R, err, sizeof(err)), 0);
    ck_assert_str_eq(kb_report_row(&R, "go", "plaintext", 200)->verdict, "uncontrolled");
    ck_assert_str_eq(kb_report_series_of(&R, "go", "plaintext")->point, "go-plaintext-200-r2");
}
END_TEST

/* --force marks the points above the margin client-limited; one whose own figures are
 * uncontrolled (its server_verdict) is where the queue formed, and stands in for the first
 * uncontrolled point; one whose own verdict is unknown does not. */
START_TEST(series_past_margin_in_forced_run)
{
    char err[256], path[200];
    const struct kb_report_series *s;
    for (int r = 1; r <= 3; r++) {
        char id[64];
        snprintf(id, sizeof(id), "go-plaintext-200-r%d", r);
        write_point(id, "client-limited", 150, 500000, 0);
    }
    write_file("points/go-plaintext-200-r1/series.csv",
               "start_s,length_s,completed,achieved_rps,p50_us,p99_us,max_us,errors\n"
               "0.000,1.000,150,150.0,500,2000,3000,0\n");
    write_calibration(200, 0);
    ck_assert_int_eq(kb_report_load(dir, &R, err, sizeof(err)), 0);
    ck_assert_ptr_null(kb_report_series_of(&R, "go", "plaintext"));   /* own verdict unknown */
    kb_report_free(&R);
    for (int r = 1; r <= 3; r++) {
        char id[64];
        snprintf(id, sizeof(id), "go-plaintext-200-r%d", r);
        write_point_own(id, "client-limited", "uncontrolled", 150, 500000, 0);
    }
    ck_assert_int_eq(kb_report_load(dir, &R, err, sizeof(err)), 0);
    s = kb_report_series_of(&R, "go", "plaintext");
    ck_assert_ptr_nonnull(s);
    ck_assert_int_eq(s->past_margin, 1);
    ck_assert_str_eq(s->point, "go-plaintext-200-r1");
    write_all();
    ck_assert_ptr_nonnull(strstr(slurp(kb_path(path, sizeof(path), dir,
                                 "charts/series-go-plaintext.svg")),
                                 "first point past the criteria (client-limited)"));
    ck_assert_ptr_nonnull(strstr(flat(kb_path(path, sizeof(path), dir, "report.md")),
                                 "(client-limited; its own figures past the criteria)"));
}
END_TEST

START_TEST(series_missing_noted)
{
    char err[256], path[200];
    const struct kb_report_series *s;
    ck_assert_int_eq(kb_report_load(dir, &R, err, sizeof(err)), 0);
    s = kb_report_series_of(&R, "go", "plaintext");
    ck_assert_ptr_nonnull(s);
    ck_assert_uint_eq(s->n, 0);
    ck_assert_ptr_nonnull(strstr(s->note, "has no series.csv"));
    write_all();
    ck_assert_int_eq(kb_file_exists(kb_path(path, sizeof(path), dir, "charts/series-go-plaintext.svg")), 0);
    ck_assert_ptr_nonnull(strstr(slurp(kb_path(path, sizeof(path), dir, "report.md")),
                                 "- go at 200 req/s: no chart: points/go-plaintext-200-r1 has no "
                                 "series.csv"));
}
END_TEST

START_TEST(read_series_by_header)
{
    char err[256], path[200];
    struct kb_report_series s;
    memset(&s, 0, sizeof(s));
    /* columns found by name, in any order */
    write_file("a.csv", "max_us,p99_us,p50_us,achieved_rps,start_s\n9000,5000,1000,42.5,3.000\n");
    ck_assert_int_eq(kb_report_read_series(kb_path(path, sizeof(path), dir, "a.csv"), &s, err,
                                           sizeof(err)), 0);
    ck_assert_uint_eq(s.n, 1);
    ck_assert_double_eq_tol(s.v[0].start_s, 3, 1e-9);
    ck_assert_double_eq_tol(s.v[0].achieved_rps, 42.5, 1e-9);
    ck_assert_double_eq_tol(s.v[0].p50_us, 1000, 1e-9);
    ck_assert_double_eq_tol(s.v[0].max_us, 9000, 1e-9);
    write_file("b.csv", "start_s,achieved_rps\n0,1\n");
    ck_assert_int_eq(kb_report_read_series(kb_path(path, sizeof(path), dir, "b.csv"), &s, err,
                                           sizeof(err)), -1);
    ck_assert_ptr_nonnull(strstr(err, "header lacks"));
    ck_assert_uint_eq(s.n, 0);
    write_file("c.csv", "start_s,achieved_rps,p50_us,p99_us,max_us\n0,1,2\n");
    ck_assert_int_eq(kb_report_read_series(kb_path(path, sizeof(path), dir, "c.csv"), &s, err,
                                           sizeof(err)), -1);
    ck_assert_ptr_nonnull(strstr(err, "line 2: too few fields"));
    free(s.v);
}
END_TEST

/* ---- newer evidence: lower bounds, empty histograms, the verdict underneath, efficiency ---- */

/* One point as the newer curve writes it: server_verdict, client_trust, corrected_us with
 * its lower bounds, rx_delay_us, threads, and the server's CPU per response. */
struct pt {
    const char *verdict, *server;   /* server NULL: the same as verdict */
    double achieved, p99_us;
    long long count;                /* corrected_us.count; 0: an empty histogram (nulls) */
    int bound;                      /* p99, p99.9 and max only lower bounds */
    double cpu_us;                  /* server.cpu_us_per_response; <= 0: null */
    const char *reason;             /* NULL: the verdict's name */
};

static json_t *corrected_json(const struct pt *p)
{
    static const char *const k[] = { "min", "mean", "p50", "p90", "p99", "p999", "max" };
    const double v[] = { 50, p->p99_us / 3, p->p99_us / 4, p->p99_us / 2, p->p99_us,
                         p->p99_us * 1.2, p->p99_us * 1.5 };
    json_t *h = json_pack("{s:I,s:I,s:o}", "count", (json_int_t)p->count, "bounded",
                          (json_int_t)(p->bound ? 30 : 0), "bound_from_us",
                          p->bound ? json_real(p->p99_us) : json_null());
    json_t *is = json_object();
    for (int i = 0; i < 7; i++) {
        json_object_set_new(h, k[i], p->count ? json_real(v[i]) : json_null());
        json_object_set_new(is, k[i], json_boolean(p->bound && (i == 1 || i >= 4)));
    }
    json_object_set_new(h, "is_bound", is);
    return h;
}

static void write_pt(const char *id, const struct pt *p)
{
    char pdir[256], path[300], err[256];
    const char *server = p->server ? p->server : p->verdict;
    int trusted = strcmp(p->verdict, "client-limited") != 0;
    json_t *v = json_pack("{s:s,s:s,s:s,s:s,s:s,s:{s:b,s:s}}", "point", id, "verdict", p->verdict,
        "reason", p->reason ? p->reason : p->verdict, "server_verdict", server, "server_reason",
        server, "client_trust", "ok", trusted, "reason", trusted ? "" : "client CPU 89 %");
    json_object_set_new(v, "load", json_pack("{s:f,s:f,s:I,s:{s:I},s:I,s:{s:I},s:f,s:i,s:i,s:i,"
        "s:o,s:{s:I,s:f},s:{s:I,s:f}}", "achieved_rps", p->achieved, "delivery", p->achieved / 100.0,
        "scheduled", (json_int_t)300, "errors", "total", (json_int_t)0, "non2xx", (json_int_t)0,
        "mismatches", "total", (json_int_t)0, "client_cpu_fraction", trusted ? 0.3 : 0.89,
        "client_cpus", 1, "threads", 1, "threads_requested", 4, "corrected_us", corrected_json(p),
        "lag_us", "count", (json_int_t)10, "p99", 300.0, "rx_delay_us", "count", (json_int_t)10,
        "p99", 120.0));
    json_object_set_new(json_object_get(v, "load"), "warmup_s", json_real(1));
    json_object_set_new(json_object_get(v, "load"), "duration_s", json_real(1));
    json_object_set_new(v, "server", json_pack("{s:f,s:I,s:f,s:o,s:o}", "cpu_mean_fraction", 0.5,
        "rss_max_bytes", (json_int_t)1000, "cpu_interval_s", 0.5, "cpu_us_per_response",
        p->cpu_us > 0 ? json_real(p->cpu_us) : json_null(), "capacity_estimate_rps",
        p->cpu_us > 0 ? json_real(1e6 / p->cpu_us) : json_null()));
    snprintf(pdir, sizeof(pdir), "%s/points/%s", dir, id);
    kb_mkdirs(pdir, err, sizeof(err));
    ck_assert_int_eq(kb_write_json_atomic(kb_path(path, sizeof(path), pdir, "verdict.json"), v,
                                          err, sizeof(err)), 0);
    kb_write_atomic(kb_path(path, sizeof(path), pdir, "DONE"), "{}", 2, err, sizeof(err));
    json_decref(v);
}

/* The same point for all three repeats of runtime/rate. */
static void write_pts(const char *rt, long rate, const struct pt *p)
{
    for (int r = 1; r <= 3; r++) {
        char id[64];
        snprintf(id, sizeof(id), "%s-plaintext-%ld-r%d", rt, rate, r);
        write_pt(id, p);
    }
}

static void load_and_write(void)
{
    char err[256];
    ck_assert_int_eq(kb_report_load(dir, &R, err, sizeof(err)), 0);
    ck_assert_uint_eq(R.nmissing, 0);
    ck_assert_int_eq(kb_report_write_csv(&R, dir, err, sizeof(err)), 0);
    write_all();
}

/* The field of report.csv's row that starts with prefix, under the header's column name. */
static void csv_field(const char *prefix, const char *name, char *out, size_t len)
{
    char path[200], *text, *hdr, *row, *save = NULL;
    int col = -1, i = 0;
    text = strdup(slurp(kb_path(path, sizeof(path), dir, "report.csv")));
    hdr = strtok_r(text, "\n", &save);
    for (row = strtok_r(NULL, "\n", &save); row && strncmp(row, prefix, strlen(prefix));
         row = strtok_r(NULL, "\n", &save))
        ;
    ck_assert_ptr_nonnull(row);
    for (char *h = hdr, *e; h; h = e ? e + 1 : NULL, i++) {
        e = strchr(h, ',');
        if ((e ? (size_t)(e - h) : strlen(h)) == strlen(name) && !strncmp(h, name, strlen(name)))
            col = i;
    }
    ck_assert_int_ge(col, 0);
    for (i = 0; i < col && row; i++)
        row = strchr(row, ',') ? strchr(row, ',') + 1 : NULL;
    ck_assert_ptr_nonnull(row);
    snprintf(out, len, "%.*s", (int)strcspn(row, ","), row);
    free(text);
}

static json_t *json_row(json_t *doc, const char *point_id)
{
    size_t i;
    json_t *w;
    json_array_foreach(json_object_get(doc, "rows"), i, w)
        if (!strcmp(json_string_value(json_object_get(w, "point_id")), point_id))
            return w;
    ck_abort_msg("no row %s", point_id);
    return NULL;
}

static json_t *answer_of(json_t *doc, const char *runtime)
{
    size_t i;
    json_t *a;
    json_array_foreach(json_object_get(doc, "answer"), i, a)
        if (!strcmp(json_string_value(json_object_get(a, "runtime")), runtime))
            return a;
    ck_abort_msg("no answer for %s", runtime);
    return NULL;
}

/* go at 200: p99 1.9 s only a lower bound in every repeat; report.md says ">= 1.90 s", the
 * CSV flags it, report.json too, and the p99 chart draws an arrow, not an exact point. */
START_TEST(bounds_shown_as_bounds)
{
    char path[200], v[64];
    const struct kb_cell *w;
    json_t *doc, *p99;
    write_pts("go", 200, &(struct pt){ "uncontrolled", NULL, 150, 1900000, 900, 1, 0, NULL });
    write_pts("gray-static", 200, &(struct pt){ "controlled", NULL, 200, 900, 900, 0, 10, NULL });
    load_and_write();
    w = kb_report_row(&R, "go", "plaintext", 200);
    ck_assert_int_eq(w->p99.bound, 1);
    ck_assert_int_eq(w->max.bound, 1);
    ck_assert_int_eq(w->p50.bound, 0);
    ck_assert_int_eq(w->bounded, 90);
    ck_assert_double_eq_tol(w->bound_from_us, 1900000, 1e-9);
    ck_assert_ptr_nonnull(strstr(slurp(kb_path(path, sizeof(path), dir, "report.md")),
                                 "| 475 ms | >= 1.90 s |"));
    ck_assert_ptr_null(strstr(slurp(path), "1900"));
    csv_field("4,go-plaintext-200,", "p99_us", v, sizeof(v));
    ck_assert_str_eq(v, "1900000.0");
    csv_field("4,go-plaintext-200,", "p99_is_bound", v, sizeof(v));
    ck_assert_str_eq(v, "1");
    csv_field("4,go-plaintext-200,", "p50_is_bound", v, sizeof(v));
    ck_assert_str_eq(v, "0");
    csv_field("4,gray-static-plaintext-200,", "p99_is_bound", v, sizeof(v));
    ck_assert_str_eq(v, "0");
    doc = json_load_file(kb_path(path, sizeof(path), dir, "report.json"), 0, NULL);
    p99 = json_object_get(json_row(doc, "go-plaintext-200"), "p99_us");
    ck_assert(json_is_true(json_object_get(p99, "is_bound")));
    ck_assert_double_eq_tol(json_real_value(json_object_get(p99, "median")), 1900000, 1e-9);
    ck_assert(json_is_false(json_object_get(json_object_get(json_row(doc, "go-plaintext-100"),
                                                            "p99_us"), "is_bound")));
    json_decref(doc);
    /* one arrow: go's 200 point; nothing else on the chart is a bound */
    ck_assert_int_eq(count(slurp(kb_path(path, sizeof(path), dir, "charts/p99-plaintext.svg")),
                           "<g class=\"bound\">"), 1 + 1);   /* and the legend's */
    ck_assert_ptr_nonnull(strstr(slurp(path), "go 200 req/s: p99 &gt;= 1.90 s (lower bound)"));
    ck_assert_int_eq(count(slurp(path), "class=\"to-bound\""), 1);  /* the line to it is dashed */
}
END_TEST

/* With repeats the median of figures where any repeat is a bound is a bound, even when the
 * median itself came from an exact repeat: the true median is at least that. */
START_TEST(median_with_a_bound_is_a_bound)
{
    char err[256];
    const struct kb_cell *w;
    write_pt("go-plaintext-200-r1", &(struct pt){ "uncontrolled", NULL, 150, 50000, 900, 0, 0, NULL });
    write_pt("go-plaintext-200-r2", &(struct pt){ "uncontrolled", NULL, 150, 60000, 900, 0, 0, NULL });
    write_pt("go-plaintext-200-r3", &(struct pt){ "uncontrolled", NULL, 150, 2000000, 900, 1, 0, NULL });
    write_pts("gray-static", 200, &(struct pt){ "controlled", NULL, 200, 900, 900, 0, 0, NULL });
    ck_assert_int_eq(kb_report_load(dir, &R, err, sizeof(err)), 0);
    w = kb_report_row(&R, "go", "plaintext", 200);
    ck_assert_double_eq_tol(w->p99.med, 60000, 1e-9);
    ck_assert_int_eq(w->p99.bound, 1);
    ck_assert_int_eq(w->p50.bound, 0);
}
END_TEST

/* An empty histogram (count 0: every figure null) prints "-" and null, never 0 ms. */
START_TEST(empty_histogram_is_no_figure)
{
    char path[200], v[64];
    const struct kb_cell *w;
    json_t *doc, *p99;
    write_pts("go", 200, &(struct pt){ "uncontrolled", NULL, 10, 0, 0, 0, 0, NULL });
    write_pts("gray-static", 200, &(struct pt){ "uncontrolled", NULL, 10, 0, 0, 0, 0, NULL });
    load_and_write();
    w = kb_report_row(&R, "go", "plaintext", 200);
    ck_assert_int_eq(w->p99.n, 0);
    ck_assert_ptr_nonnull(strstr(slurp(kb_path(path, sizeof(path), dir, "report.md")),
                                 "| 200 | 3 | 10 | 10.0 % | - | - | 0 | uncontrolled | delivery |"));
    csv_field("4,go-plaintext-200,", "p99_us", v, sizeof(v));
    ck_assert_str_eq(v, "");
    csv_field("4,go-plaintext-200,", "max_us", v, sizeof(v));
    ck_assert_str_eq(v, "");
    doc = json_load_file(kb_path(path, sizeof(path), dir, "report.json"), 0, NULL);
    p99 = json_object_get(json_row(doc, "go-plaintext-200"), "p99_us");
    ck_assert(json_is_null(json_object_get(p99, "median")));
    ck_assert(json_is_null(json_object_get(p99, "max")));
    json_decref(doc);
    /* not drawn on the p99 chart (no figure), drawn on the achieved chart */
    ck_assert_int_eq(count(slurp(kb_path(path, sizeof(path), dir, "charts/p99-plaintext.svg")),
                           "<title>go 200 req/s"), 0);
    ck_assert_int_eq(count(slurp(kb_path(path, sizeof(path), dir, "charts/achieved-plaintext.svg")),
                           "<title>go 200 req/s"), 1);
}
END_TEST

/* go's 200 client-limited, its own figures controlled: the first table gives the proven 100
 * as a lower bound and "200 unproven" beside it; the curve row keeps the server's verdict;
 * the chart's mark is a hollow circle (controlled shape, untrusted fill). */
START_TEST(client_limited_keeps_server_verdict)
{
    char path[200];
    struct kb_report_answer a;
    json_t *doc, *cell;
    write_pts("go", 200, &(struct pt){ "client-limited", "controlled", 200, 900, 900, 0, 10,
                                       "client CPU 89 % of its 1 CPU(s) > 80 %" });
    write_pts("gray-static", 200, &(struct pt){ "controlled", NULL, 200, 900, 900, 0, 10, NULL });
    load_and_write();
    ck_assert_str_eq(kb_report_row(&R, "go", "plaintext", 200)->server_verdict, "controlled");
    ck_assert_int_eq(kb_report_row(&R, "go", "plaintext", 200)->trust_ok, 0);
    kb_report_answer_of(&R, "go", "plaintext", &a);
    ck_assert_int_eq(a.proven, 100);
    ck_assert_int_eq(a.client_from, 200);
    ck_assert_int_eq(a.indicative, 200);
    slurp(kb_path(path, sizeof(path), dir, "report.md"));
    ck_assert_ptr_nonnull(strstr(slurp(path), "| go | >= 100; 200* | 1.00 | 30000 |"));
    ck_assert_ptr_nonnull(strstr(slurp(path), "| client-limited | [1] |"));
    /* the shared reason said once, with how many rows share it */
    ck_assert_int_eq(count(slurp(path), "client CPU 89 % of its 1 CPU(s) > 80 %"), 1);
    ck_assert_ptr_nonnull(strstr(slurp(path), "[1] client CPU 89 % of its 1 CPU(s) > 80 %; its own "
                                 "figures: controlled (1 row)"));
    ck_assert_ptr_nonnull(strstr(slurp(path), "The contract's 4 client threads describe the "
                                 "offered load"));
    doc = json_load_file(kb_path(path, sizeof(path), dir, "report.json"), 0, NULL);
    cell = json_object_get(json_object_get(answer_of(doc, "go"), "routes"), "plaintext");
    ck_assert_int_eq(json_integer_value(json_object_get(cell, "proven_rps")), 100);
    ck_assert(json_is_true(json_object_get(cell, "proven_is_bound")));
    ck_assert_int_eq(json_integer_value(json_object_get(cell, "indicative_rps")), 200);
    ck_assert_str_eq(json_string_value(json_object_get(json_row(doc, "go-plaintext-200"),
                                                       "server_verdict")), "controlled");
    ck_assert(json_is_false(json_object_get(json_object_get(json_row(doc, "go-plaintext-200"),
                                                            "client_trust"), "ok")));
    json_decref(doc);
    ck_assert_int_eq(count(slurp(kb_path(path, sizeof(path), dir, "charts/p99-plaintext.svg")),
                           "<g class=\"mark controlled client-limited\" data-x="), 1 + 1);
    /* (go's 200, and the legend's hollow sample) */
}
END_TEST

/* go's lowest rate trusted and uncontrolled: "below 100", a definite result, ranked last. */
START_TEST(below_lowest_rate_is_definite)
{
    char path[200];
    struct kb_report_answer a;
    size_t order[4];
    int rank[4];
    write_pts("go", 100, &(struct pt){ "uncontrolled", NULL, 60, 500000, 900, 0, 0, NULL });
    write_pts("go", 200, &(struct pt){ "uncontrolled", NULL, 60, 900000, 900, 0, 0, NULL });
    write_pts("gray-static", 200, &(struct pt){ "controlled", NULL, 200, 900, 900, 0, 0, NULL });
    load_and_write();
    kb_report_answer_of(&R, "go", "plaintext", &a);
    ck_assert_int_eq(a.proven, 0);
    ck_assert_int_eq(a.below, 100);
    ck_assert_int_eq(a.client_from, 0);
    ck_assert_int_eq(kb_report_rank(&R, order, rank, 4), 2);
    ck_assert_str_eq(kb_report_runtime(&R, order[0]), "gray-static");
    ck_assert_int_eq(rank[1], 2);
    ck_assert_ptr_nonnull(strstr(slurp(kb_path(path, sizeof(path), dir, "report.md")),
                                 "| 2 | go | < 100 | - | 30000 |"));
    ck_assert_ptr_nonnull(strstr(slurp(path), "| 1 | gray-static | 200 | - | 60000 |"));
    ck_assert_ptr_nonnull(strstr(slurp(path), "\"< R\": the lowest rate R was already uncontrolled"));
    ck_assert_ptr_null(strstr(slurp(path), "none proven"));
    ck_assert_ptr_nonnull(strstr(slurp(kb_path(path, sizeof(path), dir, "report.json")),
                                 "\"below_rps\": 100"));
}
END_TEST

/* Each runtime's cost at its own highest held rate (server verdict controlled; go's 200
 * untrusted but held on its own figures): CPU per response there, the ratio to gray-static's
 * at its own, the capacity estimate; with equal levels the cost orders the ranking. */
START_TEST(cost_at_each_runtimes_own_highest_held_rate)
{
    char path[200];
    json_t *doc, *rows;
    size_t order[4];
    int rank[4];
    struct kb_report_cost c;
    write_pts("go", 100, &(struct pt){ "controlled", NULL, 100, 900, 900, 0, 26, NULL });
    write_pts("go", 200, &(struct pt){ "client-limited", "controlled", 200, 900, 900, 0, 30, "cpu" });
    write_pts("gray-static", 100, &(struct pt){ "controlled", NULL, 100, 900, 900, 0, 13, NULL });
    write_pts("gray-static", 200, &(struct pt){ "client-limited", "controlled", 200, 900, 900, 0, 10, "cpu" });
    load_and_write();
    kb_report_cost_of(&R, "go", "plaintext", &c);
    ck_assert_int_eq(c.rate, 200);
    ck_assert_double_eq_tol(c.us, 30, 1e-9);
    ck_assert_double_eq_tol(c.capacity_rps, 1e6 / 30, 1e-6);
    ck_assert_int_eq(c.capacity_floor, 0);
    ck_assert_double_eq_tol(kb_report_efficiency_ratio(&R, "go"), 3.0, 1e-9);
    ck_assert_int_eq(kb_report_rank(&R, order, rank, 4), 2);
    ck_assert_str_eq(kb_report_runtime(&R, order[0]), "gray-static");   /* same level, cheaper */
    ck_assert_int_eq(rank[1], 2);
    slurp(kb_path(path, sizeof(path), dir, "report.md"));
    ck_assert_ptr_nonnull(strstr(slurp(path), "## Cost per response"));
    ck_assert_ptr_nonnull(strstr(slurp(path), "| go | 200 | 30.0 us | 3.00 | ~33333 |"));
    ck_assert_ptr_nonnull(strstr(slurp(path), "| gray-static | 200 | 10.0 us | 1.00 | ~100000 |"));
    ck_assert_ptr_nonnull(strstr(slurp(path), "| 1 | gray-static | >= 100; 200* | 1.00 | 60000 |"));
    ck_assert_ptr_nonnull(strstr(slurp(path), "| 2 | go | >= 100; 200* | 3.00 | 30000 |"));
    ck_assert_ptr_nonnull(strstr(slurp(path), "\"M*\": the highest rate whose own figures"));
    doc = json_load_file(kb_path(path, sizeof(path), dir, "report.json"), 0, NULL);
    ck_assert_str_eq(json_string_value(json_object_get(doc, "baseline")), "gray-static");
    rows = json_object_get(json_object_get(doc, "cost"), "plaintext");
    ck_assert_str_eq(json_string_value(json_object_get(json_array_get(rows, 0), "runtime")), "go");
    ck_assert_int_eq(json_integer_value(json_object_get(json_array_get(rows, 0), "held_rps")), 200);
    ck_assert_double_eq_tol(json_number_value(json_object_get(json_array_get(rows, 0),
                                                              "vs_baseline_ratio")), 3.0, 1e-9);
    ck_assert_double_eq_tol(json_number_value(json_object_get(json_array_get(rows, 0),
                                                              "capacity_estimate_rps")), 1e6 / 30, 1e-3);
    ck_assert_ptr_null(json_object_get(json_row(doc, "go-plaintext-200"), "capacity_estimate_rps"));
    json_decref(doc);
}
END_TEST

/* A plan written before plans named the contract's baseline: no ratio is taken, none is
 * guessed (no runtime is assumed to be the baseline), and the report says why. */
START_TEST(plan_without_baseline_gives_no_ratio)
{
    char path[200], err[256];
    json_t *plan, *doc, *rows;
    int soft = 1;
    kb_path(path, sizeof(path), dir, "plan.json");
    plan = json_load_file(path, 0, NULL);
    json_object_del(plan, "baseline");
    ck_assert_int_eq(kb_write_json_atomic(path, plan, err, sizeof(err)), 0);
    json_decref(plan);
    write_pts("go", 100, &(struct pt){ "controlled", NULL, 100, 900, 900, 0, 26, NULL });
    write_pts("go", 200, &(struct pt){ "controlled", NULL, 200, 900, 900, 0, 30, NULL });
    write_pts("gray-static", 100, &(struct pt){ "controlled", NULL, 100, 900, 900, 0, 13, NULL });
    write_pts("gray-static", 200, &(struct pt){ "controlled", NULL, 200, 900, 900, 0, 10, NULL });
    load_and_write();
    ck_assert_ptr_null(kb_report_baseline(&R));
    ck_assert_double_eq(kb_report_efficiency_ratio(&R, "go"), 0);
    ck_assert_double_eq(kb_report_answer_ratio(&R, "go", "plaintext", &soft), 0);
    ck_assert_int_eq(soft, 0);
    slurp(kb_path(path, sizeof(path), dir, "report.md"));
    ck_assert_ptr_nonnull(strstr(slurp(path), "| go | 200 | 30.0 us | - | ~33333 |"));
    ck_assert_ptr_nonnull(strstr(slurp(path), "| gray-static | 200 | 10.0 us | - | ~100000 |"));
    ck_assert_ptr_nonnull(strstr(flat(path), "This run's plan names no baseline"));
    ck_assert_ptr_null(strstr(slurp(path), "vs gray-static"));
    doc = json_load_file(kb_path(path, sizeof(path), dir, "report.json"), 0, NULL);
    ck_assert_ptr_nonnull(doc);
    ck_assert(json_is_null(json_object_get(doc, "baseline")));
    rows = json_object_get(json_object_get(doc, "cost"), "plaintext");
    ck_assert(json_is_null(json_object_get(json_array_get(rows, 0), "vs_baseline_ratio")));
    json_decref(doc);
}
END_TEST

/* A runtime's colour is its place in the contract's runtimes, whichever runtimes the run
 * had; one the contract lacks takes the next colour after the contract's. */
START_TEST(colours_follow_the_contract)
{
    char path[200];
    const char *svg;
    ck_assert_int_eq(kb_report_load(dir, &R, (char[256]){ 0 }, 256), 0);
    json_decref(R.contract_runtimes);
    R.contract_runtimes = json_pack("[s,s]", "node", "go");
    write_all();
    svg = slurp(kb_path(path, sizeof(path), dir, "charts/achieved-plaintext.svg"));
    /* go second in the contract: the palette's second; gray-static not in it: the third */
    ck_assert_ptr_nonnull(strstr(strstr(svg, "data-runtime=\"go\""), "stroke=\"#27ae60\""));
    ck_assert_ptr_nonnull(strstr(strstr(svg, "data-runtime=\"gray-static\""),
                                 "stroke=\"#2980b9\""));
    json_decref(R.contract_runtimes);
    R.contract_runtimes = json_pack("[s,s,s,s]", "gray-static", "a", "b", "go");
    write_all();
    svg = slurp(kb_path(path, sizeof(path), dir, "charts/achieved-plaintext.svg"));
    ck_assert_ptr_nonnull(strstr(strstr(svg, "data-runtime=\"go\""), "stroke=\"#c0392b\""));
    ck_assert_ptr_nonnull(strstr(strstr(svg, "data-runtime=\"gray-static\""),
                                 "stroke=\"#8e44ad\""));
}
END_TEST

/* A capacity estimate never stands below the rate the runtime held: there the held rate
 * stands, marked. And a runtime that held nothing has no cost, said so. */
START_TEST(cost_never_below_what_was_held)
{
    char path[200];
    struct kb_report_cost c;
    write_pts("go", 100, &(struct pt){ "controlled", NULL, 100, 900, 900, 0, 26, NULL });
    write_pts("go", 200, &(struct pt){ "controlled", NULL, 200, 900, 900, 0, 10000, NULL });
    write_pts("gray-static", 100, &(struct pt){ "controlled", NULL, 100, 900, 900, 0, 13, NULL });
    write_pts("gray-static", 200, &(struct pt){ "uncontrolled", NULL, 150, 500000, 900, 0, 10, NULL });
    load_and_write();
    kb_report_cost_of(&R, "go", "plaintext", &c);
    ck_assert_int_eq(c.rate, 200);
    ck_assert_double_eq_tol(c.capacity_rps, 200, 1e-9);   /* 1e6 / 10000 = 100 < 200 held */
    ck_assert_int_eq(c.capacity_floor, 1);
    kb_report_cost_of(&R, "gray-static", "plaintext", &c);
    ck_assert_int_eq(c.rate, 100);                         /* its own highest held, not 200 */
    ck_assert_ptr_nonnull(strstr(slurp(kb_path(path, sizeof(path), dir, "report.md")),
                                 "| go | 200 | 10000.0 us | 769.23 | >= 200 |"));
    ck_assert_ptr_nonnull(strstr(slurp(path), "\">= N\" capacity: one CPU over the measured cost"));
    kb_report_free(&R);
    write_pts("go", 100, &(struct pt){ "uncontrolled", NULL, 60, 500000, 900, 0, 26, NULL });
    write_pts("go", 200, &(struct pt){ "uncontrolled", NULL, 60, 500000, 900, 0, 26, NULL });
    load_and_write();
    kb_report_cost_of(&R, "go", "plaintext", &c);
    ck_assert_int_eq(c.rate, 0);
    ck_assert_ptr_nonnull(strstr(slurp(path), "| go | none held | - | - | - |"));
}
END_TEST

/* report.csv: schema_version and point id first, a unit on every numeric name, and every
 * row as wide as the header. */
START_TEST(csv_schema_and_ids)
{
    char path[200], *text, *line, *save = NULL;
    int fields = -1;
    json_t *doc;
    write_pts("gray-static", 200, &(struct pt){ "controlled", NULL, 200, 900, 900, 0, 10, NULL });
    load_and_write();
    text = strdup(slurp(kb_path(path, sizeof(path), dir, "report.csv")));
    ck_assert_ptr_nonnull(strstr(text, "schema_version,point_id,runtime,route,requested_rps,"
                                       "repeats_count,verdict,server_verdict,client_trust_ok,"
                                       "achieved_rps,achieved_min_rps,achieved_max_rps,"
                                       "delivery_fraction,"));
    ck_assert_ptr_nonnull(strstr(text, "\n4,gray-static-plaintext-200,gray-static,plaintext,200,3,"
                                       "controlled,controlled,1,"));
    for (line = strtok_r(text, "\n", &save); line; line = strtok_r(NULL, "\n", &save)) {
        int n = 1, quoted = 0;
        for (char *p = line; *p; p++) {
            quoted ^= *p == '"';
            n += *p == ',' && !quoted;
        }
        if (fields < 0)
            fields = n;
        ck_assert_int_eq(n, fields);
    }
    free(text);
    doc = json_load_file(kb_path(path, sizeof(path), dir, "report.json"), 0, NULL);
    ck_assert_int_eq(json_integer_value(json_object_get(doc, "schema_version")),
                     KB_REPORT_SCHEMA_VERSION);
    json_decref(doc);
}
END_TEST

/* series.csv with the bound columns: a bounded second is read as a bound, an empty field as
 * no figure, and the chart draws it as an open triangle, off the lines. */
START_TEST(series_bounds_read_and_drawn)
{
    char err[256], path[200];
    const struct kb_report_series *s;
    const char *svg;
    write_file("points/go-plaintext-200-r1/series.csv",
               "start_s,length_s,completed,achieved_rps,p50_us,p99_us,max_us,errors,bounded,"
               "p50_is_bound,p99_is_bound,max_is_bound\n"
               "0.000,1.000,150,150.0,500,2000,3000,0,0,0,0,0\n"
               "1.000,1.000,0,0.0,,,,0,0,0,0,0\n"
               "2.000,1.000,10,10.0,90000,1900000,2100000,0,140,0,1,1\n");
    ck_assert_int_eq(kb_report_load(dir, &R, err, sizeof(err)), 0);
    s = kb_report_series_of(&R, "go", "plaintext");
    ck_assert_uint_eq(s->n, 3);
    ck_assert(s->v[1].p50_us < 0 && s->v[1].p99_us < 0 && s->v[1].max_us < 0);
    ck_assert_int_eq(s->v[1].errors, 0);                 /* columns after the empties in place */
    ck_assert_int_eq(s->v[2].p99_bound, 1);
    ck_assert_int_eq(s->v[2].p50_bound, 0);
    ck_assert_int_eq(s->v[2].bounded, 140);
    write_all();
    svg = slurp(kb_path(path, sizeof(path), dir, "charts/series-go-plaintext.svg"));
    ck_assert_int_eq(count(svg, "<g class=\"bound\">"), 2 + 1);   /* p99 and max of the last
                                                                   second, and the legend's */
    ck_assert_ptr_nonnull(strstr(svg, "second 2: p99 &gt;= 1.90 s (lower bound)"));
    ck_assert_int_eq(count(svg, "<circle"), 1);                /* the exact p99 of second 0 only */
    ck_assert_ptr_nonnull(strstr(svg, "140 lower bound(s)"));
    ck_assert_ptr_nonnull(strstr(slurp(kb_path(path, sizeof(path), dir, "report.md")),
                                 "p99 2.00 ms in the first second, >= 1.90 s in the last"));
    ck_assert_ptr_nonnull(strstr(slurp(kb_path(path, sizeof(path), dir, "report.json")),
                                 "\"is_bound\": true"));
}
END_TEST

/* Every mark opening with its <title>: the tag's end is followed by one. */
static int untitled(const char *svg, const char *open)
{
    int n = 0;
    for (const char *p = svg; (p = strstr(p, open)); p++)
        n += strncmp(strchr(p, '>') + 1, "<title>", 7) != 0;
    return n;
}

/* x of the first "<circle cx=" after needle. */
static double circle_x(const char *svg, const char *needle)
{
    const char *p = strstr(svg, needle);
    ck_assert_ptr_nonnull(p);
    p = strstr(p, "<circle cx=\"");
    ck_assert_ptr_nonnull(p);
    return atof(p + strlen("<circle cx=\""));
}

/* Every verdict mark (the legend's too), line and bound carries a title; the achieved chart
 * shades the delivery band. go and gray-static deliver the same 100 req/s at 100: lines
 * drawn widest first and before any mark, the two marks set 7 px apart, so neither hides
 * the other. */
START_TEST(svg_titles_on_marks)
{
    char path[200];
    const char *svg;
    ck_assert_int_eq(kb_report_load(dir, &R, (char[256]){ 0 }, 256), 0);
    write_all();
    svg = slurp(kb_path(path, sizeof(path), dir, "charts/achieved-plaintext.svg"));
    /* 4 rows with evidence, and the legend's 5 sample marks */
    ck_assert_int_eq(count(svg, "<g class=\"mark "), 4 + 5);
    ck_assert_int_eq(untitled(svg, "<g class=\"mark "), 0);
    ck_assert_int_eq(untitled(svg, "<g class=\"bound\""), 0);
    ck_assert_int_eq(untitled(svg, "<g class=\"series\""), 0);
    ck_assert_ptr_nonnull(strstr(svg, "<title>plaintext: achieved vs requested rate</title>"));
    ck_assert_ptr_nonnull(strstr(svg, "<g class=\"delivery-band\"><title>delivery &gt;= 95 %"));
    ck_assert_ptr_nonnull(strstr(svg, "<g class=\"series\" data-runtime=\"go\"><title>go: "
                                      "achieved rate against the requested rate</title>"));
    /* go's line (drawn first) wider than gray-static's; every line before the first mark */
    ck_assert_ptr_nonnull(strstr(strstr(svg, "data-runtime=\"go\""), "stroke-width=\"3.5\""));
    ck_assert_ptr_nonnull(strstr(strstr(svg, "data-runtime=\"gray-static\""),
                                 "stroke-width=\"2.0\""));
    ck_assert(strstr(svg, "<g class=\"marks\"") > strstr(strstr(svg, "<g class=\"series\" "
                                                                  "data-runtime=\"gray-static\""),
                                                           "</g>"));
    /* both at the true rate, nested: go's (drawn first) the larger */
    ck_assert_double_eq_tol(circle_x(svg, "<title>gray-static 100 req/s") -
                            circle_x(svg, "<title>go 100 req/s"), 0, 0.01);
    svg = slurp(kb_path(path, sizeof(path), dir, "charts/p99-plaintext.svg"));
    ck_assert_ptr_null(strstr(svg, "delivery-band"));
    ck_assert_int_eq(untitled(svg, "<g class=\"mark "), 0);
}
END_TEST

/* A docker run on an unpinned base: the stamp stays one line with the image's note verbatim,
 * however long, since readers (and the docker test) search for it whole. */
START_TEST(base_not_pinned_stamp_one_line)
{
    char err[256], path[200];
    const char *note = "built on kneebench-base:bookworm (Debian 12 from the host's apt mirror), "
                       "not the pinned Ubuntu 24.04 base";
    json_t *run = json_pack("{s:s,s:[s],s:{},s:s,s:{s:s,s:s,s:[],s:s,s:b,s:s}}", "started", "now",
        "command_line", "curve", "host", "backend", "docker", "image", "image", "kb:latest", "id",
        "sha256:1", "repo_digests", "base", "kneebench-base:bookworm", "base_is_pinned", 0,
        "note", note);
    kb_write_json_atomic(kb_path(path, sizeof(path), dir, "run.json"), run, err, sizeof(err));
    json_decref(run);
    ck_assert_int_eq(kb_report_load(dir, &R, err, sizeof(err)), 0);
    write_all();
    snprintf(err, sizeof(err), "> **BASE NOT PINNED**: %s  ", note);
    ck_assert_ptr_nonnull(strstr(flat(kb_path(path, sizeof(path), dir, "report.md")), err));
}
END_TEST

START_TEST(not_a_run_dir)
{
    char err[256];
    ck_assert_int_eq(kb_report_load("/nonexistent", &R, err, sizeof(err)), -1);
    ck_assert_ptr_nonnull(strstr(err, "plan.json"));
}
END_TEST

static Suite *suite(void)
{
    Suite *s = suite_create("report");
    TCase *tc = tcase_create("model");
    tcase_add_checked_fixture(tc, setup, teardown);
    tcase_add_test(tc, missing_named);
    tcase_add_test(tc, repeats_aggregate);
    tcase_add_test(tc, boundaries_and_confirmation_samples);
    tcase_add_test(tc, client_limited_sample_decides_only_where_it_could);
    tcase_add_test(tc, a_bounded_p99_counts_at_its_worst_in_the_median);
    tcase_add_test(tc, writers);
    tcase_add_test(tc, a_controlled_cell_whose_queue_grew_says_so);
    tcase_add_test(tc, client_limited_next_point_is_a_lower_bound);
    tcase_add_test(tc, not_a_run_dir);
    tcase_add_test(tc, no_calibration_said_plainly);
    tcase_add_test(tc, calibration_margin_and_coverage);
    tcase_add_test(tc, calibration_proven_covers_all);
    tcase_add_test(tc, a_rung_tried_again_says_whether_it_held);
    tcase_add_test(tc, calibration_unreadable_noted);
    tcase_add_test(tc, calibration_held_above_a_miss);
    tcase_add_test(tc, series_of_first_uncontrolled);
    tcase_add_test(tc, series_prefers_a_queued_repeat);
    tcase_add_test(tc, series_past_margin_in_forced_run);
    tcase_add_test(tc, series_missing_noted);
    tcase_add_test(tc, read_series_by_header);
    tcase_add_test(tc, bounds_shown_as_bounds);
    tcase_add_test(tc, median_with_a_bound_is_a_bound);
    tcase_add_test(tc, empty_histogram_is_no_figure);
    tcase_add_test(tc, client_limited_keeps_server_verdict);
    tcase_add_test(tc, below_lowest_rate_is_definite);
    tcase_add_test(tc, cost_at_each_runtimes_own_highest_held_rate);
    tcase_add_test(tc, plan_without_baseline_gives_no_ratio);
    tcase_add_test(tc, colours_follow_the_contract);
    tcase_add_test(tc, cost_never_below_what_was_held);
    tcase_add_test(tc, csv_schema_and_ids);
    tcase_add_test(tc, series_bounds_read_and_drawn);
    tcase_add_test(tc, svg_titles_on_marks);
    tcase_add_test(tc, base_not_pinned_stamp_one_line);
    suite_add_tcase(s, tc);
    return s;
}

int main(void)
{
    return kb_check_run(suite(), "report");
}
