/* matrix.c -- kb_matrix_plan(): the points of a curve, in run order. */
#define _POSIX_C_SOURCE 200809L
#include "runner/run/curve/matrix.h"

#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "runner/util/xalloc.h"

static void strlist_add(struct kb_strlist *l, const char *s)
{
    l->v = kb_xrealloc(l->v, (l->n + 2) * sizeof(char *));
    l->v[l->n++] = kb_xstrdup(s);
    l->v[l->n] = NULL;
}

static int in_csv(const char *csv, const char *name)
{
    size_t nl = strlen(name);
    for (const char *p = csv; p && *p;) {
        size_t len = strcspn(p, ",");
        if (len == nl && !strncmp(p, name, nl))
            return 1;
        p += len + (p[len] == ',');
    }
    return 0;
}

/* Every name in csv must be in the known list; error names the first stranger. */
static int check_names(const char *csv, char *const *known, size_t n, const char *what,
                       char *err, size_t errlen)
{
    char buf[64];
    for (const char *p = csv; p && *p;) {
        size_t len = strcspn(p, ","), i;
        snprintf(buf, sizeof(buf), "%.*s", (int)(len < 63 ? len : 63), p);
        for (i = 0; i < n && strcmp(known[i], buf); i++)
            ;
        if (i == n) {
            snprintf(err, errlen, "unknown %s '%s'", what, buf);
            return -1;
        }
        p += len + (p[len] == ',');
    }
    return 0;
}

/* The named runtimes (csv, checked), or the comparison's: every runtime but the variants. */
static int pick_runtimes(const struct kb_contract *c, const char *csv, struct kb_plan *p,
                         char *err, size_t errlen)
{
    char *names[64] = { 0 };
    size_t n = 0;
    for (size_t i = 0; i < c->nruntimes && n < 64; i++)
        names[n++] = c->runtimes[i].name;
    if (csv && check_names(csv, names, n, "runtime", err, errlen))
        return -1;
    for (size_t i = 0; i < n; i++)
        if (csv ? in_csv(csv, names[i]) : !c->runtimes[i].variant_of)
            strlist_add(&p->runtimes, names[i]);
    return 0;
}

/* The db designs a --db-mode value selects, as bits of DB_READINESS and DB_BLOCKING. */
enum { DB_READINESS = 1, DB_BLOCKING = 2 };

static int db_mode_bits(const char *mode, char *err, size_t errlen)
{
    if (!mode)
        return 0;
    if (!strcmp(mode, "readiness"))
        return DB_READINESS;
    if (!strcmp(mode, "blocking"))
        return DB_BLOCKING;
    if (!strcmp(mode, "both"))
        return DB_READINESS | DB_BLOCKING;
    snprintf(err, errlen, "--db-mode is readiness, blocking or both, not '%s'", mode);
    return -1;
}

static int in_list(const struct kb_strlist *l, const char *name)
{
    for (size_t i = 0; i < l->n; i++)
        if (!strcmp(l->v[i], name))
            return 1;
    return 0;
}

/* With --db-mode: every picked runtime with a db design brings its kin in the chosen ones,
 * kept in the contract's order. */
static void add_db_kin(const struct kb_contract *c, int bits, struct kb_plan *p)
{
    struct kb_strlist want = { 0 };
    for (size_t i = 0; i < c->nruntimes; i++) {
        const struct kb_runtime *rt = &c->runtimes[i];
        const char *base = rt->variant_of ? rt->variant_of : rt->name;
        int picked = 0;
        for (size_t j = 0; j < p->runtimes.n; j++) {
            const struct kb_runtime *q = kb_contract_runtime(c, p->runtimes.v[j]);
            picked |= q && q->db_mode && !strcmp(q->variant_of ? q->variant_of : q->name, base);
        }
        if (in_list(&p->runtimes, rt->name) ||
            (picked && rt->db_mode && (bits & (!strcmp(rt->db_mode, "blocking")
                                               ? DB_BLOCKING : DB_READINESS))))
            strlist_add(&want, rt->name);
    }
    for (size_t i = 0; i < p->runtimes.n; i++)
        free(p->runtimes.v[i]);
    free(p->runtimes.v);
    p->runtimes = want;
}

