/* hlog.c -- HdrHistogram interval logs and per-interval CSV (see hlog.h).
 *
 * The encoding follows HdrHistogram_c's hdr_encode_compressed byte for byte: a 40-byte
 * big-endian header (cookie, payload length, normalizing offset 0, significant figures,
 * lowest, highest, conversion ratio 1.0 as IEEE bits), then the counts up to the index of
 * the largest value, each as zigzag LEB128, a run of n zeros as the single number -n. That
 * block goes through zlib's compress() and gets an 8-byte header (cookie, length). Each
 * interval is encoded when added, so the caller's histogram can be reset at once. */
#define _POSIX_C_SOURCE 200809L
#include "runner/load/hlog.h"
#include "runner/util/paths.h"
#include "runner/util/atomicfile.h"

#include <errno.h>
#include <inttypes.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>
#include <zlib.h>

#define V2_ENCODING_COOKIE    (0x1c849303u | 0x10u)
#define V2_COMPRESSION_COOKIE (0x1c849304u | 0x10u)
#define ENCODING_HEADER_LEN 40
#define COMPRESSION_HEADER_LEN 8
#define MAX_BYTES_LEB128 9

struct interval {
    struct kb_hlog_row row;
    int64_t max_ns;        /* the log's Interval_Max, before it is written in ms */
    char *payload;         /* base64 */
};

struct kb_hlog_series {
    char *tag;
    double base_epoch_s;
    struct interval *v;
    size_t n, cap;
};

static void put_be32(uint8_t *p, uint32_t v)
{
    for (int i = 3; i >= 0; i--, v >>= 8)
        p[i] = (uint8_t)v;
}

static void put_be64(uint8_t *p, uint64_t v)
{
    for (int i = 7; i >= 0; i--, v >>= 8)
        p[i] = (uint8_t)v;
}

/* zigzag, then LEB128 with a 9th byte that carries 8 bits (hdr_encoding.c). */
static size_t zigzag_leb128(uint8_t *out, int64_t signed_value)
{
    uint64_t v = ((uint64_t)signed_value << 1) ^ (uint64_t)(signed_value >> 63);
    size_t n = 0;

    while (n < 8 && (v >> 7) != 0) {
        out[n++] = (uint8_t)((v & 0x7f) | 0x80);
        v >>= 7;
    }
    out[n++] = (uint8_t)v;
    return n;
}

/* hdr_encode_compressed counts up to counts_index_for(max) inclusive; for a histogram
 * whose max was recorded that is the last non-zero count (at least one entry). */
static int32_t counts_limit(const struct kb_hist *h)
{
    int32_t last = h->counts_len - 1;

    while (last > 0 && h->counts[last] == 0)
        last--;
    return last + 1;
}

static size_t encode_counts(const struct kb_hist *h, int32_t limit, uint8_t *out)
{
    size_t len = 0;

    for (int32_t i = 0; i < limit;) {
        int64_t value = h->counts[i++];
        if (value == 0) {
            int64_t zeros = 1;
            while (i < limit && h->counts[i] == 0) {
                zeros++;
                i++;
            }
            value = -zeros;
        }
        len += zigzag_leb128(out + len, value);
    }
    return len;
}

static void encoding_header(const struct kb_hist *h, uint8_t *p, uint32_t payload_len)
{
    double ratio = 1.0;
    uint64_t ratio_bits;

    memcpy(&ratio_bits, &ratio, sizeof(ratio_bits));
    put_be32(p, V2_ENCODING_COOKIE);
    put_be32(p + 4, payload_len);
    put_be32(p + 8, 0);    /* normalizing_index_offset */
    put_be32(p + 12, (uint32_t)h->significant_figures);
    put_be64(p + 16, (uint64_t)h->lowest_discernible_value);
    put_be64(p + 24, (uint64_t)h->highest_trackable_value);
    put_be64(p + 32, ratio_bits);
}

static char *base64(const uint8_t *in, size_t len)
{
    static const char abc[] =
        "ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789+/";
    char *out = malloc((len + 2) / 3 * 4 + 1), *o = out;

    if (!out)
        return NULL;
    for (size_t i = 0; i < len; i += 3) {
        uint32_t b = (uint32_t)in[i] << 16;
        if (i + 1 < len)
            b |= (uint32_t)in[i + 1] << 8;
        if (i + 2 < len)
            b |= in[i + 2];
        *o++ = abc[(b >> 18) & 63];
        *o++ = abc[(b >> 12) & 63];
        *o++ = i + 1 < len ? abc[(b >> 6) & 63] : '=';
        *o++ = i + 2 < len ? abc[b & 63] : '=';
    }
    *o = '\0';
    return out;
}

