/* test_run.c -- the parts of runner/run/run.c that need no server: plan.json written once
 * (its directory made, versioned) and a different plan refused, run.json kept on resume,
 * every evidence file versioned, the contract kept as the run began, the first
 * evidence failure remembered, a point marked DONE only when every file was written (else
 * incomplete.json names the file, also when the fixture's own file failed), a point's
 * leftovers swept before it runs, and the sample files' commit checked (a failed write or
 * rename noted, no temporary file left) or dropped. */
#define _GNU_SOURCE
#include "runner/run/run.h"
#include "runner/util/schema.h"
#include "tests/lib/kb_check.h"
#include "tests/unit/runner/tmpdir.h"

#include <dirent.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/resource.h>
#include <sys/stat.h>
#include <unistd.h>

static char err[2048];

static int exists(const char *file)
{
    char path[256];
    snprintf(path, sizeof(path), "%s/%s", kb_tmp, file);
    return access(path, F_OK) == 0;
}

static void plant_dir(const char *file)
{
    char path[256];
    snprintf(path, sizeof(path), "%s/%s", kb_tmp, file);
    ck_assert_int_eq(mkdir(path, 0755), 0);
}

static json_t *load_tmp(const char *file)
{
    char path[256];
    snprintf(path, sizeof(path), "%s/%s", kb_tmp, file);
    return json_load_file(path, 0, NULL);
}

/* incomplete.json names file, with a reason. */
static void incomplete_names(const char *file)
{
    json_t *inc = load_tmp("incomplete.json");
    ck_assert_ptr_nonnull(inc);
    ck_assert_str_eq(json_string_value(json_object_get(inc, "file")), file);
    ck_assert_str_ne(json_string_value(json_object_get(inc, "reason")), "");
    json_decref(inc);
}

START_TEST(plan_written_once_and_a_different_one_refused)
{
    char dir[128];
    snprintf(dir, sizeof(dir), "%s/run", kb_tmp);
    ck_assert_int_eq(kb_run_plan_file(dir, json_pack("{s:i}", "rate", 100), "plan", err,
                                      sizeof(err)), 0);
    ck_assert(exists("run/plan.json"));
    ck_assert_int_eq(kb_run_plan_file(dir, json_pack("{s:i}", "rate", 100), "plan", err,
                                      sizeof(err)), 0);
    ck_assert_int_eq(kb_run_plan_file(dir, json_pack("{s:i}", "rate", 200), "soak plan", err,
                                      sizeof(err)), -1);
    ck_assert_ptr_nonnull(strstr(err, "holds a different soak plan"));
}
END_TEST

START_TEST(plan_versioned_and_an_unversioned_one_resumed)
{
    char dir[128];
    json_t *back;
    snprintf(dir, sizeof(dir), "%s/run", kb_tmp);
    ck_assert_int_eq(kb_run_plan_file(dir, json_pack("{s:i}", "rate", 100), "plan", err,
                                      sizeof(err)), 0);
    back = load_tmp("run/plan.json");
    ck_assert_int_eq(json_integer_value(json_object_get(back, "schema_version")),
                     KB_SCHEMA_EVIDENCE);
    json_decref(back);
    /* a run begun before files carried versions resumes under the same plan */
    kb_tmp_put("run/plan.json", "{\"rate\": 100}");
    ck_assert_int_eq(kb_run_plan_file(dir, json_pack("{s:i}", "rate", 100), "plan", err,
                                      sizeof(err)), 0);
    /* one a newer kneebench wrote is not guessed at */
    kb_tmp_put("run/plan.json", "{\"schema_version\": 99, \"rate\": 100}");
    ck_assert_int_eq(kb_run_plan_file(dir, json_pack("{s:i}", "rate", 100), "plan", err,
                                      sizeof(err)), -1);
    ck_assert_ptr_nonnull(strstr(err, "schema_version 99, written by a newer kneebench"));
}
END_TEST

