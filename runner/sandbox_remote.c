/* sandbox_remote.c -- the "remote" sandbox backend: a fixture on another host, started,
 * sampled and stopped by that host's `kneebench serve-agent` (runner/agent.h). Each handle
 * holds its own connection to the agent; the agent's answers are JSON objects read with
 * jansson. A lost connection reads as "the fixture is gone" (alive 0, with the reason). */
#define _GNU_SOURCE
#include "runner/agent_client.h"

#include <jansson.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "runner/agent.h"
#include "runner/procs.h"
#include "runner/sandbox.h"

#define CALL_TIMEOUT_MS 10000
#define START_TIMEOUT_MS 30000   /* the agent answers once the fixture accepts (15 s max) */

static char agent_addr[256];     /* see kb_sandbox_remote_set_agent */

struct kb_sandbox {
    struct kb_agent_conn *conn;
    char name[64];
    int gone;
    char exit_reason[160];
};

int kb_sandbox_remote_set_agent(const char *hostport, char *err, size_t errlen)
{
    const char *colon = hostport ? strrchr(hostport, ':') : NULL;

    if (!colon || colon == hostport || !colon[1] || strlen(hostport) >= sizeof(agent_addr)) {
        snprintf(err, errlen, "--agent must be HOST:PORT, not '%s'", hostport ? hostport : "");
        return -1;
    }
    snprintf(agent_addr, sizeof(agent_addr), "%s", hostport);
    return 0;
}

/* One call whose answer is a JSON object: the parsed object, or NULL with err. */
static json_t *call_json(struct kb_agent_conn *c, const char *line, int timeout_ms, char *err,
                         size_t errlen)
{
    char reply[4096];
    json_error_t je;
    json_t *j;

    if (kb_agent_call(c, line, timeout_ms, reply, sizeof(reply), err, errlen) < 0)
        return NULL;
    if (!(j = json_loads(reply, 0, &je)) || !json_is_object(j)) {
        snprintf(err, errlen, "agent answered '%s' to '%s' with no JSON object", reply, line);
        json_decref(j);
        return NULL;
    }
    return j;
}

static int remote_available(char *err, size_t errlen)
{
    struct kb_agent_conn *c;
    json_t *id;

    if (!agent_addr[0]) {
        snprintf(err, errlen, "the remote backend needs an agent (--agent HOST:PORT)");
        return -1;
    }
    if (!(c = kb_agent_connect(agent_addr, 5000, err, errlen)))
        return -1;
    id = call_json(c, "identity", CALL_TIMEOUT_MS, err, errlen);
    kb_agent_close(c);
    if (!id)
        return -1;
    if (json_integer_value(json_object_get(id, "protocol")) != KB_AGENT_PROTOCOL) {
        snprintf(err, errlen, "agent at %s speaks another protocol version", agent_addr);
        json_decref(id);
        return -1;
    }
    json_decref(id);
    return 0;
}

static struct kb_sandbox *remote_start(const struct kb_fixture_spec *spec, char *err,
                                       size_t errlen)
{
    struct kb_sandbox *sb = calloc(1, sizeof(*sb));
    char line[128];
    json_t *j = NULL;

    if (!sb) {
        snprintf(err, errlen, "out of memory");
        return NULL;
    }
    snprintf(sb->name, sizeof(sb->name), "%s", spec->name);
    snprintf(line, sizeof(line), "start %s %d", spec->name, spec->port);
    if (!agent_addr[0])
        snprintf(err, errlen, "the remote backend needs an agent (--agent HOST:PORT)");
    else if ((sb->conn = kb_agent_connect(agent_addr, 5000, err, errlen)))
        j = call_json(sb->conn, line, START_TIMEOUT_MS, err, errlen);
    if (!j) {
        kb_agent_close(sb->conn);
        free(sb);
        return NULL;
    }
    json_decref(j);
    return sb;
}

static size_t remote_pids(struct kb_sandbox *sb, pid_t *out, size_t max)
{
    (void)sb;
    (void)out;
    (void)max;
    return 0;
}

