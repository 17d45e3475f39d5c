/* sandbox_cgroup.c -- the native backend: one fixture in its own cgroup(s) on this host.
 *
 * cgroup v2 is used when /sys/fs/cgroup is a pure v2 mount (cgroup.controllers at its
 * root); otherwise v1 with the cpu, cpuset, memory and pids controllers, one directory
 * "kneebench-<runner pid>-<runtime>-<n>" under each. (A hybrid host's
 * /sys/fs/cgroup/unified v2 mount carries no controllers and is deliberately not used.)
 * The forked child joins every cgroup BEFORE exec, so everything the fixture spawns
 * (nginx workers, every PHP-FPM child) is counted against the same limits. The child also
 * starts its own session, and without limits the fixture is that session plus the tree
 * under its main process (nginx and php-fpm start sessions of their own), pinned to the
 * server CPUs by affinity since no cpuset does it, and recorded in its run directory
 * (session.h) so that a later run can sweep what the record proves a runner that died hard
 * left, and nothing else. The child gets a parent-death
 * signal: the fixture does not outlive the runner, however the runner ends.
 * stop() kills by PID what is in the cgroup (or the tree), waits, and removes the dirs.
 * What runs is the host's build: a fixture's identity hashes its executables and sources. */
#define _GNU_SOURCE
#include "runner/sandbox/cgfile.h"
#include "runner/util/clock.h"
#include "runner/util/cpulist.h"
#include "runner/util/identity.h"
#include "runner/sandbox/launch.h"
#include "runner/sandbox/procs.h"
#include "runner/sandbox/sandbox_backend.h"
#include "runner/sandbox/session.h"

#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <sched.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#define CG_ROOT "/sys/fs/cgroup"
#define CG_NCTRL 4

static const char *const v1_ctrls[CG_NCTRL] = { "cpu", "cpuset", "memory", "pids" };

struct cg_fx {
    pid_t pid;                 /* the fixture's main process, our child */
    int version;               /* 1, 2, or 0 (unconstrained) */
    int exited;
    char exit_reason[64];
    char dirs[CG_NCTRL][256];  /* v1: one per controller; v2: dirs[0] only */
    size_t ndirs;
    int pin;                   /* unconstrained: pin the child to cpus */
    cpu_set_t cpus;
    struct kb_session_rec rec; /* unconstrained: what proves its processes ours */
};

static int write_file(const char *dir, const char *file, const char *val)
{
    char path[1024];
    int fd, rc = 0;
    snprintf(path, sizeof(path), "%s/%s", dir, file);
    if ((fd = open(path, O_WRONLY | O_CLOEXEC)) < 0)
        return -1;
    if (write(fd, val, strlen(val)) < 0)
        rc = -1;
    if (close(fd) < 0)
        rc = -1;
    return rc;
}

static int access_file(const char *dir, const char *file)
{
    char path[1024];
    snprintf(path, sizeof(path), "%s/%s", dir, file);
    return access(path, F_OK) == 0;
}

static int is_v2(void)
{
    return access(CG_ROOT "/cgroup.controllers", F_OK) == 0;
}

static int cg_available(struct kb_sandbox *box, char *err, size_t errlen)
{
    (void)box;
    char path[256];
    if (geteuid() != 0) {
        snprintf(err, errlen, "native sandbox needs root to create cgroups (or use --no-limits)");
        return -1;
    }
    if (is_v2())
        return 0;
    for (int i = 0; i < CG_NCTRL; i++) {
        snprintf(path, sizeof(path), CG_ROOT "/%s", v1_ctrls[i]);
        if (access(path, W_OK) != 0) {
            snprintf(err, errlen, "cgroup v1 controller %s is not mounted writable at %s "
                     "(or use --no-limits)", v1_ctrls[i], path);
            return -1;
        }
    }
    return 0;
}

