/* pin.h -- pins a running process tree to a CPU set and reads back where each process may
 * run, as evidence.
 *
 * Owns only that: for PostgreSQL, started by gray-static/pgcluster.sh, whose postmaster and
 * auxiliary processes already run when the runner learns its PID. Every thread of the root
 * and of each descendant (runner/sandbox/procs.h's tree) gets the set; later children (the
 * backends forked per connection) inherit it from the root. The read-back is the kernel's
 * own Cpus_allowed_list from /proc/<pid>/status, never what was asked. Never prints. */
#ifndef KB_PIN_H
#define KB_PIN_H

#include <jansson.h>
#include <sched.h>                 /* cpu_set_t (glibc defines the type without _GNU_SOURCE) */
#include <stddef.h>
#include <sys/types.h>

/* Pin root's tree to set. *record (new reference, also on failure when something was read):
 * {"cpus": LIST, "root_pid", "processes": [{pid, comm, cpus_allowed_list}], "all_pinned"}.
 * 0 when every process read back exactly set, or -1 with err (no such process, a refusal,
 * a process whose read-back differs). */
int kb_pin_tree(pid_t root, const cpu_set_t *set, json_t **record, char *err, size_t errlen);

/* pid's Cpus_allowed_list from /proc/<pid>/status into out; 0, or -1 when unreadable. */
int kb_pin_read_allowed(pid_t pid, char *out, size_t outlen);

#endif
