/* Holding a trial while the login node is down (remote/session/login_hold.h). */
#include "remote/session/login_hold.h"

#include <poll.h>
#include <stdio.h>

#include "core/base/clock.h"

enum { HOLD_MAX_FDS = 4 }; /* the login node's pool has one host */

/* One step of the pool without waiting: what its socket has ready, then its timers (the
 * planned reconnect, a connect deadline). */
static void step_pool(HostPool *pool)
{
    struct pollfd fds[HOLD_MAX_FDS];
    int64_t deadline_ms = -1;
    size_t n = hostpool_pollfds(pool, fds, HOLD_MAX_FDS, &deadline_ms);
    if (n && poll(fds, n, 0) < 0)
        for (size_t i = 0; i < n; i++)
            fds[i].revents = 0;
    hostpool_step(pool, fds, n, clock_now_ms());
}

static void say(TuneOrphanReportFn report, void *userdata, const char *line)
{
    if (report)
        report(userdata, line);
}

int login_hold_check(LoginHold *lh, HostPool *pool, const char *host, TuneOrphanReportFn report,
                     void *userdata)
{
    long i = pool && host ? hostpool_find(pool, host) : -1;
    if (i < 0)
        return 0;
    HostInfo hi;
    hostpool_info(pool, (size_t)i, &hi);
    int down_planned = hi.state == HOST_DOWN && hi.retry_at_ms > 0;
    int reconnecting = hi.state != HOST_DOWN && hi.state != HOST_READY && hi.state != HOST_IDLE;
    if (down_planned || (lh->held && reconnecting)) {
        step_pool(pool);
        hostpool_info(pool, (size_t)i, &hi);
    }
    if (hi.state == HOST_DOWN && hi.retry_at_ms > 0 && hi.attempts != lh->said_attempts) {
        lh->said_attempts = hi.attempts;
        int64_t left_ms = hi.retry_at_ms - clock_now_ms();
        char line[1200];
        snprintf(line, sizeof line,
                 "login node %s: down (retry in %.1f s): ssh to %s failed: %s; new trials "
                 "wait for it",
                 hi.name, (double)(left_ms > 0 ? left_ms : 0) / 1000.0, hi.name, hi.last_error);
        say(report, userdata, line);
    }
    int hold = hi.state == HOST_DOWN ? hi.retry_at_ms > 0
                                     : lh->held && hi.state != HOST_READY && hi.state != HOST_IDLE;
    if (lh->held && !hold && hi.state == HOST_READY) {
        char line[400];
        snprintf(line, sizeof line, "login node %s answers again: new trials go on", hi.name);
        say(report, userdata, line);
    }
    lh->held = hold;
    return hold;
}
