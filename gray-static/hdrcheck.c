/* hdrcheck.c -- see hdrcheck.h.
 *
 * On 0.9.75 (the version guard below) the checks that need the bytes libmicrohttpd does not
 * hand over read its own request buffer, within bounds it states: a target cut short by a
 * NUL is told by the byte after the target's terminator (the version, or the line's end),
 * and what is left of the head once parsed lies between the request line's start (the
 * method) and MHD_CONNECTION_INFO_REQUEST_HEADER_SIZE bytes on.
 *
 * The NUL check reads libmicrohttpd 0.9.75's own request buffer (verified on that version
 * only, hence the version guard): it parses headers in place, turning each line's CR and LF
 * into NULs, so a value's terminating NUL is followed only by NULs up to the next header's
 * name, and the last value by at least two NULs (its line end and the empty line's). A
 * non-NUL byte in that gap is the rest of a value that held a NUL. Every header lives in the
 * connection's one memory pool, so a gap shorter than the pool never leaves it; a name
 * before its predecessor's value (MHD moved it) is not judged. An obsolete folded line may
 * be refused this way too, which RFC 9112 5.2 allows.
 *
 * The framing checks cost a few compares per field: every request's fields are walked once
 * anyway for the name check, and the load generator sends one or two. */
#define _POSIX_C_SOURCE 200809L
#include "gray-static/hdrcheck.h"

#include <string.h>
#include <strings.h>

#if MHD_VERSION >= 0x00097000 && MHD_VERSION < 0x00097600
#define GS_CHECK_NUL_LAYOUT 1
#else
#define GS_CHECK_NUL_LAYOUT 0 /* newer parsers reject a NUL themselves */
#endif

