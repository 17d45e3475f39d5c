/* hist.c -- HdrHistogram's layout, written from its documented algorithm.
 *
 * Values are split into buckets by power of two; each bucket holds sub_bucket_count linear
 * sub-buckets, of which the lower half overlaps the previous bucket and is therefore not
 * stored (except in bucket 0). With 3 significant figures sub_bucket_count is 2048, so any
 * value is recorded within 1/1024 of itself. Index arithmetic follows HdrHistogram_c. */
#include "runner/load/hist.h"

#include <math.h>
#include <stdlib.h>
#include <string.h>

static int32_t bucket_index(const struct kb_hist *h, int64_t value)
{
    int32_t pow2ceiling = 64 - __builtin_clzll((uint64_t)(value | h->sub_bucket_mask));
    return pow2ceiling - h->unit_magnitude - (h->sub_bucket_half_count_magnitude + 1);
}

static int32_t sub_bucket_index(const struct kb_hist *h, int64_t value, int32_t bucket)
{
    return (int32_t)(value >> (bucket + h->unit_magnitude));
}

static int32_t counts_index(const struct kb_hist *h, int32_t bucket, int32_t sub)
{
    int32_t base = (bucket + 1) << h->sub_bucket_half_count_magnitude;
    return base + (sub - h->sub_bucket_half_count);
}

static int32_t counts_index_for(const struct kb_hist *h, int64_t value)
{
    int32_t b = bucket_index(h, value);
    return counts_index(h, b, sub_bucket_index(h, value, b));
}

static int64_t value_from_index(const struct kb_hist *h, int32_t bucket, int32_t sub)
{
    return (int64_t)sub << (bucket + h->unit_magnitude);
}

static int64_t value_at_index(const struct kb_hist *h, int32_t index)
{
    int32_t bucket = (index >> h->sub_bucket_half_count_magnitude) - 1;
    int32_t sub = (index & (h->sub_bucket_half_count - 1)) + h->sub_bucket_half_count;
    if (bucket < 0) {
        sub -= h->sub_bucket_half_count;
        bucket = 0;
    }
    return value_from_index(h, bucket, sub);
}

static int64_t equivalent_range(const struct kb_hist *h, int64_t value)
{
    int32_t b = bucket_index(h, value);
    int32_t sub = sub_bucket_index(h, value, b);
    int32_t adjusted = sub >= h->sub_bucket_count ? b + 1 : b;
    return (int64_t)1 << (h->unit_magnitude + adjusted);
}

int64_t kb_hist_lowest_equivalent(const struct kb_hist *h, int64_t value)
{
    int32_t b = bucket_index(h, value);
    return value_from_index(h, b, sub_bucket_index(h, value, b));
}

int64_t kb_hist_highest_equivalent(const struct kb_hist *h, int64_t value)
{
    return kb_hist_lowest_equivalent(h, value) + equivalent_range(h, value) - 1;
}

static int64_t median_equivalent(const struct kb_hist *h, int64_t value)
{
    return kb_hist_lowest_equivalent(h, value) + (equivalent_range(h, value) >> 1);
}

static int32_t buckets_needed(int64_t highest, int32_t sub_bucket_count, int32_t unit_magnitude)
{
    int64_t smallest_untrackable = (int64_t)sub_bucket_count << unit_magnitude;
    int32_t n = 1;
    while (smallest_untrackable <= highest) {
        if (smallest_untrackable > INT64_MAX / 2)
            return n + 1;
        smallest_untrackable <<= 1;
        n++;
    }
    return n;
}

