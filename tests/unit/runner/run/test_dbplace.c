/* test_dbplace.c -- the server, client and db CPU roles: the default takes what no role has,
 * else the server's (never the SCHED_FIFO client's); a declared overlap is refused on a host
 * with a CPU per role and named and recorded on one with fewer; the record says which roles
 * share which CPUs. Hosts of any size are given as the online count, so this runs anywhere. */
#define _GNU_SOURCE
#include "runner/run/dbplace.h"
#include "runner/util/cpulist.h"
#include "tests/lib/kb_check.h"

#include <string.h>

static struct kb_dbplace D;
static char err[512];

static cpu_set_t set(const char *list)
{
    cpu_set_t s;
    char why[256];
    ck_assert_int_gt(kb_cpulist_parse_raw(list, &s, why, sizeof(why)), 0);
    return s;
}

static void teardown(void)
{
    kb_dbplace_free(&D);
}

START_TEST(default_takes_the_cpus_left_over)
{
    cpu_set_t s = set("2-3"), c = set("4-7");
    ck_assert_int_eq(kb_dbplace_check(&D, &s, &c, NULL, 8, err, sizeof(err)), 0);
    ck_assert_str_eq(D.cpus, "0-1");
    ck_assert_int_eq(D.declared, 0);
    ck_assert_str_eq(D.shared, "");
    ck_assert_str_eq(D.note, "");
    ck_assert_uint_eq(json_array_size(D.shares), 0);
}
END_TEST

/* Two CPUs: none left over, so PostgreSQL shares the server's CPU, not the client's. */
START_TEST(default_on_two_cpus_shares_the_server_s)
{
    cpu_set_t s = set("0"), c = set("1");
    json_t *j, *sh;
    ck_assert_int_eq(kb_dbplace_check(&D, &s, &c, NULL, 2, err, sizeof(err)), 0);
    ck_assert_str_eq(D.cpus, "0");
    ck_assert_str_eq(D.shared, "server+db share CPU 0");
    ck_assert_ptr_nonnull(strstr(D.note, "2 online CPUs, fewer than one per role"));
    j = kb_dbplace_json(&D);
    ck_assert_str_eq(json_string_value(json_object_get(j, "db_cpus")), "0");
    ck_assert(json_is_false(json_object_get(json_object_get(j, "placement"), "disjoint")));
    sh = json_array_get(json_object_get(json_object_get(j, "placement"), "shared"), 0);
    ck_assert_str_eq(json_string_value(json_array_get(json_object_get(sh, "roles"), 1)), "db");
    ck_assert_str_eq(json_string_value(json_object_get(sh, "cpus")), "0");
    json_decref(j);
}
END_TEST

START_TEST(declared_overlap_refused_where_a_cpu_per_role_exists)
{
    cpu_set_t s = set("0"), c = set("2-3"), db = set("1-2");
    ck_assert_int_eq(kb_dbplace_check(&D, &s, &c, &db, 4, err, sizeof(err)), -1);
    ck_assert_ptr_nonnull(strstr(err, "must be disjoint"));
    ck_assert_ptr_nonnull(strstr(err, "client+db share CPU 2"));
    kb_dbplace_free(&D);
    db = set("1");
    ck_assert_int_eq(kb_dbplace_check(&D, &s, &c, &db, 4, err, sizeof(err)), 0);
    ck_assert_str_eq(D.shared, "");
}
END_TEST

/* Too few CPUs: a declared overlap is named and recorded, never refused. */
START_TEST(declared_overlap_recorded_on_a_small_host)
{
    cpu_set_t s = set("0"), c = set("1"), db = set("0-1");
    ck_assert_int_eq(kb_dbplace_check(&D, &s, &c, &db, 2, err, sizeof(err)), 0);
    ck_assert_int_eq(D.declared, 1);
    ck_assert_str_eq(D.shared, "server+db share CPU 0; client+db share CPU 1");
    ck_assert_uint_eq(json_array_size(D.shares), 2);
}
END_TEST

/* More roles than CPUs on a big host only by default (client "1-" takes the rest): said. */
START_TEST(default_overlap_on_a_big_host_says_how_to_separate)
{
    cpu_set_t s = set("0"), c = set("1-7");
    ck_assert_int_eq(kb_dbplace_check(&D, &s, &c, NULL, 8, err, sizeof(err)), 0);
    ck_assert_str_eq(D.cpus, "0");
    ck_assert_ptr_nonnull(strstr(D.note, "--db-cpus"));
}
END_TEST

START_TEST(bad_list_named)
{
    ck_assert_int_eq(kb_dbplace_resolve(&D, "0-x", "0", "1-", err, sizeof(err)), -1);
    ck_assert_ptr_nonnull(strstr(err, "--db-cpus"));
    ck_assert_ptr_nonnull(strstr(err, "0-x"));
}
END_TEST

static Suite *suite(void)
{
    Suite *s = suite_create("dbplace");
    TCase *tc = tcase_create("dbplace");
    tcase_add_checked_fixture(tc, NULL, teardown);
    tcase_add_test(tc, default_takes_the_cpus_left_over);
    tcase_add_test(tc, default_on_two_cpus_shares_the_server_s);
    tcase_add_test(tc, declared_overlap_refused_where_a_cpu_per_role_exists);
    tcase_add_test(tc, declared_overlap_recorded_on_a_small_host);
    tcase_add_test(tc, default_overlap_on_a_big_host_says_how_to_separate);
    tcase_add_test(tc, bad_list_named);
    suite_add_tcase(s, tc);
    return s;
}

int main(void)
{
    return kb_check_run(suite(), "dbplace");
}
