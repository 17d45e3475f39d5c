/* run.c -- the skeleton of a run, shared by curve and soak (run.h). */
#define _GNU_SOURCE
#include "runner/run/run.h"
#include "runner/sandbox/capture.h"
#include "runner/sandbox/sandbox.h"
#include "runner/sandbox/spawn.h"
#include "runner/util/atomicfile.h"
#include "runner/util/digest.h"
#include "runner/util/evidence.h"
#include "runner/util/paths.h"
#include "runner/util/identity.h"
#include "runner/util/root.h"
#include "runner/util/schema.h"

#include <dirent.h>
#include <errno.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

/* The one global: a handler may only set a flag. */
static volatile sig_atomic_t g_stop;

static void on_signal(int sig)
{
    g_stop = sig;
}

void kb_run_signals(void)
{
    struct sigaction sa;
    memset(&sa, 0, sizeof(sa));
    /* no SA_RESTART: blocking calls return early on Ctrl-C, so a wait that must finish
     * (waitpid on a child) retries EINTR itself */
    sa.sa_handler = on_signal;
    sigaction(SIGINT, &sa, NULL);
    sigaction(SIGTERM, &sa, NULL);
    signal(SIGPIPE, SIG_IGN);
}

int kb_run_interrupted(void)
{
    return g_stop;
}

/* ---- the run's lifecycle ------------------------------------------------------------------ */

int kb_run_open(struct kb_run *r, const char *cmd, const char *dir, const char *contract,
                char *err, size_t errlen)
{
    char pts[KB_RUN_DIR_MAX + 16];
    memset(r, 0, sizeof(*r));
    r->cmd = cmd;
    r->dir = r->dirbuf;
    r->fx.stop = &g_stop;
    /* A fixture runs in its own directory under this one (php-fpm/run.sh --dir {rundir}):
     * a relative name would be read there again, one level deeper. */
    if (kb_abspath(dir, r->dirbuf, KB_RUN_DIR_MAX, err, errlen) < 0)
        return -1;
    /* As root the run writes fixtures' configs and evidence inside it by name: a directory
     * another user owns or may write could hold their links (`--run /tmp/q` made by them). */
    if (kb_dir_own(r->dirbuf, 1, err, errlen) < 0)
        return -1;
    /* its points/ too: a link there (points -> elsewhere) would take every new sample into
     * its target, and a resume would read whatever the target holds */
    if (kb_dir_own(kb_path(pts, sizeof(pts), r->dirbuf, "points"), 1, err, errlen) < 0)
        return -1;
    return kb_contract_load(contract ? contract : kb_root_contract(), &r->c, err, errlen);
}

int kb_run_setup(struct kb_run *r, const struct kb_fixture_opts *o, char *err, size_t errlen)
{
    r->backend = o->backend;
    return kb_fixture_setup(&r->fx, &r->c, o, err, errlen);
}

void kb_run_sweep(struct kb_run *r, const char *sessions)
{
    char note[2048] = "";
    if (kb_sandbox_sweep_stale(r->fx.sandbox) > 0)
        fprintf(stderr, "kneebench %s: removed cgroups left by an earlier run\n", r->cmd);
    if (sessions && kb_fixture_sweep_sessions(&r->fx, sessions, note, sizeof(note)) > 0)
        fprintf(stderr, "kneebench %s: stopped unconstrained fixtures left by an earlier "
                "run\n", r->cmd);
    if (note[0])
        fprintf(stderr, "kneebench %s: left running: %s\n", r->cmd, note);
}

void kb_run_stop_fixture(struct kb_run *r)
{
    char err[512];
    if (kb_fixture_stop(&r->fx, err, sizeof(err)) < 0)
        fprintf(stderr, "kneebench %s: %s\n", r->cmd, err);
    if (kb_sandbox_db_stop(r->fx.sandbox, &r->pg, err, sizeof(err)) < 0)
        fprintf(stderr, "kneebench %s: %s\n", r->cmd, err);
}

void kb_run_close(struct kb_run *r, int load_sig)
{
    kb_fixture_kill_load(&r->fx, load_sig);
    kb_run_stop_fixture(r);
    kb_fixture_close(&r->fx);
    kb_contract_free(&r->c);
    kb_dbplace_free(&r->dbp);
}

