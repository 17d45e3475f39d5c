/* cpulist.c -- the CPU list parser and its two meanings (cpulist.h). */
#define _GNU_SOURCE
#include "runner/util/cpulist.h"

#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

/* One number at *p: 0 and *out, or -1 with why (not a digit, or negative). */
static int cpu_number(const char *s, const char **p, long *out, char *err, size_t errlen)
{
    char *end;
    if (**p < '0' || **p > '9') {
        snprintf(err, errlen, "bad CPU list '%s': expected a CPU number at offset %d", s,
                 (int)(*p - s));
        return -1;
    }
    errno = 0;
    *out = strtol(*p, &end, 10);
    if (errno == ERANGE)
        *out = CPU_SETSIZE;             /* far past any CPU: said below as such */
    *p = end;
    return 0;
}

/* One item: "N", "N-M" or "N-", into set. 0 with *p past it, or -1 with err. */
static int item(const char *s, const char **p, cpu_set_t *set, char *err, size_t errlen)
{
    long a, b;
    if (cpu_number(s, p, &a, err, errlen) < 0)
        return -1;
    b = a;
    if (**p == '-') {
        (*p)++;
        if (**p == '\0' || **p == ',')
            b = CPU_SETSIZE - 1;        /* open: the variants cut it to what exists */
        else if (cpu_number(s, p, &b, err, errlen) < 0)
            return -1;
    }
    if (**p != '\0' && **p != ',') {
        snprintf(err, errlen, "bad CPU list '%s': unexpected '%c' at offset %d", s, **p,
                 (int)(*p - s));
        return -1;
    }
    if (a >= CPU_SETSIZE) {
        snprintf(err, errlen, "bad CPU list '%s': CPU %ld is past the last one a CPU set "
                 "holds (%d)", s, a, CPU_SETSIZE - 1);
        return -1;
    }
    if (b < a) {
        snprintf(err, errlen, "bad CPU list '%s': range %ld-%ld runs backwards", s, a, b);
        return -1;
    }
    for (long c = a; c <= b && c < CPU_SETSIZE; c++)
        CPU_SET((int)c, set);
    return 0;
}

int kb_cpulist_parse_raw(const char *s, cpu_set_t *set, char *err, size_t errlen)
{
    const char *p = s;
    CPU_ZERO(set);
    if (!s || !*s) {
        snprintf(err, errlen, "empty CPU list");
        return -1;
    }
    for (;;) {
        if (item(s, &p, set, err, errlen) < 0)
            return -1;
        if (*p == '\0')
            break;
        p++;                            /* the ',': an item must follow it */
    }
    return CPU_COUNT(set);
}

int kb_cpulist_parse_online(const char *s, cpu_set_t *set, char *canon, size_t canonlen,
                            char *err, size_t errlen)
{
    long online = sysconf(_SC_NPROCESSORS_ONLN);
    cpu_set_t keep;
    if (canon && canonlen)
        canon[0] = '\0';
    if (kb_cpulist_parse_raw(s, set, err, errlen) < 0)
        return -1;
    CPU_ZERO(&keep);
    for (long c = 0; c < online && c < CPU_SETSIZE; c++)
        CPU_SET((int)c, &keep);
    CPU_AND(set, set, &keep);
    if (CPU_COUNT(set) == 0) {
        snprintf(err, errlen, "CPU list '%s' names no online CPU (%ld online: 0-%ld)", s,
                 online, online - 1);
        return -1;
    }
    if (canon && canonlen)
        kb_cpulist_format(set, canon, canonlen);
    return CPU_COUNT(set);
}

int kb_cpulist_parse_allowed(const char *s, cpu_set_t *set, char *err, size_t errlen)
{
    cpu_set_t allowed;
    char have[256];
    if (kb_cpulist_parse_raw(s, set, err, errlen) < 0)
        return -1;
    if (sched_getaffinity(0, sizeof(allowed), &allowed) < 0) {
        snprintf(err, errlen, "CPU list '%s': sched_getaffinity: %s", s, strerror(errno));
        return -1;
    }
    CPU_AND(set, set, &allowed);
    if (CPU_COUNT(set) == 0) {
        kb_cpulist_format(&allowed, have, sizeof(have));
        snprintf(err, errlen, "CPU list '%s' names no CPU this process may run on (%s)", s,
                 have);
        return -1;
    }
    return CPU_COUNT(set);
}

void kb_cpulist_format(const cpu_set_t *set, char *out, size_t outlen)
{
    size_t len = 0;
    out[0] = '\0';
    for (int a = 0; a < CPU_SETSIZE; a++) {
        int b = a;
        if (!CPU_ISSET(a, set))
            continue;
        while (b + 1 < CPU_SETSIZE && CPU_ISSET(b + 1, set))
            b++;
        len += (size_t)snprintf(out + len, len < outlen ? outlen - len : 0,
                                b > a ? "%s%d-%d" : "%s%d", len ? "," : "", a, b);
        a = b;
    }
}
