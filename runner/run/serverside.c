/* serverside.c -- the user's server found, the client kept off its CPUs (serverside.h). */
#define _GNU_SOURCE
#include "runner/run/serverside.h"

#include <arpa/inet.h>
#include <stdio.h>
#include <string.h>

#include "runner/run/procwatch.h"
#include "runner/util/cpulist.h"
#include "runner/util/portown.h"

static void comm_of(pid_t p, char *out, size_t len)
{
    char path[64];
    FILE *f;
    snprintf(path, sizeof(path), "/proc/%ld/comm", (long)p);
    out[0] = '\0';
    if ((f = fopen(path, "re"))) {
        if (!fgets(out, (int)len, f))
            out[0] = '\0';
        fclose(f);
    }
    out[strcspn(out, "\n")] = '\0';
}

/* "PID 12 (nginx)" or "PIDs 12 (nginx), 13 (nginx)", cut to fit. */
static void pids_text(const struct kb_server_side *s, char *out, size_t len)
{
    size_t at = (size_t)snprintf(out, len, "PID%s", s->npids > 1 ? "s" : "");
    for (int i = 0; i < s->npids && at < len; i++) {
        char comm[32];
        comm_of(s->pids[i], comm, sizeof(comm));
        at += (size_t)snprintf(out + at, len - at, "%s %ld (%s)", i ? "," : "",
                               (long)s->pids[i], comm[0] ? comm : "?");
    }
}

static void server_cpus(struct kb_server_side *s)
{
    struct kb_procwatch_cfg w = { .pids = s->pids, .npids = s->npids };
    kb_procwatch_server_cpus(&w, s->cpus, sizeof(s->cpus));
}

void kb_server_find(struct kb_server_side *s, const struct kb_target *t, const long *given,
                    int ngiven, const char *cgroup)
{
    char ip[INET_ADDRSTRLEN] = "", who[320];
    int port = ntohs(t->addr.sin_port), n = 0;
    memset(s, 0, sizeof(*s));
    for (int i = 0; i < ngiven && i < KB_OPT_PIDS_MAX; i++)
        s->pids[s->npids++] = (pid_t)given[i];
    inet_ntop(AF_INET, &t->addr.sin_addr, ip, sizeof(ip));
    s->local = kb_target_loopback(t);
    if (!ngiven && !cgroup && kb_target_loopback(t)) {
        n = kb_port_holders(ip, port, s->pids, KB_OPT_PIDS_MAX);
        s->npids = n > 0 ? n : 0;
        s->by_port = n > 0;
    }
    if (cgroup) {
        kb_server_cpus_of_cgroup(s, cgroup);
        return;
    }
    server_cpus(s);
    if (s->npids) {
        pids_text(s, who, sizeof(who));
        snprintf(s->note, sizeof(s->note), "server: %s, %s; CPUs %s", who,
                 s->by_port ? "found listening on the port" : "from --pid",
                 s->cpus[0] ? s->cpus : "unknown");
    } else if (kb_target_loopback(t)) {
        snprintf(s->note, sizeof(s->note), "server: no process this user may read listens "
                 "on %s:%d (another user's, or in another namespace), so it is not sampled; "
                 "give --pid", ip, port);
    } else {
        snprintf(s->note, sizeof(s->note), "server: on another host, not sampled");
    }
}

void kb_server_cpus_of_cgroup(struct kb_server_side *s, const char *cgroup)
{
    struct kb_procwatch_cfg w = { .cgroup = cgroup };
    kb_procwatch_server_cpus(&w, s->cpus, sizeof(s->cpus));
    snprintf(s->note, sizeof(s->note), "server: the members of cgroup %s; CPUs %s", cgroup,
             s->cpus[0] ? s->cpus : "unknown");
}

/* The sentence for a client on CPUs it shares with the server, or cannot tell. */
static void say_shared(struct kb_server_side *s, const cpu_set_t *client, int given)
{
    cpu_set_t srv, both;
    char list[256];
    s->shared[0] = '\0';
    if (!s->cpus[0]) {
        if (s->npids || !s->local)
            return;
        snprintf(s->shared, sizeof(s->shared), "The server's CPUs are unknown, so the "
                 "client (CPUs %s) may be sharing them, and a shared CPU lowers what is measured.",
                 s->client);
        return;
    }
    if (kb_cpulist_parse_raw(s->cpus, &srv, list, sizeof(list)) <= 0)
        return;
    CPU_AND(&both, &srv, client);
    if (!CPU_COUNT(&both))
        return;
    kb_cpulist_format(&both, list, sizeof(list));
    snprintf(s->shared, sizeof(s->shared), "The client shares CPU%s %s with the server "
             "(%s), so what is measured is the two together, less than the server alone would "
             "hold; %s.", CPU_COUNT(&both) > 1 ? "s" : "", list,
             given ? "--cpus names them" : "the server may run on every CPU the client may use",
             given ? "give --cpus outside the server's CPUs"
                   : "pin the server to fewer CPUs (taskset -c) to keep them apart");
}

int kb_server_client_cpus(struct kb_server_side *s, const char *cpus, cpu_set_t *set,
                          char *err, size_t errlen)
{
    cpu_set_t allowed, srv;
    sched_getaffinity(0, sizeof(allowed), &allowed);
    *set = allowed;
    if (cpus) {
        char why[256];
        if (kb_cpulist_parse_allowed(cpus, set, why, sizeof(why)) < 0)
            return snprintf(err, errlen, "--cpus: %s", why), 2;
    } else if (s->cpus[0] && kb_cpulist_parse_raw(s->cpus, &srv, err, errlen) > 0) {
        cpu_set_t rest;
        CPU_XOR(&rest, &allowed, &srv);
        CPU_AND(&rest, &rest, &allowed);
        if (CPU_COUNT(&rest) > 0)
            *set = rest;
    }
    kb_cpulist_format(set, s->client, sizeof(s->client));
    if (sched_setaffinity(0, sizeof(*set), set))
        return snprintf(err, errlen, "cannot keep the client on CPUs %s", s->client), 2;
    say_shared(s, set, cpus != NULL);
    return 0;
}
