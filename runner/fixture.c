/* fixture.c -- one runtime run for a run: start, wait, limits, identity, samples, the load
 * child (fixture.h). */
#define _GNU_SOURCE
#include "runner/fixture.h"
#include "runner/agent.h"
#include "runner/agent_client.h"
#include "runner/capture.h"
#include "runner/clock.h"
#include "runner/cpulist.h"
#include "runner/digest.h"
#include "runner/evidence.h"
#include "runner/portown.h"
#include "runner/preflight.h"
#include "runner/spawn.h"

#include <arpa/inet.h>
#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <netinet/in.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/prctl.h>
#include <sys/socket.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#ifndef KB_ROOT
#define KB_ROOT "."
#endif

/* sandbox_docker.c's default too: both read $KB_DOCKER_IMAGE, which setup makes agree */
#define KB_FX_DEFAULT_IMAGE "kneebench:latest"

double kb_fx_now_s(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (double)ts.tv_sec + ts.tv_nsec / 1e9;
}

/* ---- the run's setup ------------------------------------------------------------------- */

static int placement(struct kb_fx *fx, const struct kb_fx_opts *o, char *err, size_t errlen)
{
    cpu_set_t srv;
    char why[400];
    if (kb_cpulist_parse_online(o->server_cpus ? o->server_cpus : fx->c->server_cpus, &srv,
                                fx->server_cpus, sizeof(fx->server_cpus), why, sizeof(why)) < 0 ||
        kb_cpulist_parse_online(o->client_cpus ? o->client_cpus : fx->c->client_cpus,
                                &fx->client_set, fx->client_cpus, sizeof(fx->client_cpus), why,
                                sizeof(why)) < 0) {
        snprintf(err, errlen, "server or client CPUs: %s", why);
        return -1;
    }
    CPU_AND(&srv, &srv, &fx->client_set);
    /* a remote fixture's CPUs are another host's: no overlap with the client's here */
    if (CPU_COUNT(&srv) > 0 && !kb_fx_remote(fx)) {
        snprintf(err, errlen, "server CPUs %s and client CPUs %s overlap", fx->server_cpus,
                 fx->client_cpus);
        return -1;
    }
    return 0;
}

/* The docker backend's image: named once, in the environment the sandbox reads, so the
 * containers started and the identity recorded are of the same image. */
static int setup_image(struct kb_fx *fx, char *err, size_t errlen)
{
    const char *img = getenv("KB_DOCKER_IMAGE");
    snprintf(fx->image, sizeof(fx->image), "%s", img && *img ? img : KB_FX_DEFAULT_IMAGE);
    if (setenv("KB_DOCKER_IMAGE", fx->image, 1) < 0) {
        snprintf(err, errlen, "setenv KB_DOCKER_IMAGE: %s", strerror(errno));
        return -1;
    }
    return 0;
}

int kb_fx_remote(const struct kb_fx *fx)
{
    return fx->ops == &kb_sandbox_remote;
}

/* The agent's "identity" answer, kept as the run's evidence of the fixture's host. */
static int agent_identity(struct kb_fx *fx, char *err, size_t errlen)
{
    struct kb_agent_conn *c = kb_agent_connect(fx->agent, 5000, err, errlen);
    json_t *j;
    int rc = -1;
    if (!c)
        return -1;
    if (kb_agent_call(c, "identity", 10000, fx->agent_identity, sizeof(fx->agent_identity),
                      err, errlen) == 0) {
        if (!(j = json_loads(fx->agent_identity, 0, NULL)) || !json_is_object(j)) {
            snprintf(err, errlen, "agent %s: its identity is not a JSON object", fx->agent);
        } else {
            /* the agent decides whether its fixtures run under limits (serve-agent --no-limits) */
            fx->no_limits = !json_is_true(json_object_get(j, "limits"));
            rc = 0;
        }
        json_decref(j);
    }
    kb_agent_close(c);
    return rc;
}

