/* agent.h -- `kneebench serve-agent`: runs fixtures on a remote server host for a client
 * on another host, through a tiny line protocol over TCP.
 *
 * Protocol (version 2): on connect the agent sends one line, KB_AGENT_GREETING, the
 * protocol and a fresh nonce; the client's first line must be "auth PROOF", PROOF being
 * HMAC-SHA256 of that greeting line keyed with the agent's token (agent_auth.h), answered
 * "ok {"session":N}" or "err refused: ..." and closed. Then the client sends one command per
 * line; the agent answers one line, "ok <JSON object>" or "err <reason>". It accepts ONLY
 * the suite's own commands:
 *   identity              host, kernel, CPU model, protocol, runtimes it may start, the
 *                         address its fixtures bind
 *   start RUNTIME PORT    start a contract runtime (or "control") on PORT under the same
 *                         sandbox limits as the native backend; answers once it accepts
 *   sample                the running fixture's CPU seconds, RSS, PSS, fds, threads, alive
 *   limits                the limits read back from its cgroup
 *   stop                  stop the fixture (every process, cgroup removed)
 *   quit                  close this session
 * Anything else (unknown verbs, extra words, a runtime not in the contract, a bad port, a
 * port below 1024 unless cfg->allow_privileged_ports, a line over KB_AGENT_LINE_MAX) is
 * refused with an "err" line. A start whose port is held by another process before the
 * fixture starts, or answers from another process once it accepts, or while another
 * session's fixture runs, is refused with "err " KB_AGENT_HARNESS "...": the agent's host,
 * not the fixture, is at fault. One fixture at a time, owned by the session (connection)
 * that started it: sample, limits and stop from any other session are refused, and it is
 * stopped when that session ends, however it ends, and when the agent exits.
 * Up to KB_AGENT_MAX_CLIENTS connections are served side by side (commands one at a time,
 * in arrival order; an answer a client does not read waits in its own buffer, and its
 * next line is read only once it is sent), so one client that connects and says nothing,
 * or sends and never reads, blocks no other: a connection that has not authenticated
 * within KB_AGENT_AUTH_TIMEOUT_MS, a session idle for cfg->idle_timeout_ms, or one
 * KB_AGENT_LINE_TIMEOUT_MS into a line it has not finished, is closed. When every slot is
 * taken a newcomer makes room by closing the connection that has waited longest without
 * authenticating; an authenticated session is never closed for a newcomer, which is then
 * refused instead. The agent binds 127.0.0.1 unless told otherwise, and its fixtures bind
 * cfg->serve_bind, 127.0.0.1 unless told otherwise (never the agent's own address by
 * default). docs/security.md is the threat model. Nothing here prints except to cfg->log. */
#ifndef KB_AGENT_H
#define KB_AGENT_H

#include <signal.h>
#include <stddef.h>
#include <stdio.h>

#include "fixtures/contract.h"

#define KB_AGENT_PROTOCOL 2
#define KB_AGENT_GREETING "hello kneebench-agent"
#define KB_AGENT_DEFAULT_PORT 8095
#define KB_AGENT_LINE_MAX 256
#define KB_AGENT_MAX_CLIENTS 8
#define KB_AGENT_IDLE_TIMEOUT_MS 300000   /* a curve's sandbox calls at least once a second */
#define KB_AGENT_LINE_TIMEOUT_MS 10000
#define KB_AGENT_AUTH_TIMEOUT_MS 5000
#define KB_AGENT_HARNESS "harness: "

enum kb_agent_verb {
    KB_AGENT_IDENTITY, KB_AGENT_START, KB_AGENT_SAMPLE, KB_AGENT_LIMITS, KB_AGENT_STOP,
    KB_AGENT_QUIT
};

struct kb_agent_cmd {
    enum kb_agent_verb verb;
    char runtime[64];           /* start only */
    int port;                   /* start only */
};

/* Parse one command line (no newline) against the contract. 0, or -1 with the refusal in
 * err. Pure: no I/O. */
int kb_agent_parse(const struct kb_contract *c, const char *line, struct kb_agent_cmd *cmd,
                   char *err, size_t errlen);

struct kb_agent_cfg {
    const char *bind;           /* the agent's listening address; NULL = "127.0.0.1" */
    int port;                   /* 0 = an ephemeral port (reported on log) */
    const char *serve_bind;     /* what fixtures bind; NULL = "127.0.0.1" */
    const char *token_path;     /* the token: a file of this user that only it may read;
                                 * NULL = a fresh one written to the run directory's
                                 * "token" (named on log) */
    const char *backend;        /* sandbox backend name; NULL = "native" */
    int no_limits;              /* 1: fixtures run unconstrained (hosts without cgroups) */
    int allow_privileged_ports; /* 1: fixtures may be started on ports below 1024 */
    int idle_timeout_ms;        /* 0 = KB_AGENT_IDLE_TIMEOUT_MS */
    const char *rundir;         /* fixtures' run directories go under it: made 0711 if
                                 * absent, else it must be this user's own real directory
                                 * that no one else may write; NULL = a fresh one made with
                                 * mkdtemp under $TMPDIR or /tmp (named on log) */
    const char *build_dir;      /* {build}; NULL = this program's directory */
    const char *contract_path;  /* NULL = kb_root_contract() */
    volatile sig_atomic_t *stop;  /* serve until *stop becomes non-zero */
    FILE *log;                  /* "listening on ADDR:PORT" and one line per command, or NULL */
};

/* Serve until *cfg->stop. 0 on a clean stop, -1 with err when it could not listen or load
 * the contract. Any fixture still running is stopped before it returns. */
int kb_agent_serve(const struct kb_agent_cfg *cfg, char *err, size_t errlen);

#endif
