/* procwatch.h -- a server the user runs, watched on a thread of its own while a load runs:
 * its processes' CPU time, RSS, PSS, descriptors and threads (runner/sandbox/procs.h), and
 * what the host withheld from the server's and the client's CPUs (runner/run/steal.h).
 *
 * Owns the thread, the samples (kept in memory and written as samples.csv), and the figures
 * drawn from them: the CPU per response over the load's measured interval, interpolated
 * between the samples around its ends, as the curve computes it (docs/report-format.md,
 * "cost"). The server is one or more process trees (--pid, or the processes found
 * listening on the target's port: each process, its session and every descendant) or a
 * cgroup's members (--cgroup); neither, and only the steal is sampled.
 * The thread blocks every signal; nothing here prints. */
#ifndef KB_PROCWATCH_H
#define KB_PROCWATCH_H

#include <jansson.h>
#include <sched.h>
#include <stddef.h>
#include <sys/types.h>

#include "runner/run/steal.h"
#include "runner/util/clock.h"

struct kb_procwatch_cfg {
    const pid_t *pids;           /* npids > 0: these processes and their descendants */
    int npids;
    const char *cgroup;          /* else, non-NULL: a cgroup v2 directory's members */
    const char *server_cpus;     /* cpulists whose steal is read; NULL: not read */
    const char *client_cpus;
    double every_s;              /* sampling period (> 0) */
};

struct kb_procwatch;

/* The thread started, its first sample taken. NULL with err. */
struct kb_procwatch *kb_procwatch_start(const struct kb_procwatch_cfg *cfg, char *err,
                                        size_t errlen);

/* One last sample, then the thread joined. The samples stay readable until free. */
void kb_procwatch_stop(struct kb_procwatch *w);
void kb_procwatch_free(struct kb_procwatch *w);

/* verdict.json's "server": CPU mean fraction, RSS/PSS/fds/threads/processes at their most,
 * the samples' count, and the CPU per response over [start, end] (CLOCK_MONOTONIC: the
 * load's measured interval) for the responses that ended in it (nulls when not measured:
 * no process watched, or the server gone). New reference. */
json_t *kb_procwatch_server_json(const struct kb_procwatch *w, kb_mono_t start, kb_mono_t end,
                                 double responses);

/* The steal tracks, for kb_steal_json() and kb_steal_could_decide(). */
const struct kb_steal_track *kb_procwatch_steal_server(const struct kb_procwatch *w);
const struct kb_steal_track *kb_procwatch_steal_client(const struct kb_procwatch *w);

/* samples.csv: t_s (from the first sample), cpu_s, cpu_fraction, rss_bytes, pss_bytes,
 * fds, threads, procs, server_steal_fraction, client_steal_fraction; a figure not read is
 * empty, never 0. Written atomically. 0, or -1 with err. */
int kb_procwatch_write_csv(const struct kb_procwatch *w, const char *path, char *err,
                           size_t errlen);

/* 1 when the watched server has no process left (it exited); 0 while it has one, and
 * without a server to watch. */
int kb_procwatch_gone(struct kb_procwatch *w);

/* The CPUs the server may run on, as a cpulist: the union of its processes' affinities
 * (cfg->pids) or the cgroup's effective cpuset; "" when neither says. */
void kb_procwatch_server_cpus(const struct kb_procwatch_cfg *cfg, char *out, size_t outlen);

/* The server's processes now: every tree of cfg->pids (each PID once), or the cgroup's
 * members; at most max, the count (0 without a server to watch). */
size_t kb_procwatch_procs(const struct kb_procwatch_cfg *cfg, pid_t *out, size_t max);

/* 1 when cfg names a server to watch (PIDs or a cgroup). */
int kb_procwatch_has_server(const struct kb_procwatch_cfg *cfg);

#endif
