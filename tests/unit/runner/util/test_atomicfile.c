/* test_atomicfile.c -- the one atomic-file API (runner/util/atomicfile.h): a symlink planted
 * at a temporary name or at the final name is never written through; a write that fails
 * (the file size limit standing in for a full disk) leaves neither a temporary nor a final
 * file, and says which file; a device, a FIFO or a link to either is written through and
 * stays what it was, any other link is refused; the final name holds the old contents until the commit and the
 * whole new ones after it; an abort leaves the old file as it was. */
#define _GNU_SOURCE
#include "runner/util/atomicfile.h"
#include "runner/util/paths.h"
#include "tests/lib/kb_check.h"
#include "tests/unit/runner/tmpdir.h"

#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <signal.h>
#include <string.h>
#include <sys/resource.h>
#include <sys/stat.h>
#include <sys/sysmacros.h>
#include <unistd.h>

static char err[KB_PATH_MAX + 512];

static char *in_tmp(char *out, size_t len, const char *file)
{
    snprintf(out, len, "%s/%s", kb_tmp, file);
    return out;
}

/* The whole file (at most 64 KiB), "" when it cannot be read. */
static const char *slurp(const char *file)
{
    static char buf[65536];
    char path[256];
    FILE *f = fopen(in_tmp(path, sizeof(path), file), "r");
    size_t n = f ? fread(buf, 1, sizeof(buf) - 1, f) : 0;
    buf[n] = '\0';
    if (f)
        fclose(f);
    return buf;
}

/* The directory's entries, sorted, space separated. */
static const char *listing(void)
{
    static char out[4096];
    struct dirent **v;
    int n = scandir(kb_tmp, &v, NULL, alphasort);
    out[0] = '\0';
    for (int i = 0; i < n; i++) {
        if (v[i]->d_name[0] != '.')
            snprintf(out + strlen(out), sizeof(out) - strlen(out), "%s%s", out[0] ? " " : "",
                     v[i]->d_name);
        free(v[i]);
    }
    free(v);
    return out;
}

static int is_link(const char *file)
{
    char path[256];
    struct stat st;
    return lstat(in_tmp(path, sizeof(path), file), &st) == 0 && S_ISLNK(st.st_mode);
}

/* The temporary names a writer of file in this process tries first. */
static char *tmp_name(char *out, size_t len, const char *file, int n)
{
    snprintf(out, len, "%s/%s.tmp.%ld.%d", kb_tmp, file, (long)getpid(), n);
    return out;
}

START_TEST(writes_the_whole_file_and_nothing_else)
{
    char path[256];
    struct stat st;
    json_t *j = json_pack("{s:i,s:s}", "schema_version", 1, "a", "b");
    ck_assert_int_eq(kb_afile_write(in_tmp(path, sizeof(path), "x.txt"), "hello", 5, err,
                                    sizeof(err)), 0);
    ck_assert_str_eq(slurp("x.txt"), "hello");
    ck_assert_int_eq(stat(path, &st), 0);
    ck_assert_int_eq(st.st_mode & 0777, 0644);
    ck_assert_int_eq(kb_afile_write_json(in_tmp(path, sizeof(path), "y.json"), j, err,
                                         sizeof(err)), 0);
    ck_assert_str_eq(slurp("y.json"), "{\n  \"schema_version\": 1,\n  \"a\": \"b\"\n}\n");
    ck_assert_str_eq(listing(), "x.txt y.json");
    json_decref(j);
}
END_TEST

