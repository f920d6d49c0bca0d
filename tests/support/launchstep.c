#include <criterion/criterion.h>
#include <errno.h>
#include <poll.h>
#include <string.h>

#include "core/base/clock.h"
#include "tests/support/launchstep.h"

void launchstep_cancel_once(const LauncherKind *k, void *r, const int *flag, const char *what)
{
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
}