/* fx->agent HOST:PORT and fx->target IPv4 (default: the agent's host). */
static int setup_remote(struct kb_fx *fx, const struct kb_fx_opts *o, char *err, size_t errlen)
{
    struct in_addr ia;
    const char *colon;
    if (o->no_limits) {
        snprintf(err, errlen, "--no-limits is the agent's to choose (serve-agent --no-limits); "
                 "the run records what the agent applied");
        return -1;
    }
    if (!fx->agent[0]) {
        snprintf(err, errlen, "the remote backend needs --agent HOST:PORT");
        return -1;
    }
    if (kb_sandbox_remote_set_agent(fx->agent, err, errlen) < 0)
        return -1;
    colon = strrchr(fx->agent, ':');
    if (!fx->target[0])
        snprintf(fx->target, sizeof(fx->target), "%.*s", (int)(colon - fx->agent), fx->agent);
    if (inet_pton(AF_INET, fx->target, &ia) != 1) {
        snprintf(err, errlen, "--target must be the fixture host's IPv4 address, not '%s'",
                 fx->target);
        return -1;
    }
    if (fx->ops->available(err, errlen) < 0)
        return -1;
    return agent_identity(fx, err, errlen);
}

int kb_fx_setup(struct kb_fx *fx, const struct kb_contract *c, const struct kb_fx_opts *o,
                char *err, size_t errlen)
{
    char why[512];
    fx->c = c;
    fx->build = o->build;
    fx->no_limits = o->no_limits;
    fx->client_rt = !o->client_other;
    if (!(fx->ops = kb_sandbox_backend(o->backend))) {
        snprintf(err, errlen, "unknown or unbuilt sandbox backend '%s'", o->backend);
        return -1;
    }
    if (kb_fx_remote(fx)) {
        if (setup_remote(fx, o, err, errlen) < 0)
            return -1;
    } else if (fx->agent[0] || fx->target[0]) {
        snprintf(err, errlen, "--agent and --target are for --backend remote");
        return -1;
    } else {
        snprintf(fx->target, sizeof(fx->target), "127.0.0.1");
    }
    if (!strcmp(fx->ops->name, "docker") && setup_image(fx, err, errlen) < 0)
        return -1;
    if (!fx->no_limits && !kb_fx_remote(fx) && fx->ops->available(err, errlen) < 0)
        return -1;
    if (fx->image[0] &&
        kb_fx_image_id(fx->image, fx->image_id, sizeof(fx->image_id), why, sizeof(why)) < 0) {
        snprintf(err, errlen, "image %s: %s", fx->image, why);
        return -1;
    }
    if (placement(fx, o, err, errlen) < 0)
        return -1;
    /* our own binary by default: the very image whose hash the run records */
    fx->self_exec = !o->load_cmd;
    if (o->load_cmd)
        snprintf(fx->load_cmd, sizeof(fx->load_cmd), "%s", o->load_cmd);
    else if (readlink("/proc/self/exe", fx->load_cmd, sizeof(fx->load_cmd) - 1) < 0)
        snprintf(fx->load_cmd, sizeof(fx->load_cmd), "%s/kneebench", fx->build);
    return 0;
}

int kb_fx_plan_file(const char *run, json_t *want, const char *what, char *err,
                    size_t errlen)
{
    char path[4200];
    json_t *have;
    int rc = 0;
    kb_path(path, sizeof(path), run, "plan.json");
    have = json_load_file(path, 0, NULL);
    if (have && !json_equal(have, want)) {
        snprintf(err, errlen, "%s holds a different %s; resume it with the same options or "
                 "use a new directory", run, what);
        rc = -1;
    } else if (!have) {
        rc = kb_write_json_atomic(path, want, err, errlen);
    }
    json_decref(have);
    json_decref(want);
    return rc;
}

