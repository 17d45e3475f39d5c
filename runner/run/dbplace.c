/* dbplace.c -- the server, client and db CPU roles checked and recorded (dbplace.h). */
#define _GNU_SOURCE
#include "runner/run/dbplace.h"
#include "runner/util/cpulist.h"

#include <stdio.h>
#include <string.h>
#include <unistd.h>

/* Record one pair's overlap, if any. */
static void share(struct kb_dbplace *d, const char *a, const char *b, const cpu_set_t *x,
                  const cpu_set_t *y)
{
    cpu_set_t both;
    char cpus[64];
    size_t used = strlen(d->shared);
    CPU_AND(&both, x, y);
    if (!CPU_COUNT(&both))
        return;
    kb_cpulist_format(&both, cpus, sizeof(cpus));
    json_array_append_new(d->shares, json_pack("{s:[s,s],s:s}", "roles", a, b, "cpus", cpus));
    snprintf(d->shared + used, sizeof(d->shared) - used, "%s%s+%s share CPU%s %s",
             used ? "; " : "", a, b, CPU_COUNT(&both) > 1 ? "s" : "", cpus);
}

/* The default: what no other role has, else the server's CPUs. */
static void default_set(struct kb_dbplace *d, const cpu_set_t *server, const cpu_set_t *client)
{
    CPU_ZERO(&d->set);
    for (int i = 0; i < d->online && i < CPU_SETSIZE; i++)
        if (!CPU_ISSET(i, server) && !CPU_ISSET(i, client))
            CPU_SET(i, &d->set);
    if (!CPU_COUNT(&d->set))
        CPU_OR(&d->set, &d->set, server);
}

static void explain(struct kb_dbplace *d)
{
    if (!d->shared[0])
        return;
    if (d->online < KB_DBPLACE_ROLES)
        snprintf(d->note, sizeof(d->note), "this host has %d online CPU%s, fewer than one per "
                 "role (server, client, db): %s", d->online, d->online == 1 ? "" : "s", d->shared);
    else
        snprintf(d->note, sizeof(d->note), "no CPU is left outside the server's and the "
                 "client's sets: %s (narrow --client-cpus and give --db-cpus to separate them)",
                 d->shared);
}

int kb_dbplace_check(struct kb_dbplace *d, const cpu_set_t *server, const cpu_set_t *client,
                     const cpu_set_t *db, int online, char *err, size_t errlen)
{
    memset(d, 0, sizeof(*d));
    d->declared = db != NULL;
    d->online = online;
    d->shares = json_array();
    if (db)
        d->set = *db;
    else
        default_set(d, server, client);
    kb_cpulist_format(&d->set, d->cpus, sizeof(d->cpus));
    kb_cpulist_format(server, d->server_cpus, sizeof(d->server_cpus));
    kb_cpulist_format(client, d->client_cpus, sizeof(d->client_cpus));
    share(d, "server", "client", server, client);
    share(d, "server", "db", server, &d->set);
    share(d, "client", "db", client, &d->set);
    if (d->shared[0] && d->declared && online >= KB_DBPLACE_ROLES) {
        snprintf(err, errlen, "server CPUs %s, client CPUs %s and db CPUs %s must be disjoint "
                 "on a host with %d CPUs (%s)", d->server_cpus, d->client_cpus, d->cpus,
                 online, d->shared);
        return -1;
    }
    explain(d);
    return 0;
}

int kb_dbplace_resolve(struct kb_dbplace *d, const char *db_cpus, const char *server_cpus,
                       const char *client_cpus, char *err, size_t errlen)
{
    cpu_set_t srv, cli, db;
    char why[400];
    memset(d, 0, sizeof(*d));
    if (kb_cpulist_parse_online(server_cpus, &srv, NULL, 0, why, sizeof(why)) < 0 ||
        kb_cpulist_parse_online(client_cpus, &cli, NULL, 0, why, sizeof(why)) < 0) {
        snprintf(err, errlen, "server or client CPUs: %s", why);
        return -1;
    }
    if (db_cpus && kb_cpulist_parse_online(db_cpus, &db, NULL, 0, why, sizeof(why)) < 0) {
        snprintf(err, errlen, "--db-cpus: %s", why);
        return -1;
    }
    return kb_dbplace_check(d, &srv, &cli, db_cpus ? &db : NULL,
                            (int)sysconf(_SC_NPROCESSORS_ONLN), err, errlen);
}

json_t *kb_dbplace_json(const struct kb_dbplace *d)
{
    return json_pack("{s:s,s:b,s:{s:s,s:s,s:s,s:i,s:b,s:O,s:s?}}", "db_cpus", d->cpus,
        "db_cpus_declared", d->declared, "placement", "server", d->server_cpus,
        "client", d->client_cpus, "db", d->cpus, "online_cpus", d->online,
        "disjoint", !d->shared[0], "shared", d->shares, "note", d->note[0] ? d->note : NULL);
}

void kb_dbplace_free(struct kb_dbplace *d)
{
    json_decref(d->shares);
    d->shares = NULL;
}
