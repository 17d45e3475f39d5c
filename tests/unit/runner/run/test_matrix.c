/* test_matrix.c -- the plan: 56 points by default (the comparison's runtimes: no variant),
 * interleaved rate by rate with the runtimes' order rotated at each step, the sequential order
 * (runtime by runtime, the db route's default), overrides, repeats with rotated runtime
 * order, names checked, the db designs a profile or --db-mode selects. */
#define _POSIX_C_SOURCE 200809L
#include "runner/run/curve/matrix.h"
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

/* --rates as the command line gives them, parsed as it parses them. */
static const struct kb_rates *R(const char *csv)
{
    static struct kb_rates r[8];
    static size_t k;
    struct kb_rates *out = &r[k++ % 8];
    ck_assert_int_eq(kb_opt_rates("--rates", csv, KB_BOUND(PLAN_RATE), out, err, sizeof(err)), 0);
    return out;
}

static struct kb_plan_opts defaults(void)
{
    struct kb_plan_opts o = { 0 };
    o.duration_s = o.warmup_s = o.drain_s = -1;
    return o;
}

/* The comparison's runtimes: the contract's, less the variants. */
static size_t compared(void)
{
    size_t n = 0;
    for (size_t i = 0; i < C.nruntimes; i++)
        n += !C.runtimes[i].variant_of;
    return n;
}

START_TEST(default_plan_is_contract_matrix)
{
    struct kb_plan_opts o = defaults();
    ck_assert_int_eq(kb_matrix_plan(&C, &o, &P, err, sizeof(err)), 0);
    ck_assert_uint_lt(compared(), C.nruntimes);   /* the contract has a variant to leave out */
    ck_assert_uint_eq(P.runtimes.n, compared());
    ck_assert_uint_eq(P.npoints, compared() * C.cmp_routes.n * C.nrates);
    ck_assert_str_eq(P.profile, "paper");
    ck_assert_double_eq(P.duration_s, kb_contract_profile(&C, "paper")->duration_s);
    ck_assert_int_eq(P.threads, C.threads);
    ck_assert_int_eq(P.connections, C.connections);
    /* interleaved: rate-major ascending, then routes, the runtimes side by side */
    ck_assert_int_eq(P.interleaved, 1);
    ck_assert_str_eq(P.points[0].runtime, C.runtimes[0].name);
    ck_assert_str_eq(P.points[0].route, C.cmp_routes.v[0]);
    ck_assert_int_eq(P.points[0].rate, C.rates[0]);
    ck_assert_int_eq(P.points[P.runtimes.n - 1].rate, C.rates[0]);
    ck_assert_str_eq(P.points[P.runtimes.n].route, C.cmp_routes.v[1]);
    ck_assert_int_eq(P.points[P.npoints - 1].rate, C.rates[C.nrates - 1]);
    for (size_t i = 0; i < P.npoints; i++)
        ck_assert(!kb_contract_runtime(&C, P.points[i].runtime)->variant_of);
    for (size_t i = 0; i < P.npoints; i++) {
        ck_assert_uint_eq(P.points[i].index, i);
        ck_assert_ptr_eq(kb_plan_find(&P, P.points[i].id), &P.points[i]);
    }
}
END_TEST

/* Every step (a rate on a route) has each runtime once, and the one that goes first moves on
 * by one place each step: no runtime always first, none's points far from another's. */
START_TEST(interleaved_order_rotates_at_every_step)
{
    struct kb_plan_opts o = defaults();
    size_t nrt, steps;
    ck_assert_int_eq(kb_matrix_plan(&C, &o, &P, err, sizeof(err)), 0);
    nrt = P.runtimes.n;
    steps = P.npoints / nrt;
    ck_assert_uint_eq(steps, C.cmp_routes.n * C.nrates);
    for (size_t s = 0; s < steps; s++) {
        const struct kb_point *first = &P.points[s * nrt];
        ck_assert_str_eq(first->runtime, P.runtimes.v[s % nrt]);
        for (size_t i = 0; i < nrt; i++) {
            const struct kb_point *pt = &P.points[s * nrt + i];
            ck_assert_int_eq(pt->rate, first->rate);
            ck_assert_str_eq(pt->route, first->route);
            ck_assert_str_eq(pt->runtime, P.runtimes.v[(s + i) % nrt]);
        }
    }
}
END_TEST

