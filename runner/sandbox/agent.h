/* agent.h -- `kneebench serve-agent`: runs fixtures on a remote server host for a client
 * on another host, through a tiny line protocol over TCP.
 *
 * Protocol (version 1): the client sends one command per line; the agent answers one line,
 * "ok <JSON object>" or "err <reason>". It accepts ONLY the suite's own commands:
 *   identity              host, kernel, CPU model, protocol, runtimes it may start
 *   start RUNTIME PORT    start a contract runtime (or "control") on PORT under the same
 *                         sandbox limits as the native backend; answers once it accepts
 *   sample                the running fixture's CPU seconds, RSS, PSS, fds, threads, alive
 *   limits                the limits read back from its cgroup
 *   stop                  stop the fixture (every process, cgroup removed)
 *   quit                  close this connection (the fixture keeps running)
 * Anything else (unknown verbs, extra words, a runtime not in the contract, a bad port, a
 * port below 1024 unless cfg->allow_privileged_ports, a line over KB_AGENT_LINE_MAX) is
 * refused with an "err" line. A start whose port is held by another process before the
 * fixture starts, or answers from another process once it accepts, is refused with "err "
 * KB_AGENT_HARNESS "...": the agent's host, not the fixture, is at fault. One fixture at a
 * time; it outlives a client's connection and is stopped when the agent exits.
 * Up to KB_AGENT_MAX_CLIENTS connections are served side by side (commands one at a time,
 * in arrival order), so one client that connects and says nothing blocks no other: a
 * connection idle for cfg->idle_timeout_ms, or KB_AGENT_LINE_TIMEOUT_MS into a line it has
 * not finished, is closed, and when all are taken the one idle longest makes room.
 * The agent binds 127.0.0.1 unless told otherwise. Nothing here prints except to cfg->log. */
#ifndef KB_AGENT_H
#define KB_AGENT_H

#include <signal.h>
#include <stddef.h>
#include <stdio.h>

#include "fixtures/contract.h"

#define KB_AGENT_PROTOCOL 1
#define KB_AGENT_DEFAULT_PORT 8095
#define KB_AGENT_LINE_MAX 256
#define KB_AGENT_MAX_CLIENTS 8
#define KB_AGENT_IDLE_TIMEOUT_MS 300000   /* a curve's sandbox calls at least once a second */
#define KB_AGENT_LINE_TIMEOUT_MS 10000
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
    const char *serve_bind;     /* what fixtures bind; NULL = bind */
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
