/* portown.c -- listening sockets and their holders, from /proc (portown.h). */
#define _GNU_SOURCE
#include "runner/util/portown.h"
#include "runner/util/clock.h"

#include <arpa/inet.h>
#include <dirent.h>
#include <errno.h>
#include <netinet/in.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <time.h>
#include <unistd.h>

#define TCP_LISTEN 0x0A

/* The kernel prints each 32-bit word of an address as a native-endian number, so the bytes
 * come back by storing the parsed words natively again. */
static int hex_addr(const char *hex, unsigned char *out, size_t words)
{
    char w[9];
    if (strlen(hex) != words * 8)
        return -1;
    for (size_t i = 0; i < words; i++) {
        uint32_t v;
        memcpy(w, hex + 8 * i, 8);
        w[8] = '\0';
        v = (uint32_t)strtoul(w, NULL, 16);
        memcpy(out + 4 * i, &v, 4);
    }
    return 0;
}

/* A listener bound to a (4 or 16 bytes) takes connections to want (IPv4), or want is the
 * wildcard (everything on the port counts). */
static int reaches(const unsigned char *a, size_t len, const struct in_addr *want)
{
    static const unsigned char zero[16], mapped[12] = { [10] = 0xff, [11] = 0xff };
    if (want->s_addr == htonl(INADDR_ANY) || !memcmp(a, zero, len))
        return 1;
    if (len == 4)
        return !memcmp(a, &want->s_addr, 4);
    return !memcmp(a, mapped, 12) && !memcmp(a + 12, &want->s_addr, 4);
}

static void scan_table(const char *path, size_t words, const struct in_addr *want, int port,
                       unsigned long *inodes, size_t max, int *n)
{
    char line[512], hex[40];
    unsigned char a[16];
    unsigned lport, st;
    unsigned long inode;
    FILE *f = fopen(path, "re");
    if (!f)
        return;
    while (fgets(line, sizeof(line), f) && (size_t)*n < max) {
        if (sscanf(line, " %*d: %39[0-9A-Fa-f]:%x %*[0-9A-Fa-f]:%*x %x %*x:%*x %*x:%*x %*x "
                   "%*u %*u %lu", hex, &lport, &st, &inode) != 4)
            continue;   /* the header */
        if (st == TCP_LISTEN && (int)lport == port && hex_addr(hex, a, words) == 0 &&
            reaches(a, words * 4, want))
            inodes[(*n)++] = inode;
    }
    fclose(f);
}

int kb_port_listeners(const char *addr, int port, unsigned long *inodes, size_t max)
{
    struct in_addr want;
    int n = 0;
    if (inet_pton(AF_INET, addr ? addr : "127.0.0.1", &want) != 1 ||
        access("/proc/net/tcp", R_OK) != 0)
        return -1;
    scan_table("/proc/net/tcp", 1, &want, port, inodes, max, &n);
    scan_table("/proc/net/tcp6", 4, &want, port, inodes, max, &n);
    return n;
}

static int holds(pid_t pid, const char *target)
{
    char dir[64], path[320], link[64];
    struct dirent *e;
    DIR *d;
    int found = 0;
    snprintf(dir, sizeof(dir), "/proc/%ld/fd", (long)pid);
    if (!(d = opendir(dir)))
        return 0;
    while (!found && (e = readdir(d))) {
        ssize_t len;
        snprintf(path, sizeof(path), "%s/%s", dir, e->d_name);
        if ((len = readlink(path, link, sizeof(link) - 1)) > 0) {
            link[len] = '\0';
            found = !strcmp(link, target);
        }
    }
    closedir(d);
    return found;
}

pid_t kb_port_holder(unsigned long inode, const pid_t *pids, size_t n)
{
    char target[48];
    struct dirent *e;
    DIR *d;
    pid_t found = 0;
    snprintf(target, sizeof(target), "socket:[%lu]", inode);
    if (pids) {
        for (size_t i = 0; i < n; i++)
            if (holds(pids[i], target))
                return pids[i];
        return 0;
    }
    if (!(d = opendir("/proc")))
        return 0;
    while (!found && (e = readdir(d))) {
        pid_t p = (pid_t)atol(e->d_name);
        if (p > 0 && holds(p, target))
            found = p;
    }
    closedir(d);
    return found;
}

static int holds_any(pid_t pid, char targets[][48], int n)
{
    for (int i = 0; i < n; i++)
        if (holds(pid, targets[i]))
            return 1;
    return 0;
}

static int pid_cmp(const void *a, const void *b)
{
    pid_t x = *(const pid_t *)a, y = *(const pid_t *)b;
    return (x > y) - (x < y);
}

