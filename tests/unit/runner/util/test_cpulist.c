/* test_cpulist.c -- the one CPU list parser: single CPUs, ranges, "N-", lists; every
 * malformed form refused with a message that names the list; and its two meanings, kept to
 * the online CPUs and kept to this process's affinity. Expectations follow this host's
 * online CPU count and affinity. */
#define _GNU_SOURCE
#include "runner/util/cpulist.h"
#include "tests/lib/kb_check.h"

#include <stdio.h>
#include <string.h>
#include <unistd.h>

static long last;

static void setup(void)
{
    last = sysconf(_SC_NPROCESSORS_ONLN) - 1;
}

START_TEST(raw_syntax)
{
    cpu_set_t set;
    char err[256];
    ck_assert_int_eq(kb_cpulist_parse_raw("0", &set, err, sizeof(err)), 1);
    ck_assert(CPU_ISSET(0, &set));
    ck_assert_int_eq(kb_cpulist_parse_raw("1-3,7", &set, err, sizeof(err)), 4);
    ck_assert(!CPU_ISSET(0, &set) && CPU_ISSET(1, &set) && CPU_ISSET(3, &set));
    ck_assert(CPU_ISSET(7, &set) && !CPU_ISSET(4, &set));
    /* open and overlong ranges end at the last CPU a set holds: the variants cut further */
    ck_assert_int_eq(kb_cpulist_parse_raw("1000-", &set, err, sizeof(err)), CPU_SETSIZE - 1000);
    ck_assert_int_eq(kb_cpulist_parse_raw("1020-99999999999999999999", &set, err, sizeof(err)),
                     CPU_SETSIZE - 1020);
    /* a CPU named twice counts once */
    ck_assert_int_eq(kb_cpulist_parse_raw("2,2,1-2", &set, err, sizeof(err)), 2);
}
END_TEST

START_TEST(malformed_refused_with_a_reason)
{
    static const char *const bad[] = { "", "x", "-1", "0-x", "0;1", "0,,", "0,", ",0", "1-0",
                                       " 1", "1 ", "+1", "0--1", "0-+1", "1-2-3", "4096",
                                       "0x1", "99999999999999999999", "0-1,a" };
    cpu_set_t set;
    char err[256];
    for (size_t i = 0; i < sizeof(bad) / sizeof(bad[0]); i++) {
        err[0] = '\0';
        ck_assert_msg(kb_cpulist_parse_raw(bad[i], &set, err, sizeof(err)) == -1,
                      "'%s' accepted", bad[i]);
        ck_assert_msg(err[0] != '\0', "'%s' refused without a reason", bad[i]);
        ck_assert_msg(bad[i][0] == '\0' || strstr(err, bad[i]), "'%s': %s", bad[i], err);
    }
    ck_assert_int_eq(kb_cpulist_parse_raw(NULL, &set, err, sizeof(err)), -1);
    ck_assert_int_eq(kb_cpulist_parse_raw("1-0", &set, err, sizeof(err)), -1);
    ck_assert_ptr_nonnull(strstr(err, "backwards"));
    /* a short error buffer truncates, never overruns */
    ck_assert_int_eq(kb_cpulist_parse_raw("0;1", &set, err, 8), -1);
    ck_assert_uint_eq(strlen(err), 7);
}
END_TEST

START_TEST(online_single_and_open_range)
{
    cpu_set_t set;
    char canon[64], want[64], err[256];
    ck_assert_int_eq(kb_cpulist_parse_online("0", &set, canon, sizeof(canon), err, sizeof(err)), 1);
    ck_assert_str_eq(canon, "0");
    ck_assert(CPU_ISSET(0, &set));
    ck_assert_int_eq(kb_cpulist_parse_online("0-", &set, canon, sizeof(canon), err, sizeof(err)),
                     (int)last + 1);
    snprintf(want, sizeof(want), last ? "0-%ld" : "0", last);
    ck_assert_str_eq(canon, want);
    ck_assert_int_eq(CPU_COUNT(&set), (int)last + 1);
    ck_assert_int_eq(kb_cpulist_parse_online("0", &set, NULL, 0, err, sizeof(err)), 1);
}
END_TEST

START_TEST(online_clamped_past_the_last_cpu)
{
    cpu_set_t set;
    char canon[64], want[64], err[256];
    ck_assert_int_eq(kb_cpulist_parse_online("0-100000", &set, canon, sizeof(canon), err,
                                             sizeof(err)), (int)last + 1);
    snprintf(want, sizeof(want), last ? "0-%ld" : "0", last);
    ck_assert_str_eq(canon, want);
    snprintf(want, sizeof(want), "%ld", last + 1);
    ck_assert_int_eq(kb_cpulist_parse_online(want, &set, canon, sizeof(canon), err, sizeof(err)),
                     -1);
    ck_assert_ptr_nonnull(strstr(err, "no online CPU"));
    ck_assert_str_eq(canon, "");
    if (last >= 1) {
        /* the canonical form is ascending: the same set reads the same in plan.json */
        ck_assert_int_eq(kb_cpulist_parse_online("1,0", &set, canon, sizeof(canon), err,
                                                 sizeof(err)), 2);
        ck_assert_str_eq(canon, "0-1");
    }
    ck_assert_int_eq(kb_cpulist_parse_online("0;1", &set, canon, sizeof(canon), err,
                                             sizeof(err)), -1);
    ck_assert_ptr_nonnull(strstr(err, "'0;1'"));
}
END_TEST

START_TEST(allowed_is_the_affinity)
{
    cpu_set_t set, mine;
    char err[256], list[16];
    int first = -1;
    ck_assert_int_eq(sched_getaffinity(0, sizeof(mine), &mine), 0);
    ck_assert_int_eq(kb_cpulist_parse_allowed("0-", &set, err, sizeof(err)), CPU_COUNT(&mine));
    ck_assert(CPU_EQUAL(&set, &mine));
    for (int c = 0; c < CPU_SETSIZE && first < 0; c++)
        if (CPU_ISSET(c, &mine))
            first = c;
    snprintf(list, sizeof(list), "%d", first);
    ck_assert_int_eq(kb_cpulist_parse_allowed(list, &set, err, sizeof(err)), 1);
    /* past every online CPU, yet within a set: parsed, then nothing is left */
    ck_assert_int_eq(kb_cpulist_parse_allowed("1023", &set, err, sizeof(err)), -1);
    ck_assert_ptr_nonnull(strstr(err, "may run on"));
    ck_assert_int_eq(kb_cpulist_parse_allowed("4096", &set, err, sizeof(err)), -1);
    ck_assert_ptr_nonnull(strstr(err, "past the last"));
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
    tcase_add_test(tc, raw_syntax);
    tcase_add_test(tc, malformed_refused_with_a_reason);
    tcase_add_test(tc, online_single_and_open_range);
    tcase_add_test(tc, online_clamped_past_the_last_cpu);
    tcase_add_test(tc, allowed_is_the_affinity);
    tcase_add_test(tc, format_is_canonical);
    suite_add_tcase(s, tc);
    return s;
}

int main(void)
{
    return kb_check_run(suite(), "cpulist");
}
