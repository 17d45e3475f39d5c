/* gray-static routes: exact (method, path) matching, 404 vs 405, the Allow value, duplicates. */
#define _POSIX_C_SOURCE 200809L
#include "gray-static/routes.h"
#include "tests/lib/kb_check.h"

#include <errno.h>
#include <string.h>

static enum MHD_Result h1(struct gs_request *req)
{
    (void)req;
    return MHD_YES;
}

static enum MHD_Result h2(struct gs_request *req)
{
    (void)req;
    return MHD_NO;
}

static struct gs_routes t;

static void setup(void)
{
    static const struct gs_route rs[] = {
        { "GET", "/plaintext", h1, NULL, 0 },
        { "GET", "/json", h2, NULL, 0 },
        { "POST", "/json", h1, NULL, 0 },
        { "GET", "/db", h2, NULL, GS_ROUTE_ASYNC },
    };
    gs_routes_init(&t);
    for (size_t i = 0; i < sizeof(rs) / sizeof(rs[0]); i++)
        ck_assert_int_eq(gs_routes_add(&t, &rs[i]), 0);
}

static void teardown(void)
{
    gs_routes_free(&t);
}

START_TEST(exact_match_finds_the_handler)
{
    const struct gs_route *r;
    ck_assert_int_eq(gs_routes_match(&t, "GET", "/plaintext", &r), GS_MATCH_OK);
    ck_assert_ptr_eq(r->handler, h1);
    ck_assert_int_eq(gs_routes_match(&t, "GET", "/json", &r), GS_MATCH_OK);
    ck_assert_ptr_eq(r->handler, h2);
    ck_assert_int_eq(gs_routes_match(&t, "POST", "/json", &r), GS_MATCH_OK);
    ck_assert_ptr_eq(r->handler, h1);
    ck_assert_int_eq(gs_routes_match(&t, "GET", "/db", &r), GS_MATCH_OK);
    ck_assert_uint_eq(r->flags, GS_ROUTE_ASYNC);
}
END_TEST

START_TEST(unknown_path_is_not_found)
{
    static const char *const paths[] = { "/", "/plaintext/", "/PLAINTEXT", "/plain", "",
                                         "/plaintextx", "/json?x" };
    const struct gs_route *r = (const struct gs_route *)&t;
    for (size_t i = 0; i < sizeof(paths) / sizeof(paths[0]); i++) {
        ck_assert_int_eq(gs_routes_match(&t, "GET", paths[i], &r), GS_MATCH_NOT_FOUND);
        ck_assert_ptr_null(r);
    }
}
END_TEST

START_TEST(known_path_other_method_is_bad_method)
{
    const struct gs_route *r;
    ck_assert_int_eq(gs_routes_match(&t, "POST", "/plaintext", &r), GS_MATCH_BAD_METHOD);
    ck_assert_ptr_null(r);
    ck_assert_int_eq(gs_routes_match(&t, "HEAD", "/plaintext", &r), GS_MATCH_BAD_METHOD);
    ck_assert_int_eq(gs_routes_match(&t, "get", "/plaintext", &r), GS_MATCH_BAD_METHOD);
    ck_assert_int_eq(gs_routes_match(&t, "DELETE", "/json", &r), GS_MATCH_BAD_METHOD);
}
END_TEST

START_TEST(allow_lists_the_path_methods)
{
    char buf[64];
    ck_assert_uint_eq(gs_routes_allow(&t, "/plaintext", buf, sizeof(buf)), 1);
    ck_assert_str_eq(buf, "GET");
    ck_assert_uint_eq(gs_routes_allow(&t, "/json", buf, sizeof(buf)), 2);
    ck_assert_str_eq(buf, "GET, POST");
    ck_assert_uint_eq(gs_routes_allow(&t, "/nope", buf, sizeof(buf)), 0);
    ck_assert_str_eq(buf, "");
    /* too small for both: the first only, still terminated */
    ck_assert_uint_eq(gs_routes_allow(&t, "/json", buf, 6), 1);
    ck_assert_str_eq(buf, "GET");
}
END_TEST

START_TEST(duplicates_and_bad_entries_are_refused)
{
    struct gs_route dup = { "GET", "/json", h1, NULL, 0 }, bad = { "GET", NULL, h1, NULL, 0 };
    errno = 0;
    ck_assert_int_eq(gs_routes_add(&t, &dup), -1);
    ck_assert_int_eq(errno, EEXIST);
    ck_assert_int_eq(gs_routes_add(&t, &bad), -1);
    ck_assert_uint_eq(t.n, 4);
}
END_TEST

START_TEST(table_grows_past_its_first_allocation)
{
    static char paths[40][8];
    const struct gs_route *r;
    for (int i = 0; i < 40; i++) {
        struct gs_route e = { "GET", paths[i], h1, NULL, 0 };
        snprintf(paths[i], sizeof(paths[i]), "/r%d", i);
        ck_assert_int_eq(gs_routes_add(&t, &e), 0);
    }
    ck_assert_int_eq(gs_routes_match(&t, "GET", "/r39", &r), GS_MATCH_OK);
    ck_assert_ptr_eq(r->path, paths[39]);
    ck_assert_int_eq(gs_routes_match(&t, "GET", "/plaintext", &r), GS_MATCH_OK);
}
END_TEST

static Suite *suite(void)
{
    Suite *s = suite_create("gray-static routes");
    TCase *tc = tcase_create("match");
    tcase_add_checked_fixture(tc, setup, teardown);
    tcase_add_test(tc, exact_match_finds_the_handler);
    tcase_add_test(tc, unknown_path_is_not_found);
    tcase_add_test(tc, known_path_other_method_is_bad_method);
    tcase_add_test(tc, allow_lists_the_path_methods);
    tcase_add_test(tc, duplicates_and_bad_entries_are_refused);
    tcase_add_test(tc, table_grows_past_its_first_allocation);
    suite_add_tcase(s, tc);
    return s;
}

int main(void)
{
    return kb_check_run(suite(), "gray-static-routes");
}
