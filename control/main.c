/* kb-control -- the known-fast control server: the contract's literal-body routes, byte for
 * byte, from one raw-epoll thread. It exists to outrun the load generator, so that what
 * the client measures against it is the client's own limit. */
#define _GNU_SOURCE
#include <errno.h>
#include <getopt.h>
#include <sched.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "control/routes.h"
#include "control/server.h"
#include "contract/contract.h"
#include "runner/util/cpulist.h"
#include "runner/util/root.h"

static volatile sig_atomic_t stop_flag;

static void on_signal(int sig)
{
    (void)sig;
    stop_flag = 1;
}

static int usage(FILE *f, int rc)
{
    fprintf(f, "usage: kb-control [--port N (0 = any free port)] [--bind ADDR] [--cpus LIST] [--contract FILE]\n"
               "  Prints \"listening on ADDR:PORT\" once ready; SIGTERM or SIGINT stop it.\n");
    return rc;
}

/* Pin to list, kept to the CPUs this process may run on. 0, or -1 with err. */
static int pin(const char *list, char *err, size_t errlen)
{
    cpu_set_t set;
    if (kb_cpulist_parse_allowed(list, &set, err, errlen) < 0)
        return -1;
    if (sched_setaffinity(0, sizeof(set), &set) < 0) {
        snprintf(err, errlen, "sched_setaffinity: %s", strerror(errno));
        return -1;
    }
    return 0;
}

int main(int argc, char **argv)
{
    static const struct option opts[] = {
        { "port", 1, 0, 'p' }, { "bind", 1, 0, 'b' }, { "cpus", 1, 0, 'c' },
        { "contract", 1, 0, 'C' }, { "help", 0, 0, 'h' }, { 0, 0, 0, 0 }
    };
    const char *bind_addr = "127.0.0.1", *contract = NULL, *cpus = NULL;
    long port = -1;
    int o, rc = 1;
    char err[512], *end;
    struct kb_contract ct;
    struct kbc_routes routes;
    struct kbc_server srv;
    struct sigaction sa = { .sa_handler = on_signal };

    while ((o = getopt_long(argc, argv, "", opts, NULL)) != -1) {
        switch (o) {
        case 'p':
            port = strtol(optarg, &end, 10);
            if (*end || end == optarg || port < 0 || port > 65535)
                return usage(stderr, 2);
            break;
        case 'b': bind_addr = optarg; break;
        case 'c': cpus = optarg; break;
        case 'C': contract = optarg; break;
        case 'h': return usage(stdout, 0);
        default: return usage(stderr, 2);
        }
    }
    if (optind < argc)
        return usage(stderr, 2);
    if (!contract && !kb_root_contract()) {
        fprintf(stderr, "kb-control: %s, or name the contract with --contract FILE\n",
                kb_root_error());
        return 2;
    }
    if (kb_contract_load(contract ? contract : kb_root_contract(), &ct, err, sizeof(err))) {
        fprintf(stderr, "kb-control: %s\n", err);
        return 2;
    }
    if (port < 0)
        port = ct.control.port;
    if (cpus && pin(cpus, err, sizeof(err)) < 0) {
        fprintf(stderr, "kb-control: --cpus: %s\n", err);
        kb_contract_free(&ct);
        return 2;
    }
    if (kbc_routes_init(&routes, &ct, err, sizeof(err))) {
        fprintf(stderr, "kb-control: %s\n", err);
        kb_contract_free(&ct);
        return 1;
    }
    kb_contract_free(&ct);
    if (kbc_server_open(&srv, bind_addr, (int)port, &routes, err, sizeof(err))) {
        fprintf(stderr, "kb-control: %s\n", err);
        kbc_routes_free(&routes);
        return 1;
    }
    sigaction(SIGTERM, &sa, NULL);
    sigaction(SIGINT, &sa, NULL);
    signal(SIGPIPE, SIG_IGN);
    printf("listening on %s:%d\n", bind_addr, srv.port);
    fflush(stdout);
    if (kbc_server_run(&srv, &stop_flag, err, sizeof(err)) == 0)
        rc = 0;
    else
        fprintf(stderr, "kb-control: %s\n", err);
    kbc_server_close(&srv);
    kbc_routes_free(&routes);
    return rc;
}
