/* test_digest.c -- SHA-256 to hex: the FIPS 180-2 vectors for a file and a buffer, pieces
 * fed one by one equal the whole, strings are fed with their NUL (so a list hashes without
 * ambiguity), a missing file is an error naming it. */
#define _GNU_SOURCE
#include "runner/util/digest.h"
#include "tests/lib/kb_check.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#define ABC "ba7816bf8f01cfea414140de5dae2223b00361a396177a9cb410ff61f20015ad"
#define EMPTY "e3b0c44298fc1c149afbf4c8996fb92427ae41e4649b934ca495991b7852b855"

START_TEST(buffer_vectors)
{
    char hex[KB_SHA256_HEX];
    ck_assert_int_eq(kb_sha256_buf("abc", 3, hex), 0);
    ck_assert_str_eq(hex, ABC);
    ck_assert_int_eq(kb_sha256_buf("", 0, hex), 0);
    ck_assert_str_eq(hex, EMPTY);
}
END_TEST

START_TEST(file_vector_and_missing_file)
{
    char path[] = "/tmp/kb-digest-XXXXXX", hex[KB_SHA256_HEX], err[256];
    int fd = mkstemp(path);
    ck_assert_int_ge(fd, 0);
    ck_assert_int_eq(write(fd, "abc", 3), 3);
    close(fd);
    ck_assert_int_eq(kb_sha256_file(path, hex, err, sizeof(err)), 0);
    ck_assert_str_eq(hex, ABC);
    unlink(path);
    ck_assert_int_eq(kb_sha256_file(path, hex, err, sizeof(err)), -1);
    ck_assert_ptr_nonnull(strstr(err, path));
    ck_assert_str_eq(hex, "");
}
END_TEST

START_TEST(pieces_equal_the_whole)
{
    char whole[KB_SHA256_HEX], parts[KB_SHA256_HEX], a[KB_SHA256_HEX], b[KB_SHA256_HEX];
    struct kb_digest *d = kb_digest_new();
    kb_digest_add(d, "a", 1);
    kb_digest_add(d, "bc", 2);
    ck_assert_int_eq(kb_digest_hex(d, parts), 0);
    ck_assert_str_eq(parts, ABC);
    /* a string goes in with its NUL */
    d = kb_digest_new();
    kb_digest_str(d, "ab");
    kb_digest_str(d, NULL);
    ck_assert_int_eq(kb_digest_hex(d, a), 0);
    ck_assert_int_eq(kb_sha256_buf("ab\0", 4, whole), 0);
    ck_assert_str_eq(a, whole);
    /* ("ab", "c") and ("a", "bc") differ */
    d = kb_digest_new();
    kb_digest_str(d, "ab");
    kb_digest_str(d, "c");
    kb_digest_hex(d, a);
    d = kb_digest_new();
    kb_digest_str(d, "a");
    kb_digest_str(d, "bc");
    kb_digest_hex(d, b);
    ck_assert_str_ne(a, b);
}
END_TEST

START_TEST(null_digest_fails_once_at_the_end)
{
    char hex[KB_SHA256_HEX];
    kb_digest_add(NULL, "x", 1);
    kb_digest_str(NULL, "x");
    ck_assert_int_eq(kb_digest_hex(NULL, hex), -1);
    ck_assert_str_eq(hex, "");
}
END_TEST

static Suite *suite(void)
{
    Suite *s = suite_create("digest");
    TCase *tc = tcase_create("sha256");
    tcase_add_test(tc, buffer_vectors);
    tcase_add_test(tc, file_vector_and_missing_file);
    tcase_add_test(tc, pieces_equal_the_whole);
    tcase_add_test(tc, null_digest_fails_once_at_the_end);
    suite_add_tcase(s, tc);
    return s;
}

int main(void)
{
    return kb_check_run(suite(), "digest");
}
