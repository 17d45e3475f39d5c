/* sandbox.c -- the sandbox handle (sandbox.h): the one place a backend is chosen by name,
 * and the dispatch to its ops, with the generic meaning of an op a backend leaves out. */
#define _GNU_SOURCE
#include "runner/sandbox/sandbox_backend.h"
#include "runner/util/portown.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

static const struct kb_sandbox_ops *const backends[] = {
    &kb_sandbox_native, &kb_sandbox_docker,
};

struct kb_sandbox *kb_sandbox_open(const struct kb_sandbox_config *cfg, char *err,
                                   size_t errlen)
{
    const char *name = cfg->backend ? cfg->backend : "native";
    const struct kb_sandbox_ops *ops = NULL;
    struct kb_sandbox *sb;

    for (size_t i = 0; i < sizeof(backends) / sizeof(backends[0]); i++)
        if (!strcmp(backends[i]->name, name))
            ops = backends[i];
    if (!ops) {
        snprintf(err, errlen, "unknown sandbox backend '%s'", name);
        return NULL;
    }
    if (!(sb = calloc(1, sizeof(*sb)))) {
        snprintf(err, errlen, "out of memory");
        return NULL;
    }
    sb->ops = ops;
    sb->no_limits = cfg->no_limits;
    snprintf(sb->root, sizeof(sb->root), "%s", cfg->root ? cfg->root : ".");
    snprintf(sb->image, sizeof(sb->image), "%s", cfg->image ? cfg->image : "");
    snprintf(sb->docker_host, sizeof(sb->docker_host), "%s",
             cfg->docker_host ? cfg->docker_host : "");
    snprintf(sb->docker_context, sizeof(sb->docker_context), "%s",
             cfg->docker_context ? cfg->docker_context : "");
    snprintf(sb->target, sizeof(sb->target), "%s", cfg->target ? cfg->target : "");
    if (ops->open && ops->open(sb, err, errlen) < 0) {
        kb_sandbox_close(sb);
        return NULL;
    }
    return sb;
}

void kb_sandbox_close(struct kb_sandbox *sb)
{
    char ignored[256];

    if (!sb)
        return;
    for (size_t i = 0; i < KB_SANDBOX_MAX_FIXTURES; i++)
        if (sb->running[i])
            kb_sandbox_stop(sb->running[i], ignored, sizeof(ignored));
    if (sb->ops->close)
        sb->ops->close(sb);
    free(sb);
}

int kb_sandbox_refuse_engine_opts(const struct kb_sandbox *sb, char *err, size_t errlen)
{
    if (!sb->docker_host[0] && !sb->docker_context[0] && !sb->target[0])
        return 0;
    snprintf(err, errlen, "--docker-host, --docker-context and --target are for --backend "
             "docker");
    return -1;
}

const char *kb_sandbox_name(const struct kb_sandbox *sb)
{
    return sb->ops->name;
}

int kb_sandbox_available(struct kb_sandbox *sb, char *err, size_t errlen)
{
    return sb->ops->available(sb, err, errlen);
}

int kb_sandbox_no_limits(const struct kb_sandbox *sb)
{
    return sb->no_limits;
}

int kb_sandbox_on_this_host(const struct kb_sandbox *sb)
{
    return sb->ops->on_this_host && !sb->elsewhere;
}

const char *kb_sandbox_target(const struct kb_sandbox *sb)
{
    return sb->target;
}

int kb_sandbox_sweep_stale(struct kb_sandbox *sb)
{
    return sb->ops->sweep_stale ? sb->ops->sweep_stale(sb) : 0;
}

int kb_sandbox_sweep_rundir(struct kb_sandbox *sb, const char *rundir, char *note,
                            size_t notelen)
{
    if (notelen)
        note[0] = '\0';
    return sb->ops->sweep_rundir && rundir ? sb->ops->sweep_rundir(sb, rundir, note, notelen)
                                           : 0;
}

int kb_sandbox_port_free(struct kb_sandbox *sb, int port, int timeout_ms, char *why,
                         size_t whylen)
{
    if (!kb_sandbox_on_this_host(sb))
        return 0;
    return kb_port_wait_free(sb->target, port, timeout_ms, why, whylen);
}

int kb_sandbox_several(const struct kb_sandbox *sb)
{
    return sb->ops->several;
}

/* Where the next fixture goes: the first free slot, or KB_SANDBOX_MAX_FIXTURES when there is
 * none (a backend without `several` has one slot, taken while a fixture runs). */
static size_t free_slot(const struct kb_sandbox *sb)
{
    size_t n = sb->ops->several ? KB_SANDBOX_MAX_FIXTURES : 1;
    for (size_t i = 0; i < n; i++)
        if (!sb->running[i])
            return i;
    return KB_SANDBOX_MAX_FIXTURES;
}

int kb_sandbox_start(struct kb_sandbox *sb, const struct kb_fixture_spec *spec,
                     struct kb_sandbox_fixture **out, char *err, size_t errlen)
{
    struct kb_sandbox_fixture *f;
    int rc;

