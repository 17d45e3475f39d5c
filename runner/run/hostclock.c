/* hostclock.c -- the CPUs' clocks and governors per point, and the run's summary of them
 * (hostclock.h). */
#define _GNU_SOURCE
#include "runner/run/hostclock.h"
#include "runner/util/cpulist.h"
#include "runner/util/evidence.h"
#include "runner/util/paths.h"
#include "runner/util/schema.h"

#include <math.h>
#include <sched.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

/* The first line of a small file, trailing whitespace cut; -1 when unreadable or empty. */
static int read_line(const char *path, char *out, size_t len)
{
    FILE *f = fopen(path, "r");
    size_t n;
    if (!f)
        return -1;
    if (!fgets(out, (int)len, f))
        out[0] = '\0';
    fclose(f);
    n = strlen(out);
    while (n > 0 && (out[n - 1] == '\n' || out[n - 1] == ' ' || out[n - 1] == '\t'))
        out[--n] = '\0';
    return n > 0 ? 0 : -1;
}

static int cpufreq_file(const struct kb_hostclock *h, int cpu, const char *file,
                        char *out, size_t len)
{
    char path[512];
    snprintf(path, sizeof(path), "%s/cpu%d/cpufreq/%s", h->sysfs, cpu, file);
    return read_line(path, out, len);
}

/* /proc/cpuinfo's "cpu MHz" of processor cpu (NAN when absent); *vm set from the flags. */
static double cpuinfo_mhz(const char *path, int cpu, int *vm)
{
    char line[4096];
    int cur = -1;
    double mhz = NAN;
    FILE *f = fopen(path, "r");
    if (!f)
        return NAN;
    while (fgets(line, sizeof(line), f)) {
        char *colon = strchr(line, ':');
        if (!colon)
            continue;
        if (!strncmp(line, "processor", 9))
            cur = atoi(colon + 1);
        else if (cur == cpu && !strncmp(line, "cpu MHz", 7))
            mhz = strtod(colon + 1, NULL);
        else if (!strncmp(line, "flags", 5) && strstr(colon, " hypervisor"))
            *vm = 1;
    }
    fclose(f);
    return mhz;
}

static void add_cpus(struct kb_hostclock *h, const cpu_set_t *set, int server)
{
    for (int cpu = 0; cpu < CPU_SETSIZE && h->n < KB_HOSTCLOCK_MAX; cpu++)
        if (CPU_ISSET(cpu, set)) {
            struct kb_hostclock_cpu *c = &h->c[h->n++];
            memset(c, 0, sizeof(*c));
            c->cpu = cpu;
            c->server = server;
            c->mhz_min = c->mhz_max = NAN;
        }
}

int kb_hostclock_init(struct kb_hostclock *h, const char *sysfs, const char *cpuinfo,
                      const char *server_cpus, const char *client_cpus)
{
    cpu_set_t srv, cli;
    char err[256];
    memset(h, 0, sizeof(*h));
    snprintf(h->sysfs, sizeof(h->sysfs), "%s", sysfs);
    snprintf(h->cpuinfo, sizeof(h->cpuinfo), "%s", cpuinfo);
    h->server_remote = !server_cpus;
    /* the placement names this host's CPUs: the same meaning the run gave it */
    if ((server_cpus && kb_cpulist_parse_online(server_cpus, &srv, NULL, 0, err, sizeof(err)) < 0) ||
        kb_cpulist_parse_online(client_cpus, &cli, NULL, 0, err, sizeof(err)) < 0)
        return -1;
    if (server_cpus)
        add_cpus(h, &srv, 1);
    add_cpus(h, &cli, 0);
    h->ready = 1;
    return 0;
}

static void sample_cpu(struct kb_hostclock *h, struct kb_hostclock_cpu *c, int first)
{
    char buf[64];
    double mhz = NAN;
    c->cpufreq = cpufreq_file(h, c->cpu, "scaling_cur_freq", buf, sizeof(buf)) == 0;
    if (c->cpufreq) {
        mhz = strtod(buf, NULL) / 1000.0;      /* kHz */
        c->source = "cpufreq";
    } else {
        mhz = cpuinfo_mhz(h->cpuinfo, c->cpu, &h->vm);
        c->source = isfinite(mhz) ? "cpuinfo" : NULL;
    }
    if (isfinite(mhz)) {
        c->mhz_min = isfinite(c->mhz_min) && c->mhz_min < mhz ? c->mhz_min : mhz;
        c->mhz_max = isfinite(c->mhz_max) && c->mhz_max > mhz ? c->mhz_max : mhz;
    }
    if (cpufreq_file(h, c->cpu, "scaling_governor", buf, sizeof(buf)) < 0)
        buf[0] = '\0';
    if (first)
        snprintf(c->gov_start, sizeof(c->gov_start), "%s", buf);
    snprintf(c->gov_end, sizeof(c->gov_end), "%s", buf);
}

