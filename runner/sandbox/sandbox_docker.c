/* sandbox_docker.c -- the docker backend: one fixture in its own container of the kneebench
 * image (docker/Dockerfile), under the contract's limits.
 *
 * Design: the docker CLI is run through capture.h (never through a shell), each call in its
 * own process group so a Ctrl-C at the terminal reaches the runner (which then calls stop)
 * but not the cleanup commands themselves; stdout and stderr are captured for errors.
 * A container is started detached with host networking (the loopback path is then the
 * native backend's), `--cpus --cpuset-cpus --memory --memory-swap --pids-limit` from the
 * spec's limits, a name "kneebench-<runner pid>-<runtime>-<n>" and a label carrying the
 * runner's PID, so a runner that died hard leaves containers the next start sweeps away.
 * The image's entrypoint starts the runtime named spec->name exactly as the contract says;
 * spec->argv only lends its --bind value. The image is the sandbox's (the CLI's --image),
 * else "kneebench:latest"; a fixture's identity is that image's ID plus the contract's
 * command (a host rebuild during the run changes nothing measured; a re-tagged image does),
 * and the run records what docker/image-identity.py says of the image.
 *
 * Processes and limits come from the container's cgroup, found through
 * /proc/<init pid>/cgroup and the cgroup mounts in /proc/self/mountinfo, so it works for
 * cgroup v1 (…/<ctrl>/docker/<id>) and v2 (…/system.slice/docker-<id>.scope) alike.
 * stop() copies the container's output into spec->log_path, then `docker rm -f`.
 *
 * The db route's PostgreSQL is the image's own, in a container of its own (db_start): the
 * image's entrypoint `db DIR` makes a fresh cluster with gray-static/pgcluster.sh in a named
 * volume made for this start, and the fixture's container mounts that volume to reach the
 * cluster's unix socket, so the connection is the native backend's (a socket, no TCP) and
 * no cluster outlives the run: db_stop removes the container and the volume. Its own
 * container, not the fixture's, because PostgreSQL is no part of the server measured: the
 * fixture's cgroup keeps the contract's limits for the server alone (as natively, where the
 * cluster runs outside it), while PostgreSQL gets the cpuset declared for it and its own
 * limits read back. Both carry the runner's PID label, so the sweep below removes them.
 *
 * The engine may be another host's (dkengine.h: --docker-host, --docker-context, or the
 * user's DOCKER_HOST or current context). Every docker call then goes there over its
 * transport, and nothing is read from this host's /proc: liveness and exit from `docker
 * inspect`; the cgroups, the limits read back, CPU, RSS, PSS, fds and threads from the
 * engine host's cgroup tree and /proc through the probe container; the fixture binds the
 * target address there. A docker call that cannot reach the engine marks the fixture lost
 * (kb_sandbox_lost): the harness's failure, its point redone. A runner PID label means
 * "alive" only with the runner-host label of this host: another client's runner is judged
 * by its containers' state alone. */
#define _GNU_SOURCE
#include "runner/sandbox/capture.h"
#include "runner/sandbox/cgfile.h"
#include "runner/sandbox/dkengine.h"
#include "runner/sandbox/procs.h"
#include "runner/util/digest.h"
#include "runner/util/evidence.h"
#include "runner/util/paths.h"
#include "runner/util/schema.h"
#include "runner/sandbox/sandbox_backend.h"

#include <arpa/inet.h>
#include <errno.h>
#include <fcntl.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#define DK_DEFAULT_IMAGE "kneebench:latest"
#define DK_LABEL "org.kneebench.runner-pid"
#define DK_HOST_LABEL "org.kneebench.runner-host"
#define DK_TIMEOUT_S 60
#define DK_MAX_ARGS 64
#define DK_NCTRL 4
/* Where the db container's volume is mounted in both containers (the image makes it, owned
 * by its user, so a new volume starts out writable by PostgreSQL). */
#define DK_DB_DIR "/var/lib/kneebench-db"
#define DK_DB_READY "kneebench-db: ready "
#define DK_DB_WAIT_S 60

static const char *const dk_ctrls[DK_NCTRL] = { "cpu", "cpuset", "memory", "pids" };

struct dk_fx {
    struct kb_dkengine *eng;   /* the engine it runs on */
    char name[160];            /* container name */
    char id[80];               /* full container id */
    char log_path[1024];       /* "" = discard */
    pid_t init_pid;            /* host PID of the container's PID 1 (tini) */
    unsigned long long init_start; /* its start time, so a reused PID is not taken for it */
    int version;               /* cgroup version of the container's cgroups: 1 or 2 */
    int dead;
    int lost;                  /* the engine stopped answering: the harness's failure */
    char exit_reason[600];
    char dirs[DK_NCTRL][512];  /* v1: per controller (cpu cpuset memory pids); v2: dirs[0] */
    char acct[512];            /* elsewhere, v1: the cpuacct hierarchy's (the CPU counter) */
};

/* Output of one docker CLI call: stdout and stderr kept apart, both NUL-terminated. */
struct dk_out {
    char out[4096];
    char err[1024];
};

static void chomp(char *s)
{
    size_t n = strlen(s);
    while (n && (s[n - 1] == '\n' || s[n - 1] == '\r' || s[n - 1] == ' '))
        s[--n] = '\0';
}

/* Run `docker argv...` (capture.h, in its own process group); stdout into o->out unless
 * out_fd >= 0 (then stdout AND stderr go there). Returns docker's exit status, or -1 (could
 * not run / timed out, said in o->err). */
static int docker_run(char *const argv[], struct dk_out *o, int out_fd, int timeout_s)
{
    struct kb_capture c = { .out = o->out, .out_cap = sizeof(o->out), .err = o->err,
                            .err_cap = sizeof(o->err), .to_fd = out_fd >= 0 ? out_fd : 0,
                            .timeout_ms = timeout_s * 1000, .own_pgroup = 1 };
    char why[sizeof(o->err)];
    int rc = kb_capture_run(argv, &c, why, sizeof(why));
    if (rc < 0 && c.timed_out)
        snprintf(o->err, sizeof(o->err), "docker %s: no answer within %d s", argv[1], timeout_s);
    else if (rc < 0)
        snprintf(o->err, sizeof(o->err), "%s", why);
    chomp(o->out);
    chomp(o->err);
    return rc;
}

/* "docker <what> failed: <stderr or status>" into err. */
static void say_failed(const char *what, int rc, const struct dk_out *o, char *err, size_t errlen)
{
    if (o->err[0])
        snprintf(err, errlen, "docker %s: %s", what, o->err);
    else
        snprintf(err, errlen, "docker %s failed (status %d)", what, rc);
}

/* The sandbox's state: what image-identity.py said of the image, once asked; the db
 * route's PostgreSQL container and its volume while they run. */
struct dk_state {
    struct kb_dkengine eng;
    json_t *image_identity;
    struct dk_fx *db;
    char db_volume[160];
};