int kb_fx_run_file(const char *run, json_t *identity, time_t started, char *err,
                   size_t errlen)
{
    char path[4200];
    kb_path(path, sizeof(path), run, "run.json");
    if (kb_file_exists(path))
        snprintf(path, sizeof(path), "%s/run-resumed-%ld.json", run, (long)started);
    return kb_write_json_atomic(path, identity, err, errlen);
}

void kb_fx_signals(void (*handler)(int))
{
    struct sigaction sa;
    memset(&sa, 0, sizeof(sa));
    sa.sa_handler = handler;        /* no SA_RESTART: blocking calls return early on Ctrl-C */
    sigaction(SIGINT, &sa, NULL);
    sigaction(SIGTERM, &sa, NULL);
    signal(SIGPIPE, SIG_IGN);
}

/* ---- the fixture's command and identity ------------------------------------------------ */

/* What the contract's placeholders stand for in this run. */
static struct kb_tmpl_vars fx_vars(const struct kb_fx *fx, const char *rundir)
{
    return (struct kb_tmpl_vars){ .root = KB_ROOT, .build = fx->build, .bind = "127.0.0.1",
                                  .rundir = rundir, .port = fx->port, .cpus = fx->c->cpus };
}

char *kb_fx_expand(const struct kb_fx *fx, const char *tmpl, const char *rundir)
{
    struct kb_tmpl_vars v = fx_vars(fx, rundir);
    return kb_tmpl_expand(tmpl, &v);
}

int kb_fx_image_id(const char *image, char *id, size_t idlen, char *err, size_t errlen)
{
    char *const argv[] = { "docker", "image", "inspect", "--format", "{{.Id}}", (char *)image,
                           NULL };
    if (kb_capture_line(argv, id, idlen) < 0 || strncmp(id, "sha256:", 7) != 0) {
        snprintf(err, errlen, "docker image inspect: %s", id[0] ? id : "failed");
        id[0] = '\0';
        return -1;
    }
    return 0;
}

/* The image is what runs: its ID, and the contract's command (the entrypoint starts the
 * runtime as the contract says), unexpanded so that a free port per start is no change. */
static json_t *image_identity(const struct kb_fx *fx, char *err, size_t errlen)
{
    const struct kb_runtime *rt = fx->rt;
    char id[160], hex[KB_SHA256_HEX];
    struct kb_digest *d;
    json_t *cmd = json_array();
    if (kb_fx_image_id(fx->image, id, sizeof(id), err, errlen) < 0) {
        json_decref(cmd);
        return NULL;
    }
    d = kb_digest_new();
    kb_digest_str(d, id);
    for (size_t i = 0; i < rt->command.n; i++) {
        kb_digest_str(d, rt->command.v[i]);
        json_array_append_new(cmd, json_string(rt->command.v[i]));
    }
    if (kb_digest_hex(d, hex) < 0) {
        snprintf(err, errlen, "image %s: SHA-256 failed", fx->image);
        json_decref(cmd);
        return NULL;
    }
    return json_pack("{s:s,s:s,s:o,s:s}", "image", fx->image, "image_id", id, "command", cmd,
                     "sha256", hex);
}

/* image-identity.py's JSON: the image's labels, base and its own image.json */
#define IMAGE_IDENTITY_MAX (256 * 1024)

