/* date.h -- the HTTP Date header value (IMF-fixdate, RFC 9110 section 5.6.7), cached per second.
 *
 * Formatting is pure and locale-free; the cache belongs to its one caller (the server) and
 * re-formats only when the second changes. */
#ifndef GS_DATE_H
#define GS_DATE_H

#include <stddef.h>
#include <time.h>

#define GS_DATE_LEN 29 /* "Sun, 06 Nov 1994 08:49:37 GMT" */

struct gs_date_cache {
    time_t sec;                 /* the second buf holds; (time_t)-1 when empty */
    char buf[GS_DATE_LEN + 1];
};

/* Write t as IMF-fixdate into buf (at least GS_DATE_LEN + 1 bytes). 0, or -1 when t cannot
 * be represented (buf then holds ""). */
int gs_date_format(time_t t, char *buf, size_t len);

void gs_date_cache_init(struct gs_date_cache *c);
/* The Date value for second now; the pointer stays valid until the next call. */
const char *gs_date_get(struct gs_date_cache *c, time_t now);

#endif
