/* hlogread.c -- see hlogread.h. The inverse of hlog.c's encoder, step by step, each step
 * checked: a log is evidence, and a figure read from a damaged one must not look measured. */
#define _POSIX_C_SOURCE 200809L
#include "runner/load/hlogread.h"

#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <zlib.h>

#define V2_ENCODING_COOKIE    (0x1c849303u | 0x10u)
#define V2_COMPRESSION_COOKIE (0x1c849304u | 0x10u)
#define ENCODING_HEADER_LEN 40
#define COMPRESSION_HEADER_LEN 8

static uint32_t be32(const uint8_t *p)
{
    return (uint32_t)p[0] << 24 | (uint32_t)p[1] << 16 | (uint32_t)p[2] << 8 | p[3];
}

static uint64_t be64(const uint8_t *p)
{
    return (uint64_t)be32(p) << 32 | be32(p + 4);
}

static int b64_value(char c)
{
    static const char abc[] =
        "ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789+/";
    const char *at = c ? strchr(abc, c) : NULL;
    return at ? (int)(at - abc) : -1;
}

/* base64 (padded) into a malloc'd buffer; NULL when malformed or out of memory. */
static uint8_t *unbase64(const char *in, size_t *len)
{
    size_t n = strlen(in), o = 0;
    uint8_t *out;
    if (n == 0 || n % 4 || !(out = malloc(n / 4 * 3)))
        return NULL;
    for (size_t i = 0; i < n; i += 4) {
        int v[4];
        for (int k = 0; k < 4; k++)
            v[k] = in[i + k] == '=' && i + 4 == n && k >= 2 ? 0 : b64_value(in[i + k]);
        if (v[0] < 0 || v[1] < 0 || v[2] < 0 || v[3] < 0 || (in[i + 2] == '=' && in[i + 3] != '=')) {
            free(out);
            return NULL;
        }
        out[o++] = (uint8_t)(v[0] << 2 | v[1] >> 4);
        if (in[i + 2] != '=')
            out[o++] = (uint8_t)(v[1] << 4 | v[2] >> 2);
        if (in[i + 3] != '=')
            out[o++] = (uint8_t)(v[2] << 6 | v[3]);
    }
    *len = o;
    return out;
}

/* The zlib block after the compression header, inflated into a malloc'd buffer. */
static uint8_t *inflate_all(const uint8_t *in, size_t inlen, size_t *outlen, char *err,
                            size_t errlen)
{
    uLongf cap = 1 << 16, got;
    for (;;) {
        uint8_t *out = malloc(cap);
        int rc;
        if (!out) {
            snprintf(err, errlen, "hlog: out of memory");
            return NULL;
        }
        got = cap;
        rc = uncompress(out, &got, in, (uLong)inlen);
        if (rc == Z_OK) {
            *outlen = got;
            return out;
        }
        free(out);
        if (rc != Z_BUF_ERROR || cap >= (1u << 28)) {
            snprintf(err, errlen, "hlog: the payload does not inflate (zlib %d)", rc);
            return NULL;
        }
        cap *= 4;
    }
}

/* One zigzag LEB128 number at *p (its 9th byte carries 8 bits); -1 past end. */
static int leb128(const uint8_t **p, const uint8_t *end, int64_t *value)
{
    uint64_t v = 0;
    for (int k = 0; k < 9; k++) {
        uint8_t b;
        if (*p >= end)
            return -1;
        b = *(*p)++;
        if (k == 8) {
            v |= (uint64_t)b << 56;
            break;
        }
        v |= (uint64_t)(b & 0x7f) << (7 * k);
        if (!(b & 0x80))
            break;
    }
    *value = (int64_t)(v >> 1) ^ -(int64_t)(v & 1);
    return 0;
}

