/* gray-static hdrcheck: RFC 9110 token field names, Host values and the framing verdict on a
 * head's fields (the socket-level cases, NUL in a value, whitespace before the colon and each
 * framing refusal on the wire, are in test_server.c). */
#define _POSIX_C_SOURCE 200809L
#include "gray-static/hdrcheck.h"
#include "tests/lib/kb_check.h"

#include <string.h>

static int ok(const char *s)
{
    return gs_field_name_ok(s, strlen(s));
}

START_TEST(tokens_pass)
{
    ck_assert(ok("Host"));
    ck_assert(ok("content-length"));
    ck_assert(ok("X-Request-ID"));
    ck_assert(ok("a"));
    ck_assert(ok("!#$%&'*+-.^_`|~09azAZ"));
}
END_TEST

START_TEST(non_tokens_fail)
{
    static const char *const bad[] = { "", "X-Spaced ", " X", "X\tY", "X:Y", "X(Y)", "X\"", "X/Y",
                                       "X@", "X[", "X{", "X=", "X,", "X;", "X?", "X\\", "\x7f",
                                       "\xc3\xa9" };
    for (size_t i = 0; i < sizeof(bad) / sizeof(bad[0]); i++)
        ck_assert_msg(!ok(bad[i]), "accepted [%s]", bad[i]);
    ck_assert(!gs_field_name_ok("X\0Y", 3)); /* a NUL inside the counted length */
    ck_assert(gs_field_name_ok("XY\0", 2));
}
END_TEST

START_TEST(hosts)
{
    static const char *const good[] = { "", "t", "127.0.0.1", "127.0.0.1:8084", "[::1]:80",
                                        "a-b.c_d~e", "!$&'()*+,;=", "%41" };
    static const char *const bad[] = { "a b/c@d", "u@h", "a/b", "a?b", "a#b", "a b", "a\tb",
                                       "a\rb", "\"a\"", "a<b>", "a\\b", "\x7f", "\xc3\xa9" };
    for (size_t i = 0; i < sizeof(good) / sizeof(good[0]); i++)
        ck_assert_msg(gs_host_ok(good[i], strlen(good[i])), "refused [%s]", good[i]);
    for (size_t i = 0; i < sizeof(bad) / sizeof(bad[0]); i++)
        ck_assert_msg(!gs_host_ok(bad[i], strlen(bad[i])), "accepted [%s]", bad[i]);
    ck_assert(!gs_host_ok("a\0b", 3));
}
END_TEST

/* The verdict on a head given as "Name: value" lines. */
static unsigned verdict(int http10, const char *const *fields)
{
    struct gs_head_walk w = { 0 };

    for (; *fields; fields++) {
        const char *colon = strchr(*fields, ':'), *v = colon + 1;
        while (*v == ' ')
            v++;
        if (gs_head_field(&w, *fields, (size_t)(colon - *fields), v, strlen(v)) < 0)
            break;
    }
    return gs_head_verdict(&w, http10, GS_BODY_MAX);
}

#define V(http10, ...) verdict(http10, (const char *const[]){ __VA_ARGS__, NULL })

START_TEST(framing)
{
    ck_assert_uint_eq(V(0, "Host: t"), 0);
    ck_assert_uint_eq(V(0, "Host: t", "Content-Length: 5"), 0);
    ck_assert_uint_eq(V(0, "Host: t", "Transfer-Encoding: chunked"), 0);
    ck_assert_uint_eq(V(0, "host: t", "TRANSFER-ENCODING: ChunKed"), 0);
    ck_assert_uint_eq(V(0, "Host: t", "X-A: a\tb"), 0);
    ck_assert_uint_eq(V(1, "Content-Length: 5"), 0);
    /* RFC 9112 6.3 */
    ck_assert_uint_eq(V(0, "Host: t", "Content-Length: 0", "Content-Length: 44"), 400);
    ck_assert_uint_eq(V(0, "Host: t", "Content-Length: 2", "content-length: 2"), 400);
    ck_assert_uint_eq(V(0, "Host: t", "Content-Length: 5", "Transfer-Encoding: chunked"), 400);
    /* RFC 9112 3.2, RFC 9110 7.2 */
    ck_assert_uint_eq(V(0, "Host: a", "Host: b"), 400);
    ck_assert_uint_eq(V(1, "Host: a", "HOST: a"), 400);
    ck_assert_uint_eq(V(0, "Host: a b/c@d"), 400);
    /* RFC 9110 5.5 */
    ck_assert_uint_eq(V(0, "Host: t", "X-A: a\rb"), 400);
    ck_assert_uint_eq(V(0, "Host: t", "X-Spaced : b"), 400);
    /* RFC 9112 6.1 */
    ck_assert_uint_eq(V(0, "Host: t", "Transfer-Encoding: identity"), 501);
    ck_assert_uint_eq(V(0, "Host: t", "Transfer-Encoding: xchunked"), 501);
    ck_assert_uint_eq(V(0, "Host: t", "Transfer-Encoding: chunked, gzip"), 501);
    ck_assert_uint_eq(V(0, "Host: t", "Transfer-Encoding: gzip, chunked"), 501);
    ck_assert_uint_eq(V(0, "Host: t", "Transfer-Encoding: chunked "), 501);
    ck_assert_uint_eq(V(0, "Host: t", "Transfer-Encoding: chunked", "Transfer-Encoding: chunked"),
                      501);
    ck_assert_uint_eq(V(1, "Transfer-Encoding: chunked"), 400);
}
END_TEST

