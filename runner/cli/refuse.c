/* refuse.c -- a command's refusal of its command line (refuse.h). */
#include "runner/cli/refuse.h"

#include <getopt.h>
#include <stdio.h>
#include <string.h>

#include "runner/util/opts.h"

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

int kb_cli_positionals(const char *cmd, int argc, char **argv, long *pids, int *npids,
                       const char **url)
{
    int from_option = *url != NULL;
    for (int i = optind; i < argc; i++) {
        const char *w = argv[i];
        char err[256];
        if (kb_opt_all_digits(w) && pids && *npids) {
            if (kb_opt_pids(w, pids, npids, err, sizeof(err)))
                return kb_cli_refuse(cmd, "%s", err);
        } else if (kb_opt_all_digits(w)) {
            return kb_cli_refuse(cmd, "'%s' is not a URL (a PID? give it with --pid)", w);
        } else if (*url && from_option) {
            return kb_cli_refuse(cmd, "the URL is given twice ('%s' and --url)", w);
        } else if (*url) {
            return kb_cli_refuse(cmd, "unexpected argument '%s' (one URL only)", w);
        } else {
            *url = w;
        }
    }
    optind = argc;
    return 0;
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