    *out = NULL;
    size_t slot = free_slot(sb);
    if (slot == KB_SANDBOX_MAX_FIXTURES) {
        snprintf(err, errlen, "%s cannot start: %s already runs as many fixtures as it can at "
                 "once", spec->name, sb->ops->name);
        return -1;
    }
    if (!(f = calloc(1, sizeof(*f)))) {
        snprintf(err, errlen, "out of memory");
        return -1;
    }
    f->sb = sb;
    if ((rc = sb->ops->start(f, spec, err, errlen)) < 0) {
        free(f);
        return rc;
    }
    sb->running[slot] = *out = f;
    return 0;
}

size_t kb_sandbox_pids(struct kb_sandbox_fixture *f, pid_t *out, size_t max)
{
    return f->sb->ops->pids ? f->sb->ops->pids(f, out, max) : 0;
}

int kb_sandbox_port_owned(struct kb_sandbox_fixture *f, int port, char *why, size_t whylen)
{
    pid_t pids[KB_SANDBOX_MAX_PIDS];
    size_t n;

    if (!kb_sandbox_on_this_host(f->sb))
        return 0;
    n = kb_sandbox_pids(f, pids, KB_SANDBOX_MAX_PIDS);
    return kb_port_check_owned(f->sb->target, port, pids, n, why, whylen);
}

int kb_sandbox_sample(struct kb_sandbox_fixture *f, struct kb_proc_sample *out, char *err,
                      size_t errlen)
{
    pid_t pids[KB_SANDBOX_MAX_PIDS];

    if (f->sb->ops->sample)
        return f->sb->ops->sample(f, out, err, errlen);
    kb_procs_sample(pids, kb_sandbox_pids(f, pids, KB_SANDBOX_MAX_PIDS), out);
    return 0;
}

int kb_sandbox_alive(struct kb_sandbox_fixture *f)
{
    return f->sb->ops->alive(f);
}

int kb_sandbox_lost(struct kb_sandbox_fixture *f, char *why, size_t whylen)
{
    if (whylen)
        why[0] = '\0';
    return f->sb->ops->lost ? f->sb->ops->lost(f, why, whylen) : 0;
}

const char *kb_sandbox_exit_reason(struct kb_sandbox_fixture *f)
{
    return f->sb->ops->exit_reason(f);
}

int kb_sandbox_limits(struct kb_sandbox_fixture *f, struct kb_limits_applied *out, char *err,
                      size_t errlen)
{
    return f->sb->ops->limits(f, out, err, errlen);
}

int kb_sandbox_stop(struct kb_sandbox_fixture *f, char *err, size_t errlen)
{
    int rc = f->sb->ops->stop(f, err, errlen);

    for (size_t i = 0; i < KB_SANDBOX_MAX_FIXTURES; i++)
        if (f->sb->running[i] == f)
            f->sb->running[i] = NULL;
    free(f);
    return rc;
}

int kb_sandbox_db_start(struct kb_sandbox *sb, struct kb_pgrun *pg, const char *dir, char *err,
                        size_t errlen)
{
    return sb->ops->db_start ? sb->ops->db_start(sb, pg, dir, err, errlen)
                             : kb_pgrun_start(pg, dir, err, errlen);
}

int kb_sandbox_db_stop(struct kb_sandbox *sb, struct kb_pgrun *pg, char *err, size_t errlen)
{
    if (!pg->running)
        return 0;
    return sb->ops->db_stop ? sb->ops->db_stop(sb, pg, err, errlen)
                            : kb_pgrun_stop(pg, err, errlen);
}

json_t *kb_sandbox_limits_json(const struct kb_limits_applied *la)
{
    return json_pack("{s:s,s:i,s:I,s:I,s:f,s:s,s:s,s:I,s:I,s:I,s:s}", "backend", la->backend,
        "cgroup_version", la->cgroup_version, "cpu_quota_us", (json_int_t)la->cpu_quota_us,
        "cpu_period_us", (json_int_t)la->cpu_period_us, "cpus", la->cpus, "cpuset", la->cpuset,
        "cpuset_mems", la->cpuset_mems, "memory_bytes", (json_int_t)la->memory_bytes,
        "memsw_bytes", (json_int_t)la->memsw_bytes, "pids_max", (json_int_t)la->pids_max,
        "paths", la->paths);
}

json_t *kb_sandbox_identity(struct kb_sandbox *sb, const struct kb_fixture_parts *p,
                            char *err, size_t errlen)
{
    return sb->ops->identity(sb, p, err, errlen);
}

json_t *kb_sandbox_run_evidence(struct kb_sandbox *sb, char *err, size_t errlen)
{
    return sb->ops->run_evidence ? sb->ops->run_evidence(sb, err, errlen) : json_object();
}

json_t *kb_sandbox_plan_keys(struct kb_sandbox *sb)
{
    return sb->ops->plan_keys ? sb->ops->plan_keys(sb) : json_object();
}

const char *kb_sandbox_runtime_version(struct kb_sandbox *sb, const char *runtime)
{
    return sb->ops->runtime_version ? sb->ops->runtime_version(sb, runtime) : NULL;
}

void kb_sandbox_describe(const struct kb_sandbox *sb, char *out, size_t outlen)
{
    if (sb->ops->describe)
        sb->ops->describe(sb, out, outlen);
    else if (outlen)
        out[0] = '\0';
}

const char *kb_sandbox_procstat(struct kb_sandbox *sb)
{
    if (sb->ops->procstat)
        return sb->ops->procstat(sb);
    return kb_sandbox_on_this_host(sb) ? "/proc/stat" : NULL;
}
