/* agent.c -- serve-agent (see agent.h).
 *
 * Design: one thread, one poll loop over the listening socket and up to
 * KB_AGENT_MAX_CLIENTS non-blocking connections, each with its own line buffer and
 * deadlines, so a client that connects and stays silent holds up no other; commands run
 * one at a time. The poll's short timeout lets a stop request be seen within 200 ms. The
 * run directory is private (mkdtemp, or a given one this user owns that no one else may
 * write): fixtures' logs and php-fpm's configs are never written where another user could
 * have planted a symlink. Commands are parsed against
 * the contract before anything runs: the agent never executes a string it was sent, only
 * the contract's own argv template for a runtime the contract names, so a client can start,
 * sample and stop the suite's fixtures and nothing else. Fixtures go through sandbox.h's
 * backend, so a server on another host gets the same limits as one on this host. */
#define _GNU_SOURCE
#include "runner/sandbox/agent.h"

#include <arpa/inet.h>
#include <errno.h>
#include <fcntl.h>
#include <ftw.h>
#include <jansson.h>
#include <libgen.h>
#include <limits.h>
#include <netinet/in.h>
#include <poll.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <sys/utsname.h>
#include <time.h>
#include <unistd.h>

#include "runner/sandbox/agent_auth.h"
#include "runner/util/paths.h"
#include "runner/util/identity.h"
#include "runner/util/portown.h"
#include "runner/sandbox/procs.h"
#include "runner/util/root.h"
#include "runner/sandbox/sandbox.h"
#include "runner/sandbox/spawn.h"

#define ANSWER_MAX 4096

struct agent {
    const struct kb_agent_cfg *cfg;
    struct kb_contract contract;
    struct kb_sandbox *box;
    struct kb_sandbox_fixture *sb;
    char running[64];
    int port;
    unsigned long owner;        /* the session that started the fixture */
    unsigned long sessions;     /* sessions numbered from 1 */
    char build[PATH_MAX], rundir[512];
    int made_rundir;            /* a fresh one: removed at exit */
    const char *serve_bind;
    char token[KB_AGENT_TOKEN_MAX];
};

static int runtime_known(const struct kb_contract *c, const char *name)
{
    return !strcmp(name, "control") || kb_contract_runtime(c, name) != NULL;
}

static int parse_start(const struct kb_contract *c, const char *args, struct kb_agent_cmd *cmd,
                       char *err, size_t errlen)
{
    char extra[2];
    long port;
    char portword[16], *end;
    int n = sscanf(args, "%63s %15s %1s", cmd->runtime, portword, extra);

    if (n != 2) {
        snprintf(err, errlen, "refused: usage: start RUNTIME PORT");
        return -1;
    }
    if (!runtime_known(c, cmd->runtime)) {
        snprintf(err, errlen, "refused: '%s' is not a runtime of the contract", cmd->runtime);
        return -1;
    }
    port = strtol(portword, &end, 10);
    if (*end || port < 1 || port > 65535) {
        snprintf(err, errlen, "refused: bad port '%s'", portword);
        return -1;
    }
    cmd->port = (int)port;
    return 0;
}

int kb_agent_parse(const struct kb_contract *c, const char *line, struct kb_agent_cmd *cmd,
                   char *err, size_t errlen)
{
    static const struct { const char *word; enum kb_agent_verb verb; } verbs[] = {
        { "identity", KB_AGENT_IDENTITY }, { "start", KB_AGENT_START },
        { "sample", KB_AGENT_SAMPLE }, { "limits", KB_AGENT_LIMITS },
        { "stop", KB_AGENT_STOP }, { "quit", KB_AGENT_QUIT },
    };
    char word[16], rest[2];
    size_t len = strcspn(line, " ");

    memset(cmd, 0, sizeof(*cmd));
    if (strlen(line) >= KB_AGENT_LINE_MAX || len == 0 || len >= sizeof(word)) {
        snprintf(err, errlen, "refused: not a command of this agent");
        return -1;
    }
    memcpy(word, line, len);
    word[len] = '\0';
    for (size_t i = 0; i < sizeof(verbs) / sizeof(verbs[0]); i++) {
        if (strcmp(word, verbs[i].word))
            continue;
        cmd->verb = verbs[i].verb;
        if (cmd->verb == KB_AGENT_START)
            return parse_start(c, line + len, cmd, err, errlen);
        if (sscanf(line + len, "%1s", rest) == 1) {
            snprintf(err, errlen, "refused: '%s' takes no arguments", word);
            return -1;
        }
        return 0;
    }
    snprintf(err, errlen, "refused: unknown command '%s' (accepted: identity, start RUNTIME "
             "PORT, sample, limits, stop, quit)", word);
    return -1;
}