/* The engine chosen; elsewhere, the target given or read from its endpoint. */
static int dk_open(struct kb_sandbox *box, char *err, size_t errlen)
{
    struct dk_state *st;
    struct in_addr ia;
    if (!box->image[0])
        snprintf(box->image, sizeof(box->image), "%s", DK_DEFAULT_IMAGE);
    if (!(box->state = st = calloc(1, sizeof(struct dk_state)))) {
        snprintf(err, errlen, "out of memory");
        return -1;
    }
    if (kb_dkengine_choose(&st->eng, box->docker_host, box->docker_context, err, errlen) < 0)
        return -1;
    box->elsewhere = st->eng.elsewhere;
    if (!box->elsewhere) {
        if (box->target[0]) {
            snprintf(err, errlen, "--target is for an engine on another host; engine %s is "
                     "this host's", st->eng.host);
            return -1;
        }
        snprintf(box->target, sizeof(box->target), "127.0.0.1");
        return 0;
    }
    if (!box->target[0])
        return kb_dkengine_target(&st->eng, box->target, sizeof(box->target), err, errlen);
    if (inet_pton(AF_INET, box->target, &ia) != 1) {
        snprintf(err, errlen, "--target must be the engine host's IPv4 address, not '%s'",
                 box->target);
        return -1;
    }
    return 0;
}

static int db_remove(struct dk_state *st, char *err, size_t errlen);

/* A PostgreSQL still running (a run that failed half-way) goes with the sandbox; the
 * fixture using its volume was stopped before this is called. */
static void dk_close(struct kb_sandbox *box)
{
    struct dk_state *st = box->state;
    char ignored[256];
    if (st) {
        db_remove(st, ignored, sizeof(ignored));
        json_decref(st->image_identity);
        kb_dkengine_close(&st->eng);
    }
    free(st);
}

/* The engine answers and has the image (carried there when elsewhere); elsewhere, its
 * probe runs. */
static int dk_available(struct kb_sandbox *box, char *err, size_t errlen)
{
    struct dk_state *st = box->state;
    char why[1024], label[128];
    if (kb_dkengine_info(&st->eng, why, sizeof(why)) < 0) {
        snprintf(err, errlen, "no Docker engine answers at %s: %s", st->eng.host, why);
        return -1;
    }
    if (kb_dkengine_image(&st->eng, box->image, err, errlen) < 0)
        return -1;
    snprintf(label, sizeof(label), DK_LABEL "=%ld", (long)getpid());
    if (st->eng.elsewhere && !st->eng.probe[0] &&
        kb_dkengine_probe_start(&st->eng, box->image, label, why, sizeof(why)) < 0) {
        snprintf(err, errlen, "engine %s: the probe container did not start: %s", st->eng.host,
                 why);
        return -1;
    }
    return 0;
}

/* This host's name, for the runner-host label. */
static const char *this_host(void)
{
    static char name[256];
    if (!name[0] && gethostname(name, sizeof(name) - 1) < 0)
        snprintf(name, sizeof(name), "unknown");
    return name;
}

/* A runner PID label names a live runner: only this host can tell, and only of its own. */
static int owner_alive(long owner, const char *host)
{
    if (strcmp(host, this_host()) != 0)
        return -1;                 /* another client's: not ours to judge */
    return owner > 0 && (kill((pid_t)owner, 0) == 0 || errno != ESRCH);
}

/* ---- stale and concurrent containers --------------------------------------------------- */

static int docker_rm(const char *name, struct dk_out *o)
{
    char *const rm[] = { "docker", "rm", "-f", "-v", (char *)name, NULL };
    return docker_run(rm, o, -1, DK_TIMEOUT_S);
}

/* Remove containers left by runners that are gone; refuse (-1, err) when a container of
 * another live kneebench is running: a point must not share the machine with another run.
 * mine (may be NULL) is this runner's PostgreSQL, the one running container allowed. */
static int clear_the_field(const char *mine, char *err, size_t errlen)
{
    struct dk_out o;
    char *const ps[] = { "docker", "ps", "-a", "--filter", "label=" DK_LABEL, "--format",
                         "{{.Names}} {{.Label \"" DK_LABEL "\"}} {{.State}} "
                         "{{.Label \"" DK_HOST_LABEL "\"}}", NULL };
    int rc = docker_run(ps, &o, -1, DK_TIMEOUT_S);
    if (rc != 0) {
        say_failed("ps", rc, &o, err, errlen);
        return -1;
    }
    char list[sizeof(o.out)], *save = NULL;
    memcpy(list, o.out, sizeof(list));
    for (char *line = strtok_r(list, "\n", &save); line; line = strtok_r(NULL, "\n", &save)) {
        char name[200], state[32], host[256] = "";
        long owner;
        if (sscanf(line, "%199s %ld %31s %255s", name, &owner, state, host) < 3 ||
            (mine && !strcmp(name, mine)))
            continue;
        /* a container made before the host label was this host's */
        int alive = owner_alive(owner, host[0] ? host : this_host());
        int mine_too = owner == (long)getpid() && alive >= 0;
        /* this runner's own running fixtures stand side by side (an interleaved curve) */
        if (mine_too && !strcmp(state, "running"))
            continue;
        if (!alive || strcmp(state, "running")) {
            if (mine_too || !alive || alive < 0)
                docker_rm(name, &o);
            continue;
        }
        snprintf(err, errlen, "container %s of kneebench pid %ld%s%s is still running; one "
                 "fixture at a time", name, owner, alive < 0 ? " on " : "", alive < 0 ? host : "");
        return -1;
    }
    return 0;
}

/* ---- the container's cgroups ----------------------------------------------------------- */

/* Start time (field 22 of /proc/PID/stat) and whether it is a zombie; 0 if gone. */
static unsigned long long proc_start(pid_t pid, int *zombie)
{
    struct kb_proc_stat st;
    if (kb_procs_stat(pid, &st) < 0)
        return 0;
    *zombie = st.state == 'Z';
    return st.start;
}

/* Does the comma-separated list contain word? */
static int has_word(const char *list, const char *word)
{
    size_t n = strlen(word);
    for (const char *p = list; (p = strstr(p, word)); p += n)
        if ((p == list || p[-1] == ',') && (p[n] == ',' || p[n] == '\0' || p[n] == '\n'))
            return 1;
    return 0;
}

/* The mount point and mount root of the v1 hierarchy holding ctrl, or of the v2 hierarchy
 * when ctrl is NULL, from /proc/self/mountinfo. 0 or -1. */
static int cg_mount(const char *ctrl, char *mnt, size_t mntlen, char *mroot, size_t rootlen)
{
    char line[2048], root[512], point[512], fstype[64], super[512];
    FILE *f = fopen("/proc/self/mountinfo", "re");
    int found = -1;
    if (!f)
        return -1;
    while (found < 0 && fgets(line, sizeof(line), f)) {
        char *dash = strstr(line, " - ");
        if (!dash || sscanf(line, "%*s %*s %*s %511s %511s", root, point) != 2 ||
            sscanf(dash + 3, "%63s %*s %511s", fstype, super) != 2)
            continue;
        if (ctrl ? !strcmp(fstype, "cgroup") && has_word(super, ctrl) : !strcmp(fstype, "cgroup2")) {
            snprintf(mnt, mntlen, "%s", point);
            snprintf(mroot, rootlen, "%s", root);
            found = 0;
        }
    }
    fclose(f);
    return found;
}

