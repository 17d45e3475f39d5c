/* test_hist.c -- runner/load/hist.c against exact values: percentiles of random data compared with
 * the sorted values (within HdrHistogram's 3-digit equivalence), layout constants, merge, and
 * the .hgrm percentile output format. */
#define _GNU_SOURCE
#include <check.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "runner/load/hist.h"
#include "tests/lib/kb_check.h"

static int cmp64(const void *a, const void *b)
{
    int64_t x = *(const int64_t *)a, y = *(const int64_t *)b;
    return (x > y) - (x < y);
}

START_TEST(layout_matches_hdrhistogram)
{
    struct kb_hist h;
    ck_assert_int_eq(kb_hist_init(&h, 1, 3600000000LL, 3), 0);
    /* HdrHistogram_c for (1, 3.6e9, 3): 2048 sub-buckets, 22 buckets, 23552 counts. */
    ck_assert_int_eq(h.sub_bucket_count, 2048);
    ck_assert_int_eq(h.bucket_count, 22);
    ck_assert_int_eq(h.counts_len, 23552);
    /* Values below 2048 are exact; above, equivalence ranges double per bucket. */
    ck_assert_int_eq(kb_hist_lowest_equivalent(&h, 2047), 2047);
    ck_assert_int_eq(kb_hist_highest_equivalent(&h, 2047), 2047);
    ck_assert_int_eq(kb_hist_lowest_equivalent(&h, 2049), 2048);
    ck_assert_int_eq(kb_hist_highest_equivalent(&h, 2049), 2049);
    ck_assert_int_eq(kb_hist_lowest_equivalent(&h, 10007), 10000);
    ck_assert_int_eq(kb_hist_highest_equivalent(&h, 10007), 10007);
    ck_assert_int_eq(kb_hist_lowest_equivalent(&h, 1000000), 999936);
    kb_hist_free(&h);
    ck_assert_int_eq(kb_hist_init(&h, 0, 100, 3), -1);
    ck_assert_int_eq(kb_hist_init(&h, 1, 100, 6), -1);
}
END_TEST

static void check_against_sorted(const int64_t *sorted, int n, const struct kb_hist *h)
{
    static const double ps[] = { 0.0, 1, 10, 25, 50, 75, 90, 99, 99.9, 99.99, 100 };
    for (size_t i = 0; i < sizeof(ps) / sizeof(ps[0]); i++) {
        /* HdrHistogram's rank: round(p/100 * n), at least 1. */
        long rank = (long)(ps[i] / 100.0 * n + 0.5);
        int64_t exact, got = kb_hist_value_at_percentile(h, ps[i]);
        if (rank < 1)
            rank = 1;
        exact = sorted[rank - 1];
        if (ps[i] == 0.0)
            ck_assert_int_eq(got, kb_hist_lowest_equivalent(h, exact));
        else
            ck_assert_msg(got == kb_hist_highest_equivalent(h, exact),
                          "p%.2f: got %lld, exact %lld", ps[i], (long long)got, (long long)exact);
        /* and within 0.1 % of the exact value, the 3-significant-digit promise */
        ck_assert(llabs(got - exact) <= exact / 1000 + 1);
    }
}

START_TEST(percentiles_match_sorted_random_data)
{
    enum { N = 100000 };
    int64_t *v = malloc(N * sizeof(*v));
    struct kb_hist h;
    double sum = 0;
    srandom(12345 + (unsigned)_i);
    ck_assert_int_eq(kb_hist_init(&h, 1, 3600000000LL, 3), 0);
    for (int i = 0; i < N; i++) {
        /* log-uniform from 1 us to ~100 s, the span latencies cover */
        double e = (double)random() / RAND_MAX * 8.0;
        v[i] = (int64_t)(__builtin_pow(10.0, e));
        sum += (double)v[i];
        kb_hist_record(&h, v[i]);
    }
    qsort(v, N, sizeof(*v), cmp64);
    ck_assert_int_eq(h.total_count, N);
    check_against_sorted(v, N, &h);
    ck_assert_int_eq(kb_hist_max(&h), kb_hist_highest_equivalent(&h, v[N - 1]));
    ck_assert_int_eq(kb_hist_min(&h), kb_hist_lowest_equivalent(&h, v[0]));
    ck_assert(__builtin_fabs(kb_hist_mean(&h) - sum / N) <= sum / N * 0.001);
    kb_hist_free(&h);
    free(v);
}
END_TEST