/* ---- answers ---- */

static void answer_json(char *out, size_t outlen, json_t *j)
{
    char *text = j ? json_dumps(j, JSON_COMPACT) : NULL;

    snprintf(out, outlen, text ? "ok %s" : "err out of memory", text);
    free(text);
    json_decref(j);
}

static void do_identity(struct agent *a, char *out, size_t outlen)
{
    struct utsname u;
    char model[256];
    json_t *rts = json_array();

    uname(&u);
    kb_cpu_model(model, sizeof(model));
    for (size_t i = 0; i < a->contract.nruntimes; i++)
        json_array_append_new(rts, json_string(a->contract.runtimes[i].name));
    json_array_append_new(rts, json_string("control"));
    answer_json(out, outlen, json_pack("{s:s, s:i, s:s, s:s, s:s, s:i, s:o, s:s, s:b, s:s, "
                "s:s?}", "agent", "kneebench serve-agent", "protocol", KB_AGENT_PROTOCOL,
                "hostname", u.nodename, "kernel", u.release, "cpu_model", model,
                "cpus_online", (int)sysconf(_SC_NPROCESSORS_ONLN), "runtimes", rts,
                "backend", kb_sandbox_name(a->box), "limits", !a->cfg->no_limits,
                "serve_bind", a->serve_bind, "running", a->running[0] ? a->running : NULL));
}

/* What the contract's placeholders stand for on this agent. */
static struct kb_tmpl_vars agent_vars(const struct agent *a, int port, const char *rundir)
{
    return (struct kb_tmpl_vars){ .root = kb_root(), .build = a->build, .bind = a->serve_bind,
                                  .rundir = rundir, .port = port,
                                  .cpus = a->contract.cpus > 0 ? a->contract.cpus : 1 };
}

static int fixture_alive(void *arg)
{
    struct agent *a = arg;
    return kb_sandbox_alive(a->sb);
}

static int wait_accepting(struct agent *a, int port, char *err, size_t errlen)
{
    char why[256];
    if (kb_wait_accepting(a->serve_bind, port, 15000, fixture_alive, a, why, sizeof(why)) == 0)
        return 0;
    if (!kb_sandbox_alive(a->sb))
        snprintf(err, errlen, "the fixture exited at start (%s)", kb_sandbox_exit_reason(a->sb));
    else
        snprintf(err, errlen, "the fixture: %s", why);
    return -1;
}

static void stop_fixture(struct agent *a, char *err, size_t errlen)
{
    if (a->sb && kb_sandbox_stop(a->sb, err, errlen) < 0 && a->cfg->log)
        fprintf(a->cfg->log, "serve-agent: stopping %s: %s\n", a->running, err);
    a->sb = NULL;
    a->running[0] = '\0';
}

/* The fixture's own processes hold every listener on its port once it accepts. */
static int port_is_fixtures(struct agent *a, int port, char *err, size_t errlen)
{
    pid_t pids[KB_SANDBOX_MAX_PIDS];
    size_t n = kb_sandbox_pids(a->sb, pids, KB_SANDBOX_MAX_PIDS);
    char why[400];
    if (kb_port_check_owned(a->serve_bind, port, pids, n, why, sizeof(why)) == 0)
        return 0;
    snprintf(err, errlen, KB_AGENT_HARNESS "%s", why);
    return -1;
}

