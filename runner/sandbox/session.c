/* session.c -- the session record and its sweep (session.h).
 *
 * The record, one item a line:
 *     kneebench-session 2
 *     boot BOOT_ID
 *     runner PID START
 *     proc PID START          (the leader first, then every process seen since)
 * START is /proc/PID/stat's start time (clock ticks since boot): with the boot's ID, a PID
 * and its start time name one process for ever. The first version of the record held
 * "runner start leader leader_start" and nothing tied it to a boot; it proves nothing and
 * is only named. */
#define _GNU_SOURCE
#include "runner/sandbox/session.h"
#include "runner/sandbox/procs.h"
#include "runner/sandbox/sandbox.h"
#include "runner/util/clock.h"
#include "runner/util/evidence.h"
#include "runner/util/paths.h"

#include <errno.h>
#include <fcntl.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/syscall.h>
#include <unistd.h>

#define REC_HEAD "kneebench-session 2"
#define REC_BYTES (64 * 1024)

/* This boot's ID, "" where the kernel has none. */
static void boot_id(char *out, size_t outlen)
{
    FILE *f = fopen("/proc/sys/kernel/random/boot_id", "re");
    out[0] = '\0';
    if (f) {
        if (fgets(out, (int)outlen, f))
            out[strcspn(out, "\n")] = '\0';
        fclose(f);
    }
}

static void write_rec(struct kb_session_rec *rec)
{
    char boot[64], err[256], *buf = malloc(REC_BYTES);
    size_t len = 0;
    if (!buf || !rec->path[0]) {
        free(buf);
        return;
    }
    boot_id(boot, sizeof(boot));
    len += (size_t)snprintf(buf + len, REC_BYTES - len, REC_HEAD "\nboot %s\nrunner %ld %lld\n",
                            boot, (long)getpid(), kb_procs_start_time(getpid()));
    for (size_t i = 0; i < rec->n && len < REC_BYTES; i++)
        len += (size_t)snprintf(buf + len, REC_BYTES - len, "proc %ld %lld\n",
                                (long)rec->pid[i], rec->start[i]);
    if (len >= REC_BYTES || kb_write_atomic(rec->path, buf, len, err, sizeof(err)) < 0)
        rec->path[0] = '\0';       /* a record that cannot be kept whole is not kept */
    free(buf);
}

static int recorded(const struct kb_session_rec *rec, pid_t pid, long long start)
{
    for (size_t i = 0; i < rec->n; i++)
        if (rec->pid[i] == pid && rec->start[i] == start)
            return 1;
    return 0;
}

/* Room for one more: the entries whose process is gone make it when the record is full. */
static int make_room(struct kb_session_rec *rec)
{
    size_t k = 0;
    if (rec->n < KB_SESSION_MAX)
        return 1;
    for (size_t i = 0; i < rec->n; i++)
        if (kb_procs_start_time(rec->pid[i]) == rec->start[i]) {
            rec->pid[k] = rec->pid[i];
            rec->start[k++] = rec->start[i];
        }
    rec->n = k;
    return rec->n < KB_SESSION_MAX;
}

static int add(struct kb_session_rec *rec, pid_t pid)
{
    long long start = kb_procs_start_time(pid);
    if (start < 0 || recorded(rec, pid, start) || !make_room(rec))
        return 0;
    rec->pid[rec->n] = pid;
    rec->start[rec->n++] = start;
    return 1;
}

void kb_session_begin(struct kb_session_rec *rec, const char *rundir, pid_t leader)
{
    rec->n = 0;
    rec->path[0] = '\0';
    if (!rundir)
        return;
    kb_path(rec->path, sizeof(rec->path), rundir, KB_SANDBOX_SESSION_FILE);
    add(rec, leader);
    write_rec(rec);
}

void kb_session_seen(struct kb_session_rec *rec, const pid_t *pids, size_t n)
{
    int grew = 0;
    if (!rec->path[0])
        return;
    for (size_t i = 0; i < n; i++)
        grew |= add(rec, pids[i]);
    if (grew)
        write_rec(rec);
}

