/* The parameter-server transport's deadlines (tools/worker/psnet.c). */
#include <criterion/criterion.h>
#include <string.h>
#include <unistd.h>

#include "tools/worker/psnet.h"

Test(psnet, deadlines_are_named_as_given)
{
    /* --connect-timeout 0.3 was reported as "within 0 s" */
    Error err;
    int port = 0;
    int fd = psnet_listen("127.0.0.1", 0, &port, &err);
    cr_assert_geq(fd, 0, "%s", err.msg);
    cr_assert_eq(psnet_accept(fd, 0.3, &err), -1);
    cr_assert(strstr(err.msg, "no worker connected within 0.3 s"), "%s", err.msg);
    close(fd); /* nothing listens on the port now: connecting is refused until the deadline */
    cr_assert_eq(psnet_connect("127.0.0.1", port, 0.3, &err), -1);
    cr_assert(strstr(err.msg, "cannot connect to the parameter server within 0.3 s"), "%s",
              err.msg);
}