/* Join a mount point with a cgroup path (relative to the hierarchy), minus the mount root. */
static void cg_join(char *out, size_t outlen, const char *mnt, const char *mroot, const char *path)
{
    size_t rl = strlen(mroot);
    if (strcmp(mroot, "/") && !strncmp(path, mroot, rl))
        path += rl;
    snprintf(out, outlen, "%s%s", mnt, path);
}

/* Fill sb->dirs from /proc/<init>/cgroup: v1 when every controller has its own line. */
static int find_cgroups(struct dk_fx *sb, char *err, size_t errlen)
{
    char path[64], line[1024], mnt[512], mroot[512], v2path[512] = "";
    int have = 0;
    FILE *f;
    snprintf(path, sizeof(path), "/proc/%ld/cgroup", (long)sb->init_pid);
    if (!(f = fopen(path, "re"))) {
        snprintf(err, errlen, "%s: %s", path, strerror(errno));
        return -1;
    }
    while (fgets(line, sizeof(line), f)) {
        char *c1 = strchr(line, ':'), *c2 = c1 ? strchr(c1 + 1, ':') : NULL;
        if (!c2)
            continue;
        *c2 = '\0';
        chomp(c2 + 1);
        if (!strcmp(line, "0") && c1[1] == '\0')
            snprintf(v2path, sizeof(v2path), "%s", c2 + 1);
        for (int i = 0; i < DK_NCTRL; i++)
            if (has_word(c1 + 1, dk_ctrls[i]) && cg_mount(dk_ctrls[i], mnt, sizeof(mnt), mroot,
                                                           sizeof(mroot)) == 0) {
                cg_join(sb->dirs[i], sizeof(sb->dirs[i]), mnt, mroot, c2 + 1);
                have |= 1 << i;
            }
    }
    fclose(f);
    if (have == (1 << DK_NCTRL) - 1) {
        sb->version = 1;
        return 0;
    }
    if (v2path[0] && cg_mount(NULL, mnt, sizeof(mnt), mroot, sizeof(mroot)) == 0) {
        sb->version = 2;
        cg_join(sb->dirs[0], sizeof(sb->dirs[0]), mnt, mroot, v2path);
        return 0;
    }
    snprintf(err, errlen, "cannot find the cgroups of container %s (pid %ld)", sb->name,
             (long)sb->init_pid);
    return -1;
}

/* ---- an engine elsewhere: its host's cgroups and /proc, read through the probe --------- */

/* Fill sb->dirs from the engine host's /proc/<init>/cgroup, as the probe sees that host's
 * cgroup tree (KB_DKENGINE_CGROOT): v1 when every controller has its own line. */
static int find_cgroups_elsewhere(struct dk_fx *sb, char *err, size_t errlen)
{
    char pid[24], out[4096], *save = NULL, v2path[512] = "";
    char *const args[] = { pid, NULL };
    int have = 0;
    snprintf(pid, sizeof(pid), "%ld", (long)sb->init_pid);
    if (kb_dkengine_exec(sb->eng, "cat /proc/$1/cgroup", args, out, sizeof(out), err,
                         errlen) < 0)
        return -1;
    for (char *line = strtok_r(out, "\n", &save); line; line = strtok_r(NULL, "\n", &save)) {
        char *c1 = strchr(line, ':'), *c2 = c1 ? strchr(c1 + 1, ':') : NULL;
        if (!c2)
            continue;
        *c2 = '\0';
        if (!strcmp(line, "0") && c1[1] == '\0')
            snprintf(v2path, sizeof(v2path), "%s", c2 + 1);
        if (has_word(c1 + 1, "cpuacct"))
            snprintf(sb->acct, sizeof(sb->acct), KB_DKENGINE_CGROOT "/%.100s%.380s", c1 + 1,
                     c2 + 1);
        for (int i = 0; i < DK_NCTRL; i++)
            if (has_word(c1 + 1, dk_ctrls[i])) {
                /* v1 hierarchies are mounted under the controllers' own names */
                snprintf(sb->dirs[i], sizeof(sb->dirs[i]), KB_DKENGINE_CGROOT "/%.100s%.380s",
                         c1 + 1, c2 + 1);
                have |= 1 << i;
            }
    }
    if (have == (1 << DK_NCTRL) - 1) {
        sb->version = 1;
        return 0;
    }
    if (v2path[0]) {
        sb->version = 2;
        snprintf(sb->dirs[0], sizeof(sb->dirs[0]), KB_DKENGINE_CGROOT "%.480s", v2path);
        return 0;
    }
    snprintf(err, errlen, "cannot find the cgroups of container %s (pid %ld on %s)", sb->name,
             (long)sb->init_pid, sb->eng->host);
    return -1;
}

/* A failure to reach the engine loses the fixture; anything else is only this read's. */
static void note_unreachable(struct dk_fx *sb, int rc, const char *err)
{
    if (rc == -2 && !sb->lost) {
        sb->lost = sb->dead = 1;
        snprintf(sb->exit_reason, sizeof(sb->exit_reason), "engine %.200s stopped answering: "
                 "%.300s", sb->eng->host, err);
    }
}

/* The limit files, copied from the engine host into the same paths under the engine's
 * directory here, then read back as this host's would be. */
static int limits_elsewhere(struct dk_fx *sb, struct kb_limits_applied *o, char *err,
                            size_t errlen)
{
    static const char *const v2[] = { "cpu.max", "cpuset.cpus.effective",
        "cpuset.mems.effective", "memory.max", "memory.swap.max", "pids.max" };
    static const char *const v1[][2] = { { "0", "cpu.cfs_quota_us" },
        { "0", "cpu.cfs_period_us" }, { "1", "cpuset.cpus" }, { "1", "cpuset.mems" },
        { "2", "memory.limit_in_bytes" }, { "2", "memory.memsw.limit_in_bytes" },
        { "3", "pids.max" } };
    static char files[8][600];
    char *args[9] = { 0 }, out[8192], *save = NULL, local[DK_NCTRL][900];
    size_t n = sb->version == 2 ? 6 : 7;
    int rc;
    for (size_t i = 0; i < n; i++) {
        if (sb->version == 2)
            snprintf(files[i], sizeof(files[i]), "%s/%s", sb->dirs[0], v2[i]);
        else
            snprintf(files[i], sizeof(files[i]), "%s/%s", sb->dirs[v1[i][0][0] - '0'],
                     v1[i][1]);
        args[i] = files[i];
    }
    rc = kb_dkengine_exec(sb->eng, "for f; do echo \"== $f\"; head -n 1 \"$f\" 2>/dev/null; "
                          "done", args, out, sizeof(out), err, errlen);
    if (rc < 0) {
        note_unreachable(sb, rc, err);
        return -1;
    }
    for (char *l = strtok_r(out, "\n", &save); l; l = strtok_r(NULL, "\n", &save)) {
        char path[1100], dir[1100], *next;
        FILE *f;
        if (strncmp(l, "== ", 3) != 0)
            continue;
        snprintf(path, sizeof(path), "%s%s", sb->eng->tmp, l + 3);
        snprintf(dir, sizeof(dir), "%.*s", (int)(strrchr(path, '/') - path), path);
        next = save && *save && strncmp(save, "== ", 3) ? strtok_r(NULL, "\n", &save) : NULL;
        if (kb_mkdirs(dir, err, errlen) < 0 || !(f = fopen(path, "we")))
            return -1;
        fprintf(f, "%s\n", next ? next : "");
        fclose(f);
    }
    for (int i = 0; i < DK_NCTRL; i++)
        snprintf(local[i], sizeof(local[i]), "%s%s", sb->eng->tmp, sb->dirs[i]);
    if (sb->version == 2) {
        kb_cgfile_read_back_v2(local[0], o);
    } else {
        const char *d[DK_NCTRL] = { local[0], local[1], local[2], local[3] };
        kb_cgfile_read_back_v1(d, o);
    }
    return 0;
}

