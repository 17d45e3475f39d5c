/* capture.c -- run a command, read its output, keep its status (capture.h). */
#define _GNU_SOURCE
#include "runner/sandbox/capture.h"
#include "runner/util/clock.h"
#include "runner/sandbox/launch.h"
#include "runner/sandbox/spawn.h"

#include <errno.h>
#include <fcntl.h>
#include <poll.h>
#include <stdio.h>
#include <string.h>
#include <sys/wait.h>
#include <unistd.h>

extern char **environ;

static long now_ms(void)
{
    return (long)(kb_mono_now() / KB_NS_PER_MS);
}

/* Append n bytes to buf, keeping it NUL-terminated; what does not fit is dropped. */
static void keep(char *buf, size_t cap, size_t *len, const char *src, size_t n, int *truncated)
{
    size_t room = cap > *len + 1 ? cap - 1 - *len : 0;
    if (!buf || !cap)
        return;
    if (n > room) {
        *truncated = 1;
        n = room;
    }
    memcpy(buf + *len, src, n);
    *len += n;
    buf[*len] = '\0';
}

/* Read ofd (stdout) and efd (stderr, or -1) to EOF. 0, or -1 when the deadline (a
 * bound was set) came first. */
static int collect(int ofd, int efd, struct kb_capture *c, long deadline)
{
    struct pollfd pf[2] = { { ofd, POLLIN, 0 }, { efd, POLLIN, 0 } };
    char tmp[4096];
    while (pf[0].fd >= 0 || pf[1].fd >= 0) {
        long left = c->timeout_ms > 0 ? deadline - now_ms() : -1;
        if (c->timeout_ms > 0 && left <= 0)
            return -1;
        if (poll(pf, 2, (int)left) < 0) {
            if (errno == EINTR)
                continue;
            return -1;
        }
        for (int i = 0; i < 2; i++) {
            ssize_t n;
            if (pf[i].fd < 0 || !pf[i].revents)
                continue;
            if ((n = read(pf[i].fd, tmp, sizeof(tmp))) < 0 && errno == EINTR)
                continue;
            if (n <= 0)
                pf[i].fd = -1;          /* EOF, or an error that ends this stream */
            else if (i == 1 && c->err)
                keep(c->err, c->err_cap, &c->err_len, tmp, (size_t)n, &c->truncated);
            else
                keep(c->out, c->out_cap, &c->out_len, tmp, (size_t)n, &c->truncated);
        }
    }
    return 0;
}

/* stdin /dev/null, stdout and stderr to out_fd and err_fd; own_pgroup: a session of its
 * own. Its PID, or -1 with why. */
static pid_t start(char *const *argv, const struct kb_capture *c, int out_fd, int err_fd,
                   char *why, size_t whylen)
{
    int stdio[3] = { -1, out_fd, err_fd };
    struct kb_launch l = { .argv = argv, .new_session = c->own_pgroup, .stdio = stdio };
    return kb_launch(&l, why, whylen);
}

static void close_all(int *fds, size_t n)
{
    for (size_t i = 0; i < n; i++)
        if (fds[i] >= 0)
            close(fds[i]);
}

int kb_capture_run(char *const *argv, struct kb_capture *c, char *why, size_t whylen)
{
    int op[2] = { -1, -1 }, ep[2] = { -1, -1 }, st = 0, late;
    long deadline = now_ms() + c->timeout_ms, left;
    pid_t pid;
    c->out_len = c->err_len = 0;
    c->truncated = c->timed_out = 0;
    if (c->out && c->out_cap)
        c->out[0] = '\0';
    if (c->err && c->err_cap)
        c->err[0] = '\0';
    if (c->to_fd <= 0 && (pipe2(op, O_CLOEXEC) < 0 || (c->err && pipe2(ep, O_CLOEXEC) < 0))) {
        snprintf(why, whylen, "pipe: %s", strerror(errno));
        close_all(op, 2);
        return -1;
    }
    pid = c->to_fd > 0 ? start(argv, c, c->to_fd, c->to_fd, why, whylen)
                       : start(argv, c, op[1], c->err ? ep[1] : op[1], why, whylen);
    close_all((int[]){ op[1], ep[1] }, 2);
    if (pid < 0) {
        close_all((int[]){ op[0], ep[0] }, 2);
        return -1;
    }
    late = op[0] >= 0 && collect(op[0], ep[0], c, deadline) < 0;
    close_all((int[]){ op[0], ep[0] }, 2);
    left = deadline - now_ms();
    /* late: its output did not end in time, so neither will it: killed at once */
    if (kb_wait_exit(pid, late ? 0 : c->timeout_ms > 0 ? (int)(left > 0 ? left : 0) : -1,
                     &st) < 0 || late) {
        c->timed_out = c->timeout_ms > 0;
        if (c->timed_out)
            snprintf(why, whylen, "%s: no end within %d ms (killed)", argv[0], c->timeout_ms);
        else
            snprintf(why, whylen, "%s: waitpid: %s", argv[0], strerror(errno));
        return -1;
    }
    return WIFEXITED(st) ? WEXITSTATUS(st) : 128 + WTERMSIG(st);
}

int kb_capture_line(char *const *argv, char *out, size_t outlen)
{
    struct kb_capture c = { .out = out, .out_cap = outlen };
    char why[256];
    int rc = kb_capture_run(argv, &c, why, sizeof(why));
    out[strcspn(out, "\n")] = '\0';
    return rc == 0 ? 0 : -1;
}
