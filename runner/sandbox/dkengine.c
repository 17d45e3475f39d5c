/* dkengine.c -- the Docker engine the docker backend drives, here or elsewhere (dkengine.h). */
#define _GNU_SOURCE
#include "runner/sandbox/dkengine.h"
#include "runner/sandbox/capture.h"
#include "runner/sandbox/launch.h"

#include <arpa/inet.h>
#include <errno.h>
#include <fcntl.h>
#include <ftw.h>
#include <netdb.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#define EN_TIMEOUT_S 60
/* docker save | docker load of an image of a few GiB over SSH */
#define EN_TRANSFER_S 900
#define EN_LOCAL "unix:///var/run/docker.sock"

static void chomp(char *s)
{
    size_t n = strlen(s);
    while (n && (s[n - 1] == '\n' || s[n - 1] == '\r' || s[n - 1] == ' '))
        s[--n] = '\0';
}

/* Run argv; stdout into out, stderr into err (both may be NULL). Its status, or -1. */
static int en_run(char *const argv[], char *out, size_t outcap, char *err, size_t errlen,
                  int timeout_s)
{
    char obuf[256], ebuf[1024], why[512];
    struct kb_capture c = { .out = out ? out : obuf, .out_cap = out ? outcap : sizeof(obuf),
                            .err = ebuf, .err_cap = sizeof(ebuf),
                            .timeout_ms = timeout_s * 1000, .own_pgroup = 1 };
    int rc = kb_capture_run(argv, &c, why, sizeof(why));
    chomp(c.out);
    chomp(ebuf);
    if (err && errlen) {
        if (rc < 0 && c.timed_out)
            snprintf(err, errlen, "docker %s: no answer within %d s", argv[1], timeout_s);
        else if (rc < 0)
            snprintf(err, errlen, "%s", why);
        else if (rc != 0)
            snprintf(err, errlen, "docker %s: %s", argv[1],
                     ebuf[0] ? ebuf : "failed");
    }
    return rc;
}

int kb_dkengine_unreachable(const char *t)
{
    static const char *const words[] = { "error during connect", "Cannot connect to the Docker",
        "no answer within", "connection reset", "Connection reset", "broken pipe",
        "Connection closed", "connection refused", "Connection refused", "exit status 255" };
    for (size_t i = 0; i < sizeof(words) / sizeof(words[0]); i++)
        if (strstr(t, words[i]))
            return 1;
    return 0;
}

/* The endpoint of context name (`docker context inspect`). 0, or -1 with err. */
static int context_host(const char *name, char *host, size_t hostlen, char *err, size_t errlen)
{
    char *const argv[] = { "docker", "context", "inspect", "--format",
                           "{{.Endpoints.docker.Host}}", (char *)name, NULL };
    if (en_run(argv, host, hostlen, err, errlen, 20) != 0 || !host[0]) {
        if (!err[0])
            snprintf(err, errlen, "docker context %s: no endpoint", name);
        return -1;
    }
    return 0;
}

int kb_dkengine_choose(struct kb_dkengine *e, const char *host, const char *context, char *err,
                       size_t errlen)
{
    const char *env = getenv("DOCKER_HOST");
    char name[128] = "";
    err[0] = '\0';
    if (host && *host) {
        setenv("DOCKER_HOST", host, 1);
        unsetenv("DOCKER_CONTEXT");
        snprintf(e->host, sizeof(e->host), "%s", host);
        snprintf(e->chosen_by, sizeof(e->chosen_by), "--docker-host");
    } else if (context && *context) {
        unsetenv("DOCKER_HOST");
        setenv("DOCKER_CONTEXT", context, 1);
        snprintf(e->context, sizeof(e->context), "%s", context);
        snprintf(e->chosen_by, sizeof(e->chosen_by), "--docker-context");
        if (context_host(context, e->host, sizeof(e->host), err, errlen) < 0)
            return -1;
    } else if (env && *env) {
        snprintf(e->host, sizeof(e->host), "%s", env);
        snprintf(e->chosen_by, sizeof(e->chosen_by), "DOCKER_HOST");
    } else {
        char *const show[] = { "docker", "context", "show", NULL };
        const char *ctx = getenv("DOCKER_CONTEXT");
        if (ctx && *ctx)
            snprintf(name, sizeof(name), "%s", ctx);
        else if (en_run(show, name, sizeof(name), NULL, 0, 20) != 0)
            name[0] = '\0';
        snprintf(e->chosen_by, sizeof(e->chosen_by), "context");
        snprintf(e->context, sizeof(e->context), "%s", name[0] ? name : "default");
        if (!name[0] || context_host(name, e->host, sizeof(e->host), err, errlen) < 0)
            snprintf(e->host, sizeof(e->host), EN_LOCAL);   /* the CLI's own default */
        err[0] = '\0';
    }
    e->elsewhere = strncmp(e->host, "unix://", 7) != 0;
    return 0;
}

