/* pin.c -- a process tree pinned to a CPU set, read back (pin.h). */
#define _GNU_SOURCE
#include "runner/sandbox/pin.h"
#include "runner/sandbox/procs.h"
#include "runner/util/cpulist.h"

#include <dirent.h>
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#define PIN_MAX_PROCS 1024

int kb_pin_read_allowed(pid_t pid, char *out, size_t outlen)
{
    char path[64], line[512];
    FILE *f;
    int rc = -1;
    snprintf(path, sizeof(path), "/proc/%d/status", (int)pid);
    if (!(f = fopen(path, "r")))
        return -1;
    while (rc < 0 && fgets(line, sizeof(line), f))
        if (!strncmp(line, "Cpus_allowed_list:", 18)) {
            char *v = line + 18;
            v += strspn(v, " \t");
            v[strcspn(v, "\n")] = '\0';
            snprintf(out, outlen, "%s", v);
            rc = 0;
        }
    fclose(f);
    return rc;
}

static void comm_of(pid_t pid, char *out, size_t outlen)
{
    char path[64];
    FILE *f;
    snprintf(path, sizeof(path), "/proc/%d/comm", (int)pid);
    out[0] = '\0';
    if ((f = fopen(path, "r"))) {
        if (fgets(out, (int)outlen, f))
            out[strcspn(out, "\n")] = '\0';
        fclose(f);
    }
}

/* Every thread of pid. 0, or -errno of the first refusal (a thread that ended meanwhile
 * is not one). */
static int pin_threads(pid_t pid, const cpu_set_t *set)
{
    char path[64];
    struct dirent *e;
    DIR *d;
    int rc = 0;
    snprintf(path, sizeof(path), "/proc/%d/task", (int)pid);
    if (!(d = opendir(path)))
        return -ESRCH;
    while ((e = readdir(d)))
        if (e->d_name[0] != '.' && sched_setaffinity(atoi(e->d_name), sizeof(*set), set) < 0 &&
            errno != ESRCH && !rc)
            rc = -errno;
    closedir(d);
    return rc;
}

/* Read every process back into the record; 0 when each one is exactly want. */
static int read_back(const pid_t *pids, size_t n, const char *want, json_t *procs,
                     char *err, size_t errlen)
{
    int rc = 0;
    for (size_t i = 0; i < n; i++) {
        char allowed[256], comm[64];
        if (kb_pin_read_allowed(pids[i], allowed, sizeof(allowed)) < 0)
            continue;           /* ended meanwhile: nothing left to run anywhere */
        comm_of(pids[i], comm, sizeof(comm));
        json_array_append_new(procs, json_pack("{s:i,s:s,s:s}", "pid", (int)pids[i], "comm",
                                               comm, "cpus_allowed_list", allowed));
        if (strcmp(allowed, want) && !rc) {
            snprintf(err, errlen, "process %d (%s) may run on CPUs %s, not %s", (int)pids[i],
                     comm, allowed, want);
            rc = -1;
        }
    }
    return rc;
}

int kb_pin_tree(pid_t root, const cpu_set_t *set, json_t **record, char *err, size_t errlen)
{
    pid_t *pids = calloc(PIN_MAX_PROCS, sizeof(pid_t));
    char want[256];
    json_t *procs = json_array();
    size_t n = pids ? kb_procs_tree(root, pids, PIN_MAX_PROCS) : 0;
    int rc = 0, e;
    kb_cpulist_format(set, want, sizeof(want));
    *record = NULL;
    if (!n) {
        snprintf(err, errlen, "no process %d to pin to CPUs %s", (int)root, want);
        rc = -1;
    }
    for (size_t i = 0; i < n && rc == 0; i++)
        if ((e = pin_threads(pids[i], set)) < 0 && e != -ESRCH) {
            snprintf(err, errlen, "pinning process %d to CPUs %s: %s", (int)pids[i], want,
                     strerror(-e));
            rc = -1;
        }
    if (rc == 0)
        rc = read_back(pids, n, want, procs, err, errlen);
    *record = json_pack("{s:s,s:i,s:o,s:b}", "cpus", want, "root_pid", (int)root,
                        "processes", procs, "all_pinned", rc == 0);
    free(pids);
    return rc;
}