/* cpuset.mems must be set before a v1 cpuset accepts tasks: copy the parent's. */
static int setup_v1_dir(const char *ctrl, const char *dir, const struct kb_limits *l)
{
    char buf[128];
    if (!strcmp(ctrl, "cpu")) {
        snprintf(buf, sizeof(buf), "%lld", 100000LL * l->cpus);
        return write_file(dir, "cpu.cfs_period_us", "100000") ||
               write_file(dir, "cpu.cfs_quota_us", l->cpus > 0 ? buf : "-1");
    }
    if (!strcmp(ctrl, "cpuset")) {
        if (kb_cgfile_line(CG_ROOT "/cpuset", "cpuset.mems", buf, sizeof(buf)) < 0)
            return -1;
        if (write_file(dir, "cpuset.mems", buf))
            return -1;
        if (kb_cgfile_line(CG_ROOT "/cpuset", "cpuset.cpus", buf, sizeof(buf)) < 0)
            return -1;
        return write_file(dir, "cpuset.cpus", l->server_cpuset[0] ? l->server_cpuset : buf);
    }
    if (!strcmp(ctrl, "memory")) {
        snprintf(buf, sizeof(buf), "%lld", l->memory_bytes > 0 ? l->memory_bytes : -1LL);
        if (write_file(dir, "memory.limit_in_bytes", buf))
            return -1;
        /* memsw = memory: the fixture may not escape the limit into swap. The file is
         * absent without swap accounting, which is fine. */
        if (access_file(dir, "memory.memsw.limit_in_bytes"))
            return write_file(dir, "memory.memsw.limit_in_bytes", buf);
        return 0;
    }
    snprintf(buf, sizeof(buf), "%d", l->pids);
    return write_file(dir, "pids.max", l->pids > 0 ? buf : "max");
}

static int setup_v2_dir(const char *dir, const struct kb_limits *l)
{
    char buf[128];
    /* Controllers must be enabled in the parent for the child directory to get them. */
    write_file(CG_ROOT, "cgroup.subtree_control", "+cpu +cpuset +memory +pids");
    snprintf(buf, sizeof(buf), "%lld 100000", 100000LL * l->cpus);
    if (write_file(dir, "cpu.max", l->cpus > 0 ? buf : "max 100000"))
        return -1;
    if (l->server_cpuset[0] && write_file(dir, "cpuset.cpus", l->server_cpuset))
        return -1;
    snprintf(buf, sizeof(buf), "%lld", l->memory_bytes);
    if (write_file(dir, "memory.max", l->memory_bytes > 0 ? buf : "max"))
        return -1;
    if (access_file(dir, "memory.swap.max"))
        write_file(dir, "memory.swap.max", "0");
    snprintf(buf, sizeof(buf), "%d", l->pids);
    return write_file(dir, "pids.max", l->pids > 0 ? buf : "max");
}

/* The runner's PID and start time name its cgroups, so a sweep tells a dead runner's from
 * those of a live process that was given the same PID later. */
static int make_dirs(struct cg_fx *sb, const struct kb_fixture_spec *spec, char *err,
                     size_t errlen)
{
    static unsigned seq;
    char name[160];
    snprintf(name, sizeof(name), "kneebench-%ld-%lld-%s-%u", (long)getpid(),
             kb_procs_start_time(getpid()), spec->name, seq++);
    sb->version = is_v2() ? 2 : 1;
    sb->ndirs = sb->version == 2 ? 1 : CG_NCTRL;
    for (size_t i = 0; i < sb->ndirs; i++) {
        const char *ctrl = sb->version == 2 ? "" : v1_ctrls[i];
        snprintf(sb->dirs[i], sizeof(sb->dirs[i]), CG_ROOT "/%s%s%s", ctrl, *ctrl ? "/" : "",
                 name);
        if (mkdir(sb->dirs[i], 0755) < 0 && errno != EEXIST) {
            snprintf(err, errlen, "mkdir %s: %s", sb->dirs[i], strerror(errno));
            sb->dirs[i][0] = '\0';
            return -1;
        }
        if (sb->version == 2 ? setup_v2_dir(sb->dirs[i], &spec->limits)
                             : setup_v1_dir(ctrl, sb->dirs[i], &spec->limits)) {
            snprintf(err, errlen, "setting limits in %s: %s", sb->dirs[i], strerror(errno));
            return -1;
        }
    }
    return 0;
}

static void remove_dirs(struct cg_fx *sb);

