/* fixture.c -- one runtime run as a fixture: start, wait, limits, identity, samples, the load
 * child (fixture.h). */
#define _GNU_SOURCE
#include "runner/run/fixture.h"
#include "runner/load/loadout.h"
#include "runner/sandbox/capture.h"
#include "runner/sandbox/launch.h"
#include "runner/util/clock.h"
#include "runner/util/cpulist.h"
#include "runner/util/digest.h"
#include "runner/util/evidence.h"
#include "runner/util/paths.h"
#include "runner/load/preflight.h"
#include "runner/util/root.h"
#include "runner/util/schema.h"
#include "runner/sandbox/spawn.h"

#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <netinet/in.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>


double kb_fixture_now_s(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (double)ts.tv_sec + ts.tv_nsec / 1e9;
}

/* ---- the run's setup ------------------------------------------------------------------- */

static int placement(struct kb_fixture *fx, const struct kb_fixture_opts *o, char *err, size_t errlen)
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
    /* a fixture on another host has that host's CPUs: no overlap with the client's here */
    if (CPU_COUNT(&srv) > 0 && kb_sandbox_on_this_host(fx->sandbox)) {
        snprintf(err, errlen, "server CPUs %s and client CPUs %s overlap", fx->server_cpus,
                 fx->client_cpus);
        return -1;
    }
    return 0;
}

/* The runner on its declared CPUs (--controller-cpus: the second paper's controller had
 * CPU 0 to itself), else on the client's: what it does while a point runs (sampling, the
 * /stats reader) then competes with the load generator, which the client's verdicts account
 * for. Never with the server, whose CPU is the one being measured: a declared list that
 * shares a CPU with it is refused. */
static int pin_controller(struct kb_fixture *fx, const char *list, char *err, size_t errlen)
{
    cpu_set_t want = fx->client_set, got, srv;
    char canon[64], why[400];
    if (list) {
        if (kb_cpulist_parse_online(list, &want, canon, sizeof(canon), why, sizeof(why)) < 0) {
            snprintf(err, errlen, "controller CPUs: %s", why);
            return -1;
        }
        kb_cpulist_parse_online(fx->server_cpus, &srv, NULL, 0, why, sizeof(why));
        CPU_AND(&srv, &srv, &want);
        if (CPU_COUNT(&srv) > 0 && kb_sandbox_on_this_host(fx->sandbox)) {
            snprintf(err, errlen, "controller CPUs %s and server CPUs %s overlap: the runner "
                     "must never take the CPU the server is measured on", canon,
                     fx->server_cpus);
            return -1;
        }
        fx->controller_declared = 1;
    }
    if (sched_setaffinity(0, sizeof(want), &want) < 0 ||
        sched_getaffinity(0, sizeof(got), &got) < 0) {
        snprintf(err, errlen, "pinning the runner to the %s CPUs %s: %s",
                 list ? "controller" : "client", list ? list : fx->client_cpus,
                 strerror(errno));
        return -1;
    }
    kb_cpulist_format(&got, fx->controller_cpus, sizeof(fx->controller_cpus));
    return 0;
}

int kb_fixture_setup(struct kb_fixture *fx, const struct kb_contract *c, const struct kb_fixture_opts *o,
                char *err, size_t errlen)
{
    const struct kb_sandbox_config sc = { .backend = o->backend, .root = kb_root(),
                                          .image = o->image, .docker_host = o->docker_host,
                                          .docker_context = o->docker_context,
                                          .target = o->target,
                                          .no_limits = o->no_limits };
    fx->c = c;
    fx->build = o->build;
    fx->client_rt = !o->client_other;
    if (!(fx->sandbox = kb_sandbox_open(&sc, err, errlen)))
        return -1;
    if (!o->no_limits && kb_sandbox_available(fx->sandbox, err, errlen) < 0)
        return -1;
    fx->no_limits = kb_sandbox_no_limits(fx->sandbox);
    snprintf(fx->target, sizeof(fx->target), "%s", kb_sandbox_target(fx->sandbox));
    if (placement(fx, o, err, errlen) < 0 ||
        pin_controller(fx, o->controller_cpus, err, errlen) < 0)
        return -1;
    /* our own binary by default: the very image whose hash the run records */
    fx->self_exec = !o->load_cmd;
    if (o->load_cmd)
        snprintf(fx->load_cmd, sizeof(fx->load_cmd), "%s", o->load_cmd);
    else if (readlink("/proc/self/exe", fx->load_cmd, sizeof(fx->load_cmd) - 1) < 0)
        snprintf(fx->load_cmd, sizeof(fx->load_cmd), "%s/kneebench", fx->build);
    return 0;
}

