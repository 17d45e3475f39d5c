/* cmd_serve_agent.c -- `kneebench serve-agent`: run the suite's fixtures on this host for a
 * client on another (runner/sandbox/agent.h), or, with --call, be that client for one exchange. */
#define _POSIX_C_SOURCE 200809L
#include "runner/cli/commands.h"

#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "runner/sandbox/agent.h"
#include "runner/sandbox/agent_client.h"

static volatile sig_atomic_t stop_requested;

static void on_signal(int sig)
{
    (void)sig;
    stop_requested = 1;
}

static int usage(FILE *f)
{
    fprintf(f,
            "usage: kneebench serve-agent [--bind ADDR] [--port N] [--serve-bind ADDR]\n"
            "                             [--backend native|docker] [--no-limits] [--rundir DIR]\n"
            "                             [--allow-privileged-ports] [--idle-timeout S]\n"
            "       kneebench serve-agent --call HOST:PORT COMMAND...\n"
            "  Serves, on ADDR:N (default 127.0.0.1:%d; 0 = any free port), the commands\n"
            "  identity | start RUNTIME PORT | sample | limits | stop | quit, one per line, each\n"
            "  answered 'ok JSON' or 'err REASON'; everything else is refused. Fixtures bind\n"
            "  --serve-bind (default: --bind) under the contract's limits, on ports from 1024 up\n"
            "  unless --allow-privileged-ports. Connections are served side by side; one idle\n"
            "  for S seconds (default %d) is closed. Fixtures' directories go under --rundir\n"
            "  (yours, writable by no one else; default a fresh private one in $TMPDIR or /tmp).\n"
            "  Bind a non-loopback address only on a network you trust: the agent has no\n"
            "  authentication.\n"
            "  --call sends each COMMAND (one argument each) and prints the answers; exit 0 when\n"
            "  every answer was ok.\n"
            "exit: 0 stopped by SIGINT or SIGTERM (--call: every answer ok); 1 --call: an answer\n"
            "      was err; 2 bad usage, or the agent could not serve (--call: could not connect).\n",
            KB_AGENT_DEFAULT_PORT, KB_AGENT_IDLE_TIMEOUT_MS / 1000);
    return f == stdout ? 0 : 2;
}

static int call(const char *hostport, int n, char **cmds)
{
    char err[512], reply[4096];
    struct kb_agent_conn *c = kb_agent_connect(hostport, 5000, err, sizeof(err));
    int rc = 0;

    if (!c) {
        fprintf(stderr, "kneebench serve-agent: %s\n", err);
        return 2;
    }
    for (int i = 0; i < n; i++) {
        if (kb_agent_call(c, cmds[i], 30000, reply, sizeof(reply), err, sizeof(err)) == 0) {
            printf("ok %s\n", reply);
        } else {
            printf("err %s\n", err);
            rc = 1;
        }
        fflush(stdout);
    }
    kb_agent_close(c);
    return rc;
}

int cmd_serve_agent(int argc, char **argv)
{
    struct kb_agent_cfg cfg = { .port = KB_AGENT_DEFAULT_PORT, .stop = &stop_requested,
                                .log = stdout };
    char err[512], *end;
    struct sigaction sa;
    long secs;

    for (int i = 1; i < argc; i++) {
        const char *o = argv[i], *v = i + 1 < argc ? argv[i + 1] : NULL;
        if (!strcmp(o, "--help") || !strcmp(o, "-h"))
            return usage(stdout);
        if (!strcmp(o, "--no-limits")) {
            cfg.no_limits = 1;
            continue;
        }
        if (!strcmp(o, "--allow-privileged-ports")) {
            cfg.allow_privileged_ports = 1;
            continue;
        }
        if (!v)
            return usage(stderr);
        if (!strcmp(o, "--call"))
            return call(v, argc - i - 2, argv + i + 2);
        i++;
        if (!strcmp(o, "--bind")) cfg.bind = v;
        else if (!strcmp(o, "--serve-bind")) cfg.serve_bind = v;
        else if (!strcmp(o, "--backend")) cfg.backend = v;
        else if (!strcmp(o, "--rundir")) cfg.rundir = v;
        else if (!strcmp(o, "--contract")) cfg.contract_path = v;
        else if (!strcmp(o, "--port")) cfg.port = atoi(v);
        else if (!strcmp(o, "--idle-timeout") && (secs = strtol(v, &end, 10)) > 0 && !*end &&
                 secs <= 86400)
            cfg.idle_timeout_ms = (int)secs * 1000;
        else return usage(stderr);
    }
    if (cfg.port < 0 || cfg.port > 65535)
        return usage(stderr);
    memset(&sa, 0, sizeof(sa));
    sa.sa_handler = on_signal;
    sigaction(SIGTERM, &sa, NULL);
    sigaction(SIGINT, &sa, NULL);
    setvbuf(stdout, NULL, _IOLBF, 0);
    if (kb_agent_serve(&cfg, err, sizeof(err)) < 0) {
        fprintf(stderr, "kneebench serve-agent: %s\n", err);
        return 2;
    }
    return 0;
}