START_TEST(a_symlink_planted_at_a_temporary_name_is_never_followed)
{
    /* someone who can write the directory links the names a writer tries first to a file
     * of ours and to one that does not exist yet */
    char path[256], t0[256], t1[256], ghost[256];
    struct kb_afile a;
    kb_tmp_put("victim", "untouched");
    in_tmp(ghost, sizeof(ghost), "ghost");
    ck_assert_int_eq(symlink(in_tmp(path, sizeof(path), "victim"),
                             tmp_name(t0, sizeof(t0), "x.txt", 0)), 0);
    ck_assert_int_eq(symlink(ghost, tmp_name(t1, sizeof(t1), "x.txt", 1)), 0);
    ck_assert_int_eq(kb_afile_write(in_tmp(path, sizeof(path), "x.txt"), "hello", 5, err,
                                    sizeof(err)), 0);
    ck_assert_str_eq(slurp("victim"), "untouched");
    ck_assert_int_eq(access(ghost, F_OK), -1);
    ck_assert_str_eq(slurp("x.txt"), "hello");
    ck_assert(!is_link("x.txt"));
    /* the planted names are someone else's: skipped, never removed */
    ck_assert(is_link(strrchr(t0, '/') + 1) && is_link(strrchr(t1, '/') + 1));

    /* the stream does the same */
    ck_assert_int_eq(symlink(ghost, tmp_name(t0, sizeof(t0), "s.csv", 0)), 0);
    ck_assert_int_eq(kb_afile_open(&a, in_tmp(path, sizeof(path), "s.csv"), err, sizeof(err)), 0);
    fputs("t_s\n", a.f);
    ck_assert_int_eq(kb_afile_commit(&a, err, sizeof(err)), 0);
    ck_assert_int_eq(access(ghost, F_OK), -1);
    ck_assert_str_eq(slurp("s.csv"), "t_s\n");
    ck_assert_str_eq(slurp("victim"), "untouched");
}
END_TEST

START_TEST(a_symlink_planted_at_the_final_name_is_refused_not_followed)
{
    char path[256], victim[256];
    struct kb_afile a;
    kb_tmp_put("victim", "untouched");
    ck_assert_int_eq(symlink(in_tmp(victim, sizeof(victim), "victim"),
                             in_tmp(path, sizeof(path), "load.json")), 0);
    ck_assert_int_eq(kb_afile_write(path, "{}\n", 3, err, sizeof(err)), -1);
    ck_assert_ptr_nonnull(strstr(err, "load.json"));
    ck_assert_ptr_nonnull(strstr(err, "symbolic link"));
    ck_assert_str_eq(slurp("victim"), "untouched");
    ck_assert(is_link("load.json"));

    ck_assert_int_eq(symlink(in_tmp(victim, sizeof(victim), "nowhere"),
                             in_tmp(path, sizeof(path), "samples.csv")), 0);
    ck_assert_int_eq(kb_afile_open(&a, path, err, sizeof(err)), -1);
    ck_assert_ptr_null(a.f);
    ck_assert_int_eq(kb_afile_probe(path, err, sizeof(err)), -1);
    ck_assert(is_link("samples.csv"));
    ck_assert_str_eq(listing(), "load.json samples.csv victim");
}
END_TEST

static int is_kind(const char *file, mode_t kind)
{
    char path[256];
    struct stat st;
    return lstat(in_tmp(path, sizeof(path), file), &st) == 0 && (st.st_mode & S_IFMT) == kind;
}

/* A character device made here, as /dev/null (1,3) or /dev/full (1,7) are; skipped where
 * this user may not make one (mknod needs root). */
static int make_chr(const char *file, unsigned minor)
{
    char path[256];
    return mknod(in_tmp(path, sizeof(path), file), S_IFCHR | 0666, makedev(1, minor)) == 0;
}

/* issue 38: `load --json` at a device made it a regular file (a rename over it) */
START_TEST(a_character_device_is_written_through_never_replaced)
{
    char path[256];
    if (!make_chr("null", 3))
        return;
    in_tmp(path, sizeof(path), "null");
    ck_assert_int_eq(kb_afile_probe(path, err, sizeof(err)), 0);
    ck_assert_int_eq(kb_afile_write(path, "{}\n", 3, err, sizeof(err)), 0);
    ck_assert(is_kind("null", S_IFCHR));
    ck_assert_int_eq(make_chr("full", 7), 1);
    ck_assert_int_eq(kb_afile_write(in_tmp(path, sizeof(path), "full"), "{}\n", 3, err,
                                    sizeof(err)), -1);
    ck_assert_ptr_nonnull(strstr(err, "full"));
    ck_assert_ptr_nonnull(strstr(err, strerror(ENOSPC)));
    ck_assert(is_kind("full", S_IFCHR));
    ck_assert_str_eq(listing(), "full null");
}
END_TEST