/* The container's CPU from its cgroup's own counter (to the microsecond), and each of its
 * processes' threads, RSS, PSS and descriptors from the engine host's /proc. */
static const char sample_script[] =
    "v=$1 cg=$2 pd=$3\n"
    "grep '^cpu' /proc/stat\n"
    "if [ \"$v\" = 2 ]; then echo \"cpu_ns $(sed -n 's/^usage_usec //p' \"$cg/cpu.stat\")000\";"
    " else echo \"cpu_ns $(cat \"$cg/cpuacct.usage\")\"; fi\n"
    "for p in $(cat \"$pd/cgroup.procs\"); do\n"
    "  st=$(sed 's/.*) //' /proc/$p/stat 2>/dev/null) || continue\n"
    "  set -- $st; shift 17; t=$1\n"
    "  r=$(sed -n 's/^Rss: *\\([0-9]*\\) kB/\\1/p' /proc/$p/smaps_rollup 2>/dev/null)\n"
    "  s=$(sed -n 's/^Pss: *\\([0-9]*\\) kB/\\1/p' /proc/$p/smaps_rollup 2>/dev/null)\n"
    "  [ -n \"$r\" ] || r=$(sed -n 's/^VmRSS: *\\([0-9]*\\) kB/\\1/p' /proc/$p/status)\n"
    "  n=$(ls /proc/$p/fd 2>/dev/null | wc -l)\n"
    "  echo \"proc $p ${t:-0} ${r:-0} ${s:--1} $n\"\n"
    "done\n";

static int sample_elsewhere(struct dk_fx *sb, struct kb_proc_sample *o, char *err,
                            size_t errlen)
{
    char v[4], out[16384], stat[8192] = "", *save = NULL;
    size_t slen = 0;
    char *args[] = { v, sb->version == 1 && sb->acct[0] ? sb->acct : sb->dirs[0],
                     sb->dirs[sb->version == 2 ? 0 : 3], NULL };
    int rc, pss_seen = 0;
    memset(o, 0, sizeof(*o));
    o->pss_bytes = -1;
    snprintf(v, sizeof(v), "%d", sb->version);
    if ((rc = kb_dkengine_exec(sb->eng, sample_script, args, out, sizeof(out), err,
                               errlen)) < 0) {
        note_unreachable(sb, rc, err);
        return -1;
    }
    for (char *l = strtok_r(out, "\n", &save); l; l = strtok_r(NULL, "\n", &save)) {
        unsigned long long ns;
        long pid, threads, fds;
        long long rss, pss;
        if (sscanf(l, "cpu_ns %llu", &ns) == 1)
            o->cpu_seconds = (double)ns / 1e9;
        else if (!strncmp(l, "cpu", 3) && slen + strlen(l) + 2 < sizeof(stat))
            slen += (size_t)snprintf(stat + slen, sizeof(stat) - slen, "%s\n", l);
        else if (sscanf(l, "proc %ld %ld %lld %lld %ld", &pid, &threads, &rss, &pss, &fds) == 5) {
            o->nprocs++;
            o->threads += threads;
            o->rss_bytes += rss * 1024;
            o->fds += fds;
            if (pss >= 0) {
                o->pss_bytes = (pss_seen ? o->pss_bytes : 0) + pss * 1024;
                pss_seen = 1;
            }
        }
    }
    kb_dkengine_procstat_put(sb->eng, stat);   /* the steal's, at the same moment */
    return 0;
}

/* ---- start ------------------------------------------------------------------------------ */

/* The value following "--bind" in the native argv, else loopback. */
static const char *bind_of(const struct kb_fixture_spec *spec)
{
    for (size_t i = 0; spec->argv && spec->argv[i]; i++)
        if (!strcmp(spec->argv[i], "--bind") && spec->argv[i + 1])
            return spec->argv[i + 1];
    return "127.0.0.1";
}

/* The `docker run` command line; strings live in store (owned by the caller). */
struct dk_cmd {
    char *argv[DK_MAX_ARGS];
    size_t n;
    char store[DK_MAX_ARGS][256];
};

static void add(struct dk_cmd *c, const char *fmt, const char *a, long long b)
{
    if (c->n + 1 >= DK_MAX_ARGS)
        return;
    snprintf(c->store[c->n], sizeof(c->store[c->n]), fmt, a ? a : "", b);
    c->argv[c->n] = c->store[c->n];
    c->argv[++c->n] = NULL;
}

/* The options every container of ours starts with: detached, named, labelled. */
static void run_head(struct dk_cmd *c, const struct dk_fx *sb)
{
    c->n = 0;
    add(c, "docker%s", NULL, 0);
    add(c, "run%s", NULL, 0);
    add(c, "--detach%s", NULL, 0);
    add(c, "--name=%s", sb->name, 0);
    add(c, "--label=" DK_LABEL "=%s%lld", NULL, (long long)getpid());
    add(c, "--label=" DK_HOST_LABEL "=%.180s", this_host(), 0);
}

/* The fixture's container; db_volume (NULL: none) is the run's PostgreSQL's. */
static void build_run(struct dk_cmd *c, const struct dk_fx *sb, const char *image,
                      const struct kb_fixture_spec *spec, const char *db_volume, const char *bind)
{
    const struct kb_limits *l = &spec->limits;
    run_head(c, sb);
    add(c, "--network=host%s", NULL, 0);
    if (!spec->no_limits) {
        if (l->cpus > 0)
            add(c, "--cpus=%s%lld", NULL, l->cpus);
        if (l->server_cpuset[0])
            add(c, "--cpuset-cpus=%s", l->server_cpuset, 0);
        if (l->memory_bytes > 0) {
            add(c, "--memory=%s%lld", NULL, l->memory_bytes);
            add(c, "--memory-swap=%s%lld", NULL, l->memory_bytes);
        }
        if (l->pids > 0)
            add(c, "--pids-limit=%s%lld", NULL, l->pids);
    }
    for (size_t i = 0; spec->env_add && spec->env_add[i]; i++)
        add(c, "--env=%s", spec->env_add[i], 0);
    if (db_volume)
        add(c, "--mount=type=volume,src=%s,dst=" DK_DB_DIR, db_volume, 0);
    add(c, "%s", image, 0);
    add(c, "%s", spec->name, 0);
    add(c, "--port%s", NULL, 0);
    add(c, "%s%lld", NULL, spec->port);
    add(c, "--bind%s", NULL, 0);
    add(c, "%s", bind ? bind : bind_of(spec), 0);
    add(c, "--cpus%s", NULL, 0);
    add(c, "%s%lld", NULL, spec->no_limits || l->cpus <= 0 ? 1 : l->cpus);
    if (spec->db_conninfo) {
        add(c, "--conninfo%s", NULL, 0);
        add(c, "%s", spec->db_conninfo, 0);
        add(c, "--db-pool%s", NULL, 0);
        add(c, "%s%lld", NULL, spec->db_pool);
    }
}

