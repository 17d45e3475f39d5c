/* test_cgfile.c -- the cgroup file reader both sandboxes use, on files in a temporary
 * directory: a first line trimmed, "max" / empty / missing / v1's huge "unlimited" as -1,
 * a plain number as itself, the procs list, and a v2 read-back with and without limits. */
#define _POSIX_C_SOURCE 200809L
#include "runner/cgfile.h"
#include "tests/lib/kb_check.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

static char dir[64];

static void put(const char *file, const char *text)
{
    char path[256];
    FILE *f;
    snprintf(path, sizeof(path), "%s/%s", dir, file);
    f = fopen(path, "w");
    ck_assert_ptr_nonnull(f);
    fputs(text, f);
    fclose(f);
}

static void setup(void)
{
    snprintf(dir, sizeof(dir), "/tmp/kb-cgfile-XXXXXX");
    ck_assert_ptr_nonnull(mkdtemp(dir));
}

static void teardown(void)
{
    char cmd[128];
    snprintf(cmd, sizeof(cmd), "rm -rf '%s'", dir);
    ck_assert_int_eq(system(cmd), 0);
}

START_TEST(line_and_limits)
{
    char buf[64] = "stale";
    put("a", "0-1 \r\nsecond\n");
    ck_assert_int_eq(kb_cgfile_line(dir, "a", buf, sizeof(buf)), 0);
    ck_assert_str_eq(buf, "0-1");
    ck_assert_int_eq(kb_cgfile_line(dir, "missing", buf, sizeof(buf)), -1);
    ck_assert_str_eq(buf, "");
    put("n", "536870912\n");
    put("max", "max\n");
    put("empty", "");
    put("huge", "9223372036854771712\n");
    ck_assert_int_eq(kb_cgfile_limit(dir, "n"), 536870912LL);
    ck_assert_int_eq(kb_cgfile_limit(dir, "max"), -1);
    ck_assert_int_eq(kb_cgfile_limit(dir, "empty"), -1);
    ck_assert_int_eq(kb_cgfile_limit(dir, "huge"), -1);
    ck_assert_int_eq(kb_cgfile_limit(dir, "missing"), -1);
}
END_TEST

START_TEST(procs_bounded)
{
    pid_t p[2];
    put("cgroup.procs", "10\n20\n30\n");
    ck_assert_uint_eq(kb_cgfile_procs(dir, p, 2), 2);
    ck_assert_int_eq(p[0], 10);
    ck_assert_int_eq(p[1], 20);
    ck_assert_uint_eq(kb_cgfile_procs("/nonexistent-kb", p, 2), 0);
}
END_TEST

START_TEST(read_back_v2)
{
    struct kb_limits_applied o;
    memset(&o, 0, sizeof(o));
    put("cpu.max", "100000 100000\n");
    put("cpuset.cpus.effective", "0\n");
    put("cpuset.mems.effective", "0\n");
    put("memory.max", "536870912\n");
    put("memory.swap.max", "0\n");
    put("pids.max", "max\n");
    kb_cgfile_read_back_v2(dir, &o);
    ck_assert_int_eq(o.cpu_quota_us, 100000);
    ck_assert_int_eq(o.cpu_period_us, 100000);
    ck_assert_str_eq(o.cpuset, "0");
    ck_assert_str_eq(o.cpuset_mems, "0");
    ck_assert_int_eq(o.memory_bytes, 536870912LL);
    ck_assert_int_eq(o.memsw_bytes, 0);
    ck_assert_int_eq(o.pids_max, -1);
    put("cpu.max", "max 100000\n");
    kb_cgfile_read_back_v2(dir, &o);
    ck_assert_int_eq(o.cpu_quota_us, -1);
}
END_TEST

static Suite *suite(void)
{
    Suite *s = suite_create("cgfile");
    TCase *tc = tcase_create("files");
    tcase_add_checked_fixture(tc, setup, teardown);
    tcase_add_test(tc, line_and_limits);
    tcase_add_test(tc, procs_bounded);
    tcase_add_test(tc, read_back_v2);
    suite_add_tcase(s, tc);
    return s;
}

int main(void)
{
    return kb_check_run(suite(), "cgfile");
}