int kb_dkengine_target(const struct kb_dkengine *e, char *out, size_t outlen, char *err,
                       size_t errlen)
{
    const char *p = strstr(e->host, "://"), *at;
    char name[256];
    struct addrinfo hints = { .ai_family = AF_INET, .ai_socktype = SOCK_STREAM }, *ai = NULL;
    int rc;
    if (!p) {
        snprintf(err, errlen, "engine %s: not a URL; give --target IPV4", e->host);
        return -1;
    }
    p += 3;
    at = strchr(p, '@');
    if (at && at < p + strcspn(p, "/"))
        p = at + 1;
    snprintf(name, sizeof(name), "%.*s", (int)strcspn(p, ":/"), p);
    if (!name[0] || name[0] == '[') {
        snprintf(err, errlen, "engine %s: no IPv4 host in it; give --target IPV4", e->host);
        return -1;
    }
    if ((rc = getaddrinfo(name, NULL, &hints, &ai)) != 0 || !ai) {
        snprintf(err, errlen, "engine %s: %s does not resolve to IPv4 (%s); give --target",
                 e->host, name, gai_strerror(rc));
        return -1;
    }
    inet_ntop(AF_INET, &((struct sockaddr_in *)ai->ai_addr)->sin_addr, out, (socklen_t)outlen);
    freeaddrinfo(ai);
    return 0;
}

int kb_dkengine_info(struct kb_dkengine *e, char *err, size_t errlen)
{
    char out[1024];
    char *const argv[] = { "docker", "info", "--format",
        "{{.ServerVersion}}\t{{.Name}}\t{{.OperatingSystem}}\t{{.KernelVersion}}\t{{.NCPU}}",
        NULL };
    char *save = NULL, *f[5] = { 0 };
    if (en_run(argv, out, sizeof(out), err, errlen, 30) != 0 || !out[0]) {
        if (!out[0] && !err[0])
            snprintf(err, errlen, "docker info printed nothing");
        return -1;
    }
    for (int i = 0; i < 5; i++)
        f[i] = strtok_r(i ? NULL : out, "\t", &save);
    snprintf(e->version, sizeof(e->version), "%s", f[0] ? f[0] : "");
    snprintf(e->name, sizeof(e->name), "%s", f[1] ? f[1] : "");
    snprintf(e->os, sizeof(e->os), "%s", f[2] ? f[2] : "");
    snprintf(e->kernel, sizeof(e->kernel), "%s", f[3] ? f[3] : "");
    e->ncpu = f[4] ? atoi(f[4]) : 0;
    return e->version[0] ? 0 : -1;
}

/* The image's ID on this host's engine (local 1) or the chosen one. 0, or -1 with err. */
static int image_id_on(int local, const char *image, char *id, size_t idlen, char *err,
                       size_t errlen)
{
    char *const chosen[] = { "docker", "image", "inspect", "--format", "{{.Id}}",
                             (char *)image, NULL };
    char *const here[] = { "docker", "-H", EN_LOCAL, "image", "inspect", "--format", "{{.Id}}",
                           (char *)image, NULL };
    if (en_run(local ? here : chosen, id, idlen, err, errlen, EN_TIMEOUT_S) != 0 ||
        strncmp(id, "sha256:", 7) != 0) {
        if (!err[0])
            snprintf(err, errlen, "docker image inspect %s: no ID", image);
        return -1;
    }
    return 0;
}

/* One end of the pipe as its stdin or stdout, in a session of its own (wait_until kills
 * its group), its stderr discarded. */
