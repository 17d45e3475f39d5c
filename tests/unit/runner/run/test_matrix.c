/* test_matrix.c -- the plan: contract order, 56 points by default, overrides, repeats with
 * rotated runtime order, names checked. */
#define _POSIX_C_SOURCE 200809L
#include "runner/run/matrix.h"
#include "runner/util/root.h"
#include "tests/lib/kb_check.h"

#include <string.h>

static struct kb_contract C;
static struct kb_plan P;
static char err[256];

static void setup(void)
{
    ck_assert_int_eq(kb_contract_load(kb_root_contract(), &C, err, sizeof(err)), 0);
}

static void teardown(void)
{
    kb_plan_free(&P);
    kb_contract_free(&C);
}

static struct kb_plan_opts defaults(void)
{
    struct kb_plan_opts o = { 0 };
    o.duration_s = o.warmup_s = o.drain_s = -1;
    return o;
}

START_TEST(default_plan_is_contract_matrix)
{
    struct kb_plan_opts o = defaults();
    ck_assert_int_eq(kb_matrix_plan(&C, &o, &P, err, sizeof(err)), 0);
    ck_assert_uint_eq(P.npoints, C.nruntimes * C.cmp_routes.n * C.nrates);
    ck_assert_str_eq(P.profile, "paper");
    ck_assert_double_eq(P.duration_s, kb_contract_profile(&C, "paper")->duration_s);
    ck_assert_int_eq(P.threads, C.threads);
    ck_assert_int_eq(P.connections, C.connections);
    /* runtime-major in the contract's order, then routes, then rates ascending */
    ck_assert_str_eq(P.points[0].runtime, C.runtimes[0].name);
    ck_assert_str_eq(P.points[0].route, C.cmp_routes.v[0]);
    ck_assert_int_eq(P.points[0].rate, C.rates[0]);
    ck_assert_int_eq(P.points[1].rate, C.rates[1]);
    ck_assert_str_eq(P.points[C.nrates].route, C.cmp_routes.v[1]);
    ck_assert_str_eq(P.points[P.npoints - 1].runtime, C.runtimes[C.nruntimes - 1].name);
    for (size_t i = 0; i < P.npoints; i++) {
        ck_assert_uint_eq(P.points[i].index, i);
        ck_assert_ptr_eq(kb_plan_find(&P, P.points[i].id), &P.points[i]);
    }
}
END_TEST

START_TEST(overrides_narrow_and_sort)
{
    struct kb_plan_opts o = defaults();
    o.profile = "quick";
    o.runtimes = "gray-static,node";     /* given out of order: the contract's order wins */
    o.routes = "json";
    o.rates = "1000,500";
    o.duration_s = 2;
    ck_assert_int_eq(kb_matrix_plan(&C, &o, &P, err, sizeof(err)), 0);
    ck_assert_uint_eq(P.npoints, 4);
    ck_assert_str_eq(P.points[0].runtime, "node");
    ck_assert_str_eq(P.points[2].runtime, "gray-static");
    ck_assert_int_eq(P.points[0].rate, 500);
    ck_assert_str_eq(P.points[1].id, "node-json-1000");
    ck_assert_double_eq(P.duration_s, 2);
    ck_assert_double_eq(P.warmup_s, kb_contract_profile(&C, "quick")->warmup_s);
}
END_TEST

START_TEST(repeats_rotate_runtime_order)
{
    struct kb_plan_opts o = defaults();
    o.runtimes = "node,go";
    o.routes = "plaintext";
    o.rates = "100";
    o.repeats = 2;
    ck_assert_int_eq(kb_matrix_plan(&C, &o, &P, err, sizeof(err)), 0);
    ck_assert_uint_eq(P.npoints, 4);
    ck_assert_str_eq(P.points[0].id, "node-plaintext-100-r1");
    ck_assert_str_eq(P.points[1].id, "go-plaintext-100-r1");
    ck_assert_str_eq(P.points[2].id, "go-plaintext-100-r2");
    ck_assert_str_eq(P.points[3].id, "node-plaintext-100-r2");
    ck_assert_int_eq(P.points[3].repeat, 2);
}
END_TEST

