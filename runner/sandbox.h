/* sandbox.h -- runs one fixture under the contract's limits, through a swappable backend.
 *
 * Owns: the fixture spec handed to a backend, the limits read back from it, and the ops
 * table every backend fills ("native": cgroup v2 or v1 on this host, runner/sandbox_cgroup.c;
 * "docker": runner/sandbox_docker.c). kb_sandbox_backend() is the one place a backend is
 * picked by name. A handle is opaque and owned by the backend: start() makes it, stop()
 * kills every process of the fixture, waits for them, removes the cgroup/container and
 * frees the handle. The native backend's fixture dies with the runner (a parent-death
 * signal), and without limits it is pinned to server_cpuset all the same. Backends never
 * print or exit; errors come back as text in err. */
#ifndef KB_SANDBOX_H
#define KB_SANDBOX_H

#include <stddef.h>
#include <sys/types.h>

struct kb_limits {
    int cpus;                  /* CPU quota in whole CPUs; 0 = unconstrained */
    long long memory_bytes;    /* 0 = unconstrained */
    int pids;                  /* 0 = unconstrained */
    char server_cpuset[64];    /* e.g. "0"; "" = any */
};

/* What the fixture is: all strings belong to the caller and must outlive start(). */
struct kb_fixture_spec {
    const char *name;          /* runtime name, e.g. "go" */
    char *const *argv;         /* expanded command, NULL-terminated */
    char *const *env_add;      /* "KEY=VALUE" additions to the runner's environment, NULL-terminated or NULL */
    const char *rundir;        /* the fixture's working/runtime directory (exists) */
    const char *log_path;      /* stdout+stderr of the fixture go here; NULL = /dev/null */
    int port;
    struct kb_limits limits;
    int no_limits;             /* 1: run unconstrained (--no-limits); limits are ignored */
};

/* What the backend READ BACK after applying the limits (never the requested values copied). */
struct kb_limits_applied {
    char backend[16];          /* "native", "docker" */
    int cgroup_version;        /* 1, 2, or 0 when unconstrained */
    long long cpu_quota_us;    /* -1 = none */
    long long cpu_period_us;
    double cpus;               /* quota / period, 0 = none */
    char cpuset[64];
    char cpuset_mems[64];
    long long memory_bytes;    /* -1 = none */
    long long memsw_bytes;     /* -1 = none or not present */
    long long pids_max;        /* -1 = "max" */
    char paths[1024];          /* the cgroup directories or container id, space separated */
};

struct kb_sandbox;             /* opaque, per backend */

#define KB_SANDBOX_MAX_PIDS 512

struct kb_sandbox_ops {
    const char *name;
    /* 0 if this backend can run here (root, controllers, daemon); -1 with the reason in err. */
    int (*available)(char *err, size_t errlen);
    /* Start the fixture. NULL with the reason in err on failure. */
    struct kb_sandbox *(*start)(const struct kb_fixture_spec *spec, char *err, size_t errlen);
    /* The fixture's current processes (host PIDs): count written, at most max. */
    size_t (*pids)(struct kb_sandbox *sb, pid_t *out, size_t max);
    /* 1 while the fixture's main process runs; 0 once it has exited (reaped). */
    int (*alive)(struct kb_sandbox *sb);
    /* The exit description of the main process once dead ("exit 1", "signal 9"); "" while alive. */
    const char *(*exit_reason)(struct kb_sandbox *sb);
    /* Limits read back from the cgroup/container. 0, or -1 with err. */
    int (*limits_applied)(struct kb_sandbox *sb, struct kb_limits_applied *out, char *err,
                          size_t errlen);
    /* Kill every process of the fixture, wait, remove cgroup/container, free sb. Returns 0,
     * or -1 with err when something could not be removed (sb is freed either way). */
    int (*stop)(struct kb_sandbox *sb, char *err, size_t errlen);
};

extern const struct kb_sandbox_ops kb_sandbox_native;
/* Defined by runner/sandbox_docker.c; declared weak so the runner links without it. */
extern const struct kb_sandbox_ops kb_sandbox_docker __attribute__((weak));

/* The backend called name ("native", "docker"), or NULL if unknown or not linked in. */
const struct kb_sandbox_ops *kb_sandbox_backend(const char *name);

/* Remove every cgroup a previous run of this process family left behind
 * ("kneebench-<pid>-*" whose pid is gone or a zombie: a runner killed with -9 stays a
 * zombie until its parent reaps it). Returns how many were removed. */
int kb_sandbox_sweep_stale(void);

/* A fixture run without limits (the native backend's no_limits) has no cgroup to sweep:
 * start() records its session in spec->rundir/KB_SANDBOX_SESSION_FILE and stop() removes
 * the record. This kills what a record left in rundir by a runner that is gone (or a
 * zombie) still names -- every process of that session, and the tree under its leader if
 * the leader still runs -- waits for them (2 s at most) and removes the record. 1 when it
 * swept, 0 when there was nothing to sweep. */
#define KB_SANDBOX_SESSION_FILE ".kneebench-session"
int kb_sandbox_sweep_session(const char *rundir);

#endif
