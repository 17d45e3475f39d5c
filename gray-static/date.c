/* date.c -- IMF-fixdate with fixed English names (strftime's %a/%b follow the locale). */
#define _POSIX_C_SOURCE 200809L
#include "gray-static/date.h"

#include <stdio.h>

int gs_date_format(time_t t, char *buf, size_t len)
{
    static const char days[7][4] = { "Sun", "Mon", "Tue", "Wed", "Thu", "Fri", "Sat" };
    static const char months[12][4] = { "Jan", "Feb", "Mar", "Apr", "May", "Jun",
                                        "Jul", "Aug", "Sep", "Oct", "Nov", "Dec" };
    struct tm tm;

    if (len < GS_DATE_LEN + 1)
        return -1;
    buf[0] = '\0';
    if (!gmtime_r(&t, &tm) || tm.tm_year + 1900 < 0 || tm.tm_year + 1900 > 9999)
        return -1;
    snprintf(buf, len, "%s, %02d %s %04d %02d:%02d:%02d GMT", days[tm.tm_wday], tm.tm_mday,
             months[tm.tm_mon], tm.tm_year + 1900, tm.tm_hour, tm.tm_min, tm.tm_sec);
    return 0;
}

void gs_date_cache_init(struct gs_date_cache *c)
{
    c->sec = (time_t)-1;
    c->buf[0] = '\0';
}

const char *gs_date_get(struct gs_date_cache *c, time_t now)
{
    if (now != c->sec && gs_date_format(now, c->buf, sizeof(c->buf)) == 0)
        c->sec = now;
    return c->buf;
}
