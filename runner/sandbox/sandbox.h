/* sandbox.h -- runs fixtures under the contract's limits, through a backend chosen by name:
 * "native" (cgroup v2 or v1 on this host, sandbox_cgroup.c) or "docker" (a container on a
 * Docker engine, this host's or another's: sandbox_docker.c, dkengine.h). The handle carries
 * the backend's state, as an event loop carries its poller's; nothing outside the sandbox
 * files names a backend: callers ask the handle where a fixture is reached, whether it runs
 * here, and what its identity and evidence are. Also where the db route's PostgreSQL runs.
 *
 * kb_sandbox_open() copies its config; kb_sandbox_close() frees it, stopping what still
 * runs. kb_sandbox_stop() kills, waits for and removes one fixture and always frees its
 * handle. One fixture at a time, or up to KB_SANDBOX_MAX_FIXTURES side by side where
 * kb_sandbox_several() says so, each with its own limits. A native fixture dies with the
 * runner (parent-death signal) and without limits is still pinned to server_cpuset. Nothing
 * here prints or exits; errors come back as text in err. */
#ifndef KB_SANDBOX_H
#define KB_SANDBOX_H

#include "runner/sandbox/pgcluster.h"
#include "runner/sandbox/procs.h"
#include "contract/contract.h"

#include <jansson.h>
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
    /* The db route's connection (kb_sandbox_db_start's conninfo) and pool size; NULL when
     * the fixture gets no database. argv already carries them (the contract's
     * db_command_extra) for a backend that runs argv; docker hands them to the image's
     * entrypoint, which expands db_command_extra from the image's own contract. */
    const char *db_conninfo;
    int db_pool;
};

