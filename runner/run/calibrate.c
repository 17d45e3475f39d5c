/* calibrate.c -- the client headroom gate (see calibrate.h).
 *
 * Design: the control server and every load step are separate processes, so a step is
 * measured exactly as a curve point is (the same `kneebench load`, its own JSON), and a
 * client slowed on purpose (a cgroup the children join) slows only the client. Each child
 * gets its CPU affinity and cgroup between fork and exec, and a parent-death signal: the
 * control server is stopped by its PID on every exit path, and dies with the runner
 * however the runner ends. A step that cannot be judged (no JSON) stops the calibration
 * with an error; a step that misses a criterion is data, recorded with the reason. */
#define _GNU_SOURCE
#include "runner/run/calibrate.h"

#include <arpa/inet.h>
#include <errno.h>
#include <fcntl.h>
#include <jansson.h>
#include <libgen.h>
#include <limits.h>
#include <math.h>
#include <netinet/in.h>
#include <sched.h>
#include <signal.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include "contract/contract.h"
#include "runner/util/cpulist.h"
#include "runner/util/atomicfile.h"
#include "runner/util/evidence.h"
#include "runner/util/jfield.h"
#include "runner/util/paths.h"
#include "runner/util/root.h"
#include "runner/util/schema.h"
#include "runner/load/loadout.h"
#include "runner/sandbox/launch.h"
#include "runner/sandbox/spawn.h"
#include "runner/run/verdict.h"

/* Everything resolved from cfg and the contract for one calibration. */
struct cal {
    const struct kb_calibrate_cfg *cfg;
    struct kb_contract contract;
    const struct kb_route *route;
    char kneebench[KB_PATH_MAX], build[KB_PATH_MAX];
    cpu_set_t server_cpus, client_cpus;
    const char *server_list, *client_list;
    double duration, warmup, min_delivery;
    struct kb_criteria crit;    /* the client's trust, as the curve judges it */
    int threads, connections, port;
    pid_t control;
};

/* The child dies with the runner (the control server and a step outlived a calibrate killed
 * with -9, for ever), is pinned, joins the cgroups and writes to log (launch.h). */
static pid_t spawn(char *const *argv, const cpu_set_t *cpus, const char *const *cgroups,
                   const char *log, char *err, size_t errlen)
{
    const struct kb_launch l = { .argv = argv, .log = log, .cpus = cpus, .cgroups = cgroups };
    return kb_launch(&l, err, errlen);
}

/* Waits up to bound_s; past it the child is killed. Returns the wait status, or -1 when
 * it had to be killed. */
static int wait_bounded(pid_t pid, double bound_s)
{
    int status = 0;
    return kb_wait_exit(pid, (int)(bound_s * 1000), &status) == 0 ? status : -1;
}

static void stop_control(struct cal *c)
{
    if (c->control <= 0)
        return;
    kill(c->control, SIGTERM);
    wait_bounded(c->control, 3.0);   /* past 3 s: SIGKILL, reaped there */
    c->control = 0;
}

static int out_path(const struct cal *c, char *buf, size_t len, const char *name)
{
    return snprintf(buf, len, "%s/%s", c->cfg->out_dir, name) < (int)len ? 0 : -1;
}

/* 1 while the control server runs; once it has ended it is reaped here, and forgotten. */
static int control_alive(void *arg)
{
    struct cal *c = arg;
    if (c->control > 0 && waitpid(c->control, NULL, WNOHANG) == c->control)
        c->control = 0;
    return c->control > 0;
}

