/* procs.c -- /proc readers for kb_procs_sample(). */
#define _GNU_SOURCE
#include "runner/procs.h"

#include <dirent.h>
#include <stdio.h>
#include <string.h>
#include <sys/resource.h>
#include <unistd.h>

/* utime, stime and num_threads from /proc/PID/stat; the comm field may hold spaces and
 * parentheses, so parsing starts after the LAST ')'. */
static int read_stat(pid_t pid, double *cpu, long *threads)
{
    char path[64], buf[1024], *p;
    unsigned long ut, st;
    long nth;
    size_t len;
    FILE *f;
    snprintf(path, sizeof(path), "/proc/%ld/stat", (long)pid);
    if (!(f = fopen(path, "re")))
        return -1;
    len = fread(buf, 1, sizeof(buf) - 1, f);
    fclose(f);
    buf[len] = '\0';
    if (!(p = strrchr(buf, ')')))
        return -1;
    /* fields after ')': 3 state ... 14 utime 15 stime ... 20 num_threads */
    if (sscanf(p + 2, "%*c %*d %*d %*d %*d %*d %*u %*u %*u %*u %*u %lu %lu %*d %*d %*d %*d %ld",
               &ut, &st, &nth) != 3)
        return -1;
    *cpu = (double)(ut + st) / (double)sysconf(_SC_CLK_TCK);
    *threads = nth;
    return 0;
}

static long long read_kb_field(const char *path, const char *key)
{
    char line[256];
    long long v = -1;
    size_t kl = strlen(key);
    FILE *f = fopen(path, "re");
    if (!f)
        return -1;
    while (fgets(line, sizeof(line), f))
        if (!strncmp(line, key, kl) && sscanf(line + kl, " %lld", &v) == 1)
            break;
    fclose(f);
    return v < 0 ? -1 : v * 1024;
}

static long count_fds(pid_t pid)
{
    char path[64];
    struct dirent *e;
    long n = 0;
    DIR *d;
    snprintf(path, sizeof(path), "/proc/%ld/fd", (long)pid);
    if (!(d = opendir(path)))
        return 0;
    while ((e = readdir(d)))
        if (e->d_name[0] != '.')
            n++;
    closedir(d);
    return n;
}

void kb_procs_sample(const pid_t *pids, size_t n, struct kb_proc_sample *out)
{
    char path[64];
    memset(out, 0, sizeof(*out));
    out->pss_bytes = -1;
    for (size_t i = 0; i < n; i++) {
        double cpu;
        long threads;
        long long rss, pss;
        if (read_stat(pids[i], &cpu, &threads) < 0)
            continue;
        snprintf(path, sizeof(path), "/proc/%ld/status", (long)pids[i]);
        rss = read_kb_field(path, "VmRSS:");
        snprintf(path, sizeof(path), "/proc/%ld/smaps_rollup", (long)pids[i]);
        pss = read_kb_field(path, "Pss:");
        out->cpu_seconds += cpu;
        out->threads += threads;
        out->rss_bytes += rss > 0 ? rss : 0;
        if (pss >= 0)
            out->pss_bytes = (out->pss_bytes < 0 ? 0 : out->pss_bytes) + pss;
        out->fds += count_fds(pids[i]);
        out->nprocs++;
    }
}

double kb_procs_self_cpu(int with_children)
{
    struct rusage ru;
    getrusage(with_children ? RUSAGE_CHILDREN : RUSAGE_SELF, &ru);
    return (double)ru.ru_utime.tv_sec + ru.ru_utime.tv_usec / 1e6 +
           (double)ru.ru_stime.tv_sec + ru.ru_stime.tv_usec / 1e6;
}
