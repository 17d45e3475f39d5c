/* test_preflight.c -- runner/load/preflight.c: a response is read and judged by the load
 * generator's parser (runner/load/http_resp.c), whatever its framing (Content-Length, chunked,
 * until close) and wherever the reads split it; a wrong status, type or body is named; the
 * contract's required headers are checked beside; and the socket path end to end against
 * a server that sends its reply in pieces, closes early or never answers. */
#define _GNU_SOURCE
#include "runner/load/preflight.h"
#include "tests/lib/kb_check.h"

#include <arpa/inet.h>
#include <netinet/in.h>
#include <signal.h>
#include <string.h>
#include <sys/socket.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

static struct kb_route plaintext = {
    .name = "plaintext", .method = "GET", .path = "/plaintext", .status = 200,
    .content_type = "text/plain", .body = "Hello, World!", .body_len = 13,
};
static struct kb_route db = {
    .name = "db", .method = "GET", .path = "/db", .status = 200,
    .content_type = "application/json",
    .body_regex = "^\\{\"id\":([1-9][0-9]{0,3}|10000),\"randomNumber\":[0-9]+\\}$",
};

#define HEAD "HTTP/1.1 200 OK\r\nServer: x\r\nDate: Mon, 30 Nov 2026 05:00:00 GMT\r\n"
#define OK_TEXT HEAD "Content-Type: text/plain\r\nContent-Length: 13\r\n\r\nHello, World!"
static const char OK[] = OK_TEXT;
static const char CHUNKED[] = HEAD "Content-Type: text/plain\r\nTransfer-Encoding: chunked\r\n\r\n"
    "5\r\nHello\r\n8;ext=1\r\n, World!\r\n0\r\n\r\n";
static char reason[512], err[512];

/* Reads s against r in pieces of `piece` bytes (0: whole); then EOF when asked. */
static enum kb_resp_rc read_pieces(const struct kb_route *r, const char *s, size_t piece, int eof,
                                   struct kb_http_reply *out)
{
    struct kb_http_read rd;
    size_t len = strlen(s);
    enum kb_resp_rc rc = KB_RESP_MORE;
    ck_assert_int_eq(kb_http_read_init(&rd, r, out, err, sizeof(err)), 0);
    for (size_t at = 0; at < len && rc == KB_RESP_MORE; at += piece ? piece : len) {
        size_t n = piece && len - at > piece ? piece : len - at;
        rc = kb_http_read_feed(&rd, s + at, n);
    }
    if (rc == KB_RESP_MORE && eof)
        rc = kb_http_read_eof(&rd);
    kb_http_read_free(&rd);
    return rc;
}

/* Split in two at every byte, and fed one byte at a time: the same verdict each time. */
static void every_split(const struct kb_route *r, const char *s, int want_match)
{
    size_t len = strlen(s);
    struct kb_http_reply rep;
    for (size_t at = 1; at < len; at++) {
        struct kb_http_read rd;
        enum kb_resp_rc rc;
        ck_assert_int_eq(kb_http_read_init(&rd, r, &rep, err, sizeof(err)), 0);
        rc = kb_http_read_feed(&rd, s, at);
        if (rc == KB_RESP_MORE)
            rc = kb_http_read_feed(&rd, s + at, len - at);
        kb_http_read_free(&rd);
        ck_assert_int_eq(rc, KB_RESP_DONE);
        ck_assert_int_eq(kb_preflight_match(r, &rep, reason, sizeof(reason)) == 0, want_match);
    }
    ck_assert_int_eq(read_pieces(r, s, 1, 0, &rep), KB_RESP_DONE);
    ck_assert_int_eq(kb_preflight_match(r, &rep, reason, sizeof(reason)) == 0, want_match);
}

START_TEST(content_length_at_every_split)
{
    struct kb_http_reply rep;
    every_split(&plaintext, OK, 1);
    ck_assert_int_eq(read_pieces(&plaintext, OK, 0, 0, &rep), KB_RESP_DONE);
    ck_assert_int_eq(rep.status, 200);
    ck_assert_str_eq(rep.content_type, "text/plain");
    ck_assert_str_eq(rep.body, "Hello, World!");
    ck_assert(rep.has_length && rep.has_date && rep.has_server);
}
END_TEST