static int start_fixture(struct agent *a, const struct kb_agent_cmd *cmd, char *err,
                         size_t errlen)
{
    const struct kb_runtime *rt = !strcmp(cmd->runtime, "control") ? &a->contract.control
                                  : kb_contract_runtime(&a->contract, cmd->runtime);
    char *argv[64] = { 0 }, *env[64] = { 0 }, rundir[600], log[640];
    struct kb_fixture_spec spec = { .name = cmd->runtime, .port = cmd->port };
    struct kb_tmpl_vars vars;
    int rc = -1;

    char why[400];

    /* a process killed a moment ago may still hold the port: 2 s to let go of it */
    if (kb_port_wait_free(a->serve_bind, cmd->port, 2000, why, sizeof(why)) < 0) {
        snprintf(err, errlen, KB_AGENT_HARNESS "%s, not by a fixture of this agent", why);
        return -1;
    }
    snprintf(rundir, sizeof(rundir), "%s/%s", a->rundir, cmd->runtime);
    snprintf(log, sizeof(log), "%s/fixture.log", rundir);
    if (mkdir(rundir, 0755) != 0 && errno != EEXIST) {
        snprintf(err, errlen, "%.300s: %s", rundir, strerror(errno));
        return -1;
    }
    vars = agent_vars(a, cmd->port, rundir);
    if (kb_tmpl_argv(&rt->command, &vars, argv, 64) < 0 ||
        kb_tmpl_env(&rt->env_keys, &rt->env_vals, &vars, env, 64) < 0) {
        snprintf(err, errlen, "cannot expand the contract's command for %s", cmd->runtime);
        goto out;
    }
    spec.argv = argv;
    spec.env_add = env;
    spec.rundir = rundir;
    spec.log_path = log;
    spec.no_limits = a->cfg->no_limits;
    spec.limits = (struct kb_limits){ .cpus = a->contract.cpus,
                                      .memory_bytes = a->contract.memory_bytes,
                                      .pids = a->contract.pids };
    snprintf(spec.limits.server_cpuset, sizeof(spec.limits.server_cpuset), "%s",
             a->contract.server_cpus ? a->contract.server_cpus : "");
    if (kb_sandbox_start(a->box, &spec, &a->sb, err, errlen) < 0)
        goto out;
    snprintf(a->running, sizeof(a->running), "%s", cmd->runtime);
    a->port = cmd->port;
    /* the connect that says it accepts takes any listener: it must be the fixture's */
    if (wait_accepting(a, cmd->port, err, errlen) < 0 ||
        port_is_fixtures(a, cmd->port, err, errlen) < 0) {
        char e2[256];
        stop_fixture(a, e2, sizeof(e2));
        goto out;
    }
    rc = 0;
out:
    kb_tmpl_free(argv, 64);
    kb_tmpl_free(env, 64);
    return rc;
}

static void do_start(struct agent *a, unsigned long session, const struct kb_agent_cmd *cmd,
                     char *out, size_t outlen)
{
    char err[512] = "";

    /* one fixture at a time: another session's in the way is the harness's doing */
    if (a->sb) {
        snprintf(out, outlen, "err %sbusy: %s is running on port %d for %s", a->owner == session
                 ? "" : KB_AGENT_HARNESS, a->running, a->port, a->owner == session
                 ? "this session (stop it first)" : "another session");
        return;
    }
    if (cmd->port < 1024 && !a->cfg->allow_privileged_ports) {
        snprintf(out, outlen, "err refused: port %d is privileged (below 1024); serve-agent "
                 "--allow-privileged-ports allows it", cmd->port);
        return;
    }
    if (start_fixture(a, cmd, err, sizeof(err)) < 0) {
        snprintf(out, outlen, "err %s", err);
        return;
    }
    a->owner = session;
    answer_json(out, outlen, json_pack("{s:s, s:i, s:s}", "started", a->running, "port",
                                       a->port, "bind", a->serve_bind));
}

