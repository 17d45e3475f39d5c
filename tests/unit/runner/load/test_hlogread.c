/* test_hlogread.c -- runner/load/hlogread: what hlog.c encodes reads back to the same counts,
 * total, min, max and percentiles; payloads add up as their histograms do; a log written by
 * kb_hlog_series_write reads back interval by interval; a damaged payload, another layout or a
 * malformed line is refused, never read as figures. */
#define _POSIX_C_SOURCE 200809L
#include "runner/load/hlog.h"
#include "runner/load/hlogread.h"
#include "tests/lib/kb_check.h"
#include "tests/unit/runner/tmpdir.h"

#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#define HIGHEST KB_HLOG_HIGHEST_NS   /* the layout series.hlog is written in: an hour in ns */

static char err[512];

/* xorshift64*: a fixed seed, so a failure can be replayed. */
static uint64_t rnd(uint64_t *s)
{
    *s ^= *s >> 12;
    *s ^= *s << 25;
    *s ^= *s >> 27;
    return *s * 2685821657736338717ULL;
}

static void fill(struct kb_hist *h, uint64_t seed, int n)
{
    ck_assert_int_eq(kb_hist_init(h, 1, HIGHEST, 3), 0);
    for (int i = 0; i < n; i++) {
        uint64_t r = rnd(&seed);
        kb_hist_record(h, 1 + (int64_t)(rnd(&seed) % (1ULL << (4 + r % 28))));
    }
}

static void assert_same(const struct kb_hist *a, const struct kb_hist *b)
{
    static const double pcts[] = { 0, 50, 90, 99, 99.9, 99.99, 100 };
    ck_assert_int_eq(a->total_count, b->total_count);
    ck_assert_mem_eq(a->counts, b->counts, (size_t)a->counts_len * sizeof(int64_t));
    ck_assert_int_eq(kb_hist_min(a), kb_hist_min(b));
    ck_assert_int_eq(kb_hist_max(a), kb_hist_max(b));
    for (size_t i = 0; i < sizeof(pcts) / sizeof(pcts[0]); i++)
        ck_assert_int_eq(kb_hist_value_at_percentile(a, pcts[i]),
                         kb_hist_value_at_percentile(b, pcts[i]));
}

START_TEST(round_trip_gives_the_same_histogram)
{
    struct kb_hist h, back;
    char *b64;
    fill(&h, 0x1234 + (uint64_t)_i, _i == 0 ? 1 : 20000);
    b64 = kb_hlog_encode(&h, err, sizeof(err));
    ck_assert_msg(b64 != NULL, "%s", err);
    ck_assert_int_eq(kb_hist_init(&back, 1, HIGHEST, 3), 0);
    ck_assert_msg(kb_hlog_decode_add(b64, &back, err, sizeof(err)) == 0, "%s", err);
    assert_same(&h, &back);
    free(b64);
    kb_hist_free(&h);
    kb_hist_free(&back);
}
END_TEST

START_TEST(payloads_add_like_their_histograms)
{
    struct kb_hist a, b, sum, back;
    char *pa, *pb;
    fill(&a, 7, 5000);
    fill(&b, 8, 9000);
    pa = kb_hlog_encode(&a, err, sizeof(err));
    pb = kb_hlog_encode(&b, err, sizeof(err));
    ck_assert(pa && pb);
    ck_assert_int_eq(kb_hist_init(&sum, 1, HIGHEST, 3), 0);
    ck_assert_int_eq(kb_hist_add(&sum, &a), 0);
    ck_assert_int_eq(kb_hist_add(&sum, &b), 0);
    ck_assert_int_eq(kb_hist_init(&back, 1, HIGHEST, 3), 0);
    ck_assert_int_eq(kb_hlog_decode_add(pa, &back, err, sizeof(err)), 0);
    ck_assert_int_eq(kb_hlog_decode_add(pb, &back, err, sizeof(err)), 0);
    assert_same(&sum, &back);
    free(pa);
    free(pb);
    kb_hist_free(&a);
    kb_hist_free(&b);
    kb_hist_free(&sum);
    kb_hist_free(&back);
}
END_TEST

