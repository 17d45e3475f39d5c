/* spawn.h -- what starting a server needs besides the start itself: its command from the
 * contract's template, knowing when it serves, waiting for its end, and a free port.
 *
 * Owns, once for the fixtures (run/fixture.c) and calibrate's
 * control server (calibrate.c):
 *   - the template's placeholders {root} {build} {port} {bind} {rundir} {cpus}, expanded
 *     into one string, an argv, or an environment of "KEY=value";
 *   - waiting until HOST:PORT accepts a TCP connection, or the process died, or a deadline
 *     passed;
 *   - waiting for a child's exit within a time bound (SIGKILL past it), EINTR-safe;
 *   - a loopback port the kernel calls free.
 * The start itself is launch.h's; what a placeholder stands for is the caller's. Never
 * prints; errors go to err. */
#ifndef KB_SPAWN_H
#define KB_SPAWN_H

#include <stddef.h>
#include <sys/types.h>

#include "contract/contract.h"

/* What the placeholders stand for; a NULL string reads as "". {port} and {cpus} are
 * written in decimal. Other {names} are left as they are (the database's extra
 * arguments, {conninfo}, are expanded later, by pgcluster.c). */
struct kb_tmpl_vars {
    const char *root, *build, *bind, *rundir;
    int port, cpus;
};

/* tmpl with the placeholders filled: malloc'd, the caller frees; NULL when out of memory. */
char *kb_tmpl_expand(const char *tmpl, const struct kb_tmpl_vars *v);

/* Every string of tmpl expanded into argv, NULL-terminated. The number of strings, or -1
 * when they do not all fit in max - 1 or memory ran out; what fitted is kept, terminated,
 * so the caller frees argv with kb_tmpl_free either way. */
int kb_tmpl_argv(const struct kb_strlist *tmpl, const struct kb_tmpl_vars *v, char **argv,
                 size_t max);

/* The same for an environment: "KEY=value" with each value expanded. */
int kb_tmpl_env(const struct kb_strlist *keys, const struct kb_strlist *vals,
                const struct kb_tmpl_vars *v, char **env, size_t max);

/* Free the strings of a NULL-terminated list of at most max entries. */
void kb_tmpl_free(char **list, size_t max);

/* Connect to host:port (IPv4; NULL or "0.0.0.0", a listener on every address, is reached
 * at 127.0.0.1) every 20 ms until it accepts (0), alive(arg) says 0 -- the process died --
 * or timeout_ms passed (-1 with which in err). alive may be NULL. */
int kb_wait_accepting(const char *host, int port, int timeout_ms, int (*alive)(void *),
                      void *arg, char *err, size_t errlen);

/* Wait for the child pid to end, retrying on EINTR. Its wait status in *status and 0; past
 * timeout_ms (< 0: no bound) it is killed with SIGKILL, reaped, and -1 returned; -1 too
 * when pid is no child of ours. */
int kb_wait_exit(pid_t pid, int timeout_ms, int *status);

/* A loopback port the kernel calls free right now (bound to port 0, read back, released:
 * another process may take it before the caller does). The port, or -1 with err. */
int kb_free_port(char *err, size_t errlen);

#endif
