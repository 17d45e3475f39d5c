/* test_report.c -- the report model from a synthetic run directory: missing points named,
 * repeats aggregated into medians with ranges, failed repeats fail the row, highest
 * controlled point, and the writers' files (partial stamp, CSV rows, SVG per route); the
 * client margin from a calibrate.json (or its plain absence), and the first uncontrolled
 * point's per-second series.csv charted. */
#define _GNU_SOURCE
#include "runner/report.h"
#include "runner/calibrate.h"
#include "runner/evidence.h"
#include "tests/lib/kb_check.h"

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
                     "s:{s:f,s:i,s:f,s:i},s:O}", "profile", "quick", "duration_s", 1.0,
                     "warmup_s", 0.5, "drain_s", 0.5, "threads", 4, "connections", 256,
                     "repeats", 3, "runtimes", "go", "gray-static", "routes", "plaintext",
                     "rates", 100, 200, "backend", "native", "unconstrained", 0,
                     "server_cpus", "0", "client_cpus", "1", "criteria", "min_delivery", 0.95,
                     "max_p99_us", 100000, "client_cpu_max_fraction", 0.8,
                     "client_lag_p99_max_us", 1000, "points", pts);
    ck_assert_ptr_nonnull(plan);
    kb_write_json_atomic(kb_path(path, sizeof(path), dir, "plan.json"), plan, err, sizeof(err));
    run = json_pack("{s:s,s:[s],s:{}}", "started", "now", "command_line", "curve", "host");
    kb_write_json_atomic(kb_path(path, sizeof(path), dir, "run.json"), run, err, sizeof(err));
    json_decref(pts);
    json_decref(plan);
    json_decref(run);
}

static void write_point(const char *id, const char *verdict, double achieved, double p99_us,
                        long long errors)
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
    snprintf(pdir, sizeof(pdir), "%s/points/%s", dir, id);
    kb_mkdirs(pdir, err, sizeof(err));
    kb_write_json_atomic(kb_path(path, sizeof(path), pdir, "verdict.json"), v, err, sizeof(err));
    kb_write_atomic(kb_path(path, sizeof(path), pdir, "DONE"), "{}", 2, err, sizeof(err));
    json_decref(v);
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
    const struct kb_report_row *w;
    ck_assert_int_eq(kb_report_load(dir, &R, err, sizeof(err)), 0);
    w = kb_report_row(&R, "go", "plaintext", 100);
    ck_assert_int_eq(w->n, 3);
    ck_assert_double_eq_tol(w->p99.med, 2.0, 1e-9);
    ck_assert_double_eq_tol(w->p99.min, 1.0, 1e-9);
    ck_assert_double_eq_tol(w->p99.max, 3.0, 1e-9);
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

