/* test_report_qualify.c -- the qualification report from a synthetic verdict.json and the
 * shipped contract: every paper figure in the table is the contract's (not the code's), one
 * column per run of the paper's (the reproduced one said), labelled as the paper's host and
 * not a target, this run's figures beside them, a figure the run or a paper run lacks prints
 * "-" (never 0), and the final zero state names this run's gauges with their values. */
#define _GNU_SOURCE
#include "runner/report/qualify/report_qualify.h"
#include "runner/util/root.h"
#include "tests/lib/kb_check.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

static struct kb_contract c;
static char err[1024];

static void load(void)
{
    ck_assert_msg(kb_contract_load(kb_root_contract(), &c, err, sizeof(err)) == 0, "%s", err);
    ck_assert(c.qual.present);
}

static void unload(void)
{
    kb_contract_free(&c);
}

static json_t *verdict(void)
{
    return json_pack("{s:s,s:s,s:I,s:f,s:{s:f,s:f,s:I,s:{s:f,s:f,s:f,s:f}},"
                     "s:{s:I,s:I,s:f,s:I,s:{s:i,s:i,s:i,s:i,s:i,s:i}},s:{s:f,s:f},s:{s:f}}",
        "verdict", "pass", "reason", "all held", "rate", (json_int_t)1000, "duration_s", 5.0,
        "load", "achieved_rps", 1000.8, "delivery", 1.0008, "completed_in_interval",
        (json_int_t)5000, "corrected_us", "p50", 480.0, "p99", 7880.0, "p999", 12140.0, "max",
        13940.0,
        "stats", "ok_measured", (json_int_t)100, "suspended_now_max", (json_int_t)65,
        "per_s", 20.0, "samples", (json_int_t)139, "final", "suspended_now", 0,
        "queries_in_flight", 0, "queued", 0, "pool_busy", 0, "pool_connecting", 0,
        "pool_down", 0, "criteria", "min_delivery", 0.95, "max_p99_us", 100000.0,
        "rss_bytes", "last", 5.0 * 1024 * 1024);
}

/* The row called figure in report.json. */
static json_t *row(json_t *r, const char *figure)
{
    size_t i;
    json_t *x;
    json_array_foreach(json_object_get(r, "rows"), i, x)
        if (!strcmp(json_string_value(json_object_get(x, "figure")), figure))
            return x;
    ck_abort_msg("no row %s", figure);
    return NULL;
}

/* Row figure's cell for the paper run named name. */
static json_t *paper_cell(json_t *r, const char *figure, const char *name)
{
    return json_object_get(json_object_get(row(r, figure), "papers"), name);
}

START_TEST(paper_figures_come_from_the_contract)
{
    json_t *v = verdict(), *r = kb_qual_report_json(v, &c.qual), *papers;
    ck_assert_ptr_nonnull(r);
    for (size_t i = 0; i < c.qual.npapers; i++) {
        const struct kb_qual_paper *p = &c.qual.papers[i];
        ck_assert_double_eq_tol(json_number_value(paper_cell(r, "corrected p99", p->name)),
                                p->p99_us, 1e-9);
        ck_assert_double_eq_tol(json_number_value(paper_cell(r, "delivery", p->name)),
                                p->delivery, 1e-12);
        /* a figure that run does not state is null, never 0 */
        if (p->suspended_max < 0)
            ck_assert(json_is_null(paper_cell(r, "most handlers suspended at once (sampled)",
                                              p->name)));
        else
            ck_assert_int_eq(json_integer_value(paper_cell(
                                 r, "most handlers suspended at once (sampled)", p->name)),
                             p->suspended_max);
        if (p->rss_kib >= 0)
            ck_assert_double_eq_tol(json_number_value(paper_cell(r, "server RSS, last sample",
                                                                 p->name)), p->rss_kib, 1e-9);
        papers = json_array_get(json_object_get(r, "papers"), i);
        ck_assert_str_eq(json_string_value(json_object_get(papers, "host")), p->host);
        ck_assert(json_is_true(json_object_get(papers, "reproduced")) == (p == c.qual.reproduces));
    }
    ck_assert_double_eq_tol(json_number_value(json_object_get(row(r, "corrected p99"), "run")),
                            7880, 1e-9);
    ck_assert_double_eq_tol(json_number_value(json_object_get(row(r, "server RSS, last sample"),
                                                              "run")), 5120, 1e-9);
    ck_assert_str_eq(json_string_value(json_object_get(json_object_get(r, "reproduces"), "name")),
                     c.qual.reproduces->name);
    ck_assert(strstr(json_string_value(json_object_get(r, "paper_label")), "not a target"));
    json_decref(r);
    json_decref(v);
}
END_TEST