/* ---- the fixture's command and identity ------------------------------------------------ */

/* What the contract's placeholders stand for in this run. */
static struct kb_tmpl_vars fx_vars(const struct kb_fixture *fx, const char *rundir)
{
    return (struct kb_tmpl_vars){ .root = kb_root(), .build = fx->build, .bind = "127.0.0.1",
                                  .rundir = rundir, .port = fx->port, .cpus = fx->c->cpus };
}

char *kb_fixture_expand(const struct kb_fixture *fx, const char *tmpl, const char *rundir)
{
    struct kb_tmpl_vars v = fx_vars(fx, rundir);
    return kb_tmpl_expand(tmpl, &v);
}

json_t *kb_fixture_identity(const struct kb_fixture *fx, char *err, size_t errlen)
{
    const struct kb_runtime *rt = fx->rt;
    char *exe[32] = { 0 }, *src[32] = { 0 };
    size_t ne = rt->executables.n < 32 ? rt->executables.n : 32;
    size_t ns = rt->sources.n < 32 ? rt->sources.n : 32;
    json_t *id;
    for (size_t i = 0; i < ne; i++)
        exe[i] = kb_fixture_expand(fx, rt->executables.v[i], NULL);
    for (size_t i = 0; i < ns; i++) {
        /* relative to the tree's root; an absolute path (a test's own fixture) as is */
        int whole = rt->sources.v[i][0] == '/';
        if (asprintf(&src[i], "%s%s%s", whole ? "" : kb_root(), whole ? "" : "/",
                     rt->sources.v[i]) < 0)
            src[i] = NULL;
    }
    id = kb_sandbox_identity(fx->sandbox, &(struct kb_fixture_parts){ rt, exe, ne, src, ns },
                             err, errlen);
    for (size_t i = 0; i < 32; i++) {
        free(exe[i]);
        free(src[i]);
    }
    return id;
}

void kb_fixture_spec(const struct kb_fixture *fx, const char *rundir, const struct kb_pgrun *pg,
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
    if (pg && pg->running) {
        spec->db_conninfo = pg->conninfo;
        spec->db_pool = db_pool;
    }
    spec->limits.cpus = fx->c->cpus;
    spec->limits.memory_bytes = fx->c->memory_bytes;
    spec->limits.pids = fx->c->pids;
    snprintf(spec->limits.server_cpuset, sizeof(spec->limits.server_cpuset), "%s",
             fx->server_cpus);
}

void kb_fixture_spec_free(char **argv, char **env)
{
    kb_tmpl_free(argv, 64);
    kb_tmpl_free(env, 16);
}

/* ---- start, stop, watch ---------------------------------------------------------------- */

int kb_fixture_alive(void *arg)
{
    struct kb_fixture *fx = arg;
    return !(fx->stop && *fx->stop) && fx->sb && kb_sandbox_alive(fx->sb);
}