static int start_control(struct cal *c, char *err, size_t errlen)
{
    struct kb_tmpl_vars vars = { .root = kb_root(), .build = c->build, .bind = "127.0.0.1",
                                 .cpus = c->contract.cpus };
    char log[KB_PATH_MAX], why[256], *argv[64] = { 0 };
    int rc = -1;

    if ((c->port = kb_free_port(err, errlen)) < 0)
        return -1;
    vars.port = c->port;
    if (c->contract.control.command.n == 0 ||
        kb_tmpl_argv(&c->contract.control.command, &vars, argv, 64) < 0) {
        snprintf(err, errlen, "the contract's control command is empty or too long");
        goto out;
    }
    out_path(c, log, sizeof(log), "control.log");
    if (access(argv[0], X_OK) != 0) {
        snprintf(err, errlen, "control server %s: %s (make builds it)", argv[0], strerror(errno));
        goto out;
    }
    if ((c->control = spawn(argv, &c->server_cpus, NULL, log, err, errlen)) < 0)
        goto out;
    if (kb_wait_accepting("127.0.0.1", c->port, 5000, control_alive, c, why, sizeof(why)) < 0) {
        if (c->control == 0)
            snprintf(err, errlen, "control server exited at start (see %s)", log);
        else
            snprintf(err, errlen, "control server: %s", why);
        stop_control(c);
        goto out;
    }
    rc = 0;
out:
    kb_tmpl_free(argv, 64);
    return rc;
}

/* The figures of one load JSON, read by the curve's own reader; -1 with err. */
static int read_step(const char *path, struct kb_point_load *lr, struct kb_calibrate_step *s,
                     char *err, size_t errlen)
{
    if (kb_point_load_read(path, lr, NULL, err, errlen) < 0)
        return -1;
    if (lr->requested_rps <= 0) {
        snprintf(err, errlen, "%s: requested_rps %g is not a rate", path, lr->requested_rps);
        return -1;
    }
    s->achieved_rps = lr->achieved_rps;
    s->cpu_fraction = lr->client_cpu_fraction;
    s->lag_p99_us = lr->lag.p99;
    s->rx_delay_p99_us = lr->rx_delay.p99;
    s->corrected_p99_us = lr->corrected.p99;
    s->errors = kb_point_load_socket_errors(lr);
    s->threads = lr->threads;
    /* Held means in time: responses that only came during the drain do not count here
     * (achieved_rps includes them). */
    s->delivery = kb_point_load_in_time(lr);
    return 0;
}

/* Held: the curve's own judgement of the client (kb_trust_rung, runner/run/verdict.h), with the
 * control server -- known to be fast -- answering everything in time. */
static void judge(const struct cal *c, const struct kb_point_load *lr, struct kb_calibrate_step *s)
{
    s->held = kb_trust_rung(lr, &c->crit, c->min_delivery, s->why, sizeof(s->why));
}

/* step-II.json for a step's first attempt, step-II-A.json for attempt A after it. */
static void step_name(char *buf, size_t len, size_t i, int attempt, const char *ext)
{
    if (attempt > 0)
        snprintf(buf, len, "step-%02zu-%d.%s", i, attempt, ext);
    else
        snprintf(buf, len, "step-%02zu.%s", i, ext);
}

