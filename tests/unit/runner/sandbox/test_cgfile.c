/* test_cgfile.c -- the cgroup file reader both sandboxes use, on files in a temporary
 * directory: a first line trimmed, "max" / empty / missing / v1's huge "unlimited" as -1,
 * a plain number as itself, the procs list, and the v2 and v1 read-backs. */
#define _POSIX_C_SOURCE 200809L
#include "runner/sandbox/cgfile.h"
#include "tests/lib/kb_check.h"
#include "tests/unit/runner/tmpdir.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

START_TEST(line_and_limits)
{
    char buf[64] = "stale";
    kb_tmp_put("a", "0-1 \r\nsecond\n");
    ck_assert_int_eq(kb_cgfile_line(kb_tmp, "a", buf, sizeof(buf)), 0);
    ck_assert_str_eq(buf, "0-1");
    ck_assert_int_eq(kb_cgfile_line(kb_tmp, "missing", buf, sizeof(buf)), -1);
    ck_assert_str_eq(buf, "");
    kb_tmp_put("n", "536870912\n");
    kb_tmp_put("max", "max\n");
    kb_tmp_put("empty", "");
    kb_tmp_put("huge", "9223372036854771712\n");
    ck_assert_int_eq(kb_cgfile_limit(kb_tmp, "n"), 536870912LL);
    ck_assert_int_eq(kb_cgfile_limit(kb_tmp, "max"), -1);
    ck_assert_int_eq(kb_cgfile_limit(kb_tmp, "empty"), -1);
    ck_assert_int_eq(kb_cgfile_limit(kb_tmp, "huge"), -1);
    ck_assert_int_eq(kb_cgfile_limit(kb_tmp, "missing"), -1);
}
END_TEST

START_TEST(procs_bounded)
{
    pid_t p[2];
    kb_tmp_put("cgroup.procs", "10\n20\n30\n");
    ck_assert_uint_eq(kb_cgfile_procs(kb_tmp, p, 2), 2);
    ck_assert_int_eq(p[0], 10);
    ck_assert_int_eq(p[1], 20);
    ck_assert_uint_eq(kb_cgfile_procs("/nonexistent-kb", p, 2), 0);
}
END_TEST

START_TEST(read_back_v2)
{
    struct kb_limits_applied o;
    memset(&o, 0, sizeof(o));
    kb_tmp_put("cpu.max", "100000 100000\n");
    kb_tmp_put("cpuset.cpus.effective", "0\n");
    kb_tmp_put("cpuset.mems.effective", "0\n");
    kb_tmp_put("memory.max", "536870912\n");
    kb_tmp_put("memory.swap.max", "0\n");
    kb_tmp_put("pids.max", "max\n");
    kb_cgfile_read_back_v2(kb_tmp, &o);
    ck_assert_int_eq(o.cpu_quota_us, 100000);
    ck_assert_int_eq(o.cpu_period_us, 100000);
    ck_assert_str_eq(o.cpuset, "0");
    ck_assert_str_eq(o.cpuset_mems, "0");
    ck_assert_int_eq(o.memory_bytes, 536870912LL);
    ck_assert_int_eq(o.memsw_bytes, 0);
    ck_assert_int_eq(o.pids_max, -1);
    kb_tmp_put("cpu.max", "max 100000\n");
    kb_cgfile_read_back_v2(kb_tmp, &o);
    ck_assert_int_eq(o.cpu_quota_us, -1);
}
END_TEST

START_TEST(read_back_v1)
{
    const char *dirs[4] = { kb_tmp, kb_tmp, kb_tmp, kb_tmp };
    struct kb_limits_applied o;
    memset(&o, 0, sizeof(o));
    kb_tmp_put("cpu.cfs_quota_us", "100000\n");
    kb_tmp_put("cpu.cfs_period_us", "100000\n");
    kb_tmp_put("cpuset.cpus", "0\n");
    kb_tmp_put("cpuset.mems", "0\n");
    kb_tmp_put("memory.limit_in_bytes", "536870912\n");
    kb_tmp_put("pids.max", "256\n");
    kb_cgfile_read_back_v1(dirs, &o);
    ck_assert_int_eq(o.cpu_quota_us, 100000);
    ck_assert_int_eq(o.cpu_period_us, 100000);
    ck_assert_str_eq(o.cpuset, "0");
    ck_assert_int_eq(o.memory_bytes, 536870912LL);
    ck_assert_int_eq(o.memsw_bytes, -1);       /* no swap accounting: the file is absent */
    ck_assert_int_eq(o.pids_max, 256);
    kb_tmp_put("memory.limit_in_bytes", "9223372036854771712\n");
    kb_cgfile_read_back_v1(dirs, &o);
    ck_assert_int_eq(o.memory_bytes, -1);
}
END_TEST

static Suite *suite(void)
{
    Suite *s = suite_create("cgfile");
    TCase *tc = tcase_create("files");
    tcase_add_checked_fixture(tc, kb_tmp_setup, kb_tmp_teardown);
    tcase_add_test(tc, line_and_limits);
    tcase_add_test(tc, procs_bounded);
    tcase_add_test(tc, read_back_v2);
    tcase_add_test(tc, read_back_v1);
    suite_add_tcase(s, tc);
    return s;
}

int main(void)
{
    return kb_check_run(suite(), "cgfile");
}
