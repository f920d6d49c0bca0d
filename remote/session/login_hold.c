/* Holding a trial while the login node is down (remote/session/login_hold.h). */
#include "remote/session/login_hold.h"

#include <poll.h>
#include <stdio.h>

#include "core/base/clock.h"

enum { HOLD_MAX_FDS = 4 }; /* the login node's pool has one host */

void login_hold_step(HostPool *pool, int wait_ms)
{
    struct pollfd fds[HOLD_MAX_FDS];
    int64_t deadline_ms = -1;
    size_t n = hostpool_pollfds(pool, fds, HOLD_MAX_FDS, &deadline_ms);
    /* no later than the pool's own next timer (its planned reconnect, a connect deadline) */
    if (wait_ms > 0 && deadline_ms >= 0) {
        int64_t until_ms = deadline_ms - clock_now_ms();
        wait_ms = until_ms < 0 ? 0 : until_ms < wait_ms ? (int)until_ms : wait_ms;
    }
    if (wait_ms < 0)
        wait_ms = 0;
    /* a signal ends the poll early (EINTR): the caller looks at what it noted */
    if (poll(fds, n, wait_ms) < 0)
        for (size_t i = 0; i < n; i++)
            fds[i].revents = 0;
    hostpool_step(pool, fds, n, clock_now_ms());
}

int login_hold_waits(const HostPool *pool, const char *host, HostInfo *hi)
{
    long i = pool && host ? hostpool_find(pool, host) : -1;
    if (i < 0)
        return 0;
    hostpool_info(pool, (size_t)i, hi);
    return hi->state == HOST_DOWN ? hi->retry_at_ms > 0
                                  : hi->state != HOST_READY && hi->state != HOST_IDLE;
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
        login_hold_step(pool, 0);
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