static int run_step(struct cal *c, size_t i, int attempt, struct kb_calibrate_step *s,
                    char *err, size_t errlen)
{
    char url[128], rate[32], dur[32], warm[32], thr[16], con[16], name[64];
    char json[KB_PATH_MAX], log[KB_PATH_MAX];
    int status;

    snprintf(url, sizeof(url), "http://127.0.0.1:%d%s", c->port, c->route->path);
    snprintf(rate, sizeof(rate), "%.0f", s->rate);
    snprintf(dur, sizeof(dur), "%g", c->duration);
    snprintf(warm, sizeof(warm), "%g", c->warmup);
    snprintf(thr, sizeof(thr), "%d", c->threads);
    snprintf(con, sizeof(con), "%d", c->connections);
    step_name(name, sizeof(name), i, attempt, "json");
    out_path(c, json, sizeof(json), name);
    step_name(name, sizeof(name), i, attempt, "log");
    out_path(c, log, sizeof(log), name);
    unlink(json);
    {
        char *argv[] = { c->kneebench, "load", "--url", url, "--route", c->route->name,
                         "--rate", rate, "--duration", dur, "--warmup", warm, "--threads", thr,
                         "--connections", con, "--json", json,
                         "--contract", (char *)c->contract.path, "--no-preflight",
                         "--no-reconnect", c->cfg->client_rt ? "--rt" : NULL, NULL };
        pid_t pid = spawn(argv, &c->client_cpus, c->cfg->client_cgroup[0] ?
                          c->cfg->client_cgroup : NULL, log, err, errlen);
        if (pid < 0)
            return -1;
        status = wait_bounded(pid, c->warmup + c->duration + 60.0);
    }
    /* responses counted wrong, and a client not to be trusted, are the rung's to judge
     * (kb_trust_rung fails them) */
    if (status == -1 || !WIFEXITED(status) || !KB_LOAD_EXIT_COMPLETED(WEXITSTATUS(status))) {
        snprintf(err, errlen, "load step at %s req/s failed (%s; see %s)", rate,
                 status == -1 ? "killed after its time bound" : "non-zero exit", log);
        return -1;
    }
    {
        struct kb_point_load lr;
        if (read_step(json, &lr, s, err, errlen) < 0)
            return -1;
        judge(c, &lr, s);
    }
    return 0;
}

static json_t *step_json(const struct kb_calibrate_step *s, size_t i)
{
    char name[64];

    step_name(name, sizeof(name), i, s->attempts - 1, "json");
    return json_pack("{s:f, s:o, s:o, s:o, s:o, s:o, s:o, s:I, s:b, s:s, s:s, s:i, s:s, s:i}", "rate",
                     s->rate, "achieved_rps", kb_json_figure(s->achieved_rps),
                     "delivery", kb_json_figure(s->delivery),
                     "client_cpu_fraction", kb_json_figure(s->cpu_fraction),
                     "lag_p99_us", kb_json_figure(s->lag_p99_us),
                     "rx_delay_p99_us", kb_json_figure(s->rx_delay_p99_us),
                     "corrected_p99_us", kb_json_figure(s->corrected_p99_us),
                     "errors", (json_int_t)s->errors, "held", s->held, "why", s->why,
                     "load_json", name, "attempts", s->attempts,
                     "missed_before", s->missed_before, "threads", s->threads);
}

/* Rungs that held above the first miss: not part of the margin, which is a claim about
 * every rate below it, but kept in view so a reader sees the ladder was not monotonic. */
static json_t *held_above_miss(const struct kb_calibrate_result *r)
{
    json_t *a = json_array();
    int missed = 0;

    for (size_t i = 0; i < r->nsteps; i++) {
        if (missed && r->steps[i].held)
            json_array_append_new(a, json_real(r->steps[i].rate));
        missed = missed || !r->steps[i].held;
    }
    return a;
}

static int write_result(const struct cal *c, const struct kb_calibrate_result *r, char *err,
                        size_t errlen)
{
    json_t *steps = json_array(), *j;
    int rc;

    /* A rung that cannot be written fails the whole file: calibrate.json without it would
     * read as a shorter ladder. */
    for (size_t i = 0; i < r->nsteps; i++)
        if (json_array_append_new(steps, step_json(&r->steps[i], i)) != 0) {
            snprintf(err, errlen, "calibrate.json: rung %zu could not be encoded", i + 1);
            json_decref(steps);
            return -1;
        }
    j = json_pack("{s:i, s:s, s:f, s:f, s:f, s:f, s:f, s:o, s:b, s:s, s:s, s:f, s:f, s:i, s:i, "
                  "s:{s:s, s:I, s:f, s:f, s:f, s:f, s:i}, s:o, s:i, s:b}",
                  "calibrate_version", 1, "route", c->route->name, "up_to_rps", r->up_to_rps,
                  "factor", r->factor, "required_rps", r->required_rps, "margin_rps",
                  r->margin_rps, "highest_held_rps", r->highest_held_rps, "held_above_a_miss",
                  held_above_miss(r), "proven", r->proven, "server_cpus", c->server_list,
                  "client_cpus", c->client_list, "duration_s", c->duration, "warmup_s",
                  c->warmup, "threads", c->threads, "connections", c->connections, "criteria",
                  "trust_rule", "could-decide", "max_p99_us", (json_int_t)c->crit.max_p99_us,
                  "client_cpu_max_fraction", c->crit.client_cpu_max_fraction, "lag_p99_max_us",
                  (double)c->crit.client_lag_p99_max_us, "rx_delay_p99_max_us",
                  (double)c->crit.client_rx_delay_p99_max_us,
                  "min_delivery", c->min_delivery, "errors_max", 0, "steps", steps,
                  "send_quantum_us", (int)c->contract.send_quantum_us, "complete", 1);
    rc = kb_afile_write_json(r->json_path, kb_schema_stamp(j, KB_SCHEMA_EVIDENCE), err, errlen);
    json_decref(j);
    return rc;
}

