#include <criterion/criterion.h>
#include <errno.h>
#include <poll.h>
#include <string.h>

#include "core/base/clock.h"
#include "tests/support/launchstep.h"

Observation *launchstep_cancel_once(const char *launcher, const LaunchConfig *cfg,
                                    const Schedule *s, const int *flag, const char *what)
{
    const LauncherKind *k = launcher_find(launcher);
    cr_assert_not_null(k, "no launcher %s", launcher);
    Error err;
    void *r = k->start(cfg, s, &err);
    cr_assert_not_null(r, "%s", err.msg);
    while (!*flag && !k->finished(r)) {
        struct pollfd fds[8];
        int64_t deadline = -1;
        size_t n = k->pollfds(r, fds, 8, &deadline);
        int rc = poll(fds, n, 100);
        k->step(r, fds, rc > 0 ? n : 0, clock_now_ms());
    }
    cr_assert(*flag, "%s", what);
    k->cancel(r);
    cr_assert_eq(launcher_wait(k, r), 0, "poll: %s", strerror(errno));
    Observation *o = k->result(r);
    k->free(r);
    return o;
}