/* A chunked body is read whole, at any split, and the load generator's checks pass it; the
 * only complaint left is the contract's own: every response carries Content-Length. */
START_TEST(chunked_at_every_split)
{
    struct kb_http_reply rep;
    every_split(&plaintext, CHUNKED, 0);
    ck_assert_int_eq(read_pieces(&plaintext, CHUNKED, 3, 0, &rep), KB_RESP_DONE);
    ck_assert(rep.status_ok && rep.ct_ok && rep.body_ok);
    ck_assert_str_eq(rep.body, "Hello, World!");
    ck_assert_int_eq(kb_preflight_match(&plaintext, &rep, reason, sizeof(reason)), -1);
    ck_assert_str_eq(reason, "/plaintext: missing header(s): Content-Length");
}
END_TEST

/* What the load generator passes, preflight passes: a Content-Type in other case, space
 * around a header value, an interim 100 Continue before the response. */
START_TEST(passes_what_the_load_generator_passes)
{
    struct kb_http_reply rep;
    ck_assert_int_eq(read_pieces(&plaintext, HEAD "content-type:  Text/Plain \r\ncontent-length: 13\r\n\r\n"
                                 "Hello, World!", 7, 0, &rep), KB_RESP_DONE);
    ck_assert_int_eq(kb_preflight_match(&plaintext, &rep, reason, sizeof(reason)), 0);
    ck_assert_int_eq(read_pieces(&plaintext, "HTTP/1.1 100 Continue\r\nContent-Type: x\r\n\r\n" OK_TEXT, 5, 0,
                                 &rep), KB_RESP_DONE);
    ck_assert_int_eq(kb_preflight_match(&plaintext, &rep, reason, sizeof(reason)), 0);
    ck_assert_str_eq(rep.content_type, "text/plain");
}
END_TEST

START_TEST(wrong_status_type_body_named)
{
    struct kb_http_reply rep;
    ck_assert_int_eq(read_pieces(&plaintext, "HTTP/1.1 500 Oops\r\nServer: x\r\nDate: d\r\n"
                                 "Content-Type: text/plain\r\nContent-Length: 13\r\n\r\nHello, World!",
                                 0, 0, &rep), KB_RESP_DONE);
    ck_assert_int_eq(kb_preflight_match(&plaintext, &rep, reason, sizeof(reason)), -1);
    ck_assert_str_eq(reason, "/plaintext: status 500, want 200");
    ck_assert_int_eq(read_pieces(&plaintext, HEAD "Content-Type: text/plain; charset=utf-8\r\n"
                                 "Content-Length: 13\r\n\r\nHello, World!", 0, 0, &rep), KB_RESP_DONE);
    ck_assert_int_eq(kb_preflight_match(&plaintext, &rep, reason, sizeof(reason)), -1);
    ck_assert_str_eq(reason, "/plaintext: Content-Type 'text/plain; charset=utf-8', want 'text/plain'");
    ck_assert_int_eq(read_pieces(&plaintext, HEAD "Content-Type: text/plain\r\nContent-Length: 13\r\n\r\n"
                                 "Hello, Warld!", 4, 0, &rep), KB_RESP_DONE);
    ck_assert_int_eq(kb_preflight_match(&plaintext, &rep, reason, sizeof(reason)), -1);
    ck_assert_str_eq(reason, "/plaintext: body 'Hello, Warld!' (13 bytes) differs from the contract");
    /* one byte more is as wrong as one byte different */
    ck_assert_int_eq(read_pieces(&plaintext, HEAD "Content-Type: text/plain\r\nContent-Length: 14\r\n\r\n"
                                 "Hello, World!!", 0, 0, &rep), KB_RESP_DONE);
    ck_assert_int_eq(kb_preflight_match(&plaintext, &rep, reason, sizeof(reason)), -1);
    ck_assert_ptr_nonnull(strstr(reason, "(14 bytes) differs"));
    ck_assert_int_eq(read_pieces(&plaintext, "HTTP/1.1 200 OK\r\nContent-Type: text/plain\r\n"
                                 "Content-Length: 13\r\n\r\nHello, World!", 0, 0, &rep), KB_RESP_DONE);
    ck_assert_int_eq(kb_preflight_match(&plaintext, &rep, reason, sizeof(reason)), -1);
    ck_assert_str_eq(reason, "/plaintext: missing header(s): Date Server");
}
END_TEST