static int pick_routes(const struct kb_contract *c, const char *csv, struct kb_plan *p,
                       char *err, size_t errlen)
{
    char *names[64] = { 0 };
    size_t n = 0;
    for (size_t i = 0; i < c->nroutes && n < 64; i++)
        names[n++] = c->routes[i].name;
    if (csv && check_names(csv, names, n, "route", err, errlen))
        return -1;
    if (!csv) {
        for (size_t i = 0; i < c->cmp_routes.n; i++)
            strlist_add(&p->routes, c->cmp_routes.v[i]);
        return 0;
    }
    for (size_t i = 0; i < n; i++)
        if (in_csv(csv, names[i]))
            strlist_add(&p->routes, names[i]);
    return 0;
}

static int cmp_long(const void *a, const void *b)
{
    long x = *(const long *)a, y = *(const long *)b;
    return (x > y) - (x < y);
}

/* The profile's own rates where it names them, else the comparison's; --rates overrides
 * both. */
static int pick_rates(const struct kb_contract *c, const struct kb_profile *pr,
                      const struct kb_rates *given, struct kb_plan *p, char *err, size_t errlen)
{
    const long *from = given ? given->v : pr->nrates ? pr->rates : c->rates;
    size_t n = given ? given->n : pr->nrates ? pr->nrates : c->nrates;
    p->rates = kb_xcalloc(n + 1, sizeof(long));
    for (size_t i = 0; i < n; i++) {
        if (from[i] <= 0) {
            snprintf(err, errlen, "rate %ld is not a positive req/s", from[i]);
            return -1;
        }
        p->rates[p->nrates++] = from[i];
    }
    qsort(p->rates, p->nrates, sizeof(long), cmp_long);
    /* a point's id is its runtime, route and rate: a rate twice would plan one id twice */
    for (size_t i = 1; i < p->nrates; i++)
        if (p->rates[i] == p->rates[i - 1]) {
            snprintf(err, errlen, "rate %ld given twice (--repeats N samples a rate again)",
                     p->rates[i]);
            return -1;
        }
    return 0;
}

static int set_params(const struct kb_contract *c, const struct kb_plan_opts *o,
                      struct kb_plan *p, char *err, size_t errlen)
{
    const char *name = o->profile ? o->profile : "paper";
    const struct kb_profile *pr = kb_contract_profile(c, name);
    if (!pr) {
        snprintf(err, errlen, "unknown profile '%s'", name);
        return -1;
    }
    snprintf(p->profile, sizeof(p->profile), "%s", name);
    p->duration_s = o->duration_s >= 0 ? o->duration_s : pr->duration_s;
    p->warmup_s = o->warmup_s >= 0 ? o->warmup_s : pr->warmup_s;
    p->drain_s = o->drain_s >= 0 ? o->drain_s : pr->drain_s;
    p->threads = o->threads > 0 ? o->threads : pr->threads > 0 ? pr->threads : c->threads;
    p->connections = o->connections > 0 ? o->connections
                     : pr->connections > 0 ? pr->connections : c->connections;
    p->repeats = o->repeats > 0 ? o->repeats : 1;
    p->confirm_samples = o->confirm > 0 ? o->confirm
                         : pr->confirm_samples > 0 ? pr->confirm_samples : 1;
    if (p->duration_s <= 0) {
        snprintf(err, errlen, "duration must be positive");
        return -1;
    }
    /* every load thread needs a connection: the load generator refuses fewer */
    if (p->connections < p->threads) {
        snprintf(err, errlen, "connections (%d) must be at least threads (%d)", p->connections,
                 p->threads);
        return -1;
    }
    return 0;
}