void kb_session_end(struct kb_session_rec *rec)
{
    if (rec->path[0])
        unlink(rec->path);
    rec->path[0] = '\0';
}

/* ---- the sweep ---------------------------------------------------------------------------- */

/* A record read back: what it claims. */
struct claim {
    char boot[64];
    long runner;
    long long runner_start;
    size_t n;
    pid_t pid[KB_SESSION_MAX];
    long long start[KB_SESSION_MAX];
};

/* The record's text (no link followed), and whether this user can trust it: a regular
 * file of this user that no one else may write. 1 trusted, 0 no record, -1 not trusted
 * (why says; text holds what could be read, for a note). */
static int read_record(const char *path, char *buf, size_t cap, char *why, size_t whylen)
{
    int fd = open(path, O_RDONLY | O_NOFOLLOW | O_NONBLOCK | O_CLOEXEC), rc = 1;
    struct stat st;
    ssize_t len;
    buf[0] = '\0';
    if (fd < 0) {
        if (errno == ENOENT)
            return 0;
        snprintf(why, whylen, "cannot be opened as a plain file (%s)", strerror(errno));
        return -1;
    }
    if (fstat(fd, &st) < 0 || !S_ISREG(st.st_mode)) {
        snprintf(why, whylen, "is not a plain file");
        close(fd);
        return -1;
    }
    if (st.st_uid != geteuid() || (st.st_mode & (S_IWGRP | S_IWOTH))) {
        snprintf(why, whylen, "is not this user's own record (owner uid %ld, mode %04o; it "
                 "must be uid %ld's, writable by no one else)", (long)st.st_uid,
                 (unsigned)(st.st_mode & 07777), (long)geteuid());
        rc = -1;
    }
    len = read(fd, buf, cap - 1);
    close(fd);
    buf[len > 0 ? len : 0] = '\0';
    return rc;
}

static int parse_claim(char *text, struct claim *c)
{
    char *save = NULL, *line = strtok_r(text, "\n", &save);
    long pid;
    long long start;
    int have_runner = 0;
    memset(c, 0, sizeof(*c));
    if (!line || strcmp(line, REC_HEAD))
        return -1;
    while ((line = strtok_r(NULL, "\n", &save))) {
        if (!strncmp(line, "boot ", 5))
            snprintf(c->boot, sizeof(c->boot), "%s", line + 5);
        else if (sscanf(line, "runner %ld %lld", &c->runner, &c->runner_start) == 2)
            have_runner = 1;
        else if (sscanf(line, "proc %ld %lld", &pid, &start) == 2 && pid > 1 && start >= 0 &&
                 c->n < KB_SESSION_MAX) {
            c->pid[c->n] = (pid_t)pid;
            c->start[c->n++] = start;
        }
    }
    return c->boot[0] && have_runner ? 0 : -1;
}

/* The PIDs a record names that run now, for a note: its "proc" lines, or the leader of the
 * first version's one line ("runner start leader leader_start"). */
static void name_running(const char *text, char *out, size_t outlen)
{
    const char *line = text;
    size_t len = 0;
    out[0] = '\0';
    while (*line && len + 16 < outlen) {
        long pid = 0, runner;
        long long s1, s2;
        if (sscanf(line, "proc %ld", &pid) != 1 &&
            sscanf(line, "%ld %lld %ld %lld", &runner, &s1, &pid, &s2) != 4)
            pid = 0;
        if (pid > 1 && kb_procs_running((pid_t)pid))
            len += (size_t)snprintf(out + len, outlen - len, "%s%ld", len ? ", " : "", pid);
        line += strcspn(line, "\n");
        line += *line == '\n';
    }
}

/* A signal to pid only while it is still the process that started at start: the pidfd
 * holds that process, whatever PID it has by the time the signal goes. */
static int kill_same(pid_t pid, long long start)
{
    int fd = (int)syscall(SYS_pidfd_open, pid, 0), ok;
    if (fd < 0)
        return 0;
    ok = kb_procs_start_time(pid) == start && kb_procs_running(pid) &&
         syscall(SYS_pidfd_send_signal, fd, SIGKILL, NULL, 0) == 0;
    close(fd);
    return ok;
}

