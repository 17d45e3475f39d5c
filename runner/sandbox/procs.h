/* procs.h -- samples a set of processes from /proc: CPU time, RSS, PSS, descriptors, threads.
 *
 * Shared by the curve (server samples every second) and anything else that watches a
 * fixture. Pure reads of /proc; a PID that vanished mid-sample is skipped, not an error. */
#ifndef KB_PROCS_H
#define KB_PROCS_H

#include <stddef.h>
#include <sys/types.h>

struct kb_proc_sample {
    double cpu_seconds;        /* utime + stime summed over the processes */
    long long rss_bytes;
    long long pss_bytes;       /* from smaps_rollup; -1 when no process offered it */
    long fds;
    long threads;
    size_t nprocs;             /* processes actually read */
};

/* What /proc/PID/stat says of one process (proc(5) fields 3-6, 14, 15, 20, 22). */
struct kb_proc_stat {
    char state;                /* 'R', 'S', 'Z', ... */
    pid_t ppid, pgrp, sid;
    unsigned long utime, stime; /* clock ticks */
    long threads;
    unsigned long long start;  /* clock ticks since boot */
};

/* The text of a /proc/PID/stat, wherever it was read, into st: 0, or -1 when it is not
 * one. The command may hold spaces and parentheses ("123 (a (b) c) S 1 ..."). */
int kb_procs_stat_parse(const char *text, struct kb_proc_stat *st);

/* This host's /proc/PID/stat, parsed: 0, or -1 when the process is gone. */
int kb_procs_stat(pid_t pid, struct kb_proc_stat *st);

/* Sum over pids[0..n). Always succeeds; fields count only the processes that were read. */
void kb_procs_sample(const pid_t *pids, size_t n, struct kb_proc_sample *out);

/* The CPU time the live threads of pids have run, in seconds to the nanosecond (each
 * thread's /proc/PID/task/TID/schedstat), where /proc/PID/stat counts in 10 ms ticks: a
 * short measurement of a cheap server needs it. Threads that exited are not counted. NAN
 * when none could be read. */
double kb_procs_cpu_precise(const pid_t *pids, size_t n);

/* pid's start time (clock ticks since boot), which tells it from a later process given the
 * same PID; -1 when there is no such process. */
long long kb_procs_start_time(pid_t pid);

/* 1 while pid exists and is not a zombie: a runner killed with -9 stays a zombie until its
 * parent reaps it, and owns nothing any more. */
int kb_procs_running(pid_t pid);

/* root, every process of the session root leads (sid == root), and every descendant of
 * those by parent PID, including those that started sessions of their own (nginx and
 * php-fpm under php-fpm/run.sh): at most max, the count. What a fixture run without a
 * cgroup is made of. */
size_t kb_procs_tree(pid_t root, pid_t *out, size_t max);

/* Every process of the session sid (sid == its leader's PID, whether the leader still runs
 * or not): at most max, the count. */
size_t kb_procs_session(pid_t sid, pid_t *out, size_t max);

#endif
