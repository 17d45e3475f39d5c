/* evidence.h -- writes a run's artefacts atomically and computes identity.
 *
 * Owns: atomic file writes (by name; atomicfile.h does them), directory creation,
 * the identity of a fixture (the SHA-256, through digest.h, of its executables and every
 * file of its source directories, sorted by path), the host facts a run records (kernel,
 * CPU model) and the fixture's libmicrohttpd version. Never prints; errors go to err. */
#ifndef KB_EVIDENCE_H
#define KB_EVIDENCE_H

#include <jansson.h>
#include <stddef.h>
#include <stdio.h>

/* out = dir + "/" + file, truncated to outlen. Returns out. */
char *kb_path(char *out, size_t outlen, const char *dir, const char *file);

/* path made absolute against the current directory (nothing resolved, nothing need exist):
 * a run directory given as "runs/x" must name the same place to a child that changes into
 * a fixture's directory. 0, or -1 with err (no current directory, or too long). */
int kb_abspath(const char *path, char *out, size_t outlen, char *err, size_t errlen);

/* A directory the runner (often root) may write into: when it exists, a real directory
 * (no symlink) of this user that no other user may write, since a file is created in it
 * by name and a planted link or a swapped subdirectory would redirect the write. Absent
 * is fine when absent_ok (the caller makes it). 0, or -1 with err saying whose it is. */
int kb_dir_own(const char *dir, int absent_ok, char *err, size_t errlen);

/* mkdir -p. 0 or -1 with err. */
int kb_mkdirs(const char *path, char *err, size_t errlen);

/* Write data to path atomically (atomicfile.h's kb_afile_write). 0 or -1 with err. */
int kb_write_atomic(const char *path, const void *data, size_t len, char *err, size_t errlen);
/* The same for a JSON value (kb_afile_write_json: pretty, keys in insertion order, a
 * trailing newline). */
int kb_write_json_atomic(const char *path, const json_t *v, char *err, size_t errlen);

/* A measured figure as JSON: null where it is not finite (an empty histogram's NAN, which
 * JSON cannot carry), as load.json writes it. */
json_t *kb_json_figure(double v);

/* 1 if path exists as a regular file. */
int kb_file_exists(const char *path);

/* Resolve an executable name through PATH (a name with '/' is taken as is); when the bare
 * name is absent, the highest-versioned "<name><digits>" (php-fpm -> php-fpm8.2), then
 * /usr/sbin. 0 or -1. */
int kb_which(const char *name, char *out, size_t outlen);

/* Identity of a fixture: a JSON object {"files": {path: sha256...}, "sha256": combined}
 * over the executables (names resolved through PATH) and every regular file under each
 * source directory (recursively, sorted). The combined digest covers paths and digests.
 * Returns a new reference, or NULL with err. */
json_t *kb_fixture_identity(char *const *executables, size_t nexe, char *const *sources,
                            size_t nsrc, char *err, size_t errlen);

/* The host's CPU model (/proc/cpuinfo's first "model name"), or "unknown". */
void kb_cpu_model(char *out, size_t outlen);

/* Host facts: kernel (uname -srvm), CPU model, online CPUs. */
json_t *kb_host_identity(void);

/* The libmicrohttpd version the fixtures run with, read from the first line in a run's
 * runtime_versions that names one ("gray-static 1.0 (libmicrohttpd 0.9.75, jansson 2.14)"):
 * the host build's or, under docker, the image's own -- not the runner's, which links no
 * libmicrohttpd. A new string, or null where no runtime of the run names a version. */
json_t *kb_fixture_mhd_version(json_t *runtime_versions);

#endif