START_TEST(merge_equals_single)
{
    struct kb_hist a, b, all;
    ck_assert_int_eq(kb_hist_init(&a, 1, 3600000000LL, 3), 0);
    ck_assert_int_eq(kb_hist_init(&b, 1, 3600000000LL, 3), 0);
    ck_assert_int_eq(kb_hist_init(&all, 1, 3600000000LL, 3), 0);
    srandom(7);
    for (int i = 0; i < 20000; i++) {
        int64_t x = random() % 5000000;
        kb_hist_record(i % 2 ? &a : &b, x);
        kb_hist_record(&all, x);
    }
    ck_assert_int_eq(kb_hist_add(&a, &b), 0);
    ck_assert_int_eq(a.total_count, all.total_count);
    ck_assert_int_eq(memcmp(a.counts, all.counts, (size_t)a.counts_len * sizeof(int64_t)), 0);
    ck_assert_int_eq(kb_hist_value_at_percentile(&a, 99.9), kb_hist_value_at_percentile(&all, 99.9));
    kb_hist_free(&a);
    kb_hist_free(&b);
    kb_hist_free(&all);
}
END_TEST

START_TEST(out_of_range_is_clamped_and_counted)
{
    struct kb_hist h;
    ck_assert_int_eq(kb_hist_init(&h, 1, 60000000LL, 3), 0);
    kb_hist_record(&h, -5);
    kb_hist_record(&h, 120000000LL);
    ck_assert_int_eq(h.total_count, 2);
    ck_assert_int_eq(h.clamped, 1);
    ck_assert_int_eq(kb_hist_value_at_percentile(&h, 0.0), 0);
    ck_assert(kb_hist_max(&h) >= 60000000LL);
    kb_hist_free(&h);
}
END_TEST

/* The classic .hgrm: header, one line per percentile step, footer -- for 1..10000 the
 * lines HdrHistogram_c prints (ticks 5, scale 1). */
START_TEST(hgrm_layout)
{
    struct kb_hist h;
    char *buf = NULL, line[256];
    size_t len = 0;
    FILE *f = open_memstream(&buf, &len);
    int lines = 0, last_count = 0;
    double last_p = -1;
    ck_assert_int_eq(kb_hist_init(&h, 1, 3600000000LL, 3), 0);
    for (int i = 1; i <= 10000; i++)
        kb_hist_record(&h, i);
    ck_assert_int_eq(kb_hist_print_hgrm(&h, f, 5, 1.0), 0);
    fclose(f);
    ck_assert_msg(!strncmp(buf, "       Value   Percentile   TotalCount 1/(1-Percentile)\n\n", 57), "header: %.60s", buf);
    ck_assert(strstr(buf, "       1.000     0.000000            1         1.00\n"));
    ck_assert(strstr(buf, "    5003.000     0.500000         5003         2.00\n"));
    ck_assert(strstr(buf, "   10007.000     1.000000        10000          inf\n"));
    ck_assert(strstr(buf, "#[Mean    =     5000."));
    ck_assert(strstr(buf, "#[Max     =    10007.000, Total count    =        10000]\n"));
    ck_assert(strstr(buf, "#[Buckets =           22, SubBuckets     =         2048]\n"));
    /* percentiles never go down and counts never go down */
    f = fmemopen(buf, len, "r");
    while (fgets(line, sizeof(line), f)) {
        double v, p, inv;
        int c;
        if (sscanf(line, "%lf %lf %d %lf", &v, &p, &c, &inv) == 4) {
            ck_assert(p >= last_p && c >= last_count);
            last_p = p;
            last_count = c;
            lines++;
        }
    }
    fclose(f);
    ck_assert_int_gt(lines, 50);
    free(buf);
    kb_hist_free(&h);
}
END_TEST

static Suite *suite(void)
{
    Suite *s = suite_create("hist");
    TCase *tc = tcase_create("hist");
    tcase_add_test(tc, layout_matches_hdrhistogram);
    tcase_add_loop_test(tc, percentiles_match_sorted_random_data, 0, 3);
    tcase_add_test(tc, merge_equals_single);
    tcase_add_test(tc, out_of_range_is_clamped_and_counted);
    tcase_add_test(tc, hgrm_layout);
    suite_add_tcase(s, tc);
    return s;
}

int main(void)
{
    return kb_check_run(suite(), "runner-hist");
}