START_TEST(damage_and_other_layouts_are_refused)
{
    struct kb_hist h, other, back;
    char *p;
    size_t n;
    fill(&h, 9, 3000);
    p = kb_hlog_encode(&h, err, sizeof(err));
    ck_assert_ptr_nonnull(p);
    ck_assert_int_eq(kb_hist_init(&other, 1, 60000000LL, 3), 0);
    ck_assert_int_eq(kb_hlog_decode_add(p, &other, err, sizeof(err)), -1);
    ck_assert_msg(strstr(err, "layout") != NULL, "%s", err);
    ck_assert_int_eq(other.total_count, 0);
    ck_assert_int_eq(kb_hist_init(&back, 1, HIGHEST, 3), 0);
    ck_assert_int_eq(kb_hlog_decode_add("not base64!", &back, err, sizeof(err)), -1);
    n = strlen(p);
    p[n / 2] = p[n / 2] == 'A' ? 'B' : 'A';          /* a bit flipped in the zlib stream */
    ck_assert_int_eq(kb_hlog_decode_add(p, &back, err, sizeof(err)), -1);
    p[n - 8] = '\0';                                 /* truncated */
    ck_assert_int_eq(kb_hlog_decode_add(p, &back, err, sizeof(err)), -1);
    free(p);
    kb_hist_free(&h);
    kb_hist_free(&other);
    kb_hist_free(&back);
}
END_TEST

struct seen {
    size_t n;
    double start[8], length[8];
    struct kb_hist h[8];
};

static int take(void *arg, double start, double length, const char *payload, char *e,
                size_t elen)
{
    struct seen *s = arg;
    if (s->n == 8)
        return -1;
    s->start[s->n] = start;
    s->length[s->n] = length;
    kb_hist_init(&s->h[s->n], 1, HIGHEST, 3);
    return kb_hlog_decode_add(payload, &s->h[s->n++], e, elen);
}

/* Written as the load generator writes series.hlog, read back interval by interval. */
START_TEST(a_written_log_reads_back_interval_by_interval)
{
    struct kb_hlog_series *ser = kb_hlog_series_new(NULL, 1700000000.0);
    struct kb_hist h[3];
    struct seen s = { 0 };
    char path[256];
    for (int i = 0; i < 3; i++) {
        fill(&h[i], 100 + (uint64_t)i, 1000 * (i + 1));
        /* the last, as a drain's last sliver can be, shorter than the log's 3 decimals */
        ck_assert_int_eq(kb_hlog_series_add(ser, i, i < 2 ? 1.0 : 0.0002, &h[i], 0, err,
                                            sizeof(err)), 0);
    }
    snprintf(path, sizeof(path), "%s/series.hlog", kb_tmp);
    ck_assert_msg(kb_hlog_series_write(ser, path, NULL, err, sizeof(err)) == 0, "%s", err);
    ck_assert_msg(kb_hlog_read(path, take, &s, err, sizeof(err)) == 0, "%s", err);
    ck_assert_uint_eq(s.n, 3);
    for (int i = 0; i < 3; i++) {
        ck_assert_double_eq_tol(s.start[i], i, 1e-9);
        ck_assert_double_eq_tol(s.length[i], i < 2 ? 1.0 : 0.0, 1e-9);
        assert_same(&h[i], &s.h[i]);
        kb_hist_free(&h[i]);
        kb_hist_free(&s.h[i]);
    }
    kb_hlog_series_free(ser);
    kb_tmp_put("bad.hlog", "#[comment]\n1.0,garbage\n");
    snprintf(path, sizeof(path), "%s/bad.hlog", kb_tmp);
    s.n = 0;
    ck_assert_int_eq(kb_hlog_read(path, take, &s, err, sizeof(err)), -1);
    ck_assert_msg(strstr(err, ":2:") != NULL, "%s", err);
    ck_assert_uint_eq(s.n, 0);
}
END_TEST

static Suite *suite(void)
{
    Suite *s = suite_create("hlogread");
    TCase *tc = tcase_create("read");
    tcase_add_checked_fixture(tc, kb_tmp_setup, kb_tmp_teardown);
    tcase_add_loop_test(tc, round_trip_gives_the_same_histogram, 0, 3);
    tcase_add_test(tc, payloads_add_like_their_histograms);
    tcase_add_test(tc, damage_and_other_layouts_are_refused);
    tcase_add_test(tc, a_written_log_reads_back_interval_by_interval);
    suite_add_tcase(s, tc);
    return s;
}

int main(void)
{
    return kb_check_run(suite(), "hlogread");
}
