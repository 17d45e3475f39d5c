/* cgfile.c -- cgroup file reading shared by the sandbox backends on this host (cgfile.h). */
#include "runner/sandbox/cgfile.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

int kb_cgfile_line(const char *dir, const char *file, char *out, size_t outlen)
{
    char path[1024];
    size_t n;
    FILE *f;
    snprintf(path, sizeof(path), "%s/%s", dir, file);
    out[0] = '\0';
    if (!(f = fopen(path, "re")))
        return -1;
    if (!fgets(out, (int)outlen, f))
        out[0] = '\0';
    fclose(f);
    n = strlen(out);
    while (n && (out[n - 1] == '\n' || out[n - 1] == '\r' || out[n - 1] == ' '))
        out[--n] = '\0';
    return 0;
}

long long kb_cgfile_limit(const char *dir, const char *file)
{
    char buf[64];
    long long v;
    if (kb_cgfile_line(dir, file, buf, sizeof(buf)) < 0 || !buf[0] || !strcmp(buf, "max"))
        return -1;
    v = atoll(buf);
    return v >= (1LL << 62) ? -1 : v;
}

size_t kb_cgfile_procs(const char *dir, pid_t *out, size_t max)
{
    char path[1024];
    size_t n = 0;
    long v;
    FILE *f;
    snprintf(path, sizeof(path), "%s/cgroup.procs", dir);
    if (!(f = fopen(path, "re")))
        return 0;
    while (n < max && fscanf(f, "%ld", &v) == 1)
        out[n++] = (pid_t)v;
    fclose(f);
    return n;
}

void kb_cgfile_read_back_v2(const char *dir, struct kb_limits_applied *o)
{
    char buf[128], q[32];
    if (kb_cgfile_line(dir, "cpu.max", buf, sizeof(buf)) == 0 &&
        sscanf(buf, "%31s %lld", q, &o->cpu_period_us) == 2)
        o->cpu_quota_us = strcmp(q, "max") ? atoll(q) : -1;
    kb_cgfile_line(dir, "cpuset.cpus.effective", o->cpuset, sizeof(o->cpuset));
    kb_cgfile_line(dir, "cpuset.mems.effective", o->cpuset_mems, sizeof(o->cpuset_mems));
    o->memory_bytes = kb_cgfile_limit(dir, "memory.max");
    o->memsw_bytes = kb_cgfile_limit(dir, "memory.swap.max");
    o->pids_max = kb_cgfile_limit(dir, "pids.max");
}

void kb_cgfile_read_back_v1(const char *const dirs[4], struct kb_limits_applied *o)
{
    o->cpu_quota_us = kb_cgfile_limit(dirs[0], "cpu.cfs_quota_us");
    o->cpu_period_us = kb_cgfile_limit(dirs[0], "cpu.cfs_period_us");
    kb_cgfile_line(dirs[1], "cpuset.cpus", o->cpuset, sizeof(o->cpuset));
    kb_cgfile_line(dirs[1], "cpuset.mems", o->cpuset_mems, sizeof(o->cpuset_mems));
    o->memory_bytes = kb_cgfile_limit(dirs[2], "memory.limit_in_bytes");
    o->memsw_bytes = kb_cgfile_limit(dirs[2], "memory.memsw.limit_in_bytes");
    o->pids_max = kb_cgfile_limit(dirs[3], "pids.max");
}
