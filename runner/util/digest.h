/* digest.h -- SHA-256 as lowercase hex, through libcrypto's EVP interface.
 *
 * Owns every SHA-256 the runner computes: of a file (a runner binary, the contract, a
 * fixture's sources), of a buffer, and of a sequence of pieces fed one after another (an
 * identity over an image ID and a command's arguments). kb_digest_str feeds a string with
 * its NUL, so that a list of strings hashes unambiguously ("ab","c" differs from "a","bc").
 * A failed allocation or EVP call is carried to kb_digest_hex, which then fails: callers
 * check once, at the end. Never prints. */
#ifndef KB_DIGEST_H
#define KB_DIGEST_H

#include <stddef.h>

#define KB_SHA256_HEX 65   /* 64 hex digits + NUL */

struct kb_digest;

/* A running SHA-256; NULL when out of memory (every call below accepts NULL). */
struct kb_digest *kb_digest_new(void);
void kb_digest_add(struct kb_digest *d, const void *buf, size_t len);
/* s and its terminating NUL; NULL counts as "". */
void kb_digest_str(struct kb_digest *d, const char *s);
/* Finish into hex and free d. 0, or -1 (hex "") when any step failed. */
int kb_digest_hex(struct kb_digest *d, char hex[KB_SHA256_HEX]);

/* SHA-256 of len bytes at buf. 0 or -1. */
int kb_sha256_buf(const void *buf, size_t len, char hex[KB_SHA256_HEX]);

/* SHA-256 of one file's bytes. 0 or -1 with err naming the file. */
int kb_sha256_file(const char *path, char hex[KB_SHA256_HEX], char *err, size_t errlen);

#endif