json_t *kb_fx_image_identity(const struct kb_fx *fx, char *err, size_t errlen)
{
    char *const argv[] = { KB_ROOT "/docker/image-identity.py", (char *)fx->image, NULL };
    struct kb_capture c = { .out = malloc(IMAGE_IDENTITY_MAX), .out_cap = IMAGE_IDENTITY_MAX };
    char *out = c.out, why[512];
    json_error_t je;
    json_t *j = NULL;
    int st = out ? kb_capture_run(argv, &c, why, sizeof(why)) : -1;
    if (!out)
        snprintf(err, errlen, "%s: out of memory", argv[0]);
    else if (st < 0)
        snprintf(err, errlen, "%s", why);
    else if (c.truncated)
        snprintf(err, errlen, "%s %s printed more than %d bytes", argv[0], fx->image,
                 IMAGE_IDENTITY_MAX);
    else if (st != 0)
        snprintf(err, errlen, "%s %s exited %d: %.300s", argv[0], fx->image, st, out);
    else if (!(j = json_loads(out, 0, &je)) || !json_is_object(j) ||
             !json_is_string(json_object_get(j, "id"))) {
        snprintf(err, errlen, "%s %s: not its JSON: %.200s", argv[0], fx->image,
                 j ? "no image id" : je.text);
        json_decref(j);
        j = NULL;
    }
    free(out);
    return j;
}

/* A remote fixture: the agent's host as it described itself at kb_fx_setup() (the agent
 * serves one client at a time, and the sandbox holds that connection while the fixture
 * runs, so it is not asked again here; a resumed run asks anew, and a different host then
 * fails the identity baseline) and the contract's command. The agent hashes none of its
 * files, so a rebuild on its host is not seen here. */
static json_t *remote_identity(const struct kb_fx *fx, char *err, size_t errlen)
{
    static const char *const keys[] = { "hostname", "kernel", "cpu_model", "backend" };
    json_error_t je;
    char hex[KB_SHA256_HEX];
    json_t *ag, *host = json_object(), *cmd = json_array(), *out = NULL;
    struct kb_digest *d;
    if (!(ag = json_loads(fx->agent_identity, 0, &je))) {
        snprintf(err, errlen, "agent %s: no identity kept from setup", fx->agent);
        goto out;
    }
    d = kb_digest_new();
    kb_digest_str(d, fx->agent);
    for (size_t i = 0; i < sizeof(keys) / sizeof(keys[0]); i++) {
        const char *v = json_string_value(json_object_get(ag, keys[i]));
        kb_digest_str(d, v);
        json_object_set_new(host, keys[i], json_string(v ? v : ""));
    }
    for (size_t i = 0; i < fx->rt->command.n; i++) {
        kb_digest_str(d, fx->rt->command.v[i]);
        json_array_append_new(cmd, json_string(fx->rt->command.v[i]));
    }
    json_decref(ag);
    if (kb_digest_hex(d, hex) < 0) {
        snprintf(err, errlen, "agent %s: SHA-256 failed", fx->agent);
        goto out;
    }
    out = json_pack("{s:s,s:s,s:O,s:O,s:s,s:s}", "agent", fx->agent, "target", fx->target,
                    "agent_host", host, "command", cmd, "sha256", hex, "note",
                    "remote fixture: the agent's host and the contract's command; the agent "
                    "hashes no files");
out:
    json_decref(host);
    json_decref(cmd);
    return out;
}

json_t *kb_fx_identity(const struct kb_fx *fx, char *err, size_t errlen)
{
    const struct kb_runtime *rt = fx->rt;
    char *exe[32] = { 0 }, *src[32] = { 0 };
    size_t ne = rt->executables.n < 32 ? rt->executables.n : 32;
    size_t ns = rt->sources.n < 32 ? rt->sources.n : 32;
    json_t *id;
    if (fx->image[0])
        return image_identity(fx, err, errlen);
    if (kb_fx_remote(fx))
        return remote_identity(fx, err, errlen);
    for (size_t i = 0; i < ne; i++)
        exe[i] = kb_fx_expand(fx, rt->executables.v[i], NULL);
    for (size_t i = 0; i < ns; i++) {
        /* relative to the tree's root; an absolute path (a test's own fixture) as is */
        const char *base = rt->sources.v[i][0] == '/' ? "" : KB_ROOT "/";
        if (asprintf(&src[i], "%s%s", base, rt->sources.v[i]) < 0)
            src[i] = NULL;
    }
    id = kb_fixture_identity(exe, ne, src, ns, err, errlen);
    for (size_t i = 0; i < 32; i++) {
        free(exe[i]);
        free(src[i]);
    }
    return id;
}