START_TEST(regex_body)
{
    struct kb_http_reply rep;
    ck_assert_int_eq(read_pieces(&db, HEAD "Content-Type: application/json\r\nContent-Length: 30\r\n\r\n"
                                 "{\"id\":42,\"randomNumber\":9876}", 6, 0, &rep), KB_RESP_MORE);
    ck_assert_int_eq(read_pieces(&db, HEAD "Content-Type: application/json\r\nContent-Length: 29\r\n\r\n"
                                 "{\"id\":42,\"randomNumber\":9876}", 6, 0, &rep), KB_RESP_DONE);
    ck_assert_int_eq(kb_preflight_match(&db, &rep, reason, sizeof(reason)), 0);
    ck_assert_int_eq(read_pieces(&db, HEAD "Content-Type: application/json\r\nContent-Length: 29\r\n\r\n"
                                 "{\"id\":0,\"randomNumber\":98765}", 6, 0, &rep), KB_RESP_DONE);
    ck_assert_int_eq(kb_preflight_match(&db, &rep, reason, sizeof(reason)), -1);
    ck_assert_ptr_nonnull(strstr(reason, "differs from the contract"));
}
END_TEST

/* Framing the parser refuses, and a body delimited by the close. */
START_TEST(malformed_and_until_close)
{
    struct kb_http_reply rep;
    ck_assert_int_eq(read_pieces(&plaintext, "SSH-2.0-OpenSSH\r\n", 0, 0, &rep), KB_RESP_MALFORMED);
    ck_assert_int_eq(read_pieces(&plaintext, HEAD "Transfer-Encoding: chunked\r\n\r\nzz\r\n", 2, 0, &rep),
                     KB_RESP_MALFORMED);
    ck_assert_int_eq(read_pieces(&plaintext, HEAD "Content-Length: 13\r\n\r\nHello", 0, 1, &rep),
                     KB_RESP_MALFORMED);
    ck_assert_int_eq(read_pieces(&plaintext, "HTTP/1.0 200 OK\r\nServer: x\r\nDate: d\r\n"
                                 "Content-Type: text/plain\r\n\r\nHello, World!", 4, 1, &rep), KB_RESP_DONE);
    ck_assert(rep.status_ok && rep.ct_ok && rep.body_ok);
    ck_assert_int_eq(kb_preflight_match(&plaintext, &rep, reason, sizeof(reason)), -1);
    ck_assert_str_eq(reason, "/plaintext: missing header(s): Content-Length");
}
END_TEST

/* Read against no route (the soak's /stats): the body is kept de-chunked, a long one cut
 * and flagged, and nothing is judged. */
START_TEST(any_reply_keeps_its_body)
{
    static char big[sizeof(HEAD) + 64 + 5000];
    struct kb_http_reply rep;
    int n;
    ck_assert_int_eq(read_pieces(NULL, HEAD "Transfer-Encoding: chunked\r\n\r\n"
                                 "4\r\n{\"a\"\r\n3\r\n:1}\r\n0\r\n\r\n", 3, 0, &rep), KB_RESP_DONE);
    ck_assert_str_eq(rep.body, "{\"a\":1}");
    ck_assert_uint_eq(rep.body_len, 7);
    ck_assert_int_eq(rep.judged, 0);
    ck_assert_int_eq(kb_preflight_match(&plaintext, &rep, reason, sizeof(reason)), -1);
    n = snprintf(big, sizeof(big), HEAD "Content-Length: 5000\r\n\r\n");
    memset(big + n, 'x', 5000);
    big[n + 5000] = '\0';
    ck_assert_int_eq(read_pieces(NULL, big, 1000, 0, &rep), KB_RESP_DONE);
    ck_assert_uint_eq(rep.body_len, sizeof(rep.body) - 1);
    ck_assert_int_eq(rep.body_truncated, 1);
}
END_TEST