/* Unconstrained, the server CPUs are an affinity instead of a cpuset. */
static int pin_set(struct cg_fx *sb, const struct kb_fixture_spec *spec, char *err,
                   size_t errlen)
{
    if (!spec->limits.server_cpuset[0])
        return 0;
    if (kb_cpulist_parse_online(spec->limits.server_cpuset, &sb->cpus, NULL, 0, err, errlen) < 0)
        return -1;
    sb->pin = 1;
    return 0;
}

/* The child joins every cgroup (or takes the server CPUs' affinity) before exec, and starts
 * its own session. */
static pid_t launch(const struct cg_fx *sb, const struct kb_fixture_spec *spec, char *err,
                    size_t errlen)
{
    const char *cgroups[CG_NCTRL + 1] = { 0 };
    struct kb_launch l = { .argv = spec->argv, .log = spec->log_path, .log_append = 1,
                           .cpus = sb->pin ? &sb->cpus : NULL, .cgroups = cgroups,
                           .new_session = 1, .dir = spec->rundir, .env_add = spec->env_add };
    for (size_t i = 0; i < sb->ndirs; i++)
        cgroups[i] = sb->dirs[i];
    return kb_launch(&l, err, errlen);
}

static struct cg_fx *start_fx(const struct kb_fixture_spec *spec, char *err, size_t errlen)
{
    struct cg_fx *sb = calloc(1, sizeof(*sb));
    if (!sb) {
        snprintf(err, errlen, "out of memory");
        return NULL;
    }
    if (!spec->no_limits && make_dirs(sb, spec, err, errlen) < 0)
        goto fail;
    if (spec->no_limits && pin_set(sb, spec, err, errlen) < 0)
        goto fail;
    if ((sb->pid = launch(sb, spec, err, errlen)) < 0)
        goto fail;
    if (spec->no_limits)
        kb_session_begin(&sb->rec, spec->rundir, sb->pid);
    return sb;
fail:
    remove_dirs(sb);
    free(sb);
    return NULL;
}

static void reap(struct cg_fx *sb, int options)
{
    int st;
    pid_t r;
    if (sb->exited)
        return;
    while ((r = waitpid(sb->pid, &st, options)) < 0 && errno == EINTR)
        ;   /* a signal (no SA_RESTART, run.c) is not the child's end */
    if (r != sb->pid)
        return;
    sb->exited = 1;
    if (WIFEXITED(st))
        snprintf(sb->exit_reason, sizeof(sb->exit_reason), "exit %d%s", WEXITSTATUS(st),
                 WEXITSTATUS(st) == 127 ? " (command not found)"
                 : WEXITSTATUS(st) == 126 ? " (a command not executable)"
                 : "");
    else if (WIFSIGNALED(st))
        snprintf(sb->exit_reason, sizeof(sb->exit_reason), "signal %d", WTERMSIG(st));
}

static int fx_alive(struct cg_fx *sb)
{
    reap(sb, WNOHANG);
    return !sb->exited;
}

static const char *fx_exit_reason(struct cg_fx *sb)
{
    reap(sb, WNOHANG);
    return sb->exit_reason;
}

static size_t fx_pids(struct cg_fx *sb, pid_t *out, size_t max)
{
    /* Unconstrained: the tree under the main process while it is our unreaped child (its
     * PID cannot have been reused), then what is left in its session. */
    if (sb->version == 0) {
        size_t n;
        reap(sb, WNOHANG);
        if (sb->exited)
            return kb_procs_session(sb->pid, out, max);
        /* recorded only while the main process is unreaped: then no PID here is reused */
        n = kb_procs_tree(sb->pid, out, max);
        kb_session_seen(&sb->rec, out, n);
        return n;
    }
    /* v1: the pids controller's directory holds every task; v2: the one directory. */
    return kb_cgfile_procs(sb->dirs[sb->version == 2 ? 0 : 3], out, max);
}

static const char *dir_for(const struct cg_fx *sb, const char *ctrl)
{
    if (sb->version == 2)
        return sb->dirs[0];
    for (int i = 0; i < CG_NCTRL; i++)
        if (!strcmp(v1_ctrls[i], ctrl))
            return sb->dirs[i];
    return "";
}

