/* identity.h -- what a run records of what it measured with: a fixture's identity (the
 * SHA-256, through digest.h, of its executables and every file of its source directories,
 * sorted by path), the host's facts (kernel, CPU model, online CPUs) and the fixtures'
 * libmicrohttpd version. Never prints; errors go to err. */
#ifndef KB_IDENTITY_H
#define KB_IDENTITY_H

#include <jansson.h>
#include <stddef.h>

/* Identity of a fixture: a JSON object {"files": {path: sha256...}, "sha256": combined}
 * over the executables (names resolved through PATH) and every regular file under each
 * source directory (recursively, sorted). The combined digest covers paths and digests.
 * Returns a new reference, or NULL with err. */
json_t *kb_identity_of_files(char *const *executables, size_t nexe, char *const *sources,
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
