/* The release of a session's allocation waiting for its login node (release_wait.h). */
#include "remote/session/release_wait.h"

#include <stdio.h>
#include <string.h>

#include "core/base/clock.h"
#include "remote/session/login_hold.h"

static void say(const ReleaseWait *w, const char *line)
{
    if (w->report)
        w->report(w->userdata, line);
}

/* Latched: the caller's check may consume what it reads (the console's signal pipe). */
static int interrupted(const ReleaseWait *w, int *seen)
{
    if (!*seen && w->interrupted && w->interrupted(w->userdata))
        *seen = 1;
    return *seen;
}

/* Steps the login node's pool until it is no longer one to wait for (ready, or refused for
 * good), the bound passes or the wait is interrupted. 1: it may be asked now. The pool's
 * back-off, grown to its cap (30 s) by an outage, may plan its next reconnect after the bound:
 * a 30 s wait would see one or two attempts, none near its end, and miss a login node that
 * came back 25 s in. So once RELEASE_WAIT_LAST_MS are left, a down host whose next attempt
 * comes after the bound is tried at once (as an operator's reconnect is: the back-off's count
 * kept), once a wait. */
static int wait_for(HostPool *pool, const char *host, const ReleaseWait *w, int64_t end_ms,
                    int *stopped, HostInfo *hi)
{
    int last_tried = 0;
    for (;;) {
        if (!login_hold_waits(pool, host, hi))
            return 1;
        int64_t left_ms = end_ms - clock_now_ms();
        if (left_ms <= 0 || interrupted(w, stopped))
            return 0;
        if (!last_tried && left_ms <= RELEASE_WAIT_LAST_MS && hi->state == HOST_DOWN &&
            hi->retry_at_ms > end_ms) {
            hostpool_connect(pool, (size_t)hostpool_find(pool, host), 1);
            last_tried = 1;
        }
        login_hold_step(pool, left_ms < RELEASE_WAIT_STEP_MS ? (int)left_ms : RELEASE_WAIT_STEP_MS);
    }
}

int release_wait_close(SlurmCtl *c, SlurmAlloc *a, const ReleaseWait *w, Error *err)
{
    const char *host = NULL;
    HostPool *pool = slurm_ctl_login_pool(c, &host);
    int64_t end_ms = clock_now_ms() + (int64_t)(w->wait_s * 1000);
    int said = 0, stopped = 0, rc;
    HostInfo hi;
    char line[1400];
    for (;;) {
        if (w->wait_s > 0 && a->owned && a->job_id[0] && login_hold_waits(pool, host, &hi)) {
            if (!said) {
                snprintf(line, sizeof line,
                         "login node %s: down; waiting up to %g s to release allocation %s%s%s%s%s",
                         hi.name, w->wait_s, a->job_id, hi.last_error[0] ? " (ssh to " : "",
                         hi.last_error[0] ? hi.name : "", hi.last_error[0] ? " failed: " : "",
                         hi.last_error[0] ? hi.last_error : "");
                if (hi.last_error[0])
                    snprintf(line + strlen(line), sizeof line - strlen(line), ")");
                if (w->interrupted)
                    snprintf(line + strlen(line), sizeof line - strlen(line),
                             "; Ctrl-C gives up the wait");
                say(w, line);
                said = 1;
            }
            if (!wait_for(pool, host, w, end_ms, &stopped, &hi)) {
                char why[1200];
                if (stopped)
                    snprintf(why, sizeof why, "the wait for %s was interrupted", hi.name);
                else
                    snprintf(why, sizeof why, "%s did not answer within %g s", hi.name, w->wait_s);
                if (hi.last_error[0])
                    snprintf(why + strlen(why), sizeof why - strlen(why), " (ssh to %s failed: %s)",
                             hi.name, hi.last_error);
                rc = slurm_alloc_left_error(c, a, why, err);
                break;
            }
        }
        rc = slurm_alloc_cancel(c, a, err);
        /* the connection the pool thought ready may have dropped under the scancel: waited
         * for again while the bound lasts */
        if (rc == 0 || w->wait_s <= 0 || !login_hold_waits(pool, host, &hi) ||
            clock_now_ms() >= end_ms || interrupted(w, &stopped))
            break;
    }
    if (rc == 0 && said) {
        snprintf(line, sizeof line, "login node %s answers again: allocation %s released", host,
                 a->job_id);
        say(w, line);
    }
    memset(a, 0, sizeof *a);
    return rc;
}
