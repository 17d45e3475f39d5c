/* agent_client.h -- the client side of the serve-agent protocol (runner/agent.h): what the
 * curve uses with --agent HOST:PORT to start, sample and stop a fixture on another host.
 * A connection is owned by the caller: kb_agent_connect makes it, kb_agent_close frees it. */
#ifndef KB_AGENT_CLIENT_H
#define KB_AGENT_CLIENT_H

#include <stddef.h>

struct kb_agent_conn;

/* Connects to "HOST:PORT" (IPv4 address or resolvable name). NULL with err on failure. */
struct kb_agent_conn *kb_agent_connect(const char *hostport, int timeout_ms, char *err,
                                       size_t errlen);

/* Sends one command line and reads the answer. 0 with the JSON after "ok " in reply; -1 with
 * the agent's refusal ("err ..." text) or the I/O failure in err. timeout_ms bounds the wait
 * for the answer (a start waits for the fixture to accept). */
int kb_agent_call(struct kb_agent_conn *c, const char *line, int timeout_ms, char *reply,
                  size_t replylen, char *err, size_t errlen);

void kb_agent_close(struct kb_agent_conn *c);

/* ---- the "remote" sandbox backend (runner/sandbox_remote.c) ----
 * The fixture runs on the agent's host, under the limits the agent applies there; the ops
 * table of sandbox.h drives it through the protocol: start -> "start NAME PORT" (spec's
 * argv, env and rundir stay on the agent's side: it expands the contract's own template),
 * alive/exit_reason -> "sample", limits_applied -> "limits", stop -> "stop". pids() returns
 * none (the processes are not on this host): sample them with kb_sandbox_remote_sample. */
struct kb_sandbox;
struct kb_proc_sample;
extern const struct kb_sandbox_ops kb_sandbox_remote;

/* The agent every later start() talks to ("HOST:PORT"). The ops table has no context
 * argument, so this is the backend's one piece of process-wide configuration: set it once,
 * from main/cmd_*, before the first start(). 0, or -1 with err (malformed address). */
int kb_sandbox_remote_set_agent(const char *hostport, char *err, size_t errlen);

/* The agent's sample of the running fixture's processes. 0, or -1 with err. */
int kb_sandbox_remote_sample(struct kb_sandbox *sb, struct kb_proc_sample *out, char *err,
                             size_t errlen);

#endif
