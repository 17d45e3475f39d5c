/* launch.h -- the one way the runner starts a process: the fixtures (native sandbox),
 * calibrate's control server and load steps, the curve's load child, the docker save |
 * docker load that carries an image to another engine, and every command whose output
 * capture.c reads.
 *
 * Owns the fork, the child's setup between fork and exec, and telling the parent when that
 * setup or the exec failed. The child dies with the runner (parent-death signal), reads
 * /dev/null, writes stdout and stderr to a log (or to descriptors it is given), takes its CPU affinity, joins cgroups, may
 * start its own session, change directory and add to its environment, then execs. A step
 * that fails is reported back through a close-on-exec pipe, so kb_launch returns -1 with
 * err only once the child has been reaped: a caller never mistakes a child that could not
 * start for a server that died. Never prints. */
#ifndef KB_LAUNCH_H
#define KB_LAUNCH_H

#include <sched.h>               /* cpu_set_t (glibc defines the type without _GNU_SOURCE) */
#include <stddef.h>
#include <sys/types.h>

struct kb_launch {
    char *const *argv;          /* argv[0] is searched in PATH unless path is set */
    const char *path;           /* when set, what is executed (e.g. /proc/self/exe) */
    const char *log;            /* stdout and stderr; NULL: /dev/null. Not opened: inherited */
    int log_append;             /* append to log instead of truncating it */
    const cpu_set_t *cpus;      /* the child's affinity; NULL: inherited */
    const char *const *cgroups; /* NULL-terminated directories joined after the affinity */
    int new_session;            /* setsid(): the fixture and what it spawns are one session */
    const char *dir;            /* chdir here; NULL: stay */
    char *const *env_add;       /* NULL-terminated "KEY=value" added to the environment */
    const int *stdio;           /* NULL, or { stdin, stdout, stderr } the child takes in
                                   place of /dev/null and the log (-1: that one as without) */
};

/* Start l's child. Its PID once it has exec'd; -1 with err when the fork, the affinity, a
 * cgroup, the directory or the exec failed (the child reaped then). */
pid_t kb_launch(const struct kb_launch *l, char *err, size_t errlen);

#endif
