/* test_http_resp.c -- runner/load/http_resp.c: the same verdict whatever the split point,
 * chunked bodies, read-until-close, mismatches, and malformed input. */
#define _GNU_SOURCE
#include <check.h>
#include <regex.h>
#include <string.h>

#include "runner/load/http_resp.h"
#include "tests/lib/kb_check.h"

static const struct kb_resp_expect plain = {
    .status = 200, .content_type = "text/plain", .body = "Hello, World!", .body_len = 13
};

static const char OK[] =
    "HTTP/1.1 200 OK\r\nServer: x\r\nDate: Mon, 30 Nov 2026 05:00:00 GMT\r\n"
    "Content-Type: text/plain\r\nContent-Length: 13\r\n\r\nHello, World!";

static const char CHUNKED[] =
    "HTTP/1.1 200 OK\r\nContent-Type: text/plain\r\nTransfer-Encoding: chunked\r\n\r\n"
    "5\r\nHello\r\n8;ext=1\r\n, World!\r\n0\r\nTrailer: x\r\n\r\n";

/* Feed s in two pieces split at `at`; returns the final rc and the bytes consumed. */
static enum kb_resp_rc feed_split(struct kb_resp *p, const char *s, size_t len, size_t at, size_t *used)
{
    size_t u1 = 0, u2 = 0;
    enum kb_resp_rc rc = kb_resp_feed(p, s, at, &u1);
    if (rc != KB_RESP_MORE) {
        *used = u1;
        return rc;
    }
    rc = kb_resp_feed(p, s + at, len - at, &u2);
    *used = u1 + u2;
    return rc;
}

static void every_split(const char *s, int want_ok)
{
    size_t len = strlen(s);
    for (size_t at = 0; at <= len; at++) {
        struct kb_resp p;
        size_t used;
        kb_resp_init(&p, &plain);
        ck_assert_int_eq(feed_split(&p, s, len, at, &used), KB_RESP_DONE);
        ck_assert_uint_eq(used, len);
        ck_assert_int_eq(kb_resp_status_ok(&p) && kb_resp_ct_ok(&p) && kb_resp_body_ok(&p), want_ok);
    }
}

START_TEST(content_length_every_split)
{
    every_split(OK, 1);
}
END_TEST

START_TEST(chunked_every_split)
{
    every_split(CHUNKED, 1);
}
END_TEST

START_TEST(byte_by_byte)
{
    struct kb_resp p;
    size_t used, len = strlen(CHUNKED);
    kb_resp_init(&p, &plain);
    for (size_t i = 0; i < len; i++) {
        enum kb_resp_rc rc = kb_resp_feed(&p, CHUNKED + i, 1, &used);
        ck_assert_int_eq(rc, i + 1 == len ? KB_RESP_DONE : KB_RESP_MORE);
        ck_assert_uint_eq(used, 1);
    }
    ck_assert(kb_resp_body_ok(&p));
}
END_TEST

START_TEST(pipelined_rest_is_left)
{
    char two[1024];
    struct kb_resp p;
    size_t used;
    snprintf(two, sizeof(two), "%s%s", OK, OK);
    kb_resp_init(&p, &plain);
    ck_assert_int_eq(kb_resp_feed(&p, two, strlen(two), &used), KB_RESP_DONE);
    ck_assert_uint_eq(used, strlen(OK));
    kb_resp_init(&p, &plain);
    ck_assert_int_eq(kb_resp_feed(&p, two + used, strlen(two) - used, &used), KB_RESP_DONE);
    ck_assert(kb_resp_body_ok(&p));
}
END_TEST