static void do_sample(struct agent *a, char *out, size_t outlen)
{
    struct kb_proc_sample s = { 0 };
    char err[256];

    if (!a->sb) {
        snprintf(out, outlen, "err nothing is running");
        return;
    }
    kb_sandbox_sample(a->sb, &s, err, sizeof(err));
    answer_json(out, outlen, json_pack("{s:s, s:b, s:s, s:i, s:f, s:I, s:I, s:I, s:I}",
                "runtime", a->running, "alive", kb_sandbox_alive(a->sb),
                "exit_reason", kb_sandbox_exit_reason(a->sb), "processes", (int)s.nprocs,
                "cpu_seconds", s.cpu_seconds, "rss_bytes", (json_int_t)s.rss_bytes,
                "pss_bytes", (json_int_t)s.pss_bytes, "fds", (json_int_t)s.fds,
                "threads", (json_int_t)s.threads));
}

static void do_limits(struct agent *a, char *out, size_t outlen)
{
    struct kb_limits_applied l;
    char err[256] = "";

    memset(&l, 0, sizeof(l));
    if (!a->sb) {
        snprintf(out, outlen, "err nothing is running");
        return;
    }
    if (kb_sandbox_limits(a->sb, &l, err, sizeof(err)) < 0) {
        snprintf(out, outlen, "err %s", err);
        return;
    }
    answer_json(out, outlen, json_pack("{s:s, s:i, s:I, s:I, s:f, s:s, s:I, s:I, s:I, s:s}",
                "backend", l.backend, "cgroup_version", l.cgroup_version,
                "cpu_quota_us", (json_int_t)l.cpu_quota_us,
                "cpu_period_us", (json_int_t)l.cpu_period_us, "cpus", l.cpus,
                "cpuset", l.cpuset, "memory_bytes", (json_int_t)l.memory_bytes,
                "memsw_bytes", (json_int_t)l.memsw_bytes, "pids_max", (json_int_t)l.pids_max,
                "paths", l.paths));
}

static void do_stop(struct agent *a, char *out, size_t outlen)
{
    char err[256] = "", name[64];

    if (!a->sb) {
        snprintf(out, outlen, "err nothing is running");
        return;
    }
    snprintf(name, sizeof(name), "%s", a->running);
    if (kb_sandbox_stop(a->sb, err, sizeof(err)) < 0) {
        a->sb = NULL;
        a->running[0] = '\0';
        snprintf(out, outlen, "err stopped %s, but: %s", name, err);
        return;
    }
    a->sb = NULL;
    a->running[0] = '\0';
    answer_json(out, outlen, json_pack("{s:s}", "stopped", name));
}

/* sample, limits and stop act on the fixture of the session that started it only. */
static int owned(const struct agent *a, unsigned long session, char *out, size_t outlen)
{
    if (!a->sb)
        snprintf(out, outlen, "err nothing is running");
    else if (a->owner != session)
        snprintf(out, outlen, "err refused: the running fixture belongs to another session");
    else
        return 1;
    return 0;
}

/* One command line of an authenticated session in, one answer line out (no newline).
 * Returns 1 to close the session. */
static int handle(struct agent *a, unsigned long session, const char *line, char *out,
                  size_t outlen)
{
    struct kb_agent_cmd cmd;
    char err[256];

    if (kb_agent_parse(&a->contract, line, &cmd, err, sizeof(err)) < 0) {
        snprintf(out, outlen, "err %s", err);
        return 0;
    }
    switch (cmd.verb) {
    case KB_AGENT_IDENTITY: do_identity(a, out, outlen); break;
    case KB_AGENT_START: do_start(a, session, &cmd, out, outlen); break;
    case KB_AGENT_SAMPLE: if (owned(a, session, out, outlen)) do_sample(a, out, outlen); break;
    case KB_AGENT_LIMITS: if (owned(a, session, out, outlen)) do_limits(a, out, outlen); break;
    case KB_AGENT_STOP: if (owned(a, session, out, outlen)) do_stop(a, out, outlen); break;
    case KB_AGENT_QUIT: snprintf(out, outlen, "ok {\"bye\":true}"); return 1;
    }
    return 0;
}

/* ---- connections ---- */

