/* procs.c -- /proc readers for kb_procs_sample(). */
#define _GNU_SOURCE
#include "runner/sandbox/procs.h"

#include <dirent.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

int kb_procs_stat_parse(const char *text, struct kb_proc_stat *st)
{
    /* the command may itself hold spaces and parentheses: the fields follow its last ')' */
    const char *p = strrchr(text, ')');
    int ppid, pgrp, sid;
    if (!p || sscanf(p + 1, " %c %d %d %d %*d %*d %*u %*u %*u %*u %*u %lu %lu %*d %*d %*d %*d "
                     "%ld %*d %llu", &st->state, &ppid, &pgrp, &sid, &st->utime, &st->stime,
                     &st->threads, &st->start) != 8)
        return -1;
    st->ppid = (pid_t)ppid;
    st->pgrp = (pid_t)pgrp;
    st->sid = (pid_t)sid;
    return 0;
}

int kb_procs_stat(pid_t pid, struct kb_proc_stat *st)
{
    char path[64], buf[1024];
    size_t len;
    FILE *f;
    snprintf(path, sizeof(path), "/proc/%ld/stat", (long)pid);
    if (!(f = fopen(path, "re")))
        return -1;
    len = fread(buf, 1, sizeof(buf) - 1, f);
    fclose(f);
    buf[len] = '\0';
    return kb_procs_stat_parse(buf, st);
}

static int read_stat(pid_t pid, double *cpu, long *threads)
{
    struct kb_proc_stat st;
    if (kb_procs_stat(pid, &st) < 0)
        return -1;
    *cpu = (double)(st.utime + st.stime) / (double)sysconf(_SC_CLK_TCK);
    *threads = st.threads;
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

static double tasks_cpu(pid_t pid, int *read)
{
    char path[96];
    struct dirent *e;
    double sum = 0;
    DIR *d;
    snprintf(path, sizeof(path), "/proc/%ld/task", (long)pid);
    if (!(d = opendir(path)))
        return 0;
    while ((e = readdir(d))) {
        unsigned long long ns;
        FILE *f;
        if (e->d_name[0] == '.')
            continue;
        snprintf(path, sizeof(path), "/proc/%ld/task/%.32s/schedstat", (long)pid, e->d_name);
        if (!(f = fopen(path, "r")))
            continue;
        if (fscanf(f, "%llu", &ns) == 1) {
            sum += (double)ns / 1e9;
            *read = 1;
        }
        fclose(f);
    }
    closedir(d);
    return sum;
}

double kb_procs_cpu_precise(const pid_t *pids, size_t n)
{
    double sum = 0;
    int read = 0;
    for (size_t i = 0; i < n; i++)
        sum += tasks_cpu(pids[i], &read);
    return read ? sum : NAN;
}

/* What /proc/PID/stat says of a process's place: state, parent, session, start time. */
struct stat_id {
    pid_t pid, ppid, sid;
    char state;
    long long start;
};

static int read_id(pid_t pid, struct stat_id *id)
{
    struct kb_proc_stat st;
    if (kb_procs_stat(pid, &st) < 0)
        return -1;
    id->pid = pid;
    id->ppid = st.ppid;
    id->sid = st.sid;
    id->state = st.state;
    id->start = (long long)st.start;
    return 0;
}

long long kb_procs_start_time(pid_t pid)
{
    struct stat_id id;
    return pid > 0 && read_id(pid, &id) == 0 ? id.start : -1;
}

int kb_procs_running(pid_t pid)
{
    struct stat_id id;
    return pid > 0 && read_id(pid, &id) == 0 && id.state != 'Z' && id.state != 'X';
}

/* Every process now, sorted by PID (readdir of /proc lists them in that order, but a
 * sort costs nothing and the search below relies on it). */
static struct stat_id *all_procs(size_t *n)
{
    DIR *d = opendir("/proc");
    struct dirent *e;
    struct stat_id *v = NULL, *more;
    size_t cap = 0;
    *n = 0;
    while (d && (e = readdir(d))) {
        pid_t p = (pid_t)atol(e->d_name);
        if (p <= 0)
            continue;
        if (*n == cap) {
            cap = cap ? cap * 2 : 512;
            if (!(more = realloc(v, cap * sizeof(*v))))
                break;
            v = more;
        }
        if (read_id(p, &v[*n]) == 0)
            (*n)++;
    }
    if (d)
        closedir(d);
    return v;
}

static int by_pid(const void *a, const void *b)
{
    pid_t x = ((const struct stat_id *)a)->pid, y = ((const struct stat_id *)b)->pid;
    return (x > y) - (x < y);
}

size_t kb_procs_tree(pid_t root, pid_t *out, size_t max)
{
    size_t n = 0, count = 0;
    struct stat_id *v = root > 0 ? all_procs(&n) : NULL;
    char *in = v ? calloc(n, 1) : NULL;
    int grew = 1;
    if (in)
        qsort(v, n, sizeof(*v), by_pid);
    /* to a fixed point: a child is taken once its parent is, whatever the order */
    while (in && grew) {
        grew = 0;
        for (size_t i = 0; i < n; i++) {
            struct stat_id key = { .pid = v[i].ppid }, *parent;
            if (in[i])
                continue;
            parent = bsearch(&key, v, n, sizeof(*v), by_pid);
            if (v[i].pid == root || v[i].sid == root || (parent && in[parent - v]))
                in[i] = grew = 1;
        }
    }
    for (size_t i = 0; in && i < n && count < max; i++)
        if (in[i])
            out[count++] = v[i].pid;
    free(in);
    free(v);
    return count;
}

size_t kb_procs_session(pid_t sid, pid_t *out, size_t max)
{
    DIR *d = opendir("/proc");
    struct dirent *e;
    size_t n = 0;
    if (!d || sid <= 0) {
        if (d)
            closedir(d);
        return 0;
    }
    while (n < max && (e = readdir(d))) {
        pid_t p = (pid_t)atol(e->d_name);
        if (p > 0 && getsid(p) == sid)
            out[n++] = p;
    }
    closedir(d);
    return n;
}
