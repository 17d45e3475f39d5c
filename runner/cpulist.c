/* cpulist.c -- CPU list parsing for the run's placement (cpulist.h). */
#define _GNU_SOURCE
#include "runner/cpulist.h"

#include <stdio.h>
#include <stdlib.h>
#include <unistd.h>

int kb_cpulist_parse(const char *s, cpu_set_t *set, char *canon, size_t canonlen)
{
    long last = sysconf(_SC_NPROCESSORS_ONLN) - 1;
    size_t len = 0;
    int n = 0;
    CPU_ZERO(set);
    canon[0] = '\0';
    for (const char *p = s; *p;) {
        char *end;
        long a = strtol(p, &end, 10), b = a;
        if (end == p || a < 0)
            return -1;
        if (*end == '-') {
            p = end + 1;
            if (*p && *p != ',') {
                b = strtol(p, &end, 10);
                if (end == p)
                    return -1;
            } else {
                b = last;          /* "1-": to the last online CPU */
                end = (char *)p;
            }
        }
        if (*end && *end != ',')
            return -1;
        if (b > last)
            b = last;
        for (long i = a; i <= b && i < CPU_SETSIZE; i++, n++)
            CPU_SET((int)i, set);
        if (a <= b)
            len += (size_t)snprintf(canon + len, len < canonlen ? canonlen - len : 0,
                                    b > a ? "%s%ld-%ld" : "%s%ld", len ? "," : "", a, b);
        p = *end == ',' ? end + 1 : end;
    }
    return n > 0 ? n : -1;
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