/* Limits read back into rundir/limits.json, then the identity. */
static int limits_and_identity(struct kb_fixture *fx, const char *rundir, char *reason,
                               size_t reasonlen)
{
    char err[1024], path[KB_PATH_MAX];
    struct kb_limits_applied la;
    json_t *lim;
    if (kb_sandbox_limits(fx->sb, &la, err, sizeof(err)) < 0) {
        snprintf(reason, reasonlen, "limits: %.400s", err);
        return -1;
    }
    lim = kb_sandbox_limits_json(&la);
    kb_path(path, sizeof(path), rundir, "limits.json");
    if (kb_write_json_atomic(path, kb_schema_stamp(lim, KB_SCHEMA_EVIDENCE), err, sizeof(err)) < 0)
        snprintf(fx->limits_err, sizeof(fx->limits_err), "%.500s", err);
    json_decref(lim);
    if (!(fx->identity = kb_fixture_identity(fx, err, sizeof(err)))) {
        snprintf(reason, reasonlen, "identity: %.400s", err);
        return -1;
    }
    return 0;
}

/* Stop the fixture after a failed start, noting in reason what the stop could not do. */
static void abandon(struct kb_fixture *fx, char *reason, size_t reasonlen)
{
    char err[512];
    if (kb_fixture_stop(fx, err, sizeof(err)) < 0) {
        size_t n = strlen(reason);
        snprintf(reason + n, reasonlen - n, "; stop: %.200s", err);
    }
}

/* Before the start: a leftover of a run that died hard is swept from rundir, and the port
 * must then be free (a process killed a moment ago is given 2 s to let go of it). */
static int port_free_before(struct kb_fixture *fx, const struct kb_fixture_spec *spec,
                            char *reason, size_t reasonlen)
{
    char why[512], note[600] = "";
    if (spec->no_limits)
        kb_sandbox_sweep_rundir(fx->sandbox, spec->rundir, note, sizeof(note));
    if (kb_sandbox_port_free(fx->sandbox, fx->port, 2000, why, sizeof(why)) == 0)
        return 0;
    snprintf(reason, reasonlen, KB_FX_HARNESS_PREFIX "%.400s before the fixture started, "
             "not by a fixture of this run%s%.500s", why, note[0] ? "; " : "", note);
    return -1;
}

int kb_fixture_start(struct kb_fixture *fx, const struct kb_fixture_spec *spec, const char *rundir,
                char *reason, size_t reasonlen)
{
    char err[1024];
    int rc;
    fx->limits_err[0] = '\0';
    if (port_free_before(fx, spec, reason, reasonlen) < 0)
        return KB_FX_HARNESS;
    if ((rc = kb_sandbox_start(fx->sandbox, spec, &fx->sb, err, sizeof(err))) < 0 ||
        kb_wait_accepting(fx->target, fx->port, 20000, kb_fixture_alive, fx, err, sizeof(err)) < 0) {
        int harness = rc == KB_SANDBOX_HARNESS;
        if (harness)
            snprintf(reason, reasonlen, KB_FX_HARNESS_PREFIX "%.600s", err);
        else
            snprintf(reason, reasonlen, "start failed: %.400s%s%s", err, fx->sb ? " " : "",
                     fx->sb ? kb_sandbox_exit_reason(fx->sb) : "");
        abandon(fx, reason, reasonlen);
        return harness ? KB_FX_HARNESS : -1;
    }
    /* readiness takes any listener: it must have been the fixture's */
    if (kb_sandbox_port_owned(fx->sb, fx->port, err, sizeof(err)) < 0) {
        snprintf(reason, reasonlen, KB_FX_HARNESS_PREFIX "%.600s", err);
        abandon(fx, reason, reasonlen);
        return KB_FX_HARNESS;
    }
    return limits_and_identity(fx, rundir, reason, reasonlen);
}

int kb_fixture_sweep_sessions(struct kb_fixture *fx, const char *dir, char *note, size_t notelen)
{
    char path[KB_PATH_MAX], one[600];
    struct dirent *e;
    DIR *d = opendir(dir);
    size_t len = 0;
    int n = 0;
    if (notelen)
        note[0] = '\0';
    while (d && (e = readdir(d))) {
        if (e->d_name[0] == '.')
            continue;
        kb_path(path, sizeof(path), dir, e->d_name);
        n += kb_sandbox_sweep_rundir(fx->sandbox, path, one, sizeof(one));
        if (one[0] && len < notelen)
            len += (size_t)snprintf(note + len, notelen - len, "%s%s", len ? "; " : "", one);
    }
    if (d)
        closedir(d);
    return n;
}

