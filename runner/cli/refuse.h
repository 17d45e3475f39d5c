/* refuse.h -- how a command refuses its command line: one line on stderr, "kneebench CMD:
 * what is wrong (kneebench CMD --help)", and the exit status 2 every command's --help
 * promises for a bad command line. */
#ifndef KB_REFUSE_H
#define KB_REFUSE_H

/* fmt takes one string argument (a, which may be unused). Returns 2. */
int kb_cli_refuse(const char *cmd, const char *fmt, const char *a);

/* The words left after the options (argv[optind..argc)): the URL, at most once (*url may
 * hold --url's already), and -- with --pid given -- the further PIDs an unquoted
 * `--pid $(pidof nginx)` leaves (digits alone: never a URL), added to pids[0..*npids).
 * 0, or kb_cli_refuse's 2 with the word to blame: a second URL, a bad PID (as --pid's),
 * digits without --pid. */
int kb_cli_positionals(const char *cmd, int argc, char **argv, long *pids, int *npids,
                       const char **url);

/* The docker engine's options (--docker-host, --docker-context, --target) given with a
 * backend other than docker, or host and context together: refused (2); else 0. */
int kb_refuse_engine_opts(const char *cmd, const char *backend, const char *host,
                          const char *context, const char *target);

#endif
