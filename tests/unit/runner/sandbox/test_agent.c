/* test_agent.c -- runner/agent: the command parser accepts the suite's own commands and
 * refuses everything else (the whole of the agent's attack surface before any action). */
#define _POSIX_C_SOURCE 200809L
#include "runner/sandbox/agent.h"
#include "runner/util/root.h"
#include "tests/lib/kb_check.h"

#include <string.h>

static struct kb_contract contract;

static void setup(void)
{
    char err[256];
    ck_assert_msg(kb_contract_load(kb_root_contract(), &contract, err, sizeof(err)) == 0,
                  "%s", err);
}

static void teardown(void)
{
    kb_contract_free(&contract);
}

static int parse(const char *line, struct kb_agent_cmd *cmd, char *err, size_t errlen)
{
    return kb_agent_parse(&contract, line, cmd, err, errlen);
}

START_TEST(test_accepts_each_verb)
{
    static const struct { const char *line; enum kb_agent_verb verb; } ok[] = {
        { "identity", KB_AGENT_IDENTITY }, { "sample", KB_AGENT_SAMPLE },
        { "limits", KB_AGENT_LIMITS }, { "stop", KB_AGENT_STOP }, { "quit", KB_AGENT_QUIT },
        { "identity  ", KB_AGENT_IDENTITY },
    };
    struct kb_agent_cmd cmd;
    char err[256];

    for (size_t i = 0; i < sizeof(ok) / sizeof(ok[0]); i++) {
        ck_assert_msg(parse(ok[i].line, &cmd, err, sizeof(err)) == 0, "%s: %s", ok[i].line, err);
        ck_assert_int_eq(cmd.verb, ok[i].verb);
    }
}
END_TEST

START_TEST(test_start_takes_every_contract_runtime_and_control)
{
    struct kb_agent_cmd cmd;
    char line[128], err[256];

    for (size_t i = 0; i <= contract.nruntimes; i++) {
        const char *name = i < contract.nruntimes ? contract.runtimes[i].name : "control";
        snprintf(line, sizeof(line), "start %s %d", name, 8000 + (int)i);
        ck_assert_msg(parse(line, &cmd, err, sizeof(err)) == 0, "%s: %s", line, err);
        ck_assert_int_eq(cmd.verb, KB_AGENT_START);
        ck_assert_str_eq(cmd.runtime, name);
        ck_assert_int_eq(cmd.port, 8000 + (int)i);
    }
}
END_TEST

START_TEST(test_refuses_everything_else)
{
    static const char *bad[] = {
        "", " ", "rm -rf /", "start", "start go", "start go 0", "start go 65536",
        "start go 80x", "start go -1", "start go 80 extra", "start /bin/sh 80",
        "start ../go 80", "start gray-static; 80", "sample now", "stop all", "IDENTITY",
        "GET / HTTP/1.1", "identityx", "startgo 80", "quit please",
    };
    struct kb_agent_cmd cmd;
    char err[256];

    for (size_t i = 0; i < sizeof(bad) / sizeof(bad[0]); i++) {
        err[0] = '\0';
        ck_assert_msg(parse(bad[i], &cmd, err, sizeof(err)) == -1, "accepted '%s'", bad[i]);
        ck_assert_msg(strstr(err, "refused") != NULL, "'%s': %s", bad[i], err);
    }
}
END_TEST

START_TEST(test_refuses_an_overlong_line)
{
    char line[KB_AGENT_LINE_MAX + 8], err[256];
    struct kb_agent_cmd cmd;

    memset(line, 'a', sizeof(line) - 1);
    line[sizeof(line) - 1] = '\0';
    memcpy(line, "identity", 8);
    ck_assert_int_eq(parse(line, &cmd, err, sizeof(err)), -1);
}
END_TEST

static Suite *suite(void)
{
    Suite *s = suite_create("agent");
    TCase *tc = tcase_create("parse");

    tcase_add_checked_fixture(tc, setup, teardown);
    tcase_add_test(tc, test_accepts_each_verb);
    tcase_add_test(tc, test_start_takes_every_contract_runtime_and_control);
    tcase_add_test(tc, test_refuses_everything_else);
    tcase_add_test(tc, test_refuses_an_overlong_line);
    suite_add_tcase(s, tc);
    return s;
}

int main(void)
{
    return kb_check_run(suite(), "agent");
}
