/* atomicfile.h -- the one way the runner gives a file its final name (`rename(` appears
 * nowhere else in runner/ outside util/), so a name only ever stands for complete, synced
 * contents: a temporary file beside it, PATH.tmp.<pid>.<n> with the first free n, made with
 * O_CREAT | O_EXCL | O_NOFOLLOW (a planted name is skipped, never opened or removed),
 * written, fsync'd, renamed over the final name.
 *
 * The final name must be absent or a regular file. A character device or FIFO there (or a
 * link to one: /dev/stdout) is written through, and a FIFO with no reader is an error at
 * once; any other link, a directory, a block device or a socket is refused. On failure the
 * temporary file is removed, the final name left as it was, and err says why. A writer killed
 * before its commit leaves its temporary file; a run sweeps a redone point's "*.tmp*"
 * (kb_run_point_begin).
 *
 * One call for a buffer, a JSON value or a writer callback; a stream for files written a line
 * at a time (samples.csv, stats.jsonl): open, write to ->f, then commit or abort. Never
 * prints. */
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