START_TEST(evidence_carries_its_version)
{
    struct kb_run_evidence ev = { "", "" };
    json_t *identity = json_pack("{s:s}", "sha256", "ab"), *back;
    ck_assert_int_eq(kb_run_write_json(&ev, kb_tmp, "identity.json", identity), 0);
    ck_assert_ptr_null(json_object_get(identity, "schema_version"));   /* the caller's, kept */
    back = load_tmp("identity.json");
    ck_assert_int_eq(json_integer_value(json_object_get(back, "schema_version")),
                     KB_SCHEMA_EVIDENCE);
    ck_assert_str_eq(json_string_value(json_object_get(back, "sha256")), "ab");
    json_decref(back);
    json_decref(identity);
}
END_TEST

/* The contract a run ran under is kept as it was, whatever the checkout holds later. */
START_TEST(contract_kept_once)
{
    struct kb_run r;
    char hex[KB_SHA256_HEX], want[KB_SHA256_HEX], src[256], path[256];
    const char *first = "{\"version\": 1, \"published\": {\"a\": 1}}\n";
    memset(&r, 0, sizeof(r));
    r.cmd = "curve";
    r.dir = kb_tmp;
    snprintf(src, sizeof(src), "%s/checkout-contract.json", kb_tmp);
    r.c.path = src;
    kb_tmp_put("checkout-contract.json", first);
    ck_assert_int_eq(kb_run_keep_contract(&r, hex, err, sizeof(err)), 0);
    ck_assert_int_eq(kb_sha256_buf(first, strlen(first), want), 0);
    ck_assert_str_eq(hex, want);
    snprintf(path, sizeof(path), "%s/contract.json", kb_tmp);
    ck_assert_int_eq(kb_sha256_file(path, want, err, sizeof(err)), 0);
    ck_assert_str_eq(hex, want);              /* run.json's contract_sha256 is the copy's */
    /* resumed after an edit: the copy stays the first one's */
    kb_tmp_put("checkout-contract.json", "{\"version\": 1, \"published\": {\"a\": 2}}\n");
    ck_assert_int_eq(kb_run_keep_contract(&r, hex, err, sizeof(err)), 0);
    ck_assert_str_ne(hex, want);
    ck_assert_int_eq(kb_sha256_file(path, hex, err, sizeof(err)), 0);
    ck_assert_str_eq(hex, want);
    r.c.path = "/nonexistent/contract.json";
    ck_assert_int_eq(kb_run_keep_contract(&r, hex, err, sizeof(err)), -1);
    ck_assert_ptr_nonnull(strstr(err, "/nonexistent/contract.json"));
}
END_TEST

START_TEST(run_json_kept_on_resume)
{
    json_t *a = json_pack("{s:s}", "who", "first"), *b = json_pack("{s:s}", "who", "second");
    json_t *back;
    ck_assert_int_eq(kb_run_identity_file(kb_tmp, a, 1000, err, sizeof(err)), 0);
    ck_assert_int_eq(kb_run_identity_file(kb_tmp, b, 2000, err, sizeof(err)), 0);
    back = load_tmp("run.json");
    ck_assert_str_eq(json_string_value(json_object_get(back, "who")), "first");
    ck_assert(exists("run-resumed-2000.json"));
    json_decref(back);
    json_decref(a);
    json_decref(b);
}
END_TEST

START_TEST(first_failure_kept)
{
    struct kb_run_evidence ev = { "", "" };
    kb_run_note(&ev, "command.json", "");
    kb_run_note(&ev, "verdict.json", "disk full");
    ck_assert_str_eq(ev.file, "command.json");
    ck_assert_str_eq(ev.reason, "unknown");
}
END_TEST

