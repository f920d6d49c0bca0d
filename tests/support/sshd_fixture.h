/* A real sshd of a test's own on 127.0.0.1 (its keys, known_hosts and configuration in a
 * temporary folder), and a host pool connected to it: for tests of what a server that answers
 * does, refusals included. */
#ifndef TUNEDECK_TEST_SSHD_FIXTURE_H
#define TUNEDECK_TEST_SSHD_FIXTURE_H

#include <sys/types.h>

#include "remote/ssh/hostpool.h"

typedef struct {
    char dir[64];
    pid_t pid;
    int port;
} Sshd;

/* A loopback port nobody listens on (as far as one can tell). */
int sshd_fixture_free_port(void);
/* Starts sshd with `extra` in its configuration (e.g. "MaxSessions 1"); its own words go to
 * DIR/sshd.log. Skips the test where sshd or ssh-keygen is absent. */
void sshd_fixture_start(Sshd *d, const char *extra);
/* Stops the listener alone, its port then closed, its folder (keys, configuration) kept
 * (connections it served run on): a login node's sshd that went away. */
void sshd_fixture_pause(Sshd *d);
/* Starts it again on the same port, as it was: that sshd back. */
void sshd_fixture_resume(Sshd *d);
/* Stops it and removes its folder; safe on a zeroed or stopped one (a test's fini). */
void sshd_fixture_stop(Sshd *d);
/* A pool with one host `name` on d, connected (asserted ready). */
HostPool *sshd_fixture_pool(const Sshd *d, const char *name);

#endif
