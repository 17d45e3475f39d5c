/* root.h -- where the kneebench tree is, found at run time so that a built tree can be moved,
 * copied or installed apart from its checkout. Owns that search and nothing else: library
 * code asks kb_root() (or is handed a path) instead of a path compiled in.
 *
 * The tree is the directory that holds contract/contract.json (beside it: the fixtures'
 * scripts and sources, build/ with the built fixtures). The first of these wins:
 *   1. kb_root_init(DIR), from `kneebench --root DIR`;
 *   2. $KB_ROOT;
 *   3. the nearest directory at or above the executable's own (readlink /proc/self/exe) that
 *      holds the contract: build/kneebench, build/asan/kneebench and the unit tests under
 *      build/tests/ all find their tree;
 *   4. the current directory, if it holds the contract.
 * A root named by 1 or 2 that lacks the contract is an error, never a reason to look further:
 * the user asked for that tree. Once found, $KB_ROOT is set to it, so that every program the
 * runner starts (the load child, kb-control, the fixtures) finds the same tree.
 *
 * Where no tree is found by 2-4, the contract alone may still be had:
 *   5. the contract `make install` puts beside the executable's bin/,
 *      BIN/../share/kneebench/contract.json (so PREFIX/bin/kneebench finds
 *      PREFIX/share/kneebench/, with DESTDIR or a moved PREFIX too).
 * It comes last because a tree's contract, fixtures and build/ belong together: wherever a
 * tree is found, its own contract is the one its fixtures are checked against. The installed
 * contract is the one the installed programs were built with, and it serves what needs a
 * contract and no fixtures (load, kb-control, report, version); kb_root() stays NULL, so the
 * commands that run fixtures still refuse without a tree.
 *
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
