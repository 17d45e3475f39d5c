/* test_hlog.c -- runner/hlog: the .hlog and CSV of a series, round-tripped through an
 * independent decoder (tests/e2e/calibrate/hlog_decode.py: base64, zlib, zigzag LEB128) that
 * compares counts, percentiles, the max column and the CSV with the raw values recorded.
 * The series records nanoseconds and says so in its header; the CSV is in microseconds. */
#define _POSIX_C_SOURCE 200809L
#include "runner/load/hlog.h"
#include "runner/util/root.h"
#include "tests/lib/kb_check.h"

#include <dirent.h>
#include <pthread.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#define HIGHEST_NS 60000000000LL

struct tmpdir {
    char path[256];
};

static void tmpdir_make(struct tmpdir *t)
{
    snprintf(t->path, sizeof(t->path), "/tmp/kb-test-hlog-XXXXXX");
    ck_assert_ptr_nonnull(mkdtemp(t->path));
}

static void tmpdir_remove(struct tmpdir *t)
{
    char cmd[512];
    snprintf(cmd, sizeof(cmd), "rm -rf '%s'", t->path);
    ck_assert_int_eq(system(cmd), 0);
}

/* xorshift64*: a fixed seed, so a failure can be replayed. */
static uint64_t rnd(uint64_t *s)
{
    *s ^= *s >> 12;
    *s ^= *s << 25;
    *s ^= *s >> 27;
    return *s * 2685821657736338717ULL;
}

/* Latency-like values in ns: mostly tens to hundreds of us, a tail up to ~34 s. */
static int64_t latency(uint64_t *s)
{
    uint64_t r = rnd(s);
    int shift = (int)(r % 100 < 90 ? 14 + r % 6 : 10 + r % 26);
    return 1 + (int64_t)(rnd(s) % (1ULL << shift));
}

/* Records n values per interval into a series and the raw values into expect.json. */
static void write_case(const char *dir, const char *tag, const int *per_interval, int nint)
{
    struct kb_hist h;
    struct kb_hlog_series *s = kb_hlog_series_new(tag, 1700000000.25);
    char path[512], hlog[512], csv[512], err[256] = "";
    uint64_t seed = 0x9e3779b97f4a7c15ULL;
    FILE *f;

    ck_assert_ptr_nonnull(s);
    ck_assert_int_eq(kb_hist_init(&h, 1, HIGHEST_NS, 3), 0);
    snprintf(path, sizeof(path), "%s/expect.json", dir);
    ck_assert_ptr_nonnull(f = fopen(path, "w"));
    fprintf(f, "{\"intervals\": [");
    for (int i = 0; i < nint; i++) {
        fprintf(f, "%s{\"errors\": %d, \"values\": [", i ? ", " : "", i * 3);
        kb_hist_reset(&h);
        for (int k = 0; k < per_interval[i]; k++) {
            int64_t v = latency(&seed);
            kb_hist_record(&h, v);
            fprintf(f, "%s%lld", k ? "," : "", (long long)v);
        }
        fprintf(f, "]}");
        ck_assert_msg(kb_hlog_series_add(s, i * 1.0, 1.0, &h, i * 3, err, sizeof(err)) == 0,
                      "%s", err);
    }
    fprintf(f, "]}\n");
    ck_assert_int_eq(fclose(f), 0);
    ck_assert_uint_eq(kb_hlog_series_len(s), (size_t)nint);
    snprintf(hlog, sizeof(hlog), "%s/point.hlog", dir);
    snprintf(csv, sizeof(csv), "%s/point.csv", dir);
    ck_assert_msg(kb_hlog_series_write(s, hlog, csv, err, sizeof(err)) == 0, "%s", err);
    kb_hlog_series_free(s);
    kb_hist_free(&h);
}

static int decode_check_to(const char *dir, const char *sink)
{
    char cmd[2048];
    snprintf(cmd, sizeof(cmd),
             "python3 '%s/tests/e2e/calibrate/hlog_decode.py' --expect '%s/expect.json' "
             "'%s/point.hlog' --csv '%s/point.csv' %s", kb_root(), dir, dir, dir, sink);
    return system(cmd);
}

static int decode_check(const char *dir)
{
    return decode_check_to(dir, ">&2");
}

START_TEST(test_roundtrip_through_independent_decoder)
{
    static const int sizes[] = { 1000, 1, 0, 20000, 37, 5000 };
    struct tmpdir t;

    tmpdir_make(&t);
    write_case(t.path, "plaintext-45000", sizes, (int)(sizeof(sizes) / sizeof(sizes[0])));
    ck_assert_int_eq(decode_check(t.path), 0);
    tmpdir_remove(&t);
}
END_TEST