json_t *kb_fx_limits_json(const struct kb_limits_applied *la)
{
    return json_pack("{s:s,s:i,s:I,s:I,s:f,s:s,s:s,s:I,s:I,s:I,s:s}", "backend", la->backend,
        "cgroup_version", la->cgroup_version, "cpu_quota_us", (json_int_t)la->cpu_quota_us,
        "cpu_period_us", (json_int_t)la->cpu_period_us, "cpus", la->cpus, "cpuset", la->cpuset,
        "cpuset_mems", la->cpuset_mems, "memory_bytes", (json_int_t)la->memory_bytes,
        "memsw_bytes", (json_int_t)la->memsw_bytes, "pids_max", (json_int_t)la->pids_max,
        "paths", la->paths);
}

void kb_fx_spec(const struct kb_fx *fx, const char *rundir, const struct kb_pgrun *pg,
                int db_pool, char **argv, char **env, char *log, struct kb_fixture_spec *spec)
{
    const struct kb_runtime *rt = fx->rt;
    struct kb_tmpl_vars v = fx_vars(fx, rundir);
    int n;
    memset(spec, 0, sizeof(*spec));
    /* past 63 arguments or 15 variables the rest is left out, as the contract is ours */
    n = kb_tmpl_argv(&rt->command, &v, argv, 64);
    if (pg && pg->running)
        kb_pgrun_args(pg, rt, db_pool, argv, n < 0 ? 63 : (size_t)n, 64);
    kb_tmpl_env(&rt->env_keys, &rt->env_vals, &v, env, 16);
    kb_path(log, 4200, rundir, "fixture.log");
    spec->name = rt->name;
    spec->argv = argv;
    spec->env_add = env;
    spec->rundir = rundir;
    spec->log_path = log;
    spec->port = fx->port;
    spec->no_limits = fx->no_limits;
    spec->limits.cpus = fx->c->cpus;
    spec->limits.memory_bytes = fx->c->memory_bytes;
    spec->limits.pids = fx->c->pids;
    snprintf(spec->limits.server_cpuset, sizeof(spec->limits.server_cpuset), "%s",
             fx->server_cpus);
}

void kb_fx_spec_free(char **argv, char **env)
{
    kb_tmpl_free(argv, 64);
    kb_tmpl_free(env, 16);
}

/* ---- start, stop, watch ---------------------------------------------------------------- */

int kb_fx_alive(void *arg)
{
    struct kb_fx *fx = arg;
    return !(fx->stop && *fx->stop) && fx->sb && fx->ops->alive(fx->sb);
}

/* Limits read back into rundir/limits.json, then the identity. */
static int limits_and_identity(struct kb_fx *fx, const char *rundir, char *reason,
                               size_t reasonlen)
{
    char err[1024], path[4300];
    struct kb_limits_applied la;
    json_t *lim;
    if (fx->ops->limits_applied(fx->sb, &la, err, sizeof(err)) < 0) {
        snprintf(reason, reasonlen, "limits: %.400s", err);
        return -1;
    }
    lim = kb_fx_limits_json(&la);
    kb_path(path, sizeof(path), rundir, "limits.json");
    kb_write_json_atomic(path, lim, err, sizeof(err));
    json_decref(lim);
    if (!(fx->identity = kb_fx_identity(fx, err, sizeof(err)))) {
        snprintf(reason, reasonlen, "identity: %.400s", err);
        return -1;
    }
    return 0;
}

/* The fixture's own processes hold every listener on its port (a leftover does not). The
 * remote backend's agent checks this on its host. 0, or -1 with why. */