static double or_default(double v, double d)
{
    return v > 0 ? v : d;
}

static int self_paths(struct cal *c, char *err, size_t errlen)
{
    const struct kb_calibrate_cfg *cfg = c->cfg;
    char dir[KB_PATH_MAX];
    ssize_t n;

    if (cfg->kneebench) {
        snprintf(c->kneebench, sizeof(c->kneebench), "%s", cfg->kneebench);
    } else if ((n = readlink("/proc/self/exe", c->kneebench, sizeof(c->kneebench) - 1)) > 0) {
        c->kneebench[n] = '\0';
    } else {
        snprintf(err, errlen, "cannot find this program's path: %s", strerror(errno));
        return -1;
    }
    snprintf(dir, sizeof(dir), "%s", c->kneebench);
    snprintf(c->build, sizeof(c->build), "%s", cfg->build_dir ? cfg->build_dir : dirname(dir));
    return 0;
}

static int setup(struct cal *c, const struct kb_calibrate_cfg *cfg, char *err, size_t errlen)
{
    const struct kb_contract *k = &c->contract;
    const char *route = cfg->route ? cfg->route : "plaintext";

    c->cfg = cfg;
    if (kb_contract_load(cfg->contract_path ? cfg->contract_path : kb_root_contract(),
                         &c->contract, err, errlen) < 0)
        return -1;
    if (!(c->route = kb_contract_route(k, route))) {
        snprintf(err, errlen, "no route '%s' in the contract", route);
        return -1;
    }
    c->server_list = cfg->server_cpus ? cfg->server_cpus : k->server_cpus;
    c->client_list = cfg->client_cpus ? cfg->client_cpus : k->client_cpus;
    /* the curve's placement, with the curve's meaning: this host's online CPUs */
    if (kb_cpulist_parse_online(c->server_list, &c->server_cpus, NULL, 0, err, errlen) < 0 ||
        kb_cpulist_parse_online(c->client_list, &c->client_cpus, NULL, 0, err, errlen) < 0)
        return -1;
    c->duration = or_default(cfg->duration_s, 3.0);
    c->warmup = cfg->warmup_s >= 0 ? cfg->warmup_s : 1.0;
    c->threads = cfg->threads > 0 ? cfg->threads : k->threads;
    c->connections = cfg->connections > 0 ? cfg->connections : k->connections;
    c->crit = kb_criteria_of(k);
    c->crit.client_cpu_max_fraction = or_default(cfg->cpu_max_fraction, k->client_cpu_max_fraction);
    c->crit.client_lag_p99_max_us = (long)or_default(cfg->lag_p99_max_us, (double)k->client_lag_p99_max_us);
    c->crit.client_rx_delay_p99_max_us = (long)or_default(cfg->rx_delay_p99_max_us,
                                                         (double)k->client_rx_delay_p99_max_us);
    c->min_delivery = or_default(cfg->min_delivery, 0.995);
    return self_paths(c, err, errlen);
}

