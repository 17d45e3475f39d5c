/* test_portown.c -- runner/portown: the listeners on a port (its own address and the
 * wildcard count, another address does not), who holds them, and the two checks a fixture
 * start makes: the port free before, and every listener the fixture's once it accepts. */
#define _GNU_SOURCE
#include "runner/util/portown.h"
#include "tests/lib/kb_check.h"

#include <arpa/inet.h>
#include <netinet/in.h>
#include <signal.h>
#include <string.h>
#include <sys/socket.h>
#include <sys/wait.h>
#include <unistd.h>

static char why[256];

/* A listener on addr:port (port 0: any), its port in *port; the fd. */
static int listen_on(const char *addr, int *port)
{
    struct sockaddr_in a = { .sin_family = AF_INET, .sin_port = htons((uint16_t)*port) };
    socklen_t len = sizeof(a);
    int fd = socket(AF_INET, SOCK_STREAM, 0), one = 1;
    ck_assert_int_ge(fd, 0);
    setsockopt(fd, SOL_SOCKET, SO_REUSEADDR, &one, sizeof(one));
    inet_pton(AF_INET, addr, &a.sin_addr);
    ck_assert_int_eq(bind(fd, (struct sockaddr *)&a, sizeof(a)), 0);
    ck_assert_int_eq(listen(fd, 4), 0);
    getsockname(fd, (struct sockaddr *)&a, &len);
    *port = ntohs(a.sin_port);
    return fd;
}

START_TEST(listener_found_and_held_by_us)
{
    unsigned long inodes[4];
    int port = 0, fd = listen_on("127.0.0.1", &port);
    pid_t self = getpid(), other = 1;
    ck_assert_int_eq(kb_port_listeners("127.0.0.1", port, inodes, 4), 1);
    ck_assert_int_eq(kb_port_listeners(NULL, port, inodes, 4), 1);
    ck_assert_int_eq(kb_port_listeners("127.0.0.2", port, inodes, 4), 0);
    ck_assert_int_eq(kb_port_listeners("0.0.0.0", port, inodes, 4), 1);
    ck_assert_int_eq(kb_port_holder(inodes[0], NULL, 0), self);
    ck_assert_int_eq(kb_port_holder(inodes[0], &self, 1), self);
    ck_assert_int_eq(kb_port_holder(inodes[0], &other, 1), 0);

    ck_assert_int_eq(kb_port_check_free("127.0.0.1", port, why, sizeof(why)), -1);
    ck_assert_msg(strstr(why, "held by pid") != NULL, "%s", why);
    ck_assert_int_eq(kb_port_check_owned("127.0.0.1", port, &self, 1, why, sizeof(why)), 0);
    ck_assert_int_eq(kb_port_check_owned("127.0.0.1", port, &other, 1, why, sizeof(why)), -1);
    ck_assert_msg(strstr(why, "not from the fixture's processes") != NULL, "%s", why);
    close(fd);
    ck_assert_int_eq(kb_port_check_free("127.0.0.1", port, why, sizeof(why)), 0);
    ck_assert_int_eq(kb_port_check_owned("127.0.0.1", port, &self, 1, why, sizeof(why)), -1);
    ck_assert_msg(strstr(why, "nothing listens") != NULL, "%s", why);
}
END_TEST

START_TEST(wildcard_counts_other_address_does_not)
{
    int port = 0, fd = listen_on("0.0.0.0", &port), other_port = 0, fd2;
    pid_t self = getpid();
    ck_assert_int_eq(kb_port_check_free("127.0.0.1", port, why, sizeof(why)), -1);
    ck_assert_int_eq(kb_port_check_owned("127.0.0.1", port, &self, 1, why, sizeof(why)), 0);
    close(fd);
    fd2 = listen_on("127.0.0.2", &other_port);
    ck_assert_int_eq(kb_port_check_free("127.0.0.1", other_port, why, sizeof(why)), 0);
    ck_assert_int_eq(kb_port_wait_free("127.0.0.2", other_port, 100, why, sizeof(why)), -1);
    close(fd2);
    ck_assert_int_eq(kb_port_wait_free("127.0.0.2", other_port, 100, why, sizeof(why)), 0);
}
END_TEST

START_TEST(a_socket_bound_without_listening_holds_the_port)
{
    /* what the fixture's bind would fail on, though /proc/net/tcp lists nothing */
    struct sockaddr_in a = { .sin_family = AF_INET };
    socklen_t len = sizeof(a);
    int fd = socket(AF_INET, SOCK_STREAM, 0), port;
    inet_pton(AF_INET, "127.0.0.1", &a.sin_addr);
    ck_assert_int_eq(bind(fd, (struct sockaddr *)&a, sizeof(a)), 0);
    getsockname(fd, (struct sockaddr *)&a, &len);
    port = ntohs(a.sin_port);
    ck_assert_int_eq(kb_port_check_free("127.0.0.1", port, why, sizeof(why)), -1);
    ck_assert_msg(strstr(why, "does not listen") != NULL, "%s", why);
    ck_assert_int_eq(kb_port_check_free("0.0.0.0", port, why, sizeof(why)), -1);
    close(fd);
    ck_assert_int_eq(kb_port_check_free("127.0.0.1", port, why, sizeof(why)), 0);
}
END_TEST

START_TEST(every_holder_of_a_listener_is_found)
{
    /* a master and a worker that inherited its listener, as nginx runs: `ss -ltnp` lists
     * both, and so must the knee's server */
    pid_t pids[8], self = getpid(), child;
    int port = 0, fd = listen_on("127.0.0.1", &port), gate[2];
    char c;
    ck_assert_int_eq(kb_port_holders("127.0.0.1", port, pids, 8), 1);
    ck_assert_int_eq(pids[0], self);
    ck_assert_int_eq(pipe(gate), 0);
    if ((child = fork()) == 0) {
        close(gate[1]);
        while (read(gate[0], &c, 1) < 0)
            ;
        _exit(0);
    }
    close(gate[0]);
    ck_assert_int_eq(kb_port_holders("127.0.0.1", port, pids, 8), 2);
    ck_assert_int_eq(pids[0], self < child ? self : child);
    ck_assert_int_eq(pids[1], self < child ? child : self);
    ck_assert_int_eq(kb_port_holders("127.0.0.1", port, pids, 1), 1);
    /* the wildcard's and another address's view */
    ck_assert_int_eq(kb_port_holders("0.0.0.0", port, pids, 8), 2);
    ck_assert_int_eq(kb_port_holders("127.0.0.2", port, pids, 8), 0);
    close(gate[1]);
    waitpid(child, NULL, 0);
    close(fd);
    ck_assert_int_eq(kb_port_holders("127.0.0.1", port, pids, 8), 0);
}
END_TEST

static Suite *suite(void)
{
    Suite *s = suite_create("portown");
    TCase *tc = tcase_create("proc");
    tcase_add_test(tc, listener_found_and_held_by_us);
    tcase_add_test(tc, wildcard_counts_other_address_does_not);
    tcase_add_test(tc, a_socket_bound_without_listening_holds_the_port);
    tcase_add_test(tc, every_holder_of_a_listener_is_found);
    suite_add_tcase(s, tc);
    return s;
}

int main(void)
{
    return kb_check_run(suite(), "portown");
}