START_TEST(a_fifo_is_written_through_or_refused_without_a_reader)
{
    char path[256], buf[16] = "";
    int rd;
    in_tmp(path, sizeof(path), "out.fifo");
    ck_assert_int_eq(mkfifo(path, 0600), 0);
    /* nobody reads: an error at once, never a writer blocked for ever */
    ck_assert_int_eq(kb_afile_write(path, "{}\n", 3, err, sizeof(err)), -1);
    ck_assert_ptr_nonnull(strstr(err, "no reader"));
    ck_assert(is_kind("out.fifo", S_IFIFO));
    rd = open(path, O_RDONLY | O_NONBLOCK);
    ck_assert_int_ge(rd, 0);
    ck_assert_int_eq(kb_afile_probe(path, err, sizeof(err)), 0);
    ck_assert_int_eq(kb_afile_write(path, "{}\n", 3, err, sizeof(err)), 0);
    ck_assert_int_eq(read(rd, buf, sizeof(buf) - 1), 3);
    ck_assert_str_eq(buf, "{}\n");
    close(rd);
    ck_assert(is_kind("out.fifo", S_IFIFO));
    ck_assert_str_eq(listing(), "out.fifo");
}
END_TEST

/* /dev/stdout is such a link: the output goes where standard output goes */
START_TEST(a_link_to_a_pipe_is_written_through_and_stays_a_link)
{
    char path[256], target[64], buf[16] = "";
    int p[2];
    ck_assert_int_eq(pipe(p), 0);
    snprintf(target, sizeof(target), "/proc/self/fd/%d", p[1]);
    ck_assert_int_eq(symlink(target, in_tmp(path, sizeof(path), "stdout")), 0);
    ck_assert_int_eq(kb_afile_write(path, "{}\n", 3, err, sizeof(err)), 0);
    ck_assert_int_eq(read(p[0], buf, sizeof(buf) - 1), 3);
    ck_assert_str_eq(buf, "{}\n");
    ck_assert(is_link("stdout"));
    close(p[0]);
    close(p[1]);
    ck_assert_str_eq(listing(), "stdout");
}
END_TEST

static int fill_then_fail(FILE *f, const void *arg)
{
    (void)arg;
    fputs("half a file", f);
    return -1;
}

START_TEST(a_failed_write_leaves_no_temporary_and_no_final_file)
{
    /* the file size limit fails a write as a full disk would (EFBIG for ENOSPC) */
    struct rlimit small = { 4096, 4096 };
    static char big[16384];
    char path[256];
    struct kb_afile a;
    memset(big, 'x', sizeof(big));
    signal(SIGXFSZ, SIG_IGN);
    ck_assert_int_eq(setrlimit(RLIMIT_FSIZE, &small), 0);

    ck_assert_int_eq(kb_afile_write(in_tmp(path, sizeof(path), "load.json"), big, sizeof(big),
                                    err, sizeof(err)), -1);
    ck_assert_ptr_nonnull(strstr(err, path));
    ck_assert_str_eq(listing(), "");

    /* a stream whose early write failed, its buffer flushed long before the commit */
    ck_assert_int_eq(kb_afile_open(&a, in_tmp(path, sizeof(path), "samples.csv"), err,
                                   sizeof(err)), 0);
    fwrite(big, 1, sizeof(big), a.f);
    fflush(a.f);
    ck_assert_int_eq(kb_afile_commit(&a, err, sizeof(err)), -1);
    ck_assert_ptr_null(a.f);
    ck_assert_ptr_nonnull(strstr(err, "samples.csv"));
    ck_assert_str_eq(listing(), "");

    /* a writer that says it could not write everything */
    ck_assert_int_eq(kb_afile_write_with(in_tmp(path, sizeof(path), "x.hgrm"), fill_then_fail,
                                         NULL, err, sizeof(err)), -1);
    ck_assert_ptr_nonnull(strstr(err, "x.hgrm"));
    ck_assert_str_eq(listing(), "");

    /* no directory to write in: nothing created, the file named */
    ck_assert_int_eq(kb_afile_write(in_tmp(path, sizeof(path), "no/such/dir.json"), "{}", 2,
                                    err, sizeof(err)), -1);
    ck_assert_ptr_nonnull(strstr(err, "no/such/dir.json"));
    ck_assert_str_eq(listing(), "");
}
END_TEST

