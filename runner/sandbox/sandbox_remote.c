/* sandbox_remote.c -- the "remote" sandbox backend: a fixture on another host, started,
 * sampled and stopped by that host's `kneebench serve-agent` (runner/sandbox/agent.h).
 *
 * The sandbox keeps the agent's address, the target (the fixture host's IPv4 address the
 * load and the pre/postflight go to; the agent's host unless given) and the agent's
 * "identity" answer from kb_sandbox_available(): the agent decides whether its fixtures
 * run under limits (serve-agent --no-limits), and runs one fixture at a time, so the
 * identity is not asked again while a fixture runs. Each fixture holds its own connection
 * to the agent: start -> "start NAME PORT" (spec's argv, env and rundir stay on the
 * agent's side: it expands the contract's own template), alive/exit_reason and sample ->
 * "sample", limits -> "limits", stop -> "stop". Every connection proves the agent's token
 * (--agent-token FILE, read once at open). Its processes are not on this host: pids()
 * has none, and the port checks are the agent's, which says so with KB_AGENT_HARNESS. The
 * answers are JSON objects read with jansson; a lost session reads as "the fixture is
 * gone" (alive 0, with the reason) and as lost (kb_sandbox_lost): the agent stops a fixture
 * whose session ended, and the point is the harness's to redo, not the fixture's failure. A fixture's identity is the agent's host as it
 * described itself plus the contract's command: the agent hashes no files, so a rebuild on
 * its host is not seen here (a resumed run asks anew, and a different host then fails the
 * identity baseline). */
#define _GNU_SOURCE
#include "runner/sandbox/sandbox_backend.h"

#include <arpa/inet.h>
#include <jansson.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "runner/sandbox/agent.h"
#include "runner/sandbox/agent_auth.h"
#include "runner/sandbox/agent_client.h"
#include "runner/util/digest.h"

#define CALL_TIMEOUT_MS 10000
#define START_TIMEOUT_MS 30000   /* the agent answers once the fixture accepts (15 s max) */

/* The sandbox's state. */
struct rm_state {
    json_t *identity;          /* the agent's "identity" answer; NULL until asked */
    char token[KB_AGENT_TOKEN_MAX];   /* the secret every session proves */
};

/* One fixture's. */
struct rm_fx {
    struct kb_agent_conn *conn;
    int gone;
    int lost;                  /* the session, not the fixture, went: the agent stopped it */
    char exit_reason[160];
};

/* HOST:PORT, the target defaulting to HOST, which must be an IPv4 address. */
static int rm_open(struct kb_sandbox *box, char *err, size_t errlen)
{
    const char *colon = strrchr(box->agent, ':');
    struct in_addr ia;

    if (box->no_limits) {
        snprintf(err, errlen, "--no-limits is the agent's to choose (serve-agent --no-limits); "
                 "the run records what the agent applied");
        return -1;
    }
    if (!box->agent[0]) {
        snprintf(err, errlen, "the remote backend needs --agent HOST:PORT");
        return -1;
    }
    if (!colon || colon == box->agent || !colon[1]) {
        snprintf(err, errlen, "--agent must be HOST:PORT, not '%s'", box->agent);
        return -1;
    }
    if (!box->target[0])
        snprintf(box->target, sizeof(box->target), "%.*s", (int)(colon - box->agent),
                 box->agent);
    if (inet_pton(AF_INET, box->target, &ia) != 1) {
        snprintf(err, errlen, "--target must be the fixture host's IPv4 address, not '%s'",
                 box->target);
        return -1;
    }
    if (!box->agent_token[0]) {
        snprintf(err, errlen, "the remote backend needs --agent-token FILE (the agent's token; "
                 "docs/security.md)");
        return -1;
    }
    if (!(box->state = calloc(1, sizeof(struct rm_state)))) {
        snprintf(err, errlen, "out of memory");
        return -1;
    }
    return kb_agent_token_load(box->agent_token, ((struct rm_state *)box->state)->token,
                               KB_AGENT_TOKEN_MAX, err, errlen);
}

