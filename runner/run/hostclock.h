/* hostclock.h -- the host's CPU clocks and governors as evidence: per point, the clock and
 * cpufreq governor of the server and client CPUs, sampled with the other samples, so a
 * comparison run on a CPU that changed its clock or governor says so.
 *
 * Owns: reading one CPU's clock (cpufreq scaling_cur_freq, else /proc/cpuinfo's "cpu MHz"
 * for that processor) and governor (cpufreq scaling_governor); "not exposed" where the host
 * has no cpufreq (a virtual machine), never a guessed figure; a point's hostclock.json; and
 * the run's summary over every point's hostclock.json, which the report prints. The sysfs
 * root and the cpuinfo path are parameters, so tests point them at a fake tree. */
#ifndef KB_HOSTCLOCK_H
#define KB_HOSTCLOCK_H

#include <jansson.h>
#include <stddef.h>

#define KB_HOSTCLOCK_SYSFS "/sys/devices/system/cpu"
#define KB_HOSTCLOCK_CPUINFO "/proc/cpuinfo"
#define KB_HOSTCLOCK_MAX 128     /* CPUs recorded per point (server and client together) */

struct kb_hostclock_cpu {
    int cpu, server;             /* server: one of the server CPUs, else a client CPU */
    int cpufreq;                 /* its cpufreq is exposed (scaling_cur_freq readable) */
    const char *source;          /* where the last clock came from: "cpufreq", "cpuinfo", NULL */
    double mhz_min, mhz_max;     /* over the samples; NAN until one was read */
    char gov_start[32], gov_end[32];   /* "" where not exposed */
};

struct kb_hostclock {
    char sysfs[256], cpuinfo[256];
    int ready;                   /* kb_hostclock_init() done */
    int server_remote;           /* the server CPUs are another host's: not read */
    int vm;                      /* cpuinfo's flags say "hypervisor" */
    size_t n, samples;
    struct kb_hostclock_cpu c[KB_HOSTCLOCK_MAX];
};

/* Record the CPUs of server_cpus (NULL: on another host, not read) and client_cpus
 * (runner/util/cpulist.h syntax) under the sysfs root and cpuinfo path given. 0, or -1 when a
 * list is malformed. */
int kb_hostclock_init(struct kb_hostclock *h, const char *sysfs, const char *cpuinfo,
                      const char *server_cpus, const char *client_cpus);

/* One sample of every recorded CPU: widens its MHz range, sets the governor at start (the
 * first sample) and at end (the last). */
void kb_hostclock_sample(struct kb_hostclock *h);

/* 1 when every recorded CPU exposes cpufreq (clock and governor). */
int kb_hostclock_exposed(const struct kb_hostclock *h);

/* 1 when some CPU's governor at the end differs from its governor at the start. */
int kb_hostclock_governor_changed(const struct kb_hostclock *h);

/* The point's record (docs/report-format.md, hostclock.json). New reference. */
json_t *kb_hostclock_json(const struct kb_hostclock *h);

/* The curve's two calls. During a point: initialise on the first call with this host's
 * sysfs and cpuinfo (server_cpus NULL for a fixture on another host), then sample. At the
 * point's evidence: one sample when none was taken (a point not driven still records the
 * host), then write dir/hostclock.json. 0, or -1 with err. */
void kb_hostclock_sample_point(struct kb_hostclock *h, const char *server_cpus,
                               const char *client_cpus);
int kb_hostclock_write_point(struct kb_hostclock *h, const char *server_cpus,
                             const char *client_cpus, const char *dir, char *err, size_t errlen);

/* Over the points of plan.json that have a hostclock.json under rundir/points/<id>/: the
 * run's summary {"points", "exposed", "virtual_machine", "server_mhz_min/max",
 * "client_mhz_min/max", "source", "governors", "governor_changed", "line"}, "line" being
 * the report's one line. New reference (points 0 when no point recorded it). */
json_t *kb_hostclock_summary(const char *rundir, const json_t *plan_points);

#endif
