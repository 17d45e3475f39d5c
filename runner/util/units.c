/* units.c -- duration and rate suffixes (units.h). */
#include "runner/util/units.h"

#include <errno.h>
#include <math.h>
#include <stdlib.h>
#include <string.h>

/* The plain decimal at the start of s ("10", "1.5", ".5", "2."), its length in *len; -1 when
 * there is none. strtod alone would also take "-1", "1e3", "0x10", "inf" and leading
 * spaces, none of which anyone means as a duration or a rate. */
static int plain_decimal(const char *s, double *v, size_t *len)
{
    size_t i = 0, digits = 0;
    int dot = 0;
    char buf[64];
    for (; s[i]; i++) {
        if (s[i] >= '0' && s[i] <= '9')
            digits++;
        else if (s[i] == '.' && !dot)
            dot = 1;
        else
            break;
    }
    if (!digits || i >= sizeof(buf))
        return -1;
    memcpy(buf, s, i);
    buf[i] = '\0';
    *v = strtod(buf, NULL);
    *len = i;
    return isfinite(*v) ? 0 : -1;
}

static int in_range(double v, double lo, double hi, double *out)
{
    if (!isfinite(v) || v < lo || v > hi)
        return -1;
    *out = v;
    return 0;
}

struct unit {
    const char *suffix;
    double scale;
};

/* A plain decimal followed by exactly one of the table's suffixes, scaled by it. */
static int parse_scaled(const char *s, const struct unit *units, size_t nunits, double lo,
                        double hi, double *out)
{
    double v;
    size_t n;
    if (!s || plain_decimal(s, &v, &n))
        return -1;
    for (size_t i = 0; i < nunits; i++)
        if (!strcmp(s + n, units[i].suffix))
            return in_range(v * units[i].scale, lo, hi, out);
    return -1;
}

int kb_parse_duration(const char *s, double lo, double hi, double *out)
{
    static const struct unit seconds[] = {
        { "", 1 }, { "s", 1 }, { "ms", 1e-3 }, { "us", 1e-6 }, { "m", 60 }, { "h", 3600 },
    };
    return parse_scaled(s, seconds, sizeof(seconds) / sizeof(seconds[0]), lo, hi, out);
}

int kb_parse_rate(const char *s, double lo, double hi, double *out)
{
    static const struct unit per_second[] = {
        { "", 1 }, { "k", 1e3 }, { "K", 1e3 }, { "M", 1e6 },
    };
    return parse_scaled(s, per_second, sizeof(per_second) / sizeof(per_second[0]), lo, hi, out);
}

int kb_parse_number(const char *s, int percent, double lo, double hi, double *out)
{
    static const struct unit plain[] = { { "", 1 }, { "%", 1 } };
    return parse_scaled(s, plain, percent ? 2 : 1, lo, hi, out);
}

int kb_parse_whole(const char *s, long lo, long hi, long *out)
{
    char *end;
    long v;
    if (!s || *s < '0' || *s > '9')      /* strtol would skip spaces and take a sign */
        return -1;
    errno = 0;
    v = strtol(s, &end, 10);
    if (errno || *end || v < lo || v > hi)
        return -1;
    *out = v;
    return 0;
}