START_TEST(test_untagged_lines_and_header)
{
    static const int sizes[] = { 300, 300 };
    struct tmpdir t;
    char path[512], line[4096];
    int base = 0, version = 0, start = 0, entries = 0, unit = 0;
    FILE *f;

    tmpdir_make(&t);
    write_case(t.path, NULL, sizes, 2);
    snprintf(path, sizeof(path), "%s/point.hlog", t.path);
    ck_assert_ptr_nonnull(f = fopen(path, "r"));
    while (fgets(line, sizeof(line), f)) {
        base += !strncmp(line, "#[BaseTime: 1700000000.250 ", 27);
        start += !strncmp(line, "#[StartTime: 1700000000.250 ", 28);
        version += !strcmp(line, "#[Histogram log format version 1.2]\n");
        unit += !strcmp(line, KB_HLOG_UNIT_LINE "\n");
        if (line[0] != '#' && line[0] != '"') {
            ck_assert_msg(strncmp(line, "Tag=", 4) != 0, "untagged series wrote a tag");
            entries++;
        }
    }
    fclose(f);
    ck_assert_int_eq(base, 1);
    ck_assert_int_eq(start, 1);
    ck_assert_int_eq(version, 1);
    ck_assert_int_eq(unit, 1);
    ck_assert_int_eq(entries, 2);
    ck_assert_int_eq(decode_check(t.path), 0);
    tmpdir_remove(&t);
}
END_TEST

/* Which unit a log holds is read from its header: ours say nanoseconds; a kneebench log
 * without the unit line was written before it, in microseconds, and must be read so. grep
 * reads to the end (no -q) so that the decoder never writes into a closed pipe. */
START_TEST(test_unit_line_tells_ns_from_older_us_logs)
{
    static const int sizes[] = { 10 };
    struct tmpdir t;
    char cmd[2048];
    const char *decode = "python3 '%s/tests/e2e/calibrate/hlog_decode.py' '%s/point.hlog' "
                         "| grep '^base .* unit %s$' >/dev/null";

    tmpdir_make(&t);
    write_case(t.path, NULL, sizes, 1);
    snprintf(cmd, sizeof(cmd), decode, kb_root(), t.path, "ns");
    ck_assert_int_eq(system(cmd), 0);
    snprintf(cmd, sizeof(cmd), "sed -i '/^#\\[Value unit: /d' '%s/point.hlog'", t.path);
    ck_assert_int_eq(system(cmd), 0);
    snprintf(cmd, sizeof(cmd), decode, kb_root(), t.path, "us");
    ck_assert_int_eq(system(cmd), 0);
    tmpdir_remove(&t);
}
END_TEST

/* The decoder must be able to fail: a corrupted payload is refused. */
START_TEST(test_decoder_refuses_a_corrupted_log)
{
    static const int sizes[] = { 500 };
    struct tmpdir t;
    char cmd[1024];

    tmpdir_make(&t);
    write_case(t.path, "x", sizes, 1);
    /* Change one base64 character inside the compressed bytes to another valid one. */
    snprintf(cmd, sizeof(cmd), "python3 -c \"import sys; p = sys.argv[1]; L = open(p).read()"
             ".split('\\n'); i = [k for k, l in enumerate(L) if l.startswith('Tag=')][0]; "
             "h, b = L[i].rsplit(',', 1); b = b[:30] + ('B' if b[30] == 'A' else 'A') + b[31:]; "
             "L[i] = h + ',' + b; open(p, 'w').write('\\n'.join(L))\" '%s/point.hlog'", t.path);
    ck_assert_int_eq(system(cmd), 0);
    ck_assert_int_ne(decode_check_to(t.path, ">/dev/null 2>&1"), 0);
    tmpdir_remove(&t);
}
END_TEST

START_TEST(test_rows_match_histogram)
{
    struct kb_hist h;
    struct kb_hlog_series *s = kb_hlog_series_new("t", 0);
    const struct kb_hlog_row *r;
    char err[256];

    ck_assert_int_eq(kb_hist_init(&h, 1, HIGHEST_NS, 3), 0);
    for (int64_t v = 1; v <= 1000; v++)
        kb_hist_record(&h, v * 1000);      /* 1..1000 us, in ns */
    ck_assert_int_eq(kb_hlog_series_add(s, 2.0, 0.5, &h, 7, err, sizeof(err)), 0);
    ck_assert_ptr_null(kb_hlog_series_row(s, 1));
    r = kb_hlog_series_row(s, 0);
    ck_assert_int_eq(r->completed, 1000);
    ck_assert_int_eq(r->errors, 7);
    ck_assert_double_eq_tol(r->achieved_rps, 2000.0, 1e-9);
    ck_assert_int_eq(r->p50_us, 500);
    ck_assert_int_eq(r->p99_us, 990);
    ck_assert_int_eq(r->max_us, 1000);
    kb_hlog_series_free(s);
    kb_hist_free(&h);
}
END_TEST

