/* agent_client.h -- the client side of the serve-agent protocol (runner/sandbox/agent.h): what the
 * curve uses with --agent HOST:PORT and --agent-token FILE to start, sample and stop a fixture
 * on another host.
 * A connection is owned by the caller: kb_agent_connect makes it, kb_agent_close frees it. */
#ifndef KB_AGENT_CLIENT_H
#define KB_AGENT_CLIENT_H

#include <stddef.h>

struct kb_agent_conn;

/* Connects to "HOST:PORT" (IPv4 address or resolvable name) and proves token (the secret
 * itself, as kb_agent_token_load read it) for the agent's greeting: a session of its own.
 * NULL with err on failure (no agent, another protocol, a token the agent refused). */
struct kb_agent_conn *kb_agent_connect(const char *hostport, const char *token, int timeout_ms,
                                       char *err, size_t errlen);

/* Sends one command line and reads the answer. 0 with the JSON after "ok " in reply; -1 with
 * the agent's refusal ("err ..." text) or the I/O failure in err. timeout_ms bounds the wait
 * for the answer (a start waits for the fixture to accept). */
int kb_agent_call(struct kb_agent_conn *c, const char *line, int timeout_ms, char *reply,
                  size_t replylen, char *err, size_t errlen);

void kb_agent_close(struct kb_agent_conn *c);

#endif