/* ---- the socket path: a one-shot server in a child process ---------------------------- */

static void sleep_ms(long ms)
{
    struct timespec ts = { ms / 1000, (ms % 1000) * 1000000L };
    nanosleep(&ts, NULL);
}

/* Listens on 127.0.0.1 (port in *port), answers one connection with the pieces (NULL-ended),
 * 20 ms apart, then closes; hold_ms > 0: holds the connection that long first, silent. */
static pid_t serve(const char *const *pieces, long hold_ms, int *port)
{
    struct sockaddr_in a = { .sin_family = AF_INET, .sin_addr.s_addr = htonl(INADDR_LOOPBACK) };
    socklen_t len = sizeof(a);
    int ls = socket(AF_INET, SOCK_STREAM, 0);
    pid_t pid;
    ck_assert_int_ge(ls, 0);
    ck_assert_int_eq(bind(ls, (struct sockaddr *)&a, sizeof(a)), 0);
    ck_assert_int_eq(listen(ls, 4), 0);
    ck_assert_int_eq(getsockname(ls, (struct sockaddr *)&a, &len), 0);
    *port = ntohs(a.sin_port);
    if ((pid = fork()) == 0) {
        char req[1024];
        int c = accept(ls, NULL, NULL);
        if (c < 0 || read(c, req, sizeof(req)) <= 0)
            _exit(1);
        sleep_ms(hold_ms);
        for (size_t i = 0; pieces && pieces[i]; i++) {
            if (write(c, pieces[i], strlen(pieces[i])) < 0)
                _exit(1);
            sleep_ms(20);
        }
        close(c);
        _exit(0);
    }
    close(ls);
    ck_assert_int_gt(pid, 0);
    return pid;
}

static void reap(pid_t pid)
{
    int status;
    kill(pid, SIGKILL);
    waitpid(pid, &status, 0);
}

START_TEST(socket_reply_in_pieces)
{
    static const char *const pieces[] = {
        "HTTP/1.1 200 OK\r\nServer: x\r\nDa", "te: d\r\nContent-Type: text/plain\r\nTransfer-Enc",
        "oding: chunked\r\n\r\n5\r\nHello\r\n", "8\r\n, World!\r\n0\r\n\r\n", NULL,
    };
    static const char *const lengths[] = {
        HEAD "Content-Type: text/plain\r\nContent-Le", "ngth: 13\r\n\r\nHello,", " World!", NULL,
    };
    int port;
    pid_t pid = serve(lengths, 0, &port);
    ck_assert_int_eq(kb_preflight_route(port, &plaintext, reason, sizeof(reason)), 0);
    reap(pid);
    /* chunked over three reads: read whole, judged on the header the contract requires */
    pid = serve(pieces, 0, &port);
    ck_assert_int_eq(kb_preflight_route(port, &plaintext, reason, sizeof(reason)), -1);
    ck_assert_str_eq(reason, "/plaintext: missing header(s): Content-Length");
    reap(pid);
}
END_TEST

START_TEST(socket_closed_or_silent)
{
    static const char *const half[] = { HEAD "Content-Length: 13\r\n\r\nHello", NULL };
    struct kb_http_reply rep;
    int port;
    pid_t pid = serve(NULL, 0, &port);
    ck_assert_int_eq(kb_preflight_route(port, &plaintext, reason, sizeof(reason)), -1);
    ck_assert_str_eq(reason, "GET /plaintext: connection closed before any reply");
    reap(pid);
    pid = serve(half, 0, &port);
    ck_assert_int_eq(kb_preflight_route(port, &plaintext, reason, sizeof(reason)), -1);
    ck_assert_str_eq(reason, "GET /plaintext: malformed reply: connection closed mid-response");
    reap(pid);
    pid = serve(NULL, 2000, &port);
    ck_assert_int_eq(kb_http_get(port, "/stats", 100, &rep, err, sizeof(err)), -1);
    ck_assert_str_eq(err, "GET /stats: no complete reply within 100 ms");
    reap(pid);
}
END_TEST

