/* test_evidence.c -- atomic writes leave only the final file (every other property of them:
 * test_atomicfile), fixture identity follows
 * every byte of the sources, mkdirs nests, a directory to write in must be one's own, an
 * evidence file is read bounded (a regular file, under a size cap) and load figures no
 * measurement gives are refused. (SHA-256 itself: test_digest.) */
#define _GNU_SOURCE
#include "runner/util/evidence.h"
#include "runner/util/paths.h"
#include "runner/util/identity.h"
#include "tests/lib/kb_check.h"

#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <sys/stat.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

static char dir[64];

static void setup(void)
{
    snprintf(dir, sizeof(dir), "/tmp/kb-evidence-XXXXXX");
    ck_assert_ptr_nonnull(mkdtemp(dir));
}

static void teardown(void)
{
    char cmd[128];
    snprintf(cmd, sizeof(cmd), "rm -rf %s", dir);
    ck_assert_int_eq(system(cmd), 0);
}

static size_t entries(const char *d)
{
    DIR *h = opendir(d);
    struct dirent *e;
    size_t n = 0;
    while (h && (e = readdir(h)))
        n += e->d_name[0] != '.';
    if (h)
        closedir(h);
    return n;
}

START_TEST(atomic_write_and_json)
{
    char path[128], err[256], buf[64] = "";
    FILE *f;
    json_t *j = json_pack("{s:i}", "a", 1), *back;
    ck_assert_int_eq(kb_write_atomic(kb_path(path, sizeof(path), dir, "x.txt"), "hello", 5, err,
                                     sizeof(err)), 0);
    f = fopen(path, "r");
    ck_assert_ptr_nonnull(fgets(buf, sizeof(buf), f));
    fclose(f);
    ck_assert_str_eq(buf, "hello");
    ck_assert_int_eq(kb_write_json_atomic(kb_path(path, sizeof(path), dir, "y.json"), j, err,
                                          sizeof(err)), 0);
    back = json_load_file(path, 0, NULL);
    ck_assert(json_equal(back, j));
    ck_assert_uint_eq(entries(dir), 2);   /* no temporary files left */
    ck_assert_int_eq(kb_write_atomic("/nonexistent-dir/x", "a", 1, err, sizeof(err)), -1);
    ck_assert_ptr_nonnull(strstr(err, "/nonexistent-dir/x"));
    json_decref(j);
    json_decref(back);
}
END_TEST

START_TEST(identity_tracks_sources)
{
    char src[128], sub[160], path[200], err[256], *srcs[1] = { src }, *exe[1] = { "sh" };
    json_t *a, *b, *c;
    kb_path(src, sizeof(src), dir, "src");
    kb_path(sub, sizeof(sub), src, "deep/er");
    ck_assert_int_eq(kb_mkdirs(sub, err, sizeof(err)), 0);
    kb_write_atomic(kb_path(path, sizeof(path), sub, "f.c"), "int x;", 6, err, sizeof(err));
    a = kb_identity_of_files(exe, 1, srcs, 1, err, sizeof(err));
    b = kb_identity_of_files(exe, 1, srcs, 1, err, sizeof(err));
    ck_assert_ptr_nonnull(a);
    ck_assert(json_equal(a, b));
    ck_assert_ptr_nonnull(json_object_get(json_object_get(a, "files"), path));
    ck_assert_uint_eq(json_object_size(json_object_get(a, "files")), 2);  /* sh + f.c */
    kb_write_atomic(path, "int y;", 6, err, sizeof(err));
    c = kb_identity_of_files(exe, 1, srcs, 1, err, sizeof(err));
    ck_assert(!json_equal(json_object_get(a, "sha256"), json_object_get(c, "sha256")));
    exe[0] = "no-such-program-kb";
    ck_assert_ptr_null(kb_identity_of_files(exe, 1, srcs, 1, err, sizeof(err)));
    ck_assert_ptr_nonnull(strstr(err, "no-such-program-kb"));
    json_decref(a);
    json_decref(b);
    json_decref(c);
}
END_TEST

