/* agent_auth.c -- the agent's token and its challenge (agent_auth.h), over libcrypto's HMAC
 * and the kernel's getrandom. */
#define _GNU_SOURCE
#include "runner/sandbox/agent_auth.h"

#include <errno.h>
#include <fcntl.h>
#include <openssl/crypto.h>
#include <openssl/evp.h>
#include <openssl/hmac.h>
#include <stdio.h>
#include <string.h>
#include <sys/random.h>
#include <sys/stat.h>
#include <unistd.h>

static void to_hex(const unsigned char *b, size_t n, char *hex)
{
    static const char digits[] = "0123456789abcdef";
    for (size_t i = 0; i < n; i++) {
        hex[2 * i] = digits[b[i] >> 4];
        hex[2 * i + 1] = digits[b[i] & 15];
    }
    hex[2 * n] = '\0';
}

static int random_bytes(unsigned char *b, size_t n)
{
    size_t got = 0;
    while (got < n) {
        ssize_t r = getrandom(b + got, n - got, 0);
        if (r < 0 && errno == EINTR)
            continue;
        if (r <= 0)
            return -1;
        got += (size_t)r;
    }
    return 0;
}

/* Readable only by its owner, this user: the secret is as good as who can read it. */
static int private_file(int fd, const char *path, char *err, size_t errlen)
{
    struct stat st;
    if (fstat(fd, &st) < 0 || !S_ISREG(st.st_mode)) {
        snprintf(err, errlen, "token file %.300s is not a plain file", path);
        return -1;
    }
    if (st.st_uid != geteuid() || (st.st_mode & 077)) {
        snprintf(err, errlen, "token file %.300s must be uid %ld's and readable by no one else "
                 "(it is uid %ld's, mode %04o: chmod 600 it)", path, (long)geteuid(),
                 (long)st.st_uid, (unsigned)(st.st_mode & 07777));
        return -1;
    }
    return 0;
}

int kb_agent_token_load(const char *path, char *tok, size_t toklen, char *err, size_t errlen)
{
    int fd = open(path, O_RDONLY | O_NOFOLLOW | O_NONBLOCK | O_CLOEXEC);
    ssize_t n;
    if (fd < 0) {
        snprintf(err, errlen, "token file %.300s: %s", path, strerror(errno));
        return -1;
    }
    if (private_file(fd, path, err, errlen) < 0) {
        close(fd);
        return -1;
    }
    n = read(fd, tok, toklen - 1);
    close(fd);
    if (n < 0)
        n = 0;
    tok[n] = '\0';
    while (n > 0 && (tok[n - 1] == '\n' || tok[n - 1] == '\r'))
        tok[--n] = '\0';
    if ((size_t)n < KB_AGENT_TOKEN_MIN || (size_t)n >= toklen - 1 || memchr(tok, '\0', (size_t)n)) {
        snprintf(err, errlen, "token file %.300s must hold one line of %d to %zu bytes of "
                 "secret", path, KB_AGENT_TOKEN_MIN, toklen - 2);
        return -1;
    }
    return 0;
}

int kb_agent_token_make(const char *path, char *tok, size_t toklen, char *err, size_t errlen)
{
    unsigned char b[32];
    char line[2 * sizeof(b) + 2];
    int fd;
    if (toklen < 2 * sizeof(b) + 1 || random_bytes(b, sizeof(b)) < 0) {
        snprintf(err, errlen, "no randomness for a token");
        return -1;
    }
    to_hex(b, sizeof(b), tok);
    snprintf(line, sizeof(line), "%s\n", tok);
    unlink(path);        /* O_EXCL: a fresh file, never one planted with another mode */
    fd = open(path, O_WRONLY | O_CREAT | O_EXCL | O_NOFOLLOW | O_CLOEXEC, 0600);
    if (fd < 0 || write(fd, line, strlen(line)) != (ssize_t)strlen(line) || close(fd) < 0) {
        snprintf(err, errlen, "token file %.300s: %s", path, strerror(errno));
        if (fd >= 0)
            close(fd);
        return -1;
    }
    return 0;
}

int kb_agent_nonce(char hex[KB_AGENT_NONCE_HEX])
{
    unsigned char b[(KB_AGENT_NONCE_HEX - 1) / 2];
    if (random_bytes(b, sizeof(b)) < 0)
        return -1;
    to_hex(b, sizeof(b), hex);
    return 0;
}

int kb_agent_proof(const char *tok, const char *msg, char hex[KB_AGENT_PROOF_HEX])
{
    unsigned char mac[EVP_MAX_MD_SIZE];
    unsigned int len = 0;
    if (!HMAC(EVP_sha256(), tok, (int)strlen(tok), (const unsigned char *)msg, strlen(msg),
              mac, &len) || len != (KB_AGENT_PROOF_HEX - 1) / 2) {
        hex[0] = '\0';
        return -1;
    }
    to_hex(mac, len, hex);
    return 0;
}

int kb_agent_proof_ok(const char *tok, const char *msg, const char *proof)
{
    char want[KB_AGENT_PROOF_HEX];
    if (kb_agent_proof(tok, msg, want) < 0 || strlen(proof) != KB_AGENT_PROOF_HEX - 1)
        return 0;
    return CRYPTO_memcmp(want, proof, KB_AGENT_PROOF_HEX - 1) == 0;
}
