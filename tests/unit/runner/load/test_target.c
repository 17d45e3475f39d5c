/* test_target.c -- runner/load/target.c: the request bytes a URL and -H make, which
 * expectation applies (the contract route's or the user's), and every refusal. */
#define _GNU_SOURCE
#include <check.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "contract/contract.h"
#include "runner/load/target.h"
#include "runner/util/root.h"
#include "tests/lib/kb_check.h"

static struct kb_contract C;

static void setup(void)
{
    char err[256];
    ck_assert_msg(kb_contract_load(kb_root_contract(), &C, err, sizeof(err)) == 0, "%s", err);
}

static void teardown(void)
{
    kb_contract_free(&C);
}

/* kb_target_open's return, with the target closed again; err keeps the message. */
static int open_close(const struct kb_target_spec *s, char *err, size_t errlen)
{
    struct kb_target t;
    int rc = kb_target_open(&t, s, &C, err, errlen);
    kb_target_close(&t);
    return rc;
}

START_TEST(headers_go_in_order_after_the_host)
{
    struct kb_target_spec s = { .url = "http://127.0.0.1:9000/api/hello?x=1",
                                .headers = { "X-Token:  abc  ", "Accept: */*" }, .nheaders = 2 };
    struct kb_target t;
    char err[256];
    ck_assert_int_eq(kb_target_open(&t, &s, &C, err, sizeof(err)), 0);
    ck_assert_str_eq(t.request, "GET /api/hello?x=1 HTTP/1.1\r\nHost: 127.0.0.1:9000\r\n"
                                "X-Token: abc\r\nAccept: */*\r\n\r\n");
    ck_assert_uint_eq(t.request_len, strlen(t.request));
    ck_assert_ptr_null(t.route);
    ck_assert_str_eq(t.expectation, "status 2xx, any body");
    ck_assert_int_eq(t.expect.status, 200);
    ck_assert_int_eq(t.expect.status_hi, 299);
    ck_assert(t.expect.any_body && !t.expect.content_type);
    ck_assert(kb_target_loopback(&t));
    kb_target_close(&t);
}
END_TEST

START_TEST(a_host_of_the_users_own_replaces_the_urls)
{
    struct kb_target_spec s = { .url = "http://127.0.0.1/", .headers = { "host: example.test" },
                                .nheaders = 1 };
    struct kb_target t;
    char err[256];
    ck_assert_int_eq(kb_target_open(&t, &s, &C, err, sizeof(err)), 0);
    ck_assert_str_eq(t.request, "GET / HTTP/1.1\r\nhost: example.test\r\n\r\n");
    ck_assert_int_eq(ntohs(t.addr.sin_port), 80);
    kb_target_close(&t);
}
END_TEST

START_TEST(a_contract_path_takes_the_routes_expectation)
{
    const struct kb_route *r = kb_contract_route(&C, "plaintext");
    char url[128], err[256];
    struct kb_target t;
    struct kb_target_spec s = { .url = url };
    snprintf(url, sizeof(url), "http://127.0.0.1:8080%s", r->path);
    ck_assert_int_eq(kb_target_open(&t, &s, &C, err, sizeof(err)), 0);
    ck_assert_str_eq(t.route, "plaintext");
    ck_assert_int_eq(t.expect.status, r->status);
    ck_assert_str_eq(t.expect.content_type, r->content_type);
    ck_assert_uint_eq(t.expect.body_len, r->body_len);
    kb_target_close(&t);
    /* the same path with an expectation of the user's: the user's */
    s.expect_status = "204";
    ck_assert_int_eq(kb_target_open(&t, &s, &C, err, sizeof(err)), 0);
    ck_assert_ptr_null(t.route);
    ck_assert_int_eq(t.expect.status, 204);
    ck_assert_int_eq(t.expect.status_hi, 0);
    kb_target_close(&t);
}
END_TEST

START_TEST(the_users_body_and_header)
{
    char body[] = "/tmp/kb-target-body-XXXXXX", err[256];
    int fd = mkstemp(body);
    struct kb_target t;
    struct kb_target_spec s = { .url = "http://127.0.0.1:1/x", .expect_body_file = body,
                                .expect_header = "X-Served-By:any" };
    ck_assert_int_ge(fd, 0);
    ck_assert_int_eq(write(fd, "a\0b", 3), 3);
    close(fd);
    ck_assert_int_eq(kb_target_open(&t, &s, &C, err, sizeof(err)), 0);
    ck_assert_uint_eq(t.expect.body_len, 3);
    ck_assert_mem_eq(t.expect.body, "a\0b", 3);
    ck_assert(!t.expect.any_body);
    ck_assert_str_eq(t.expect.header_name, "X-Served-By");
    ck_assert_str_eq(t.expect.header_value, "any");
    ck_assert_ptr_nonnull(strstr(t.expectation, "header X-Served-By: any"));
    kb_target_close(&t);
    unlink(body);
}
END_TEST

START_TEST(refusals_name_the_argument)
{
    static const struct {
        struct kb_target_spec s;
        const char *says;
    } cases[] = {
        { { .url = "http://127.0.0.1/", .headers = { "Connection: close" }, .nheaders = 1 }, "-H Connection" },
        { { .url = "http://127.0.0.1/", .headers = { "Transfer-Encoding: chunked" }, .nheaders = 1 }, "-H Transfer-Encoding" },
        { { .url = "http://127.0.0.1/", .headers = { "X: a\r\nY: b" }, .nheaders = 1 }, "control character" },
        { { .url = "http://127.0.0.1/", .headers = { "X Y: a" }, .nheaders = 1 }, "holds a character" },
        { { .url = "http://127.0.0.1/", .headers = { ": a" }, .nheaders = 1 }, "'Name: value'" },
        { { .url = "http://127.0.0.1/", .route = "plaintext", .expect_status = "200" }, "cannot be combined" },
        { { .url = "http://127.0.0.1/", .route = "nosuch" }, "no route 'nosuch'" },
        { { .url = "http://127.0.0.1/", .expect_status = "302" }, "--expect-status" },
        { { .url = "http://127.0.0.1/", .expect_status = "20" }, "--expect-status" },
        { { .url = "http://127.0.0.1/", .expect_body_file = "/nonexistent/b" }, "--expect-body" },
        { { .url = "http://127.0.0.1/", .expect_header = "nocolon" }, "--expect-header" },
        { { .url = "https://127.0.0.1/" }, "http://HOST" },
        { { .url = "http://127.0.0.1:0/" }, "port" },
        { { .url = "http://127.0.0.1/a b" }, "visible ASCII" },
    };
    for (size_t i = 0; i < sizeof(cases) / sizeof(cases[0]); i++) {
        char err[256] = "";
        ck_assert_int_eq(open_close(&cases[i].s, err, sizeof(err)), -1);
        ck_assert_msg(strstr(err, cases[i].says), "case %zu: '%s' lacks '%s'", i, err,
                      cases[i].says);
    }
}
END_TEST

static Suite *suite(void)
{
    Suite *s = suite_create("target");
    TCase *tc = tcase_create("target");
    tcase_add_checked_fixture(tc, setup, teardown);
    tcase_add_test(tc, headers_go_in_order_after_the_host);
    tcase_add_test(tc, a_host_of_the_users_own_replaces_the_urls);
    tcase_add_test(tc, a_contract_path_takes_the_routes_expectation);
    tcase_add_test(tc, the_users_body_and_header);
    tcase_add_test(tc, refusals_name_the_argument);
    suite_add_tcase(s, tc);
    return s;
}

int main(void)
{
    return kb_check_run(suite(), "runner-target");
}
