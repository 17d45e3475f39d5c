/* test_schema_readers.c -- every reader of evidence refuses a file a newer kneebench wrote,
 * by name, instead of reading it by guessing: kb_evidence_read itself, the knee's report
 * (a sample's verdict.json), the soak's (run.json), the qualification's (verdict.json) and
 * the host clocks' summary (a point's hostclock.json, left out). */
#define _GNU_SOURCE
#include <check.h>
#include <errno.h>
#include <string.h>
#include <sys/stat.h>

#include "runner/util/paths.h"
#include "runner/report/knee/knee_report.h"
#include "runner/report/report.h"
#include "runner/report/soak/report_soak.h"
#include "runner/report/qualify/report_qualify.h"
#include "runner/run/hostclock.h"
#include "runner/util/evidence.h"
#include "tests/unit/runner/tmpdir.h"

#define NEWER "{\"schema_version\": 99, \"verdict\": \"pass\"}\n"

static void assert_refused(const char *err, const char *file)
{
    ck_assert_msg(strstr(err, file) && strstr(err, "schema_version 99, written by a newer "
                                                   "kneebench"), "unclear: %s", err);
}

START_TEST(evidence_read_tells_absent_from_newer)
{
    char err[KB_PATH_MAX + 512] = "", path[256];
    json_t *j = (json_t *)1;
    snprintf(path, sizeof(path), "%s/absent.json", kb_tmp);
    ck_assert_int_eq(kb_evidence_read(path, &j, err, sizeof(err)), KB_EVIDENCE_UNREADABLE);
    ck_assert_int_eq(errno, ENOENT);
    ck_assert_ptr_null(j);
    kb_tmp_put("new.json", NEWER);
    snprintf(path, sizeof(path), "%s/new.json", kb_tmp);
    ck_assert_int_eq(kb_evidence_read(path, &j, err, sizeof(err)), KB_EVIDENCE_REFUSED);
    ck_assert_ptr_null(j);
    assert_refused(err, "new.json");
    kb_tmp_put("ok.json", "{\"schema_version\": 1, \"verdict\": \"pass\"}\n");
    snprintf(path, sizeof(path), "%s/ok.json", kb_tmp);
    ck_assert_int_eq(kb_evidence_read(path, &j, err, sizeof(err)), 0);
    ck_assert_str_eq(json_string_value(json_object_get(j, "verdict")), "pass");
    json_decref(j);
}
END_TEST

START_TEST(knee_report_refuses_a_newer_sample)
{
    struct kb_knee_doc d;
    char err[KB_PATH_MAX + 512] = "", dir[256];
    kb_tmp_put("knee.json", "{\"schema_version\": 1, \"kind\": \"knee\", \"plan\": {},"
                            " \"steps\": [{\"dir\": \"s1\", \"rate\": 100}]}\n");
    snprintf(dir, sizeof(dir), "%s/s1", kb_tmp);
    ck_assert_int_eq(mkdir(dir, 0755), 0);
    kb_tmp_put("s1/verdict.json", NEWER);
    ck_assert_int_eq(kb_knee_doc_load(kb_tmp, &d, err, sizeof(err)), -1);
    assert_refused(err, "s1/verdict.json");
}
END_TEST

START_TEST(soak_report_refuses_a_newer_run_json)
{
    struct kb_soak_report s = { .run = kb_tmp, .runtime = "x" };
    char err[KB_PATH_MAX + 512] = "";
    size_t complete = 9;
    kb_tmp_put("run.json", NEWER);
    ck_assert_int_eq(kb_report_soak(&s, &complete, err, sizeof(err)), -1);
    assert_refused(err, "run.json");
}
END_TEST

START_TEST(qualify_report_refuses_a_newer_verdict)
{
    char err[KB_PATH_MAX + 512] = "";
    kb_tmp_put("verdict.json", NEWER);
    ck_assert_int_eq(kb_qual_report_write(kb_tmp, NULL, err, sizeof(err)), -1);
    assert_refused(err, "verdict.json");
}
END_TEST

START_TEST(hostclock_summary_leaves_a_newer_point_out)
{
    char dir[256];
    json_t *pts = json_pack("[{s:s}]", "id", "p1"), *j;
    snprintf(dir, sizeof(dir), "%s/points", kb_tmp);
    ck_assert_int_eq(mkdir(dir, 0755), 0);
    snprintf(dir, sizeof(dir), "%s/points/p1", kb_tmp);
    ck_assert_int_eq(mkdir(dir, 0755), 0);
    kb_tmp_put("points/p1/hostclock.json", "{\"schema_version\": 99, \"exposed\": true}\n");
    j = kb_hostclock_summary(kb_tmp, pts);
    ck_assert_int_eq(json_integer_value(json_object_get(j, "points")), 0);
    json_decref(j);
    json_decref(pts);
}
END_TEST

static Suite *suite(void)
{
    Suite *s = suite_create("schema_readers");
    TCase *tc = tcase_create("refused");
    tcase_add_checked_fixture(tc, kb_tmp_setup, kb_tmp_teardown);
    tcase_add_test(tc, evidence_read_tells_absent_from_newer);
    tcase_add_test(tc, knee_report_refuses_a_newer_sample);
    tcase_add_test(tc, soak_report_refuses_a_newer_run_json);
    tcase_add_test(tc, qualify_report_refuses_a_newer_verdict);
    tcase_add_test(tc, hostclock_summary_leaves_a_newer_point_out);
    suite_add_tcase(s, tc);
    return s;
}

int main(void)
{
    return kb_check_run(suite(), "runner-schema-readers");
}
