/* atomicfile.h -- the one way the runner gives a file its final name.
 *
 * Owns writing a file so that its name only ever stands for complete, synced contents: a
 * new temporary file beside it, created exclusively and never through a symlink (O_CREAT |
 * O_EXCL | O_NOFOLLOW: a name someone planted there, link or file, is skipped, never opened
 * or removed), written, flushed and fsync'd, then renamed over the final name, which is
 * absent or a regular file. A final name that is a character device or a FIFO (/dev/null, a
 * terminal, a pipe; or a link to one: /dev/stdout) is written through, never replaced, and a
 * FIFO with no reader is an error at once. Any other link at the final name (to a file, to
 * nothing), a directory, a block device or a socket is refused: never followed, never
 * replaced. On any failure
 * the temporary file is removed, the final name is left as it was, and the caller's buffer
 * says what failed. Every evidence file and every output of the runner is written here:
 * `rename(` appears nowhere else in runner/ outside util/.
 *
 * Temporary names are PATH.tmp.<pid>.<n>, the first n whose name is free: predictable, and
 * harmless for it (a planted name is skipped), so that a test can plant the names a writer
 * will try. A writer killed before its commit leaves its temporary file: a run sweeps the
 * "*.tmp*" names of a point it redoes (run.h, kb_run_point_begin).
 *
 * Two shapes: one call for a buffer, a JSON value or a writer callback; and a stream for
 * files written a line at a time while a run goes (a point's samples.csv, /stats read on its
 * own thread): open, write to ->f, then commit or abort. Never prints. */
#ifndef KB_ATOMICFILE_H
#define KB_ATOMICFILE_H

#include <jansson.h>
#include <stddef.h>
#include <stdio.h>

#define KB_AFILE_PATH 4096

/* A file being written. Between kb_afile_open and kb_afile_commit / kb_afile_abort, write to
 * f; after either, f is NULL and the struct may be opened again. */
struct kb_afile {
    FILE *f;
    int through;                       /* a device or FIFO written in place: no temporary */
    char path[KB_AFILE_PATH];          /* the final name */
    char tmp[KB_AFILE_PATH + 48];      /* the temporary file's name */
};

/* A temporary file beside path, created exclusively (mode 0644, close-on-exec), its stream
 * in a->f. 0, or -1 with err (a->f NULL, nothing created). */
int kb_afile_open(struct kb_afile *a, const char *path, char *err, size_t errlen);

/* Whether path can be written, before the work whose output it is: what kb_afile_open
 * would refuse is refused, and a temporary file is tried and removed; a device or FIFO is
 * checked for write access only (opening a FIFO would end its reader's input). 0, or -1
 * with err. */
int kb_afile_probe(const char *path, char *err, size_t errlen);

/* Flush, fsync and close a->f, then rename the temporary file to the final name. A write
 * that failed at any point before (the stream's error flag) fails the commit too. 0, or -1
 * with err naming the file, the temporary file removed and the final name untouched. */
int kb_afile_commit(struct kb_afile *a, char *err, size_t errlen);

/* Close a->f and remove the temporary file: the final name stays as it was. A no-op when
 * nothing is open. */
void kb_afile_abort(struct kb_afile *a);

/* path written whole from len bytes at data. 0, or -1 with err. */
int kb_afile_write(const char *path, const void *data, size_t len, char *err, size_t errlen);

/* v as JSON (indented, keys in insertion order, reals with 10 significant digits, a final
 * newline). 0, or -1 with err. */
int kb_afile_write_json(const char *path, const json_t *v, char *err, size_t errlen);

/* path written by fill(f, arg), which returns < 0 when it could not write everything (its
 * stream's error flag is checked too). 0, or -1 with err. */
int kb_afile_write_with(const char *path, int (*fill)(FILE *f, const void *arg),
                        const void *arg, char *err, size_t errlen);

#endif
