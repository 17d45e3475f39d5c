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
#include "runner/sandbox/agent_auth.h"
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
            "                             [--token FILE] [--allow-privileged-ports]\n"
            "                             [--idle-timeout S]\n"
            "       kneebench serve-agent --token FILE --call HOST:PORT [COMMAND...]\n"
            "  Serves, on ADDR:N (default 127.0.0.1:%d; 0 = any free port), the commands\n"
            "  identity | start RUNTIME PORT | sample | limits | stop | quit, one per line, each\n"
            "  answered 'ok JSON' or 'err REASON'; everything else is refused. Every connection\n"
            "  must first prove the token (HMAC of the agent's greeting): --token FILE (yours,\n"
            "  readable by no one else), else a fresh one the agent writes to DIR/token and\n"
            "  names. A fixture belongs to the connection that started it: only that one may\n"
            "  sample or stop it, and it is stopped when that connection ends. Fixtures bind\n"
            "  --serve-bind (default 127.0.0.1, whatever --bind says) under the contract's\n"
            "  limits, on ports from 1024 up unless --allow-privileged-ports. Connections are\n"
            "  served side by side; one idle for S seconds (default %d) is closed, one that has\n"
            "  not authenticated within %d s too. Fixtures' directories go under --rundir (yours,\n"
            "  writable by no one else; default a fresh private one in $TMPDIR or /tmp, removed\n"
            "  at exit). docs/security.md says what the token protects against and what not.\n"
            "  --call proves the token of FILE, sends each COMMAND (one argument each), or each\n"
            "  line of standard input when none is given, and prints the answers as they come;\n"
            "  exit 0 when every answer was ok.\n"
            "exit: 0 stopped by SIGINT or SIGTERM (--call: every answer ok); 1 --call: an answer\n"
            "      was err; 2 bad usage, or the agent could not serve (--call: could not connect\n"
            "      or authenticate).\n",
            KB_AGENT_DEFAULT_PORT, KB_AGENT_IDLE_TIMEOUT_MS / 1000, KB_AGENT_AUTH_TIMEOUT_MS / 1000);
    return f == stdout ? 0 : 2;
}

/* One command and its answer, printed; 0 when it was ok. */
static int call_one(struct kb_agent_conn *c, const char *cmd)
{
    char err[512], reply[4096];
    int rc = kb_agent_call(c, cmd, 30000, reply, sizeof(reply), err, sizeof(err));
    if (rc == 0)
        printf("ok %s\n", reply);
    else
        printf("err %s\n", err);
    fflush(stdout);
    return rc;
}

static int call(const char *hostport, const char *token_path, int n, char **cmds)
{
    char err[512], token[KB_AGENT_TOKEN_MAX], line[KB_AGENT_LINE_MAX + 2];
    struct kb_agent_conn *c;
    int rc = 0;

    if (!token_path) {
        fprintf(stderr, "kneebench serve-agent: --call needs --token FILE (the agent's token)\n");
        return 2;
    }
    if (kb_agent_token_load(token_path, token, sizeof(token), err, sizeof(err)) < 0 ||
        !(c = kb_agent_connect(hostport, token, 5000, err, sizeof(err)))) {
        fprintf(stderr, "kneebench serve-agent: %s\n", err);
        return 2;
    }
    for (int i = 0; i < n; i++)
        rc |= call_one(c, cmds[i]) < 0;
    /* no COMMAND: a session driven from standard input, one line each, as it arrives */
    while (n == 0 && fgets(line, sizeof(line), stdin)) {
        line[strcspn(line, "\r\n")] = '\0';
        rc |= call_one(c, line) < 0;
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
            return call(v, cfg.token_path, argc - i - 2, argv + i + 2);
        i++;
        if (!strcmp(o, "--bind")) cfg.bind = v;
        else if (!strcmp(o, "--serve-bind")) cfg.serve_bind = v;
        else if (!strcmp(o, "--backend")) cfg.backend = v;
        else if (!strcmp(o, "--rundir")) cfg.rundir = v;
        else if (!strcmp(o, "--token")) cfg.token_path = v;
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