static pid_t spawn_piped(char *const argv[], int in, int out, char *err, size_t errlen)
{
    int stdio[3] = { in, out, -1 };
    struct kb_launch l = { .argv = argv, .new_session = 1, .stdio = stdio };
    return kb_launch(&l, err, errlen);
}

/* Wait for pid until deadline (CLOCK_MONOTONIC s), killing its group past it: its status. */
static int wait_until(pid_t pid, time_t deadline)
{
    int st;
    for (;;) {
        pid_t w = waitpid(pid, &st, WNOHANG);
        struct timespec now, ts = { 0, 100 * 1000000L };
        if (w == pid)
            return WIFEXITED(st) ? WEXITSTATUS(st) : 128 + WTERMSIG(st);
        if (w < 0 && errno != EINTR)
            return -1;
        clock_gettime(CLOCK_MONOTONIC, &now);
        if (now.tv_sec > deadline) {
            kill(-pid, SIGKILL);
            kill(pid, SIGKILL);
            waitpid(pid, &st, 0);
            return -1;
        }
        nanosleep(&ts, NULL);
    }
}

/* docker save here | docker load there: 0, or -1 with err. */
static int carry_image(const char *image, char *err, size_t errlen)
{
    char *const save[] = { "docker", "-H", EN_LOCAL, "save", (char *)image, NULL };
    char *const load[] = { "docker", "load", "--quiet", NULL };
    struct timespec now;
    int fd[2], s1, s2;
    pid_t p1, p2;
    if (pipe2(fd, O_CLOEXEC) < 0) {
        snprintf(err, errlen, "pipe: %s", strerror(errno));
        return -1;
    }
    p1 = spawn_piped(save, -1, fd[1], err, errlen);
    p2 = p1 > 0 ? spawn_piped(load, fd[0], -1, err, errlen) : -1;
    close(fd[0]);
    close(fd[1]);
    if (p1 <= 0 || p2 <= 0) {
        if (p1 > 0)
            wait_until(p1, 0);
        return -1;
    }
    clock_gettime(CLOCK_MONOTONIC, &now);
    s1 = p1 > 0 ? wait_until(p1, now.tv_sec + EN_TRANSFER_S) : -1;
    s2 = p2 > 0 ? wait_until(p2, now.tv_sec + EN_TRANSFER_S) : -1;
    if (s1 != 0 || s2 != 0) {
        snprintf(err, errlen, "docker save %s | docker load: status %d and %d", image, s1, s2);
        return -1;
    }
    return 0;
}

int kb_dkengine_image(struct kb_dkengine *e, const char *image, char *err, size_t errlen)
{
    char there[160], here[160], why[512];
    err[0] = '\0';
    if (image_id_on(0, image, there, sizeof(there), why, sizeof(why)) == 0) {
        snprintf(e->image_note, sizeof(e->image_note), "present on the engine (%.80s)", there);
        return 0;
    }
    if (!e->elsewhere) {
        snprintf(err, errlen, "image %s not found (make image, or --image IMG): %s", image, why);
        return -1;
    }
    if (image_id_on(1, image, here, sizeof(here), why, sizeof(why)) < 0) {
        snprintf(err, errlen, "image %s is neither on engine %s nor on this host's (%s): build "
                 "it there, or here with make image", image, e->host, why);
        return -1;
    }
    if (carry_image(image, err, errlen) < 0)
        return -1;
    if (image_id_on(0, image, there, sizeof(there), why, sizeof(why)) < 0 ||
        strcmp(there, here) != 0) {
        snprintf(err, errlen, "image %s loaded into %s but its ID there is %s, not this host's "
                 "%s", image, e->host, there[0] ? there : why, here);
        return -1;
    }
    snprintf(e->image_note, sizeof(e->image_note), "loaded from this host's engine (docker "
             "save | docker load over the engine's transport); ID %.80s checked there after",
             here);
    return 0;
}