int kb_port_holders(const char *addr, int port, pid_t *out, size_t max)
{
    unsigned long inodes[KB_PORT_MAX_LISTENERS];
    char targets[KB_PORT_MAX_LISTENERS][48];
    struct dirent *e;
    size_t found = 0;
    DIR *d;
    int n = kb_port_listeners(addr, port, inodes, KB_PORT_MAX_LISTENERS);
    if (n <= 0)
        return n;
    for (int i = 0; i < n; i++)
        snprintf(targets[i], sizeof(targets[i]), "socket:[%lu]", inodes[i]);
    if (!(d = opendir("/proc")))
        return 0;
    while (found < max && (e = readdir(d))) {
        pid_t p = (pid_t)atol(e->d_name);
        if (p > 0 && holds_any(p, targets, n))
            out[found++] = p;
    }
    closedir(d);
    qsort(out, found, sizeof(*out), pid_cmp);
    return (int)found;
}

/* "pid N (comm)", or what stands for a holder this process cannot see. */
static void name_holder(unsigned long inode, char *out, size_t len)
{
    char path[64], comm[64] = "";
    pid_t p = kb_port_holder(inode, NULL, 0);
    FILE *f;
    if (!p) {
        snprintf(out, len, "a process this runner cannot see (socket inode %lu)", inode);
        return;
    }
    snprintf(path, sizeof(path), "/proc/%ld/comm", (long)p);
    if ((f = fopen(path, "re"))) {
        if (!fgets(comm, sizeof(comm), f))
            comm[0] = '\0';
        fclose(f);
    }
    comm[strcspn(comm, "\n")] = '\0';
    snprintf(out, len, "pid %ld (%s)", (long)p, comm[0] ? comm : "?");
}

/* 1 when another socket keeps a listener from binding addr:port: the kernel's own answer
 * to a bind with SO_REUSEADDR, as every fixture binds. A socket bound and not listening is
 * in no /proc/net table, yet the fixture's bind fails on it. */
static int bound_elsewhere(const char *addr, int port)
{
    struct sockaddr_in a = { .sin_family = AF_INET, .sin_port = htons((uint16_t)port) };
    int fd, one = 1, busy;
    if (inet_pton(AF_INET, addr ? addr : "127.0.0.1", &a.sin_addr) != 1 ||
        (fd = socket(AF_INET, SOCK_STREAM | SOCK_CLOEXEC, 0)) < 0)
        return 0;
    setsockopt(fd, SOL_SOCKET, SO_REUSEADDR, &one, sizeof(one));
    busy = bind(fd, (struct sockaddr *)&a, sizeof(a)) < 0 && errno == EADDRINUSE;
    close(fd);
    return busy;
}

int kb_port_check_free(const char *addr, int port, char *why, size_t whylen)
{
    unsigned long inodes[KB_PORT_MAX_LISTENERS];
    char who[160];
    /* unreadable /proc/net/tcp: the bind still tells, and the ownership check after the
     * start cannot pass either */
    if (kb_port_listeners(addr, port, inodes, KB_PORT_MAX_LISTENERS) <= 0) {
        if (!bound_elsewhere(addr, port))
            return 0;
        snprintf(why, whylen, "port %d is held by a socket bound to it that does not listen "
                 "(a bind there fails; /proc/net/tcp lists no such socket, so its process "
                 "is not named)", port);
        return -1;
    }
    name_holder(inodes[0], who, sizeof(who));
    snprintf(why, whylen, "port %d is held by %s", port, who);
    return -1;
}

int kb_port_wait_free(const char *addr, int port, int timeout_ms, char *why, size_t whylen)
{
    for (int waited = 0;; waited += 50) {
        if (kb_port_check_free(addr, port, why, whylen) == 0)
            return 0;
        if (waited >= timeout_ms)
            return -1;
        kb_sleep_ms(50);
    }
}

int kb_port_check_owned(const char *addr, int port, const pid_t *pids, size_t n, char *why,
                        size_t whylen)
{
    unsigned long inodes[KB_PORT_MAX_LISTENERS];
    char who[160];
    int k = kb_port_listeners(addr, port, inodes, KB_PORT_MAX_LISTENERS);
    if (k < 0) {
        snprintf(why, whylen, "cannot read /proc/net/tcp to tell who listens on port %d", port);
        return -1;
    }
    if (k == 0) {
        snprintf(why, whylen, "nothing listens on port %d any more", port);
        return -1;
    }
    for (int i = 0; i < k; i++) {
        if (kb_port_holder(inodes[i], pids, n))
            continue;
        name_holder(inodes[i], who, sizeof(who));
        snprintf(why, whylen, "port %d answers from %s, not from the fixture's processes",
                 port, who);
        return -1;
    }
    return 0;
}
