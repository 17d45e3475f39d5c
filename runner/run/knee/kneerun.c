/* kneerun.c -- the knee search carried out and recorded (kneerun.h). */
#define _GNU_SOURCE
#include "runner/run/knee/kneerun.h"

#include <math.h>
#include <stdio.h>
#include <string.h>
#include <time.h>

#include "runner/run/run.h"
#include "runner/sandbox/cgfile.h"
#include "runner/sandbox/procs.h"
#include "runner/util/clock.h"
#include "runner/util/evidence.h"
#include "runner/util/paths.h"

#define SETTLE_MAX_S 5.0         /* the longest wait for a server to come to rest */
#define SETTLE_QUIET 0.10        /* at rest: under a tenth of a CPU over SETTLE_STEP_S */
#define SETTLE_STEP_S 0.2

int kb_kneerun_plan(const char *dir, json_t *want, char *err, size_t errlen)
{
    return kb_run_plan_file(dir, want, "knee search", err, errlen);
}

const char *kb_kneerun_end_name(enum kb_kneerun_end e)
{
    static const char *const names[] = { "search", "max-time", "max-steps", "interrupted",
                                         "error" };
    return names[e];
}

static double now_s(void)
{
    return (double)kb_mono_now() / (double)KB_NS_PER_S;
}

/* points/R-sK, or points/R-holdK for a hold sample. */
static char *sample_name(char *buf, size_t len, long rate, int hold, int k)
{
    snprintf(buf, len, "points/%ld-%s%d", rate, hold ? "hold" : "s", k);
    return buf;
}

static json_t *step_json(const struct kb_kneerun_step *st)
{
    char dir[64];
    sample_name(dir, sizeof(dir), st->s.rate, st->s.hold, st->sample);
    return json_pack("{s:I,s:i,s:b,s:s,s:s,s:s,s:o,s:o,s:b,s:o}", "rate",
                     (json_int_t)st->s.rate, "sample", st->sample, "hold", st->s.hold, "dir",
                     dir, "why", st->why, "verdict", kb_verdict_name(st->s.verdict), "delivery",
                     kb_json_figure(st->s.delivery), "p99_us", kb_json_figure(st->s.p99_us),
                     "resumed", st->resumed, "connections_per_request",
                     kb_json_figure(st->s.conns_per_request));
}

/* The number the next sample of rate (hold or short) takes. */
static int next_sample(const struct kb_kneerun *k, long rate, int hold)
{
    int n = 1;
    for (size_t i = 0; i < k->nsteps; i++)
        n += k->steps[i].s.rate == rate && k->steps[i].s.hold == hold;
    return n;
}

/* The sample's settings: the search's short ones, or a hold's length. */
static struct kb_kneepoint_cfg point_cfg(const struct kb_kneerun *k, int hold)
{
    struct kb_kneepoint_cfg c = k->point;
    if (hold) {
        c.duration_s = k->hold_s;
        c.warmup_s = k->hold_warmup_s;
    }
    return c;
}

/* knee.json: the plan, the steps so far, and the outcome once there is one. */
static int record(const struct kb_kneerun *k, int ended, char *err, size_t errlen)
{
    char path[KB_PATH_MAX];
    json_t *steps = json_array(), *doc, *out = json_null();
    int rc;
    for (size_t i = 0; i < k->nsteps; i++)
        json_array_append_new(steps, step_json(&k->steps[i]));
    if (ended)
        out = json_pack("{s:s,s:s,s:I,s:I,s:s}", "end", kb_kneerun_end_name(k->end), "step",
                        kb_knee_step_name(k->next.step), "lo", (json_int_t)k->next.lo, "hi",
                        (json_int_t)k->next.hi, "why", k->next.why ? k->next.why : "");
    doc = json_pack("{s:i,s:s,s:O,s:o,s:o,s:f}", "schema_version", 1, "kind", "knee", "plan",
                    k->plan, "steps", steps, "outcome", out, "elapsed_s", k->elapsed_s);
    if (k->setup)
        json_object_set(doc, "setup", k->setup);
    rc = kb_run_evidence_json(kb_path(path, sizeof(path), k->dir, "knee.json"), doc, err, errlen);
    json_decref(doc);
    return rc;
}

/* Wait, at most SETTLE_MAX_S, until the server works no more (a load past its knee leaves a
 * queue it goes on answering): the next sample starts from rest. Without a server to watch,
 * a fixed second. */
static void settle(const struct kb_kneepoint_cfg *c)
{
    pid_t pids[4096];
    struct kb_proc_sample a, b;
    double t0 = now_s();
    size_t n;
    if (!kb_procwatch_has_server(&c->watch)) {
        kb_sleep_ms(1000);
        return;
    }
    do {
        n = kb_procwatch_procs(&c->watch, pids, 4096);
        kb_procs_sample(pids, n, &a);
        kb_sleep_ms((long)(SETTLE_STEP_S * 1000));
        kb_procs_sample(pids, n, &b);
    } while (b.cpu_seconds - a.cpu_seconds > SETTLE_QUIET * SETTLE_STEP_S &&
             now_s() - t0 < SETTLE_MAX_S);
}

