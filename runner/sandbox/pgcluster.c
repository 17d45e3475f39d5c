/* pgcluster.c -- see pgcluster.h. The script is run through capture.h, its streams apart:
 * stdout is the conninfo, stderr the reason when it fails. */
#define _GNU_SOURCE
#include "runner/sandbox/pgcluster.h"
#include "runner/sandbox/capture.h"
#include "runner/sandbox/pin.h"
#include "runner/util/cpulist.h"
#include "runner/util/evidence.h"
#include "runner/util/paths.h"
#include "runner/util/clock.h"
#include "runner/load/preflight.h"
#include "runner/util/root.h"
#include "runner/util/schema.h"

#include <errno.h>
#include <fcntl.h>
#include <glob.h>
#include <poll.h>
#include <stdio.h>
#include <string.h>
#include <stdlib.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

void kb_pgcluster_script(const char *root, char *out, size_t outlen)
{
    snprintf(out, outlen, "%s/gray-static/pgcluster.sh", root ? root : kb_root());
}

int kb_pgcluster_available(void)
{
    glob_t g;
    int found = glob("/usr/lib/postgresql/*/bin/initdb", 0, NULL, &g) == 0 && g.gl_pathc > 0;
    globfree(&g);
    return found;
}

/* The binaries pgcluster.sh starts: the highest version's, as the script picks them. */
void kb_pgcluster_version(char *out, size_t outlen)
{
    char *const argv[] = { "sh", "-c", "d=$(ls -d /usr/lib/postgresql/*/bin 2>/dev/null | "
                           "sort -V | tail -n 1) && \"$d/postgres\" --version", NULL };
    out[0] = '\0';
    if (kb_capture_line(argv, out, outlen) < 0 || !out[0])
        snprintf(out, outlen, "unavailable");
}

/* Run `script verb dir`; 0 when it exits 0. out gets stdout, err stderr's last line. */
static int run_script(const char *root, const char *verb, const char *dir, char *out,
                      size_t outlen, char *err, size_t errlen)
{
    char script[KB_PATH_MAX], errbuf[4096], why[512], *last;
    char *const argv[] = { script, (char *)verb, (char *)dir, NULL };
    struct kb_capture c = { .out = out, .out_cap = outlen, .err = errbuf,
                            .err_cap = sizeof(errbuf) };
    int st;
    kb_pgcluster_script(root, script, sizeof(script));
    if ((st = kb_capture_run(argv, &c, why, sizeof(why))) == 0)
        return 0;
    if (st < 0) {
        snprintf(err, errlen, "%s", why);
        return -1;
    }
    while (*errbuf && errbuf[strlen(errbuf) - 1] == '\n')
        errbuf[strlen(errbuf) - 1] = '\0';
    last = strrchr(errbuf, '\n');
    snprintf(err, errlen, "%s %s %s: %s", script, verb, dir,
             *errbuf ? (last ? last + 1 : errbuf)
                     : (st < 128 ? "exited non-zero" : "killed by a signal"));
    return -1;
}

int kb_pgcluster_start(const char *root, const char *dir, char *conninfo, size_t conninfolen,
                       char *err, size_t errlen)
{
    if (run_script(root, "start", dir, conninfo, conninfolen, err, errlen) < 0)
        return -1;
    conninfo[strcspn(conninfo, "\n")] = '\0';
    if (!strstr(conninfo, "host=")) {
        snprintf(err, errlen, "pgcluster.sh start printed no conninfo ('%.200s')", conninfo);
        return -1;
    }
    return 0;
}

int kb_pgcluster_stop(const char *root, const char *dir, char *err, size_t errlen)
{
    char out[512];
    return run_script(root, "stop", dir, out, sizeof(out), err, errlen);
}

int kb_pgrun_wanted(const struct kb_runtime *rt, char *const *routes, size_t nroutes)
{
    if (!rt || !rt->db_command_extra.n)
        return 0;
    for (size_t i = 0; i < nroutes; i++)
        if (routes[i] && !strcmp(routes[i], "db"))
            return 1;
    return 0;
}

