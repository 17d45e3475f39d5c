/* steal.c -- /proc/stat's steal column per set of CPUs, a point's series, and whether the
 * host's theft could have decided a verdict (see steal.h). */
#define _GNU_SOURCE
#include "runner/run/steal.h"

#include <math.h>
#include <stdio.h>
#include <string.h>

#include "runner/util/cpulist.h"
#include "runner/util/evidence.h"

int kb_steal_read(const char *procstat, const cpu_set_t *set, struct kb_steal_mark *m)
{
    FILE *f = fopen(procstat, "r");
    char line[512];
    int want = CPU_COUNT(set), seen = 0;

    memset(m, 0, sizeof(*m));
    if (!f)
        return -1;
    while (fgets(line, sizeof(line), f)) {
        unsigned long long v[8] = { 0 };
        int cpu;
        /* cpuN user nice system idle iowait irq softirq steal ... */
        if (strncmp(line, "cpu", 3) || !(line[3] >= '0' && line[3] <= '9') ||
            sscanf(line + 3, "%d %llu %llu %llu %llu %llu %llu %llu %llu", &cpu, &v[0], &v[1],
                   &v[2], &v[3], &v[4], &v[5], &v[6], &v[7]) != 9 ||
            cpu < 0 || cpu >= CPU_SETSIZE || !CPU_ISSET(cpu, set))
            continue;
        for (int k = 0; k < 8; k++)
            m->total += v[k];
        m->steal += v[7];
        seen++;
    }
    fclose(f);
    m->ok = want > 0 && seen == want;
    return m->ok ? 0 : -1;
}

double kb_steal_fraction(const struct kb_steal_mark *a, const struct kb_steal_mark *b)
{
    if (!a->ok || !b->ok || b->total <= a->total || b->steal < a->steal)
        return NAN;
    return (double)(b->steal - a->steal) / (double)(b->total - a->total);
}

void kb_steal_track_init(struct kb_steal_track *t, const char *cpulist)
{
    char err[128];
    memset(t, 0, sizeof(*t));
    t->last_fraction = t->max_fraction = NAN;
    t->on = cpulist && kb_cpulist_parse_raw(cpulist, &t->set, err, sizeof(err)) > 0;
}

void kb_steal_track_sample(struct kb_steal_track *t, const char *procstat, double now_s)
{
    struct kb_steal_mark m;
    double f;
    if (!t->on || kb_steal_read(procstat, &t->set, &m) < 0)
        return;
    if (!t->first.ok)
        t->first = m;
    f = kb_steal_fraction(&t->prev, &m);
    t->last_fraction = f;
    if (isfinite(f)) {
        if (!(f <= t->max_fraction))          /* NAN so far, or larger */
            t->max_fraction = f;
        if (!(f * (now_s - t->prev_t) <= t->max_stolen_s))
            t->max_stolen_s = f * (now_s - t->prev_t);
    }
    t->prev = m;
    t->prev_t = now_s;
}

double kb_steal_track_mean(const struct kb_steal_track *t)
{
    return kb_steal_fraction(&t->first, &t->prev);
}

static json_t *role_json(const struct kb_steal_track *t)
{
    if (!t->on)
        return json_null();
    return json_pack("{s:o,s:o,s:o}", "steal_max_fraction", kb_json_figure(t->max_fraction),
                     "steal_fraction", kb_json_figure(kb_steal_track_mean(t)),
                     "steal_max_stolen_s", kb_json_figure(isfinite(t->max_fraction)
                                                          ? t->max_stolen_s : NAN));
}

json_t *kb_steal_json(const struct kb_steal_track *server, const struct kb_steal_track *client,
                      int could_decide, const char *why)
{
    return json_pack("{s:o,s:o,s:b,s:s}", "server_cpus", role_json(server), "client_cpus",
                     role_json(client), "could_decide", could_decide, "reason", why);
}

int kb_steal_could_decide(const struct kb_point_load *r, const struct kb_criteria *c,
                          const struct kb_steal_track *server, char *why, size_t whylen)
{
    struct kb_point_load b = *r;
    double mean = kb_steal_track_mean(server);
    int as_measured, without;
    if (!server->on || !isfinite(server->max_fraction) || !isfinite(mean)) {
        snprintf(why, whylen, "not known: the server's CPUs were not read");
        return 0;
    }
    /* a stall of the server's CPU lengthens a request by at most its length, and costs
     * delivery at most the share of the CPU it took */
    b.corrected.p99 = r->corrected.p99 - server->max_stolen_s * 1e6;
    b.delivery = r->delivery + mean;
    as_measured = kb_verdict_held(r, c);
    without = kb_verdict_held(&b, c);
    snprintf(why, whylen, "the host withheld up to %.1f %% of the server's CPUs in a second "
             "(%.0f ms), %.1f %% over the point: %s", 100 * server->max_fraction,
             server->max_stolen_s * 1e3, 100 * mean, as_measured == without
             ? "not enough to change the verdict"
             : "enough to explain the verdict (it holds with the theft taken out)");
    return as_measured != without;
}