struct client {
    int fd;                     /* -1: a free slot */
    unsigned long session;      /* its number, for the fixture it owns */
    int authed;                 /* it proved the token */
    int closing;                /* close once out is sent */
    char hello[96];             /* the greeting, which the proof covers */
    char buf[KB_AGENT_LINE_MAX + 1];
    size_t len;
    char out[ANSWER_MAX + 2];   /* the answer not yet sent: no line is read meanwhile */
    size_t outlen, outoff;
    long since_ms;              /* the connect */
    long last_ms;               /* the last complete line, or the connect */
    long line_ms;               /* when the unfinished line in buf began; 0: none */
};

static long now_ms(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return ts.tv_sec * 1000L + ts.tv_nsec / 1000000L;
}

/* What the socket takes now of the pending answer, never waiting: a client that reads
 * nothing keeps its own answer, not the agent. -1 when the connection is broken. */
static int flush_out(struct client *c)
{
    while (c->outoff < c->outlen) {
        ssize_t w = send(c->fd, c->out + c->outoff, c->outlen - c->outoff,
                         MSG_NOSIGNAL | MSG_DONTWAIT);
        if (w < 0 && errno == EINTR)
            continue;
        if (w < 0 && errno == EAGAIN)
            return 0;
        if (w <= 0)
            return -1;
        c->outoff += (size_t)w;
    }
    c->outlen = c->outoff = 0;
    return 0;
}

static void queue(struct client *c, const char *line)
{
    snprintf(c->out, sizeof(c->out), "%s\n", line);
    c->outlen = strlen(c->out);
    c->outoff = 0;
}

/* The first line of a session: the proof of the token for this connection's greeting. */
static int authenticate(struct agent *a, struct client *c, const char *line, char *out,
                        size_t outlen)
{
    if (strncmp(line, "auth ", 5)) {
        snprintf(out, outlen, "err refused: authenticate first (auth PROOF: see "
                 "docs/security.md)");
        return 1;
    }
    if (!kb_agent_proof_ok(a->token, c->hello, line + 5)) {
        snprintf(out, outlen, "err refused: authentication failed");
        return 1;
    }
    c->authed = 1;
    snprintf(out, outlen, "ok {\"session\":%lu}", c->session);
    return 0;
}

/* Answers the complete lines in the client's buffer, one at a time: the next only once the
 * answer before it is sent. Returns 1 when the client is to be closed. */
static int drain_lines(struct agent *a, struct client *c)
{
    char *nl, out[ANSWER_MAX];

    while (!c->outlen && !c->closing && (nl = memchr(c->buf, '\n', c->len))) {
        size_t linelen = (size_t)(nl - c->buf);
        *nl = '\0';
        if (linelen && c->buf[linelen - 1] == '\r')
            c->buf[linelen - 1] = '\0';
        c->closing = c->authed ? handle(a, c->session, c->buf, out, sizeof(out))
                               : authenticate(a, c, c->buf, out, sizeof(out));
        if (a->cfg->log)
            fprintf(a->cfg->log, "serve-agent: session %lu '%.80s' -> %.120s\n", c->session,
                    c->authed && strncmp(c->buf, "auth ", 5) ? c->buf : "auth ...", out);
        queue(c, out);
        memmove(c->buf, nl + 1, c->len - linelen - 1);
        c->len -= linelen + 1;
        c->last_ms = now_ms();
        c->line_ms = c->len ? c->last_ms : 0;
        if (flush_out(c) < 0)
            return 1;
    }
    if (!c->outlen && c->len >= KB_AGENT_LINE_MAX) {
        queue(c, "err refused: line too long");
        c->closing = 1;
        flush_out(c);
    }
    return c->closing && !c->outlen;
}

/* A session's end stops the fixture it owns: no one else may, and no one is left to. */
static void drop(struct agent *a, struct client *c)
{
    close(c->fd);
    c->fd = -1;
    if (a->sb && a->owner == c->session) {
        char err[256];
        if (a->cfg->log)
            fprintf(a->cfg->log, "serve-agent: session %lu ended: stopping its %s\n",
                    c->session, a->running);
        stop_fixture(a, err, sizeof(err));
    }
}