/* Listens on 127.0.0.1 (port in *port) and answers up to per_conn requests on each of up
 * to nconn connections, one after another, with a body naming its connection and request
 * ("c1r2"), then closes that connection. */
static pid_t serve_kept(int per_conn, int nconn, int *port)
{
    struct sockaddr_in a = { .sin_family = AF_INET, .sin_addr.s_addr = htonl(INADDR_LOOPBACK) };
    socklen_t len = sizeof(a);
    int ls = socket(AF_INET, SOCK_STREAM, 0);
    pid_t pid;
    ck_assert_int_ge(ls, 0);
    ck_assert_int_eq(bind(ls, (struct sockaddr *)&a, sizeof(a)), 0);
    ck_assert_int_eq(listen(ls, 4), 0);
    ck_assert_int_eq(getsockname(ls, (struct sockaddr *)&a, &len), 0);
    *port = ntohs(a.sin_port);
    if ((pid = fork()) == 0) {
        for (int k = 1; k <= nconn; k++) {
            char req[1024], resp[256];
            int c = accept(ls, NULL, NULL);
            for (int r = 1; c >= 0 && r <= per_conn && read(c, req, sizeof(req)) > 0; r++) {
                int n = snprintf(resp, sizeof(resp), HEAD "Content-Type: text/plain\r\n"
                                 "Content-Length: 4\r\n\r\nc%dr%d", k, r);
                if (write(c, resp, (size_t)n) != n)
                    _exit(1);
            }
            close(c);
        }
        _exit(0);
    }
    close(ls);
    ck_assert_int_gt(pid, 0);
    return pid;
}

/* Many GETs on one kept connection; one the server closed is reopened and the GET retried
 * once, so no read is lost; a fresh connection that fails is not retried. */
START_TEST(kept_connection_reused_and_reopened)
{
    static const char *const want[] = { "c1r1", "c1r2", "c1r3", "c2r1", "c2r2" };
    struct kb_http_conn c;
    struct kb_http_reply rep;
    int port;
    pid_t pid = serve_kept(3, 2, &port);
    kb_http_conn_init(&c, NULL, port);
    for (size_t i = 0; i < 5; i++) {
        ck_assert_msg(kb_http_conn_get(&c, "/stats", 1000, &rep, err, sizeof(err)) == 0,
                      "%zu: %s", i, err);
        ck_assert_int_eq(rep.status, 200);
        ck_assert_str_eq(rep.body, want[i]);
        ck_assert_int_eq(c.opened, i < 3 ? 1 : 2);
    }
    kb_http_conn_close(&c);
    reap(pid);
    kb_http_conn_init(&c, NULL, port);                 /* nothing listens there now */
    ck_assert_int_eq(kb_http_conn_get(&c, "/stats", 200, &rep, err, sizeof(err)), -1);
    ck_assert_msg(strstr(err, "connect 127.0.0.1:") != NULL, "%s", err);
    ck_assert_int_eq(c.fd, -1);
}
END_TEST

static Suite *suite(void)
{
    Suite *s = suite_create("preflight");
    TCase *tc = tcase_create("parse");
    TCase *net = tcase_create("socket");
    tcase_add_test(tc, content_length_at_every_split);
    tcase_add_test(tc, chunked_at_every_split);
    tcase_add_test(tc, passes_what_the_load_generator_passes);
    tcase_add_test(tc, wrong_status_type_body_named);
    tcase_add_test(tc, regex_body);
    tcase_add_test(tc, malformed_and_until_close);
    tcase_add_test(tc, any_reply_keeps_its_body);
    tcase_add_test(net, socket_reply_in_pieces);
    tcase_add_test(net, socket_closed_or_silent);
    tcase_add_test(net, kept_connection_reused_and_reopened);
    suite_add_tcase(s, tc);
    suite_add_tcase(s, net);
    return s;
}

int main(void)
{
    return kb_check_run(suite(), "preflight");
}
