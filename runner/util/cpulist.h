/* cpulist.h -- the CPU list syntax of --server-cpus / --client-cpus, the contract's
 * server_cpus / client_cpus, `kneebench load --cpus` and `kb-control --cpus`: "0", "1-3",
 * "1-" (open: to the last CPU that the variant keeps), "0,2".
 *
 * Owns the only parser of that syntax and the canonical text recorded in plan.json and
 * run.json. Which CPUs a list means depends on its use, so each meaning has its own name:
 *   kb_cpulist_parse_raw      the syntax alone, every CPU a cpu_set_t can hold;
 *   kb_cpulist_parse_online   kept to this host's online CPUs (the run's placement, which
 *                             names CPUs of this host, fixtures and calibration alike);
 *   kb_cpulist_parse_allowed  kept to the CPUs this process may run on (its affinity, for
 *                             pinning itself or a child: a load generator, kb-control).
 * Every error is said in err and never crashes: malformed text, a CPU past CPU_SETSIZE, a
 * range that runs backwards, and a list that keeps no CPU. */
#ifndef KB_CPULIST_H
#define KB_CPULIST_H

#include <sched.h>               /* cpu_set_t (glibc defines the type without _GNU_SOURCE) */
#include <stddef.h>

/* Parse s into set: "N-" runs to CPU_SETSIZE - 1, a range's end past it is cut there. The
 * number of CPUs in set (at least 1), or -1 with why in err. */
int kb_cpulist_parse_raw(const char *s, cpu_set_t *set, char *err, size_t errlen);

/* kb_cpulist_parse_raw, then only CPUs 0 .. _SC_NPROCESSORS_ONLN - 1 kept ("1-" runs to the
 * last online CPU, "0-100" is cut there); canon (may be NULL) gets the kept set in
 * kb_cpulist_format's form. The number kept, or -1 with err when malformed or none is
 * online. */
int kb_cpulist_parse_online(const char *s, cpu_set_t *set, char *canon, size_t canonlen,
                            char *err, size_t errlen);

/* kb_cpulist_parse_raw, then only the CPUs in this process's affinity kept. The number
 * kept, or -1 with err when malformed or none may be used. */
int kb_cpulist_parse_allowed(const char *s, cpu_set_t *set, char *err, size_t errlen);

/* set in canonical form: ascending, ranges merged ("0", "1-3", "0,2-4"; "" when empty). */
void kb_cpulist_format(const cpu_set_t *set, char *out, size_t outlen);

#endif