static void read_back_v1(const struct cg_fx *sb, struct kb_limits_applied *o)
{
    const char *dirs[4] = { dir_for(sb, "cpu"), dir_for(sb, "cpuset"), dir_for(sb, "memory"),
                            dir_for(sb, "pids") };
    kb_cgfile_read_back_v1(dirs, o);
}

/* Unconstrained, the placement is the main process's affinity, read back as it is. */
static int read_back_affinity(struct cg_fx *sb, struct kb_limits_applied *o)
{
    cpu_set_t set;
    if (!fx_alive(sb) || sched_getaffinity(sb->pid, sizeof(set), &set) < 0)
        return 0;
    kb_cpulist_format(&set, o->cpuset, sizeof(o->cpuset));
    return 0;
}

static int fx_limits(struct cg_fx *sb, struct kb_limits_applied *o, char *err,
                             size_t errlen)
{
    size_t len = 0;
    memset(o, 0, sizeof(*o));
    snprintf(o->backend, sizeof(o->backend), "native");
    o->cgroup_version = sb->version;
    o->cpu_quota_us = o->memory_bytes = o->memsw_bytes = o->pids_max = -1;
    if (sb->version == 0)
        return read_back_affinity(sb, o);
    if (sb->version == 2)
        kb_cgfile_read_back_v2(sb->dirs[0], o);
    else
        read_back_v1(sb, o);
    if (o->cpu_quota_us > 0 && o->cpu_period_us > 0)
        o->cpus = (double)o->cpu_quota_us / (double)o->cpu_period_us;
    for (size_t i = 0; i < sb->ndirs; i++)
        len += (size_t)snprintf(o->paths + len, len < sizeof(o->paths) ? sizeof(o->paths) - len : 0,
                                "%s%s", i ? " " : "", sb->dirs[i]);
    if (o->pids_max == 0 || o->cpu_period_us <= 0) {
        snprintf(err, errlen, "could not read limits back from %s", o->paths);
        return -1;
    }
    return 0;
}

static void signal_all(struct cg_fx *sb, int sig)
{
    pid_t pids[KB_SANDBOX_MAX_PIDS];
    size_t n = fx_pids(sb, pids, KB_SANDBOX_MAX_PIDS);
    for (size_t i = 0; i < n; i++)
        kill(pids[i], sig);
    if (!sb->exited)
        kill(sb->pid, sig);
}

static void remove_dirs(struct cg_fx *sb)
{
    for (size_t i = 0; i < sb->ndirs; i++)
        if (sb->dirs[i][0])
            rmdir(sb->dirs[i]);
}

/* TERM, then up to 2 s for a clean exit, then KILL until the cgroup is empty (5 s max). */
static int fx_stop(struct cg_fx *sb, char *err, size_t errlen)
{
    pid_t left[1];
    int rc = 0, i;
    signal_all(sb, SIGTERM);
    for (i = 0; i < 40; i++) {
        reap(sb, WNOHANG);
        if (sb->exited && fx_pids(sb, left, 1) == 0)
            break;
        kb_sleep_ms(50);
    }
    for (i = 0; i < 100 && (!sb->exited || fx_pids(sb, left, 1) > 0); i++) {
        signal_all(sb, SIGKILL);
        reap(sb, WNOHANG);
        kb_sleep_ms(50);
    }
    reap(sb, 0);
    kb_session_end(&sb->rec);
    for (size_t d = 0; d < sb->ndirs; d++) {
        for (i = 0; i < 40 && sb->dirs[d][0] && rmdir(sb->dirs[d]) < 0 && errno == EBUSY; i++)
            kb_sleep_ms(50);
        if (access(sb->dirs[d], F_OK) == 0) {
            snprintf(err, errlen, "could not remove %s", sb->dirs[d]);
            rc = -1;
        }
    }
    free(sb);
    return rc;
}

/* A leftover from a runner that died hard: kill what is inside, then remove it. */
static int sweep_dir(const char *dir)
{
    pid_t pids[KB_SANDBOX_MAX_PIDS];
    for (int i = 0; i < 40; i++) {
        size_t n = kb_cgfile_procs(dir, pids, KB_SANDBOX_MAX_PIDS);
        if (n == 0)
            break;
        for (size_t j = 0; j < n; j++)
            kill(pids[j], SIGKILL);
        kb_sleep_ms(50);
    }
    return rmdir(dir) == 0;
}

