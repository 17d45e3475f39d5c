/* backlog.c -- a queue that grew through the measured seconds (backlog.h). */
#define _GNU_SOURCE
#include "runner/run/curve/backlog.h"

#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#define SERIES_MAX (1 << 20)
#define SECONDS_MAX 4096

/* One data line: start_s,length_s,completed,achieved_rps,p50_us,... 1 with the fields the
 * rule reads, 0 for a line that is not one. A blank p50 (no latency that second) reads as
 * none. */
static int parse_line(const char *ln, double *start, double *length, double *p50, int *has)
{
    char *end;
    const char *f = ln;
    *start = strtod(f, &end);
    if (end == f || *end != ',')
        return 0;
    f = end + 1;
    *length = strtod(f, &end);
    if (end == f || *end != ',')
        return 0;
    for (int skip = 0; skip < 2; skip++) {            /* completed, achieved_rps */
        f = strchr(end + 1, ',');
        if (!f)
            return 0;
        end = (char *)f;
    }
    f = end + 1;
    *has = *f != ',' && *f != '\n' && *f;
    *p50 = *has ? strtod(f, &end) : 0;
    return !*has || end != f;
}

static void judge(const double *p50, int n, struct kb_backlog *b)
{
    b->seconds = n;
    if (n == 0)
        return;
    b->first_p50_us = p50[0];
    b->last_p50_us = p50[n - 1];
    if (n < 3 || p50[n - 1] < 2 * p50[0] || p50[n - 1] - p50[0] < KB_BACKLOG_RISE_US)
        return;
    for (int i = 1; i < n; i++)
        if (!(p50[i] > p50[i - 1]))
            return;
    b->grew = 1;
}

int kb_backlog_read(const char *csv, size_t len, double duration_s, struct kb_backlog *b)
{
    static double p50[SECONDS_MAX];
    const char *p = csv, *stop = csv + len;
    int n = 0, header = 1;
    memset(b, 0, sizeof(*b));
    while (p < stop && n < SECONDS_MAX) {
        const char *nl = memchr(p, '\n', (size_t)(stop - p));
        char line[512];
        size_t l = (size_t)((nl ? nl : stop) - p);
        double start, length, v;
        int has;
        snprintf(line, sizeof(line), "%.*s", (int)(l < sizeof(line) - 1 ? l : sizeof(line) - 1), p);
        p = nl ? nl + 1 : stop;
        if (header) {
            if (strncmp(line, "start_s,length_s,completed,achieved_rps,p50_us", 46))
                return -1;
            header = 0;
            continue;
        }
        if (!line[0])
            continue;
        if (!parse_line(line, &start, &length, &v, &has))
            return -1;
        /* the measured interval's whole seconds only: the drain answers what is left */
        if (length < 0.999 || start + length > duration_s + 1e-6 || !has)
            continue;
        p50[n++] = v;
    }
    if (header)
        return -1;
    judge(p50, n, b);
    return 0;
}

int kb_backlog_file(const char *path, double duration_s, struct kb_backlog *b)
{
    struct stat st;
    char *text;
    ssize_t got;
    int fd = open(path, O_RDONLY | O_NONBLOCK | O_CLOEXEC | O_NOFOLLOW), rc = -1;
    if (fd < 0)
        return -1;
    if (fstat(fd, &st) == 0 && S_ISREG(st.st_mode) && st.st_size <= SERIES_MAX &&
        (text = malloc((size_t)st.st_size + 1))) {
        got = read(fd, text, (size_t)st.st_size);
        if (got == st.st_size)
            rc = kb_backlog_read(text, (size_t)got, duration_s, b);
        free(text);
    }
    close(fd);
    return rc;
}