/* The next sample of rate: read back when an earlier run finished it, else measured. */
static int take(struct kb_kneerun *k, long rate, int hold, const char *why, char *err,
                size_t errlen)
{
    struct kb_kneerun_step *st = &k->steps[k->nsteps];
    struct kb_kneepoint_cfg pc = point_cfg(k, hold);
    char dir[KB_PATH_MAX], name[64];
    double t0;
    int got;
    memset(st, 0, sizeof(*st));
    st->sample = next_sample(k, rate, hold);
    snprintf(st->why, sizeof(st->why), "%s", why);
    kb_path(dir, sizeof(dir), k->dir, sample_name(name, sizeof(name), rate, hold, st->sample));
    if ((got = kb_kneepoint_read(dir, &st->s, err, errlen)) < 0)
        return -1;
    if (got) {
        st->resumed = 1;
    } else {
        t0 = now_s();
        settle(&pc);
        if (kb_kneepoint_run(&pc, rate, st->sample, dir, &st->s, err, errlen))
            return -1;
        k->elapsed_s += now_s() - t0;
    }
    st->s.hold = hold;
    k->nsteps++;
    return 0;
}

/* The samples so far, for the decision. */
static size_t samples(const struct kb_kneerun *k, struct kb_knee_sample *s)
{
    for (size_t i = 0; i < k->nsteps; i++)
        s[i] = k->steps[i].s;
    return k->nsteps;
}

/* 1 when the search must stop before measuring rate (k->end set). */
static int bounded(struct kb_kneerun *k, long rate, int hold)
{
    struct kb_knee_sample probe;
    struct kb_kneepoint_cfg pc = point_cfg(k, hold);
    char dir[KB_PATH_MAX], name[64], err[64];
    double per = pc.warmup_s + pc.duration_s + pc.drain_s + 1.5;
    if (k->stopped && k->stopped()) {
        k->end = KB_KNEERUN_INTERRUPTED;
        return 1;
    }
    if (k->nsteps == KB_KNEE_STEPS_MAX) {
        k->end = KB_KNEERUN_MAX_STEPS;
        return 1;
    }
    sample_name(name, sizeof(name), rate, hold, next_sample(k, rate, hold));
    /* a sample already on disk costs no time */
    if (kb_kneepoint_read(kb_path(dir, sizeof(dir), k->dir, name), &probe, err, sizeof(err)) == 1)
        return 0;
    if (k->max_time_s > 0 && k->elapsed_s + per > k->max_time_s) {
        k->end = KB_KNEERUN_MAX_TIME;
        return 1;
    }
    return 0;
}

/* 1 when the first sample shows a server that closes its connection after (nearly) every
 * response, err saying so. HTTP/1.1 allows it; under --reconnect (the default off the
 * contract's routes) the closes are served, but with --no-reconnect or a contract route the
 * load model is persistent connections (the contract's, wrk2's): every rate would fail on
 * the closes alone and the search fall to --min-rate, so it is refused once, here, rather
 * than at every rate. */
static int closes_each(const struct kb_kneerun *k, char *err, size_t errlen)
{
    const struct kb_knee_sample *s = &k->steps[0].s;
    /* under --reconnect the closes are served, not breaks (runner/load/loadgen.h) */
    if (k->point.reconnect || k->nsteps != 1 || s->keepalive_breaks <= 0 || s->keepalive_breaks * 2 < s->completed)
        return 0;
    snprintf(err, errlen, "the server closes its connection after each response (%lld "
             "closes, Connection: close or a body ended by the close): kneebench measures "
             "keep-alive servers only when the URL is a contract route, its load being "
             "persistent connections (docs/knee.md, \"Keep-alive\"); --reconnect measures "
             "it all the same; no knee searched", s->keepalive_breaks);
    return 1;
}

int kb_kneerun_search(struct kb_kneerun *k, char *err, size_t errlen)
{
    struct kb_knee_sample s[KB_KNEE_STEPS_MAX];
    k->nsteps = 0;
    k->elapsed_s = 0;
    k->end = KB_KNEERUN_SEARCH;
    for (;;) {
        kb_knee_decide(s, samples(k, s), &k->opts, &k->next);
        if (k->next.step != KB_KNEE_MEASURE || bounded(k, k->next.rate, k->next.hold))
            break;
        if (take(k, k->next.rate, k->next.hold, k->next.why, err, errlen)) {
            char ignored[256];
            k->end = KB_KNEERUN_ERROR;
            record(k, 1, ignored, sizeof(ignored));     /* keep what was measured; err says why */
            return -1;
        }
        if (record(k, 0, err, errlen)) {
            k->end = KB_KNEERUN_ERROR;
            return -1;
        }
        if (k->progress)
            k->progress(k->arg, &k->steps[k->nsteps - 1], &k->next);
        if (closes_each(k, err, errlen)) {
            char ignored[256];
            k->end = KB_KNEERUN_ERROR;
            record(k, 1, ignored, sizeof(ignored));
            return -1;
        }
    }
    return record(k, 1, err, errlen);
}