/* Unanswered requests recorded at their lower bound: in the histogram, not in completed,
 * and the CSV flags exactly the figures that reach the smallest bound. */
START_TEST(test_bounded_values_flag_their_figures)
{
    struct tmpdir t;
    struct kb_hist h;
    struct kb_hlog_series *s = kb_hlog_series_new(NULL, 0);
    struct kb_hlog_recorder r;
    struct kb_hlog_collector *c = kb_hlog_collector_new(NULL, 0, 1.0, 1, HIGHEST_NS, 3);
    const struct kb_hlog_row *row;
    char path[512], line[256], err[256];
    FILE *f;

    ck_assert_int_eq(kb_hist_init(&h, 1, HIGHEST_NS, 3), 0);
    for (int64_t v = 1; v <= 95; v++)
        kb_hist_record(&h, v * 1000);
    for (int k = 0; k < 5; k++)
        kb_hist_record(&h, 2000000000);   /* five unanswered, >= 2 s */
    ck_assert_int_eq(kb_hlog_series_add_bounded(s, 0, 1.0, &h, 5, 5, 2000000000, err,
                                                sizeof(err)), 0);
    row = kb_hlog_series_row(s, 0);
    ck_assert_int_eq(row->completed, 95);
    ck_assert_int_eq(row->bounded, 5);
    tmpdir_make(&t);
    snprintf(path, sizeof(path), "%s/b.csv", t.path);
    ck_assert_int_eq(kb_hlog_series_write(s, NULL, path, err, sizeof(err)), 0);
    f = fopen(path, "r");
    ck_assert_ptr_nonnull(fgets(line, sizeof(line), f));
    ck_assert_ptr_nonnull(strstr(line, "bounded,p50_is_bound,p99_is_bound,max_is_bound"));
    ck_assert_ptr_nonnull(fgets(line, sizeof(line), f));
    /* p50 (48) is exact; p99 and max reach the 2 s bound */
    ck_assert_ptr_nonnull(strstr(line, ",5,5,0,1,1\n"));
    fclose(f);
    /* the recorder path: a bound is an error of its interval and a value of its histogram */
    ck_assert_int_eq(kb_hlog_recorder_init(&r, c, 0), 0);
    kb_hlog_recorder_value(&r, 100000, 100);
    kb_hlog_recorder_bound(&r, 1500000000, 200);
    kb_hlog_recorder_finish(&r, 500000000);
    kb_hlog_series_free(s);
    ck_assert_ptr_nonnull(s = kb_hlog_collector_finish(c, err, sizeof(err)));
    row = kb_hlog_series_row(s, 0);
    ck_assert_int_eq(row->completed, 1);
    ck_assert_int_eq(row->bounded, 1);
    ck_assert_int_eq(row->errors, 1);
    ck_assert_int_eq(row->bound_from_us, 1500000);
    kb_hlog_series_free(s);
    kb_hlog_collector_free(c);
    kb_hist_free(&h);
    tmpdir_remove(&t);
}
END_TEST

START_TEST(test_atomic_write_leaves_no_temporary)
{
    struct tmpdir t;
    struct kb_hlog_series *s = kb_hlog_series_new(NULL, 0);
    char path[512], err[256];
    struct dirent *e;
    DIR *d;
    int files = 0;

    tmpdir_make(&t);
    snprintf(path, sizeof(path), "%s/only.hlog", t.path);
    ck_assert_int_eq(kb_hlog_series_write(s, path, NULL, err, sizeof(err)), 0);
    ck_assert_ptr_nonnull(d = opendir(t.path));
    while ((e = readdir(d)))
        if (e->d_name[0] != '.') {
            ck_assert_str_eq(e->d_name, "only.hlog");
            files++;
        }
    closedir(d);
    ck_assert_int_eq(files, 1);
    snprintf(path, sizeof(path), "%s/missing/dir.hlog", t.path);
    ck_assert_int_eq(kb_hlog_series_write(s, path, NULL, err, sizeof(err)), -1);
    ck_assert_ptr_nonnull(strstr(err, "missing/dir.hlog"));
    kb_hlog_series_free(s);
    tmpdir_remove(&t);
}
END_TEST

/* Three threads record synthetic responses at known times; the collector's intervals must
 * hold exactly the values whose completion time falls in them, whichever thread saw them. */
#define COL_THREADS 3
#define COL_PER_THREAD 3000

struct col_thread {
    struct kb_hlog_collector *col;
    int id;
    uint64_t end_ns;
    int64_t values[COL_PER_THREAD];
    uint64_t times[COL_PER_THREAD];
    int failed[COL_PER_THREAD];
};