int kb_run_db_place(struct kb_run *r, const char *db_cpus, char *err, size_t errlen)
{
    if (kb_dbplace_resolve(&r->dbp, db_cpus, r->fx.server_cpus, r->fx.client_cpus, err,
                           errlen) < 0)
        return -1;
    r->db_on = 1;
    snprintf(r->pg.cpus, sizeof(r->pg.cpus), "%s", r->dbp.cpus);
    if (r->dbp.note[0])
        fprintf(stderr, "kneebench %s: PostgreSQL on CPUs %s: %s\n", r->cmd, r->dbp.cpus,
                r->dbp.note);
    return 0;
}

/* ---- plan.json and run.json --------------------------------------------------------------- */

int kb_run_evidence_json(const char *path, const json_t *v, char *err, size_t errlen)
{
    /* a shallow copy: v may be held and compared by the caller (a fixture's identity) */
    json_t *copy = v ? json_copy((json_t *)v) : NULL;
    int rc;
    if (!copy) {
        snprintf(err, errlen, "writing %.3900s: could not be built (out of memory)", path);
        return -1;
    }
    rc = kb_write_json_atomic(path, kb_schema_stamp(copy, KB_SCHEMA_EVIDENCE), err, errlen);
    json_decref(copy);
    return rc;
}

/* a plan as what it asks for, whatever version of the file says it (a run begun before
 * files carried versions resumes under the same plan) */
static int same_plan(const json_t *have, const json_t *want)
{
    json_t *a = json_copy((json_t *)have), *b = json_copy((json_t *)want);
    int same;
    json_object_del(a, "schema_version");
    json_object_del(b, "schema_version");
    same = a && b && json_equal(a, b);
    json_decref(a);
    json_decref(b);
    return same;
}

int kb_run_plan_file(const char *dir, json_t *want, const char *what, char *err,
                     size_t errlen)
{
    char path[KB_PATH_MAX];
    json_t *have;
    int rc = 0;
    /* checked again once made: someone may have made it since kb_run_open looked */
    if (kb_mkdirs(dir, err, errlen) < 0 || kb_dir_own(dir, 0, err, errlen) < 0) {
        json_decref(want);
        return -1;
    }
    kb_path(path, sizeof(path), dir, "plan.json");
    have = kb_evidence_load(path, NULL);
    if (have && kb_schema_version(have, path, KB_SCHEMA_EVIDENCE, err, errlen) < 0) {
        rc = -1;
    } else if (have && !same_plan(have, want)) {
        snprintf(err, errlen, "%s holds a different %s; resume it with the same options or "
                 "use a new directory", dir, what);
        rc = -1;
    } else if (!have) {
        rc = kb_run_evidence_json(path, want, err, errlen);
    }
    json_decref(have);
    json_decref(want);
    return rc;
}

int kb_run_identity_file(const char *dir, json_t *identity, time_t started, char *err,
                         size_t errlen)
{
    char path[KB_PATH_MAX];
    kb_path(path, sizeof(path), dir, "run.json");
    if (kb_file_exists(path))
        snprintf(path, sizeof(path), "%s/run-resumed-%ld.json", dir, (long)started);
    return kb_run_evidence_json(path, identity, err, errlen);
}

/* One runtime's version line, by the contract's command run on this host. */
static const char *version_here(const struct kb_run *r, const struct kb_runtime *rt,
                                char *line, size_t linelen)
{
    char *argv[16] = { 0 };
    size_t n = rt->version.n < 15 ? rt->version.n : 15;
    if (!n)
        return "unknown";
    for (size_t j = 0; j < n; j++)
        argv[j] = kb_fixture_expand(&r->fx, rt->version.v[j], NULL);
    if (kb_capture_line(argv, line, linelen) < 0 && !line[0])
        snprintf(line, linelen, "unavailable");
    for (size_t j = 0; j < n; j++)
        free(argv[j]);
    return line;
}

