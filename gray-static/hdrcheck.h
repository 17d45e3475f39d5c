/* hdrcheck.h -- request-head checks that libmicrohttpd 0.9.75 leaves to the application.
 *
 * RFC 9112 5.1 and RFC 9110 5.5 require a 400 for whitespace between a field name and its
 * colon and for a NUL inside a field value; 0.9.75 passes both through (it keeps "X-Name "
 * as the name, and cuts the value at the NUL). It also frames a body by the first of two
 * different Content-Lengths, passes a bare CR inside a value, a second Host and a Host that
 * is no host (RFC 9112 3.2, 6.3; RFC 9110 5.5, 7.2 require a 400), and waits for the close
 * on a Transfer-Encoding other than "chunked" (RFC 9112 6.1: 501 for a coding the server
 * lacks). The server asks gs_head_refusal() once per request, when its head is in, and
 * refuses at once, closing the connection, when it names a status: the bytes after such a
 * head cannot be framed. */
#ifndef GS_HDRCHECK_H
#define GS_HDRCHECK_H

#include <stddef.h>
#include <stdint.h>
#include <sys/types.h>
#include <sys/socket.h>
#include <microhttpd.h>

/* What the fields seen so far say about the request's framing. */
struct gs_head_walk {
    int bad;           /* a field RFC 9110/9112 refuse outright */
    unsigned hosts;    /* Host field lines */
    unsigned lengths;  /* Content-Length field lines */
    unsigned codings;  /* Transfer-Encoding field lines */
    int chunked;       /* a Transfer-Encoding is exactly "chunked", the one coding MHD decodes */
};

/* 1 when name[0..len) is a non-empty RFC 9110 token (the only legal field name). */
int gs_field_name_ok(const char *name, size_t len);
/* 1 when v[0..len) is a Host value RFC 9110 7.2 allows: uri-host [":" port], that is
 * reg-name, IPv4 or IP-literal characters (empty is allowed: no authority). No userinfo. */
int gs_host_ok(const char *v, size_t len);
/* Take one field into w. 0, or -1 once w is refused for certain (no need to look further). */
int gs_head_field(struct gs_head_walk *w, const char *name, size_t name_len, const char *value,
                  size_t value_len);
/* 0 when a head with these fields may be served, else the status to refuse it with: 400, or
 * 501 for a transfer coding other than chunked. http10: the request line said HTTP/1.0
 * (which has no transfer codings: RFC 9112 6.1 calls such framing faulty). */
unsigned gs_head_verdict(const struct gs_head_walk *w, int http10);
/* gs_head_verdict over every request header of c, plus (on 0.9.75) a NUL in a value. pool
 * is the connection memory limit the daemon was started with; version the request line's
 * (read only when a Transfer-Encoding is there). */
unsigned gs_head_refusal(struct MHD_Connection *c, size_t pool, const char *version);

#endif