char *kb_hlog_encode(const struct kb_hist *h, char *err, size_t errlen)
{
    int32_t limit = counts_limit(h);
    size_t raw_cap = ENCODING_HEADER_LEN + (size_t)MAX_BYTES_LEB128 * (size_t)limit;
    uint8_t *raw = malloc(raw_cap), *packed = NULL;
    uLongf packed_len = 0;
    size_t raw_len;
    char *text = NULL;

    if (!raw) {
        snprintf(err, errlen, "hlog: out of memory");
        goto out;
    }
    raw_len = ENCODING_HEADER_LEN + encode_counts(h, limit, raw + ENCODING_HEADER_LEN);
    encoding_header(h, raw, (uint32_t)(raw_len - ENCODING_HEADER_LEN));
    packed_len = compressBound((uLong)raw_len);
    if (!(packed = malloc(COMPRESSION_HEADER_LEN + packed_len))) {
        snprintf(err, errlen, "hlog: out of memory");
        goto out;
    }
    if (compress(packed + COMPRESSION_HEADER_LEN, &packed_len, raw, (uLong)raw_len) != Z_OK) {
        snprintf(err, errlen, "hlog: zlib compress failed");
        goto out;
    }
    put_be32(packed, V2_COMPRESSION_COOKIE);
    put_be32(packed + 4, (uint32_t)packed_len);
    if (!(text = base64(packed, COMPRESSION_HEADER_LEN + packed_len)))
        snprintf(err, errlen, "hlog: out of memory");
out:
    free(raw);
    free(packed);
    return text;
}

struct kb_hlog_series *kb_hlog_series_new(const char *tag, double base_epoch_s)
{
    struct kb_hlog_series *s = calloc(1, sizeof(*s));

    if (!s)
        return NULL;
    s->base_epoch_s = base_epoch_s;
    if (tag && *tag && !(s->tag = strdup(tag))) {
        free(s);
        return NULL;
    }
    return s;
}

void kb_hlog_series_free(struct kb_hlog_series *s)
{
    if (!s)
        return;
    for (size_t i = 0; i < s->n; i++)
        free(s->v[i].payload);
    free(s->v);
    free(s->tag);
    free(s);
}

/* h holds nanoseconds; the row, as the CSV, whole microseconds. Whether a figure is only a
 * lower bound is judged in ns, before the rounding could make a figure and a bound equal. */
static void fill_row(struct kb_hlog_row *r, double start_s, double length_s,
                     const struct kb_hist *h, int64_t errors, int64_t bounded, int64_t bound_ns)
{
    int64_t p50 = kb_hist_value_at_percentile(h, 50.0), p99 = kb_hist_value_at_percentile(h, 99.0);
    int64_t max = kb_hist_max(h), from = bounded ? bound_ns : INT64_MAX;
    r->start_s = start_s;
    r->length_s = length_s;
    r->completed = h->total_count - bounded;
    r->errors = errors;
    r->bounded = bounded;
    r->bound_from_us = bounded ? bound_ns / 1000 : INT64_MAX;
    r->achieved_rps = length_s > 0 ? (double)r->completed / length_s : 0.0;
    r->p50_us = p50 / 1000;
    r->p99_us = p99 / 1000;
    r->max_us = max / 1000;
    r->p50_is_bound = p50 >= from;
    r->p99_is_bound = p99 >= from;
    r->max_is_bound = max >= from;
}

int kb_hlog_series_add(struct kb_hlog_series *s, double start_s, double length_s,
                       const struct kb_hist *h, int64_t errors, char *err, size_t errlen)
{
    return kb_hlog_series_add_bounded(s, start_s, length_s, h, errors, 0, INT64_MAX, err, errlen);
}