/* --order sequential: runtime-major in the contract's order, then routes, then rates. */
START_TEST(sequential_order_runs_runtime_by_runtime)
{
    struct kb_plan_opts o = defaults();
    o.order = "sequential";
    ck_assert_int_eq(kb_matrix_plan(&C, &o, &P, err, sizeof(err)), 0);
    ck_assert_int_eq(P.interleaved, 0);
    ck_assert_str_eq(P.points[0].runtime, C.runtimes[0].name);
    ck_assert_int_eq(P.points[1].rate, C.rates[1]);
    ck_assert_str_eq(P.points[C.nrates].route, C.cmp_routes.v[1]);
    ck_assert_str_eq(P.points[P.npoints - 1].runtime, P.runtimes.v[P.runtimes.n - 1]);
    kb_plan_free(&P);
    o.order = "shuffled";
    ck_assert_int_eq(kb_matrix_plan(&C, &o, &P, err, sizeof(err)), -1);
    ck_assert_ptr_nonnull(strstr(err, "--order"));
}
END_TEST

/* The db route's PostgreSQL starts with its fixture: such a plan runs sequential, and asking
 * for interleaving there is refused, not ignored. */
START_TEST(db_route_runs_sequential)
{
    struct kb_plan_opts o = defaults();
    o.runtimes = "gray-static";
    o.routes = "db";
    o.rates = R("100,200");
    ck_assert_int_eq(kb_matrix_plan(&C, &o, &P, err, sizeof(err)), 0);
    ck_assert_int_eq(P.interleaved, 0);
    kb_plan_free(&P);
    o.order = "interleaved";
    ck_assert_int_eq(kb_matrix_plan(&C, &o, &P, err, sizeof(err)), -1);
    ck_assert_ptr_nonnull(strstr(err, "db route"));
}
END_TEST

START_TEST(overrides_narrow_and_sort)
{
    struct kb_plan_opts o = defaults();
    o.order = "sequential";
    o.profile = "quick";
    o.runtimes = "gray-static,node";     /* given out of order: the contract's order wins */
    o.routes = "json";
    o.rates = R("1000,500");
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
    o.rates = R("100");
    o.repeats = 2;
    o.order = "sequential";
    ck_assert_int_eq(kb_matrix_plan(&C, &o, &P, err, sizeof(err)), 0);
    ck_assert_uint_eq(P.npoints, 4);
    ck_assert_str_eq(P.points[0].id, "node-plaintext-100-r1");
    ck_assert_str_eq(P.points[1].id, "go-plaintext-100-r1");
    ck_assert_str_eq(P.points[2].id, "go-plaintext-100-r2");
    ck_assert_str_eq(P.points[3].id, "node-plaintext-100-r2");
    ck_assert_int_eq(P.points[3].repeat, 2);
}
END_TEST

/* Interleaved repeats: every step of the second repeat starts one runtime further on than
 * the same step of the first, whatever the number of steps (an even count once cancelled it). */
START_TEST(interleaved_repeats_rotate_at_every_step)
{
    static const char *rates[] = {"100", "100,200", "100,200,300"};
    for (size_t n = 1; n <= 3; n++) {
        struct kb_plan_opts o = defaults();
        o.runtimes = "node,go";
        o.routes = "plaintext";
        o.rates = R(rates[n - 1]);
        o.repeats = 2;
        kb_plan_free(&P);
        ck_assert_int_eq(kb_matrix_plan(&C, &o, &P, err, sizeof(err)), 0);
        ck_assert_int_eq(P.interleaved, 1);
        ck_assert_uint_eq(P.npoints, 4 * n);
        for (size_t s = 0; s < n; s++) {
            const struct kb_point *a = &P.points[2 * s], *b = &P.points[2 * (n + s)];
            ck_assert_int_eq(b->repeat, 2);
            ck_assert_int_eq(b->rate, a->rate);
            ck_assert_str_ne(b->runtime, a->runtime);
        }
    }
}
END_TEST

START_TEST(route_only_where_served)
{
    struct kb_plan_opts o = defaults();
    o.runtimes = "go,gray-static";
    o.routes = "json,db";
    o.rates = R("100");
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
    /* issue 27: a rate twice planned one point id twice */
    o = defaults();
    o.rates = R("300,300");
    ck_assert_int_eq(kb_matrix_plan(&C, &o, &P, err, sizeof(err)), -1);
    ck_assert_msg(strstr(err, "rate 300 given twice") != NULL, "%s", err);
    o = defaults();
    o.rates = R("100,300,200,300");
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
    o.rates = R("500,1000");
    o.duration_s = 2;
    o.connections = 32;
    ck_assert_int_eq(kb_matrix_plan(&C, &o, &P, err, sizeof(err)), 0);
    ck_assert_uint_eq(P.npoints, 2);
    ck_assert_str_eq(P.points[1].id, "gray-static-db-1000");
    ck_assert_int_eq(P.connections, 32);
    ck_assert_double_eq(P.duration_s, 2);
}
END_TEST

