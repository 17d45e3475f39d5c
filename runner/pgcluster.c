/* pgcluster.c -- see pgcluster.h. The script is run with fork/exec and a pipe per stream;
 * stdout is the conninfo, stderr the reason when it fails. */
#define _GNU_SOURCE
#include "runner/pgcluster.h"
#include "runner/preflight.h"
#include "runner/root.h"

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

/* Read both pipes to EOF into out/errbuf (each truncated, NUL-terminated). */
static void drain(int ofd, int efd, char *out, size_t outlen, char *errbuf, size_t errlen)
{
    struct pollfd p[2] = { { ofd, POLLIN, 0 }, { efd, POLLIN, 0 } };
    size_t on = 0, en = 0;
    char junk[512];
    while (p[0].fd >= 0 || p[1].fd >= 0) {
        if (poll(p, 2, -1) < 0 && errno != EINTR)
            break;
        for (int i = 0; i < 2; i++) {
            char *buf = i ? errbuf : out;
            size_t *n = i ? &en : &on, cap = i ? errlen : outlen;
            ssize_t r;
            if (p[i].fd < 0 || !p[i].revents)
                continue;
            if (*n + 1 < cap)
                r = read(p[i].fd, buf + *n, cap - 1 - *n);
            else
                r = read(p[i].fd, junk, sizeof(junk));
            if (r <= 0) {
                close(p[i].fd);
                p[i].fd = -1;
            } else if (*n + 1 < cap) {
                *n += (size_t)r;
            }
        }
    }
    out[on] = '\0';
    errbuf[en] = '\0';
}

/* Run `script verb dir`; 0 when it exits 0. out gets stdout, err stderr's last line. */
static int run_script(const char *root, const char *verb, const char *dir, char *out,
                      size_t outlen, char *err, size_t errlen)
{
    char script[4096], errbuf[4096], *last;
    int po[2], pe[2], st = 0;
    pid_t pid;
    kb_pgcluster_script(root, script, sizeof(script));
    if (pipe2(po, O_CLOEXEC) < 0 || pipe2(pe, O_CLOEXEC) < 0) {
        snprintf(err, errlen, "pipe: %s", strerror(errno));
        return -1;
    }
    if ((pid = fork()) == 0) {
        dup2(po[1], 1);
        dup2(pe[1], 2);
        execl(script, script, verb, dir, (char *)NULL);
        dprintf(2, "cannot run %s: %s\n", script, strerror(errno));
        _exit(127);
    }
    close(po[1]);
    close(pe[1]);
    if (pid < 0) {
        close(po[0]);
        close(pe[0]);
        snprintf(err, errlen, "fork: %s", strerror(errno));
        return -1;
    }
    drain(po[0], pe[0], out, outlen, errbuf, sizeof(errbuf));
    while (waitpid(pid, &st, 0) < 0 && errno == EINTR)
        ;
    if (WIFEXITED(st) && WEXITSTATUS(st) == 0)
        return 0;
    while (*errbuf && errbuf[strlen(errbuf) - 1] == '\n')
        errbuf[strlen(errbuf) - 1] = '\0';
    last = strrchr(errbuf, '\n');
    snprintf(err, errlen, "%s %s %s: %s", script, verb, dir,
             *errbuf ? (last ? last + 1 : errbuf)
                     : (WIFEXITED(st) ? "exited non-zero" : "killed by a signal"));
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
    if (kb_pgcluster_start(NULL, dir, pg->conninfo, sizeof(pg->conninfo), err, errlen) < 0) {
        char ignored[256];
        /* a half-started cluster (initdb done, fill failed) is stopped all the same */
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

int kb_pgrun_wait_route(int port, const struct kb_route *r, int timeout_ms,
                        int (*alive)(void *), void *arg, char *reason, size_t reasonlen)
{
    struct timespec pause = { 0, 200 * 1000 * 1000 };
    for (int waited = 0;; waited += 200) {
        if (kb_preflight_route(port, r, reason, reasonlen) == 0)
            return 0;
        if (waited >= timeout_ms || (alive && !alive(arg)))
            return -1;
        nanosleep(&pause, NULL);
    }
}

int kb_pgrun_stop(struct kb_pgrun *pg, char *err, size_t errlen)
{
    if (!pg->running)
        return 0;
    pg->running = 0;
    return kb_pgcluster_stop(NULL, pg->dir, err, errlen);
}
