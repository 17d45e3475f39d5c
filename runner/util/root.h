/* root.h -- where the kneebench tree is (the directory holding contract/contract.json, with
 * the fixtures and build/), found at run time so a built tree can be moved, copied or
 * installed. Library code asks kb_root() instead of using a path compiled in. First wins:
 *   1. kb_root_init(DIR), from `kneebench --root DIR`;
 *   2. $KB_ROOT;
 *   3. the nearest directory at or above the executable's (/proc/self/exe) holding the
 *      contract: build/kneebench, build/asan/kneebench and build/tests/ all find their tree;
 *   4. the current directory, if it holds the contract;
 *   5. no tree, the contract alone: BIN/../share/kneebench/contract.json, where `make install`
 *      puts it. Last, because a tree's contract goes with its own fixtures; it serves load,
 *      kb-control, report and version, and kb_root() stays NULL, so commands that run
 *      fixtures still refuse.
 * A root named by 1 or 2 without the contract is an error, not a reason to look further.
 * Once found, $KB_ROOT is set so every program the runner starts finds the same tree.
 * Not thread-safe before the root is found: main() (or a test's first call) finds it. */
#ifndef KB_ROOT_H
#define KB_ROOT_H

#include <stddef.h>

/* Find the tree, from dir when it is not NULL (1 above), else by 2-4. 0, or -1 with the
 * reason in err (which names every place looked). A later call finds it anew. */
int kb_root_init(const char *dir, char *err, size_t errlen);

/* The tree's absolute path; found by kb_root_init(NULL) on the first call. NULL when it
 * was not found (kb_root_error() says why). */
const char *kb_root(void);

/* Why kb_root() is NULL ("" when it is not). */
const char *kb_root_error(void);

/* The contract to read when none was named: $KNEEBENCH_CONTRACT when set, else
 * ROOT/contract/contract.json, else the installed one (5 above); NULL when none
 * (kb_root_error() says why). */
const char *kb_root_contract(void);

/* The installed contract that belongs to the executable exe: the canonical path of
 * dirname(exe)/../share/kneebench/contract.json into out, 0 when it is readable; -1 otherwise,
 * with the path looked at (not canonical) in out. */
int kb_root_installed_contract(const char *exe, char *out, size_t outlen);

/* ROOT/build, where `make` puts the fixtures; NULL without a root. */
const char *kb_root_build(void);

#endif