void kb_hostclock_sample(struct kb_hostclock *h)
{
    for (size_t i = 0; i < h->n; i++)
        sample_cpu(h, &h->c[i], h->samples == 0);
    /* the flags come with the clock only where cpufreq is absent: read them once anyway */
    if (h->samples == 0)
        (void)cpuinfo_mhz(h->cpuinfo, -1, &h->vm);
    h->samples++;
}

int kb_hostclock_exposed(const struct kb_hostclock *h)
{
    for (size_t i = 0; i < h->n; i++)
        if (!h->c[i].cpufreq)
            return 0;
    return h->n > 0 && h->samples > 0;
}

int kb_hostclock_governor_changed(const struct kb_hostclock *h)
{
    for (size_t i = 0; i < h->n; i++)
        if (strcmp(h->c[i].gov_start, h->c[i].gov_end))
            return 1;
    return 0;
}

static json_t *str_or_null(const char *s)
{
    return s && *s ? json_string(s) : json_null();
}

static json_t *cpu_json(const struct kb_hostclock_cpu *c)
{
    json_t *j = json_pack("{s:i,s:s,s:b,s:o,s:o,s:o,s:o,s:o,s:b}", "cpu", c->cpu,
        "role", c->server ? "server" : "client", "exposed", c->cpufreq,
        "source", str_or_null(c->source), "mhz_min", kb_json_figure(c->mhz_min),
        "mhz_max", kb_json_figure(c->mhz_max), "governor_start", str_or_null(c->gov_start),
        "governor_end", str_or_null(c->gov_end), "governor_changed",
        strcmp(c->gov_start, c->gov_end) != 0);
    return j;
}

json_t *kb_hostclock_json(const struct kb_hostclock *h)
{
    json_t *cpus = json_array();
    int exposed = kb_hostclock_exposed(h);
    for (size_t i = 0; i < h->n; i++)
        json_array_append_new(cpus, cpu_json(&h->c[i]));
    return json_pack("{s:b,s:b,s:b,s:I,s:b,s:s,s:o}", "exposed", exposed,
        "virtual_machine", h->vm, "server_remote", h->server_remote,
        "samples", (json_int_t)h->samples, "governor_changed", kb_hostclock_governor_changed(h),
        "note", exposed ? "cpufreq: scaling_cur_freq and scaling_governor per CPU"
              : "cpufreq not exposed by this host: governor unknown (null); clock from "
                "/proc/cpuinfo where it has one, a nominal figure on a virtual machine",
        "cpus", cpus);
}

void kb_hostclock_sample_point(struct kb_hostclock *h, const char *server_cpus,
                               const char *client_cpus)
{
    if (!h->ready && kb_hostclock_init(h, KB_HOSTCLOCK_SYSFS, KB_HOSTCLOCK_CPUINFO,
                                       server_cpus, client_cpus) < 0)
        return;
    kb_hostclock_sample(h);
}

int kb_hostclock_write_point(struct kb_hostclock *h, const char *server_cpus,
                             const char *client_cpus, const char *dir, char *err, size_t errlen)
{
    char path[KB_PATH_MAX];
    json_t *j;
    int rc;
    if (h->samples == 0)
        kb_hostclock_sample_point(h, server_cpus, client_cpus);
    j = kb_hostclock_json(h);
    rc = kb_write_json_atomic(kb_path(path, sizeof(path), dir, "hostclock.json"),
                              kb_schema_stamp(j, KB_SCHEMA_EVIDENCE), err, errlen);
    json_decref(j);
    return rc;
}

/* ---- the run's summary ----------------------------------------------------------------- */

struct summary {
    size_t points, exposed, vm;
    double mhz[2][2];            /* [server][min, max] */
    int changed;
    json_t *governors, *sources; /* distinct names seen */
};

static void add_name(json_t *set, json_t *name)
{
    size_t i;
    json_t *v;
    if (!json_is_string(name))
        return;
    json_array_foreach(set, i, v)
        if (json_equal(v, name))
            return;
    json_array_append(set, name);
}

