/* test_loadout.c -- runner/loadout: the --requests-log file (one line per record, "-" for
 * what a request never had, latency = received - intended of the printed values, the
 * truncation said in the header) and the JSON's requests_log fields. */
#define _GNU_SOURCE
#include <check.h>
#include <jansson.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "runner/load/loadgen.h"
#include "runner/load/loadout.h"
#include "tests/lib/kb_check.h"
#include "tests/unit/runner/tmpdir.h"

static struct kb_load_req_record recs[] = {
    { 1000, 1500, 251700, 200, -1 },               /* completed: 1 us, sent 1 us, got 251 us */
    { 2999, 3999, -1, 0, KB_ERR_TIMEOUT },         /* written, never answered */
    { 4000, -1, -1, 0, KB_ERR_CONNECT },           /* never written */
    { 10000000, 10000100, 10020999, 503, -1 },     /* a server error is a status, not an error kind */
};

static void fill(struct kb_load_result *r, int truncated)
{
    memset(r, 0, sizeof(*r));
    ck_assert_int_eq(kb_hist_init(&r->corrected, 1, KB_LOAD_HIST_MAX_US, 3) |
                     kb_hist_init(&r->uncorrected, 1, KB_LOAD_HIST_MAX_US, 3) |
                     kb_hist_init(&r->lag, 1, KB_LOAD_HIST_MAX_US, 3) |
                     kb_hist_init(&r->conn_wait, 1, KB_LOAD_HIST_MAX_US, 3), 0);
    r->requests = malloc(sizeof(recs));
    ck_assert_ptr_nonnull(r->requests);
    memcpy(r->requests, recs, sizeof(recs));
    r->requests_n = sizeof(recs) / sizeof(recs[0]);
    r->requests_truncated = truncated;
}

static char *slurp(const char *path)
{
    FILE *f = fopen(path, "r");
    char *buf = calloc(1, 65536);
    ck_assert_ptr_nonnull(f);
    ck_assert_uint_gt(fread(buf, 1, 65535, f), 0);
    fclose(f);
    return buf;
}

START_TEST(lines_one_per_record)
{
    struct kb_load_result r;
    char path[256], err[256], *text, *body;
    fill(&r, 0);
    snprintf(path, sizeof(path), "%s/req.log", kb_tmp);
    ck_assert_int_eq(kb_loadout_write_requests(path, &r, err, sizeof(err)), 0);
    text = slurp(path);
    ck_assert_ptr_nonnull(strstr(text, "4 records\n"));
    ck_assert_ptr_null(strstr(text, "TRUNCATED"));
    body = strstr(text, "error\n");
    ck_assert_ptr_nonnull(body);
    ck_assert_str_eq(body + 6,
                     "1 1 251 200 250 -\n"
                     "2 3 - - - timeout\n"
                     "4 - - - - connect\n"
                     "10000 10000 10020 503 20 -\n");
    free(text);
    kb_load_result_free(&r);
}
END_TEST

START_TEST(truncation_said_and_json_counts)
{
    struct kb_load_result r;
    struct kb_load_meta m = { .url = "http://127.0.0.1:1/", .route = "plaintext", .requested_rps = 4,
                              .threads = 1, .connections = 1, .duration_s = 1,
                              .requests_log = "x.log", .requests_log_max = 4 };
    char path[256], jpath[256], err[256], *text;
    json_t *j;
    json_error_t je;
    fill(&r, 1);
    snprintf(path, sizeof(path), "%s/req.log", kb_tmp);
    snprintf(jpath, sizeof(jpath), "%s/load.json", kb_tmp);
    ck_assert_int_eq(kb_loadout_write_requests(path, &r, err, sizeof(err)), 0);
    text = slurp(path);
    ck_assert_ptr_nonnull(strstr(text, "4 records, TRUNCATED"));
    free(text);
    ck_assert_int_eq(kb_loadout_write_json(jpath, &m, &r, err, sizeof(err)), 0);
    j = json_load_file(jpath, 0, &je);
    ck_assert_ptr_nonnull(j);
    ck_assert_int_eq(json_integer_value(json_object_get(j, "requests_logged")), 4);
    ck_assert(json_is_true(json_object_get(j, "requests_log_truncated")));
    ck_assert_int_eq(json_integer_value(json_object_get(j, "requests_log_max")), 4);
    ck_assert_str_eq(json_string_value(json_object_get(j, "requests_log")), "x.log");
    json_decref(j);
    /* off: the fields say so */
    m.requests_log = NULL;
    r.requests_truncated = 0;
    free(r.requests);
    r.requests = NULL;
    r.requests_n = 0;
    ck_assert_int_eq(kb_loadout_write_json(jpath, &m, &r, err, sizeof(err)), 0);
    j = json_load_file(jpath, 0, &je);
    ck_assert_ptr_nonnull(j);
    ck_assert(json_is_null(json_object_get(j, "requests_log")));
    ck_assert_int_eq(json_integer_value(json_object_get(j, "requests_logged")), 0);
    ck_assert(json_is_false(json_object_get(j, "requests_log_truncated")));
    json_decref(j);
    kb_load_result_free(&r);
}
END_TEST

START_TEST(unwritable_path_fails_with_reason)
{
    struct kb_load_result r;
    char err[256] = "";
    fill(&r, 0);
    ck_assert_int_eq(kb_loadout_write_requests("/nonexistent-dir/req.log", &r, err, sizeof(err)), -1);
    ck_assert_ptr_nonnull(strstr(err, "/nonexistent-dir/req.log"));
    ck_assert_ptr_nonnull(strstr(err, "No such file or directory"));
    kb_load_result_free(&r);
}
END_TEST

static Suite *suite(void)
{
    Suite *s = suite_create("loadout");
    TCase *tc = tcase_create("requests-log");
    tcase_add_checked_fixture(tc, kb_tmp_setup, kb_tmp_teardown);
    tcase_add_test(tc, lines_one_per_record);
    tcase_add_test(tc, truncation_said_and_json_counts);
    tcase_add_test(tc, unwritable_path_fails_with_reason);
    suite_add_tcase(s, tc);
    return s;
}

int main(void)
{
    return kb_check_run(suite(), "runner-loadout");
}
