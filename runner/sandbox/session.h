/* session.h -- the record an unconstrained fixture leaves in its run directory
 * (KB_SANDBOX_SESSION_FILE: the boot, the runner's PID and start time, every fixture process
 * seen as PID and start time), and the sweep that stops what a dead runner's record proves
 * was its own.
 *
 * Without a cgroup nothing else proves a process is the runner's: PIDs are reused and a file
 * can be copied or planted. So the record must be a regular file of this user that no one
 * else may write (opened without following a link), of this boot, of a runner no longer
 * running; a process counts only while its PID still has the recorded start time, and what
 * it started is its own too. Every signal goes through a pidfd checked first, so a PID reused
 * in between is never hit. Anything else the record names is noted and left running. Nothing
 * here prints. */
#ifndef KB_SESSION_H
#define KB_SESSION_H

#include <stddef.h>
#include <sys/types.h>

#include "runner/util/paths.h"

#define KB_SESSION_MAX 512

/* A fixture's record while it runs: path "" when none is kept (no run directory, or the
 * first write failed). */
struct kb_session_rec {
    char path[KB_PATH_MAX];
    size_t n;
    pid_t pid[KB_SESSION_MAX];
    long long start[KB_SESSION_MAX];
};

/* Start rec for a fixture whose main process (our child) is leader, in rundir: the record
 * written with this runner, this boot and the leader. */
void kb_session_begin(struct kb_session_rec *rec, const char *rundir, pid_t leader);

/* The fixture's processes as the runner sees them now: any not yet recorded is added and
 * the record rewritten (only then). */
void kb_session_seen(struct kb_session_rec *rec, const pid_t *pids, size_t n);

/* The fixture is stopped: the record removed. */
void kb_session_end(struct kb_session_rec *rec);

/* What a dead runner's record in rundir proves was its own is killed (SIGKILL, waited for
 * up to 2 s) and the record removed. note gets what was left and why ("" when nothing).
 * 1 when it killed something, 0 otherwise. */
int kb_session_sweep(const char *rundir, char *note, size_t notelen);

#endif
