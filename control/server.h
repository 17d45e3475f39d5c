/* server.h -- the control server's event loop: one thread, raw epoll, keep-alive and
 * pipelining (every complete request in a read is answered, in order, with one write).
 * kbc_server_open binds and listens; kbc_server_run serves until *stop becomes non-zero;
 * kbc_server_close releases every descriptor and buffer. Nothing here prints. */
#ifndef KBC_SERVER_H
#define KBC_SERVER_H

#include <signal.h>
#include <stddef.h>

#include "control/routes.h"

struct kbc_conn;

struct kbc_server {
    int listen_fd;
    int epfd;
    int port;                  /* the bound port (useful with port 0) */
    struct kbc_routes *routes; /* borrowed */
    struct kbc_conn **conns;   /* owned, indexed by fd */
    int nconns_cap;
};

/* 0, or -1 with err set. */
int kbc_server_open(struct kbc_server *s, const char *bind_addr, int port, struct kbc_routes *routes,
                    char *err, size_t errlen);
/* 0 when stopped by *stop, -1 with err set on a fatal error. */
int kbc_server_run(struct kbc_server *s, volatile sig_atomic_t *stop, char *err, size_t errlen);
void kbc_server_close(struct kbc_server *s);

#endif
