/* paths.h -- the names of a run's files and directories: a path joined (and refused when it
 * would not fit, never cut short), made absolute, its directories made, a directory checked
 * as safe to write into, a file's presence, an executable found. Never prints; errors go to
 * err. */
#ifndef KB_PATHS_H
#define KB_PATHS_H

#include <stddef.h>

/* out = dir + "/" + file. Returns out; NULL when it would not fit in outlen, with out ""
 * (never a truncated name, which would open, write or remove another file): every function
 * here and in atomicfile.h refuses a NULL or empty path, so a caller passing the result on
 * gets that refusal; one that uses out itself checks the NULL. */
char *kb_path(char *out, size_t outlen, const char *dir, const char *file);

/* Every path buffer's size (Linux's PATH_MAX). A path that would not fit is refused, not
 * cut short: kb_path, or a checked snprintf. */
#define KB_PATH_MAX 4096

/* The longest run directory: its deepest files (a point's, a fixture's PostgreSQL's) add
 * a few hundred bytes, which must stay under KB_PATH_MAX. */
#define KB_RUN_DIR_MAX 3000

/* path made absolute against the current directory (nothing resolved, nothing need exist):
 * a run directory given as "runs/x" must name the same place to a child that changes into
 * a fixture's directory. 0, or -1 with err (no current directory, or too long). */
int kb_abspath(const char *path, char *out, size_t outlen, char *err, size_t errlen);

/* A directory the runner (often root) may write into: when it exists, a real directory
 * (no symlink) of this user that no other user may write, since a file is created in it
 * by name and a planted link or a swapped subdirectory would redirect the write. Absent
 * is fine when absent_ok (the caller makes it). 0, or -1 with err saying whose it is. */
int kb_dir_own(const char *dir, int absent_ok, char *err, size_t errlen);

/* The longest name evidence may give a runtime, a route or a point: a name becomes a path
 * component (points/<id>, fixtures/<runtime>, charts/<kind>-<route>.svg). */
#define KB_NAME_MAX 128

/* 1 when s is a plain name to put in a path: 1..KB_NAME_MAX bytes, no '/', not "." or
 * "..", no control character. A name read from evidence (plan.json) passes here before it
 * names a file: the run may be anyone's copy. */
int kb_plain_name(const char *s);

/* mkdir -p. 0 or -1 with err (a NULL or empty path: too long to name). */
int kb_mkdirs(const char *path, char *err, size_t errlen);

/* 1 if path exists as a regular file (0 for a NULL or empty path). */
int kb_file_exists(const char *path);

/* Resolve an executable name through PATH (a name with '/' is taken as is); when the bare
 * name is absent, the highest-versioned "<name><digits>" (php-fpm -> php-fpm8.2), then
 * /usr/sbin. 0 or -1. */
int kb_which(const char *name, char *out, size_t outlen);

#endif