/* PostgreSQL's container: no network (the cluster listens on its socket only), the declared
 * cpuset, the cluster in the volume the fixture's container mounts too. */
static void build_db_run(struct dk_cmd *c, const struct dk_fx *sb, const char *image,
                         const char *cpus, const char *volume)
{
    run_head(c, sb);
    add(c, "--network=none%s", NULL, 0);
    if (cpus[0])
        add(c, "--cpuset-cpus=%s", cpus, 0);
    add(c, "--mount=type=volume,src=%s,dst=" DK_DB_DIR, volume, 0);
    add(c, "%s", image, 0);
    add(c, "db%s", NULL, 0);
    add(c, "%s", DK_DB_DIR, 0);
}

/* The container's id and its PID 1 on the host (0 when it already stopped). */
static int inspect_running(struct dk_fx *sb, char *err, size_t errlen)
{
    struct dk_out o;
    char *const insp[] = { "docker", "inspect", "--format", "{{.Id}} {{.State.Pid}}",
                           sb->name, NULL };
    long pid = 0;
    int rc = docker_run(insp, &o, -1, DK_TIMEOUT_S);
    if (rc != 0 || sscanf(o.out, "%79s %ld", sb->id, &pid) != 2) {
        say_failed("inspect", rc, &o, err, errlen);
        return -1;
    }
    sb->init_pid = (pid_t)pid;
    return 0;
}

static void dk_exit_note(struct dk_fx *sb);
static int fx_stop(struct dk_fx *sb, char *err, size_t errlen);
static int fx_alive(struct dk_fx *sb);

/* A handle for the container "kneebench-<runner pid>-<role>-<n>", its output to log_path. */
static struct dk_fx *new_fx(struct kb_dkengine *eng, const char *role, const char *log_path,
                            char *err, size_t errlen)
{
    static unsigned seq;
    struct dk_fx *sb = calloc(1, sizeof(*sb));
    if (!sb) {
        snprintf(err, errlen, "out of memory");
        return NULL;
    }
    sb->eng = eng;
    snprintf(sb->name, sizeof(sb->name), "kneebench-%ld-%s-%u", (long)getpid(), role, seq++);
    snprintf(sb->log_path, sizeof(sb->log_path), "%s", log_path ? log_path : "");
    return sb;
}

static int find_cgroups_elsewhere(struct dk_fx *sb, char *err, size_t errlen);

/* Elsewhere: running as docker says, its cgroups as the engine host's /proc says. */
static int launch_elsewhere(struct dk_fx *sb, char *err, size_t errlen)
{
    if (sb->init_pid <= 0 || !fx_alive(sb)) {
        snprintf(err, errlen, "container %s exited at once: %s", sb->name, sb->exit_reason);
        return -1;
    }
    return find_cgroups_elsewhere(sb, err, errlen);
}

/* Run cmd, then find the container's PID 1 and cgroups. 0, or -1 with err; the caller
 * removes the container either way it failed (it may exist even when run failed). */
static int launch(struct dk_fx *sb, struct dk_cmd *cmd, char *err, size_t errlen)
{
    struct dk_out o;
    int zombie = 0, rc;
    if ((rc = docker_run(cmd->argv, &o, -1, DK_TIMEOUT_S)) != 0) {
        say_failed("run", rc, &o, err, errlen);
        return -1;
    }
    if (inspect_running(sb, err, errlen) < 0)
        return -1;
    if (sb->eng->elsewhere)
        return launch_elsewhere(sb, err, errlen);
    if (sb->init_pid <= 0 || !(sb->init_start = proc_start(sb->init_pid, &zombie)) || zombie) {
        dk_exit_note(sb);
        snprintf(err, errlen, "container %s exited at once: %s", sb->name, sb->exit_reason);
        return -1;
    }
    return find_cgroups(sb, err, errlen);
}

static struct dk_fx *start_fx(struct dk_state *st, const char *image, const char *bind,
                              const struct kb_fixture_spec *spec, char *err, size_t errlen)
{
    struct dk_fx *sb = new_fx(&st->eng, spec->name, spec->log_path, err, errlen);
    struct dk_cmd *cmd = calloc(1, sizeof(*cmd));
    char ignored[256];
    if (!sb || !cmd) {
        snprintf(err, errlen, "out of memory");
        goto fail;
    }
    if (spec->db_conninfo && !st->db) {
        snprintf(err, errlen, "%s: a database connection but no PostgreSQL in this sandbox "
                 "(kb_sandbox_db_start)", spec->name);
        goto fail;
    }
    if (clear_the_field(st->db ? st->db->name : NULL, err, errlen) < 0)
        goto fail;
    build_run(cmd, sb, image, spec, st->db ? st->db_volume : NULL, bind);
    if (launch(sb, cmd, err, errlen) < 0) {
        fx_stop(sb, ignored, sizeof(ignored));   /* never leave a half-started one behind */
        sb = NULL;
    }
    free(cmd);
    return sb;
fail:
    free(sb);
    free(cmd);
    return NULL;
}

/* ---- running ---------------------------------------------------------------------------- */

static size_t fx_pids(struct dk_fx *sb, pid_t *out, size_t max)
{
    if (sb->eng->elsewhere)
        return 0;               /* the engine host's PIDs: sampled there */
    /* v1: the pids controller's directory (index 3) holds every process; v2: the one. */
    return kb_cgfile_procs(sb->dirs[sb->version == 2 ? 0 : 3], out, max);
}

/* The container's exit, in words, from docker (once it is dead). */
static void dk_exit_note(struct dk_fx *sb)
{
    struct dk_out o;
    char *const insp[] = { "docker", "inspect", "--format",
                           "{{.State.ExitCode}} {{.State.OOMKilled}} {{.State.Error}}", sb->name, NULL };
    int code = -1;
    char oom[8] = "";
    if (docker_run(insp, &o, -1, DK_TIMEOUT_S) != 0 || sscanf(o.out, "%d %7s", &code, oom) < 1) {
        snprintf(sb->exit_reason, sizeof(sb->exit_reason), "container gone (%.120s)", o.err);
        return;
    }
    /* tini (PID 1) exits with the runtime's status, or 128+N when a signal N killed it. */
    if (code > 128)
        snprintf(sb->exit_reason, sizeof(sb->exit_reason), "signal %d%s", code - 128,
                 !strcmp(oom, "true") ? " (OOM killed)" : "");
    else
        snprintf(sb->exit_reason, sizeof(sb->exit_reason), "exit %d%s%s", code,
                 code == 127 ? " (command not found)" : "",
                 !strcmp(oom, "true") ? " (OOM killed)" : "");
}

