/* portown.h -- who listens on a TCP port of this host (this network namespace): the
 * listening sockets in /proc/net/tcp and tcp6, and the processes that hold them
 * (/proc/PID/fd). A fixture's port must be free before it starts, and once it accepts,
 * every listener there must be one of its own processes': otherwise a leftover (an earlier
 * run's fixture, anything else) would answer the readiness wait, the preflight and the
 * load in its place. Reads /proc only; never prints. */
#ifndef KB_PORTOWN_H
#define KB_PORTOWN_H

#include <stddef.h>
#include <sys/types.h>

#define KB_PORT_MAX_LISTENERS 64

/* The inodes of the listening sockets that would take a connection to addr:port (addr an
 * IPv4 address, NULL = 127.0.0.1): bound to addr itself or to the wildcard (0.0.0.0, ::,
 * ::ffff:addr); with addr 0.0.0.0, every listener on the port. The count (at most max),
 * or -1 when /proc/net/tcp cannot be read. */
int kb_port_listeners(const char *addr, int port, unsigned long *inodes, size_t max);

/* The first process (by PID) holding socket inode among pids[0..n), or among every
 * process when pids is NULL; 0 when none is found (gone, or not ours to read). */
pid_t kb_port_holder(unsigned long inode, const pid_t *pids, size_t n);

/* Every process (by PID, ascending) holding a socket listening on addr:port, as `ss -ltnp`
 * finds them: a server's master and its workers all hold the listener. The count (at most
 * max); 0 when nothing listens or no holder can be read (another user's, without root);
 * -1 when /proc/net/tcp cannot be read. */
int kb_port_holders(const char *addr, int port, pid_t *out, size_t max);

/* 0 when nothing listens on addr:port and nothing else bound to it would make a fixture's
 * bind fail (a socket bound and not listening, which no /proc table lists: a bind with
 * SO_REUSEADDR is tried and undone); -1 with who does in why ("port 8084 is held by pid
 * 1234 (gray-static)"). */
int kb_port_check_free(const char *addr, int port, char *why, size_t whylen);

/* Poll kb_port_check_free every 50 ms for up to timeout_ms (a process killed a moment
 * ago may still hold the port). 0 or -1 with why. */
int kb_port_wait_free(const char *addr, int port, int timeout_ms, char *why, size_t whylen);

/* 0 when every listener on addr:port is held by one of pids[0..n) (and there is one);
 * -1 with why: a listener held by another process (named), or none at all. */
int kb_port_check_owned(const char *addr, int port, const pid_t *pids, size_t n, char *why,
                        size_t whylen);

#endif