START_TEST(writers)
{
    char err[256], path[200];
    ck_assert_int_eq(kb_report_load(dir, &R, err, sizeof(err)), 0);
    R.partial = 1;
    ck_assert_int_eq(kb_report_write_md(&R, dir, err, sizeof(err)), 0);
    ck_assert_int_eq(kb_report_write_csv(&R, dir, err, sizeof(err)), 0);
    ck_assert_int_eq(kb_report_write_json(&R, dir, err, sizeof(err)), 0);
    ck_assert_int_eq(kb_report_write_svg(&R, dir, err, sizeof(err)), 0);
    ck_assert_ptr_nonnull(strstr(slurp(kb_path(path, sizeof(path), dir, "report.md")), "PARTIAL"));
    ck_assert_ptr_nonnull(strstr(slurp(path), "gray-static-plaintext-200-r3"));
    ck_assert_ptr_nonnull(strstr(slurp(path), "| go | 100 | 1.00 |"));   /* ratio to gray */
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
    ck_assert_ptr_nonnull(strstr(slurp(path), "| go | >= 100 (client-limited from 200) | 1.00* |"));
    ck_assert_ptr_nonnull(strstr(slurp(path), "**Knees not located.**"));
    ck_assert_ptr_null(strstr(slurp(path), "| gray-static | >="));
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
    ck_assert_ptr_nonnull(strstr(slurp(path), "| 2 | 250 | 240 | 96.0 % | 93 % | 4321 | 7.00 | 0 | "
                                 "no | client CPU 93 % > 80 % |"));
    ck_assert_ptr_nonnull(strstr(slurp(path), "Covered: 100 req/s. Not covered: 200 req/s"));
    /* at 200: go uncontrolled, gray-static failed -- neither marked client-limited */
    ck_assert_ptr_nonnull(strstr(slurp(path), "Not covered: 200 req/s: 0 of 2 runtime x route row(s)"));
    ck_assert_ptr_null(strstr(slurp(path), "--force"));   /* run.json's command line has none */
    ck_assert_ptr_null(strstr(slurp(path), "NO CALIBRATION PROOF"));
    j = json_load_file(kb_path(path, sizeof(path), dir, "report.json"), 0, NULL);
    c = json_object_get(j, "calibration");
    ck_assert(json_is_true(json_object_get(c, "present")));
    ck_assert(json_is_false(json_object_get(c, "proven")));
    ck_assert_double_eq_tol(json_number_value(json_object_get(c, "margin_rps")), 200, 1e-9);
    ck_assert_double_eq_tol(json_number_value(json_object_get(c, "covers_up_to_rps")), 160, 1e-9);
    ck_assert_int_eq(json_integer_value(json_array_get(json_object_get(c, "rates_covered"), 0)), 100);
    ck_assert_int_eq(json_integer_value(json_array_get(json_object_get(c, "rates_not_covered"), 0)), 200);
    ck_assert_uint_eq(json_array_size(json_object_get(c, "steps")), 2);
    ck_assert_str_eq(json_string_value(json_object_get(c, "client_cpus")), "1");
    json_decref(j);
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
    ck_assert_double_eq_tol(s->v[2].p99_ms, 250, 1e-9);
    ck_assert_double_eq_tol(s->v[2].max_ms, 400, 1e-9);
    ck_assert_int_eq(s->v[1].completed, 0);
    ck_assert_int_eq(s->v[1].errors, 2);
    write_all();
    svg = slurp(kb_path(path, sizeof(path), dir, "charts/series-go-plaintext.svg"));
    ck_assert_ptr_nonnull(strstr(svg, "go plaintext at 200 req/s: corrected latency per second"));
    ck_assert_ptr_nonnull(strstr(svg, ">first uncontrolled point</text>"));
    ck_assert_ptr_nonnull(strstr(svg, "100 ms: controlled limit"));
    ck_assert_ptr_nonnull(strstr(svg, ">1 s</text>"));                /* log axis up to 1 s */
    ck_assert_int_eq(count(svg, "<circle"), 2);                       /* not the empty second */
    ck_assert_ptr_nonnull(strstr(svg, "achieved 0-150 req/s per second, 3 error(s)"));
    slurp(kb_path(path, sizeof(path), dir, "report.md"));
    ck_assert_ptr_nonnull(strstr(slurp(path), "(charts/series-go-plaintext.svg)"));
    ck_assert_ptr_nonnull(strstr(slurp(path), "p99 2.00 ms in the first second, 250.00 ms in the last"));
    ck_assert_ptr_nonnull(strstr(slurp(path), "- gray-static: no uncontrolled point on plaintext"));
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

/* --force marks the points above the margin client-limited; one whose own p99 misses the
 * criteria is where the queue formed, and stands in for the first uncontrolled point. */
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
    ck_assert_int_eq(kb_report_load(dir, &R, err, sizeof(err)), 0);
    ck_assert_ptr_null(kb_report_series_of(&R, "go", "plaintext"));   /* no calibration: no mark */
    kb_report_free(&R);
    write_calibration(200, 0);
    ck_assert_int_eq(kb_report_load(dir, &R, err, sizeof(err)), 0);
    s = kb_report_series_of(&R, "go", "plaintext");
    ck_assert_ptr_nonnull(s);
    ck_assert_int_eq(s->past_margin, 1);
    ck_assert_str_eq(s->point, "go-plaintext-200-r1");
    write_all();
    ck_assert_ptr_nonnull(strstr(slurp(kb_path(path, sizeof(path), dir,
                                 "charts/series-go-plaintext.svg")),
                                 "first point past the criteria (marked client-limited"));
    ck_assert_ptr_nonnull(strstr(slurp(kb_path(path, sizeof(path), dir, "report.md")),
                                 "client-limited above the proven margin"));
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
                                 "no chart, points/go-plaintext-200-r1 has no series.csv"));
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
    ck_assert_double_eq_tol(s.v[0].p50_ms, 1, 1e-9);
    ck_assert_double_eq_tol(s.v[0].max_ms, 9, 1e-9);
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
    tcase_add_test(tc, writers);
    tcase_add_test(tc, client_limited_next_point_is_a_lower_bound);
    tcase_add_test(tc, not_a_run_dir);
    tcase_add_test(tc, no_calibration_said_plainly);
    tcase_add_test(tc, calibration_margin_and_coverage);
    tcase_add_test(tc, calibration_proven_covers_all);
    tcase_add_test(tc, calibration_unreadable_noted);
    tcase_add_test(tc, series_of_first_uncontrolled);
    tcase_add_test(tc, series_prefers_a_queued_repeat);
    tcase_add_test(tc, series_past_margin_in_forced_run);
    tcase_add_test(tc, series_missing_noted);
    tcase_add_test(tc, read_series_by_header);
    suite_add_tcase(s, tc);
    return s;
}

int main(void)
{
    return kb_check_run(suite(), "report");
}