/* The engine says whether the container's PID 1 is still the one started; an engine that
 * does not answer loses the fixture (the harness's failure, not the fixture's). */
static int alive_elsewhere(struct dk_fx *sb)
{
    struct dk_out o;
    char *const insp[] = { "docker", "inspect", "--format", "{{.State.Running}} {{.State.Pid}}",
                           sb->name, NULL };
    char running[8] = "";
    long pid = 0;
    int rc = docker_run(insp, &o, -1, DK_TIMEOUT_S);
    if (rc == 0 && sscanf(o.out, "%7s %ld", running, &pid) == 2 && !strcmp(running, "true") &&
        (pid_t)pid == sb->init_pid)
        return 1;
    sb->dead = 1;
    if (rc != 0 && kb_dkengine_unreachable(o.err)) {
        sb->lost = 1;
        snprintf(sb->exit_reason, sizeof(sb->exit_reason), "engine %.200s stopped answering: %.300s",
                 sb->eng->host, o.err);
        return 0;
    }
    dk_exit_note(sb);
    return 0;
}

static int fx_alive(struct dk_fx *sb)
{
    int zombie = 0;
    if (sb->dead)
        return 0;
    if (sb->eng->elsewhere)
        return alive_elsewhere(sb);
    if (proc_start(sb->init_pid, &zombie) == sb->init_start && !zombie)
        return 1;
    sb->dead = 1;
    dk_exit_note(sb);
    return 0;
}

static const char *fx_exit_reason(struct dk_fx *sb)
{
    fx_alive(sb);
    return sb->dead ? sb->exit_reason : "";
}

static int fx_limits(struct dk_fx *sb, struct kb_limits_applied *o, char *err,
                             size_t errlen)
{
    memset(o, 0, sizeof(*o));
    snprintf(o->backend, sizeof(o->backend), "docker");
    o->cgroup_version = sb->version;
    o->cpu_quota_us = o->cpu_period_us = o->memory_bytes = o->memsw_bytes = o->pids_max = -1;
    if (sb->eng->elsewhere) {
        if (limits_elsewhere(sb, o, err, errlen) < 0)
            return -1;
    } else if (sb->version == 2) {
        kb_cgfile_read_back_v2(sb->dirs[0], o);
    } else {
        const char *v1[DK_NCTRL] = { sb->dirs[0], sb->dirs[1], sb->dirs[2], sb->dirs[3] };
        kb_cgfile_read_back_v1(v1, o);
    }
    if (o->cpu_quota_us > 0 && o->cpu_period_us > 0)
        o->cpus = (double)o->cpu_quota_us / (double)o->cpu_period_us;
    /* "container <id> <dir>...": truncated by whole directories if it ever overflows. */
    size_t len = (size_t)snprintf(o->paths, sizeof(o->paths), "container %.64s%s%.300s", sb->id,
                                  sb->eng->elsewhere ? " engine " : "",
                                  sb->eng->elsewhere ? sb->eng->host : "");
    for (int i = 0; i < (sb->version == 2 ? 1 : DK_NCTRL); i++) {
        /* elsewhere: the engine host's own path, not the probe's view of it */
        const char *dir = sb->dirs[i];
        char hostpath[600];
        if (sb->eng->elsewhere && !strncmp(dir, KB_DKENGINE_CGROOT, strlen(KB_DKENGINE_CGROOT))) {
            snprintf(hostpath, sizeof(hostpath), "/sys/fs/cgroup%.500s",
                     dir + strlen(KB_DKENGINE_CGROOT));
            dir = hostpath;
        }
        size_t d = strlen(dir);
        if (len + 1 + d >= sizeof(o->paths))
            break;
        o->paths[len++] = ' ';
        memcpy(o->paths + len, dir, d + 1);
        len += d;
    }
    if (o->cpu_period_us <= 0 || !o->cpuset[0]) {
        snprintf(err, errlen, "could not read limits back from %s", o->paths);
        return -1;
    }
    return 0;
}

/* ---- stop ------------------------------------------------------------------------------- */

/* The container's stdout+stderr into the spec's log file (best effort: a missing log must
 * not keep a container alive). */
static void save_logs(const struct dk_fx *sb)
{
    struct dk_out o;
    char *const logs[] = { "docker", "logs", "--timestamps", (char *)sb->name, NULL };
    int fd;
    if (!sb->log_path[0])
        return;
    /* never through a symlink: the run directory may have been prepared by someone else */
    if ((fd = open(sb->log_path, O_WRONLY | O_CREAT | O_APPEND | O_NOFOLLOW | O_CLOEXEC,
                   0644)) < 0)
        return;
    docker_run(logs, &o, fd, DK_TIMEOUT_S);
    close(fd);
}

/* Logs, then `docker rm -f` (SIGKILL to every process in it, then removal), then check it
 * is really gone. sb is freed either way. */
static int fx_stop(struct dk_fx *sb, char *err, size_t errlen)
{
    struct dk_out o;
    char *const insp[] = { "docker", "inspect", "--format", "{{.Id}}", sb->name, NULL };
    int rc = 0;
    save_logs(sb);
    int rm = docker_rm(sb->name, &o);
    if (docker_run(insp, &o, -1, DK_TIMEOUT_S) == 0) {
        snprintf(err, errlen, "container %s is still there after docker rm -f (status %d)",
                 sb->name, rm);
        rc = -1;
    }
    free(sb);
    return rc;
}

/* ---- the db route's PostgreSQL ---------------------------------------------------------- */

/* Remove the volumes of runners that are gone (their containers went first, in
 * clear_the_field): a cluster never outlives its run for long. */
static void sweep_volumes(void)
{
    struct dk_out o;
    char *const ls[] = { "docker", "volume", "ls", "--filter", "label=" DK_LABEL, "--format",
                         "{{.Name}} {{.Label \"" DK_LABEL "\"}} {{.Label \"" DK_HOST_LABEL "\"}}",
                         NULL };
    char list[sizeof(o.out)], *save = NULL;
    if (docker_run(ls, &o, -1, DK_TIMEOUT_S) != 0)
        return;
    memcpy(list, o.out, sizeof(list));
    for (char *line = strtok_r(list, "\n", &save); line; line = strtok_r(NULL, "\n", &save)) {
        char name[200], host[256] = "";
        long owner;
        if (sscanf(line, "%199s %ld %255s", name, &owner, host) >= 2 &&
            owner_alive(owner, host[0] ? host : this_host()) == 0) {
            char *const rm[] = { "docker", "volume", "rm", "-f", name, NULL };
            docker_run(rm, &o, -1, DK_TIMEOUT_S);
        }
    }
}