static void plan(const struct cal *c, struct kb_calibrate_result *r)
{
    const struct kb_calibrate_cfg *cfg = c->cfg;
    double top_rate = 0;
    size_t steps = cfg->steps > 0 ? (size_t)cfg->steps : 6;

    for (size_t i = 0; i < c->contract.nrates; i++)
        if (c->contract.rates[i] > top_rate)
            top_rate = (double)c->contract.rates[i];
    r->up_to_rps = or_default(cfg->up_to_rps, top_rate);
    r->factor = or_default(cfg->factor, 1.25);
    r->required_rps = r->up_to_rps * r->factor;
    if (steps > KB_CALIBRATE_MAX_STEPS)
        steps = KB_CALIBRATE_MAX_STEPS;
    r->nsteps = steps;
    for (size_t i = 0; i < steps; i++)
        r->steps[i].rate = r->required_rps * (double)(i + 1) / (double)steps;
}

/* Up to cfg->attempts tries of step i, stopping at the first that holds; the earlier
 * attempts' misses are kept beside the deciding one's figures. */
/* A latency in us for the progress line: "1.25 ms", or "none" where the step timed no
 * response (an empty histogram's NAN, an absent figure's -1), never "nan ms". */
static const char *ms_or_none(char *b, size_t len, double us)
{
    if (isfinite(us) && us >= 0)
        snprintf(b, len, "%.2f ms", us / 1e3);
    else
        snprintf(b, len, "none (no response timed)");
    return b;
}

static int attempt_step(struct cal *c, struct kb_calibrate_result *r, size_t i, char *err,
                        size_t errlen)
{
    struct kb_calibrate_step *s = &r->steps[i];
    int attempts = c->cfg->attempts > 0 ? c->cfg->attempts : 2;
    size_t n = 0;

    s->missed_before[0] = '\0';
    for (int a = 0; a < attempts; a++) {
        if (a > 0 && n < sizeof(s->missed_before))
            n += (size_t)snprintf(s->missed_before + n, sizeof(s->missed_before) - n, "%s%s",
                                  n ? " | " : "", s->why);
        if (run_step(c, i, a, s, err, errlen) < 0)
            return -1;
        s->attempts = a + 1;
        if (c->cfg->progress) {
            char p99[32], lag[32], rx[32];
            fprintf(c->cfg->progress, "calibrate %zu/%zu%s: %.0f req/s: achieved %.0f (in time "
                    "%.4f), cpu %.2f, harness p99 %s (lag p99 %s, rx delay p99 %s): %s%s\n",
                    i + 1, r->nsteps, a ? " (again)" : "", s->rate, s->achieved_rps,
                    s->delivery, s->cpu_fraction, ms_or_none(p99, sizeof(p99), s->corrected_p99_us),
                    ms_or_none(lag, sizeof(lag), s->lag_p99_us),
                    ms_or_none(rx, sizeof(rx), s->rx_delay_p99_us),
                    s->held ? "held: " : "NOT held: ", s->why);
        }
        if (s->held)
            break;
    }
    return 0;
}

static int ladder(struct cal *c, struct kb_calibrate_result *r, char *err, size_t errlen)
{
    int all_held = 1;
    size_t ran = 0;

    for (size_t i = 0; i < r->nsteps; i++, ran++) {
        struct kb_calibrate_step *s = &r->steps[i];
        if (attempt_step(c, r, i, err, errlen) < 0)
            return -1;
        all_held = all_held && s->held;
        if (all_held)
            r->margin_rps = s->rate;
        if (s->held)
            r->highest_held_rps = s->rate;
        if (!s->held && c->cfg->stop_at_miss) {
            ran++;
            break;
        }
    }
    r->nsteps = ran;
    r->proven = r->margin_rps >= r->required_rps * (1 - 1e-9);
    return 0;
}