static int port_is_fixtures(struct kb_fx *fx, char *why, size_t whylen)
{
    pid_t pids[KB_SANDBOX_MAX_PIDS];
    size_t n;
    if (kb_fx_remote(fx))
        return 0;
    n = fx->ops->pids(fx->sb, pids, KB_SANDBOX_MAX_PIDS);
    return kb_port_check_owned(fx->target, fx->port, pids, n, why, whylen);
}

/* Stop the fixture after a failed start, noting in reason what the stop could not do. */
static void abandon(struct kb_fx *fx, char *reason, size_t reasonlen)
{
    char err[512];
    if (kb_fx_stop(fx, err, sizeof(err)) < 0) {
        size_t n = strlen(reason);
        snprintf(reason + n, reasonlen - n, "; stop: %.200s", err);
    }
}

/* Before the start: a leftover of a run that died hard is swept from rundir, and the port
 * must then be free (a process killed a moment ago is given 2 s to let go of it). */
static int port_free_before(struct kb_fx *fx, const struct kb_fixture_spec *spec,
                            char *reason, size_t reasonlen)
{
    char why[512];
    if (kb_fx_remote(fx))
        return 0;
    if (!strcmp(fx->ops->name, "native") && spec->no_limits && spec->rundir)
        kb_sandbox_sweep_session(spec->rundir);
    if (kb_port_wait_free(fx->target, fx->port, 2000, why, sizeof(why)) == 0)
        return 0;
    snprintf(reason, reasonlen, KB_FX_HARNESS_PREFIX "%.400s before the fixture started, "
             "not by a fixture of this run", why);
    return -1;
}

int kb_fx_start(struct kb_fx *fx, const struct kb_fixture_spec *spec, const char *rundir,
                char *reason, size_t reasonlen)
{
    char err[1024];
    if (port_free_before(fx, spec, reason, reasonlen) < 0)
        return KB_FX_HARNESS;
    if (!(fx->sb = fx->ops->start(spec, err, sizeof(err))) ||
        kb_wait_accepting(fx->target, fx->port, 20000, kb_fx_alive, fx, err, sizeof(err)) < 0) {
        /* the agent says when its host, not the fixture, stood in the way (agent_client.c
         * puts "agent: " before its refusal) */
        static const char remote_harness[] = "agent: " KB_AGENT_HARNESS;
        int harness = !strncmp(err, remote_harness, sizeof(remote_harness) - 1);
        if (harness)
            snprintf(reason, reasonlen, KB_FX_HARNESS_PREFIX "%.600s",
                     err + sizeof(remote_harness) - 1);
        else
            snprintf(reason, reasonlen, "start failed: %.400s%s%s", err, fx->sb ? " " : "",
                     fx->sb ? fx->ops->exit_reason(fx->sb) : "");
        abandon(fx, reason, reasonlen);
        return harness ? KB_FX_HARNESS : -1;
    }
    /* readiness takes any listener: it must have been the fixture's */
    if (port_is_fixtures(fx, err, sizeof(err)) < 0) {
        snprintf(reason, reasonlen, KB_FX_HARNESS_PREFIX "%.600s", err);
        abandon(fx, reason, reasonlen);
        return KB_FX_HARNESS;
    }
    return limits_and_identity(fx, rundir, reason, reasonlen);
}

int kb_fx_sweep_sessions(const char *dir)
{
    char path[4200];
    struct dirent *e;
    DIR *d = opendir(dir);
    int n = 0;
    while (d && (e = readdir(d))) {
        if (e->d_name[0] == '.')
            continue;
        kb_path(path, sizeof(path), dir, e->d_name);
        n += kb_sandbox_sweep_session(path);
    }
    if (d)
        closedir(d);
    return n;
}

int kb_fx_stop(struct kb_fx *fx, char *err, size_t errlen)
{
    int rc = 0;
    if (fx->sb && fx->ops->stop(fx->sb, err, errlen) < 0)
        rc = -1;
    fx->sb = NULL;
    json_decref(fx->identity);
    fx->identity = NULL;
    return rc;
}

