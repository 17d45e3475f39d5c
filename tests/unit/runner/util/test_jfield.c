/* test_jfield.c -- lenient JSON fields: o[a] and o[a][b], absent, null and non-numbers as
 * 0 for kb_jnum and as "no figure" for kb_jnum_opt, strings with their default. */
#include "runner/util/jfield.h"
#include "tests/lib/kb_check.h"

START_TEST(numbers_and_their_absence)
{
    json_t *o = json_pack("{s:i, s:f, s:n, s:s, s:{s:i}}", "a", 3, "b", 1.5, "nul", "s", "x",
                          "h", "p99", 40);
    double v = -1;
    ck_assert_double_eq(kb_jnum(o, "a", NULL), 3);
    ck_assert_double_eq(kb_jnum(o, "b", NULL), 1.5);
    ck_assert_double_eq(kb_jnum(o, "h", "p99"), 40);
    ck_assert_double_eq(kb_jnum(o, "nul", NULL), 0);
    ck_assert_double_eq(kb_jnum(o, "s", NULL), 0);
    ck_assert_double_eq(kb_jnum(o, "missing", "p99"), 0);
    ck_assert_double_eq(kb_jnum(NULL, "a", NULL), 0);
    ck_assert_int_eq(kb_jnum_opt(o, "h", "p99", &v), 1);
    ck_assert_double_eq(v, 40);
    ck_assert_int_eq(kb_jnum_opt(o, "nul", NULL, &v), 0);
    ck_assert_int_eq(kb_jnum_opt(o, "h", "p50", &v), 0);
    ck_assert_double_eq(v, 40);                       /* untouched */
    json_decref(o);
}
END_TEST

START_TEST(strings_with_a_default)
{
    json_t *o = json_pack("{s:s, s:i}", "k", "v", "n", 1);
    ck_assert_str_eq(kb_jstr(o, "k", "?"), "v");
    ck_assert_str_eq(kb_jstr(o, "n", "?"), "?");
    ck_assert_str_eq(kb_jstr(o, "missing", ""), "");
    ck_assert_ptr_null(kb_jstr(NULL, "k", NULL));
    json_decref(o);
}
END_TEST

static Suite *suite(void)
{
    Suite *s = suite_create("jfield");
    TCase *tc = tcase_create("jfield");
    tcase_add_test(tc, numbers_and_their_absence);
    tcase_add_test(tc, strings_with_a_default);
    suite_add_tcase(s, tc);
    return s;
}

int main(void)
{
    return kb_check_run(suite(), "jfield");
}