START_TEST(markdown_sets_the_run_beside_the_paper)
{
    json_t *v = verdict(), *r;
    char *md, line[256];
    json_object_del(json_object_get(v, "load"), "completed_in_interval");
    r = kb_qual_report_json(v, &c.qual);
    md = kb_qual_report_md(r);
    ck_assert_ptr_nonnull(md);
    ck_assert_msg(strstr(md, "**pass**: all held") != NULL, "%s", md);
    ck_assert(strstr(md, "the paper's host: orientation, not a target"));
    ck_assert_uint_eq(c.qual.npapers, 2);    /* the lines below are two paper columns wide */
    snprintf(line, sizeof(line), "| corrected p99 | %.2f ms | %.2f ms | 7.88 ms |",
             c.qual.papers[0].p99_us / 1000, c.qual.papers[1].p99_us / 1000);
    ck_assert_msg(strstr(md, line) != NULL, "%s\n%s", line, md);
    /* the readiness qualification states no response count; the continuation does */
    snprintf(line, sizeof(line), "| responses in the measured interval | - | %ld | - |",
             c.qual.papers[1].responses);
    ck_assert_msg(strstr(md, line) != NULL, "%s\n%s", line, md);
    snprintf(line, sizeof(line), "paper: %s (reproduced)", c.qual.reproduces->label);
    ck_assert_msg(strstr(md, line) != NULL, "%s\n%s", line, md);
    snprintf(line, sizeof(line), "this run reproduces %s", c.qual.reproduces->label);
    ck_assert_msg(strstr(md, line) != NULL, "%s\n%s", line, md);
    ck_assert(strstr(md, "`suspended_now=0 queries_in_flight=0 queued=0 pool_busy=0"));
    ck_assert(strstr(md, "`active_tasks=0"));
    /* no version recorded (run.json absent here): no PostgreSQL line */
    ck_assert_ptr_null(strstr(md, "the paper's runs used PostgreSQL 16"));
    /* the criteria attributed to the run of the paper's that states each */
    ck_assert(strstr(md, "the /stats rate and the gauges back at zero come from its continuation"));
    free(md);
    /* the host's PostgreSQL beside the papers' 16, as run.json records it */
    json_object_set_new(r, "postgresql", json_string("psql (PostgreSQL) 15.14"));
    md = kb_qual_report_md(r);
    ck_assert_msg(strstr(md, "the paper's runs used PostgreSQL 16; this run's is psql "
                             "(PostgreSQL) 15.14 (run.json)") != NULL, "%s", md);
    free(md);
    json_decref(r);
    json_decref(v);
}
END_TEST

static Suite *suite(void)
{
    Suite *s = suite_create("report_qualify");
    TCase *tc = tcase_create("report");
    tcase_add_checked_fixture(tc, load, unload);
    tcase_add_test(tc, paper_figures_come_from_the_contract);
    tcase_add_test(tc, markdown_sets_the_run_beside_the_paper);
    suite_add_tcase(s, tc);
    return s;
}

int main(void)
{
    return kb_check_run(suite(), "report_qualify");
}