int kb_fixture_stop(struct kb_fixture *fx, char *err, size_t errlen)
{
    int rc = 0;
    if (fx->sb && kb_sandbox_stop(fx->sb, err, errlen) < 0)
        rc = -1;
    fx->sb = NULL;
    json_decref(fx->identity);
    fx->identity = NULL;
    return rc;
}

void kb_fixture_close(struct kb_fixture *fx)
{
    char err[512];
    kb_fixture_stop(fx, err, sizeof(err));
    kb_sandbox_close(fx->sandbox);
    fx->sandbox = NULL;
}

void kb_fixture_check_exit(struct kb_fixture *fx, struct kb_point_obs *obs)
{
    if (!obs->fixture_exited && fx->sb && !kb_sandbox_alive(fx->sb)) {
        obs->fixture_exited = 1;
        snprintf(obs->exit_reason, sizeof(obs->exit_reason), "%s",
                 kb_sandbox_exit_reason(fx->sb));
    }
}

void kb_fixture_sample_server(const struct kb_fixture *fx, struct kb_proc_sample *out)
{
    char err[256];
    if (!fx->sb)
        kb_procs_sample(NULL, 0, out);
    else
        kb_sandbox_sample(fx->sb, out, err, sizeof(err));   /* zeros when it failed */
}

/* ---- the load child -------------------------------------------------------------------- */

static pid_t spawn_load(struct kb_fixture *fx, const struct kb_fixture_load *ld, const char *route,
                        long rate, const char *dir, char *err, size_t errlen)
{
    const struct kb_route *r = kb_contract_route(fx->c, route);
    char url[256], rt[32], dur[32], wu[32], dr[32], th[16], co[16], js[KB_PATH_MAX], hg[KB_PATH_MAX],
        uh[KB_PATH_MAX], log[KB_PATH_MAX], hl[KB_PATH_MAX], sc[KB_PATH_MAX], rl[KB_PATH_MAX], rmax[24];
    struct kb_launch l = { 0 };
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
    kb_path(rl, sizeof(rl), dir, "requests.log");
    char *argv[] = { fx->load_cmd, "load", "--url", url, "--route", (char *)route,
                     "--rate", rt, "--duration", dur, "--warmup", wu, "--drain", dr,
                     "--threads", th, "--connections", co, "--json", js, "--hgrm", hg,
                     "--uncorrected-hgrm", uh, "--hlog", hl, "--series-csv", sc,
                     "--contract", (char *)fx->c->path,
                     /* the curve preflights its fixtures itself, which keep alive */
                     "--no-preflight", "--no-reconnect", NULL, NULL, NULL, NULL, NULL, NULL,
                     NULL, NULL };
    size_t n = sizeof(argv) / sizeof(argv[0]) - 8;
    if (fx->client_rt)
        argv[n++] = "--rt";
    if (ld->per_connection) {
        argv[n++] = "--dispatch";
        argv[n++] = "per-connection";
    }
    if (ld->requests_log) {
        snprintf(rmax, sizeof(rmax), "%d", KB_FIXTURE_REQUESTS_LOG_MAX);
        argv[n++] = "--requests-log";
        argv[n++] = rl;
        argv[n++] = "--requests-log-max";
        argv[n++] = rmax;
    }
    unlink(js);
    unlink(rl);    /* a redone point's log is its own or none */
    /* An orphaned load would go on driving the port into the point a resumed run redoes:
     * it dies with the runner. Through /proc/self/exe by default: immune to
     * build/kneebench being relinked. */
    l.argv = argv;
    l.path = fx->self_exec ? "/proc/self/exe" : fx->load_cmd;
    l.log = log;
    l.cpus = &fx->client_set;
    return kb_launch(&l, err, errlen);
}

