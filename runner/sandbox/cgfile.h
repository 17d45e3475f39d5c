/* cgfile.h -- reads a cgroup's files, for both sandbox backends (native: the cgroups it
 * makes; docker: the container's): a file's first line, a limit as a number, the member
 * processes, and the limits read back from a cgroup v2 directory. Reading only; the
 * backends keep their own v1 directory layouts and everything they write. */
#ifndef KB_CGFILE_H
#define KB_CGFILE_H

#include "runner/sandbox/sandbox.h"

#include <stddef.h>
#include <sys/types.h>

/* dir/file's first line, trailing newline, CR and spaces removed ("" when the file is
 * empty); -1 with out "" when it cannot be opened. */
int kb_cgfile_line(const char *dir, const char *file, char *out, size_t outlen);

/* A limit from dir/file: its number, or -1 for "max", an unreadable or empty file, or
 * cgroup v1's page-rounded "unlimited" (2^62 and above). */
long long kb_cgfile_limit(const char *dir, const char *file);

/* The PIDs listed in dir/cgroup.procs, at most max; 0 when unreadable. */
size_t kb_cgfile_procs(const char *dir, pid_t *out, size_t max);

/* cpu.max, the effective cpuset and mems, memory.max, memory.swap.max (as memsw_bytes:
 * 0 = no swap) and pids.max of a v2 cgroup into o: an unreadable cpuset is "", an
 * unreadable limit -1, an unreadable cpu.max leaves the quota and period as they were. */
void kb_cgfile_read_back_v2(const char *dir, struct kb_limits_applied *o);

/* The same from cgroup v1's controller directories dirs[] = { cpu, cpuset, memory, pids }:
 * cfs quota and period, cpuset.cpus and .mems, memory.limit_in_bytes and
 * memory.memsw.limit_in_bytes (-1 when absent: no swap accounting), pids.max. */
void kb_cgfile_read_back_v1(const char *const dirs[4], struct kb_limits_applied *o);

#endif