/* 1 while the runner that made a leftover still runs: alive, not a zombie, and (when the
 * name or record says) started when that runner did. */
static int owner_running(long owner, long long start)
{
    return kb_procs_running((pid_t)owner) &&
           (start < 0 || kb_procs_start_time((pid_t)owner) == start);
}

/* A cgroup another user was delegated and named like ours is not ours to empty. */
static int made_by_this_user(const char *path)
{
    struct stat st;
    return lstat(path, &st) == 0 && S_ISDIR(st.st_mode) && st.st_uid == geteuid();
}

static int sweep_parent(const char *parent)
{
    DIR *d = opendir(parent);
    struct dirent *e;
    char path[600];
    int n = 0;
    long owner;
    long long start;
    if (!d)
        return 0;
    while ((e = readdir(d))) {
        if (sscanf(e->d_name, "kneebench-%ld-", &owner) != 1 || owner <= 0)
            continue;
        /* names made before the start time was part of them: the PID alone */
        if (sscanf(e->d_name, "kneebench-%*d-%lld-", &start) != 1)
            start = -1;
        if (owner_running(owner, start))
            continue;
        snprintf(path, sizeof(path), "%s/%s", parent, e->d_name);
        if (made_by_this_user(path))
            n += sweep_dir(path);
    }
    closedir(d);
    return n;
}

static int cg_sweep_stale(struct kb_sandbox *box)
{
    char parent[256];
    int n = 0;
    (void)box;
    if (is_v2())
        return sweep_parent(CG_ROOT);
    for (int i = 0; i < CG_NCTRL; i++) {
        snprintf(parent, sizeof(parent), CG_ROOT "/%s", v1_ctrls[i]);
        n += sweep_parent(parent);
    }
    return n;
}

static int cg_sweep_rundir(struct kb_sandbox *box, const char *rundir, char *note,
                           size_t notelen)
{
    (void)box;
    return kb_session_sweep(rundir, note, notelen);
}

/* ---- the ops on the handles ------------------------------------------------------------ */

static int cg_open(struct kb_sandbox *box, char *err, size_t errlen)
{
    if (kb_sandbox_refuse_engine_opts(box, err, errlen) < 0)
        return -1;
    snprintf(box->target, sizeof(box->target), "127.0.0.1");
    return 0;
}

static int cg_start(struct kb_sandbox_fixture *f, const struct kb_fixture_spec *spec,
                    char *err, size_t errlen)
{
    return (f->priv = start_fx(spec, err, errlen)) ? 0 : -1;
}

static size_t cg_pids(struct kb_sandbox_fixture *f, pid_t *out, size_t max)
{
    return fx_pids(f->priv, out, max);
}

static int cg_alive(struct kb_sandbox_fixture *f)
{
    return fx_alive(f->priv);
}

static const char *cg_exit_reason(struct kb_sandbox_fixture *f)
{
    return fx_exit_reason(f->priv);
}

static int cg_limits(struct kb_sandbox_fixture *f, struct kb_limits_applied *o, char *err,
                     size_t errlen)
{
    return fx_limits(f->priv, o, err, errlen);
}

static int cg_stop(struct kb_sandbox_fixture *f, char *err, size_t errlen)
{
    return fx_stop(f->priv, err, errlen);
}

/* The fixture is the host's build: its executables and sources, hashed. */
static json_t *cg_identity(struct kb_sandbox *box, const struct kb_fixture_parts *p, char *err,
                           size_t errlen)
{
    (void)box;
    return kb_identity_of_files(p->exe, p->nexe, p->src, p->nsrc, err, errlen);
}

const struct kb_sandbox_ops kb_sandbox_native = {
    .name = "native",
    .several = 1,
    .on_this_host = 1,
    .open = cg_open,
    .available = cg_available,
    .sweep_stale = cg_sweep_stale,
    .sweep_rundir = cg_sweep_rundir,
    .start = cg_start,
    .pids = cg_pids,
    .alive = cg_alive,
    .exit_reason = cg_exit_reason,
    .limits = cg_limits,
    .stop = cg_stop,
    .identity = cg_identity,
};
