/* refine.c -- one curve cell's knee refined between its grid rates (refine.h). */
#define _GNU_SOURCE
#include "runner/run/curve/refine.h"

#include <dirent.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "runner/run/kneepoint.h"
#include "runner/util/paths.h"

/* Sample dir/points/<name>, when it is a finished point, into st; a hold sample when the
 * name ends in -h<k>. */
static int add(const char *dir, const char *name, struct kb_refine_state *st)
{
    char sub[KB_PATH_MAX], path[KB_PATH_MAX], err[256];
    const char *h = strrchr(name, '-');
    if (st->n == KB_KNEE_MAX_SAMPLES)
        return 0;
    snprintf(sub, sizeof(sub), "points/%s", name);
    if (kb_kneepoint_read(kb_path(path, sizeof(path), dir, sub), &st->s[st->n], err,
                          sizeof(err)) != 1)
        return 0;
    st->s[st->n].hold = h && h[1] == 'h';
    return (int)++st->n;
}

/* Every finished sample at rate of one kind: suffix "" (the matrix's single sample), "-r"
 * (its repeats), "-c" (confirmation), "-f" (refinement), "-h" (hold). The count. */
static int gather(const char *dir, const struct kb_refine_cell *c, long rate, const char *kind,
                  struct kb_refine_state *st)
{
    char name[256];
    int found = 0;
    if (!kind[0]) {
        snprintf(name, sizeof(name), "%s-%s-%ld", c->runtime, c->route, rate);
        return add(dir, name, st) > 0;
    }
    for (int k = 1; k <= KB_REFINE_SAMPLES_MAX; k++) {
        snprintf(name, sizeof(name), "%s-%s-%ld%s%d", c->runtime, c->route, rate, kind, k);
        found += add(dir, name, st) > 0;
    }
    return found;
}

/* name is "<runtime>-<route>-<rate>-f<k>" of this cell: its rate, else 0. The runtime and
 * route are known, so the prefix is matched whole (gray-static's never takes
 * gray-static-blocking's points) and the rest must be digits, "-f", digits. A hold sample
 * ("-h<k>") at a bisected rate is one too. */
static long refine_rate(const struct kb_refine_cell *c, const char *name)
{
    size_t lr = strlen(c->runtime), lo = strlen(c->route);
    const char *p = name;
    char *end;
    long rate;
    if (strncmp(p, c->runtime, lr) || p[lr] != '-' || strncmp(p + lr + 1, c->route, lo) ||
        p[lr + 1 + lo] != '-')
        return 0;
    p += lr + lo + 2;
    if (*p < '1' || *p > '9')
        return 0;
    rate = strtol(p, &end, 10);
    if ((strncmp(end, "-f", 2) && strncmp(end, "-h", 2)) || end[2] < '1' || end[2] > '9')
        return 0;
    for (p = end + 2; *p; p++)
        if (*p < '0' || *p > '9')
            return 0;
    return rate;
}

/* Every finished refinement sample of the cell, and the bisected rates they are at. */
static void gather_refined(const char *dir, const struct kb_refine_cell *c,
                           struct kb_refine_state *st)
{
    char pdir[KB_PATH_MAX];
    struct dirent *e;
    DIR *d = kb_path(pdir, sizeof(pdir), dir, "points") ? opendir(pdir) : NULL;
    if (!d)
        return;
    while ((e = readdir(d))) {
        long r = refine_rate(c, e->d_name);
        size_t k = 0;
        if (r <= c->grid_lo || r >= c->grid_hi || !add(dir, e->d_name, st))
            continue;
        while (k < st->nrates && st->rates[k] < r)
            k++;
        if (k < st->nrates && st->rates[k] == r)
            continue;
        memmove(&st->rates[k + 1], &st->rates[k], (st->nrates - k) * sizeof(st->rates[0]));
        st->rates[k] = r;
        st->nrates++;
    }
    closedir(d);
}

/* The search over the set of samples: the order they were taken in does not matter
 * (kneesearch.h), so a resumed refinement asks for what the interrupted one would have. */
void kb_refine_decide(const char *dir, const struct kb_refine_cell *c,
                      const struct kb_knee_opts *opts, struct kb_refine_state *st)
{
    struct kb_knee_opts o = *opts;
    memset(st, 0, sizeof(*st));
    o.start_rate = o.min_rate = c->grid_lo;
    o.max_rate = c->grid_hi;
    gather(dir, c, c->grid_lo, "", st);
    gather(dir, c, c->grid_lo, "-r", st);
    gather(dir, c, c->grid_lo, "-c", st);
    gather(dir, c, c->grid_lo, "-h", st);
    gather(dir, c, c->grid_hi, "", st);
    gather(dir, c, c->grid_hi, "-r", st);
    gather(dir, c, c->grid_hi, "-c", st);
    gather_refined(dir, c, st);
    kb_knee_decide(st->s, st->n, &o, &st->next);
    /* a grid rate is the matrix's and the confirmation's to sample, not the refinement's --
     * but for the held end's hold, which only the refinement takes */
    st->at_grid = st->next.step == KB_KNEE_MEASURE && !st->next.hold &&
                  (st->next.rate <= c->grid_lo || st->next.rate >= c->grid_hi);
}

void kb_refine_next_id(const char *dir, const struct kb_refine_cell *c, long rate, int hold,
                       char *id, size_t len)
{
    char sub[KB_PATH_MAX], path[KB_PATH_MAX], kind = hold ? 'h' : 'f';
    int k = 1;
    for (; k < KB_REFINE_SAMPLES_MAX; k++) {
        snprintf(sub, sizeof(sub), "points/%s-%s-%ld-%c%d/DONE", c->runtime, c->route, rate,
                 kind, k);
        if (!kb_file_exists(kb_path(path, sizeof(path), dir, sub)))
            break;
    }
    snprintf(id, len, "%s-%s-%ld-%c%d", c->runtime, c->route, rate, kind, k);
}

json_t *kb_refine_cell_json(const struct kb_refine_cell *c, const struct kb_refine_state *st)
{
    json_t *rates = json_array();
    for (size_t i = 0; i < st->nrates; i++)
        json_array_append_new(rates, json_integer(st->rates[i]));
    return json_pack("{s:s,s:s,s:I,s:I,s:o,s:o,s:s,s:o}", "runtime", c->runtime, "route",
                     c->route, "grid_lo_rps", (json_int_t)c->grid_lo, "grid_hi_rps",
                     (json_int_t)c->grid_hi, "lo_rps",
                     st->next.lo ? json_integer(st->next.lo) : json_null(), "hi_rps",
                     st->next.hi ? json_integer(st->next.hi) : json_null(), "step",
                     st->at_grid ? "grid" : kb_knee_step_name(st->next.step), "rates", rates);
}