START_TEST(which_takes_newest_versioned_name)
{
    char a[128], b[128], out[256], err[256];
    const char *old = getenv("PATH");
    char *saved = strdup(old ? old : "");
    kb_write_atomic(kb_path(a, sizeof(a), dir, "kbprog1.2"), "#!/bin/sh\n", 10, err, sizeof(err));
    kb_write_atomic(kb_path(b, sizeof(b), dir, "kbprog1.10"), "#!/bin/sh\n", 10, err, sizeof(err));
    chmod(a, 0755);
    chmod(b, 0755);
    setenv("PATH", dir, 1);
    ck_assert_int_eq(kb_which("kbprog", out, sizeof(out)), 0);
    ck_assert_str_eq(out, b);          /* 1.10 > 1.2, as sort -V says */
    ck_assert_int_eq(kb_which("kbprogx", out, sizeof(out)), -1);
    setenv("PATH", saved, 1);
    free(saved);
}
END_TEST

START_TEST(host_identity)
{
    json_t *h = kb_host_identity();
    ck_assert_ptr_nonnull(json_string_value(json_object_get(h, "kernel")));
    /* the runner links no libmicrohttpd: the version recorded is the fixture's */
    ck_assert_ptr_null(json_object_get(h, "libmicrohttpd"));
    json_decref(h);
}
END_TEST

START_TEST(mhd_version_is_the_fixtures)
{
    json_t *v = json_pack("{s:s,s:s}", "go", "go version go1.19.8 linux/amd64", "gray-static",
                          "gray-static 1.0 (libmicrohttpd 0.9.75, jansson 2.14)");
    json_t *m = kb_fixture_mhd_version(v), *none;
    ck_assert_str_eq(json_string_value(m), "0.9.75");
    json_decref(m);
    json_object_set_new(v, "gray-static", json_string("unknown (not in the image's identity)"));
    ck_assert(json_is_null(none = kb_fixture_mhd_version(v)));
    json_decref(none);
    json_object_del(v, "gray-static");
    ck_assert(json_is_null(none = kb_fixture_mhd_version(v)));
    json_decref(none);
    /* whichever runtime's line names it: no runtime is assumed to be the one */
    json_object_set_new(v, "mine", json_string("mine 2.1 (libmicrohttpd 1.0.1)"));
    m = kb_fixture_mhd_version(v);
    ck_assert_str_eq(json_string_value(m), "1.0.1");
    json_decref(m);
    json_decref(v);
}
END_TEST

/* A name that would not fit is refused, never cut short into another file's name; and what
 * it is passed on to refuses the empty name it leaves, rather than write "" + a suffix in
 * the current directory. */
START_TEST(a_path_too_long_is_refused_not_truncated)
{
    char out[16], err[256], cwd[KB_PATH_MAX], here[64];
    struct stat st;
    int before = 0, after = 0;
    DIR *d;
    ck_assert_ptr_eq(kb_path(out, sizeof(out), "/tmp", "abc"), out);
    ck_assert_str_eq(out, "/tmp/abc");
    ck_assert_ptr_null(kb_path(out, sizeof(out), "/tmp/a-long-dir", "file"));
    ck_assert_str_eq(out, "");
    ck_assert_ptr_null(kb_path(out, sizeof(out), "/tmp", "exactly-ten"));   /* 16 with NUL */
    ck_assert_int_eq(kb_mkdirs(out, err, sizeof(err)), -1);
    ck_assert_ptr_nonnull(strstr(err, "too long"));
    ck_assert(!kb_file_exists(out) && !kb_file_exists(NULL));
    ck_assert_ptr_nonnull(getcwd(cwd, sizeof(cwd)));
    snprintf(here, sizeof(here), "/tmp/kb-unit-path-XXXXXX");
    ck_assert_ptr_nonnull(mkdtemp(here));
    ck_assert_int_eq(chdir(here), 0);
    for (d = opendir("."); d && readdir(d); before++)
        ;
    closedir(d);
    ck_assert_int_eq(kb_write_atomic(out, "x", 1, err, sizeof(err)), -1);
    ck_assert_int_eq(kb_write_json_atomic(NULL, json_null(), err, sizeof(err)), -1);
    for (d = opendir("."); d && readdir(d); after++)
        ;
    closedir(d);
    ck_assert_int_eq(after, before);            /* nothing written here */
    ck_assert_int_eq(chdir(cwd), 0);
    ck_assert_int_eq(rmdir(here), 0);
    ck_assert_int_eq(stat(here, &st), -1);
    /* a run directory past KB_RUN_DIR_MAX is refused where it is made absolute */
    {
        char big[KB_RUN_DIR_MAX + 10], abs[KB_RUN_DIR_MAX];
        memset(big, 'r', sizeof(big) - 1);
        big[0] = '/';
        big[sizeof(big) - 1] = '\0';
        ck_assert_int_eq(kb_abspath(big, abs, sizeof(abs), err, sizeof(err)), -1);
    }
}
END_TEST