json_t *kb_run_versions(const struct kb_run *r, char *const *names, size_t n)
{
    json_t *v = json_object();
    for (size_t i = 0; i < n; i++) {
        const struct kb_runtime *rt = kb_contract_runtime(&r->c, names[i]);
        const char *known = kb_sandbox_runtime_version(r->fx.sandbox, names[i]);
        char line[512];
        if (!known && !rt)
            known = "unknown";
        if (!known)
            known = version_here(r, rt, line, sizeof(line));
        json_object_set_new(v, names[i], json_string(known));
    }
    return v;
}

void kb_run_pg_version(const struct kb_run *r, char *out, size_t outlen)
{
    const char *known = kb_sandbox_runtime_version(r->fx.sandbox, "postgresql");
    if (known)
        snprintf(out, outlen, "%s", known);
    else
        kb_pgcluster_version(out, outlen);
}

static json_t *command_line(int argc, char **argv)
{
    json_t *args = json_array();
    for (int i = 0; i < argc; i++)
        json_array_append_new(args, json_string(argv[i]));
    return args;
}

/* path's bytes, NUL-terminated, for the caller to free; NULL with err. */
static char *read_all(const char *path, size_t *len, char *err, size_t errlen)
{
    FILE *f = fopen(path, "re");
    char *buf = NULL;
    size_t cap = 0, n = 0;
    while (f) {
        char *b = cap - n < 4096 ? realloc(buf, cap = cap * 2 + 65536) : buf;
        if (!b)
            break;
        buf = b;
        n += fread(buf + n, 1, cap - n - 1, f);
        if (feof(f) || ferror(f))
            break;
    }
    if (!f || !buf || ferror(f)) {
        snprintf(err, errlen, "reading %.3900s: %s", path, f ? "a read failed" : strerror(errno));
        free(buf);
        buf = NULL;
    } else {
        buf[n] = '\0';
        *len = n;
    }
    if (f)
        fclose(f);
    return buf;
}

int kb_run_keep_contract(struct kb_run *r, char hex[KB_SHA256_HEX], char *err, size_t errlen)
{
    char path[KB_PATH_MAX], kept[KB_SHA256_HEX], why[256];
    size_t len = 0;
    char *bytes = read_all(r->c.path, &len, err, errlen);
    int rc = -1;
    if (!bytes)
        return -1;
    kb_path(path, sizeof(path), r->dir, KB_RUN_CONTRACT);
    if (kb_sha256_buf(bytes, len, hex) < 0) {
        snprintf(err, errlen, "the SHA-256 of %.3900s failed", r->c.path);
    } else if (!kb_file_exists(path)) {
        rc = kb_write_atomic(path, bytes, len, err, errlen);
    } else if (kb_sha256_file(path, kept, why, sizeof(why)) == 0 && !strcmp(kept, hex)) {
        rc = 0;
    } else {
        /* the points already measured ran under the copy; the report reads it */
        fprintf(stderr, "kneebench %s: the contract %s differs from the one this run began "
                "under, kept in %s; the report reads that one\n", r->cmd, r->c.path, path);
        rc = 0;
    }
    free(bytes);
    return rc;
}