/* What arrived on a client; 1 when it is to be closed. */
static int client_input(struct agent *a, struct client *c)
{
    ssize_t r = recv(c->fd, c->buf + c->len, sizeof(c->buf) - 1 - c->len, MSG_DONTWAIT);
    if (r < 0 && (errno == EAGAIN || errno == EINTR))
        return 0;
    if (r <= 0)
        return 1;
    if (!c->len)
        c->line_ms = now_ms();
    c->len += (size_t)r;
    return drain_lines(a, c);
}

/* The pending answer sent as far as the client takes it, then its next lines. */
static int client_output(struct agent *a, struct client *c)
{
    if (flush_out(c) < 0)
        return 1;
    return c->outlen ? 0 : drain_lines(a, c);
}

/* 1 when the client has been silent (or not reading) too long, slow to finish a line, or
 * slow to prove the token. */
static int expired(const struct agent *a, const struct client *c, long now)
{
    int idle = a->cfg->idle_timeout_ms > 0 ? a->cfg->idle_timeout_ms : KB_AGENT_IDLE_TIMEOUT_MS;
    if (!c->authed)
        return now - c->since_ms > KB_AGENT_AUTH_TIMEOUT_MS;
    return now - c->last_ms > idle || (c->line_ms && now - c->line_ms > KB_AGENT_LINE_TIMEOUT_MS);
}

/* A free slot, or the one that has waited longest without proving the token, closed to make
 * room; NULL when every slot is an authenticated session (a newcomer evicts none of those). */
static struct client *slot_for_new(struct agent *a, struct client *cl)
{
    struct client *oldest = NULL;
    for (int i = 0; i < KB_AGENT_MAX_CLIENTS; i++) {
        if (cl[i].fd < 0)
            return &cl[i];
        if (!cl[i].authed && (!oldest || cl[i].since_ms < oldest->since_ms))
            oldest = &cl[i];
    }
    if (oldest)
        drop(a, oldest);
    return oldest;
}

static void accept_client(struct agent *a, int lfd, struct client *cl)
{
    static const char full[] = "err busy: every session of this agent is taken\n";
    int fd = accept4(lfd, NULL, NULL, SOCK_CLOEXEC | SOCK_NONBLOCK);
    char nonce[KB_AGENT_NONCE_HEX];
    struct client *c;
    if (fd < 0)
        return;
    if (!(c = slot_for_new(a, cl)) || kb_agent_nonce(nonce) < 0) {
        if (send(fd, full, sizeof(full) - 1, MSG_NOSIGNAL | MSG_DONTWAIT) < 0)
            (void)0;   /* it is closed either way */
        close(fd);
        return;
    }
    memset(c, 0, sizeof(*c));
    c->fd = fd;
    c->session = ++a->sessions;
    c->since_ms = c->last_ms = now_ms();
    snprintf(c->hello, sizeof(c->hello), KB_AGENT_GREETING " %d %s", KB_AGENT_PROTOCOL, nonce);
    queue(c, c->hello);
    if (flush_out(c) < 0)
        drop(a, c);
}

/* One round of the loop: wait up to 200 ms, take a new connection, serve what arrived,
 * send what a client is ready to take, close what timed out. */
static void serve_round(struct agent *a, int lfd, struct client *cl)
{
    struct pollfd p[1 + KB_AGENT_MAX_CLIENTS];
    int idx[1 + KB_AGENT_MAX_CLIENTS];
    nfds_t n = 1;
    long now;
    p[0] = (struct pollfd){ .fd = lfd, .events = POLLIN };
    for (int i = 0; i < KB_AGENT_MAX_CLIENTS; i++)
        if (cl[i].fd >= 0) {
            idx[n] = i;
            p[n++] = (struct pollfd){ .fd = cl[i].fd,
                                      .events = cl[i].outlen ? POLLOUT : POLLIN };
        }
    if (poll(p, n, 200) > 0) {
        for (nfds_t j = 1; j < n; j++) {
            struct client *c = &cl[idx[j]];
            if (!p[j].revents || c->fd < 0)
                continue;
            if ((c->outlen ? client_output(a, c) : client_input(a, c)))
                drop(a, c);
        }
        if (p[0].revents & POLLIN)
            accept_client(a, lfd, cl);
    }
    now = now_ms();
    for (int i = 0; i < KB_AGENT_MAX_CLIENTS; i++)
        if (cl[i].fd >= 0 && expired(a, &cl[i], now))
            drop(a, &cl[i]);
}