START_TEST(relative_paths_become_absolute)
{
    /* a run directory named relative to where the runner started names the same place to
     * a fixture that changes into its own directory */
    char out[256], want[256], err[256], small[8];
    ck_assert_int_eq(chdir(dir), 0);
    ck_assert_int_eq(kb_abspath("runs/quick-x", out, sizeof(out), err, sizeof(err)), 0);
    snprintf(want, sizeof(want), "%s/runs/quick-x", dir);
    ck_assert_str_eq(out, want);
    ck_assert_int_eq(kb_abspath("./runs", out, sizeof(out), err, sizeof(err)), 0);
    snprintf(want, sizeof(want), "%s/runs", dir);
    ck_assert_str_eq(out, want);
    ck_assert_int_eq(kb_abspath(".", out, sizeof(out), err, sizeof(err)), 0);
    ck_assert_str_eq(out, dir);
    ck_assert_int_eq(kb_abspath("/srv/run", out, sizeof(out), err, sizeof(err)), 0);
    ck_assert_str_eq(out, "/srv/run");
    ck_assert_int_eq(kb_abspath("/srv/a-long-run", small, sizeof(small), err, sizeof(err)), -1);
    ck_assert(strstr(err, "too long"));
    ck_assert_int_eq(chdir("/"), 0);
}
END_TEST

START_TEST(a_directory_to_write_in_must_be_ones_own)
{
    char sub[128], link[128], err[512];
    kb_path(sub, sizeof(sub), dir, "run");
    ck_assert_int_eq(kb_dir_own(sub, 1, err, sizeof(err)), 0);      /* absent: we make it */
    ck_assert_int_eq(kb_dir_own(sub, 0, err, sizeof(err)), -1);
    ck_assert_int_eq(mkdir(sub, 0755), 0);
    ck_assert_int_eq(chmod(sub, 0755), 0);
    ck_assert_int_eq(kb_dir_own(sub, 0, err, sizeof(err)), 0);
    ck_assert_int_eq(chmod(sub, 0775), 0);
    ck_assert_int_eq(kb_dir_own(sub, 1, err, sizeof(err)), -1);
    ck_assert_ptr_nonnull(strstr(err, "mode 0775"));
    ck_assert_int_eq(chmod(sub, 0755), 0);
    kb_path(link, sizeof(link), dir, "link");
    ck_assert_int_eq(symlink(sub, link), 0);
    ck_assert_int_eq(kb_dir_own(link, 1, err, sizeof(err)), -1);
    ck_assert_ptr_nonnull(strstr(err, "not a symlink"));
    if (geteuid() == 0) {
        ck_assert_int_eq(chown(sub, 65534, 65534), 0);
        ck_assert_int_eq(kb_dir_own(sub, 1, err, sizeof(err)), -1);
        ck_assert_ptr_nonnull(strstr(err, "owned by uid 65534"));
    }
}
END_TEST

static void put(const char *file, const char *text)
{
    char path[256];
    FILE *f;
    snprintf(path, sizeof(path), "%s/%s", dir, file);
    ck_assert_ptr_nonnull(f = fopen(path, "w"));
    fputs(text, f);
    fclose(f);
}

