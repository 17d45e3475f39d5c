/* gray-static Date: IMF-fixdate bytes for known instants, and the per-second cache. */
#define _POSIX_C_SOURCE 200809L
#include "gray-static/date.h"
#include "tests/lib/kb_check.h"

#include <string.h>

START_TEST(formats_known_instants)
{
    char buf[GS_DATE_LEN + 1];
    ck_assert_int_eq(gs_date_format(784111777, buf, sizeof(buf)), 0); /* RFC 9110's example */
    ck_assert_str_eq(buf, "Sun, 06 Nov 1994 08:49:37 GMT");
    ck_assert_int_eq(gs_date_format(0, buf, sizeof(buf)), 0);
    ck_assert_str_eq(buf, "Thu, 01 Jan 1970 00:00:00 GMT");
    ck_assert_int_eq(gs_date_format(951782400, buf, sizeof(buf)), 0); /* leap day 2000 */
    ck_assert_str_eq(buf, "Tue, 29 Feb 2000 00:00:00 GMT");
    ck_assert_int_eq(gs_date_format(1798761599, buf, sizeof(buf)), 0);
    ck_assert_str_eq(buf, "Thu, 31 Dec 2026 23:59:59 GMT");
    ck_assert_uint_eq(strlen(buf), GS_DATE_LEN);
}
END_TEST

START_TEST(refuses_a_short_buffer)
{
    char buf[GS_DATE_LEN];
    ck_assert_int_eq(gs_date_format(0, buf, sizeof(buf)), -1);
}
END_TEST

START_TEST(cache_changes_with_the_second_only)
{
    struct gs_date_cache c;
    const char *a, *b;
    gs_date_cache_init(&c);
    a = gs_date_get(&c, 784111777);
    ck_assert_str_eq(a, "Sun, 06 Nov 1994 08:49:37 GMT");
    b = gs_date_get(&c, 784111777);
    ck_assert_ptr_eq(a, b);
    ck_assert_str_eq(b, "Sun, 06 Nov 1994 08:49:37 GMT");
    ck_assert_str_eq(gs_date_get(&c, 784111778), "Sun, 06 Nov 1994 08:49:38 GMT");
    ck_assert_str_eq(gs_date_get(&c, 784111777), "Sun, 06 Nov 1994 08:49:37 GMT");
}
END_TEST

static Suite *suite(void)
{
    Suite *s = suite_create("gray-static date");
    TCase *tc = tcase_create("imf-fixdate");
    tcase_add_test(tc, formats_known_instants);
    tcase_add_test(tc, refuses_a_short_buffer);
    tcase_add_test(tc, cache_changes_with_the_second_only);
    suite_add_tcase(s, tc);
    return s;
}

int main(void)
{
    return kb_check_run(suite(), "gray-static-date");
}
