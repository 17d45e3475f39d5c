/* hist.h -- a log-linear latency histogram laid out exactly like HdrHistogram
 * (HdrHistogram_c's bucket / sub-bucket indexing, value_at_percentile, the percentile
 * iterator and the classic .hgrm percentile output), so its figures and files agree with
 * HdrHistogram's own tools. Values are integers (the load generator records microseconds).
 * One histogram per thread, merged with kb_hist_add; no locking inside. */
#ifndef KB_HIST_H
#define KB_HIST_H

#include <stdint.h>
#include <stdio.h>

struct kb_hist {
    int64_t lowest_discernible_value;
    int64_t highest_trackable_value;
    int32_t significant_figures;
    int32_t unit_magnitude;
    int32_t sub_bucket_half_count_magnitude;
    int32_t sub_bucket_count;
    int32_t sub_bucket_half_count;
    int64_t sub_bucket_mask;
    int32_t bucket_count;
    int32_t counts_len;
    int64_t total_count;
    int64_t min_value;     /* smallest recorded value, INT64_MAX when empty */
    int64_t max_value;     /* largest recorded value, 0 when empty */
    int64_t clamped;       /* values above highest_trackable_value, recorded at it */
    int64_t *counts;       /* owned; counts_len entries */
};

/* 0, or -1 on bad arguments (lowest < 1, highest < 2 * lowest, figures outside 1..5) or no
 * memory. Release with kb_hist_free. */
int kb_hist_init(struct kb_hist *h, int64_t lowest, int64_t highest, int significant_figures);
void kb_hist_free(struct kb_hist *h);
void kb_hist_reset(struct kb_hist *h);

/* Records value (negative values are recorded as 0; values above the trackable range are
 * recorded at its top and counted in h->clamped, so the total count is never short). */
void kb_hist_record(struct kb_hist *h, int64_t value);

/* Adds every count of src into dst; both must have the same layout. 0 or -1. */
int kb_hist_add(struct kb_hist *dst, const struct kb_hist *src);

/* Adds counts[i] at counts index i for i < n (a histogram of the same layout read back from
 * its encoding, runner/load/hlogread.h); min and max become those indexes' lowest values, as
 * HdrHistogram's decoder leaves them. 0, or -1 when n exceeds the layout or a count is < 0. */
int kb_hist_add_counts(struct kb_hist *h, const int64_t *counts, int32_t n);

/* HdrHistogram's hdr_value_at_percentile: the highest value equivalent to the value at the
 * given percentile (0..100); 0 when empty. */
int64_t kb_hist_value_at_percentile(const struct kb_hist *h, double percentile);
double kb_hist_mean(const struct kb_hist *h);
double kb_hist_stddev(const struct kb_hist *h);
int64_t kb_hist_min(const struct kb_hist *h);   /* lowest equivalent of the smallest value */
int64_t kb_hist_max(const struct kb_hist *h);   /* highest equivalent of the largest value */

int64_t kb_hist_lowest_equivalent(const struct kb_hist *h, int64_t value);
int64_t kb_hist_highest_equivalent(const struct kb_hist *h, int64_t value);

/* hdr_percentiles_print(h, f, ticks_per_half_distance, value_scale, CLASSIC): the .hgrm
 * percentile distribution. 0, or -1 on a write error. */
int kb_hist_print_hgrm(const struct kb_hist *h, FILE *f, int ticks_per_half_distance,
                       double value_scale);

#endif
