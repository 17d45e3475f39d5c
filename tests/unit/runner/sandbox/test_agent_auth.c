/* test_agent_auth.c -- runner/sandbox/agent_auth: a token file counts only when its user
 * alone may read it, a made one is so, and a proof is HMAC-SHA256 of the greeting: right
 * for the right token and message only. */
#define _GNU_SOURCE
#include "runner/sandbox/agent_auth.h"
#include "tests/lib/kb_check.h"
#include "tests/unit/runner/tmpdir.h"

#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

static char err[512], tok[KB_AGENT_TOKEN_MAX], path[128];

static void setup(void)
{
    kb_tmp_setup();
    snprintf(path, sizeof(path), "%s/token", kb_tmp);
}

static void teardown(void)
{
    kb_tmp_teardown();
}

START_TEST(a_token_counts_only_when_private)
{
    char link[160];
    kb_tmp_put("token", "0123456789abcdef-secret\n");
    ck_assert_int_eq(chmod(path, 0644), 0);
    ck_assert_int_eq(kb_agent_token_load(path, tok, sizeof(tok), err, sizeof(err)), -1);
    ck_assert_ptr_nonnull(strstr(err, "mode 0644"));
    ck_assert_int_eq(chmod(path, 0600), 0);
    ck_assert_int_eq(kb_agent_token_load(path, tok, sizeof(tok), err, sizeof(err)), 0);
    ck_assert_str_eq(tok, "0123456789abcdef-secret");   /* the newline is not the secret */
    snprintf(link, sizeof(link), "%s/link", kb_tmp);
    ck_assert_int_eq(symlink(path, link), 0);
    ck_assert_int_eq(kb_agent_token_load(link, tok, sizeof(tok), err, sizeof(err)), -1);
    if (geteuid() == 0) {
        ck_assert_int_eq(chown(path, 65534, 65534), 0);
        ck_assert_int_eq(kb_agent_token_load(path, tok, sizeof(tok), err, sizeof(err)), -1);
        ck_assert_ptr_nonnull(strstr(err, "uid 65534"));
    }
    kb_tmp_put("short", "tiny\n");
    snprintf(link, sizeof(link), "%s/short", kb_tmp);
    ck_assert_int_eq(chmod(link, 0600), 0);
    ck_assert_int_eq(kb_agent_token_load(link, tok, sizeof(tok), err, sizeof(err)), -1);
}
END_TEST

START_TEST(a_made_token_is_fresh_and_private)
{
    char again[KB_AGENT_TOKEN_MAX], back[KB_AGENT_TOKEN_MAX];
    struct stat st;
    ck_assert_int_eq(kb_agent_token_make(path, tok, sizeof(tok), err, sizeof(err)), 0);
    ck_assert_uint_eq(strlen(tok), 64);
    ck_assert_int_eq(lstat(path, &st), 0);
    ck_assert_int_eq(st.st_mode & 0777, 0600);
    ck_assert_int_eq(kb_agent_token_load(path, back, sizeof(back), err, sizeof(err)), 0);
    ck_assert_str_eq(back, tok);
    ck_assert_int_eq(kb_agent_token_make(path, again, sizeof(again), err, sizeof(err)), 0);
    ck_assert_str_ne(again, tok);
}
END_TEST

START_TEST(a_proof_is_for_one_token_and_one_greeting)
{
    char proof[KB_AGENT_PROOF_HEX], n1[KB_AGENT_NONCE_HEX], n2[KB_AGENT_NONCE_HEX];
    /* RFC 4231 test case 2: key "Jefe" */
    ck_assert_int_eq(kb_agent_proof("Jefe", "what do ya want for nothing?", proof), 0);
    ck_assert_str_eq(proof, "5bdcc146bf60754e6a042426089575c75a003f089d2739839dec58b964ec3843");
    ck_assert(kb_agent_proof_ok("Jefe", "what do ya want for nothing?", proof));
    ck_assert(!kb_agent_proof_ok("Jeff", "what do ya want for nothing?", proof));
    ck_assert(!kb_agent_proof_ok("Jefe", "what do ya want for nothing!", proof));
    ck_assert(!kb_agent_proof_ok("Jefe", "what do ya want for nothing?", "5bdc"));
    ck_assert_int_eq(kb_agent_nonce(n1), 0);
    ck_assert_int_eq(kb_agent_nonce(n2), 0);
    ck_assert_uint_eq(strlen(n1), 32);
    ck_assert_str_ne(n1, n2);
}
END_TEST

static Suite *suite(void)
{
    Suite *s = suite_create("agent_auth");
    TCase *tc = tcase_create("token");
    tcase_add_checked_fixture(tc, setup, teardown);
    tcase_add_test(tc, a_token_counts_only_when_private);
    tcase_add_test(tc, a_made_token_is_fresh_and_private);
    tcase_add_test(tc, a_proof_is_for_one_token_and_one_greeting);
    suite_add_tcase(s, tc);
    return s;
}

int main(void)
{
    return kb_check_run(suite(), "agent_auth");
}