/* Issue 27: what Go and nginx answer 400 (or 413), gray-static served. */
START_TEST(request_line_and_fields)
{
    static const char *const good[] = { "/", "/plaintext", "/plaintext?a=b", "/a%00b",
                                        "/caf\xc3\xa9", "*", "http://t/plaintext",
                                        "HTTPS://t:8080/x" };
    static const char *const bad[] = { "", "plaintext", "plain/text", "/plain text",
                                       "/plain\ttext", "/plain\x01text", "/plain\x7ftext",
                                       "**", "1http://t/", "http//t/" };
    for (size_t i = 0; i < sizeof(good) / sizeof(good[0]); i++)
        ck_assert_msg(gs_target_ok(good[i], strlen(good[i])), "refused [%s]", good[i]);
    for (size_t i = 0; i < sizeof(bad) / sizeof(bad[0]); i++)
        ck_assert_msg(!gs_target_ok(bad[i], strlen(bad[i])), "accepted [%s]", bad[i]);
    ck_assert(!gs_target_ok("/plaintext\0junk", 15));
    /* the target as 0.9.75 leaves it: NUL-terminated where the space was, the version or
     * the line's end after it; a NUL the client sent cuts it short */
    ck_assert_uint_eq(gs_line_refusal("plaintext\0HTTP/1.1\0"), 400);
    ck_assert_uint_eq(gs_line_refusal("/plaintext\0HTTP/1.1\0"), 0);
    ck_assert_uint_eq(gs_line_refusal("/plaintext\0\0"), 0);
    ck_assert_uint_eq(gs_line_refusal("/plaintext\0junk\0HTTP/1.1\0"),
                      MHD_VERSION < 0x00097600 ? 400 : 0);
    /* a method is a token */
    ck_assert(ok("GET") && ok("M-SEARCH"));
    ck_assert(!ok("G\x01T") && !ok("G\xc3\xa9T") && !ok(""));
    /* field values: HTAB and 8-bit pass, other controls do not */
    ck_assert(gs_field_value_ok("a\tb \xc3\xa9", 6));
    ck_assert(!gs_field_value_ok("a\x01b", 3) && !gs_field_value_ok("b\0", 2));
    ck_assert(!gs_field_value_ok("a\x7f", 2));
    ck_assert_uint_eq(V(0, "Host: t", "X-A: a\x01b"), 400);
    /* RFC 9112 3.2: HTTP/1.1 needs its Host; 1.0 does not */
    ck_assert_uint_eq(V(0, "X-A: b"), 400);
    ck_assert_uint_eq(V(1, "X-A: b"), 0);
    /* RFC 9110 8.6: a length is 1*DIGIT; past a 64-bit one, 400; past what is read, 413 */
    ck_assert_uint_eq(V(0, "Host: t", "Content-Length: 1048576"), 0);
    ck_assert_uint_eq(V(0, "Host: t", "Content-Length: 1048577"), 413);
    ck_assert_uint_eq(V(0, "Host: t", "Content-Length: 9223372036854775807"), 413);
    ck_assert_uint_eq(V(0, "Host: t", "Content-Length: 9223372036854775808"), 400);
    ck_assert_uint_eq(V(0, "Host: t", "Content-Length: 99999999999999999999"), 400);
    ck_assert_uint_eq(V(0, "Host: t", "Content-Length: -1"), 400);
    ck_assert_uint_eq(V(0, "Host: t", "Content-Length: 1 2"), 400);
    ck_assert_uint_eq(V(0, "Host: t", "Content-Length: "), 400);
}
END_TEST

static Suite *suite(void)
{
    Suite *s = suite_create("gray-static hdrcheck");
    TCase *tc = tcase_create("field names");
    tcase_add_test(tc, tokens_pass);
    tcase_add_test(tc, non_tokens_fail);
    tcase_add_test(tc, hosts);
    tcase_add_test(tc, framing);
    tcase_add_test(tc, request_line_and_fields);
    suite_add_tcase(s, tc);
    return s;
}

int main(void)
{
    return kb_check_run(suite(), "gray-static-hdrcheck");
}