static int volume_create(const char *name, char *err, size_t errlen)
{
    struct dk_out o;
    char label[64], hlabel[300];
    char *const mk[] = { "docker", "volume", "create", "--label", label, "--label", hlabel,
                         (char *)name, NULL };
    int rc;
    snprintf(label, sizeof(label), DK_LABEL "=%ld", (long)getpid());
    snprintf(hlabel, sizeof(hlabel), DK_HOST_LABEL "=%s", this_host());
    if ((rc = docker_run(mk, &o, -1, DK_TIMEOUT_S)) != 0)
        say_failed("volume create", rc, &o, err, errlen);
    return rc == 0 ? 0 : -1;
}

/* Wait for the entrypoint's ready line (the cluster made, started and filled) and take the
 * conninfo from it; the container's last words when it died first. 0, or -1 with err. */
static int db_wait_ready(struct dk_fx *db, char *conninfo, size_t conninfolen, char *err,
                         size_t errlen)
{
    struct dk_out o;
    char *const logs[] = { "docker", "logs", "--tail", "40", db->name, NULL };
    for (int waited_ms = 0; waited_ms <= DK_DB_WAIT_S * 1000; waited_ms += 250) {
        int rc = docker_run(logs, &o, -1, DK_TIMEOUT_S);
        char *ready = rc == 0 ? strstr(o.out, DK_DB_READY) : NULL;
        if (ready) {
            ready += strlen(DK_DB_READY);
            snprintf(conninfo, conninfolen, "%.*s", (int)strcspn(ready, "\n"), ready);
            return 0;
        }
        if (!fx_alive(db)) {
            const char *last = strrchr(o.err, '\n');
            snprintf(err, errlen, "PostgreSQL's container %s ended (%s): %.300s", db->name,
                     db->exit_reason, last ? last + 1 : o.err);
            return -1;
        }
        struct timespec ts = { 0, 250 * 1000000L };
        nanosleep(&ts, NULL);
    }
    snprintf(err, errlen, "PostgreSQL's container %s not ready within %d s", db->name,
             DK_DB_WAIT_S);
    return -1;
}

/* Its limits as read back from its cgroup, into dir/limits.json like a fixture's. */
static int db_record_limits(struct dk_fx *db, const char *dir, char *err, size_t errlen)
{
    struct kb_limits_applied la;
    char path[KB_PATH_MAX];
    json_t *j;
    int rc;
    if (fx_limits(db, &la, err, errlen) < 0)
        return -1;
    if (!(j = kb_sandbox_limits_json(&la))) {
        snprintf(err, errlen, "out of memory");
        return -1;
    }
    rc = kb_write_json_atomic(kb_path(path, sizeof(path), dir, "limits.json"),
                              kb_schema_stamp(j, KB_SCHEMA_EVIDENCE), err, errlen);
    json_decref(j);
    return rc;
}

/* Stop the cluster (docker stop: the entrypoint shuts it down and prints its log, saved by
 * fx_stop), remove its container and its volume. 0, or -1 with err. */
static int db_remove(struct dk_state *st, char *err, size_t errlen)
{
    struct dk_out o;
    char *const rmv[] = { "docker", "volume", "rm", "-f", st->db_volume, NULL };
    int rc = 0;
    if (st->db) {
        char *const stop[] = { "docker", "stop", "--time", "10", st->db->name, NULL };
        docker_run(stop, &o, -1, DK_TIMEOUT_S);
        rc = fx_stop(st->db, err, errlen);
        st->db = NULL;
    }
    if (st->db_volume[0]) {
        int vrc = docker_run(rmv, &o, -1, DK_TIMEOUT_S);
        if (vrc != 0 && rc == 0) {
            say_failed("volume rm", vrc, &o, err, errlen);
            rc = -1;
        }
        st->db_volume[0] = '\0';
    }
    return rc;
}

static int dk_db_start(struct kb_sandbox *box, struct kb_pgrun *pg, const char *dir, char *err,
                       size_t errlen)
{
    struct dk_state *st = box->state;
    struct dk_cmd *cmd = NULL;
    char log[KB_PATH_MAX], ignored[256];
    snprintf(pg->dir, sizeof(pg->dir), "%s", dir);
    pg->conninfo[0] = '\0';
    pg->running = 0;
    if (st->db || st->db_volume[0]) {
        snprintf(err, errlen, "a PostgreSQL already runs in this sandbox");
        return -1;
    }
    if (kb_mkdirs(dir, err, errlen) < 0 ||
        !(st->db = new_fx(&st->eng, "db", kb_path(log, sizeof(log), dir, "postgres.log"), err, errlen)))
        return -1;
    if (!(cmd = calloc(1, sizeof(*cmd)))) {
        snprintf(err, errlen, "out of memory");
        goto fail;
    }
    if (clear_the_field(NULL, err, errlen) < 0)
        goto fail;
    sweep_volumes();
    /* the volume is named as its container: one cluster, one start */
    if (volume_create(st->db->name, err, errlen) < 0)
        goto fail;
    snprintf(st->db_volume, sizeof(st->db_volume), "%s", st->db->name);
    build_db_run(cmd, st->db, box->image, pg->cpus, st->db_volume);
    if (launch(st->db, cmd, err, errlen) < 0 ||
        db_wait_ready(st->db, pg->conninfo, sizeof(pg->conninfo), err, errlen) < 0 ||
        db_record_limits(st->db, dir, err, errlen) < 0)
        goto fail;
    free(cmd);
    pg->running = 1;
    return 0;
fail:
    free(cmd);
    db_remove(st, ignored, sizeof(ignored));
    return -1;
}

static int dk_db_stop(struct kb_sandbox *box, struct kb_pgrun *pg, char *err, size_t errlen)
{
    pg->running = 0;
    return db_remove(box->state, err, errlen);
}

/* ---- identity ---------------------------------------------------------------------------- */

/* The image's ID now (`docker image inspect`), into id. 0, or -1 with err. */
static int image_id(const char *image, char *id, size_t idlen, char *err, size_t errlen)
{
    char *const argv[] = { "docker", "image", "inspect", "--format", "{{.Id}}", (char *)image,
                           NULL };
    if (kb_capture_line(argv, id, idlen) < 0 || strncmp(id, "sha256:", 7) != 0) {
        snprintf(err, errlen, "docker image inspect: %s", id[0] ? id : "failed");
        id[0] = '\0';
        return -1;
    }
    return 0;
}

/* The image is what runs: its ID, and the contract's command (the entrypoint starts the
 * runtime as the contract says), unexpanded so that a free port per start is no change. */
static json_t *dk_identity(struct kb_sandbox *box, const struct kb_fixture_parts *p, char *err,
                           size_t errlen)
{
    const struct kb_runtime *rt = p->rt;
    char id[160], hex[KB_SHA256_HEX];
    struct kb_digest *d;
    json_t *cmd = json_array();
    if (image_id(box->image, id, sizeof(id), err, errlen) < 0) {
        json_decref(cmd);
        return NULL;
    }
    d = kb_digest_new();
    kb_digest_str(d, id);
    for (size_t i = 0; i < rt->command.n; i++) {
        kb_digest_str(d, rt->command.v[i]);
        json_array_append_new(cmd, json_string(rt->command.v[i]));
    }
    if (kb_digest_hex(d, hex) < 0) {
        snprintf(err, errlen, "image %s: SHA-256 failed", box->image);
        json_decref(cmd);
        return NULL;
    }
    return json_pack("{s:s,s:s,s:o,s:s}", "image", box->image, "image_id", id, "command", cmd,
                     "sha256", hex);
}

