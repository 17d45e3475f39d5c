/* test_xalloc.c -- runner/util/xalloc.c: the harness's allocations succeed as the libc's do,
 * and one the host cannot satisfy stops the program (SIGABRT) instead of returning NULL. */
#include <check.h>
#include <signal.h>
#include <stdint.h>
#include <string.h>

#include "runner/util/xalloc.h"
#include "tests/lib/kb_check.h"

/* Under ASan an impossible size returns NULL as glibc's does, for xalloc to see. */
const char *__asan_default_options(void);
const char *__asan_default_options(void)
{
    return "allocator_may_return_null=1";
}

START_TEST(allocations_that_fit_behave_as_the_libcs)
{
    char *s = kb_xstrdup("kneebench");
    long *z = kb_xcalloc(16, sizeof(long));
    ck_assert_str_eq(s, "kneebench");
    for (int i = 0; i < 16; i++)
        ck_assert_int_eq(z[i], 0);
    z = kb_xrealloc(z, 1024 * sizeof(long));
    z[1023] = 7;
    ck_assert_int_eq(z[1023] + z[15], 7);
    free(s);
    free(z);
    free(kb_xmalloc(0));          /* a zero size is a valid, freeable pointer */
}
END_TEST

START_TEST(an_impossible_size_aborts)
{
    free(kb_xmalloc(SIZE_MAX / 2));
}
END_TEST

START_TEST(an_overflowing_count_aborts)
{
    free(kb_xcalloc(SIZE_MAX / 4, 8));
}
END_TEST

static Suite *suite(void)
{
    Suite *s = suite_create("xalloc");
    TCase *tc = tcase_create("xalloc");
    tcase_add_test(tc, allocations_that_fit_behave_as_the_libcs);
    tcase_add_test_raise_signal(tc, an_impossible_size_aborts, SIGABRT);
    tcase_add_test_raise_signal(tc, an_overflowing_count_aborts, SIGABRT);
    suite_add_tcase(s, tc);
    return s;
}

int main(void)
{
    return kb_check_run(suite(), "runner-xalloc");
}