int kb_run_identity(struct kb_run *r, int argc, char **argv, const char *kind,
                    json_t *versions, json_t *more, char *err, size_t errlen)
{
    char hex[KB_SHA256_HEX], chex[KB_SHA256_HEX], when[64], why[256];
    json_t *run, *extra, *body;
    time_t t = time(NULL);
    int rc;
    /* what the sandbox adds (an image's identity: then it, not the host's builds, runs) */
    if (!(extra = kb_sandbox_run_evidence(r->fx.sandbox, err, errlen))) {
        json_decref(versions);
        json_decref(more);
        return -1;
    }
    strftime(when, sizeof(when), "%Y-%m-%dT%H:%M:%SZ", gmtime(&t));
    if (kb_sha256_file("/proc/self/exe", hex, why, sizeof(why)) < 0)
        snprintf(hex, sizeof(hex), "unknown");
    if (kb_run_keep_contract(r, chex, err, errlen) < 0) {
        json_decref(versions);
        json_decref(more);
        json_decref(extra);
        return -1;
    }
    body = json_pack("{s:s,s:o,s:s,s:s,s:s,s:o,s:o,s:s,s:b,s:{s:i,s:I,s:i,s:s,s:s},s:s,s:b}",
        "started", when, "command_line", command_line(argc, argv), "runner_sha256", hex,
        "contract", r->c.path, "contract_sha256", chex, "host", kb_host_identity(),
        "runtime_versions", versions, "backend", r->backend, "unconstrained",
        r->fx.no_limits, "limits_requested", "cpus", r->c.cpus, "memory_bytes",
        (json_int_t)r->c.memory_bytes, "pids", r->c.pids, "server_cpus", r->fx.server_cpus,
        "client_cpus", r->fx.client_cpus, "controller_cpus", r->fx.controller_cpus,
        "controller_cpus_declared", r->fx.controller_declared);
    /* kind first, as a reader sees it */
    run = kind ? json_pack("{s:s}", "kind", kind) : json_object();
    json_object_update(run, body);
    json_object_update(run, extra);
    if (more)
        json_object_update(run, more);
    if (r->db_on)               /* PostgreSQL's CPUs are part of the placement */
        json_object_update_new(run, kb_dbplace_json(&r->dbp));
    json_decref(body);
    json_decref(extra);
    json_decref(more);
    /* the fixture's own MHD (the host build's, or the image's), from its version line */
    json_object_set_new(run, "libmicrohttpd",
                        kb_fixture_mhd_version(json_object_get(run, "runtime_versions")));
    rc = kb_run_identity_file(r->dir, run, t, err, errlen);
    json_decref(run);
    return rc;
}

/* ---- a point's evidence ------------------------------------------------------------------- */

void kb_run_note(struct kb_run_evidence *ev, const char *file, const char *reason)
{
    if (ev->file[0])
        return;
    snprintf(ev->file, sizeof(ev->file), "%.*s", (int)sizeof(ev->file) - 1, file);
    snprintf(ev->reason, sizeof(ev->reason), "%.*s", (int)sizeof(ev->reason) - 1,
             reason && *reason ? reason : "unknown");
}

int kb_run_write_json(struct kb_run_evidence *ev, const char *dir, const char *file,
                      const json_t *v)
{
    char path[KB_PATH_MAX], err[512];
    kb_path(path, sizeof(path), dir, file);
    if (!v) {
        kb_run_note(ev, file, "could not be built (out of memory)");
        return -1;
    }
    if (kb_run_evidence_json(path, v, err, sizeof(err)) == 0)
        return 0;
    kb_run_note(ev, file, err);
    return -1;
}

void kb_run_fixture_begin(struct kb_run *r, const char *fixdir)
{
    char err[512];
    memset(&r->fixture_ev, 0, sizeof(r->fixture_ev));
    if (kb_mkdirs(fixdir, err, sizeof(err)) < 0)
        kb_run_note(&r->fixture_ev, "fixture directory", err);
}

int kb_run_launch(struct kb_run *r, const char *fixdir, const char *pgdir, int db_pool,
                  char **argv, char *reason, size_t reasonlen)
{
    char *env[16] = { 0 }, log[KB_PATH_MAX], err[1024];
    struct kb_fixture_spec spec;
    int rc;
    kb_run_fixture_begin(r, fixdir);
    /* a fixture's script writes its configs there as this user: the harness's fault, not
     * the fixture's, when that directory is someone else's */
    if (kb_dir_own(fixdir, 0, err, sizeof(err)) < 0) {
        snprintf(reason, reasonlen, KB_FX_HARNESS_PREFIX "%.900s", err);
        return KB_FX_HARNESS;
    }
    if (pgdir && kb_sandbox_db_start(r->fx.sandbox, &r->pg, pgdir, err, sizeof(err)) < 0) {
        snprintf(reason, reasonlen, "PostgreSQL: %.400s", err);
        return -1;
    }
    kb_fixture_spec(&r->fx, fixdir, pgdir ? &r->pg : NULL, db_pool, argv, env, log, &spec);
    rc = kb_fixture_start(&r->fx, &spec, fixdir, reason, reasonlen);
    kb_tmpl_free(env, 16);
    if (r->fx.limits_err[0])
        kb_run_note(&r->fixture_ev, "limits.json", r->fx.limits_err);
    return rc;
}

