/* test_cpulist.c -- the placement syntax: single CPUs, ranges, "N-" to the last online CPU,
 * lists, clamping past the last online CPU, and every malformed form refused. Expectations
 * follow this host's online CPU count. */
#define _GNU_SOURCE
#include "runner/cpulist.h"
#include "tests/lib/kb_check.h"

#include <stdio.h>
#include <unistd.h>

static long last;

static void setup(void)
{
    last = sysconf(_SC_NPROCESSORS_ONLN) - 1;
}

START_TEST(single_and_open_range)
{
    cpu_set_t set;
    char canon[64], want[64];
    ck_assert_int_eq(kb_cpulist_parse("0", &set, canon, sizeof(canon)), 1);
    ck_assert_str_eq(canon, "0");
    ck_assert(CPU_ISSET(0, &set));
    ck_assert_int_eq(kb_cpulist_parse("0-", &set, canon, sizeof(canon)), (int)last + 1);
    snprintf(want, sizeof(want), last ? "0-%ld" : "0", last);
    ck_assert_str_eq(canon, want);
    ck_assert_int_eq(CPU_COUNT(&set), (int)last + 1);
}
END_TEST

START_TEST(clamped_past_the_last_cpu)
{
    cpu_set_t set;
    char canon[64], want[64];
    ck_assert_int_eq(kb_cpulist_parse("0-100000", &set, canon, sizeof(canon)), (int)last + 1);
    snprintf(want, sizeof(want), last ? "0-%ld" : "0", last);
    ck_assert_str_eq(canon, want);
    snprintf(want, sizeof(want), "%ld", last + 1);
    ck_assert_int_eq(kb_cpulist_parse(want, &set, canon, sizeof(canon)), -1);
    if (last >= 1) {
        ck_assert_int_eq(kb_cpulist_parse("1,0", &set, canon, sizeof(canon)), 2);
        ck_assert_str_eq(canon, "1,0");
    }
}
END_TEST

START_TEST(malformed_refused)
{
    static const char *const bad[] = { "", "x", "-1", "0-x", "0;1", "0,,", "1-0" };
    cpu_set_t set;
    char canon[64];
    for (size_t i = 0; i < sizeof(bad) / sizeof(bad[0]); i++)
        ck_assert_msg(kb_cpulist_parse(bad[i], &set, canon, sizeof(canon)) == -1,
                      "'%s' accepted", bad[i]);
}
END_TEST

START_TEST(format_is_canonical)
{
    cpu_set_t set;
    char out[64];
    CPU_ZERO(&set);
    kb_cpulist_format(&set, out, sizeof(out));
    ck_assert_str_eq(out, "");
    CPU_SET(3, &set);
    kb_cpulist_format(&set, out, sizeof(out));
    ck_assert_str_eq(out, "3");
    CPU_SET(0, &set);
    CPU_SET(1, &set);
    CPU_SET(2, &set);
    CPU_SET(5, &set);
    kb_cpulist_format(&set, out, sizeof(out));
    ck_assert_str_eq(out, "0-3,5");
}
END_TEST

static Suite *suite(void)
{
    Suite *s = suite_create("cpulist");
    TCase *tc = tcase_create("parse");
    tcase_add_checked_fixture(tc, setup, NULL);
    tcase_add_test(tc, single_and_open_range);
    tcase_add_test(tc, clamped_past_the_last_cpu);
    tcase_add_test(tc, malformed_refused);
    tcase_add_test(tc, format_is_canonical);
    suite_add_tcase(s, tc);
    return s;
}

int main(void)
{
    return kb_check_run(suite(), "cpulist");
}