int kb_hlog_series_add_bounded(struct kb_hlog_series *s, double start_s, double length_s,
                               const struct kb_hist *h, int64_t errors, int64_t bounded,
                               int64_t bound_from_ns, char *err, size_t errlen)
{
    char *payload;

    if (s->n == s->cap) {
        size_t cap = s->cap ? s->cap * 2 : 64;
        struct interval *v = realloc(s->v, cap * sizeof(*v));
        if (!v) {
            snprintf(err, errlen, "hlog: out of memory");
            return -1;
        }
        s->v = v;
        s->cap = cap;
    }
    if (!(payload = kb_hlog_encode(h, err, errlen)))
        return -1;
    fill_row(&s->v[s->n].row, start_s, length_s, h, errors, bounded, bound_from_ns);
    s->v[s->n].max_ns = kb_hist_max(h);
    s->v[s->n++].payload = payload;
    return 0;
}

size_t kb_hlog_series_len(const struct kb_hlog_series *s)
{
    return s->n;
}

const struct kb_hlog_row *kb_hlog_series_row(const struct kb_hlog_series *s, size_t i)
{
    return i < s->n ? &s->v[i].row : NULL;
}

/* The header of hdr_log_write_header (format 1.2) plus the BaseTime line Java's
 * HistogramLogWriter adds, so readers take the start columns as relative to it, and the
 * unit line: readers skip "#" lines they do not know, and ours tell logs in ns from the older
 * ones in us. */
static int write_hlog_header(FILE *f, double base)
{
    char date[128] = "";
    struct tm tm;
    time_t secs = (time_t)base;

    if (gmtime_r(&secs, &tm))
        strftime(date, sizeof(date), "%a %b %d %H:%M:%S UTC %Y", &tm);
    return fprintf(f, "#[Logged with kneebench]\n"
                      KB_HLOG_UNIT_LINE "\n"
                      "#[Histogram log format version 1.2]\n"
                      "#[StartTime: %.3f (seconds since epoch), %s]\n"
                      "#[BaseTime: %.3f (seconds since epoch)]\n"
                      "\"StartTimestamp\",\"Interval_Length\",\"Interval_Max\","
                      "\"Interval_Compressed_Histogram\"\n", base, date, base) < 0 ? -1 : 0;
}

static int write_hlog(FILE *f, const struct kb_hlog_series *s)
{
    if (write_hlog_header(f, s->base_epoch_s) < 0)
        return -1;
    for (size_t i = 0; i < s->n; i++) {
        const struct interval *iv = &s->v[i];
        /* the max column in ms, as HistogramLogWriter's default max value unit ratio */
        if (fprintf(f, "%s%s%s%.3f,%.3f,%.3f,%s\n", s->tag ? "Tag=" : "",
                    s->tag ? s->tag : "", s->tag ? "," : "", iv->row.start_s, iv->row.length_s,
                    (double)iv->max_ns / 1e6, iv->payload) < 0)
            return -1;
    }
    return 0;
}

/* An empty interval has no latency: its figures are left blank, never written as 0. */
static int write_csv_row(FILE *f, const struct kb_hlog_row *r)
{
    if (fprintf(f, "%.3f,%.3f,%" PRId64 ",%.1f,", r->start_s, r->length_s, r->completed,
                r->achieved_rps) < 0)
        return -1;
    if (r->completed + r->bounded == 0)
        return fprintf(f, ",,,%" PRId64 ",0,0,0,0\n", r->errors) < 0 ? -1 : 0;
    return fprintf(f, "%" PRId64 ",%" PRId64 ",%" PRId64 ",%" PRId64 ",%" PRId64 ",%d,%d,%d\n",
                   r->p50_us, r->p99_us, r->max_us, r->errors, r->bounded,
                   r->p50_is_bound, r->p99_is_bound, r->max_is_bound) < 0 ? -1 : 0;
}

static int write_csv(FILE *f, const struct kb_hlog_series *s)
{
    if (fprintf(f, "start_s,length_s,completed,achieved_rps,p50_us,p99_us,max_us,errors,"
                   "bounded,p50_is_bound,p99_is_bound,max_is_bound\n") < 0)
        return -1;
    for (size_t i = 0; i < s->n; i++)
        if (write_csv_row(f, &s->v[i].row) < 0)
            return -1;
    return 0;
}

