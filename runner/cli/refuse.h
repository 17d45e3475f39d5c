/* refuse.h -- how a command refuses its command line: one line on stderr, "kneebench CMD:
 * what is wrong (kneebench CMD --help)", and the exit status 2 every command's --help
 * promises for a bad command line. */
#ifndef KB_REFUSE_H
#define KB_REFUSE_H

/* fmt takes one string argument (a, which may be unused). Returns 2. */
int kb_cli_refuse(const char *cmd, const char *fmt, const char *a);

#endif
