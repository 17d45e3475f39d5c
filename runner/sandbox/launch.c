/* launch.c -- fork, the child's setup, exec, and its failure told to the parent (launch.h). */
#define _GNU_SOURCE
#include "runner/sandbox/launch.h"

#include <errno.h>
#include <fcntl.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/prctl.h>
#include <sys/wait.h>
#include <unistd.h>

/* The step a child failed at, and its errno: what it writes to the pipe before _exit. */
enum step { ST_PDEATH, ST_AFFINITY, ST_CGROUP, ST_SESSION, ST_DIR, ST_EXEC };

struct report {
    int step, err;
    size_t which;               /* the cgroup, for ST_CGROUP */
};

static const char *const step_names[] = {
    [ST_PDEATH] = "parent-death signal", [ST_AFFINITY] = "CPU affinity",
    [ST_CGROUP] = "joining cgroup", [ST_SESSION] = "setsid", [ST_DIR] = "chdir",
    [ST_EXEC] = "exec",
};

/* Only async-signal-safe calls from here to the exec: the runner may have threads. */
_Noreturn static void fail(int fd, int step, size_t which)
{
    struct report r = { step, errno, which };
    ssize_t n = write(fd, &r, sizeof(r));
    (void)n;
    _exit(step == ST_EXEC ? 127 : 126);
}

/* fd onto to (and to2 unless -1), fd itself closed unless it is one of them. */
static void move(int fd, int to, int to2)
{
    if (fd < 0)
        return;
    dup2(fd, to);
    if (to2 >= 0)
        dup2(fd, to2);
    if (fd != to && fd != to2)
        close(fd);
}

static void redirect(const struct kb_launch *l)
{
    int in = l->stdio ? l->stdio[0] : -1, out = l->stdio ? l->stdio[1] : -1;
    int err = l->stdio ? l->stdio[2] : -1;
    if (in >= 0)
        dup2(in, STDIN_FILENO);
    else
        move(open("/dev/null", O_RDONLY), STDIN_FILENO, -1);
    /* no symlink followed: the log lands in a directory others may have prepared. Could it
     * not be opened, the output goes where the runner's does. */
    move(open(l->log ? l->log : "/dev/null",
              O_WRONLY | O_CREAT | O_NOFOLLOW | (l->log_append ? O_APPEND : O_TRUNC), 0644),
         STDOUT_FILENO, STDERR_FILENO);
    if (out >= 0)
        dup2(out, STDOUT_FILENO);
    if (err >= 0)
        dup2(err, STDERR_FILENO);
}

static int join(const char *procs)
{
    int fd = open(procs, O_WRONLY | O_CLOEXEC), rc = 0;
    if (fd < 0)
        return -1;
    if (write(fd, "0", 1) < 0)          /* "0": the writer itself */
        rc = -1;
    if (close(fd) < 0)
        rc = -1;
    return rc;
}

_Noreturn static void child(const struct kb_launch *l, char *const *procs, char *const *env,
                            pid_t runner, int fd)
{
    /* the getppid() check: a runner that died before prctl took effect sent nothing */
    if (prctl(PR_SET_PDEATHSIG, SIGKILL) < 0 || getppid() != runner)
        fail(fd, ST_PDEATH, 0);
    redirect(l);
    if (l->cpus && sched_setaffinity(0, sizeof(*l->cpus), l->cpus) < 0)
        fail(fd, ST_AFFINITY, 0);
    for (size_t i = 0; procs && procs[i]; i++)
        if (join(procs[i]) < 0)
            fail(fd, ST_CGROUP, i);
    if (l->new_session && setsid() < 0)
        fail(fd, ST_SESSION, 0);
    if (l->dir && chdir(l->dir) < 0)
        fail(fd, ST_DIR, 0);
    environ = (char **)env;             /* a PATH in env_add is the one searched */
    if (l->path)
        execv(l->path, l->argv);
    else
        execvp(l->argv[0], l->argv);
    fail(fd, ST_EXEC, 0);
}