/* fill's file written whole through runner/util/atomicfile.h. */
static int write_atomic(const char *path, int (*fill)(FILE *, const struct kb_hlog_series *),
                        const struct kb_hlog_series *s, char *err, size_t errlen)
{
    struct kb_afile a;
    char why[KB_PATH_MAX + 512];
    if (kb_afile_open(&a, path, why, sizeof(why)) < 0) {
        snprintf(err, errlen, "hlog: %s", why);
        return -1;
    }
    if (fill(a.f, s) < 0) {
        int e = errno;
        kb_afile_abort(&a);
        snprintf(err, errlen, "hlog: writing %s: %s", path, strerror(e));
        return -1;
    }
    if (kb_afile_commit(&a, why, sizeof(why)) < 0) {
        snprintf(err, errlen, "hlog: %s", why);
        return -1;
    }
    return 0;
}

int kb_hlog_series_write(const struct kb_hlog_series *s, const char *hlog_path,
                         const char *csv_path, char *err, size_t errlen)
{
    if (hlog_path && write_atomic(hlog_path, write_hlog, s, err, errlen) < 0)
        return -1;
    if (csv_path && write_atomic(csv_path, write_csv, s, err, errlen) < 0)
        return -1;
    return 0;
}

/* ---- the collector -------------------------------------------------------------------- */

struct pending_interval {
    uint64_t index;
    int reports;
    int64_t errors, bounded, bound_from_ns;
    double length_s;           /* the longest a thread reported (the last one may be short) */
    struct kb_hist h;
};

struct kb_hlog_collector {
    pthread_mutex_t lock;
    struct kb_hlog_series *series;
    double interval_s;
    int nthreads, sigfigs, failed;
    int64_t highest;
    struct pending_interval *p;
    size_t np, cap;
    char err[256];
};

struct kb_hlog_collector *kb_hlog_collector_new(const char *tag, double base_epoch_s,
                                                double interval_s, int nthreads,
                                                int64_t highest_ns, int sigfigs)
{
    struct kb_hlog_collector *c;

    if (interval_s <= 0 || nthreads < 1 || !(c = calloc(1, sizeof(*c))))
        return NULL;
    if (!(c->series = kb_hlog_series_new(tag, base_epoch_s))) {
        free(c);
        return NULL;
    }
    pthread_mutex_init(&c->lock, NULL);
    c->interval_s = interval_s;
    c->nthreads = nthreads;
    c->highest = highest_ns;
    c->sigfigs = sigfigs;
    return c;
}

static struct pending_interval *pending_get(struct kb_hlog_collector *c, uint64_t index)
{
    struct pending_interval *p;

    for (size_t i = 0; i < c->np; i++)
        if (c->p[i].index == index)
            return &c->p[i];
    if (c->np == c->cap) {
        size_t cap = c->cap ? c->cap * 2 : 8;
        struct pending_interval *v = realloc(c->p, cap * sizeof(*v));
        if (!v)
            return NULL;
        c->p = v;
        c->cap = cap;
    }
    p = &c->p[c->np];
    memset(p, 0, sizeof(*p));
    p->bound_from_ns = INT64_MAX;
    if (kb_hist_init(&p->h, 1, c->highest, c->sigfigs) != 0)
        return NULL;
    p->index = index;
    c->np++;
    return p;
}

/* Encodes p into the series and drops it from the pending list (order kept). */
static void pending_emit(struct kb_hlog_collector *c, struct pending_interval *p)
{
    size_t at = (size_t)(p - c->p);

    if (!c->failed && kb_hlog_series_add_bounded(c->series, (double)p->index * c->interval_s,
                                                 p->length_s, &p->h, p->errors, p->bounded,
                                                 p->bound_from_ns, c->err, sizeof(c->err)) < 0)
        c->failed = 1;
    kb_hist_free(&p->h);
    memmove(&c->p[at], &c->p[at + 1], (c->np - at - 1) * sizeof(*c->p));
    c->np--;
}

static void collect(struct kb_hlog_collector *c, const struct kb_hlog_recorder *r,
                    double length_s)
{
    struct pending_interval *p;

    pthread_mutex_lock(&c->lock);
    if (!(p = pending_get(c, r->index))) {
        if (!c->failed)
            snprintf(c->err, sizeof(c->err), "hlog: out of memory");
        c->failed = 1;
    } else {
        kb_hist_add(&p->h, &r->h);
        p->errors += r->errors;
        p->bounded += r->bounded;
        if (r->bounded && r->bound_from_ns < p->bound_from_ns)
            p->bound_from_ns = r->bound_from_ns;
        if (length_s > p->length_s)
            p->length_s = length_s;
        if (++p->reports == c->nthreads)
            pending_emit(c, p);
    }
    pthread_mutex_unlock(&c->lock);
}