START_TEST(mismatches_are_named)
{
    struct kb_resp p;
    size_t used;
    const char *s;
    s = "HTTP/1.1 404 Not Found\r\nContent-Type: text/plain\r\nContent-Length: 13\r\n\r\nHello, World!";
    kb_resp_init(&p, &plain);
    ck_assert_int_eq(kb_resp_feed(&p, s, strlen(s), &used), KB_RESP_DONE);
    ck_assert(!kb_resp_status_ok(&p) && kb_resp_ct_ok(&p) && kb_resp_body_ok(&p));
    s = "HTTP/1.1 200 OK\r\nContent-Type: text/html\r\nContent-Length: 13\r\n\r\nHello, World!";
    kb_resp_init(&p, &plain);
    ck_assert_int_eq(kb_resp_feed(&p, s, strlen(s), &used), KB_RESP_DONE);
    ck_assert(kb_resp_status_ok(&p) && !kb_resp_ct_ok(&p) && kb_resp_body_ok(&p));
    s = "HTTP/1.1 200 OK\r\nContent-Length: 13\r\n\r\nHello, World!";   /* no Content-Type */
    kb_resp_init(&p, &plain);
    ck_assert_int_eq(kb_resp_feed(&p, s, strlen(s), &used), KB_RESP_DONE);
    ck_assert(!kb_resp_ct_ok(&p));
    s = "HTTP/1.1 200 OK\r\nContent-Type: text/plain\r\nContent-Length: 13\r\n\r\nHello, world!";
    kb_resp_init(&p, &plain);
    ck_assert_int_eq(kb_resp_feed(&p, s, strlen(s), &used), KB_RESP_DONE);
    ck_assert(!kb_resp_body_ok(&p));
    s = "HTTP/1.1 200 OK\r\nContent-Type: text/plain\r\nContent-Length: 12\r\n\r\nHello, World";
    kb_resp_init(&p, &plain);
    ck_assert_int_eq(kb_resp_feed(&p, s, strlen(s), &used), KB_RESP_DONE);
    ck_assert(!kb_resp_body_ok(&p));   /* a prefix of the body is not the body */
}
END_TEST

START_TEST(until_close_and_connection_close)
{
    struct kb_resp p;
    size_t used;
    const char *s = "HTTP/1.1 200 OK\r\nContent-Type: text/plain\r\nConnection: close\r\n\r\nHello, World!";
    kb_resp_init(&p, &plain);
    ck_assert_int_eq(kb_resp_feed(&p, s, strlen(s), &used), KB_RESP_MORE);
    ck_assert_int_eq(kb_resp_eof(&p), KB_RESP_DONE);
    ck_assert(p.conn_close && kb_resp_body_ok(&p));
    kb_resp_init(&p, &plain);
    ck_assert_int_eq(kb_resp_feed(&p, OK, 30, &used), KB_RESP_MORE);
    ck_assert_int_eq(kb_resp_eof(&p), KB_RESP_MALFORMED);       /* closed mid-response */
    kb_resp_init(&p, &plain);
    ck_assert_int_eq(kb_resp_eof(&p), KB_RESP_MORE);            /* closed before any byte */
}
END_TEST

START_TEST(malformed_input)
{
    static const char *bad[] = {
        "garbage\r\n\r\n",
        "HTTP/2 200 OK\r\n\r\n",
        "HTTP/1.1 2x0 OK\r\n\r\n",
        "HTTP/1.1 200 OK\r\nContent-Length: abc\r\n\r\n",
        "HTTP/1.1 200 OK\r\nContent-Length: 5\r\nContent-Length: 6\r\n\r\n",
        "HTTP/1.1 200 OK\r\nNoColonHere\r\n\r\n",
        "HTTP/1.1 200 OK\r\nTransfer-Encoding: chunked\r\n\r\nzz\r\n",
        "HTTP/1.1 200 OK\r\nTransfer-Encoding: chunked\r\n\r\n2\r\nabX\r\n",
        "HTTP/1.1 200 OK\r\nTransfer-Encoding: gzip\r\n\r\n",
        /* both framings, in either order (RFC 9112 6.3) */
        "HTTP/1.1 200 OK\r\nContent-Length: 18\r\nTransfer-Encoding: chunked\r\n\r\n"
        "d\r\nHello, World!\r\n0\r\n\r\n",
        "HTTP/1.1 200 OK\r\nTransfer-Encoding: chunked\r\nContent-Length: 13\r\n\r\n"
        "d\r\nHello, World!\r\n0\r\n\r\n",
    };
    for (size_t i = 0; i < sizeof(bad) / sizeof(bad[0]); i++) {
        struct kb_resp p;
        size_t used;
        kb_resp_init(&p, &plain);
        ck_assert_msg(kb_resp_feed(&p, bad[i], strlen(bad[i]), &used) == KB_RESP_MALFORMED, "case %zu", i);
        ck_assert_ptr_nonnull(p.error);
    }
}
END_TEST

START_TEST(overlong_header_line_is_malformed)
{
    static char big[3 * KB_RESP_LINE_MAX];
    struct kb_resp p;
    size_t used;
    strcpy(big, "HTTP/1.1 200 OK\r\nX-Big: ");
    memset(big + strlen(big), 'a', sizeof(big) - strlen(big) - 1);
    kb_resp_init(&p, &plain);
    ck_assert_int_eq(kb_resp_feed(&p, big, strlen(big), &used), KB_RESP_MALFORMED);
}
END_TEST

