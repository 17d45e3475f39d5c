/* digest.c -- SHA-256 to hex over libcrypto EVP (digest.h). */
#define _GNU_SOURCE
#include "runner/util/digest.h"

#include <errno.h>
#include <fcntl.h>
#include <openssl/evp.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

struct kb_digest {
    EVP_MD_CTX *ctx;
    int failed;
};

struct kb_digest *kb_digest_new(void)
{
    struct kb_digest *d = calloc(1, sizeof(*d));
    if (!d)
        return NULL;
    d->ctx = EVP_MD_CTX_new();
    d->failed = !d->ctx || !EVP_DigestInit_ex(d->ctx, EVP_sha256(), NULL);
    return d;
}

void kb_digest_add(struct kb_digest *d, const void *buf, size_t len)
{
    if (d && !d->failed && !EVP_DigestUpdate(d->ctx, buf, len))
        d->failed = 1;
}

void kb_digest_str(struct kb_digest *d, const char *s)
{
    if (!s)
        s = "";
    kb_digest_add(d, s, strlen(s) + 1);
}

int kb_digest_hex(struct kb_digest *d, char hex[KB_SHA256_HEX])
{
    unsigned char md[EVP_MAX_MD_SIZE];
    unsigned int mdlen = 0;
    int rc = -1;
    hex[0] = '\0';
    if (d && !d->failed && EVP_DigestFinal_ex(d->ctx, md, &mdlen) && mdlen * 2 < KB_SHA256_HEX) {
        for (unsigned i = 0; i < mdlen; i++)
            snprintf(hex + 2 * i, 3, "%02x", md[i]);
        rc = 0;
    }
    if (d)
        EVP_MD_CTX_free(d->ctx);
    free(d);
    return rc;
}

int kb_sha256_buf(const void *buf, size_t len, char hex[KB_SHA256_HEX])
{
    struct kb_digest *d = kb_digest_new();
    kb_digest_add(d, buf, len);
    return kb_digest_hex(d, hex);
}

int kb_sha256_file(const char *path, char hex[KB_SHA256_HEX], char *err, size_t errlen)
{
    unsigned char buf[65536];
    struct kb_digest *d;
    int fd = open(path, O_RDONLY | O_CLOEXEC);
    ssize_t n;
    hex[0] = '\0';
    if (fd < 0) {
        snprintf(err, errlen, "hashing %s: %s", path, strerror(errno));
        return -1;
    }
    d = kb_digest_new();
    while ((n = read(fd, buf, sizeof(buf))) > 0 || (n < 0 && errno == EINTR))
        if (n > 0)
            kb_digest_add(d, buf, (size_t)n);
    if (n < 0) {
        snprintf(err, errlen, "hashing %s: %s", path, strerror(errno));
        close(fd);
        kb_digest_hex(d, hex);
        hex[0] = '\0';
        return -1;
    }
    close(fd);
    if (kb_digest_hex(d, hex) < 0) {
        snprintf(err, errlen, "hashing %s: libcrypto's SHA-256 failed", path);
        return -1;
    }
    return 0;
}
