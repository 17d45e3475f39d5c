/* test_report.c -- the report model from a synthetic run directory: missing points named,
 * repeats aggregated into medians with ranges, failed repeats fail the row, highest
 * controlled point, and the writers' files (partial stamp, CSV rows, SVG per route). */
#define _GNU_SOURCE
#include "runner/report.h"
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
    tcase_add_test(tc, not_a_run_dir);
    suite_add_tcase(s, tc);
    return s;
}

int main(void)
{
    return kb_check_run(suite(), "report");
}
