/* cpulist.h -- the placement syntax of --server-cpus / --client-cpus and the contract's
 * server_cpus / client_cpus: "0", "1-3", "1-" (to the last online CPU), "0,2". Owns the
 * parsing into a cpu_set_t and the canonical text recorded in plan.json and run.json. */
#ifndef KB_CPULIST_H
#define KB_CPULIST_H

#include <sched.h>               /* cpu_set_t (glibc defines the type without _GNU_SOURCE) */
#include <stddef.h>

/* Parse s into set (CPUs past the last online one are dropped) and write its canonical
 * form into canon ("1-3", "0,2"). The number of CPUs, or -1 when s is malformed, has a
 * negative number, or names no online CPU. */
int kb_cpulist_parse(const char *s, cpu_set_t *set, char *canon, size_t canonlen);

/* set in the same canonical form ("0", "1-3", "0,2"; "" when empty). */
void kb_cpulist_format(const cpu_set_t *set, char *out, size_t outlen);

#endif
