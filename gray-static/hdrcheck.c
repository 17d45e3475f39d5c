/* hdrcheck.c -- see hdrcheck.h.
 *
 * The NUL check reads libmicrohttpd 0.9.75's own request buffer (verified on that version
 * only, hence the version guard): it parses headers in place, turning each line's CR and LF
 * into NULs, so a value's terminating NUL is followed only by NULs up to the next header's
 * name, and the last value by at least two NULs (its line end and the empty line's). A
 * non-NUL byte in that gap is the rest of a value that held a NUL. Every header lives in the
 * connection's one memory pool, so a gap shorter than the pool never leaves it; a name
 * before its predecessor's value (MHD moved it) is not judged. An obsolete folded line may
 * be refused this way too, which RFC 9112 5.2 allows. */
#define _POSIX_C_SOURCE 200809L
#include "gray-static/hdrcheck.h"

#include <string.h>

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

struct walk {
    int bad;
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
    struct walk *w = cls;

    (void)kind;
    if (!gs_field_name_ok(key, key_size) ||
        (GS_CHECK_NUL_LAYOUT && w->prev_end && !gap_is_nuls(w->prev_end, key, w->pool))) {
        w->bad = 1;
        return MHD_NO;
    }
    w->prev_end = value ? value + value_size : NULL;
    return MHD_YES;
}

int gs_headers_ok(struct MHD_Connection *c, size_t pool)
{
    struct walk w = { 0, NULL, pool };

    MHD_get_connection_values_n(c, MHD_HEADER_KIND, check_one, &w);
    /* The last value: its line end and the empty line both became NULs. */
    if (GS_CHECK_NUL_LAYOUT && !w.bad && w.prev_end && w.prev_end[1] != '\0')
        w.bad = 1;
    return !w.bad;
}
