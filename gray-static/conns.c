/* conns.c -- see conns.h.
 *
 * Each wait list is kept in the order its waits began (a connection joins at the tail with
 * `since` = now, and the clock does not go back), so its first entry is the next to reach
 * its deadline and the longest waiting: the sweep and the choice of whom to evict look at
 * two list heads, never at every connection. */
#include "gray-static/conns.h"

#include <stdlib.h>

/* ---- the two intrusive lists: the wait lists use prev/next, the fin list its own links ---- */

static void push(struct gs_conn_list *l, struct gs_conn *c)
{
    c->next = NULL;
    c->prev = l->last;
    if (l->last)
        l->last->next = c;
    else
        l->first = c;
    l->last = c;
    l->n++;
}

static void drop(struct gs_conn_list *l, struct gs_conn *c)
{
    if (c->prev)
        c->prev->next = c->next;
    else
        l->first = c->next;
    if (c->next)
        c->next->prev = c->prev;
    else
        l->last = c->prev;
    c->prev = c->next = NULL;
    l->n--;
}

static void fin_push(struct gs_conn_list *l, struct gs_conn *c)
{
    if (c->fin_listed)
        return;
    c->fin_listed = 1;
    c->fin_next = NULL;
    c->fin_prev = l->last;
    if (l->last)
        l->last->fin_next = c;
    else
        l->first = c;
    l->last = c;
    l->n++;
}

static void fin_drop(struct gs_conn_list *l, struct gs_conn *c)
{
    if (!c->fin_listed)
        return;
    c->fin_listed = 0;
    if (c->fin_prev)
        c->fin_prev->fin_next = c->fin_next;
    else
        l->first = c->fin_next;
    if (c->fin_next)
        c->fin_next->fin_prev = c->fin_prev;
    else
        l->last = c->fin_prev;
    c->fin_prev = c->fin_next = NULL;
    l->n--;
}

/* ---- states ---- */

static struct gs_conn_list *wait_list(struct gs_conns *t, const struct gs_conn *c)
{
    switch (c->state) {
    case GS_CONN_IDLE:
        return &t->idle;
    case GS_CONN_HEAD:
        return &t->head;
    default:
        return NULL;
    }
}

/* Off whatever wait list c is on (a no-op for busy and evicted connections). */
static void leave_wait(struct gs_conns *t, struct gs_conn *c)
{
    struct gs_conn_list *l = wait_list(t, c);

    if (l)
        drop(l, c);
    fin_drop(&t->fin, c);
}

static void wait_as(struct gs_conns *t, struct gs_conn *c, enum gs_conn_state st, long long now)
{
    leave_wait(t, c);
    c->state = st;
    c->since = now;
    push(wait_list(t, c), c);
    if (c->fin)
        fin_push(&t->fin, c);
}

static void evict(struct gs_conns *t, struct gs_conn *c)
{
    leave_wait(t, c);
    c->state = GS_CONN_EVICTED;
    t->live--;
    t->cfg.shut(t->cfg.arg, c->fd, GS_SHUT_EVICT);
}

/* The waiting connection whose wait began first, or NULL. */
static struct gs_conn *longest_waiting(const struct gs_conns *t)
{
    struct gs_conn *i = t->idle.first, *h = t->head.first;

    if (!i || !h)
        return i ? i : h;
    return h->since < i->since ? h : i;
}

/* ---- the interface ---- */

void gs_conns_init(struct gs_conns *t, const struct gs_conns_cfg *cfg)
{
    *t = (struct gs_conns){ .cfg = *cfg };
}

static void free_list(struct gs_conn_list *l)
{
    struct gs_conn *c = l->first, *n;

    for (; c; c = n) {
        n = c->next;
        free(c);
    }
    *l = (struct gs_conn_list){ 0 };
}

void gs_conns_clear(struct gs_conns *t)
{
    /* Busy and evicted connections are on no list: the owner closed them all before this. */
    t->fin = (struct gs_conn_list){ 0 };
    free_list(&t->idle);
    free_list(&t->head);
    t->live = 0;
}

struct gs_conn *gs_conns_open(struct gs_conns *t, int fd, long long now)
{
    struct gs_conn *c = calloc(1, sizeof(*c)), *victim;

    if (!c)
        return NULL;
    c->fd = fd;
    c->state = GS_CONN_IDLE;
    c->since = now;
    push(&t->idle, c);
    t->live++;
    while (t->cfg.limit && t->live > t->cfg.limit && (victim = longest_waiting(t))) {
        t->evicted_limit++;
        if (victim == c)
            t->refused++;
        evict(t, victim);
    }
    return c;
}

void gs_conns_close(struct gs_conns *t, struct gs_conn *c)
{
    if (c->state != GS_CONN_EVICTED) {
        leave_wait(t, c);
        t->live--;
    }
    free(c);
}

void gs_conns_head(struct gs_conns *t, struct gs_conn *c, long long now)
{
    if (c->state == GS_CONN_IDLE)
        wait_as(t, c, GS_CONN_HEAD, now);
}

void gs_conns_busy(struct gs_conns *t, struct gs_conn *c)
{
    if (c->state == GS_CONN_IDLE || c->state == GS_CONN_HEAD) {
        leave_wait(t, c);
        c->state = GS_CONN_BUSY;
    }
}

void gs_conns_idle(struct gs_conns *t, struct gs_conn *c, long long now)
{
    if (c->state == GS_CONN_EVICTED)
        return;
    wait_as(t, c, GS_CONN_IDLE, now);
    /* Poked here, in the owner's own call, the poke comes after its last read: the FIN it
     * already consumed with the request will be seen on the next look. */
    if (c->fin)
        t->cfg.shut(t->cfg.arg, c->fd, GS_SHUT_POKE);
}

void gs_conns_fin(struct gs_conns *t, struct gs_conn *c)
{
    if (c->fin || c->state == GS_CONN_EVICTED)
        return;
    c->fin = 1;
    if (c->state != GS_CONN_BUSY)
        fin_push(&t->fin, c);
}

static void sweep_list(struct gs_conns *t, struct gs_conn_list *l, long ms, long long now,
                       unsigned long *count)
{
    if (ms <= 0)
        return;
    while (l->first && l->first->since + ms <= now) {
        (*count)++;
        evict(t, l->first);
    }
}

void gs_conns_sweep(struct gs_conns *t, long long now)
{
    sweep_list(t, &t->idle, t->cfg.idle_ms, now, &t->evicted_idle);
    sweep_list(t, &t->head, t->cfg.head_ms, now, &t->evicted_head);
}

void gs_conns_poke_fins(struct gs_conns *t)
{
    for (struct gs_conn *c = t->fin.first; c; c = c->fin_next)
        t->cfg.shut(t->cfg.arg, c->fd, GS_SHUT_POKE);
}