int kb_hist_init(struct kb_hist *h, int64_t lowest, int64_t highest, int significant_figures)
{
    int64_t largest_single_unit;
    int32_t sub_bucket_count_magnitude;
    memset(h, 0, sizeof(*h));
    if (lowest < 1 || significant_figures < 1 || significant_figures > 5 || lowest * 2 > highest)
        return -1;
    largest_single_unit = 2 * (int64_t)pow(10, significant_figures);
    sub_bucket_count_magnitude = (int32_t)ceil(log((double)largest_single_unit) / log(2));
    h->lowest_discernible_value = lowest;
    h->highest_trackable_value = highest;
    h->significant_figures = significant_figures;
    h->unit_magnitude = (int32_t)floor(log((double)lowest) / log(2));
    h->sub_bucket_half_count_magnitude = (sub_bucket_count_magnitude > 1 ? sub_bucket_count_magnitude : 1) - 1;
    h->sub_bucket_count = 1 << (h->sub_bucket_half_count_magnitude + 1);
    h->sub_bucket_half_count = h->sub_bucket_count / 2;
    h->sub_bucket_mask = ((int64_t)h->sub_bucket_count - 1) << h->unit_magnitude;
    h->bucket_count = buckets_needed(highest, h->sub_bucket_count, h->unit_magnitude);
    h->counts_len = (h->bucket_count + 1) * (h->sub_bucket_count / 2);
    h->counts = calloc((size_t)h->counts_len, sizeof(int64_t));
    if (!h->counts)
        return -1;
    h->min_value = INT64_MAX;
    return 0;
}

void kb_hist_free(struct kb_hist *h)
{
    free(h->counts);
    h->counts = NULL;
}

void kb_hist_reset(struct kb_hist *h)
{
    memset(h->counts, 0, (size_t)h->counts_len * sizeof(int64_t));
    h->total_count = 0;
    h->min_value = INT64_MAX;
    h->max_value = 0;
    h->clamped = 0;
}

void kb_hist_record(struct kb_hist *h, int64_t value)
{
    if (value < 0)
        value = 0;
    if (value > h->highest_trackable_value) {
        value = h->highest_trackable_value;
        h->clamped++;
    }
    h->counts[counts_index_for(h, value)]++;
    h->total_count++;
    if (value < h->min_value)
        h->min_value = value;
    if (value > h->max_value)
        h->max_value = value;
}

int kb_hist_add(struct kb_hist *dst, const struct kb_hist *src)
{
    if (dst->counts_len != src->counts_len || dst->unit_magnitude != src->unit_magnitude ||
        dst->sub_bucket_count != src->sub_bucket_count)
        return -1;
    for (int32_t i = 0; i < src->counts_len; i++)
        dst->counts[i] += src->counts[i];
    dst->total_count += src->total_count;
    dst->clamped += src->clamped;
    if (src->min_value < dst->min_value)
        dst->min_value = src->min_value;
    if (src->max_value > dst->max_value)
        dst->max_value = src->max_value;
    return 0;
}

int kb_hist_add_counts(struct kb_hist *h, const int64_t *counts, int32_t n)
{
    if (n < 0 || n > h->counts_len)
        return -1;
    for (int32_t i = 0; i < n; i++) {
        int64_t v;
        if (counts[i] < 0)
            return -1;
        if (!counts[i])
            continue;
        h->counts[i] += counts[i];
        h->total_count += counts[i];
        v = value_at_index(h, i);
        if (v < h->min_value)
            h->min_value = v;
        if (v > h->max_value)
            h->max_value = v;
    }
    return 0;
}

int64_t kb_hist_value_at_percentile(const struct kb_hist *h, double percentile)
{
    double requested = percentile < 100.0 ? percentile : 100.0;
    int64_t want = (int64_t)((requested / 100.0) * (double)h->total_count + 0.5), total = 0;
    if (want < 1)
        want = 1;
    for (int32_t i = 0; i < h->counts_len; i++) {
        total += h->counts[i];
        if (total >= want) {
            int64_t v = value_at_index(h, i);
            return percentile == 0.0 ? kb_hist_lowest_equivalent(h, v) : kb_hist_highest_equivalent(h, v);
        }
    }
    return 0;
}