static void widen(double *mm, json_t *lo, json_t *hi)
{
    if (json_is_number(lo) && (!isfinite(mm[0]) || json_number_value(lo) < mm[0]))
        mm[0] = json_number_value(lo);
    if (json_is_number(hi) && (!isfinite(mm[1]) || json_number_value(hi) > mm[1]))
        mm[1] = json_number_value(hi);
}

static void add_point(struct summary *s, json_t *p)
{
    size_t i;
    json_t *c;
    s->points++;
    s->exposed += json_is_true(json_object_get(p, "exposed"));
    s->vm += json_is_true(json_object_get(p, "virtual_machine"));
    s->changed |= json_is_true(json_object_get(p, "governor_changed"));
    json_array_foreach(json_object_get(p, "cpus"), i, c) {
        const char *role = json_string_value(json_object_get(c, "role"));
        int srv = role && !strcmp(role, "server");
        widen(s->mhz[srv], json_object_get(c, "mhz_min"), json_object_get(c, "mhz_max"));
        add_name(s->governors, json_object_get(c, "governor_start"));
        add_name(s->governors, json_object_get(c, "governor_end"));
        add_name(s->sources, json_object_get(c, "source"));
    }
}

static void range(char *out, size_t len, const char *who, const double *mm)
{
    if (isfinite(mm[0]))
        snprintf(out, len, "%s CPUs %.0f-%.0f MHz", who, mm[0], mm[1]);
    else
        snprintf(out, len, "%s CPUs no clock figure", who);
}

static void summary_line(const struct summary *s, char *line, size_t len)
{
    char srv[96], cli[96], gov[256] = "";
    size_t i;
    json_t *g;
    range(srv, sizeof(srv), "server", s->mhz[1]);
    range(cli, sizeof(cli), "client", s->mhz[0]);
    json_array_foreach(s->governors, i, g)
        snprintf(gov + strlen(gov), sizeof(gov) - strlen(gov), "%s%s", i ? ", " : "",
                 json_string_value(g));
    if (s->points == 0)
        snprintf(line, len, "CPU clocks: not recorded (no point has hostclock.json)");
    else if (s->exposed < s->points)
        snprintf(line, len, "CPU clocks: not exposed by this host (no cpufreq%s): governor "
                 "unknown; /proc/cpuinfo says %s, %s%s", s->vm ? "; virtual machine" : "",
                 srv, cli, s->vm ? " (a nominal figure, not a measured clock)" : "");
    else
        snprintf(line, len, "CPU clocks: %s, %s; governor %s", srv, cli, gov);
    if (s->changed || json_array_size(s->governors) > 1)
        snprintf(line + strlen(line), len - strlen(line), ". WARNING: the CPU governor "
                 "changed during the run (%s): points are not comparable", gov);
}

json_t *kb_hostclock_summary(const char *rundir, const json_t *plan_points)
{
    struct summary s = { 0, 0, 0, { { NAN, NAN }, { NAN, NAN } }, 0, json_array(), json_array() };
    char path[KB_PATH_MAX];
    char line[1024];
    size_t i;
    json_t *pt, *j;
    json_array_foreach(plan_points, i, pt) {
        const char *id = json_string_value(json_object_get(pt, "id"));
        if (!id)
            continue;
        snprintf(path, sizeof(path), "%s/points/%s/hostclock.json", rundir, id);
        /* a newer kneebench's file is left out like a missing one, never guessed at */
        if (kb_evidence_read(path, &j, line, sizeof(line)) == 0)
            add_point(&s, j);
        json_decref(j);
    }
    summary_line(&s, line, sizeof(line));
    return json_pack("{s:I,s:b,s:b,s:o,s:o,s:o,s:o,s:o,s:o,s:b,s:s}",
        "points", (json_int_t)s.points, "exposed", s.points > 0 && s.exposed == s.points,
        "virtual_machine", s.vm > 0, "server_mhz_min", kb_json_figure(s.mhz[1][0]),
        "server_mhz_max", kb_json_figure(s.mhz[1][1]), "client_mhz_min",
        kb_json_figure(s.mhz[0][0]), "client_mhz_max", kb_json_figure(s.mhz[0][1]),
        "sources", s.sources, "governors", s.governors, "governor_changed",
        s.changed || json_array_size(s.governors) > 1, "line", line);
}
