/* spawn.c -- command templates, readiness, bounded waits and free ports (spawn.h). */
#define _GNU_SOURCE
#include "runner/sandbox/spawn.h"
#include "runner/util/clock.h"
#include "runner/load/loadgen.h"

#include <arpa/inet.h>
#include <errno.h>
#include <netinet/in.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <sys/wait.h>
#include <unistd.h>

/* ---- templates --------------------------------------------------------------------------- */

char *kb_tmpl_expand(const char *tmpl, const struct kb_tmpl_vars *v)
{
    static const char *const keys[] = { "root", "build", "port", "bind", "rundir", "cpus" };
    char port[16], cpus[16];
    const char *vals[] = { v->root ? v->root : "", v->build ? v->build : "", port,
                           v->bind ? v->bind : "", v->rundir ? v->rundir : "", cpus };
    snprintf(port, sizeof(port), "%d", v->port);
    snprintf(cpus, sizeof(cpus), "%d", v->cpus);
    return kb_expand(tmpl, keys, vals, sizeof(keys) / sizeof(keys[0]));
}

int kb_tmpl_argv(const struct kb_strlist *tmpl, const struct kb_tmpl_vars *v, char **argv,
                 size_t max)
{
    size_t i;
    if (max == 0)
        return -1;
    for (i = 0; i < tmpl->n && i + 1 < max; i++)
        if (!(argv[i] = kb_tmpl_expand(tmpl->v[i], v)))
            break;
    argv[i] = NULL;
    return i == tmpl->n ? (int)i : -1;
}

int kb_tmpl_env(const struct kb_strlist *keys, const struct kb_strlist *vals,
                const struct kb_tmpl_vars *v, char **env, size_t max)
{
    size_t i;
    if (max == 0)
        return -1;
    for (i = 0; i < keys->n && i < vals->n && i + 1 < max; i++) {
        char *val = kb_tmpl_expand(vals->v[i], v);
        int n = val ? asprintf(&env[i], "%s=%s", keys->v[i], val) : -1;
        free(val);
        if (n < 0)
            break;
    }
    env[i] = NULL;
    return i == keys->n ? (int)i : -1;
}

void kb_tmpl_free(char **list, size_t max)
{
    for (size_t i = 0; i < max && list[i]; i++) {
        free(list[i]);
        list[i] = NULL;
    }
}

/* ---- readiness --------------------------------------------------------------------------- */

static long now_ms(void)
{
    return (long)(kb_mono_now() / KB_NS_PER_MS);
}

struct accepting {
    struct sockaddr_in a;
    long deadline;
    int (*alive)(void *);
    void *arg;
};

/* The load generator's own probe, bounded: a remote host that drops the SYN costs no more
 * than the deadline. */
static int accepts(void *p)
{
    struct accepting *w = p;
    long left = w->deadline - now_ms();
    char why[256];
    return kb_load_probe(&w->a, (int)(left < 1 ? 1 : left < 1000 ? left : 1000), why,
                         sizeof(why)) == 0;
}

static int still_alive(void *p)
{
    struct accepting *w = p;
    return !w->alive || w->alive(w->arg);
}

int kb_wait_accepting(const char *host, int port, int timeout_ms, int (*alive)(void *),
                      void *arg, char *err, size_t errlen)
{
    struct accepting w = { .a = { .sin_family = AF_INET, .sin_port = htons((uint16_t)port) },
                           .deadline = now_ms() + timeout_ms, .alive = alive, .arg = arg };
    int rc;
    if (!host || !strcmp(host, "0.0.0.0"))
        host = "127.0.0.1";
    if (inet_pton(AF_INET, host, &w.a.sin_addr) != 1) {
        snprintf(err, errlen, "'%s' is not an IPv4 address", host);
        return -1;
    }
    if ((rc = kb_poll_until(accepts, still_alive, &w, timeout_ms, 20)) == KB_POLL_GAVE_UP)
        snprintf(err, errlen, "the process exited before accepting connections on %s:%d",
                 host, port);
    else if (rc == KB_POLL_TIMEOUT)
        snprintf(err, errlen, "nothing accepted connections on %s:%d within %d ms", host,
                 port, timeout_ms);
    return rc == KB_POLL_DONE ? 0 : -1;
}

/* ---- the end of a child ------------------------------------------------------------------ */

int kb_wait_exit(pid_t pid, int timeout_ms, int *status)
{
    long deadline = now_ms() + timeout_ms, pause = 1;
    int st = 0;
    for (;;) {
        pid_t r = waitpid(pid, &st, timeout_ms < 0 ? 0 : WNOHANG);
        if (r == pid) {
            *status = st;
            return 0;
        }
        if (r < 0 && errno != EINTR)
            return -1;
        if (r == 0 && now_ms() >= deadline) {
            kill(pid, SIGKILL);
            while (waitpid(pid, &st, 0) < 0 && errno == EINTR)
                ;
            *status = st;
            return -1;
        }
        if (r == 0) {
            kb_sleep_ms(pause);         /* most children end at once: look again soon */
            pause = pause < 20 ? pause * 2 : 20;
        }
    }
}

/* ---- ports ------------------------------------------------------------------------------- */

int kb_free_port(char *err, size_t errlen)
{
    struct sockaddr_in a = { .sin_family = AF_INET };
    socklen_t len = sizeof(a);
    int fd = socket(AF_INET, SOCK_STREAM | SOCK_CLOEXEC, 0), port = -1;
    a.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
    if (fd >= 0 && bind(fd, (struct sockaddr *)&a, sizeof(a)) == 0 &&
        getsockname(fd, (struct sockaddr *)&a, &len) == 0)
        port = ntohs(a.sin_port);
    else
        snprintf(err, errlen, "no free port: %s", strerror(errno));
    if (fd >= 0)
        close(fd);
    return port;
}