START_TEST(failed_write_noted_and_no_done)
{
    struct kb_run r;
    struct kb_run_evidence ev = { "", "" };
    json_t *j = json_pack("{s:i}", "a", 1);
    memset(&r, 0, sizeof(r));
    plant_dir("command.json");           /* the rename onto it fails */
    ck_assert_int_eq(kb_run_write_json(&ev, kb_tmp, "command.json", j), -1);
    ck_assert_int_eq(kb_run_write_json(&ev, kb_tmp, "verdict.json", j), 0);
    json_decref(j);
    ck_assert_str_eq(ev.file, "command.json");
    ck_assert_int_eq(kb_run_point_finish(&r, &ev, kb_tmp, json_pack("{s:s}", "point", "p"),
                                         err, sizeof(err)), -1);
    ck_assert(!exists("DONE"));
    ck_assert_int_eq(r.incomplete, 1);
    ck_assert_ptr_nonnull(strstr(err, "command.json"));
    incomplete_names("command.json");
}
END_TEST

START_TEST(clean_point_marked_done)
{
    struct kb_run r;
    struct kb_run_evidence ev = { "", "" };
    json_t *done;
    memset(&r, 0, sizeof(r));
    ck_assert_int_eq(kb_run_point_finish(&r, &ev, kb_tmp, json_pack("{s:s}", "point", "p"),
                                         err, sizeof(err)), 0);
    ck_assert(kb_run_point_done(kb_tmp));
    ck_assert(!exists("incomplete.json"));
    ck_assert_int_eq(r.incomplete, 0);
    done = load_tmp("DONE");
    ck_assert_str_eq(json_string_value(json_object_get(done, "point")), "p");
    json_decref(done);
}
END_TEST

START_TEST(fixture_failure_makes_its_points_incomplete)
{
    struct kb_run r;
    struct kb_run_evidence ev = { "", "" };
    char fixdir[128];
    json_t *pre = json_pack("{s:b}", "ok", 1);
    memset(&r, 0, sizeof(r));
    snprintf(fixdir, sizeof(fixdir), "%s/fixtures/go", kb_tmp);
    kb_run_fixture_begin(&r, fixdir);
    ck_assert_str_eq(r.fixture_ev.file, "");
    plant_dir("fixtures/go/preflight.json");
    ck_assert_int_eq(kb_run_write_json(&r.fixture_ev, fixdir, "preflight.json", pre), -1);
    json_decref(pre);
    ck_assert_int_eq(kb_run_point_finish(&r, &ev, kb_tmp, json_object(), err, sizeof(err)), -1);
    ck_assert(!exists("DONE"));
    incomplete_names("preflight.json");
    kb_run_fixture_begin(&r, fixdir);    /* the next start begins clean */
    ck_assert_str_eq(r.fixture_ev.file, "");
}
END_TEST

START_TEST(point_begin_sweeps_leftovers)
{
    char dir[128];
    snprintf(dir, sizeof(dir), "%s/points/p", kb_tmp);
    ck_assert_int_eq(kb_run_point_begin(dir, err, sizeof(err)), 0);
    kb_tmp_put("points/p/DONE", "{}");
    kb_tmp_put("points/p/incomplete.json", "{}");
    kb_tmp_put("points/p/samples.csv.tmp.4242.0", "partial");
    kb_tmp_put("points/p/load.json", "{}");
    ck_assert(kb_run_point_done(dir));
    ck_assert_int_eq(kb_run_point_begin(dir, err, sizeof(err)), 0);
    ck_assert(!kb_run_point_done(dir));
    ck_assert(!exists("points/p/incomplete.json"));
    ck_assert(!exists("points/p/samples.csv.tmp.4242.0"));
    ck_assert(exists("points/p/load.json"));   /* the load child rewrites it */
}
END_TEST

/* Nothing in dir but the names given: no temporary file left behind. */
static int only(const char *a, const char *b)
{
    DIR *d = opendir(kb_tmp);
    struct dirent *e;
    int ok = 1;
    while (d && (e = readdir(d)))
        if (e->d_name[0] != '.' && strcmp(e->d_name, a) && (!b || strcmp(e->d_name, b)))
            ok = 0;
    if (d)
        closedir(d);
    return ok;
}

