/* test_loadjson.c -- runner/load/loadjson.c, the one reader of load.json: every field from a
 * file the test writes, older files' absent fields, an empty histogram, and the errors a
 * reader of evidence must name (the file, and the field missing or the JSON broken). */
#define _POSIX_C_SOURCE 200809L
#include "runner/load/loadjson.h"
#include "tests/lib/kb_check.h"
#include "tests/unit/runner/tmpdir.h"

#include <math.h>
#include <stdio.h>
#include <string.h>

#define LAT "{\"count\":990,\"min\":1,\"mean\":2,\"p50\":2,\"p90\":3,\"p99\":4,\"p999\":5,\"max\":6}"

/* A load.json as `kneebench load` writes it, less the fields a reader never needs: every
 * request scheduled either completed or is an error (evidence.h checks it). */
static const char DOC[] =
    "{\"requested_rps\":1000,\"achieved_rps\":990,\"delivery\":0.99,"
    "\"scheduled\":994,\"sent\":994,\"completed\":990,\"timeouts\":3,"
    "\"unfinished_at_drain_end\":2,\"non2xx\":0,"
    "\"client_cpu_seconds\":0.1,\"client_cpu_fraction\":0.1,\"client_cpus\":1,"
    "\"errors\":{\"total\":4,\"connect\":0,\"read\":1,\"write\":0,\"timeout\":3,"
    "\"peer_close\":0,\"malformed\":0},\"mismatches\":{\"total\":0,\"status\":0,"
    "\"content_type\":0,\"body\":0},\"first_error\":\"read: reset\","
    "\"completed_in_interval\":980,\"threads\":2,\"threads_requested\":4,"
    "\"corrected_us\":" LAT ",\"uncorrected_us\":" LAT ",\"lag_us\":" LAT
    ",\"rx_delay_us\":" LAT "}";

static char path[256], err[512];

static void setup(void)
{
    kb_tmp_setup();
    snprintf(path, sizeof(path), "%s/load.json", kb_tmp);
}

START_TEST(reads_every_field)
{
    struct kb_point_load r;
    json_t *raw;
    kb_tmp_put("load.json", DOC);
    ck_assert_int_eq(kb_point_load_read(path, &r, &raw, err, sizeof(err)), 0);
    ck_assert_ptr_nonnull(raw);
    ck_assert_double_eq(r.requested_rps, 1000);
    ck_assert_int_eq(r.completed, 990);
    ck_assert_int_eq(r.errors_total, 4);
    ck_assert_int_eq(r.err_read, 1);
    ck_assert_int_eq(r.unfinished, 2);
    ck_assert_double_eq(r.corrected.p99, 4);
    ck_assert_double_eq(r.rx_delay.p99, 4);
    ck_assert_int_eq(r.threads, 2);
    ck_assert_int_eq(r.threads_requested, 4);
    ck_assert_str_eq(r.first_error, "read: reset");
    /* what the judgements derive from it */
    ck_assert_int_eq(kb_point_load_socket_errors(&r), 2);
    ck_assert_double_eq_tol(kb_point_load_in_time(&r), 980.0 / 994, 1e-12);
    json_decref(raw);
    /* the same document already parsed gives the same figures */
    raw = json_loads(DOC, 0, NULL);
    ck_assert_int_eq(kb_point_load_parse(raw, &r, err, sizeof(err)), 0);
    ck_assert_int_eq(r.completed_in_interval, 980);
    json_decref(raw);
}
END_TEST

/* An older writer's load.json: what it lacks reads as "not measured", never as a passing 0. */
START_TEST(older_file_defaults)
{
    struct kb_point_load r;
    json_t *j = json_loads(DOC, 0, NULL);
    json_object_del(j, "rx_delay_us");
    json_object_del(j, "completed_in_interval");
    json_object_del(j, "threads");
    json_object_del(j, "threads_requested");
    ck_assert_int_eq(json_dump_file(j, path, 0), 0);
    json_decref(j);
    ck_assert_int_eq(kb_point_load_read(path, &r, NULL, err, sizeof(err)), 0);
    ck_assert_double_eq(r.rx_delay.p99, -1);
    ck_assert_int_eq(r.completed_in_interval, -1);
    ck_assert_int_eq(r.threads, 0);
    /* in-time delivery falls back to achieved / requested */
    ck_assert_double_eq_tol(kb_point_load_in_time(&r), 0.99, 1e-12);
    r.requested_rps = 0;
    ck_assert_double_eq(kb_point_load_in_time(&r), 0);
}
END_TEST

