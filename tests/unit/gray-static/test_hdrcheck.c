/* gray-static hdrcheck: RFC 9110 token field names (the socket-level cases, NUL in a value and
 * whitespace before the colon, are in test_server.c). */
#define _POSIX_C_SOURCE 200809L
#include "gray-static/hdrcheck.h"
#include "tests/lib/kb_check.h"

#include <string.h>

static int ok(const char *s)
{
    return gs_field_name_ok(s, strlen(s));
}

START_TEST(tokens_pass)
{
    ck_assert(ok("Host"));
    ck_assert(ok("content-length"));
    ck_assert(ok("X-Request-ID"));
    ck_assert(ok("a"));
    ck_assert(ok("!#$%&'*+-.^_`|~09azAZ"));
}
END_TEST

START_TEST(non_tokens_fail)
{
    static const char *const bad[] = { "", "X-Spaced ", " X", "X\tY", "X:Y", "X(Y)", "X\"", "X/Y",
                                       "X@", "X[", "X{", "X=", "X,", "X;", "X?", "X\\", "\x7f",
                                       "\xc3\xa9" };
    for (size_t i = 0; i < sizeof(bad) / sizeof(bad[0]); i++)
        ck_assert_msg(!ok(bad[i]), "accepted [%s]", bad[i]);
    ck_assert(!gs_field_name_ok("X\0Y", 3)); /* a NUL inside the counted length */
    ck_assert(gs_field_name_ok("XY\0", 2));
}
END_TEST

static Suite *suite(void)
{
    Suite *s = suite_create("gray-static hdrcheck");
    TCase *tc = tcase_create("field names");
    tcase_add_test(tc, tokens_pass);
    tcase_add_test(tc, non_tokens_fail);
    suite_add_tcase(s, tc);
    return s;
}

int main(void)
{
    return kb_check_run(suite(), "gray-static-hdrcheck");
}