START_TEST(huge_body_streams_without_storing)
{
    static char chunk[65536];
    struct kb_resp p;
    size_t used;
    const char *head = "HTTP/1.1 200 OK\r\nContent-Type: text/plain\r\nContent-Length: 10485760\r\n\r\n";
    memset(chunk, 'x', sizeof(chunk));
    kb_resp_init(&p, &plain);
    ck_assert_int_eq(kb_resp_feed(&p, head, strlen(head), &used), KB_RESP_MORE);
    for (int i = 0; i < 159; i++)
        ck_assert_int_eq(kb_resp_feed(&p, chunk, sizeof(chunk), &used), KB_RESP_MORE);
    ck_assert_int_eq(kb_resp_feed(&p, chunk, sizeof(chunk), &used), KB_RESP_DONE);
    ck_assert(!kb_resp_body_ok(&p));
}
END_TEST

START_TEST(regex_body)
{
    regex_t re;
    struct kb_resp_expect db = { .status = 200, .content_type = "application/json" };
    struct kb_resp p;
    size_t used;
    const char *ok = "HTTP/1.1 200 OK\r\nContent-Type: application/json\r\nContent-Length: 29\r\n\r\n"
                     "{\"id\":4711,\"randomNumber\":42}";
    const char *no = "HTTP/1.1 200 OK\r\nContent-Type: application/json\r\nContent-Length: 28\r\n\r\n"
                     "{\"id\":0,\"randomNumber\":4242}";
    ck_assert_int_eq(regcomp(&re, "^\\{\"id\":([1-9][0-9]{0,3}|10000),\"randomNumber\":[0-9]+\\}$",
                             REG_EXTENDED | REG_NOSUB), 0);
    db.body_regex = &re;
    kb_resp_init(&p, &db);
    ck_assert_int_eq(kb_resp_feed(&p, ok, strlen(ok), &used), KB_RESP_DONE);
    ck_assert(kb_resp_body_ok(&p));
    kb_resp_init(&p, &db);
    ck_assert_int_eq(kb_resp_feed(&p, no, strlen(no), &used), KB_RESP_DONE);
    ck_assert(!kb_resp_body_ok(&p));
    regfree(&re);
}
END_TEST

/* A server outside the contract: a status range, any type and body, one required header
 * (its value trimmed and compared case-insensitively), whatever the split. */
START_TEST(the_users_expectation)
{
    static const struct kb_resp_expect any = {
        .status = 200, .status_hi = 299, .any_body = 1, .header_name = "X-Served-By",
        .header_value = "Any"
    };
    static const char *const cases[] = {
        "HTTP/1.1 204 No Content\r\nx-served-by:  any \r\nContent-Length: 3\r\n\r\nabc",
        "HTTP/1.1 200 OK\r\nX-Served-By: other\r\nContent-Length: 3\r\n\r\nabc",
        "HTTP/1.1 200 OK\r\nContent-Length: 3\r\n\r\nabc",
        "HTTP/1.1 302 Found\r\nX-Served-By: any\r\nContent-Length: 0\r\n\r\n",
    };
    static const int status_ok[] = { 1, 1, 1, 0 }, header_ok[] = { 1, 0, 0, 1 };
    for (size_t i = 0; i < 4; i++) {
        size_t len = strlen(cases[i]);
        for (size_t at = 0; at <= len; at++) {
            struct kb_resp p;
            size_t used;
            kb_resp_init(&p, &any);
            ck_assert_int_eq(feed_split(&p, cases[i], len, at, &used), KB_RESP_DONE);
            ck_assert_int_eq(kb_resp_status_ok(&p), status_ok[i]);
            ck_assert_int_eq(kb_resp_header_ok(&p), header_ok[i]);
            ck_assert(kb_resp_ct_ok(&p) && kb_resp_body_ok(&p));
        }
    }
}
END_TEST

static Suite *suite(void)
{
    Suite *s = suite_create("http_resp");
    TCase *tc = tcase_create("http_resp");
    tcase_add_test(tc, content_length_every_split);
    tcase_add_test(tc, chunked_every_split);
    tcase_add_test(tc, byte_by_byte);
    tcase_add_test(tc, pipelined_rest_is_left);
    tcase_add_test(tc, mismatches_are_named);
    tcase_add_test(tc, until_close_and_connection_close);
    tcase_add_test(tc, malformed_input);
    tcase_add_test(tc, overlong_header_line_is_malformed);
    tcase_add_test(tc, huge_body_streams_without_storing);
    tcase_add_test(tc, regex_body);
    tcase_add_test(tc, the_users_expectation);
    suite_add_tcase(s, tc);
    return s;
}

int main(void)
{
    return kb_check_run(suite(), "runner-http_resp");
}