static int listen_on(const struct kb_agent_cfg *cfg, char *err, size_t errlen)
{
    const char *addr = cfg->bind ? cfg->bind : "127.0.0.1";
    struct sockaddr_in sa = { .sin_family = AF_INET, .sin_port = htons((uint16_t)cfg->port) };
    socklen_t len = sizeof(sa);
    int fd, one = 1;

    if (inet_pton(AF_INET, addr, &sa.sin_addr) != 1) {
        snprintf(err, errlen, "bad --bind address '%s' (IPv4)", addr);
        return -1;
    }
    if ((fd = socket(AF_INET, SOCK_STREAM | SOCK_CLOEXEC, 0)) < 0 ||
        setsockopt(fd, SOL_SOCKET, SO_REUSEADDR, &one, sizeof(one)) < 0 ||
        bind(fd, (struct sockaddr *)&sa, sizeof(sa)) < 0 || listen(fd, KB_AGENT_MAX_CLIENTS) < 0 ||
        getsockname(fd, (struct sockaddr *)&sa, &len) < 0) {
        snprintf(err, errlen, "listen on %s:%d: %s", addr, cfg->port, strerror(errno));
        if (fd >= 0)
            close(fd);
        return -1;
    }
    if (cfg->log) {
        fprintf(cfg->log, "serve-agent: listening on %s:%d\n", addr, ntohs(sa.sin_port));
        fflush(cfg->log);
    }
    return fd;
}

/* A given run directory must be this user's own real directory, writable by no one else:
 * the fixtures' logs and configs are written inside it as this (often root) user. */
static int own_dir(const char *dir, char *err, size_t errlen)
{
    char why[480];
    if (kb_dir_own(dir, 0, why, sizeof(why)) == 0)
        return 0;
    snprintf(err, errlen, "--rundir %s", why);
    return -1;
}

/* The private run directory: a fresh one (mkdtemp), or the one given, made if absent.
 * Mode 0711 when made here: php-fpm's workers run as another user (www-data) and must
 * traverse it to their own directory, but no one else may list or add to it. */
static int make_rundir(struct agent *a, const struct kb_agent_cfg *cfg, char *err,
                       size_t errlen)
{
    const char *tmp = getenv("TMPDIR");
    int made = 1;
    if (!cfg->rundir)
        snprintf(a->rundir, sizeof(a->rundir), "%s/kneebench-agent-XXXXXX",
                 tmp && *tmp ? tmp : "/tmp");
    else
        snprintf(a->rundir, sizeof(a->rundir), "%s", cfg->rundir);
    if (!cfg->rundir ? !mkdtemp(a->rundir) : mkdir(a->rundir, 0700) != 0) {
        if (!cfg->rundir || errno != EEXIST) {
            snprintf(err, errlen, "%.300s: %s", a->rundir, strerror(errno));
            return -1;
        }
        made = 0;
    }
    if (own_dir(a->rundir, err, errlen) < 0)
        return -1;
    a->made_rundir = !cfg->rundir;
    if (made && chmod(a->rundir, 0711) < 0) {
        snprintf(err, errlen, "chmod %.300s: %s", a->rundir, strerror(errno));
        return -1;
    }
    return 0;
}

static int remove_one(const char *path, const struct stat *st, int flag, struct FTW *ftw)
{
    (void)st;
    (void)ftw;
    if (flag == FTW_DP)
        rmdir(path);
    else
        unlink(path);           /* a link is removed, never followed (FTW_PHYS) */
    return 0;
}