static json_t *sample_json(struct kb_sandbox *sb, char *err, size_t errlen)
{
    json_t *j = call_json(sb->conn, "sample", CALL_TIMEOUT_MS, err, errlen);

    if (!j && !sb->gone) {
        sb->gone = 1;
        snprintf(sb->exit_reason, sizeof(sb->exit_reason), "agent: %.140s", err);
    }
    return j;
}

static int remote_alive(struct kb_sandbox *sb)
{
    char err[256];
    json_t *j;
    int alive;

    if (sb->gone || !(j = sample_json(sb, err, sizeof(err))))
        return 0;
    alive = json_is_true(json_object_get(j, "alive"));
    if (!alive) {
        const char *why = json_string_value(json_object_get(j, "exit_reason"));
        sb->gone = 1;
        snprintf(sb->exit_reason, sizeof(sb->exit_reason), "%s", why && *why ? why : "exited");
    }
    json_decref(j);
    return alive;
}

static const char *remote_exit_reason(struct kb_sandbox *sb)
{
    return sb->gone ? sb->exit_reason : "";
}

static long long get_ll(json_t *o, const char *k)
{
    return (long long)json_integer_value(json_object_get(o, k));
}

static void copy_str(char *dst, size_t len, json_t *o, const char *k)
{
    const char *v = json_string_value(json_object_get(o, k));
    snprintf(dst, len, "%s", v ? v : "");
}

static int remote_limits(struct kb_sandbox *sb, struct kb_limits_applied *out, char *err,
                         size_t errlen)
{
    json_t *j = call_json(sb->conn, "limits", CALL_TIMEOUT_MS, err, errlen);

    if (!j)
        return -1;
    memset(out, 0, sizeof(*out));
    snprintf(out->backend, sizeof(out->backend), "remote");
    out->cgroup_version = (int)get_ll(j, "cgroup_version");
    out->cpu_quota_us = get_ll(j, "cpu_quota_us");
    out->cpu_period_us = get_ll(j, "cpu_period_us");
    out->cpus = json_number_value(json_object_get(j, "cpus"));
    copy_str(out->cpuset, sizeof(out->cpuset), j, "cpuset");
    out->memory_bytes = get_ll(j, "memory_bytes");
    out->memsw_bytes = get_ll(j, "memsw_bytes");
    out->pids_max = get_ll(j, "pids_max");
    snprintf(out->paths, sizeof(out->paths), "%s: ", agent_addr);
    copy_str(out->paths + strlen(out->paths), sizeof(out->paths) - strlen(out->paths), j, "paths");
    json_decref(j);
    return 0;
}

static int remote_stop(struct kb_sandbox *sb, char *err, size_t errlen)
{
    json_t *j = call_json(sb->conn, "stop", CALL_TIMEOUT_MS, err, errlen);
    int rc = j ? 0 : -1;

    json_decref(j);
    kb_agent_close(sb->conn);
    free(sb);
    return rc;
}

int kb_sandbox_remote_sample(struct kb_sandbox *sb, struct kb_proc_sample *out, char *err,
                             size_t errlen)
{
    json_t *j = sample_json(sb, err, errlen);

    if (!j)
        return -1;
    out->cpu_seconds = json_number_value(json_object_get(j, "cpu_seconds"));
    out->rss_bytes = get_ll(j, "rss_bytes");
    out->pss_bytes = get_ll(j, "pss_bytes");
    out->fds = (long)get_ll(j, "fds");
    out->threads = (long)get_ll(j, "threads");
    out->nprocs = (size_t)get_ll(j, "processes");
    json_decref(j);
    return 0;
}

const struct kb_sandbox_ops kb_sandbox_remote = {
    .name = "remote",
    .available = remote_available,
    .start = remote_start,
    .pids = remote_pids,
    .alive = remote_alive,
    .exit_reason = remote_exit_reason,
    .limits_applied = remote_limits,
    .stop = remote_stop,
};
