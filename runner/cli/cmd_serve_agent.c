/* cmd_serve_agent.c -- `kneebench serve-agent`: run the suite's fixtures on this host for a
 * client on another (runner/sandbox/agent.h), or, with --call, be that client for one exchange. */
#define _POSIX_C_SOURCE 200809L
#include "runner/cli/commands.h"

#include <getopt.h>
#include <math.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "runner/sandbox/agent.h"
#include "runner/sandbox/agent_auth.h"
#include "runner/sandbox/agent_client.h"
#include "runner/util/opts.h"

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
            "                             [--idle-timeout D]\n"
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
            "  served side by side; one idle for D (default %d s; 90, 90s, 2m) is closed, one\n"
            "  that has not authenticated within %d s too. Fixtures' directories go under\n"
            "  --rundir (yours, writable by no one else; default a fresh private one in $TMPDIR\n"
            "  or /tmp, removed at exit). docs/security.md says what the token protects against\n"
            "  and what not.\n"
            "  --call proves the token of FILE, sends each COMMAND (one argument each), or each\n"
            "  line of standard input when none is given, and prints the answers as they come;\n"
            "  exit 0 when every answer was ok.\n"
            "exit: 0 stopped by SIGINT or SIGTERM (--call: every answer ok); 1 --call: an answer\n"
            "      was err; 2 bad usage (a bad option is refused, naming it, before anything is\n"
            "      bound or made), or the agent could not serve (--call: could not connect or\n"
            "      authenticate).\n",
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

enum { O_BIND = 256, O_PORT, O_SERVE_BIND, O_BACKEND, O_NOLIMITS, O_RUNDIR, O_TOKEN,
       O_CONTRACT, O_PRIVPORTS, O_IDLE, O_CALL };

/* One option into cfg (or *call). 0, or -1 with e. */
static int agent_opt(int o, const char *v, struct kb_agent_cfg *cfg, const char **call,
                     char *e, size_t n)
{
    static const struct kb_bound idle = { 1, 86400, 0, 0 };
    double secs;
    switch (o) {
    case O_BIND: cfg->bind = v; return 0;
    case O_SERVE_BIND: cfg->serve_bind = v; return 0;
    case O_BACKEND: cfg->backend = v; return 0;
    case O_RUNDIR: cfg->rundir = v; return 0;
    case O_TOKEN: cfg->token_path = v; return 0;
    case O_CONTRACT: cfg->contract_path = v; return 0;
    case O_NOLIMITS: cfg->no_limits = 1; return 0;
    case O_PRIVPORTS: cfg->allow_privileged_ports = 1; return 0;
    case O_CALL: *call = v; return 0;
    /* 0: any free port, the one bound said on the first line */
    case O_PORT: return kb_opt_int("--port", v, KB_BOUND(LISTEN_PORT), &cfg->port, e, n);
    default:    /* O_IDLE */
        if (kb_opt_duration("--idle-timeout", v, &idle, &secs, e, n))
            return -1;
        cfg->idle_timeout_ms = (int)lround(secs * 1000);
        return 0;
    }
}

/* Fills cfg, or *call and the commands after it (argv[*ncmd_at...]); 0, 1 for --help, 2
 * for a bad option (said on stderr). Everything after --call HOST:PORT is a command. */
static int parse(int argc, char **argv, struct kb_agent_cfg *cfg, const char **call,
                 int *cmds_at)
{
    static const struct option opts[] = {
        { "bind", 1, 0, O_BIND }, { "port", 1, 0, O_PORT }, { "serve-bind", 1, 0, O_SERVE_BIND },
        { "backend", 1, 0, O_BACKEND }, { "no-limits", 0, 0, O_NOLIMITS },
        { "rundir", 1, 0, O_RUNDIR }, { "token", 1, 0, O_TOKEN },
        { "contract", 1, 0, O_CONTRACT }, { "allow-privileged-ports", 0, 0, O_PRIVPORTS },
        { "idle-timeout", 1, 0, O_IDLE }, { "call", 1, 0, O_CALL }, { "help", 0, 0, 'h' },
        { 0, 0, 0, 0 }
    };
    char e[320];
    int o;
    optind = 1;
    /* '+': stop at the first word that is no option, as a COMMAND after --call is */
    while (!*call && (o = getopt_long(argc, argv, "+h", opts, NULL)) != -1) {
        if (o == 'h')
            return 1;
        if (o == '?' || o == ':')
            return usage(stderr);
        if (agent_opt(o, optarg, cfg, call, e, sizeof(e))) {
            fprintf(stderr, "kneebench serve-agent: %s\n", e);
            return 2;
        }
    }
    if (!*call && optind < argc) {
        fprintf(stderr, "kneebench serve-agent: unexpected argument '%s'\n", argv[optind]);
        return 2;
    }
    *cmds_at = optind;
    return 0;
}

int cmd_serve_agent(int argc, char **argv)
{
    struct kb_agent_cfg cfg = { .port = KB_AGENT_DEFAULT_PORT, .stop = &stop_requested,
                                .log = stdout };
    const char *hostport = NULL;
    char err[512];
    struct sigaction sa;
    int rc = 0, at = argc;

    if ((rc = parse(argc, argv, &cfg, &hostport, &at)))
        return rc == 1 ? usage(stdout) : rc;
    if (hostport)
        return call(hostport, cfg.token_path, argc - at, argv + at);
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