int kb_dkengine_probe_start(struct kb_dkengine *e, const char *image, const char *label,
                            char *err, size_t errlen)
{
    char name[160], lab[256], out[256];
    char *const argv[] = { "docker", "run", "--detach", "--name", name, "--label", lab,
                           "--pid=host", "--network=none", "--cgroupns=host",
                           "--volume=/sys/fs/cgroup:" KB_DKENGINE_CGROOT ":ro",
                           "--entrypoint=sleep", (char *)image, "infinity", NULL };
    if (!e->elsewhere)
        return 0;
    snprintf(name, sizeof(name), "kneebench-%ld-probe", (long)getpid());
    snprintf(lab, sizeof(lab), "%s", label);
    snprintf(e->tmp, sizeof(e->tmp), "/tmp/kneebench-engine-XXXXXX");
    if (!mkdtemp(e->tmp)) {
        snprintf(err, errlen, "mkdtemp: %s", strerror(errno));
        e->tmp[0] = '\0';
        return -1;
    }
    snprintf(e->probe, sizeof(e->probe), "%s", name);
    if (en_run(argv, out, sizeof(out), err, errlen, EN_TIMEOUT_S) != 0)
        return -1;
    return 0;
}

static int rm_entry(const char *path, const struct stat *sb, int flag, struct FTW *ftw)
{
    (void)sb;
    (void)flag;
    (void)ftw;
    remove(path);
    return 0;
}

void kb_dkengine_close(struct kb_dkengine *e)
{
    if (e->probe[0]) {
        char *const rm[] = { "docker", "rm", "-f", e->probe, NULL };
        en_run(rm, NULL, 0, NULL, 0, EN_TIMEOUT_S);
        e->probe[0] = '\0';
    }
    if (e->tmp[0]) {
        nftw(e->tmp, rm_entry, 16, FTW_DEPTH | FTW_PHYS);
        e->tmp[0] = '\0';
    }
}

int kb_dkengine_exec(struct kb_dkengine *e, const char *script, char *const args[], char *out,
                     size_t outcap, char *err, size_t errlen)
{
    char *argv[32] = { "docker", "exec", e->probe, "sh", "-c", (char *)script, "sh" };
    size_t n = 7;
    err[0] = '\0';
    if (!e->probe[0]) {
        snprintf(err, errlen, "no probe container on engine %s", e->host);
        return -1;
    }
    for (size_t i = 0; args && args[i] && n + 1 < sizeof(argv) / sizeof(argv[0]); i++)
        argv[n++] = args[i];
    argv[n] = NULL;
    if (en_run(argv, out, outcap, err, errlen, 20) == 0)
        return 0;
    return kb_dkengine_unreachable(err) ? -2 : -1;
}

static double mono_s(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (double)ts.tv_sec + (double)ts.tv_nsec / 1e9;
}

int kb_dkengine_procstat_put(struct kb_dkengine *e, const char *text)
{
    char path[300], tmp[300];
    FILE *f;
    if (!e->tmp[0])
        return -1;
    snprintf(path, sizeof(path), "%s/proc-stat", e->tmp);
    snprintf(tmp, sizeof(tmp), "%s/proc-stat.new", e->tmp);
    if (!(f = fopen(tmp, "we")))
        return -1;
    fprintf(f, "%s\n", text);
    if (fclose(f) != 0 || rename(tmp, path) < 0)
        return -1;
    e->procstat_at = mono_s();
    return 0;
}

const char *kb_dkengine_procstat(struct kb_dkengine *e)
{
    static char path[300];
    char out[16384], err[256];
    if (!e->elsewhere || !e->tmp[0])
        return NULL;
    snprintf(path, sizeof(path), "%s/proc-stat", e->tmp);
    if (e->procstat_at > 0 && mono_s() - e->procstat_at < 0.9)
        return path;
    if (kb_dkengine_exec(e, "grep '^cpu' /proc/stat", NULL, out, sizeof(out), err,
                         sizeof(err)) < 0 || kb_dkengine_procstat_put(e, out) < 0)
        return NULL;
    return path;
}

json_t *kb_dkengine_json(const struct kb_dkengine *e)
{
    return json_pack("{s:s,s:s,s:s,s:s,s:s,s:s,s:s,s:i,s:b,s:s}", "host", e->host,
                     "chosen_by", e->chosen_by, "context", e->context, "version", e->version,
                     "name", e->name, "os", e->os, "kernel", e->kernel, "ncpu", e->ncpu,
                     "elsewhere", e->elsewhere, "image", e->image_note);
}