pid_t kb_pgcluster_postmaster(const char *dir)
{
    char path[KB_PATH_MAX];
    long pid = 0;
    FILE *f;
    snprintf(path, sizeof(path), "%s/data/postmaster.pid", dir);
    if ((f = fopen(path, "r"))) {
        if (fscanf(f, "%ld", &pid) != 1)
            pid = 0;
        fclose(f);
    }
    return pid > 0 ? (pid_t)pid : 0;
}

/* The running cluster's processes onto pg->cpus, the kernel's read-back kept as evidence. */
static int pin_cluster(const struct kb_pgrun *pg, char *err, size_t errlen)
{
    cpu_set_t set;
    char path[KB_PATH_MAX], why[512];
    json_t *rec = NULL;
    pid_t pm = kb_pgcluster_postmaster(pg->dir);
    int rc;
    if (kb_cpulist_parse_raw(pg->cpus, &set, err, errlen) < 0)
        return -1;
    if (!pm) {
        snprintf(err, errlen, "no postmaster.pid in %s/data to pin", pg->dir);
        return -1;
    }
    rc = kb_pin_tree(pm, &set, &rec, why, sizeof(why));
    if (rc < 0)
        snprintf(err, errlen, "not pinned to CPUs %s: %s", pg->cpus, why);
    kb_path(path, sizeof(path), pg->dir, "pinning.json");
    if (rec && kb_write_json_atomic(path, kb_schema_stamp(rec, KB_SCHEMA_EVIDENCE),
                                    rc < 0 ? why : err, rc < 0 ? sizeof(why) : errlen) < 0)
        rc = -1;
    json_decref(rec);
    return rc;
}

int kb_pgrun_start(struct kb_pgrun *pg, const char *dir, char *err, size_t errlen)
{
    snprintf(pg->dir, sizeof(pg->dir), "%s", dir);
    pg->conninfo[0] = '\0';
    pg->running = 0;
    if (!kb_pgcluster_available()) {
        snprintf(err, errlen, "no PostgreSQL server binaries under /usr/lib/postgresql/*/bin "
                 "(make deps)");
        return -1;
    }
    if (kb_pgcluster_start(NULL, dir, pg->conninfo, sizeof(pg->conninfo), err, errlen) < 0 ||
        (pg->cpus[0] && pin_cluster(pg, err, errlen) < 0)) {
        char ignored[256];
        /* a half-started cluster (initdb done, fill failed; or unpinned) is stopped all
         * the same */
        kb_pgcluster_stop(NULL, dir, ignored, sizeof(ignored));
        return -1;
    }
    pg->running = 1;
    return 0;
}

size_t kb_pgrun_args(const struct kb_pgrun *pg, const struct kb_runtime *rt, int db_pool,
                     char **argv, size_t n, size_t max)
{
    char pool[16];
    const char *keys[] = { "conninfo", "db_pool" }, *vals[] = { pg->conninfo, pool };
    snprintf(pool, sizeof(pool), "%d", db_pool);
    for (size_t i = 0; i < rt->db_command_extra.n && n + 1 < max; i++)
        argv[n++] = kb_expand(rt->db_command_extra.v[i], keys, vals, 2);
    argv[n] = NULL;
    return n;
}

struct route_wait {
    int port;
    const struct kb_route *r;
    char *reason;
    size_t reasonlen;
    int (*alive)(void *);
    void *arg;
};

static int route_answers(void *p)
{
    struct route_wait *w = p;
    return kb_preflight_route(w->port, w->r, w->reason, w->reasonlen) == 0;
}

static int route_alive(void *p)
{
    struct route_wait *w = p;
    return !w->alive || w->alive(w->arg);
}

int kb_pgrun_wait_route(int port, const struct kb_route *r, int timeout_ms,
                        int (*alive)(void *), void *arg, char *reason, size_t reasonlen)
{
    struct route_wait w = { port, r, reason, reasonlen, alive, arg };
    return kb_poll_until(route_answers, route_alive, &w, timeout_ms, 200) == KB_POLL_DONE
               ? 0 : -1;
}

int kb_pgrun_stop(struct kb_pgrun *pg, char *err, size_t errlen)
{
    if (!pg->running)
        return 0;
    pg->running = 0;
    return kb_pgcluster_stop(NULL, pg->dir, err, errlen);
}