START_TEST(csv_renamed_or_noted)
{
    struct kb_run_evidence ev = { "", "" };
    struct kb_afile *f = kb_run_csv_open(&ev, kb_tmp, "samples.csv", "t_s\n");
    ck_assert_ptr_nonnull(f);
    fprintf(f->f, "1.0\n");
    ck_assert(!exists("samples.csv"));          /* the final name only once complete */
    ck_assert_int_eq(kb_run_csv_close(&ev, &f, "samples.csv"), 0);
    ck_assert_ptr_null(f);
    ck_assert(exists("samples.csv") && only("samples.csv", NULL));
    ck_assert_str_eq(ev.file, "");
    ck_assert_int_eq(kb_run_csv_close(&ev, &f, "samples.csv"), 0);   /* none open */
    plant_dir("stats.csv");
    /* a directory at the final name is refused before anything is written (atomicfile.h) */
    f = kb_run_csv_open(&ev, kb_tmp, "stats.csv", "t_s\n");
    ck_assert_ptr_null(f);
    ck_assert_str_eq(ev.file, "stats.csv");
    ck_assert_ptr_nonnull(strstr(ev.reason, "a directory"));
    ck_assert_ptr_nonnull(strstr(ev.reason, "stats.csv"));
    ck_assert(only("samples.csv", "stats.csv"));   /* its temporary file removed */
}
END_TEST

START_TEST(csv_close_failure_noted)
{
    /* a write that fails mid-series (here the file size limit, as a full disk would):
     * noted, no final name, no temporary file */
    struct kb_run_evidence ev = { "", "" };
    struct rlimit small = { 4096, 4096 }, was;
    char big[8192];
    struct kb_afile *f = kb_run_csv_open(&ev, kb_tmp, "samples.csv", "t_s\n");
    ck_assert_ptr_nonnull(f);
    memset(big, 'x', sizeof(big) - 1);
    big[sizeof(big) - 1] = '\0';
    signal(SIGXFSZ, SIG_IGN);
    ck_assert_int_eq(getrlimit(RLIMIT_FSIZE, &was), 0);
    ck_assert_int_eq(setrlimit(RLIMIT_FSIZE, &small), 0);
    fputs(big, f->f);
    fputs(big, f->f);
    ck_assert_int_eq(kb_run_csv_close(&ev, &f, "samples.csv"), -1);
    setrlimit(RLIMIT_FSIZE, &was);
    ck_assert_str_eq(ev.file, "samples.csv");
    ck_assert(!exists("samples.csv") && only("none", NULL));
}
END_TEST

START_TEST(csv_abort_leaves_nothing)
{
    struct kb_run_evidence ev = { "", "" };
    struct kb_afile *f = kb_run_csv_open(&ev, kb_tmp, "samples.csv", "t_s\n");
    ck_assert_ptr_nonnull(f);
    fprintf(f->f, "1.0\n");
    kb_run_csv_abort(&f);
    ck_assert_ptr_null(f);
    kb_run_csv_abort(&f);                         /* none open */
    ck_assert(only("none", NULL));
    ck_assert_str_eq(ev.file, "");
}
END_TEST

static Suite *suite(void)
{
    Suite *s = suite_create("run");
    TCase *tc = tcase_create("no server");
    tcase_add_checked_fixture(tc, kb_tmp_setup, kb_tmp_teardown);
    tcase_add_test(tc, plan_written_once_and_a_different_one_refused);
    tcase_add_test(tc, plan_versioned_and_an_unversioned_one_resumed);
    tcase_add_test(tc, evidence_carries_its_version);
    tcase_add_test(tc, contract_kept_once);
    tcase_add_test(tc, run_json_kept_on_resume);
    tcase_add_test(tc, first_failure_kept);
    tcase_add_test(tc, failed_write_noted_and_no_done);
    tcase_add_test(tc, clean_point_marked_done);
    tcase_add_test(tc, fixture_failure_makes_its_points_incomplete);
    tcase_add_test(tc, point_begin_sweeps_leftovers);
    tcase_add_test(tc, csv_renamed_or_noted);
    tcase_add_test(tc, csv_close_failure_noted);
    tcase_add_test(tc, csv_abort_leaves_nothing);
    suite_add_tcase(s, tc);
    return s;
}

int main(void)
{
    return kb_check_run(suite(), "run");
}
