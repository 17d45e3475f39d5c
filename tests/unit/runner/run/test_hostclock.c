/* test_hostclock.c -- CPU clocks and governors read from a fake sysfs tree and cpuinfo:
 * cpufreq exposed (kHz to MHz, min-max over samples, governor at start and end), not
 * exposed (the cpuinfo clock, governor null, the virtual machine flag), a governor that
 * changes between two samples, and the run's summary over points' hostclock.json. */
#define _GNU_SOURCE
#include "runner/run/hostclock.h"
#include "runner/util/evidence.h"
#include "runner/util/paths.h"
#include "tests/unit/runner/tmpdir.h"

#include <math.h>
#include <string.h>
#include <sys/stat.h>

static char sysfs[128], cpuinfo[128];

static void setup(void)
{
    kb_tmp_setup();
    snprintf(sysfs, sizeof(sysfs), "%s/cpu", kb_tmp);
    snprintf(cpuinfo, sizeof(cpuinfo), "%s/cpuinfo", kb_tmp);
    ck_assert_int_eq(mkdir(sysfs, 0755), 0);
    kb_tmp_put("cpuinfo", "processor\t: 0\ncpu MHz\t\t: 2596.122\nflags\t\t: fpu hypervisor lm\n\n"
                          "processor\t: 1\ncpu MHz\t\t: 2400.500\nflags\t\t: fpu hypervisor lm\n\n");
}

/* cpu0's cpufreq with this clock (kHz) and governor. */
static void cpufreq(const char *khz, const char *governor)
{
    kb_tmp_put("cpu/cpu0/cpufreq/scaling_cur_freq", khz);
    kb_tmp_put("cpu/cpu0/cpufreq/scaling_governor", governor);
}

static void make_cpufreq_dir(void)
{
    ck_assert_int_eq(mkdir(kb_path((char[256]){ 0 }, 256, sysfs, "cpu0"), 0755), 0);
    ck_assert_int_eq(mkdir(kb_path((char[256]){ 0 }, 256, sysfs, "cpu0/cpufreq"), 0755), 0);
}

START_TEST(exposed)
{
    struct kb_hostclock h;
    json_t *j, *c;
    make_cpufreq_dir();
    cpufreq("3000000\n", "performance\n");
    ck_assert_int_eq(kb_hostclock_init(&h, sysfs, cpuinfo, "0", "0"), 0);
    ck_assert_uint_eq(h.n, 2);
    kb_hostclock_sample(&h);
    cpufreq("2200000\n", "performance\n");
    kb_hostclock_sample(&h);
    ck_assert(kb_hostclock_exposed(&h));
    ck_assert(!kb_hostclock_governor_changed(&h));
    ck_assert_double_eq_tol(h.c[0].mhz_min, 2200.0, 1e-9);
    ck_assert_double_eq_tol(h.c[0].mhz_max, 3000.0, 1e-9);
    j = kb_hostclock_json(&h);
    ck_assert(json_is_true(json_object_get(j, "exposed")));
    ck_assert_int_eq(json_integer_value(json_object_get(j, "samples")), 2);
    c = json_array_get(json_object_get(j, "cpus"), 0);
    ck_assert_str_eq(json_string_value(json_object_get(c, "role")), "server");
    ck_assert_str_eq(json_string_value(json_object_get(c, "source")), "cpufreq");
    ck_assert_str_eq(json_string_value(json_object_get(c, "governor_start")), "performance");
    ck_assert_str_eq(json_string_value(json_object_get(c, "governor_end")), "performance");
    json_decref(j);
}
END_TEST

START_TEST(not_exposed)
{
    struct kb_hostclock h;
    json_t *j, *c;
    ck_assert_int_eq(kb_hostclock_init(&h, sysfs, cpuinfo, "0", "0"), 0);
    kb_hostclock_sample(&h);
    ck_assert(!kb_hostclock_exposed(&h));
    ck_assert(h.vm);
    j = kb_hostclock_json(&h);
    ck_assert(json_is_false(json_object_get(j, "exposed")));
    ck_assert(json_is_true(json_object_get(j, "virtual_machine")));
    c = json_array_get(json_object_get(j, "cpus"), 1);
    ck_assert_str_eq(json_string_value(json_object_get(c, "role")), "client");
    ck_assert(json_is_false(json_object_get(c, "exposed")));
    ck_assert(json_is_null(json_object_get(c, "governor_start")));
    ck_assert(json_is_null(json_object_get(c, "governor_end")));
    ck_assert_str_eq(json_string_value(json_object_get(c, "source")), "cpuinfo");
    ck_assert_double_eq_tol(json_number_value(json_object_get(c, "mhz_max")), 2596.122, 1e-9);
    json_decref(j);
}
END_TEST

