/* refuse.c -- a command's refusal of its command line (refuse.h). */
#include "runner/cli/refuse.h"

#include <stdio.h>

int kb_cli_refuse(const char *cmd, const char *fmt, const char *a)
{
    fprintf(stderr, "kneebench %s: ", cmd);
#pragma GCC diagnostic push
#pragma GCC diagnostic ignored "-Wformat-nonliteral"
    fprintf(stderr, fmt, a);
#pragma GCC diagnostic pop
    fprintf(stderr, " (kneebench %s --help)\n", cmd);
    return 2;
}