void kb_fixture_kill_load(struct kb_fixture *fx, int sig)
{
    if (fx->load_pid > 0) {
        kill(fx->load_pid, sig);
        /* the run's handlers have no SA_RESTART (run.c): a second Ctrl-C must not leave
         * the child unreaped */
        while (waitpid(fx->load_pid, NULL, 0) < 0 && errno == EINTR)
            ;
    }
    fx->load_pid = 0;
}

int kb_fixture_drive(struct kb_fixture *fx, const struct kb_fixture_load *ld, const char *route, long rate,
                const char *dir, const struct kb_fixture_sampling *sp, struct kb_point_obs *obs)
{
    double t0 = kb_fixture_now_s(), next = t0 + sp->first_s, end = t0 + sp->until_s;
    int st = 0;
    if ((fx->load_pid = spawn_load(fx, ld, route, rate, dir, obs->load_problem,
                                   sizeof(obs->load_problem))) < 0) {
        fx->load_pid = 0;
        return -1;
    }
    for (;;) {
        pid_t w = waitpid(fx->load_pid, &st, WNOHANG);
        double t = kb_fixture_now_s();
        if (w == fx->load_pid)
            break;
        if (fx->stop && *fx->stop) {
            kb_fixture_kill_load(fx, sp->kill_signal);
            return -1;
        }
        if (t >= next && t <= end) {
            sp->sample(sp->arg, t0, t);
            next += sp->every_s;
        }
        /* a fixture on another host: its liveness is a round trip, once a second */
        if (kb_sandbox_on_this_host(fx->sandbox) || t - fx->last_exit_check >= 1.0) {
            fx->last_exit_check = t;
            kb_fixture_check_exit(fx, obs);
        }
        kb_sleep_ms(20);
    }
    fx->load_pid = 0;
    obs->load_exit = WIFEXITED(st) ? WEXITSTATUS(st) : 128 + WTERMSIG(st);
    /* its outputs are whole; the responses it counted wrong fail the point by themselves,
     * and a client it could not trust makes the verdict client-limited from load.json */
    if (KB_LOAD_EXIT_COMPLETED(obs->load_exit))
        obs->load_exit = 0;
    return 0;
}

/* The load log's first line: why the generator gave up. */
static void first_line(const char *dir, const char *file, char *line, size_t len)
{
    char path[KB_PATH_MAX];
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

int kb_fixture_read_load(const char *dir, struct kb_point_obs *obs, struct kb_point_load *lr,
                         json_t **load)
{
    char path[KB_PATH_MAX], err[sizeof(obs->load_problem)];
    int rc = kb_point_load_read(kb_path(path, sizeof(path), dir, "load.json"), lr, load, err,
                                sizeof(err));
    if (obs->load_exit != 0) {
        char line[200];
        first_line(dir, "load.log", line, sizeof(line));
        snprintf(obs->load_problem, sizeof(obs->load_problem), "load generator exited %d: %s",
                 obs->load_exit, line);
        /* its own files not written, or the runner's arguments refused: the harness's
         * failure, never the server's */
        if (KB_LOAD_EXIT_HARNESS(obs->load_exit))
            return -1;
    } else if (rc < 0) {
        snprintf(obs->load_problem, sizeof(obs->load_problem), "%s", err);
    } else {
        obs->have_load = 1;
    }
    return 0;
}

void kb_fixture_postflight(struct kb_fixture *fx, const struct kb_route *r, struct kb_point_obs *obs)
{
    char err[512];
    json_t *now;
    kb_fixture_check_exit(fx, obs);
    if (!obs->fixture_exited && fx->sb &&
        kb_preflight_route_at(fx->target[0] ? fx->target : NULL, fx->port, r, err, sizeof(err)) < 0) {
        obs->postflight_failed = 1;
        snprintf(obs->postflight_reason, sizeof(obs->postflight_reason), "%.200s", err);
    }
    now = fx->identity ? kb_fixture_identity(fx, err, sizeof(err)) : NULL;
    if (fx->identity && (!now || !json_equal(json_object_get(now, "sha256"),
                                             json_object_get(fx->identity, "sha256"))))
        obs->identity_changed = 1;
    json_decref(now);
}