START_TEST(nothing_at_all)
{
    struct kb_hostclock h;
    json_t *j, *c;
    snprintf(cpuinfo, sizeof(cpuinfo), "%s/absent", kb_tmp);
    ck_assert_int_eq(kb_hostclock_init(&h, sysfs, cpuinfo, NULL, "0"), 0);
    ck_assert_uint_eq(h.n, 1);
    kb_hostclock_sample(&h);
    j = kb_hostclock_json(&h);
    ck_assert(json_is_true(json_object_get(j, "server_remote")));
    c = json_array_get(json_object_get(j, "cpus"), 0);
    ck_assert(json_is_null(json_object_get(c, "source")));
    ck_assert(json_is_null(json_object_get(c, "mhz_min")));
    ck_assert(json_is_null(json_object_get(c, "mhz_max")));
    json_decref(j);
}
END_TEST

START_TEST(governor_changes)
{
    struct kb_hostclock h;
    json_t *j, *pts;
    char dir[256];
    make_cpufreq_dir();
    cpufreq("3000000\n", "performance\n");
    ck_assert_int_eq(kb_hostclock_init(&h, sysfs, cpuinfo, "0", "0"), 0);
    kb_hostclock_sample(&h);
    cpufreq("1200000\n", "powersave\n");
    kb_hostclock_sample(&h);
    ck_assert(kb_hostclock_governor_changed(&h));
    ck_assert_str_eq(h.c[0].gov_start, "performance");
    ck_assert_str_eq(h.c[0].gov_end, "powersave");
    /* the run's summary flags it */
    snprintf(dir, sizeof(dir), "%s/points/p1", kb_tmp);
    ck_assert_int_eq(kb_mkdirs(dir, (char[64]){ 0 }, 64), 0);
    j = kb_hostclock_json(&h);
    ck_assert(json_is_true(json_object_get(j, "governor_changed")));
    ck_assert_int_eq(kb_write_json_atomic(kb_path((char[300]){ 0 }, 300, dir, "hostclock.json"),
                                          j, (char[64]){ 0 }, 64), 0);
    json_decref(j);
    pts = json_pack("[{s:s},{s:s}]", "id", "p1", "id", "p2-never-ran");
    j = kb_hostclock_summary(kb_tmp, pts);
    ck_assert_int_eq(json_integer_value(json_object_get(j, "points")), 1);
    ck_assert(json_is_true(json_object_get(j, "governor_changed")));
    ck_assert(json_is_true(json_object_get(j, "exposed")));
    ck_assert_double_eq_tol(json_number_value(json_object_get(j, "server_mhz_min")), 1200.0, 1e-9);
    ck_assert_ptr_nonnull(strstr(json_string_value(json_object_get(j, "line")), "WARNING"));
    json_decref(j);
    json_decref(pts);
}
END_TEST

START_TEST(summary_not_exposed_and_empty)
{
    struct kb_hostclock h;
    json_t *pts = json_pack("[{s:s}]", "id", "p1"), *j;
    char dir[256];
    j = kb_hostclock_summary(kb_tmp, pts);
    ck_assert_int_eq(json_integer_value(json_object_get(j, "points")), 0);
    ck_assert_ptr_nonnull(strstr(json_string_value(json_object_get(j, "line")), "not recorded"));
    json_decref(j);
    snprintf(dir, sizeof(dir), "%s/points/p1", kb_tmp);
    ck_assert_int_eq(kb_mkdirs(dir, (char[64]){ 0 }, 64), 0);
    ck_assert_int_eq(kb_hostclock_init(&h, sysfs, cpuinfo, "0", "0"), 0);
    ck_assert_int_eq(kb_hostclock_write_point(&h, "0", "0", dir, (char[64]){ 0 }, 64), 0);
    ck_assert_uint_eq(h.samples, 1);
    j = kb_hostclock_summary(kb_tmp, pts);
    ck_assert(json_is_false(json_object_get(j, "exposed")));
    ck_assert(json_is_false(json_object_get(j, "governor_changed")));
    ck_assert_ptr_nonnull(strstr(json_string_value(json_object_get(j, "line")), "not exposed"));
    ck_assert_ptr_null(strstr(json_string_value(json_object_get(j, "line")), "WARNING"));
    json_decref(j);
    json_decref(pts);
}
END_TEST

static Suite *suite(void)
{
    Suite *s = suite_create("hostclock");
    TCase *tc = tcase_create("read");
    tcase_add_checked_fixture(tc, setup, kb_tmp_teardown);
    tcase_add_test(tc, exposed);
    tcase_add_test(tc, not_exposed);
    tcase_add_test(tc, nothing_at_all);
    tcase_add_test(tc, governor_changes);
    tcase_add_test(tc, summary_not_exposed_and_empty);
    suite_add_tcase(s, tc);
    return s;
}

int main(void)
{
    return kb_check_run(suite(), "hostclock");
}