/* The encoding header checked against h's layout, then its counts added into h. */
static int add_counts(const uint8_t *raw, size_t len, struct kb_hist *h, char *err,
                      size_t errlen)
{
    const uint8_t *p = raw + ENCODING_HEADER_LEN, *end;
    int64_t *counts, v;
    int32_t i = 0;
    int rc = -1;
    if (len < ENCODING_HEADER_LEN || be32(raw) != V2_ENCODING_COOKIE ||
        be32(raw + 4) > len - ENCODING_HEADER_LEN || be32(raw + 8) != 0) {
        snprintf(err, errlen, "hlog: not a V2 histogram encoding");
        return -1;
    }
    if ((int64_t)be64(raw + 16) != h->lowest_discernible_value ||
        (int64_t)be64(raw + 24) != h->highest_trackable_value ||
        (int32_t)be32(raw + 12) != h->significant_figures) {
        snprintf(err, errlen, "hlog: histogram layout differs from the reader's");
        return -1;
    }
    end = p + be32(raw + 4);
    if (!(counts = calloc((size_t)h->counts_len, sizeof(*counts)))) {
        snprintf(err, errlen, "hlog: out of memory");
        return -1;
    }
    while (p < end) {
        const uint8_t *at = p;
        int64_t room = (int64_t)h->counts_len - i;
        if (leb128(&p, end, &v) < 0 || (v < 0 && v < -room) || (v >= 0 && room < 1)) {
            p = at < end ? at : p;    /* stopped short: reported below */
            break;
        }
        if (v < 0)
            i += (int32_t)-v;         /* a run of zeros */
        else
            counts[i++] = v;
    }
    if (p < end)
        snprintf(err, errlen, "hlog: counts run past the histogram's layout");
    else
        rc = kb_hist_add_counts(h, counts, i);
    free(counts);
    if (rc < 0 && p >= end)
        snprintf(err, errlen, "hlog: a negative count");
    return rc;
}

int kb_hlog_decode_add(const char *payload, struct kb_hist *h, char *err, size_t errlen)
{
    size_t blen = 0, rlen = 0;
    uint8_t *bin = unbase64(payload, &blen), *raw = NULL;
    int rc = -1;
    if (!bin)
        snprintf(err, errlen, "hlog: the payload is not base64");
    else if (blen < COMPRESSION_HEADER_LEN || be32(bin) != V2_COMPRESSION_COOKIE ||
             be32(bin + 4) > blen - COMPRESSION_HEADER_LEN)
        snprintf(err, errlen, "hlog: not a V2 compressed histogram");
    else if ((raw = inflate_all(bin + COMPRESSION_HEADER_LEN, be32(bin + 4), &rlen, err, errlen)))
        rc = add_counts(raw, rlen, h, err, errlen);
    free(raw);
    free(bin);
    return rc;
}

/* "[Tag=x,]start,length,max,payload": the fields, in place; -1 when the line is not one. */
static int split_line(char *line, double *start, double *length, char **payload)
{
    char *f[4], *save = NULL, *end;
    if (!strncmp(line, "Tag=", 4) && !(line = strchr(line, ',')))
        return -1;
    line += *line == ',';
    for (int k = 0; k < 4; k++)
        if (!(f[k] = strtok_r(k ? NULL : line, ",\n", &save)))
            return -1;
    *start = strtod(f[0], &end);
    if (*end)
        return -1;
    /* a last sliver of the drain can round to a length of 0.000: still an interval */
    *length = strtod(f[1], &end);
    if (*end || *length < 0)
        return -1;
    *payload = f[3];
    return 0;
}

int kb_hlog_read(const char *path, kb_hlog_interval_cb cb, void *arg, char *err, size_t errlen)
{
    FILE *f = fopen(path, "r");
    char *line = NULL, *payload;
    size_t cap = 0;
    double start, length;
    long lineno = 0;
    int rc = 0;
    if (!f) {
        snprintf(err, errlen, "%s: cannot open", path);
        return -1;
    }
    while (rc == 0 && getline(&line, &cap, f) >= 0) {
        lineno++;
        if (line[0] == '#' || line[0] == '"' || line[0] == '\n')
            continue;
        if (split_line(line, &start, &length, &payload) < 0) {
            snprintf(err, errlen, "%s:%ld: not an interval line", path, lineno);
            rc = -1;
        } else {
            rc = cb(arg, start, length, payload, err, errlen);
        }
    }
    free(line);
    fclose(f);
    return rc;
}