START_TEST(route_only_where_served)
{
    struct kb_plan_opts o = defaults();
    o.runtimes = "go,gray-static";
    o.routes = "json,db";
    o.rates = "100";
    ck_assert_int_eq(kb_matrix_plan(&C, &o, &P, err, sizeof(err)), 0);
    ck_assert_uint_eq(P.npoints, 3);   /* go-json, gray-static-json, gray-static-db */
    ck_assert_ptr_null(kb_plan_find(&P, "go-db-100"));
    ck_assert_ptr_nonnull(kb_plan_find(&P, "gray-static-db-100"));
    kb_plan_free(&P);
    o.runtimes = "go";
    o.routes = "db";
    ck_assert_int_eq(kb_matrix_plan(&C, &o, &P, err, sizeof(err)), -1);
}
END_TEST

START_TEST(bad_names_and_numbers_refused)
{
    struct kb_plan_opts o = defaults();
    o.runtimes = "go,cobol";
    ck_assert_int_eq(kb_matrix_plan(&C, &o, &P, err, sizeof(err)), -1);
    ck_assert_ptr_nonnull(strstr(err, "cobol"));
    o = defaults();
    o.rates = "100,fast";
    ck_assert_int_eq(kb_matrix_plan(&C, &o, &P, err, sizeof(err)), -1);
    /* issue 27: a rate twice planned one point id twice */
    o = defaults();
    o.rates = "300,300";
    ck_assert_int_eq(kb_matrix_plan(&C, &o, &P, err, sizeof(err)), -1);
    ck_assert_msg(strstr(err, "rate 300 given twice") != NULL, "%s", err);
    o = defaults();
    o.rates = "100,300,200,300";
    ck_assert_int_eq(kb_matrix_plan(&C, &o, &P, err, sizeof(err)), -1);
    o = defaults();
    o.profile = "nosuch";
    ck_assert_int_eq(kb_matrix_plan(&C, &o, &P, err, sizeof(err)), -1);
    o = defaults();
    o.routes = "nosuch";
    ck_assert_int_eq(kb_matrix_plan(&C, &o, &P, err, sizeof(err)), -1);
    o = defaults();
    o.threads = 8;
    o.connections = 4;
    ck_assert_int_eq(kb_matrix_plan(&C, &o, &P, err, sizeof(err)), -1);
    ck_assert_ptr_nonnull(strstr(err, "at least threads"));
}
END_TEST

/* A profile that names its matrix (db-readiness) plans exactly that, from the contract's
 * own lists; an option still narrows it. */
START_TEST(profile_names_its_matrix)
{
    struct kb_plan_opts o = defaults();
    const struct kb_profile *pr = kb_contract_profile(&C, "db-readiness");
    ck_assert_ptr_nonnull(pr);
    o.profile = "db-readiness";
    ck_assert_int_eq(kb_matrix_plan(&C, &o, &P, err, sizeof(err)), 0);
    ck_assert_uint_eq(P.npoints, pr->nrates);
    ck_assert_uint_eq(P.nrates, pr->nrates);
    for (size_t i = 0; i < P.npoints; i++) {
        ck_assert_str_eq(P.points[i].runtime, pr->runtimes.v[0]);
        ck_assert_str_eq(P.points[i].route, pr->routes.v[0]);
        ck_assert_int_eq(P.points[i].rate, pr->rates[i]);
    }
    ck_assert_int_eq(P.threads, pr->threads);
    ck_assert_int_eq(P.connections, pr->connections);
    ck_assert_double_eq(P.duration_s, pr->duration_s);
    ck_assert_double_eq(P.warmup_s, pr->warmup_s);
    kb_plan_free(&P);
    o.rates = "500,1000";
    o.duration_s = 2;
    o.connections = 32;
    ck_assert_int_eq(kb_matrix_plan(&C, &o, &P, err, sizeof(err)), 0);
    ck_assert_uint_eq(P.npoints, 2);
    ck_assert_str_eq(P.points[1].id, "gray-static-db-1000");
    ck_assert_int_eq(P.connections, 32);
    ck_assert_double_eq(P.duration_s, 2);
}
END_TEST

static Suite *suite(void)
{
    Suite *s = suite_create("matrix");
    TCase *tc = tcase_create("plan");
    tcase_add_checked_fixture(tc, setup, teardown);
    tcase_add_test(tc, default_plan_is_contract_matrix);
    tcase_add_test(tc, overrides_narrow_and_sort);
    tcase_add_test(tc, repeats_rotate_runtime_order);
    tcase_add_test(tc, route_only_where_served);
    tcase_add_test(tc, bad_names_and_numbers_refused);
    tcase_add_test(tc, profile_names_its_matrix);
    suite_add_tcase(s, tc);
    return s;
}

int main(void)
{
    return kb_check_run(suite(), "matrix");
}