static void *col_thread_main(void *arg)
{
    struct col_thread *t = arg;
    struct kb_hlog_recorder r;

    if (kb_hlog_recorder_init(&r, t->col, 1000) != 0)
        return NULL;
    for (int i = 0; i < COL_PER_THREAD; i++) {
        if (t->failed[i])
            kb_hlog_recorder_error(&r, t->times[i]);
        else
            kb_hlog_recorder_value(&r, t->values[i], t->times[i]);
    }
    kb_hlog_recorder_finish(&r, t->end_ns);
    return NULL;
}

START_TEST(test_collector_merges_threads_by_interval)
{
    static struct col_thread ts[COL_THREADS];
    struct kb_hlog_collector *col = kb_hlog_collector_new("c", 1700000000.0, 1.0, COL_THREADS,
                                                          HIGHEST_NS, 3);
    struct kb_hlog_series *s;
    pthread_t tid[COL_THREADS];
    uint64_t seed = 42;
    struct tmpdir t;
    char path[512], err[256];
    FILE *f;
    const size_t nint = 5;   /* the longest thread ends at 4.5 s: intervals 0..4 */

    ck_assert_ptr_nonnull(col);
    for (int k = 0; k < COL_THREADS; k++) {
        ts[k].col = col;
        ts[k].id = k;
        ts[k].end_ns = 1000 + (k == 1 ? 3200000000ULL : 4500000000ULL);
        for (int i = 0; i < COL_PER_THREAD; i++) {
            /* increasing times spread over the thread's span, one in 17 a failure */
            ts[k].times[i] = 1000 + (ts[k].end_ns - 1001) * (uint64_t)i / COL_PER_THREAD;
            ts[k].values[i] = latency(&seed);
            ts[k].failed[i] = (rnd(&seed) % 17) == 0;
        }
    }
    for (int k = 0; k < COL_THREADS; k++)
        ck_assert_int_eq(pthread_create(&tid[k], NULL, col_thread_main, &ts[k]), 0);
    for (int k = 0; k < COL_THREADS; k++)
        pthread_join(tid[k], NULL);
    s = kb_hlog_collector_finish(col, err, sizeof(err));
    ck_assert_msg(s != NULL, "%s", err);
    ck_assert_uint_eq(kb_hlog_series_len(s), nint);
    ck_assert_double_eq_tol(kb_hlog_series_row(s, 0)->length_s, 1.0, 1e-9);
    ck_assert_double_eq_tol(kb_hlog_series_row(s, 4)->length_s, 0.5, 1e-6);
    tmpdir_make(&t);
    snprintf(path, sizeof(path), "%s/expect.json", t.path);
    ck_assert_ptr_nonnull(f = fopen(path, "w"));
    fprintf(f, "{\"intervals\": [");
    for (size_t iv = 0; iv < nint; iv++) {
        int first = 1, errors = 0;
        fprintf(f, "%s{\"values\": [", iv ? ", " : "");
        for (int k = 0; k < COL_THREADS; k++)
            for (int i = 0; i < COL_PER_THREAD; i++) {
                if ((ts[k].times[i] - 1000) / 1000000000ULL != iv)
                    continue;
                if (ts[k].failed[i]) {
                    errors++;
                    continue;
                }
                fprintf(f, "%s%lld", first ? "" : ",", (long long)ts[k].values[i]);
                first = 0;
            }
        fprintf(f, "], \"errors\": %d}", errors);
    }
    fprintf(f, "]}\n");
    ck_assert_int_eq(fclose(f), 0);
    {
        char hlog[512], csv[512];
        snprintf(hlog, sizeof(hlog), "%s/point.hlog", t.path);
        snprintf(csv, sizeof(csv), "%s/point.csv", t.path);
        ck_assert_msg(kb_hlog_series_write(s, hlog, csv, err, sizeof(err)) == 0, "%s", err);
    }
    ck_assert_int_eq(decode_check(t.path), 0);
    kb_hlog_series_free(s);
    kb_hlog_collector_free(col);
    tmpdir_remove(&t);
}
END_TEST

static Suite *suite(void)
{
    Suite *s = suite_create("hlog");
    TCase *tc = tcase_create("hlog");

    tcase_set_timeout(tc, 60);
    tcase_add_test(tc, test_roundtrip_through_independent_decoder);
    tcase_add_test(tc, test_untagged_lines_and_header);
    tcase_add_test(tc, test_decoder_refuses_a_corrupted_log);
    tcase_add_test(tc, test_unit_line_tells_ns_from_older_us_logs);
    tcase_add_test(tc, test_rows_match_histogram);
    tcase_add_test(tc, test_bounded_values_flag_their_figures);
    tcase_add_test(tc, test_atomic_write_leaves_no_temporary);
    tcase_add_test(tc, test_collector_merges_threads_by_interval);
    suite_add_tcase(s, tc);
    return s;
}

int main(void)
{
    return kb_check_run(suite(), "hlog");
}
