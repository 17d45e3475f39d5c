/* test_schema.c -- schema_version stamped first (a version the object carries kept), and
 * read back: absent is 0, a known one is itself, a newer or malformed one is refused by
 * name. */
#include "runner/util/schema.h"
#include "tests/lib/kb_check.h"

#include <string.h>

START_TEST(stamped_first)
{
    json_t *o = json_pack("{s:s,s:i}", "point", "go-json-1000", "rate", 1000);
    char *s;
    ck_assert_ptr_eq(kb_schema_stamp(o, KB_SCHEMA_EVIDENCE), o);
    s = json_dumps(o, JSON_PRESERVE_ORDER | JSON_COMPACT);
    ck_assert_str_eq(s, "{\"schema_version\":1,\"point\":\"go-json-1000\",\"rate\":1000}");
    free(s);
    /* a file whose format moved on keeps its own version, moved first */
    json_object_set_new(o, "schema_version", json_integer(3));
    json_object_del(o, "point");
    json_object_set_new(o, "point", json_string("x"));
    kb_schema_stamp(o, KB_SCHEMA_EVIDENCE);
    s = json_dumps(o, JSON_PRESERVE_ORDER | JSON_COMPACT);
    ck_assert_str_eq(s, "{\"schema_version\":3,\"rate\":1000,\"point\":\"x\"}");
    free(s);
    json_decref(o);
    ck_assert_ptr_null(kb_schema_stamp(NULL, 1));
}
END_TEST

START_TEST(read_back)
{
    char err[256] = "";
    json_t *o = json_object();
    ck_assert_int_eq(kb_schema_version(o, "plan.json", 1, err, sizeof(err)), 0);
    json_object_set_new(o, "schema_version", json_integer(1));
    ck_assert_int_eq(kb_schema_version(o, "plan.json", 1, err, sizeof(err)), 1);
    json_object_set_new(o, "schema_version", json_integer(2));
    ck_assert_int_eq(kb_schema_version(o, "RUN/plan.json", 1, err, sizeof(err)), -1);
    ck_assert_ptr_nonnull(strstr(err, "RUN/plan.json: schema_version 2, written by a newer"));
    json_object_set_new(o, "schema_version", json_string("1"));
    ck_assert_int_eq(kb_schema_version(o, "x.json", 1, err, sizeof(err)), -1);
    ck_assert_ptr_nonnull(strstr(err, "x.json: schema_version is not a whole number"));
    json_object_set_new(o, "schema_version", json_integer(-1));
    ck_assert_int_eq(kb_schema_version(o, "x.json", 1, err, sizeof(err)), -1);
    json_decref(o);
}
END_TEST

static Suite *suite(void)
{
    Suite *s = suite_create("schema");
    TCase *tc = tcase_create("version");
    tcase_add_test(tc, stamped_first);
    tcase_add_test(tc, read_back);
    suite_add_tcase(s, tc);
    return s;
}

int main(void)
{
    return kb_check_run(suite(), "schema");
}