/* A route only some runtimes serve (db: gray-static) has no points for the others; with
 * --db-mode, /db has points only for the runtimes of the chosen designs. */
static int served(const struct kb_contract *c, const char *route, const char *runtime,
                  int db_bits)
{
    const struct kb_route *r = kb_contract_route(c, route);
    const struct kb_runtime *rt = kb_contract_runtime(c, runtime);
    int design = !strcmp(route, "db") && db_bits && rt && rt->db_mode
                 ? (!strcmp(rt->db_mode, "blocking") ? DB_BLOCKING : DB_READINESS) : 0;
    return r && rt && kb_runtime_serves(rt, r) && (!design || (design & db_bits));
}

/* A runtime with a db design that would have no point (a variant on routes it is not run
 * on, a design --db-mode left out) is dropped: the plan names the designs that run. Others
 * stay, pointless or not, as a plan of the db route has always listed them. */
static void drop_idle(const struct kb_contract *c, struct kb_plan *p, int db_bits)
{
    size_t k = 0;
    for (size_t i = 0; i < p->runtimes.n; i++) {
        const struct kb_runtime *rt = kb_contract_runtime(c, p->runtimes.v[i]);
        int any = !rt || !rt->db_mode;
        for (size_t j = 0; j < p->routes.n; j++)
            any |= served(c, p->routes.v[j], p->runtimes.v[i], db_bits);
        if (any)
            p->runtimes.v[k++] = p->runtimes.v[i];
        else
            free(p->runtimes.v[i]);
    }
    p->runtimes.n = k;
    if (p->runtimes.v)
        p->runtimes.v[k] = NULL;
}

static void add_point(struct kb_plan *p, size_t k, int r, const char *rt, const char *route,
                      long rate)
{
    struct kb_point *pt = &p->points[k];
    pt->index = k;
    pt->repeat = r + 1;
    pt->runtime = rt;
    pt->route = route;
    pt->rate = rate;
    snprintf(pt->id, sizeof(pt->id), p->repeats > 1 ? "%s-%s-%ld-r%d" : "%s-%s-%ld", rt, route,
             rate, r + 1);
}

/* Runtime by runtime, each climbing every route's rates on one start of its fixture. */
static size_t fill_sequential(const struct kb_contract *c, struct kb_plan *p, int db_bits)
{
    size_t nrt = p->runtimes.n, k = 0;
    for (int r = 0; r < p->repeats; r++)
        for (size_t i = 0; i < nrt; i++) {
            const char *rt = p->runtimes.v[(i + (size_t)r) % nrt];
            for (size_t j = 0; j < p->routes.n; j++)
                for (size_t q = 0; q < p->nrates && served(c, p->routes.v[j], rt, db_bits); q++)
                    add_point(p, k++, r, rt, p->routes.v[j], p->rates[q]);
        }
    return k;
}

/* Rate by rate, route by route, the runtimes side by side, their order rotated by one at
 * each step, and each repeat's step one further on than the last repeat's: every fixture stays up and climbs its rates as the sequential
 * order's does, while no runtime's points are minutes away from another's. */
static size_t fill_interleaved(const struct kb_contract *c, struct kb_plan *p, int db_bits)
{
    size_t nrt = p->runtimes.n, k = 0;
    for (int r = 0; r < p->repeats; r++)
        for (size_t q = 0, step = 0; q < p->nrates; q++)
            for (size_t j = 0; j < p->routes.n; j++, step++)
                for (size_t i = 0; i < nrt; i++) {
                    const char *rt = p->runtimes.v[(i + step + (size_t)r) % nrt];
                    if (served(c, p->routes.v[j], rt, db_bits))
                        add_point(p, k++, r, rt, p->routes.v[j], p->rates[q]);
                }
    return k;
}

static void fill_points(const struct kb_contract *c, struct kb_plan *p, int db_bits)
{
    size_t n = (size_t)p->repeats * p->runtimes.n * p->routes.n * p->nrates;
    p->points = kb_xcalloc(n + 1, sizeof(*p->points));
    p->npoints = p->interleaved ? fill_interleaved(c, p, db_bits)
                                : fill_sequential(c, p, db_bits);
}

