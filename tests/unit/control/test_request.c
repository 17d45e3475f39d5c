/* test_request.c -- control/request.c: a head ends at its first empty line whether lines end
 * in CR LF or a bare LF, a field line is a token name and its colon (no whitespace between),
 * a body or a malformed length is refused, HTTP/1.0 and Connection decide the close. */
#define _GNU_SOURCE
#include <check.h>
#include <string.h>

#include "control/request.h"
#include "tests/lib/kb_check.h"

static struct kbc_request r;

static int parse(const char *s)
{
    return kbc_request_parse(s, strlen(s), &r);
}

static int path_is(const char *want)
{
    return r.path_len == strlen(want) && !memcmp(r.path, want, r.path_len);
}

START_TEST(heads_end_at_the_empty_line_however_lines_end)
{
    const char *crlf = "GET /plaintext HTTP/1.1\r\nHost: t\r\n\r\nGET /json";
    ck_assert_int_eq(parse(crlf), 1);
    ck_assert(!r.bad && !r.close_after && path_is("/plaintext"));
    ck_assert_uint_eq(r.head_len, strlen(crlf) - strlen("GET /json"));
    ck_assert_int_eq(parse("GET /plaintext HTTP/1.1\nHost: t\n\n"), 1);   /* RFC 9112 2.2 */
    ck_assert(!r.bad && path_is("/plaintext"));
    ck_assert_int_eq(parse("GET /json?x=1 HTTP/1.1\r\nHost: t\n\r\n"), 1);
    ck_assert(!r.bad && path_is("/json"));
    ck_assert_int_eq(parse("GET /plaintext HTTP/1.1\r\nHost: t\r\n"), 0);  /* not yet */
    ck_assert_int_eq(parse("GET /plaintext HTTP/1.1"), 0);
}
END_TEST

START_TEST(field_lines_and_bodies)
{
    static const char *const bad[] = {
        "GET / HTTP/1.1\r\nHost: t\r\nContent-Length : 40\r\n\r\n",   /* RFC 9112 5.1 */
        "GET / HTTP/1.1\r\nHost: t\r\nContent-Length\t: 0\r\n\r\n",
        "GET / HTTP/1.1\r\nHost: t\r\nContent-Length: 5\r\n\r\n",
        "GET / HTTP/1.1\r\nHost: t\r\nContent-Length: abc\r\n\r\n",
        "GET / HTTP/1.1\r\nHost: t\r\nContent-Length:\r\n\r\n",
        "GET / HTTP/1.1\r\nHost: t\r\nTransfer-Encoding: chunked\r\n\r\n",
        "GET / HTTP/1.1\r\nNo colon\r\n\r\n",
        "GET / HTTP/1.1\r\n: empty\r\n\r\n",
        "POST / HTTP/1.1\r\nHost: t\r\n\r\n",
        "GET  HTTP/1.1\r\n\r\n",
        "GET /\r\n\r\n",
    };
    for (size_t i = 0; i < sizeof(bad) / sizeof(bad[0]); i++) {
        ck_assert_int_eq(parse(bad[i]), 1);
        ck_assert_msg(r.bad && r.close_after, "accepted case %zu", i);
    }
    ck_assert_int_eq(parse("GET / HTTP/1.1\r\nContent-Length: 00\r\n\r\n"), 1);
    ck_assert(!r.bad);
}
END_TEST

START_TEST(when_the_connection_closes)
{
    ck_assert_int_eq(parse("GET / HTTP/1.0\r\n\r\n"), 1);
    ck_assert(r.close_after);
    ck_assert_int_eq(parse("GET / HTTP/1.0\r\nConnection: keep-alive\r\n\r\n"), 1);
    ck_assert(!r.close_after);
    ck_assert_int_eq(parse("GET / HTTP/1.1\r\nConnection: close\r\n\r\n"), 1);
    ck_assert(r.close_after);
}
END_TEST

static Suite *suite(void)
{
    Suite *s = suite_create("control_request");
    TCase *tc = tcase_create("head");
    tcase_add_test(tc, heads_end_at_the_empty_line_however_lines_end);
    tcase_add_test(tc, field_lines_and_bodies);
    tcase_add_test(tc, when_the_connection_closes);
    suite_add_tcase(s, tc);
    return s;
}

int main(void)
{
    return kb_check_run(suite(), "control_request");
}