void kb_fx_check_exit(struct kb_fx *fx, struct kb_point_obs *obs)
{
    if (!obs->fixture_exited && fx->sb && !fx->ops->alive(fx->sb)) {
        obs->fixture_exited = 1;
        snprintf(obs->exit_reason, sizeof(obs->exit_reason), "%s",
                 fx->ops->exit_reason(fx->sb));
    }
}

void kb_fx_sample_server(const struct kb_fx *fx, struct kb_proc_sample *out)
{
    pid_t pids[KB_SANDBOX_MAX_PIDS];
    char err[256];
    size_t n;
    if (kb_fx_remote(fx)) {
        /* the processes are on the agent's host: it samples them there */
        memset(out, 0, sizeof(*out));
        if (fx->sb && kb_sandbox_remote_sample(fx->sb, out, err, sizeof(err)) < 0)
            memset(out, 0, sizeof(*out));
        return;
    }
    n = fx->sb ? fx->ops->pids(fx->sb, pids, KB_SANDBOX_MAX_PIDS) : 0;
    kb_procs_sample(pids, n, out);
}

/* ---- the load child -------------------------------------------------------------------- */

static pid_t spawn_load(struct kb_fx *fx, const struct kb_fx_load *ld, const char *route,
                        long rate, const char *dir)
{
    const struct kb_route *r = kb_contract_route(fx->c, route);
    char url[256], rt[32], dur[32], wu[32], dr[32], th[16], co[16], js[4200], hg[4200],
        uh[4200], log[4200], hl[4200], sc[4200];
    pid_t pid, parent = getpid();
    snprintf(url, sizeof(url), "http://%s:%d%s", fx->target[0] ? fx->target : "127.0.0.1",
             fx->port, r->path);
    snprintf(rt, sizeof(rt), "%ld", rate);
    snprintf(dur, sizeof(dur), "%g", ld->duration_s);
    snprintf(wu, sizeof(wu), "%g", ld->warmup_s);
    snprintf(dr, sizeof(dr), "%g", ld->drain_s);
    snprintf(th, sizeof(th), "%d", ld->threads);
    snprintf(co, sizeof(co), "%d", ld->connections);
    kb_path(js, sizeof(js), dir, "load.json");
    kb_path(hg, sizeof(hg), dir, "corrected.hgrm");
    kb_path(uh, sizeof(uh), dir, "uncorrected.hgrm");
    kb_path(log, sizeof(log), dir, "load.log");
    kb_path(hl, sizeof(hl), dir, "series.hlog");       /* per-second time series */
    kb_path(sc, sizeof(sc), dir, "series.csv");
    char *argv[] = { fx->load_cmd, "load", "--url", url, "--route", (char *)route,
                     "--rate", rt, "--duration", dur, "--warmup", wu, "--drain", dr,
                     "--threads", th, "--connections", co, "--json", js, "--hgrm", hg,
                     "--uncorrected-hgrm", uh, "--hlog", hl, "--series-csv", sc,
                     "--contract", (char *)fx->c->path, fx->client_rt ? "--rt" : NULL, NULL };
    unlink(js);
    if ((pid = fork()) == 0) {
        int fd = open(log, O_WRONLY | O_CREAT | O_TRUNC | O_NOFOLLOW | O_CLOEXEC, 0644);
        /* An orphaned load would go on driving the port into the point a resumed run
         * redoes: it dies with the runner (the getppid() check: the runner may have died
         * before prctl took effect). */
        if (prctl(PR_SET_PDEATHSIG, SIGKILL) < 0 || getppid() != parent)
            _exit(127);
        if (fd >= 0) {
            dup2(fd, 1);
            dup2(fd, 2);
        }
        sched_setaffinity(0, sizeof(fx->client_set), &fx->client_set);
        /* through /proc/self/exe by default: immune to build/kneebench being relinked */
        execv(fx->self_exec ? "/proc/self/exe" : fx->load_cmd, argv);
        dprintf(2, "could not execute %s: %s\n", fx->load_cmd, strerror(errno));
        _exit(127);
    }
    return pid;
}