/* db-baseline plans both designs of gray-static's /db at the paper's rate; --db-mode selects
 * designs for any plan of the db route, and a variant never runs a route it is not for. */
START_TEST(db_designs_by_profile_and_option)
{
    struct kb_plan_opts o = defaults();
    const struct kb_runtime *b = kb_contract_db_runtime(&C, "gray-static", "blocking");
    char id[128];
    o.profile = "db-baseline";
    ck_assert_msg(kb_matrix_plan(&C, &o, &P, err, sizeof(err)) == 0, "%s", err);
    ck_assert_uint_eq(P.runtimes.n, 2);
    ck_assert_uint_eq(P.npoints, 2 * P.nrates);
    snprintf(id, sizeof(id), "%s-db-%ld", b->name, P.rates[0]);
    ck_assert_ptr_nonnull(kb_plan_find(&P, id));
    snprintf(id, sizeof(id), "gray-static-db-%ld", P.rates[0]);
    ck_assert_ptr_nonnull(kb_plan_find(&P, id));
    kb_plan_free(&P);
    /* --db-mode narrows the profile's designs to one, and the other leaves the plan */
    o.db_mode = "blocking";
    ck_assert_msg(kb_matrix_plan(&C, &o, &P, err, sizeof(err)) == 0, "%s", err);
    ck_assert_uint_eq(P.runtimes.n, 1);
    ck_assert_str_eq(P.runtimes.v[0], b->name);
    kb_plan_free(&P);
    /* ...or joins the blocking design to a plan that did not name it, on /db only */
    o = defaults();
    o.runtimes = "go,gray-static";
    o.routes = "plaintext,db";
    o.rates = R("100");
    o.db_mode = "both";
    ck_assert_msg(kb_matrix_plan(&C, &o, &P, err, sizeof(err)) == 0, "%s", err);
    ck_assert_uint_eq(P.npoints, 4);   /* go, gray-static plaintext; both designs on db */
    snprintf(id, sizeof(id), "%s-db-100", b->name);
    ck_assert_ptr_nonnull(kb_plan_find(&P, id));
    snprintf(id, sizeof(id), "%s-plaintext-100", b->name);
    ck_assert_ptr_null(kb_plan_find(&P, id));
    kb_plan_free(&P);
    o.db_mode = "blocking";            /* gray-static still serves plaintext, not db */
    ck_assert_msg(kb_matrix_plan(&C, &o, &P, err, sizeof(err)) == 0, "%s", err);
    ck_assert_ptr_nonnull(kb_plan_find(&P, "gray-static-plaintext-100"));
    ck_assert_ptr_null(kb_plan_find(&P, "gray-static-db-100"));
    kb_plan_free(&P);
    o.db_mode = "sometimes";
    ck_assert_int_eq(kb_matrix_plan(&C, &o, &P, err, sizeof(err)), -1);
    ck_assert_ptr_nonnull(strstr(err, "sometimes"));
    o.db_mode = "blocking";
    o.routes = "plaintext";
    ck_assert_int_eq(kb_matrix_plan(&C, &o, &P, err, sizeof(err)), -1);
    ck_assert_ptr_nonnull(strstr(err, "db route"));
    /* named alone on a route it is not for, a variant has nothing to run */
    o = defaults();
    o.runtimes = b->name;
    o.routes = "plaintext";
    ck_assert_int_eq(kb_matrix_plan(&C, &o, &P, err, sizeof(err)), -1);
}
END_TEST

static Suite *suite(void)
{
    Suite *s = suite_create("matrix");
    TCase *tc = tcase_create("plan");
    tcase_add_checked_fixture(tc, setup, teardown);
    tcase_add_test(tc, default_plan_is_contract_matrix);
    tcase_add_test(tc, interleaved_order_rotates_at_every_step);
    tcase_add_test(tc, sequential_order_runs_runtime_by_runtime);
    tcase_add_test(tc, db_route_runs_sequential);
    tcase_add_test(tc, overrides_narrow_and_sort);
    tcase_add_test(tc, repeats_rotate_runtime_order);
    tcase_add_test(tc, interleaved_repeats_rotate_at_every_step);
    tcase_add_test(tc, route_only_where_served);
    tcase_add_test(tc, bad_names_and_numbers_refused);
    tcase_add_test(tc, profile_names_its_matrix);
    tcase_add_test(tc, db_designs_by_profile_and_option);
    suite_add_tcase(s, tc);
    return s;
}

int main(void)
{
    return kb_check_run(suite(), "matrix");
}