/* --order, or its default: interleaved, unless the db route runs (its PostgreSQL is started
 * with the fixture that uses it, so those fixtures go one after another). */
static int pick_order(const char *order, struct kb_plan *p, char *err, size_t errlen)
{
    if (!order) {
        p->interleaved = !in_list(&p->routes, "db");
        return 0;
    }
    if (strcmp(order, "interleaved") && strcmp(order, "sequential")) {
        snprintf(err, errlen, "--order is interleaved or sequential, not '%s'", order);
        return -1;
    }
    p->interleaved = !strcmp(order, "interleaved");
    if (p->interleaved && in_list(&p->routes, "db")) {
        snprintf(err, errlen, "--order interleaved: the db route's PostgreSQL starts with its "
                 "fixture, so a plan with the db route runs sequential");
        return -1;
    }
    return 0;
}

/* A profile's list as the comma list an option would give, into buf; NULL when it has none
 * (then the contract's default applies). */
static const char *profile_csv(const struct kb_strlist *l, char *buf, size_t len)
{
    size_t used = 0;
    if (!l->n)
        return NULL;
    buf[0] = '\0';
    for (size_t i = 0; i < l->n && used < len; i++)
        used += (size_t)snprintf(buf + used, len - used, "%s%s", i ? "," : "", l->v[i]);
    return buf;
}

int kb_matrix_plan(const struct kb_contract *c, const struct kb_plan_opts *o, struct kb_plan *p,
                   char *err, size_t errlen)
{
    const struct kb_profile *pr;
    char rts[512], ros[512];
    int db_bits;
    memset(p, 0, sizeof(*p));
    if (set_params(c, o, p, err, errlen) || (db_bits = db_mode_bits(o->db_mode, err, errlen)) < 0)
        goto fail;
    /* set_params found it; an option still overrides what the profile names */
    pr = kb_contract_profile(c, p->profile);
    if (pick_runtimes(c, o->runtimes ? o->runtimes : profile_csv(&pr->runtimes, rts, sizeof(rts)),
                      p, err, errlen) ||
        pick_routes(c, o->routes ? o->routes : profile_csv(&pr->routes, ros, sizeof(ros)), p,
                    err, errlen) ||
        pick_rates(c, pr, o->rates, p, err, errlen))
        goto fail;
    if (db_bits && !in_list(&p->routes, "db")) {
        snprintf(err, errlen, "--db-mode is for the db route, which this plan does not run");
        goto fail;
    }
    if (db_bits)
        add_db_kin(c, db_bits, p);
    drop_idle(c, p, db_bits);
    if (pick_order(o->order, p, err, errlen) < 0)
        goto fail;
    if (!p->runtimes.n || !p->routes.n || !p->nrates) {
        snprintf(err, errlen, "the plan is empty (no runtime, route or rate selected)");
        goto fail;
    }
    fill_points(c, p, db_bits);
    if (!p->npoints) {
        snprintf(err, errlen, "the plan is empty (no selected runtime serves a selected route)");
        goto fail;
    }
    return 0;
fail:
    kb_plan_free(p);
    return -1;
}

void kb_plan_free(struct kb_plan *p)
{
    for (size_t i = 0; i < p->runtimes.n; i++)
        free(p->runtimes.v[i]);
    for (size_t i = 0; i < p->routes.n; i++)
        free(p->routes.v[i]);
    free(p->runtimes.v);
    free(p->routes.v);
    free(p->rates);
    free(p->points);
    memset(p, 0, sizeof(*p));
}

const struct kb_point *kb_plan_find(const struct kb_plan *p, const char *id)
{
    for (size_t i = 0; i < p->npoints; i++)
        if (!strcmp(p->points[i].id, id))
            return &p->points[i];
    return NULL;
}