/* An empty histogram's figures are null: NAN, never 0; a bounded p99 says so. */
START_TEST(empty_histogram_is_nan)
{
    struct kb_point_load r;
    json_t *j = json_loads(DOC, 0, NULL), *c = json_object_get(j, "corrected_us");
    json_object_set_new(c, "p99", json_null());
    json_object_set_new(c, "bounded", json_integer(7));
    json_object_set_new(c, "is_bound", json_pack("{s:b}", "p99", 1));
    json_object_set_new(j, "rx_delay_us", json_pack("{s:i,s:n,s:n,s:n,s:n,s:n,s:n,s:n}", "count", 0,
                        "min", "mean", "p50", "p90", "p99", "p999", "max"));
    ck_assert_int_eq(json_dump_file(j, path, 0), 0);
    json_decref(j);
    ck_assert_int_eq(kb_point_load_read(path, &r, NULL, err, sizeof(err)), 0);
    ck_assert(isnan(r.corrected.p99));
    ck_assert(isnan(r.rx_delay.p99));
    ck_assert_int_eq(r.bounded, 7);
    ck_assert_int_eq(r.corrected_p99_is_bound, 1);
}
END_TEST

/* A required field missing: the error names the file and the field, and the document is
 * still handed back so that the evidence keeps what the load generator wrote. */
START_TEST(missing_field_named)
{
    struct kb_point_load r;
    json_t *j = json_loads(DOC, 0, NULL), *raw;
    json_object_del(json_object_get(j, "lag_us"), "p99");
    ck_assert_int_eq(json_dump_file(j, path, 0), 0);
    json_decref(j);
    ck_assert_int_eq(kb_point_load_read(path, &r, &raw, err, sizeof(err)), -1);
    ck_assert_ptr_nonnull(strstr(err, path));
    ck_assert_ptr_nonnull(strstr(err, "lag_us.p99 is missing or not a number"));
    ck_assert_ptr_nonnull(raw);
    json_decref(raw);
    kb_tmp_put("load.json", "{\"achieved_rps\": 1}");
    ck_assert_int_eq(kb_point_load_read(path, &r, NULL, err, sizeof(err)), -1);
    ck_assert_ptr_nonnull(strstr(err, "requested_rps is missing"));
    /* a field of the wrong type is as good as missing */
    kb_tmp_put("load.json", "[1, 2]");
    ck_assert_int_eq(kb_point_load_read(path, &r, NULL, err, sizeof(err)), -1);
    ck_assert_ptr_nonnull(strstr(err, "not an object"));
}
END_TEST

START_TEST(malformed_and_absent_files)
{
    struct kb_point_load r;
    json_t *raw = (json_t *)1;
    char want[300];
    kb_tmp_put("load.json", "{\"requested_rps\": 1000,\n \"achieved_rps\": }");
    ck_assert_int_eq(kb_point_load_read(path, &r, &raw, err, sizeof(err)), -1);
    ck_assert_ptr_null(raw);
    snprintf(want, sizeof(want), "%s: not JSON: ", path);
    ck_assert_ptr_nonnull(strstr(err, want));
    ck_assert_ptr_nonnull(strstr(err, "line 2"));
    unlink(path);
    ck_assert_int_eq(kb_point_load_read(path, &r, &raw, err, sizeof(err)), -1);
    ck_assert_ptr_null(raw);
    snprintf(want, sizeof(want), "%s: No such file or directory", path);
    ck_assert_str_eq(err, want);
    ck_assert_int_eq(r.completed, 0);    /* nothing half-filled is left behind */
}
END_TEST

static Suite *suite(void)
{
    Suite *s = suite_create("loadjson");
    TCase *tc = tcase_create("loadjson");
    tcase_add_checked_fixture(tc, setup, kb_tmp_teardown);
    tcase_add_test(tc, reads_every_field);
    tcase_add_test(tc, older_file_defaults);
    tcase_add_test(tc, empty_histogram_is_nan);
    tcase_add_test(tc, missing_field_named);
    tcase_add_test(tc, malformed_and_absent_files);
    suite_add_tcase(s, tc);
    return s;
}

int main(void)
{
    return kb_check_run(suite(), "runner-loadjson");
}
