/* serverside.h -- the user's server beside the client (`kneebench knee`, `kneebench load`):
 * its processes (--pid, one or several; else, for a loopback target, every process
 * listening on the target's port, as `ss -ltnp` finds them: runner/util/portown.h), the
 * CPUs they may run on, and the client's CPUs chosen off them (--cpus, else what the
 * server's affinity leaves free, else all). Where the two must share a CPU it says so in
 * one sentence, for the terminal and the report, before anything is measured. Never
 * prints. */
#ifndef KB_SERVERSIDE_H
#define KB_SERVERSIDE_H

#include <sched.h>
#include <stddef.h>
#include <sys/types.h>

#include "runner/load/target.h"
#include "runner/util/opts.h"

struct kb_server_side {
    pid_t pids[KB_OPT_PIDS_MAX];
    int npids;
    int local;                /* the target is on loopback: the server shares this host */
    int by_port;              /* pids found listening on the target's port, not given */
    char cpus[256];           /* the server's CPUs (a cpulist), "" when unknown */
    char note[1024];          /* "server: PID 123 (python3), listening on port 8080; CPUs 0-1" */
    char client[256];         /* the client's CPUs, a cpulist */
    char shared[1024];        /* the sentence when the client shares the server's CPUs, or
                                 cannot know (the server's CPUs unknown); "" otherwise */
};

/* The server's processes and CPUs into s: the given PIDs, or with none given, no cgroup
 * and a loopback target, those listening on t's port. */
void kb_server_find(struct kb_server_side *s, const struct kb_target *t, const long *given,
                    int ngiven, const char *cgroup);

/* The server's CPUs when only a cgroup names it (its effective cpuset). */
void kb_server_cpus_of_cgroup(struct kb_server_side *s, const char *cgroup);

/* The client's CPUs into *set and s->client (cpus: --cpus, or NULL), this process kept on
 * them, and s->shared written. 0, or 2 with err (--cpus unusable, affinity refused). */
int kb_server_client_cpus(struct kb_server_side *s, const char *cpus, cpu_set_t *set,
                          char *err, size_t errlen);

#endif