/* issue 38: a FIFO as verdict.json hung a resumed knee for ever, a 300 MB one took 57 s */
START_TEST(evidence_is_read_bounded_from_regular_files_only)
{
    char path[256], link[256];
    json_error_t je;
    json_t *j;
    int fd;
    put("v.json", "{\"verdict\": \"controlled\"}");
    snprintf(path, sizeof(path), "%s/v.json", dir);
    ck_assert_ptr_nonnull(j = kb_evidence_load(path, &je));
    ck_assert_str_eq(json_string_value(json_object_get(j, "verdict")), "controlled");
    json_decref(j);

    snprintf(path, sizeof(path), "%s/fifo.json", dir);
    ck_assert_int_eq(mkfifo(path, 0600), 0);
    ck_assert_ptr_null(kb_evidence_load(path, &je));
    ck_assert_ptr_nonnull(strstr(je.text, "not a regular file"));

    snprintf(path, sizeof(path), "%s/huge.json", dir);
    ck_assert_int_ge(fd = open(path, O_WRONLY | O_CREAT, 0600), 0);
    ck_assert_int_eq(ftruncate(fd, (off_t)KB_EVIDENCE_MAX_BYTES + 1), 0);
    close(fd);
    ck_assert_ptr_null(kb_evidence_load(path, &je));
    ck_assert_ptr_nonnull(strstr(je.text, "larger"));

    snprintf(path, sizeof(path), "%s/v.json", dir);
    snprintf(link, sizeof(link), "%s/link.json", dir);
    ck_assert_int_eq(symlink(path, link), 0);
    ck_assert_ptr_null(kb_evidence_load(link, &je));

    snprintf(path, sizeof(path), "%s/absent.json", dir);
    ck_assert_ptr_null(kb_evidence_load(path, &je));
    ck_assert_int_eq(errno, ENOENT);
}
END_TEST

static int check(const char *text, char *err, size_t errlen)
{
    json_t *o = json_loads(text, 0, NULL);
    int rc;
    ck_assert_ptr_nonnull(o);
    rc = kb_evidence_check_load(o, "load.json", err, errlen);
    json_decref(o);
    return rc;
}

/* issue 38: knee took delivery -5 with p99 -1 as a held rate, report took delivery inf */
START_TEST(load_figures_no_measurement_gives_are_refused)
{
    char err[512];
    const char *ok = "{\"delivery\": 1.0002, \"warmup_s\": 1, \"duration_s\": 2, "
                     "\"achieved_rps\": 2000.4, \"scheduled\": 4000, \"completed\": 3990, "
                     "\"errors\": {\"total\": 10, \"timeout\": 10}, "
                     "\"corrected_us\": {\"p50\": 100, \"p99\": 900, \"max\": null}}";
    static const char *const bad[] = {
        "{\"delivery\": -5}",
        "{\"delivery\": 1e308}",
        "{\"delivery\": 1.6, \"warmup_s\": 1, \"duration_s\": 2}",
        "{\"delivery\": 1, \"corrected_us\": {\"p99\": -1}}",
        "{\"delivery\": 1, \"lag_us\": {\"max\": 1e400}}",
        "{\"delivery\": 1, \"achieved_rps\": -3}",
        "{\"delivery\": 1, \"completed\": -5}",
        "{\"delivery\": 1, \"scheduled\": 10, \"completed\": 10, \"errors\": {\"total\": -1}}",
        "{\"delivery\": 1, \"scheduled\": 10, \"completed\": 5, \"errors\": {\"total\": 1}}",
    };
    ck_assert_msg(check(ok, err, sizeof(err)) == 0, "%s", err);
    for (size_t i = 0; i < sizeof(bad) / sizeof(bad[0]); i++) {
        json_t *o = json_loads(bad[i], 0, NULL);
        /* 1e400 is no JSON number jansson reads: refused before any check */
        if (!o)
            continue;
        json_decref(o);
        err[0] = '\0';
        ck_assert_msg(check(bad[i], err, sizeof(err)) < 0, "accepted %s", bad[i]);
        ck_assert_msg(strstr(err, "load.json"), "%s: %s", bad[i], err);
    }
}
END_TEST

static Suite *suite(void)
{
    Suite *s = suite_create("evidence");
    TCase *tc = tcase_create("files");
    tcase_add_checked_fixture(tc, setup, teardown);
    tcase_add_test(tc, atomic_write_and_json);
    tcase_add_test(tc, identity_tracks_sources);
    tcase_add_test(tc, which_takes_newest_versioned_name);
    tcase_add_test(tc, host_identity);
    tcase_add_test(tc, mhd_version_is_the_fixtures);
    tcase_add_test(tc, relative_paths_become_absolute);
    tcase_add_test(tc, a_path_too_long_is_refused_not_truncated);
    tcase_add_test(tc, a_directory_to_write_in_must_be_ones_own);
    tcase_add_test(tc, evidence_is_read_bounded_from_regular_files_only);
    tcase_add_test(tc, load_figures_no_measurement_gives_are_refused);
    suite_add_tcase(s, tc);
    return s;
}

int main(void)
{
    return kb_check_run(suite(), "evidence");
}