/* What the backend READ BACK after applying the limits (never the requested values copied). */
struct kb_limits_applied {
    char backend[16];          /* the backend's name */
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

/* The configuration a sandbox keeps; the strings are copied by kb_sandbox_open(). */
struct kb_sandbox_config {
    const char *backend;       /* the CLI's --backend: native (also NULL), docker */
    const char *root;          /* the source tree (docker/image-identity.py); NULL = "." */
    const char *image;         /* docker: the image; NULL = kneebench:latest */
    const char *docker_host;   /* docker: the engine's URL (--docker-host); NULL = the user's */
    const char *docker_context;   /* docker: the engine's context (--docker-context) */
    const char *target;        /* docker elsewhere: the engine host's IPv4 address; NULL = the
                                * endpoint's host */
    int no_limits;             /* fixtures run unconstrained */
};

struct kb_sandbox;             /* a backend, its configuration and its state */
struct kb_sandbox_fixture;     /* one fixture started in a sandbox */

/* What a fixture is made of, for its identity: the contract's runtime (its unexpanded
 * command) and its executables and sources as paths on this host. */
struct kb_fixture_parts {
    const struct kb_runtime *rt;
    char *const *exe;
    size_t nexe;
    char *const *src;
    size_t nsrc;
};

#define KB_SANDBOX_MAX_PIDS 512
/* kb_sandbox_start's answer when the harness, not the fixture, stood in the way (an engine
 * on another host stopped answering). */
#define KB_SANDBOX_HARNESS (-2)

/* The backend named cfg->backend with cfg's configuration checked (the engine chosen, its
 * target, no option that is another backend's); nothing is started yet. NULL with err. */
struct kb_sandbox *kb_sandbox_open(const struct kb_sandbox_config *cfg, char *err,
                                   size_t errlen);

/* Stops a fixture still running, frees sb. NULL is fine. */
void kb_sandbox_close(struct kb_sandbox *sb);

/* The backend's name, as --backend takes it. */
const char *kb_sandbox_name(const struct kb_sandbox *sb);

/* 0 if the backend can run fixtures under limits (root and controllers, an engine and the
 * image on it: carried there when it lacks it); -1 with the reason in err. */
int kb_sandbox_available(struct kb_sandbox *sb, char *err, size_t errlen);

/* 1 when fixtures run without limits: the config's no_limits. */
int kb_sandbox_no_limits(const struct kb_sandbox *sb);

/* 1 when the fixture runs on this host: its CPUs, processes and port are this host's (so a
 * placement overlap matters, its port can be checked here, a PostgreSQL started here is
 * beside it, and asking whether it lives costs no round trip). */
int kb_sandbox_on_this_host(const struct kb_sandbox *sb);

/* 1 when the backend runs several fixtures at once, each in its own cgroup or container with
 * its own limits (native, docker); 0 when one must stop before the next starts. */
#define KB_SANDBOX_MAX_FIXTURES 8
int kb_sandbox_several(const struct kb_sandbox *sb);

/* The IPv4 address the fixture is reached at: 127.0.0.1, or the engine's host. */
const char *kb_sandbox_target(const struct kb_sandbox *sb);

/* What a runner that died hard left anywhere on this host (native: cgroups named for a
 * runner whose PID is gone or a zombie: a runner killed with -9 stays a zombie until its
 * parent reaps it). How many were removed; 0 where nothing can be stale. */
int kb_sandbox_sweep_stale(struct kb_sandbox *sb);

/* What such a runner left in one fixture run directory: a fixture run without limits
 * (native no_limits) has no cgroup to sweep, so start() records its session in
 * rundir/KB_SANDBOX_SESSION_FILE, with every process the runner sees of it, and stop()
 * removes the record. This kills what the record of a runner that is gone (or a zombie)
 * proves was that runner's (runner/sandbox/session.h: the record this user's own and no
 * one else's to write, of this boot, each process matched on its PID and start time, and
 * what those started), waits for them (2 s at most) and removes the record. Anything else
 * it names that still runs is left running and named in note ("" when nothing). 1 when it
 * killed something, 0 otherwise. */
#define KB_SANDBOX_SESSION_FILE ".kneebench-session"
int kb_sandbox_sweep_rundir(struct kb_sandbox *sb, const char *rundir, char *note,
                            size_t notelen);

/* For a fixture on this host: port free (a process killed a moment ago is given timeout_ms
 * to let go of it). 0, or -1 with who holds it in why. Always 0 for a fixture elsewhere
 * (its start fails there when the port is taken). */
int kb_sandbox_port_free(struct kb_sandbox *sb, int port, int timeout_ms, char *why,
                         size_t whylen);

/* Start the fixture: 0 with *out, -1 with the reason in err, or KB_SANDBOX_HARNESS (the
 * reason in err) when the harness and not the fixture stood in the way. */
int kb_sandbox_start(struct kb_sandbox *sb, const struct kb_fixture_spec *spec,
                     struct kb_sandbox_fixture **out, char *err, size_t errlen);

/* The fixture's current processes (host PIDs): count written, at most max. None for a
 * fixture on another host (kb_sandbox_sample asks there). */
size_t kb_sandbox_pids(struct kb_sandbox_fixture *f, pid_t *out, size_t max);

/* For a fixture on this host: its own processes hold every listener on its port (a
 * leftover's do not). 0, or -1 with why. Always 0 elsewhere. */
int kb_sandbox_port_owned(struct kb_sandbox_fixture *f, int port, char *why, size_t whylen);

/* The fixture's processes now: CPU, RSS, PSS, fds, threads. 0, or -1 with err (out zeroed). */
int kb_sandbox_sample(struct kb_sandbox_fixture *f, struct kb_proc_sample *out, char *err,
                      size_t errlen);

/* 1 while the fixture's main process runs; 0 once it has exited (reaped). */
int kb_sandbox_alive(struct kb_sandbox_fixture *f);

/* 1 when the runner lost its hold on the fixture rather than the fixture dying: an engine on
 * another host stopped answering (a lost SSH connection). why says what was lost. The
 * harness's failure, not the fixture's: its point is not judged. */
int kb_sandbox_lost(struct kb_sandbox_fixture *f, char *why, size_t whylen);

/* The exit description of the main process once dead ("exit 1", "signal 9"); "" while alive. */
const char *kb_sandbox_exit_reason(struct kb_sandbox_fixture *f);

/* Limits read back from the cgroup/container (through the engine when elsewhere). 0, or -1
 * with err. */
int kb_sandbox_limits(struct kb_sandbox_fixture *f, struct kb_limits_applied *out, char *err,
                      size_t errlen);

/* Kill every process of the fixture, wait, remove cgroup/container, free f. Returns 0, or
 * -1 with err when something could not be removed (f is freed either way). */
int kb_sandbox_stop(struct kb_sandbox_fixture *f, char *err, size_t errlen);

/* The db route's PostgreSQL for the fixture about to start, where this backend puts it:
 * docker in a container of its own, from the same image (the image's PostgreSQL), on the
 * cpuset pg->cpus ("" = the engine's default) with its limits read back into
 * dir/limits.json and its log into dir/postgres.log; the others on this host
 * (kb_pgrun_start: gray-static/pgcluster.sh in dir). pg->conninfo is then what the
 * fixture connects with (kb_fixture_spec's db_conninfo). 0, or -1 with err and nothing
 * left running. */
int kb_sandbox_db_start(struct kb_sandbox *sb, struct kb_pgrun *pg, const char *dir, char *err,
                        size_t errlen);

/* Stop and remove what kb_sandbox_db_start started (nothing when pg is not running); the
 * fixture that used it is stopped first. kb_sandbox_close() stops one still running where
 * the backend keeps it (docker). 0, or -1 with err. */
int kb_sandbox_db_stop(struct kb_sandbox *sb, struct kb_pgrun *pg, char *err, size_t errlen);

/* Limits read back, as limits.json holds them. */
json_t *kb_sandbox_limits_json(const struct kb_limits_applied *la);

/* The identity of what runs for p->rt, with a "sha256" the run compares after every point:
 * native, of its executables and sources; docker, of the image's ID (looked up now) and
 * the contract's command (unexpanded: a free port must not change it). NULL with err. */
json_t *kb_sandbox_identity(struct kb_sandbox *sb, const struct kb_fixture_parts *p,
                            char *err, size_t errlen);

/* The keys the backend adds to the run's identity (run.json): docker "image" (what
 * docker/image-identity.py says of it) and "engine" (dkengine.h: endpoint, version, host);
 * an empty object for native. NULL with err. */
json_t *kb_sandbox_run_evidence(struct kb_sandbox *sb, char *err, size_t errlen);

/* The keys the backend adds to the run's plan, which a resumed run must match (docker on
 * an engine elsewhere: "engine", the same endpoint and target). A new object, maybe empty. */
json_t *kb_sandbox_plan_keys(struct kb_sandbox *sb);

/* The runtime's version as the backend knows it (docker: the image's own), or NULL when it
 * is this host's to ask (native). */
const char *kb_sandbox_runtime_version(struct kb_sandbox *sb, const char *runtime);

/* " image IMG [engine URL target ADDR]" or "": what a progress line adds after the backend's
 * name. */
void kb_sandbox_describe(const struct kb_sandbox *sb, char *out, size_t outlen);

/* A /proc/stat of the fixture's host for the steal of its CPUs: this host's where the
 * fixture runs here, the engine host's read through the engine (a file the sandbox
 * rewrites each call), or NULL when it cannot be read. */
const char *kb_sandbox_procstat(struct kb_sandbox *sb);

#endif
