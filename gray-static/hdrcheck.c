/* hdrcheck.c -- see hdrcheck.h.
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

static int is(const char *name, size_t len, const char *lit, size_t lit_len)
{
    return len == lit_len && !strncasecmp(name, lit, len);
}

#define IS(name, len, lit) is(name, len, lit, sizeof(lit) - 1)

int gs_head_field(struct gs_head_walk *w, const char *name, size_t name_len, const char *value,
                  size_t value_len)
{
    /* A bare CR: RFC 9110 5.5 lets a recipient refuse it or read it as a space; refused, as
     * Go, node and nginx do, rather than passed on to a route as it is now. */
    if (!gs_field_name_ok(name, name_len) || (value && memchr(value, '\r', value_len)))
        w->bad = 1;
    else if (IS(name, name_len, MHD_HTTP_HEADER_HOST)) {
        w->hosts++;
        if (value && !gs_host_ok(value, value_len))
            w->bad = 1;
    } else if (IS(name, name_len, MHD_HTTP_HEADER_CONTENT_LENGTH))
        w->lengths++;
    else if (IS(name, name_len, MHD_HTTP_HEADER_TRANSFER_ENCODING)) {
        w->codings++;
        w->chunked = value && IS(value, value_len, "chunked");
    }
    return w->bad ? -1 : 0;
}

unsigned gs_head_verdict(const struct gs_head_walk *w, int http10)
{
    /* RFC 9112 3.2: a second Host is a 400. RFC 9112 6.3: so are two Content-Lengths (equal
     * ones may be accepted, but MHD would frame by the first whatever the second says, and
     * no client needs to send two), and Content-Length beside Transfer-Encoding is a
     * smuggling attempt that must at least close the connection. */
    if (w->bad || w->hosts > 1 || w->lengths > 1)
        return MHD_HTTP_BAD_REQUEST;
    if (!w->codings)
        return 0;
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

/* Only NULs in [from, to); 1 also when to is not after from within the pool. */
static int gap_is_nuls(const char *from, const char *to, size_t pool)
{
    if (to <= from || (size_t)(to - from) >= pool)
        return 1;
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
    if (GS_CHECK_NUL_LAYOUT && k->prev_end && !gap_is_nuls(k->prev_end, key, k->pool))
        k->w.bad = 1;
    else if (gs_head_field(&k->w, key, key_size, value, value_size) == 0) {
        k->prev_end = value ? value + value_size : NULL;
        return MHD_YES;
    }
    return MHD_NO;
}

unsigned gs_head_refusal(struct MHD_Connection *c, size_t pool, const char *version)
{
    struct walk k = { .pool = pool };

    MHD_get_connection_values_n(c, MHD_HEADER_KIND, check_one, &k);
    /* The last value: its line end and the empty line both became NULs. */
    if (GS_CHECK_NUL_LAYOUT && !k.w.bad && k.prev_end && k.prev_end[1] != '\0')
        k.w.bad = 1;
    return gs_head_verdict(&k.w, k.w.codings && version && !strcmp(version, MHD_HTTP_VERSION_1_0));
}