static void rm_close(struct kb_sandbox *box)
{
    struct rm_state *st = box->state;

    if (st)
        json_decref(st->identity);
    free(st);
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

/* 1 when the agent's fixtures bind an address that is not the target (serve-agent
 * --serve-bind, loopback unless given): the load could not reach them. */
static int serves_elsewhere(const struct kb_sandbox *box, json_t *id, char *err, size_t errlen)
{
    const char *bind = json_string_value(json_object_get(id, "serve_bind"));
    if (!bind || !strcmp(bind, "0.0.0.0") || !strcmp(bind, box->target))
        return 0;
    snprintf(err, errlen, "agent %s: its fixtures bind %s, not the target %s (start it with "
             "serve-agent --serve-bind %s)", box->agent, bind, box->target, box->target);
    return 1;
}

/* The agent answers, speaks this protocol, and says whether it applies limits; its
 * identity is kept as the run's evidence of the fixture's host. */
static int rm_available(struct kb_sandbox *box, char *err, size_t errlen)
{
    struct rm_state *st = box->state;
    struct kb_agent_conn *c;
    json_t *id;

    if (!(c = kb_agent_connect(box->agent, st->token, 5000, err, errlen)))
        return -1;
    id = call_json(c, "identity", CALL_TIMEOUT_MS, err, errlen);
    kb_agent_close(c);
    if (!id)
        return -1;
    if (json_integer_value(json_object_get(id, "protocol")) != KB_AGENT_PROTOCOL) {
        snprintf(err, errlen, "agent at %s speaks another protocol version", box->agent);
        json_decref(id);
        return -1;
    }
    if (serves_elsewhere(box, id, err, errlen)) {
        json_decref(id);
        return -1;
    }
    box->no_limits = !json_is_true(json_object_get(id, "limits"));
    json_decref(st->identity);
    st->identity = id;
    return 0;
}

static int rm_start(struct kb_sandbox_fixture *f, const struct kb_fixture_spec *spec,
                    char *err, size_t errlen)
{
    /* the agent says when its host, not the fixture, stood in the way (agent_client.c
     * puts "agent: " before its refusal) */
    static const char harness[] = "agent: " KB_AGENT_HARNESS;
    struct rm_fx *fx = calloc(1, sizeof(*fx));
    char line[128];
    json_t *j = NULL;

    if (!fx) {
        snprintf(err, errlen, "out of memory");
        return -1;
    }
    snprintf(line, sizeof(line), "start %s %d", spec->name, spec->port);
    if ((fx->conn = kb_agent_connect(f->sb->agent, ((struct rm_state *)f->sb->state)->token,
                                     5000, err, errlen)))
        j = call_json(fx->conn, line, START_TIMEOUT_MS, err, errlen);
    if (!j) {
        kb_agent_close(fx->conn);
        free(fx);
        if (strncmp(err, harness, sizeof(harness) - 1))
            return -1;
        memmove(err, err + sizeof(harness) - 1, strlen(err + sizeof(harness) - 1) + 1);
        return KB_SANDBOX_HARNESS;
    }
    json_decref(j);
    f->priv = fx;
    return 0;
}

static json_t *sample_json(struct rm_fx *fx, char *err, size_t errlen)
{
    json_t *j = call_json(fx->conn, "sample", CALL_TIMEOUT_MS, err, errlen);

    if (!j && !fx->gone) {
        fx->gone = 1;
        /* an answer that is not the fixture's state is the session's end, not the fixture's:
         * no answer, a lost connection, or a refusal */
        fx->lost = 1;
        snprintf(fx->exit_reason, sizeof(fx->exit_reason), "agent: %.140s", err);
    }
    return j;
}

static int rm_alive(struct kb_sandbox_fixture *f)
{
    struct rm_fx *fx = f->priv;
    char err[256];
    json_t *j;
    int alive;

    if (fx->gone || !(j = sample_json(fx, err, sizeof(err))))
        return 0;
    alive = json_is_true(json_object_get(j, "alive"));
    if (!alive) {
        const char *why = json_string_value(json_object_get(j, "exit_reason"));
        fx->gone = 1;
        snprintf(fx->exit_reason, sizeof(fx->exit_reason), "%s", why && *why ? why : "exited");
    }
    json_decref(j);
    return alive;
}

static int rm_lost(struct kb_sandbox_fixture *f, char *why, size_t whylen)
{
    struct rm_fx *fx = f->priv;
    if (fx->lost)
        snprintf(why, whylen, "lost the session with agent %s (%s)", f->sb->agent,
                 fx->exit_reason);
    return fx->lost;
}

static const char *rm_exit_reason(struct kb_sandbox_fixture *f)
{
    struct rm_fx *fx = f->priv;

    return fx->gone ? fx->exit_reason : "";
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

static int rm_limits(struct kb_sandbox_fixture *f, struct kb_limits_applied *out, char *err,
                     size_t errlen)
{
    struct rm_fx *fx = f->priv;
    json_t *j = call_json(fx->conn, "limits", CALL_TIMEOUT_MS, err, errlen);

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
    snprintf(out->paths, sizeof(out->paths), "%s: ", f->sb->agent);
    copy_str(out->paths + strlen(out->paths), sizeof(out->paths) - strlen(out->paths), j, "paths");
    json_decref(j);
    return 0;
}

static int rm_stop(struct kb_sandbox_fixture *f, char *err, size_t errlen)
{
    struct rm_fx *fx = f->priv;
    json_t *j = call_json(fx->conn, "stop", CALL_TIMEOUT_MS, err, errlen);
    int rc = j ? 0 : -1;

    json_decref(j);
    kb_agent_close(fx->conn);
    free(fx);
    return rc;
}

/* The processes are on the agent's host: it samples them there. */
static int rm_sample(struct kb_sandbox_fixture *f, struct kb_proc_sample *out, char *err,
                     size_t errlen)
{
    json_t *j = sample_json(f->priv, err, errlen);

    memset(out, 0, sizeof(*out));
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

/* The agent's host as it described itself at kb_sandbox_available() and the contract's
 * command. */
static json_t *rm_identity(struct kb_sandbox *box, const struct kb_fixture_parts *p, char *err,
                           size_t errlen)
{
    static const char *const keys[] = { "hostname", "kernel", "cpu_model", "backend" };
    struct rm_state *st = box->state;
    char hex[KB_SHA256_HEX];
    json_t *ag = st->identity, *host = json_object(), *cmd = json_array(), *out = NULL;
    struct kb_digest *d;
    if (!ag) {
        snprintf(err, errlen, "agent %s: no identity kept from setup", box->agent);
        goto out;
    }
    d = kb_digest_new();
    kb_digest_str(d, box->agent);
    for (size_t i = 0; i < sizeof(keys) / sizeof(keys[0]); i++) {
        const char *v = json_string_value(json_object_get(ag, keys[i]));
        kb_digest_str(d, v);
        json_object_set_new(host, keys[i], json_string(v ? v : ""));
    }
    for (size_t i = 0; i < p->rt->command.n; i++) {
        kb_digest_str(d, p->rt->command.v[i]);
        json_array_append_new(cmd, json_string(p->rt->command.v[i]));
    }
    if (kb_digest_hex(d, hex) < 0) {
        snprintf(err, errlen, "agent %s: SHA-256 failed", box->agent);
        goto out;
    }
    out = json_pack("{s:s,s:s,s:O,s:O,s:s,s:s}", "agent", box->agent, "target", box->target,
                    "agent_host", host, "command", cmd, "sha256", hex, "note",
                    "remote fixture: the agent's host and the contract's command; the agent "
                    "hashes no files");
out:
    json_decref(host);
    json_decref(cmd);
    return out;
}

/* run.json's "target": the host, the agent and the agent's identity answer. */
static json_t *rm_run_evidence(struct kb_sandbox *box, char *err, size_t errlen)
{
    struct rm_state *st = box->state;

    (void)err;
    (void)errlen;
    return json_pack("{s:{s:s,s:s,s:O}}", "target", "host", box->target, "agent", box->agent,
                     "agent_identity", st->identity ? st->identity : json_null());
}

/* A remote run resumes only against the same fixture host. */
static json_t *rm_plan_keys(struct kb_sandbox *box)
{
    return json_pack("{s:{s:s,s:s}}", "target", "host", box->target, "agent", box->agent);
}

/* This host's versions would be of the wrong host's runtimes. */
static const char *rm_runtime_version(struct kb_sandbox *box, const char *runtime)
{
    (void)box;
    (void)runtime;
    return "unknown (remote fixture host; serve-agent reports no versions)";
}

static void rm_describe(const struct kb_sandbox *box, char *out, size_t outlen)
{
    snprintf(out, outlen, " target %s agent %s", box->target, box->agent);
}

/* No sweep: what is stale on the fixture host is its agent's to remove. */
const struct kb_sandbox_ops kb_sandbox_remote = {
    .name = "remote",
    .several = 0,
    .on_this_host = 0,
    .open = rm_open,
    .close = rm_close,
    .available = rm_available,
    .start = rm_start,
    .sample = rm_sample,
    .alive = rm_alive,
    .exit_reason = rm_exit_reason,
    .lost = rm_lost,
    .limits = rm_limits,
    .stop = rm_stop,
    .identity = rm_identity,
    .run_evidence = rm_run_evidence,
    .plan_keys = rm_plan_keys,
    .runtime_version = rm_runtime_version,
    .describe = rm_describe,
};