int gs_field_name_ok(const char *name, size_t len)
{
    static const char extra[] = "!#$%&'*+-.^_`|~";

    if (len == 0)
        return 0;
    for (size_t i = 0; i < len; i++) {
        unsigned char c = (unsigned char)name[i];
        if (!((c >= '0' && c <= '9') || (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') ||
              (c && strchr(extra, c))))
            return 0;
    }
    return 1;
}

/* unreserved, sub-delims, pct-encoded's %, the port's colon, an IP-literal's brackets
 * (RFC 3986 3.2.2): the character set Go's net/http checks too. Anything else (space, "/",
 * "@", "?", "#", a control) cannot be in a host. A switch, not strchr: every request's Host
 * goes through here. */
static int host_char(unsigned char c)
{
    if ((c >= '0' && c <= '9') || (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z'))
        return 1;
    switch (c) {
    case '-': case '.': case '_': case '~': case '!': case '$': case '&': case '\'':
    case '(': case ')': case '*': case '+': case ',': case ';': case '=': case '%':
    case ':': case '[': case ']':
        return 1;
    default:
        return 0;
    }
}

int gs_host_ok(const char *v, size_t len)
{
    for (size_t i = 0; i < len; i++)
        if (!host_char((unsigned char)v[i]))
            return 0;
    return 1;
}

int gs_target_ok(const char *t, size_t len)
{
    size_t i = 1;

    for (size_t j = 0; j < len; j++)
        if ((unsigned char)t[j] <= ' ' || t[j] == 0x7f)
            return 0;
    if (len == 0)
        return 0;
    if (t[0] == '/' || (len == 1 && t[0] == '*'))
        return 1;
    /* absolute-form: scheme = ALPHA *( ALPHA / DIGIT / "+" / "-" / "." ), then ":" */
    if (!((t[0] >= 'a' && t[0] <= 'z') || (t[0] >= 'A' && t[0] <= 'Z')))
        return 0;
    while (i < len && ((t[i] >= 'a' && t[i] <= 'z') || (t[i] >= 'A' && t[i] <= 'Z') ||
                       (t[i] >= '0' && t[i] <= '9') || t[i] == '+' || t[i] == '-' ||
                       t[i] == '.'))
        i++;
    return i < len && t[i] == ':';
}

int gs_field_value_ok(const char *v, size_t len)
{
    for (size_t i = 0; i < len; i++)
        if (((unsigned char)v[i] < ' ' && v[i] != '\t') || v[i] == 0x7f)
            return 0;
    return 1;
}

/* 1*DIGIT that a signed 64-bit length holds (RFC 9110 8.6; Go and nginx refuse more). */
static int parse_length(const char *v, size_t len, unsigned long long *out)
{
    unsigned long long n = 0;

    if (!v || len == 0 || len > 19)
        return -1;
    for (size_t i = 0; i < len; i++) {
        if (v[i] < '0' || v[i] > '9')
            return -1;
        n = n * 10 + (unsigned)(v[i] - '0');
    }
    if (n > 9223372036854775807ULL)
        return -1;
    *out = n;
    return 0;
}

static int is(const char *name, size_t len, const char *lit, size_t lit_len)
{
    return len == lit_len && !strncasecmp(name, lit, len);
}

#define IS(name, len, lit) is(name, len, lit, sizeof(lit) - 1)

int gs_head_field(struct gs_head_walk *w, const char *name, size_t name_len, const char *value,
                  size_t value_len)
{
    /* A bare CR: RFC 9110 5.5 lets a recipient refuse it or read it as a space; refused, as
     * Go, node and nginx do, with every other control but HTAB (Go and node refuse them). */
    if (!gs_field_name_ok(name, name_len) || (value && !gs_field_value_ok(value, value_len)))
        w->bad = 1;
    else if (IS(name, name_len, MHD_HTTP_HEADER_HOST)) {
        w->hosts++;
        if (value && !gs_host_ok(value, value_len))
            w->bad = 1;
    } else if (IS(name, name_len, MHD_HTTP_HEADER_CONTENT_LENGTH)) {
        w->lengths++;
        if (parse_length(value, value ? value_len : 0, &w->length) < 0)
            w->bad = 1;
    }
    else if (IS(name, name_len, MHD_HTTP_HEADER_TRANSFER_ENCODING)) {
        w->codings++;
        w->chunked = value && IS(value, value_len, "chunked");
    }
    return w->bad ? -1 : 0;
}

unsigned gs_head_verdict(const struct gs_head_walk *w, int http10, unsigned long long body_max)
{
    /* RFC 9112 3.2: a second Host is a 400, and so is none in HTTP/1.1. RFC 9112 6.3: so
     * are two Content-Lengths (equal ones may be accepted, but MHD would frame by the first
     * whatever the second says, and no client needs to send two), and Content-Length beside
     * Transfer-Encoding is a smuggling attempt that must at least close the connection. */
    if (w->bad || w->hosts > 1 || w->lengths > 1 || (!http10 && w->hosts == 0))
        return MHD_HTTP_BAD_REQUEST;
    if (!w->codings)
        return w->lengths && w->length > body_max ? MHD_HTTP_CONTENT_TOO_LARGE : 0;
    /* RFC 9112 6.1: 501 for a coding the server does not do; two field lines are either a
     * coding applied twice or chunked not last. */
    if (w->codings > 1 || !w->chunked)
        return MHD_HTTP_NOT_IMPLEMENTED;
    return w->lengths || http10 ? MHD_HTTP_BAD_REQUEST : 0;
}

/* ---- over MHD's parsed request ---- */

struct walk {
    struct gs_head_walk w;
    const char *prev_end; /* the previous value's terminating NUL, or NULL */
    size_t pool;          /* the connection's memory pool size: no gap is longer */
};

/* Only NULs in [from, to), and no more than max of them: a line's end is one (LF) or two
 * (CR LF), so more is a NUL the client sent at the end of a value. 1 also when to is not
 * after from within the pool (MHD moved a folded line's name: not judged). */
static int gap_is_line_end(const char *from, const char *to, size_t pool, size_t max)
{
    if (to <= from || (size_t)(to - from) >= pool)
        return 1;
    if ((size_t)(to - from) > max)
        return 0;
    for (const char *p = from; p < to; p++)
        if (*p)
            return 0;
    return 1;
}

static enum MHD_Result check_one(void *cls, enum MHD_ValueKind kind, const char *key,
                                 size_t key_size, const char *value, size_t value_size)
{
    struct walk *k = cls;

    (void)kind;
    if (GS_CHECK_NUL_LAYOUT && k->prev_end && !gap_is_line_end(k->prev_end, key, k->pool, 2))
        k->w.bad = 1;
    else if (gs_head_field(&k->w, key, key_size, value, value_size) == 0) {
        k->prev_end = value ? value + value_size : NULL;
        return MHD_YES;
    }
    return MHD_NO;
}

unsigned gs_line_refusal(const char *t)
{
    size_t len = strlen(t);

    if (!gs_target_ok(t, len))
        return MHD_HTTP_BAD_REQUEST;
    /* 0.9.75 ends the target with a NUL where the space before the version was (or the
     * line ended), so the next byte is the version's "H" or the line end's NUL: anything
     * else follows a NUL the client put inside the target. */
    if (GS_CHECK_NUL_LAYOUT && t[len + 1] != '\0' && strncmp(t + len + 1, "HTTP/", 5))
        return MHD_HTTP_BAD_REQUEST;
    return 0;
}

/* After the last value, up to the end of the head MHD counted from the method: its line's
 * end and the empty line, two to four NULs. Anything else there (a line MHD dropped, such
 * as one with no name before its colon, or a NUL at the end of the value) is refused. */
static int tail_is_head_end(const struct walk *k, struct MHD_Connection *c, const char *method)
{
    const union MHD_ConnectionInfo *ci =
        MHD_get_connection_info(c, MHD_CONNECTION_INFO_REQUEST_HEADER_SIZE);
    const char *end;

    if (!GS_CHECK_NUL_LAYOUT || !k->prev_end || !ci || !method)
        return 1;
    end = method + ci->header_size;
    if (end <= k->prev_end || (size_t)(end - method) > k->pool)
        return 1;          /* not the layout this reads: not judged */
    return gap_is_line_end(k->prev_end, end, k->pool, 4);
}

unsigned gs_head_refusal(struct MHD_Connection *c, size_t pool, const char *method,
                         const char *version)
{
    struct walk k = { .pool = pool };
    int http10 = !version || strncmp(version, "HTTP/1.", 7) || !strcmp(version, "HTTP/1.0");

    /* RFC 9112 3.1: the method is a token */
    if (!method || !gs_field_name_ok(method, strlen(method)))
        return MHD_HTTP_BAD_REQUEST;
    MHD_get_connection_values_n(c, MHD_HEADER_KIND, check_one, &k);
    if (!k.w.bad && !tail_is_head_end(&k, c, method))
        k.w.bad = 1;
    return gs_head_verdict(&k.w, http10, GS_BODY_MAX);
}