void kb_fx_kill_load(struct kb_fx *fx, int sig)
{
    if (fx->load_pid > 0) {
        kill(fx->load_pid, sig);
        waitpid(fx->load_pid, NULL, 0);
    }
    fx->load_pid = 0;
}

int kb_fx_drive(struct kb_fx *fx, const struct kb_fx_load *ld, const char *route, long rate,
                const char *dir, const struct kb_fx_sampling *sp, struct kb_point_obs *obs)
{
    double t0 = kb_fx_now_s(), next = t0 + sp->first_s, end = t0 + sp->until_s;
    int st = 0;
    if ((fx->load_pid = spawn_load(fx, ld, route, rate, dir)) < 0) {
        fx->load_pid = 0;
        return -1;
    }
    for (;;) {
        pid_t w = waitpid(fx->load_pid, &st, WNOHANG);
        double t = kb_fx_now_s();
        if (w == fx->load_pid)
            break;
        if (fx->stop && *fx->stop) {
            kb_fx_kill_load(fx, sp->kill_signal);
            return -1;
        }
        if (t >= next && t <= end) {
            sp->sample(sp->arg, t0, t);
            next += sp->every_s;
        }
        /* a remote fixture's liveness is a round trip to its agent: once a second */
        if (!kb_fx_remote(fx) || t - fx->last_exit_check >= 1.0) {
            fx->last_exit_check = t;
            kb_fx_check_exit(fx, obs);
        }
        kb_sleep_ms(20);
    }
    fx->load_pid = 0;
    obs->load_exit = WIFEXITED(st) ? WEXITSTATUS(st) : 128 + WTERMSIG(st);
    return 0;
}

/* The load log's first line: why the generator gave up. */
static void first_line(const char *dir, const char *file, char *line, size_t len)
{
    char path[4200];
    FILE *f;
    line[0] = '\0';
    kb_path(path, sizeof(path), dir, file);
    if ((f = fopen(path, "r"))) {
        if (!fgets(line, (int)len, f))
            line[0] = '\0';
        fclose(f);
    }
    line[strcspn(line, "\n")] = '\0';
}

void kb_fx_read_load(const char *dir, struct kb_point_obs *obs, struct kb_point_load *lr,
                     json_t **load)
{
    char path[4200], err[sizeof(obs->load_problem)];
    int rc = kb_point_load_read(kb_path(path, sizeof(path), dir, "load.json"), lr, load, err,
                                sizeof(err));
    if (obs->load_exit != 0) {
        char line[200];
        first_line(dir, "load.log", line, sizeof(line));
        snprintf(obs->load_problem, sizeof(obs->load_problem), "load generator exited %d: %s",
                 obs->load_exit, line);
    } else if (rc < 0) {
        snprintf(obs->load_problem, sizeof(obs->load_problem), "%s", err);
    } else {
        obs->have_load = 1;
    }
}

void kb_fx_postflight(struct kb_fx *fx, const struct kb_route *r, struct kb_point_obs *obs)
{
    char err[512];
    json_t *now;
    kb_fx_check_exit(fx, obs);
    if (!obs->fixture_exited && fx->sb &&
        kb_preflight_route_at(fx->target[0] ? fx->target : NULL, fx->port, r, err, sizeof(err)) < 0) {
        obs->postflight_failed = 1;
        snprintf(obs->postflight_reason, sizeof(obs->postflight_reason), "%.200s", err);
    }
    now = fx->identity ? kb_fx_identity(fx, err, sizeof(err)) : NULL;
    if (fx->identity && (!now || !json_equal(json_object_get(now, "sha256"),
                                             json_object_get(fx->identity, "sha256"))))
        obs->identity_changed = 1;
    json_decref(now);
}