/* The fresh directory made at start goes with the agent: its fixtures' logs and configs,
 * and the token it wrote, are this run's alone. A given --rundir is the user's to keep. */
static void remove_rundir(const struct agent *a)
{
    if (a->made_rundir && a->rundir[0])
        nftw(a->rundir, remove_one, 16, FTW_DEPTH | FTW_PHYS | FTW_MOUNT);
}

/* The token every session must prove: the one given, or a fresh one in the private run
 * directory, readable by this user alone. */
static int agent_token(struct agent *a, const struct kb_agent_cfg *cfg, char *err,
                       size_t errlen)
{
    char path[600];
    if (cfg->token_path)
        return kb_agent_token_load(cfg->token_path, a->token, sizeof(a->token), err, errlen);
    kb_path(path, sizeof(path), a->rundir, "token");
    return kb_agent_token_make(path, a->token, sizeof(a->token), err, errlen);
}

static int agent_setup(struct agent *a, const struct kb_agent_cfg *cfg, char *err,
                       size_t errlen)
{
    const struct kb_sandbox_config sc = { .backend = cfg->backend, .root = kb_root(),
                                          .no_limits = cfg->no_limits };
    char self[PATH_MAX];
    ssize_t n;

    a->cfg = cfg;
    /* never the agent's own address by default: a fixture reachable from the network is
     * asked for, not implied by where the agent listens */
    a->serve_bind = cfg->serve_bind ? cfg->serve_bind : "127.0.0.1";
    if (!(a->box = kb_sandbox_open(&sc, err, errlen)))
        return -1;
    if (!cfg->no_limits && kb_sandbox_available(a->box, err, errlen) < 0)
        return -1;
    if (make_rundir(a, cfg, err, errlen) < 0 || agent_token(a, cfg, err, errlen) < 0)
        return -1;
    /* the cgroups of an agent killed with -9 hold their fixture and its port */
    if (!cfg->no_limits && kb_sandbox_sweep_stale(a->box) > 0 && cfg->log)
        fprintf(cfg->log, "serve-agent: removed cgroups left by an earlier agent\n");
    if (cfg->build_dir) {
        snprintf(a->build, sizeof(a->build), "%s", cfg->build_dir);
    } else if ((n = readlink("/proc/self/exe", self, sizeof(self) - 1)) > 0) {
        self[n] = '\0';
        snprintf(a->build, sizeof(a->build), "%s", dirname(self));
    }
    return kb_contract_load(cfg->contract_path ? cfg->contract_path : kb_root_contract(),
                            &a->contract, err, errlen);
}

int kb_agent_serve(const struct kb_agent_cfg *cfg, char *err, size_t errlen)
{
    struct agent a;
    int lfd = -1, rc = -1;

    struct client cl[KB_AGENT_MAX_CLIENTS];

    memset(&a, 0, sizeof(a));
    for (int i = 0; i < KB_AGENT_MAX_CLIENTS; i++)
        cl[i].fd = -1;
    if (agent_setup(&a, cfg, err, errlen) < 0)
        goto out;
    if ((lfd = listen_on(cfg, err, errlen)) < 0)
        goto out;
    if (cfg->log) {
        fprintf(cfg->log, "serve-agent: fixtures run under %s\n", a.rundir);
        if (!cfg->token_path)
            fprintf(cfg->log, "serve-agent: token in %s/token\n", a.rundir);
        fflush(cfg->log);
    }
    while (!*cfg->stop)
        serve_round(&a, lfd, cl);
    rc = 0;
out:
    for (int i = 0; i < KB_AGENT_MAX_CLIENTS; i++)
        if (cl[i].fd >= 0)
            drop(&a, &cl[i]);
    if (a.sb) {
        char e2[256];
        stop_fixture(&a, e2, sizeof(e2));
    }
    kb_sandbox_close(a.box);
    remove_rundir(&a);
    if (lfd >= 0)
        close(lfd);
    if (a.contract.path)
        kb_contract_free(&a.contract);
    return rc;
}