/* dir/cgroup.procs for every cgroup, built before the fork (no malloc in the child). */
static char **procs_paths(const char *const *cgroups, char *err, size_t errlen)
{
    size_t n = 0;
    char **v;
    while (cgroups && cgroups[n])
        n++;
    if (!(v = calloc(n + 1, sizeof(*v)))) {
        snprintf(err, errlen, "out of memory");
        return NULL;
    }
    for (size_t i = 0; i < n; i++)
        if (asprintf(&v[i], "%s/cgroup.procs", cgroups[i]) < 0) {
            v[i] = NULL;
            for (size_t j = 0; j < i; j++)
                free(v[j]);
            free(v);
            snprintf(err, errlen, "out of memory");
            return NULL;
        }
    return v;
}

/* The runner's environment with env_add put in (a KEY it names replaces the runner's):
 * built before the fork, as putenv in the child would allocate. Pointers only. */
static char **environment(char *const *add)
{
    size_t n = 0, k = 0, m = 0;
    char **v;
    while (environ[n])
        n++;
    while (add && add[m])
        m++;
    if (!(v = calloc(n + m + 1, sizeof(*v))))
        return NULL;
    for (size_t i = 0; i < n; i++) {
        size_t kl = strcspn(environ[i], "=");
        int replaced = 0;
        for (size_t j = 0; j < m && !replaced; j++)
            replaced = !strncmp(add[j], environ[i], kl) && add[j][kl] == '=';
        if (!replaced)
            v[k++] = environ[i];
    }
    for (size_t j = 0; j < m; j++)
        v[k++] = add[j];
    return v;
}

static void free_paths(char **v)
{
    for (size_t i = 0; v && v[i]; i++)
        free(v[i]);
    free(v);
}

/* What the child said, if anything: 0 when it exec'd (the pipe closed unwritten). */
static int heard(int fd, struct report *r)
{
    ssize_t n;
    while ((n = read(fd, r, sizeof(*r))) < 0 && errno == EINTR)
        ;
    return n == (ssize_t)sizeof(*r);
}

static void say(const struct kb_launch *l, const struct report *r, char *err, size_t errlen)
{
    const char *name = r->step >= 0 && r->step <= ST_EXEC ? step_names[r->step] : "setup";
    const char *what = r->step == ST_CGROUP && l->cgroups ? l->cgroups[r->which]
                       : r->step == ST_DIR ? l->dir
                       : r->step == ST_EXEC ? (l->path ? l->path : l->argv[0]) : NULL;
    snprintf(err, errlen, "starting %s: %s%s%s: %s", l->argv[0], name, what ? " " : "",
             what ? what : "", strerror(r->err));
}

pid_t kb_launch(const struct kb_launch *l, char *err, size_t errlen)
{
    char **procs = l->cgroups ? procs_paths(l->cgroups, err, errlen) : NULL;
    char **env = environment(l->env_add);
    pid_t runner = getpid(), pid = -1;
    struct report r;
    int p[2] = { -1, -1 }, st;
    if ((l->cgroups && !procs) || !env) {
        if (!env)
            snprintf(err, errlen, "out of memory");
        goto out;
    }
    if (pipe2(p, O_CLOEXEC) < 0) {
        snprintf(err, errlen, "pipe: %s", strerror(errno));
        goto out;
    }
    if ((pid = fork()) == 0) {
        close(p[0]);
        child(l, procs, env, runner, p[1]);
    }
    close(p[1]);
    if (pid < 0)
        snprintf(err, errlen, "fork: %s", strerror(errno));
    else if (heard(p[0], &r)) {
        while (waitpid(pid, &st, 0) < 0 && errno == EINTR)
            ;
        say(l, &r, err, errlen);
        pid = -1;
    }
    close(p[0]);
out:
    free(env);
    free_paths(procs);
    return pid;
}