static int by_index(const void *a, const void *b)
{
    uint64_t x = ((const struct pending_interval *)a)->index;
    uint64_t y = ((const struct pending_interval *)b)->index;
    return x < y ? -1 : x > y;
}

struct kb_hlog_series *kb_hlog_collector_finish(struct kb_hlog_collector *c, char *err,
                                                size_t errlen)
{
    struct kb_hlog_series *s;

    pthread_mutex_lock(&c->lock);
    qsort(c->p, c->np, sizeof(*c->p), by_index);
    while (c->np > 0)
        pending_emit(c, &c->p[0]);
    s = c->series;
    if (c->failed) {
        snprintf(err, errlen, "%s", c->err);
        s = NULL;
    } else {
        c->series = NULL;
    }
    pthread_mutex_unlock(&c->lock);
    return s;
}

void kb_hlog_collector_free(struct kb_hlog_collector *c)
{
    if (!c)
        return;
    for (size_t i = 0; i < c->np; i++)
        kb_hist_free(&c->p[i].h);
    free(c->p);
    kb_hlog_series_free(c->series);
    pthread_mutex_destroy(&c->lock);
    free(c);
}

int kb_hlog_collector_write(struct kb_hlog_collector *c, const char *hlog_path,
                            const char *csv_path, char *err, size_t errlen)
{
    struct kb_hlog_series *s = kb_hlog_collector_finish(c, err, errlen);
    int rc;

    if (!s)
        return -1;
    rc = kb_hlog_series_write(s, hlog_path, csv_path, err, errlen);
    kb_hlog_series_free(s);
    return rc;
}

double kb_hlog_epoch_now(void)
{
    struct timespec ts;

    clock_gettime(CLOCK_REALTIME, &ts);
    return (double)ts.tv_sec + (double)ts.tv_nsec / 1e9;
}

/* ---- the per-thread recorder ---------------------------------------------------------- */

int kb_hlog_recorder_init(struct kb_hlog_recorder *r, struct kb_hlog_collector *col,
                          uint64_t start_ns)
{
    memset(r, 0, sizeof(*r));
    r->col = col;
    r->start_ns = start_ns;
    r->interval_ns = (uint64_t)(col->interval_s * 1e9);
    r->next_ns = start_ns + r->interval_ns;
    r->bound_from_ns = INT64_MAX;
    return kb_hist_init(&r->h, 1, col->highest, col->sigfigs);
}

/* Hands over every interval that ended by now_ns (empty ones too: every thread reports
 * every interval, which is how the collector knows one is complete). */
static void roll(struct kb_hlog_recorder *r, uint64_t now_ns)
{
    while (now_ns >= r->next_ns) {
        collect(r->col, r, r->col->interval_s);
        kb_hist_reset(&r->h);
        r->errors = r->bounded = 0;
        r->bound_from_ns = INT64_MAX;
        r->index++;
        r->next_ns += r->interval_ns;
    }
}

void kb_hlog_recorder_value(struct kb_hlog_recorder *r, int64_t value_ns, uint64_t now_ns)
{
    roll(r, now_ns);
    kb_hist_record(&r->h, value_ns);
}

void kb_hlog_recorder_error(struct kb_hlog_recorder *r, uint64_t now_ns)
{
    roll(r, now_ns);
    r->errors++;
}

void kb_hlog_recorder_bound(struct kb_hlog_recorder *r, int64_t value_ns, uint64_t now_ns)
{
    roll(r, now_ns);
    r->errors++;
    r->bounded++;
    kb_hist_record(&r->h, value_ns);
    if (value_ns < r->bound_from_ns)
        r->bound_from_ns = value_ns;
}

void kb_hlog_recorder_finish(struct kb_hlog_recorder *r, uint64_t now_ns)
{
    uint64_t begun;

    roll(r, now_ns);
    begun = r->next_ns - r->interval_ns;
    if (now_ns > begun)
        collect(r->col, r, (double)(now_ns - begun) / 1e9);
    kb_hist_free(&r->h);
}
