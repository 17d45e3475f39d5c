/* test_routes.c -- control/routes.c: the control server's pre-rendered responses carry the
 * contract's exact bytes and headers, the Date follows the clock, unknown paths get 404. */
#define _GNU_SOURCE
#include <check.h>
#include <stdio.h>
#include <string.h>

#include "control/routes.h"
#include "contract/contract.h"
#include "runner/util/root.h"
#include "tests/lib/kb_check.h"

static struct kb_contract ct;
static struct kbc_routes rt;

static void setup(void)
{
    char err[256];
    ck_assert_msg(kb_contract_load(kb_root_contract(), &ct, err, sizeof(err)) == 0, "%s", err);
    ck_assert_msg(kbc_routes_init(&rt, &ct, err, sizeof(err)) == 0, "%s", err);
}

static void teardown(void)
{
    kbc_routes_free(&rt);
    kb_contract_free(&ct);
}

static void check_route(const char *name)
{
    const struct kb_route *cr = kb_contract_route(&ct, name);
    const struct kbc_response *r = kbc_routes_find(&rt, cr->path, strlen(cr->path));
    char want[256];
    ck_assert_int_eq(r->status, cr->status);
    ck_assert(!strncmp(r->bytes, "HTTP/1.1 200 OK\r\n", 17));
    snprintf(want, sizeof(want), "\r\nContent-Type: %s\r\n", cr->content_type);
    ck_assert(memmem(r->bytes, r->len, want, strlen(want)));
    snprintf(want, sizeof(want), "\r\nContent-Length: %zu\r\n\r\n", cr->body_len);
    ck_assert(memmem(r->bytes, r->len, want, strlen(want)));
    ck_assert(memmem(r->bytes, r->len, "\r\nServer: kb-control\r\n", 22));
    /* the body is exactly the contract's, at the very end */
    ck_assert_uint_ge(r->len, cr->body_len);
    ck_assert_int_eq(memcmp(r->bytes + r->len - cr->body_len, cr->body, cr->body_len), 0);
    ck_assert_int_eq(r->bytes[r->len - cr->body_len - 1], '\n');
}

START_TEST(literal_routes_are_exact)
{
    check_route("plaintext");
    check_route("json");
}
END_TEST

START_TEST(regex_routes_and_unknown_paths_are_404)
{
    const struct kbc_response *r = kbc_routes_find(&rt, "/db", 3);
    ck_assert_int_eq(r->status, 404);
    r = kbc_routes_find(&rt, "/plaintextX", 11);
    ck_assert_int_eq(r->status, 404);
    r = kbc_routes_find(&rt, "/plain", 6);
    ck_assert_int_eq(r->status, 404);
    ck_assert(!strncmp(r->bytes, "HTTP/1.1 404 Not Found\r\n", 24));
}
END_TEST

START_TEST(date_follows_the_second)
{
    const struct kbc_response *r = kbc_routes_find(&rt, "/plaintext", 10);
    size_t len = r->len;
    kbc_routes_tick(&rt, 784111777);     /* Sun, 06 Nov 1994 08:49:37 GMT (RFC 9110's example) */
    ck_assert(memmem(r->bytes, r->len, "\r\nDate: Sun, 06 Nov 1994 08:49:37 GMT\r\n", 39));
    ck_assert_uint_eq(r->len, len);
    kbc_routes_tick(&rt, 784111778);
    ck_assert(memmem(r->bytes, r->len, "\r\nDate: Sun, 06 Nov 1994 08:49:38 GMT\r\n", 39));
    r = kbc_routes_find(&rt, "/nope", 5);
    ck_assert(memmem(r->bytes, r->len, "08:49:38 GMT", 12));
}
END_TEST

static Suite *suite(void)
{
    Suite *s = suite_create("control_routes");
    TCase *tc = tcase_create("routes");
    tcase_add_checked_fixture(tc, setup, teardown);
    tcase_add_test(tc, literal_routes_are_exact);
    tcase_add_test(tc, regex_routes_and_unknown_paths_are_404);
    tcase_add_test(tc, date_follows_the_second);
    suite_add_tcase(s, tc);
    return s;
}

int main(void)
{
    return kb_check_run(suite(), "control-routes");
}
