/* agent_auth.h -- how a serve-agent and its client prove they share a secret.
 *
 * Owns the agent's token (a file readable only by its own user: loaded, or made fresh) and
 * the challenge both sides compute from it. On each connection the agent sends a fresh
 * random nonce; the client answers with HMAC-SHA256(token, greeting), never the token
 * itself, so a listener on the wire learns nothing it can replay, and the agent compares in
 * constant time. The token never leaves the two hosts' files. docs/security.md says what
 * this protects and what it does not. Nothing here prints; errors go to err. */
#ifndef KB_AGENT_AUTH_H
#define KB_AGENT_AUTH_H

#include <stddef.h>

#define KB_AGENT_TOKEN_MIN 16      /* bytes of secret, at least */
#define KB_AGENT_TOKEN_MAX 512
#define KB_AGENT_NONCE_HEX 33      /* 16 random bytes as hex + NUL */
#define KB_AGENT_PROOF_HEX 65      /* HMAC-SHA256 as hex + NUL */

/* The token in path: a regular file (no link followed) of this user that no one else may
 * read or write, holding at least KB_AGENT_TOKEN_MIN bytes (a trailing newline is not
 * part of it). 0 with tok (NUL-terminated), or -1 with err. */
int kb_agent_token_load(const char *path, char *tok, size_t toklen, char *err, size_t errlen);

/* A fresh random token written to path (created, mode 0600, never through a link). 0 with
 * tok, or -1 with err. */
int kb_agent_token_make(const char *path, char *tok, size_t toklen, char *err, size_t errlen);

/* A fresh random nonce as hex. 0, or -1 when the kernel gave no randomness. */
int kb_agent_nonce(char hex[KB_AGENT_NONCE_HEX]);

/* HMAC-SHA256(tok, msg) as hex. 0, or -1. */
int kb_agent_proof(const char *tok, const char *msg, char hex[KB_AGENT_PROOF_HEX]);

/* 1 when proof is HMAC-SHA256(tok, msg), compared in constant time; 0 otherwise. */
int kb_agent_proof_ok(const char *tok, const char *msg, const char *proof);

#endif
