/* opts.c -- the shared bounds and the one way to read a number option (opts.h). */
#include "runner/util/opts.h"

#include <math.h>
#include <stdio.h>
#include <string.h>

#include "runner/util/cpulist.h"
#include "runner/util/units.h"

#define HOUR 3600.0

const struct kb_bound kb_bounds[KB_B_COUNT] = {
    [KB_B_THREADS] = { 1, 256, 0, 0 },
    [KB_B_CONNECTIONS] = { 1, 60000, 0, 0 },
    [KB_B_RATE] = { 0, 1e7, 1, 0 },
    [KB_B_DURATION] = { 0, 24 * HOUR, 1, 0 },
    [KB_B_WARMUP] = { 0, HOUR, 0, 0 },
    [KB_B_DRAIN] = { 0, 600, 0, 0 },
    [KB_B_TIMEOUT] = { 1e-3, HOUR, 0, 0 },
    [KB_B_TIMEOUT_MS] = { 1, HOUR * 1000, 0, 0 },
    [KB_B_CLIENT_US] = { 0, 1000, 0, 0 },
    [KB_B_REQLOG_LINES] = { 1, 100000000, 0, 0 },
    [KB_B_PLAN_RATE] = { 1, 1e7, 0, 1 },
    [KB_B_CLIENT_US_MAX] = { 0, HOUR * 1e6, 0, 0 },
    [KB_B_FRACTION] = { 0, 1, 0, 0 },
    [KB_B_DELIVERY] = { 0, 1, 1, 0 },
    [KB_B_P99_MS] = { 0, HOUR * 1000, 1, 0 },
    [KB_B_SETTLE] = { 0, HOUR, 0, 0 },
    [KB_B_INTERVAL] = { 1e-3, HOUR, 0, 0 },
    [KB_B_REPEATS] = { 1, 1000, 0, 0 },
    [KB_B_DB_POOL] = { 1, 10000, 0, 0 },
    [KB_B_PORT] = { 1, 65535, 0, 0 },
    [KB_B_LISTEN_PORT] = { 0, 65535, 0, 0 },
    [KB_B_PID] = { 1, 4194304, 0, 0 },
};

/* A duration as the user would type it: 24h, 10m, 30s, 500ms, 250us. */
static void fmt_seconds(char *out, size_t len, double s)
{
    if (s == 0)
        snprintf(out, len, "0");
    else if (s >= HOUR && fmod(s, HOUR) == 0)
        snprintf(out, len, "%gh", s / HOUR);
    else if (s >= 60 && fmod(s, 60) == 0)
        snprintf(out, len, "%gm", s / 60);
    else if (s >= 1)
        snprintf(out, len, "%gs", s);
    else if (s >= 1e-3)
        snprintf(out, len, "%gms", s * 1e3);
    else
        snprintf(out, len, "%gus", s * 1e6);
}

/* A rate as the user would type it: 10M, 20k, 500. */
static void fmt_rate(char *out, size_t len, double r)
{
    if (r >= 1e6 && fmod(r, 1e6) == 0)
        snprintf(out, len, "%gM", r / 1e6);
    else if (r >= 1e3 && fmod(r, 1e3) == 0)
        snprintf(out, len, "%gk", r / 1e3);
    else
        snprintf(out, len, "%g", r);
}

enum form { F_WHOLE, F_DURATION, F_RATE, F_FRACTION, F_NUMBER, F_PERCENT };

/* The refusal: "NAME must be FORM in RANGE (EXAMPLES), not 'V'". */
static int refuse(enum form f, const char *name, const char *v, const struct kb_bound *b,
                  char *err, size_t errlen)
{
    static const char *const what[] = { "a whole number", "a duration", "a rate",
                                        "a fraction", "a number", "a percentage" };
    static const char *const eg[] = { "", " (30, 30s, 500ms, 2m)", " (45000, 20k, 1.5k)", "",
                                      "", "" };
    char lo[32], hi[32];
    if (f == F_WHOLE) {
        snprintf(err, errlen, "%s must be a whole number in %.0f..%.0f, not '%s'", name, b->lo,
                 b->hi, v ? v : "");
        return -1;
    }
    if (f == F_DURATION) {
        fmt_seconds(lo, sizeof(lo), b->lo);
        fmt_seconds(hi, sizeof(hi), b->hi);
    } else if (f == F_RATE) {
        fmt_rate(lo, sizeof(lo), b->lo);
        fmt_rate(hi, sizeof(hi), b->hi);
    } else {
        snprintf(lo, sizeof(lo), "%.12g", b->lo);
        snprintf(hi, sizeof(hi), "%.12g", b->hi);
    }
    snprintf(err, errlen, "%s must be %s in %s%s, %s]%s%s, not '%s'", name,
             f == F_RATE && b->whole ? "a whole rate" : what[f], b->open_lo ? "(" : "[", lo, hi,
             f == F_RATE ? " req/s" : "", eg[f], v ? v : "");
    return -1;
}

/* v, already read within [lo, hi], within b: lo excluded when open, whole when asked. */
static int outside(double v, const struct kb_bound *b)
{
    return (b->open_lo && v <= b->lo) || (b->whole && v != floor(v));
}

int kb_opt_long(const char *name, const char *v, const struct kb_bound *b, long *out,
                char *err, size_t errlen)
{
    long n;
    if (kb_parse_whole(v, (long)ceil(b->lo), (long)floor(b->hi), &n) ||
        (b->open_lo && n <= b->lo))
        return refuse(F_WHOLE, name, v, b, err, errlen);
    *out = n;
    return 0;
}

