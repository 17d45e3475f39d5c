/* hdrcheck.h -- request-head checks that libmicrohttpd 0.9.75 leaves to the application.
 *
 * RFC 9112 3 and 5.1 and RFC 9110 5.5 require a 400 for a request line or a field line that
 * is not their grammar; 0.9.75 passes much of it through, where Go and nginx answer 400: a
 * method that is not a token (a control or 8-bit byte in it), a target that is no
 * origin-, absolute- or asterisk-form (no leading "/", a control, space or DEL in it, a NUL
 * that cuts it short: "GET /plaintext\0junk" was served as /plaintext), whitespace
 * between a field name and its colon, an empty field name, a control (NUL included, also at
 * the end of a value) in a field value, a bare CR. It also frames a body by the first of two
 * different Content-Lengths, passes a second Host and a Host that is no host (RFC 9112 3.2,
 * 6.3; RFC 9110 5.5, 7.2 require a 400), and waits for the close on a Transfer-Encoding
 * other than "chunked" (RFC 9112 6.1: 501 for a coding the server lacks). A Content-Length
 * that is no number a 64-bit length holds is a 400, and one over the body size the server
 * takes (no route reads a body) a 413 at once, not a wait for bytes that never come (RFC
 * 9110 15.5.14). A missing Host in HTTP/1.1 is judged here too (RFC 9112 3.2), rather than
 * by 0.9.75's strict mode, which answers it with its status line and headers twice. The
 * server asks gs_line_refusal() when the request line is in and gs_head_refusal() once per
 * request, when its head is in, and refuses at once, closing the connection, when either
 * names a status: the bytes after such a head cannot be framed. */
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
    unsigned long long length; /* the Content-Length's value (a bad one sets bad) */
};

/* The largest request body a request may announce (no route reads one: it is read and
 * dropped); past it, 413 at once. */
#define GS_BODY_MAX (1024 * 1024)

/* 1 when name[0..len) is a non-empty RFC 9110 token (the only legal field name, and the
 * only legal method). */
int gs_field_name_ok(const char *name, size_t len);
/* 1 when t[0..len) is a request target RFC 9112 3.2 allows as received: origin-form ("/"
 * first), absolute-form (a scheme, then ":"), or "*"; no control, space or DEL anywhere
 * (8-bit bytes pass, as Go and nginx take them, to a 404). */
int gs_target_ok(const char *t, size_t len);
/* 1 when v[0..len) holds no control but HTAB (RFC 9110 5.5: field-vchar, SP, HTAB, obs-text). */
int gs_field_value_ok(const char *v, size_t len);
/* 1 when v[0..len) is a Host value RFC 9110 7.2 allows: uri-host [":" port], that is
 * reg-name, IPv4 or IP-literal characters (empty is allowed: no authority). No userinfo. */
int gs_host_ok(const char *v, size_t len);
/* Take one field into w. 0, or -1 once w is refused for certain (no need to look further). */
int gs_head_field(struct gs_head_walk *w, const char *name, size_t name_len, const char *value,
                  size_t value_len);
/* 0 when a head with these fields may be served, else the status to refuse it with: 400,
 * 413 for a Content-Length over body_max, or 501 for a transfer coding other than chunked.
 * http10: the request line said HTTP/1.0 (which has no transfer codings, RFC 9112 6.1, and
 * no Host requirement, RFC 9112 3.2). */
unsigned gs_head_verdict(const struct gs_head_walk *w, int http10, unsigned long long body_max);
/* When the request line is in (libmicrohttpd's URI callback, before it decodes anything):
 * 0, or 400 for a target gs_target_ok refuses or (on 0.9.75) one that a NUL cut short. t is
 * where MHD left it: NUL-terminated, the version or the line's end right after. */
unsigned gs_line_refusal(const char *raw_target);
/* gs_head_verdict over every request header of c, the method's syntax and (on 0.9.75) what
 * is left of the head once parsed: a NUL in or at the end of a value, a line with no name.
 * pool is the connection memory limit the daemon was started with; method and version the
 * request line's, as MHD handed them over. */
unsigned gs_head_refusal(struct MHD_Connection *c, size_t pool, const char *method,
                         const char *version);

#endif
