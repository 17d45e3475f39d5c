/* test_steal.c -- /proc/stat's steal column read for a set of CPUs from a fake file, a role's
 * series (per interval, largest, whole point), and whether the host's theft could have
 * decided a verdict. */
#define _GNU_SOURCE
#include "runner/run/steal.h"
#include "tests/lib/kb_check.h"

#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

static char path[64];

static void setup(void)
{
    int fd;
    snprintf(path, sizeof(path), "/tmp/kb-steal-XXXXXX");
    ck_assert_int_ge(fd = mkstemp(path), 0);
    close(fd);
}

static void teardown(void)
{
    unlink(path);
}

/* cpu0 and cpu1 with the given steal ticks, each with `total` ticks in all. */
static void stat_file(unsigned long long total, unsigned long long steal0,
                      unsigned long long steal1)
{
    FILE *f = fopen(path, "w");
    ck_assert_ptr_nonnull(f);
    fprintf(f, "cpu  1 2 3 4 5 6 7 8 0 0\n");
    fprintf(f, "cpu0 %llu 0 0 0 0 0 0 %llu 0 0\n", total - steal0, steal0);
    fprintf(f, "cpu1 %llu 0 0 0 0 0 0 %llu 0 0\nintr 5\n", total - steal1, steal1);
    fclose(f);
}

START_TEST(reads_a_set_and_its_fractions)
{
    struct kb_steal_mark a, b;
    cpu_set_t set;
    CPU_ZERO(&set);
    CPU_SET(1, &set);
    stat_file(1000, 10, 20);
    ck_assert_int_eq(kb_steal_read(path, &set, &a), 0);
    ck_assert(a.steal == 20 && a.total == 1000);
    stat_file(1100, 10, 45);
    ck_assert_int_eq(kb_steal_read(path, &set, &b), 0);
    ck_assert_double_eq_tol(kb_steal_fraction(&a, &b), 0.25, 1e-12);
    ck_assert(isnan(kb_steal_fraction(&b, &b)));       /* no time passed */
    CPU_SET(7, &set);                                  /* a CPU the file lacks */
    ck_assert_int_eq(kb_steal_read(path, &set, &b), -1);
    ck_assert(isnan(kb_steal_fraction(&a, &b)));
    ck_assert_int_eq(kb_steal_read("/nonexistent/stat", &set, &b), -1);
}
END_TEST

START_TEST(a_series_keeps_its_largest_stretch)
{
    struct kb_steal_track srv, remote;
    kb_steal_track_init(&srv, "0");
    kb_steal_track_init(&remote, NULL);
    ck_assert(srv.on && !remote.on);
    stat_file(1000, 0, 0);
    kb_steal_track_sample(&srv, path, 10.0);
    ck_assert(isnan(srv.last_fraction) && isnan(kb_steal_track_mean(&srv)));
    stat_file(1100, 5, 0);                  /* 5 % in the first second */
    kb_steal_track_sample(&srv, path, 11.0);
    stat_file(1200, 35, 0);                 /* 30 % in the next two */
    kb_steal_track_sample(&srv, path, 13.0);
    stat_file(1300, 35, 0);
    kb_steal_track_sample(&srv, path, 14.0);
    kb_steal_track_sample(&remote, path, 14.0);
    ck_assert_double_eq_tol(srv.last_fraction, 0.0, 1e-12);
    ck_assert_double_eq_tol(srv.max_fraction, 0.30, 1e-12);
    ck_assert_double_eq_tol(srv.max_stolen_s, 0.60, 1e-12);
    ck_assert_double_eq_tol(kb_steal_track_mean(&srv), 35.0 / 300.0, 1e-12);
    ck_assert(isnan(remote.max_fraction));
    json_t *j = kb_steal_json(&srv, &remote, 0, "x");
    ck_assert(json_is_null(json_object_get(j, "client_cpus")));
    ck_assert_double_eq_tol(json_real_value(json_object_get(json_object_get(j, "server_cpus"),
                                                            "steal_max_fraction")), 0.30, 1e-12);
    json_decref(j);
}
END_TEST

START_TEST(theft_that_explains_a_verdict)
{
    const struct kb_criteria c = { .min_delivery = 0.95, .max_p99_us = 100000 };
    struct kb_point_load r;
    struct kb_steal_track srv;
    char why[256];
    memset(&r, 0, sizeof(r));
    r.delivery = 1.0;
    r.corrected.p99 = 130000;
    kb_steal_track_init(&srv, "0");
    /* nothing read: not known, never "it could" */
    ck_assert_int_eq(kb_steal_could_decide(&r, &c, &srv, why, sizeof(why)), 0);
    ck_assert_ptr_nonnull(strstr(why, "not known"));
    stat_file(1000, 0, 0);
    kb_steal_track_sample(&srv, path, 0.0);
    stat_file(1100, 4, 0);                  /* 40 ms stolen in a second */
    kb_steal_track_sample(&srv, path, 1.0);
    ck_assert_int_eq(kb_steal_could_decide(&r, &c, &srv, why, sizeof(why)), 1);
    ck_assert_ptr_nonnull(strstr(why, "enough to explain the verdict"));
    r.corrected.p99 = 140000;               /* exactly 40 ms past: still not under (strict) */
    ck_assert_int_eq(kb_steal_could_decide(&r, &c, &srv, why, sizeof(why)), 0);
    ck_assert_ptr_nonnull(strstr(why, "not enough"));
    r.corrected.p99 = 5000;                 /* controlled: theft only ever worsens a point */
    r.delivery = 0.93;                      /* ...but 4 % of the CPU can explain 2 % short */
    ck_assert_int_eq(kb_steal_could_decide(&r, &c, &srv, why, sizeof(why)), 1);
    r.delivery = 0.90;
    ck_assert_int_eq(kb_steal_could_decide(&r, &c, &srv, why, sizeof(why)), 0);
}
END_TEST

static Suite *suite(void)
{
    Suite *s = suite_create("steal");
    TCase *tc = tcase_create("procstat");
    tcase_add_checked_fixture(tc, setup, teardown);
    tcase_add_test(tc, reads_a_set_and_its_fractions);
    tcase_add_test(tc, a_series_keeps_its_largest_stretch);
    tcase_add_test(tc, theft_that_explains_a_verdict);
    suite_add_tcase(s, tc);
    return s;
}

int main(void)
{
    return kb_check_run(suite(), "steal");
}
