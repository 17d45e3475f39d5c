/* version.h -- what `kneebench --version` says: the runner's version, fixed at build time
 * (git describe --always --dirty, via -DKB_RUNNER_VERSION in runner/module.mk; "unknown"
 * outside a git checkout), and the contract's contract_version, read where the suite will
 * read the contract so the two cannot disagree. */
#ifndef KB_VERSION_H
#define KB_VERSION_H

const char *kb_runner_version(void);

/* contract_version of the contract file at path; -1 when the file or field is not there. */
long kb_contract_version_of(const char *path);

#endif