/* The processes proved the runner's now: each recorded one whose PID still has its start
 * time, with what it started (its tree: descendants and the session it leads). Into the
 * claim's own arrays: a process once proved stays in them with its start time. */
static void prove(struct claim *c)
{
    pid_t tree[KB_SANDBOX_MAX_PIDS];
    size_t have = c->n;
    for (size_t i = 0; i < have; i++) {
        size_t n;
        if (kb_procs_start_time(c->pid[i]) != c->start[i])
            continue;
        n = kb_procs_tree(c->pid[i], tree, KB_SANDBOX_MAX_PIDS);
        for (size_t j = 0; j < n && c->n < KB_SESSION_MAX; j++) {
            long long s = kb_procs_start_time(tree[j]);
            int known = 0;
            for (size_t k = 0; k < c->n && !known; k++)
                known = c->pid[k] == tree[j] && c->start[k] == s;
            if (s >= 0 && !known) {
                c->pid[c->n] = tree[j];
                c->start[c->n++] = s;
            }
        }
    }
}

/* SIGKILL to every proved process until none runs (2 s at most). How many were found. */
static size_t kill_proved(struct claim *c)
{
    size_t found = 0;
    for (int round = 0; round < 40; round++) {
        size_t live = 0;
        prove(c);
        for (size_t i = 0; i < c->n; i++)
            live += (size_t)kill_same(c->pid[i], c->start[i]);
        if (round == 0)
            found = live;
        if (live == 0)
            break;
        kb_sleep_ms(50);
    }
    return found;
}

/* What still runs in a session a recorded process led: named, not touched. */
static void name_left(const struct claim *c, const struct claim *orig, char *out,
                      size_t outlen)
{
    pid_t pids[64];
    size_t len = strlen(out);
    for (size_t i = 0; i < orig->n; i++) {
        size_t n = kb_procs_session(orig->pid[i], pids, 64);
        for (size_t j = 0; j < n && len + 16 < outlen; j++) {
            int ours = 0;
            for (size_t k = 0; k < c->n && !ours; k++)
                ours = c->pid[k] == pids[j];
            if (!ours && kb_procs_running(pids[j]))
                len += (size_t)snprintf(out + len, outlen - len, "%s%ld", len ? ", " : "",
                                        (long)pids[j]);
        }
    }
}

int kb_session_sweep(const char *rundir, char *note, size_t notelen)
{
    char path[KB_PATH_MAX], why[200], boot[64], left[512], *text = malloc(REC_BYTES);
    struct claim *c = malloc(sizeof(*c)), *orig = malloc(sizeof(*orig));
    int rc = 0, r;
    note[0] = '\0';
    kb_path(path, sizeof(path), rundir, KB_SANDBOX_SESSION_FILE);
    if (!text || !c || !orig || (r = read_record(path, text, REC_BYTES, why, sizeof(why))) == 0)
        goto out;
    name_running(text, left, sizeof(left));      /* before parse_claim cuts the text up */
    if (r < 0 || parse_claim(text, c) < 0) {
        if (r > 0)
            snprintf(why, sizeof(why), "is no session record this runner can prove (no boot, "
                     "runner and start times)");
        snprintf(note, notelen, "%s %s: nothing it names was stopped%s%s%s", path, why,
                 left[0] ? " (running: pid " : "", left, left[0] ? ")" : "");
        goto out;
    }
    boot_id(boot, sizeof(boot));
    if (strcmp(boot, c->boot)) {
        unlink(path);          /* from another boot: nothing it names can be running */
        goto out;
    }
    if (kb_procs_running((pid_t)c->runner) &&
        kb_procs_start_time((pid_t)c->runner) == c->runner_start)
        goto out;              /* its runner still runs: its fixture is not a leftover */
    *orig = *c;
    rc = kill_proved(c) > 0;
    left[0] = '\0';
    name_left(c, orig, left, sizeof(left));
    if (left[0])
        snprintf(note, notelen, "%s: pid %s, in a session the fixture started, not proved "
                 "its own (started after the runner last saw it): left running", path, left);
    unlink(path);
out:
    free(text);
    free(c);
    free(orig);
    return rc;
}
