/* gray-static mhd09: which of libmicrohttpd 0.9's log messages announce a doubled refusal, and
 * the answer the server sends once in its place. The server's own test (test_server.c) sends
 * the requests and counts the heads on the wire. */
#define _POSIX_C_SOURCE 200809L
#include "gray-static/mhd09.h"
#include "tests/lib/kb_check.h"

#include <stdio.h>
#include <string.h>

START_TEST(only_the_content_length_refusals_announce_one)
{
    /* as 0.9.75 formats them (connection.c, parse_connection_headers) */
    ck_assert(gs_mhd09_is_refusal("Failed to parse `Content-Length' header. "
                                  "Closing connection.\n"));
    ck_assert(gs_mhd09_is_refusal("Too large value of 'Content-Length' header. "
                                  "Closing connection.\n"));
    ck_assert(!gs_mhd09_is_refusal("Received HTTP/1.1 request without `Host' header.\n"));
    ck_assert(!gs_mhd09_is_refusal("Error processing request (HTTP response code is %u "
                                   "(`%s')). Closing connection.\n"));
    ck_assert(!gs_mhd09_is_refusal(""));
    ck_assert(!gs_mhd09_is_refusal(NULL));
}
END_TEST

START_TEST(the_answer_is_one_framed_400)
{
    const char *date = "Sun, 06 Nov 1994 08:49:37 GMT";
    char buf[256], body[64];
    size_t n = gs_mhd09_answer(buf, sizeof(buf), date, "gray-static", "Bad Request\n");
    const char *end, *cl;
    size_t len;

    ck_assert_uint_gt(n, 0);
    ck_assert_uint_eq(n, strlen(buf));
    ck_assert(!strncmp(buf, "HTTP/1.1 400 Bad Request\r\n", 26));
    ck_assert_ptr_nonnull(strstr(buf, "\r\nConnection: close\r\n"));
    ck_assert_ptr_nonnull(strstr(buf, "\r\nContent-Type: text/plain\r\n"));
    ck_assert_ptr_nonnull(strstr(buf, "\r\nDate: Sun, 06 Nov 1994 08:49:37 GMT\r\n"));
    ck_assert_ptr_nonnull(strstr(buf, "\r\nServer: gray-static\r\n"));
    ck_assert_ptr_nonnull(end = strstr(buf, "\r\n\r\n"));
    ck_assert_ptr_nonnull(cl = strstr(buf, "\r\nContent-Length: "));
    ck_assert_int_eq(sscanf(cl, "\r\nContent-Length: %zu", &len), 1);
    ck_assert_uint_eq(len, n - (size_t)(end + 4 - buf)); /* the body, and nothing after it */
    snprintf(body, sizeof(body), "%s", end + 4);
    ck_assert_str_eq(body, "Bad Request\n");
    ck_assert_ptr_null(strstr(end + 4, "HTTP/1."));
}
END_TEST

START_TEST(a_buffer_too_small_gives_nothing)
{
    char buf[256];
    const char *date = "Sun, 06 Nov 1994 08:49:37 GMT";
    size_t whole = gs_mhd09_answer(buf, sizeof(buf), date, "gs", "Bad Request\n");

    ck_assert_uint_gt(whole, 0);
    ck_assert_uint_eq(gs_mhd09_answer(buf, whole, date, "gs", "Bad Request\n"), 0);
    ck_assert_uint_eq(gs_mhd09_answer(buf, whole + 1, date, "gs", "Bad Request\n"), whole);
}
END_TEST

static Suite *suite(void)
{
    Suite *s = suite_create("gray-static mhd09");
    TCase *tc = tcase_create("refusals");
    tcase_add_test(tc, only_the_content_length_refusals_announce_one);
    tcase_add_test(tc, the_answer_is_one_framed_400);
    tcase_add_test(tc, a_buffer_too_small_gives_nothing);
    suite_add_tcase(s, tc);
    return s;
}

int main(void)
{
    return kb_check_run(suite(), "gray-static-mhd09");
}