START_TEST(the_final_name_holds_old_or_whole_new_contents_only)
{
    /* a reader at any moment sees the old file whole or the new one whole: never part */
    char path[256], line[64], want[65536] = "";
    struct kb_afile a;
    kb_tmp_put("series.csv", "old,whole\n");
    ck_assert_int_eq(kb_afile_open(&a, in_tmp(path, sizeof(path), "series.csv"), err,
                                   sizeof(err)), 0);
    for (int i = 0; i < 2000; i++) {
        snprintf(line, sizeof(line), "%d,%d\n", i, i * i);
        fputs(line, a.f);
        strcat(want, line);
        if (i % 250 == 0) {
            fflush(a.f);                          /* on disk under the temporary name */
            ck_assert_str_eq(slurp("series.csv"), "old,whole\n");
        }
    }
    ck_assert_str_eq(slurp("series.csv"), "old,whole\n");
    ck_assert_int_eq(kb_afile_commit(&a, err, sizeof(err)), 0);
    ck_assert_str_eq(slurp("series.csv"), want);
    ck_assert_str_eq(listing(), "series.csv");

    /* an abort leaves the old file as it was, and no temporary file */
    ck_assert_int_eq(kb_afile_open(&a, path, err, sizeof(err)), 0);
    fputs("replaced?\n", a.f);
    fflush(a.f);
    kb_afile_abort(&a);
    kb_afile_abort(&a);                           /* nothing open: a no-op */
    ck_assert_str_eq(slurp("series.csv"), want);
    ck_assert_str_eq(listing(), "series.csv");
}
END_TEST

START_TEST(two_writers_of_one_name_each_get_their_own_temporary_file)
{
    char path[256];
    struct kb_afile a, b;
    ck_assert_int_eq(kb_afile_open(&a, in_tmp(path, sizeof(path), "x"), err, sizeof(err)), 0);
    ck_assert_int_eq(kb_afile_open(&b, path, err, sizeof(err)), 0);
    ck_assert_str_ne(a.tmp, b.tmp);
    fputs("a\n", a.f);
    fputs("b\n", b.f);
    ck_assert_int_eq(kb_afile_commit(&a, err, sizeof(err)), 0);
    ck_assert_str_eq(slurp("x"), "a\n");
    ck_assert_int_eq(kb_afile_commit(&b, err, sizeof(err)), 0);
    ck_assert_str_eq(slurp("x"), "b\n");
    ck_assert_str_eq(listing(), "x");
}
END_TEST

static Suite *suite(void)
{
    Suite *s = suite_create("atomicfile");
    TCase *tc = tcase_create("files");
    tcase_add_checked_fixture(tc, kb_tmp_setup, kb_tmp_teardown);
    tcase_add_test(tc, writes_the_whole_file_and_nothing_else);
    tcase_add_test(tc, a_symlink_planted_at_a_temporary_name_is_never_followed);
    tcase_add_test(tc, a_symlink_planted_at_the_final_name_is_refused_not_followed);
    tcase_add_test(tc, a_character_device_is_written_through_never_replaced);
    tcase_add_test(tc, a_fifo_is_written_through_or_refused_without_a_reader);
    tcase_add_test(tc, a_link_to_a_pipe_is_written_through_and_stays_a_link);
    tcase_add_test(tc, a_failed_write_leaves_no_temporary_and_no_final_file);
    tcase_add_test(tc, the_final_name_holds_old_or_whole_new_contents_only);
    tcase_add_test(tc, two_writers_of_one_name_each_get_their_own_temporary_file);
    suite_add_tcase(s, tc);
    return s;
}

int main(void)
{
    return kb_check_run(suite(), "atomicfile");
}
