/* sandbox_backend.h -- what a sandbox backend implements; only the sandbox files include it.
 *
 * Owns the layout of the handles sandbox.h keeps opaque and the ops table each backend
 * fills. sandbox.c picks the table by name and dispatches; a backend keeps its own state
 * in sb->state (made by open, freed by close) and each fixture's in f->priv (made by start,
 * freed by stop). An op a backend leaves NULL has the generic meaning sandbox.c gives it
 * (nothing to sweep, the processes sampled from pids(), an empty evidence object). */
#ifndef KB_SANDBOX_BACKEND_H
#define KB_SANDBOX_BACKEND_H

#include "runner/sandbox/sandbox.h"
#include "runner/util/paths.h"

struct kb_sandbox {
    const struct kb_sandbox_ops *ops;
    char root[KB_PATH_MAX];
    char image[256];
    char docker_host[512];
    char docker_context[128];
    char target[64];           /* where the fixture is reached; the backend's open sets it */
    int no_limits;
    int elsewhere;             /* the fixture runs on another host (the backend's open sets it) */
    void *state;               /* the backend's own */
    /* those started and not yet stopped: one, unless the backend runs several at once */
    struct kb_sandbox_fixture *running[KB_SANDBOX_MAX_FIXTURES];
};

struct kb_sandbox_fixture {
    struct kb_sandbox *sb;
    void *priv;                /* the backend's own */
};

struct kb_sandbox_ops {
    const char *name;
    int on_this_host;          /* see kb_sandbox_on_this_host (unless sb->elsewhere) */
    int several;               /* see kb_sandbox_several */
    /* Check sb's configuration and make sb->state. 0, or -1 with err (close() still runs). */
    int (*open)(struct kb_sandbox *sb, char *err, size_t errlen);
    void (*close)(struct kb_sandbox *sb);
    int (*available)(struct kb_sandbox *sb, char *err, size_t errlen);
    int (*sweep_stale)(struct kb_sandbox *sb);
    int (*sweep_rundir)(struct kb_sandbox *sb, const char *rundir, char *note, size_t notelen);
    /* f->priv from spec: 0, -1 or KB_SANDBOX_HARNESS with err. */
    int (*start)(struct kb_sandbox_fixture *f, const struct kb_fixture_spec *spec, char *err,
                 size_t errlen);
    size_t (*pids)(struct kb_sandbox_fixture *f, pid_t *out, size_t max);
    int (*sample)(struct kb_sandbox_fixture *f, struct kb_proc_sample *out, char *err,
                  size_t errlen);
    int (*alive)(struct kb_sandbox_fixture *f);
    const char *(*exit_reason)(struct kb_sandbox_fixture *f);
    int (*lost)(struct kb_sandbox_fixture *f, char *why, size_t whylen);   /* NULL: never */
    int (*limits)(struct kb_sandbox_fixture *f, struct kb_limits_applied *out, char *err,
                  size_t errlen);
    /* Stop the fixture and free f->priv (not f). 0, or -1 with err. */
    int (*stop)(struct kb_sandbox_fixture *f, char *err, size_t errlen);
    /* The db route's PostgreSQL (sandbox.h); NULL: kb_pgrun_start/stop on this host. */
    int (*db_start)(struct kb_sandbox *sb, struct kb_pgrun *pg, const char *dir, char *err,
                    size_t errlen);
    int (*db_stop)(struct kb_sandbox *sb, struct kb_pgrun *pg, char *err, size_t errlen);
    json_t *(*identity)(struct kb_sandbox *sb, const struct kb_fixture_parts *p, char *err,
                        size_t errlen);
    json_t *(*run_evidence)(struct kb_sandbox *sb, char *err, size_t errlen);
    json_t *(*plan_keys)(struct kb_sandbox *sb);
    const char *(*runtime_version)(struct kb_sandbox *sb, const char *runtime);
    void (*describe)(const struct kb_sandbox *sb, char *out, size_t outlen);
    const char *(*procstat)(struct kb_sandbox *sb);   /* NULL: this host's /proc/stat */
};

extern const struct kb_sandbox_ops kb_sandbox_native;
extern const struct kb_sandbox_ops kb_sandbox_docker;

/* For the native backend: refuse an engine or a target, which only docker has. 0, or -1
 * with err. */
int kb_sandbox_refuse_engine_opts(const struct kb_sandbox *sb, char *err, size_t errlen);

#endif
