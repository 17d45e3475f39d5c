/* refuse.c -- a command's refusal of its command line (refuse.h). */
#include "runner/cli/refuse.h"

#include <stdio.h>
#include <string.h>

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

int kb_refuse_engine_opts(const char *cmd, const char *backend, const char *host,
                          const char *context, const char *target)
{
    if ((host || context || target) && strcmp(backend, "docker") != 0)
        return kb_cli_refuse(cmd, "--docker-host, --docker-context and --target are for "
                             "--backend docker, not %s", backend);
    if (host && context)
        return kb_cli_refuse(cmd, "--docker-host and --docker-context both name the engine: "
                             "give one%s", "");
    return 0;
}
