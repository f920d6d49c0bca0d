/* At a session's end its Slurm allocation is released with scancel on the login node. While
 * that node is down (its sshd restarting, the host rebooting) the release waits for it a
 * bounded time, its reconnects going on as the pool's back-off planned, rather than failing
 * at once and leaving the allocation to hold every node of the inventory until a resume or
 * the operator releases it. */
#ifndef TUNEDECK_RELEASE_WAIT_H
#define TUNEDECK_RELEASE_WAIT_H

#include "remote/session/tune_orphans.h"
#include "remote/slurm/slurm_alloc.h"

/* The bound when the inventory's "slurm" block sets no release_wait_s: long enough for an
 * sshd restart or a quick reboot, and for the pool's back-off (0.5 s doubling to 30 s) to
 * try again; short enough that a session's end is never held for long. */
#define RELEASE_WAIT_DEFAULT_S 30.0
/* How often the wait asks whether it was interrupted (a signal cuts each step short).
 * RELEASE_WAIT_LAST_MS: how long before the bound its last attempt starts when the pool's
 * next reconnect would come after it: room for a handshake to a node that answers. */
enum { RELEASE_WAIT_STEP_MS = 100, RELEASE_WAIT_LAST_MS = 2000 };

typedef struct {
    double wait_s; /* the bound; <= 0: one attempt, as slurm_alloc_close */
    /* Asked at each step of the wait: nonzero ends it (the operator's interrupt), the
     * allocation left as when the login node stays down. NULL: never. */
    int (*interrupted)(void *userdata);
    TuneOrphanReportFn report; /* the wait's lines; NULL: none */
    void *userdata;            /* for both */
} ReleaseWait;

/* slurm_alloc_close (a forgotten either way) that waits up to w->wait_s for a login node that
 * is down or reconnecting (login_hold_waits), its pool stepped as login_hold does; the scancel
 * runs once it answers, and again if the connection drops meanwhile. Says once that it waits:
 * "login node H: down; waiting up to 30 s to release allocation 57 (ssh to H failed: ...)",
 * and "login node H answers again: allocation 57 released" when it does. Returns 0 released
 * (or none of ours); -1 with err (ERROR_REMOTE: the job and the command that releases it)
 * when the login node did not answer within the bound, the wait was interrupted, the node is
 * refused for good, or Slurm refused the scancel. */
int release_wait_close(SlurmCtl *c, SlurmAlloc *a, const ReleaseWait *w, Error *err);

#endif