/* image-identity.py's JSON: the image's labels, base and its own image.json */
#define IMAGE_IDENTITY_MAX (256 * 1024)

/* What docker/image-identity.py prints for the image (image ID, RepoDigests, the base
 * actually used, base_is_pinned, note, inside.versions), or NULL with err. */
static json_t *image_identity(const struct kb_sandbox *box, char *err, size_t errlen)
{
    char script[KB_PATH_MAX];
    char *const argv[] = { script, (char *)box->image, NULL };
    struct kb_capture c = { .out = malloc(IMAGE_IDENTITY_MAX), .out_cap = IMAGE_IDENTITY_MAX };
    char *out = c.out, why[512];
    json_error_t je;
    json_t *j = NULL;
    int st;
    kb_path(script, sizeof(script), box->root, "docker/image-identity.py");
    st = out ? kb_capture_run(argv, &c, why, sizeof(why)) : -1;
    if (!out)
        snprintf(err, errlen, "%s: out of memory", argv[0]);
    else if (st < 0)
        snprintf(err, errlen, "%s", why);
    else if (c.truncated)
        snprintf(err, errlen, "%s %s printed more than %d bytes", argv[0], box->image,
                 IMAGE_IDENTITY_MAX);
    else if (st != 0)
        snprintf(err, errlen, "%s %s exited %d: %.300s", argv[0], box->image, st, out);
    else if (!(j = json_loads(out, 0, &je)) || !json_is_object(j) ||
             !json_is_string(json_object_get(j, "id"))) {
        snprintf(err, errlen, "%s %s: not its JSON: %.200s", argv[0], box->image,
                 j ? "no image id" : je.text);
        json_decref(j);
        j = NULL;
    }
    free(out);
    return j;
}

/* The image is what runs: its identity, not the host's builds, is the run's. */
static json_t *dk_run_evidence(struct kb_sandbox *box, char *err, size_t errlen)
{
    struct dk_state *st = box->state;
    json_decref(st->image_identity);
    if (!(st->image_identity = image_identity(box, err, errlen)))
        return NULL;
    return json_pack("{s:O,s:o}", "image", st->image_identity, "engine",
                     kb_dkengine_json(&st->eng));
}

/* A run on an engine elsewhere resumes only against the same engine and target. */
static json_t *dk_plan_keys(struct kb_sandbox *box)
{
    struct dk_state *st = box->state;
    if (!box->elsewhere)
        return json_object();
    return json_pack("{s:{s:s,s:s}}", "engine", "host", st->eng.host, "target", box->target);
}

static const char *dk_procstat(struct kb_sandbox *box)
{
    struct dk_state *st = box->state;
    return box->elsewhere ? kb_dkengine_procstat(&st->eng) : "/proc/stat";
}

/* The runtime's version inside the image (image-identity.py's inside.versions). */
static const char *dk_runtime_version(struct kb_sandbox *box, const char *runtime)
{
    struct dk_state *st = box->state;
    char err[512];
    const char *v;
    if (!st->image_identity)
        st->image_identity = image_identity(box, err, sizeof(err));
    v = json_string_value(json_object_get(json_object_get(json_object_get(
            st->image_identity, "inside"), "versions"), runtime));
    return v ? v : "unknown (not in the image's identity)";
}

static void dk_describe(const struct kb_sandbox *box, char *out, size_t outlen)
{
    const struct dk_state *st = box->state;
    if (box->elsewhere)
        snprintf(out, outlen, " image %s engine %s target %s", box->image, st->eng.host,
                 box->target);
    else
        snprintf(out, outlen, " image %s", box->image);
}

/* ---- the ops on the handles ------------------------------------------------------------ */

static int dk_start(struct kb_sandbox_fixture *f, const struct kb_fixture_spec *spec,
                    char *err, size_t errlen)
{
    /* elsewhere the fixture binds the engine host's address the load goes to */
    const char *bind = f->sb->elsewhere ? f->sb->target : NULL;
    struct dk_state *st = f->sb->state;
    struct dk_fx *fx;
    /* a run without limits skipped kb_sandbox_available; the probe is needed all the same */
    if (f->sb->elsewhere && !st->eng.probe[0] && dk_available(f->sb, err, errlen) < 0)
        return kb_dkengine_unreachable(err) ? KB_SANDBOX_HARNESS : -1;
    if (!(f->priv = fx = start_fx(f->sb->state, f->sb->image, bind, spec, err, errlen)))
        return f->sb->elsewhere && kb_dkengine_unreachable(err) ? KB_SANDBOX_HARNESS : -1;
    return 0;
}

static size_t dk_pids(struct kb_sandbox_fixture *f, pid_t *out, size_t max)
{
    return fx_pids(f->priv, out, max);
}

static int dk_sample(struct kb_sandbox_fixture *f, struct kb_proc_sample *out, char *err,
                     size_t errlen)
{
    struct dk_fx *sb = f->priv;
    pid_t pids[KB_SANDBOX_MAX_PIDS];
    if (sb->eng->elsewhere)
        return sample_elsewhere(sb, out, err, errlen);
    kb_procs_sample(pids, fx_pids(sb, pids, KB_SANDBOX_MAX_PIDS), out);
    return 0;
}

static int dk_lost(struct kb_sandbox_fixture *f, char *why, size_t whylen)
{
    struct dk_fx *sb = f->priv;
    if (sb->lost)
        snprintf(why, whylen, "lost the engine (%s)", sb->exit_reason);
    return sb->lost;
}

static int dk_alive(struct kb_sandbox_fixture *f)
{
    return fx_alive(f->priv);
}

static const char *dk_exit_reason(struct kb_sandbox_fixture *f)
{
    return fx_exit_reason(f->priv);
}

static int dk_limits(struct kb_sandbox_fixture *f, struct kb_limits_applied *o, char *err,
                     size_t errlen)
{
    return fx_limits(f->priv, o, err, errlen);
}

static int dk_stop(struct kb_sandbox_fixture *f, char *err, size_t errlen)
{
    return fx_stop(f->priv, err, errlen);
}

/* No sweep: the containers of runners that are gone are removed by the next start
 * (clear_the_field), and a run directory holds no record of a container. */
const struct kb_sandbox_ops kb_sandbox_docker = {
    .name = "docker",
    .several = 1,
    .on_this_host = 1,
    .open = dk_open,
    .close = dk_close,
    .available = dk_available,
    .start = dk_start,
    .pids = dk_pids,
    .sample = dk_sample,
    .lost = dk_lost,
    .alive = dk_alive,
    .exit_reason = dk_exit_reason,
    .limits = dk_limits,
    .stop = dk_stop,
    .db_start = dk_db_start,
    .db_stop = dk_db_stop,
    .identity = dk_identity,
    .run_evidence = dk_run_evidence,
    .runtime_version = dk_runtime_version,
    .describe = dk_describe,
    .plan_keys = dk_plan_keys,
    .procstat = dk_procstat,
};