int kb_opt_all_digits(const char *s)
{
    if (!s || !*s)
        return 0;
    for (; *s; s++)
        if (*s < '0' || *s > '9')
            return 0;
    return 1;
}

int kb_opt_pids(const char *v, long *out, int *n, char *err, size_t errlen)
{
    char word[32];
    long got[KB_OPT_PIDS_MAX];
    int k = *n, words = 0;
    memcpy(got, out, (size_t)k * sizeof(*out));
    for (const char *p = v ? v : ""; *p;) {
        size_t len = strcspn(p, ", \t\n");
        long pid;
        int seen = 0;
        if (len == 0) {
            p++;
            continue;
        }
        if (len >= sizeof(word))
            len = sizeof(word) - 1;   /* too long for a PID: refused below all the same */
        memcpy(word, p, len);
        word[len] = '\0';
        p += strcspn(p, ", \t\n");
        words++;
        if (kb_opt_long("--pid", word, KB_BOUND(PID), &pid, err, errlen))
            return -1;
        for (int i = 0; i < k; i++)
            seen |= got[i] == pid;
        if (seen)
            continue;
        if (k == KB_OPT_PIDS_MAX) {
            snprintf(err, errlen, "--pid: at most %d processes", KB_OPT_PIDS_MAX);
            return -1;
        }
        got[k++] = pid;
    }
    if (!words) {
        snprintf(err, errlen, "--pid '%s' names no process: give one PID or several "
                 "(--pid 12,13 or --pid \"12 13\")", v ? v : "");
        return -1;
    }
    memcpy(out, got, (size_t)k * sizeof(*out));
    *n = k;
    return 0;
}

int kb_opt_int(const char *name, const char *v, const struct kb_bound *b, int *out,
               char *err, size_t errlen)
{
    long n;
    /* every bound of an int option fits an int; the table is checked by the unit test */
    if (kb_opt_long(name, v, b, &n, err, errlen))
        return -1;
    *out = (int)n;
    return 0;
}

int kb_opt_duration(const char *name, const char *v, const struct kb_bound *b, double *out,
                    char *err, size_t errlen)
{
    double s = 0;
    if (kb_parse_duration(v, b->lo, b->hi, &s) || outside(s, b))
        return refuse(F_DURATION, name, v, b, err, errlen);
    *out = s;
    return 0;
}

int kb_opt_rate(const char *name, const char *v, const struct kb_bound *b, double *out,
                char *err, size_t errlen)
{
    double r = 0;
    if (kb_parse_rate(v, b->lo, b->hi, &r) || outside(r, b))
        return refuse(F_RATE, name, v, b, err, errlen);
    *out = r;
    return 0;
}

int kb_opt_rates(const char *name, const char *v, const struct kb_bound *b,
                 struct kb_rates *out, char *err, size_t errlen)
{
    char item[64];
    const char *p = v;
    out->n = 0;
    if (!v || !*v)
        return refuse(F_RATE, name, v, b, err, errlen);
    for (;;) {
        size_t n = strcspn(p, ",");
        double r;
        if (n >= sizeof(item))
            return refuse(F_RATE, name, v, b, err, errlen);
        memcpy(item, p, n);
        item[n] = '\0';
        if (kb_opt_rate(name, item, b, &r, err, errlen)) {
            size_t at = strlen(err);
            if (strchr(v, ',') && at < errlen)
                snprintf(err + at, errlen - at, " in '%s'", v);
            return -1;
        }
        if (out->n == KB_RATES_MAX) {
            snprintf(err, errlen, "%s: more than %d rates ('%.60s...')", name, KB_RATES_MAX, v);
            return -1;
        }
        out->v[out->n++] = (long)r;
        if (!p[n])
            return 0;
        p += n + 1;
    }
}

static int plain(enum form f, const char *name, const char *v, const struct kb_bound *b,
                 double *out, char *err, size_t errlen)
{
    double x = 0;
    if (kb_parse_number(v, f == F_PERCENT, b->lo, b->hi, &x) || outside(x, b))
        return refuse(f, name, v, b, err, errlen);
    *out = x;
    return 0;
}

int kb_opt_fraction(const char *name, const char *v, const struct kb_bound *b, double *out,
                    char *err, size_t errlen)
{
    return plain(F_FRACTION, name, v, b, out, err, errlen);
}

int kb_opt_number(const char *name, const char *v, const struct kb_bound *b, double *out,
                  char *err, size_t errlen)
{
    return plain(F_NUMBER, name, v, b, out, err, errlen);
}

int kb_opt_percent(const char *name, const char *v, const struct kb_bound *b, double *out,
                   char *err, size_t errlen)
{
    return plain(F_PERCENT, name, v, b, out, err, errlen);
}

int kb_opt_cpulist(const char *name, const char *v, char *err, size_t errlen)
{
    cpu_set_t set;
    char why[256];
    if (kb_cpulist_parse_online(v, &set, NULL, 0, why, sizeof(why)) >= 0)
        return 0;
    snprintf(err, errlen, "%s must be a CPU list of this host's online CPUs (0, 1-3, 0,2), "
             "not '%s' (%s)", name, v, why);
    return -1;
}

int kb_opt_dispatch(const char *v, int *per_connection)
{
    if (strcmp(v, "any") && strcmp(v, "per-connection"))
        return -1;
    *per_connection = !strcmp(v, "per-connection");
    return 0;
}