/* Temporary files an interrupted run left in a point it did not finish. */
static void remove_leftovers(const char *dir)
{
    char path[KB_PATH_MAX];
    struct dirent *e;
    DIR *d = opendir(dir);
    while (d && (e = readdir(d)))
        if (strstr(e->d_name, ".tmp"))
            unlink(kb_path(path, sizeof(path), dir, e->d_name));
    if (d)
        closedir(d);
}

int kb_run_point_begin(const char *dir, char *err, size_t errlen)
{
    char path[KB_PATH_MAX];
    /* a point's directory planted as a link would take its evidence elsewhere */
    if (kb_mkdirs(dir, err, errlen) < 0 || kb_dir_own(dir, 0, err, errlen) < 0)
        return -1;
    unlink(kb_path(path, sizeof(path), dir, "DONE"));
    unlink(kb_path(path, sizeof(path), dir, "incomplete.json"));
    remove_leftovers(dir);
    return 0;
}

int kb_run_point_done(const char *dir)
{
    char marker[KB_PATH_MAX];
    return kb_file_exists(kb_path(marker, sizeof(marker), dir, "DONE"));
}

struct kb_afile *kb_run_csv_open(struct kb_run_evidence *ev, const char *dir, const char *file,
                                 const char *header)
{
    char path[KB_PATH_MAX], why[KB_PATH_MAX + 512];
    struct kb_afile *f = malloc(sizeof(*f));
    if (!f) {
        kb_run_note(ev, file, "out of memory");
        return NULL;
    }
    if (kb_afile_open(f, kb_path(path, sizeof(path), dir, file), why, sizeof(why)) < 0) {
        kb_run_note(ev, file, why);
        free(f);
        return NULL;
    }
    fputs(header, f->f);
    return f;
}

int kb_run_csv_close(struct kb_run_evidence *ev, struct kb_afile **f, const char *file)
{
    char why[KB_PATH_MAX + 512];
    int rc = 0;
    if (!*f)
        return 0;
    /* a write that failed at any time, a full disk at the last flush, a failed sync or
     * rename: the final name never stands for bytes that are not all there */
    if (kb_afile_commit(*f, why, sizeof(why)) < 0) {
        kb_run_note(ev, file, why);
        rc = -1;
    }
    free(*f);
    *f = NULL;
    return rc;
}

void kb_run_csv_abort(struct kb_afile **f)
{
    if (!*f)
        return;
    kb_afile_abort(*f);
    free(*f);
    *f = NULL;
}

int kb_run_point_finish(struct kb_run *r, const struct kb_run_evidence *ev, const char *dir,
                        json_t *marker, char *err, size_t errlen)
{
    /* the fixture's files failed first, if they did */
    struct kb_run_evidence e = r->fixture_ev.file[0] ? r->fixture_ev : *ev, rec = { "", "" };
    json_t *inc;
    if (!e.file[0])
        kb_run_write_json(&e, dir, "DONE", marker);
    json_decref(marker);
    if (!e.file[0])
        return 0;
    r->incomplete++;
    inc = json_pack("{s:s,s:s}", "file", e.file, "reason", e.reason);
    if (kb_run_write_json(&rec, dir, "incomplete.json", inc) < 0 && !r->unrecorded++)
        snprintf(r->unrecorded_why, sizeof(r->unrecorded_why), "%.250s", rec.reason);
    json_decref(inc);
    snprintf(err, errlen, "%.600s incomplete, not marked DONE%s (re-run to redo it): %s: %.600s",
             dir, rec.file[0] ? ", no incomplete.json either" : "", e.file, e.reason);
    return -1;
}

void kb_run_say_incomplete(const struct kb_run *r, const char *what)
{
    if (!r->incomplete)
        return;
    if (!r->unrecorded)
        fprintf(stderr, "kneebench %s: %d %s(s) left without complete evidence, each with an "
                "incomplete.json saying why; re-run to redo them\n", r->cmd, r->incomplete,
                what);
    else
        fprintf(stderr, "kneebench %s: %d %s(s) left without complete evidence, %d of them "
                "without an incomplete.json either (%s; the lines above say what failed); "
                "re-run to redo them\n", r->cmd, r->incomplete, what, r->unrecorded,
                r->unrecorded_why);
}