double kb_hist_mean(const struct kb_hist *h)
{
    double sum = 0;
    if (h->total_count == 0)
        return 0;
    for (int32_t i = 0; i < h->counts_len; i++)
        if (h->counts[i])
            sum += (double)h->counts[i] * (double)median_equivalent(h, value_at_index(h, i));
    return sum / (double)h->total_count;
}

double kb_hist_stddev(const struct kb_hist *h)
{
    double mean = kb_hist_mean(h), geo = 0;
    if (h->total_count == 0)
        return 0;
    for (int32_t i = 0; i < h->counts_len; i++)
        if (h->counts[i]) {
            double dev = (double)median_equivalent(h, value_at_index(h, i)) - mean;
            geo += dev * dev * (double)h->counts[i];
        }
    return sqrt(geo / (double)h->total_count);
}

int64_t kb_hist_min(const struct kb_hist *h)
{
    return h->total_count ? kb_hist_lowest_equivalent(h, h->min_value) : 0;
}

int64_t kb_hist_max(const struct kb_hist *h)
{
    return h->total_count ? kb_hist_highest_equivalent(h, h->max_value) : 0;
}

/* The percentile iterator of HdrHistogram_c (hdr_iter_percentile_init / percentile_iter_next):
 * steps halve the remaining distance to 100 % every ticks_per_half_distance lines. */
struct pct_iter {
    const struct kb_hist *h;
    int32_t index;
    int64_t count, cumulative, value, highest_equivalent;
    int ticks;
    double to, percentile;
    int seen_last;
};

static int basic_next(struct pct_iter *it)
{
    if (it->index + 1 >= it->h->counts_len)
        return 0;
    it->index++;
    it->count = it->h->counts[it->index];
    it->cumulative += it->count;
    it->value = value_at_index(it->h, it->index);
    return 1;
}

static int pct_next(struct pct_iter *it)
{
    if (it->cumulative >= it->h->total_count) {
        if (it->seen_last)
            return 0;
        it->seen_last = 1;
        it->percentile = 100.0;
        return 1;
    }
    if (it->index == -1 && !basic_next(it))
        return 0;
    do {
        double current = (100.0 * (double)it->cumulative) / (double)it->h->total_count;
        if (it->count != 0 && it->to <= current) {
            int64_t temp, half_distance;
            it->highest_equivalent = kb_hist_highest_equivalent(it->h, it->value);
            it->percentile = it->to;
            temp = (int64_t)(log(100 / (100.0 - it->to)) / log(2)) + 1;
            half_distance = (int64_t)pow(2, (double)temp);
            it->to += 100.0 / (double)(it->ticks * half_distance);
            return 1;
        }
    } while (basic_next(it));
    return 1;
}

int kb_hist_print_hgrm(const struct kb_hist *h, FILE *f, int ticks_per_half_distance,
                       double value_scale)
{
    struct pct_iter it = { .h = h, .index = -1, .ticks = ticks_per_half_distance };
    char line[32];
    snprintf(line, sizeof(line), "%%12.%df %%12f %%12lld %%12.2f\n", h->significant_figures);
    if (fprintf(f, "%12s %12s %12s %12s\n\n", "Value", "Percentile", "TotalCount",
                "1/(1-Percentile)") < 0)
        return -1;
    while (h->total_count > 0 && pct_next(&it)) {
        double p = it.percentile / 100.0;
        if (fprintf(f, line, (double)it.highest_equivalent / value_scale, p,
                    (long long)it.cumulative, 1.0 / (1.0 - p)) < 0)
            return -1;
    }
    if (fprintf(f, "#[Mean    = %12.3f, StdDeviation   = %12.3f]\n"
                   "#[Max     = %12.3f, Total count    = %12lld]\n"
                   "#[Buckets = %12d, SubBuckets     = %12d]\n",
                kb_hist_mean(h) / value_scale, kb_hist_stddev(h) / value_scale,
                (double)kb_hist_max(h) / value_scale, (long long)h->total_count,
                h->bucket_count, h->sub_bucket_count) < 0)
        return -1;
    return 0;
}