int kb_calibrate(const struct kb_calibrate_cfg *cfg, struct kb_calibrate_result *out,
                 char *err, size_t errlen)
{
    struct cal c;
    int rc = -1;

    memset(&c, 0, sizeof(c));
    memset(out, 0, sizeof(*out));
    if (setup(&c, cfg, err, errlen) < 0)
        goto out;
    plan(&c, out);
    if (out_path(&c, out->json_path, sizeof(out->json_path), "calibrate.json") < 0) {
        snprintf(err, errlen, "output directory path too long");
        goto out;
    }
    if (start_control(&c, err, errlen) < 0)
        goto out;
    rc = ladder(&c, out, err, errlen);
    stop_control(&c);
    if (rc == 0)
        rc = write_result(&c, out, err, errlen);
out:
    stop_control(&c);
    if (c.contract.path)
        kb_contract_free(&c.contract);
    return rc;
}

int kb_calibrate_covers(const struct kb_calibrate_result *r, double rate)
{
    return r->margin_rps > 0 && rate * r->factor <= r->margin_rps * (1 + 1e-9);
}

/* A field of calibrate.json; -1 when absent (an older file lacks the newer ones), NAN when
 * null (a figure of an empty histogram). */
static double num(json_t *o, const char *key)
{
    double v = -1.0;
    if (json_is_null(json_object_get(o, key)))
        return NAN;
    kb_jnum_opt(o, key, NULL, &v);
    return v;
}

int kb_calibrate_read(const char *path, struct kb_calibrate_result *out, char *err,
                      size_t errlen)
{
    json_error_t je;
    json_t *j = kb_evidence_load(path, &je), *steps;
    size_t i;

    memset(out, 0, sizeof(*out));
    if (!j) {
        snprintf(err, errlen, "%s: %s", path, je.text);
        return -1;
    }
    if (kb_schema_version(j, path, KB_SCHEMA_EVIDENCE, err, errlen) < 0) {
        json_decref(j);
        return -1;
    }
    out->up_to_rps = num(j, "up_to_rps");
    out->factor = num(j, "factor");
    out->required_rps = num(j, "required_rps");
    out->margin_rps = num(j, "margin_rps");
    out->highest_held_rps = num(j, "highest_held_rps");
    if (out->highest_held_rps < 0)
        out->highest_held_rps = out->margin_rps;
    out->proven = json_is_true(json_object_get(j, "proven"));
    steps = json_object_get(j, "steps");
    if (!json_is_true(json_object_get(j, "complete")) || out->factor <= 0 ||
        out->margin_rps < 0 || !json_is_array(steps)) {
        snprintf(err, errlen, "%s is not a complete calibration", path);
        json_decref(j);
        return -1;
    }
    for (i = 0; i < json_array_size(steps) && i < KB_CALIBRATE_MAX_STEPS; i++) {
        json_t *s = json_array_get(steps, i);
        struct kb_calibrate_step *o = &out->steps[i];
        o->rate = num(s, "rate");
        o->achieved_rps = num(s, "achieved_rps");
        o->delivery = num(s, "delivery");
        o->cpu_fraction = num(s, "client_cpu_fraction");
        o->lag_p99_us = num(s, "lag_p99_us");
        o->rx_delay_p99_us = num(s, "rx_delay_p99_us");
        o->threads = (int)num(s, "threads");
        o->corrected_p99_us = num(s, "corrected_p99_us");
        o->errors = (long long)num(s, "errors");
        o->held = json_is_true(json_object_get(s, "held"));
        o->attempts = json_is_integer(json_object_get(s, "attempts")) ?
                      (int)json_integer_value(json_object_get(s, "attempts")) : 1;
        snprintf(o->missed_before, sizeof(o->missed_before), "%s",
                 json_string_value(json_object_get(s, "missed_before")) ?
                 json_string_value(json_object_get(s, "missed_before")) : "");
        snprintf(o->why, sizeof(o->why), "%s", json_string_value(json_object_get(s, "why")) ?
                 json_string_value(json_object_get(s, "why")) : "");
    }
    out->nsteps = i;
    snprintf(out->json_path, sizeof(out->json_path), "%s", path);
    json_decref(j);
    return 0;
}
