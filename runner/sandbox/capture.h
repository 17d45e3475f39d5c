/* capture.h -- running a command to read what it prints, the one way the runner does it: a
 * runtime's version line, a docker image's ID and identity, pgcluster.sh, the docker CLI.
 *
 * Owns: starting argv (searched in PATH, never through a shell, stdin from /dev/null),
 * reading its stdout and stderr -- apart, or stderr into stdout -- into the caller's bounded
 * buffers until EOF (past a buffer's end the rest is read and dropped, so the child never
 * blocks on a full pipe), an optional time bound past which the child is killed, and its
 * exit status; every poll, read and waitpid is retried on EINTR. Never prints. */
#ifndef KB_CAPTURE_H
#define KB_CAPTURE_H

#include <stddef.h>

struct kb_capture {
    /* what the caller sets (zero-initialised: merged output, no bound) */
    char *out;           /* stdout, always NUL-terminated; stderr too when err is NULL */
    size_t out_cap;
    char *err;           /* stderr, NUL-terminated; NULL: into out */
    size_t err_cap;
    int to_fd;           /* > 0: stdout and stderr go to this descriptor instead (a log);
                          * out and err are left "" */
    int timeout_ms;      /* > 0: killed with SIGKILL when it has not ended by then */
    int own_pgroup;      /* in a process group of its own: a Ctrl-C at the terminal
                          * reaches the caller, which then cleans up, but not the child */
    /* what kb_capture_run sets */
    size_t out_len, err_len;
    int truncated;       /* it printed more than the buffers hold */
    int timed_out;       /* it ran past timeout_ms and was killed */
};

/* Run argv (NULL-terminated) and capture as c says. Its exit status (0-255; 128 + N when
 * signal N ended it), or -1 with why when it could not be started or ran past
 * c->timeout_ms (then it was killed). */
int kb_capture_run(char *const *argv, struct kb_capture *c, char *why, size_t whylen);

/* The first line of a command's stdout and stderr into out ("" if none). 0 when it exited
 * 0, else -1 (out still holds what it printed: often the reason). */
int kb_capture_line(char *const *argv, char *out, size_t outlen);

#endif
