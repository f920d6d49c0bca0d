#include <criterion/criterion.h>
#include <string.h>

#include "remote/live/hostdesk.h"
#include "tests/support/ssh_hermetic.h"

/* No network here: what the desk refuses before anything connects. */
static HostPool *one_host_pool(void)
{
    HostPoolOptions o = {.ssh_config = TEST_SSH_CONFIG, .seed = 1};
    Error err;
    HostPool *p = hostpool_new(&o, &err);
    cr_assert_not_null(p, "%s", err.msg);
    HostConf c = {.port = 22, .connect_timeout_s = 1};
    strcpy(c.name, "h1");
    strcpy(c.host, "127.0.0.1");
    strcpy(c.known_hosts, "/nonexistent/known_hosts");
    cr_assert_eq(hostpool_add(p, &c, &err), 0, "%s", err.msg);
    return p;
}

Test(hostdesk, only_a_key_the_host_offered_can_be_accepted)
{
    HostPool *p = one_host_pool();
    HostDesk *d = hostdesk_new(p);
    char fp[128] = "";
    Error err = {0};
    cr_assert_eq(hostdesk_offered(d, 0, fp, sizeof fp, &err), -1);
    cr_assert(strstr(err.msg, "h1: only an unknown host key can be accepted (this one is "
                              "unchecked)"),
              "%s", err.msg);
    cr_assert_eq(hostdesk_offered(d, 5, fp, sizeof fp, &err), -1);
    cr_assert_eq(hostdesk_reconnect(d, 5), -1);
    HostInfo i;
    hostpool_info(p, 0, &i);
    cr_assert_str_eq(i.known_hosts, "/nonexistent/known_hosts");
    cr_assert_str_eq(i.offered_fp, "");
    char msg[256];
    int bad;
    cr_assert_eq(hostdesk_take_outcome(d, msg, sizeof msg, &bad), 0, "no acceptance yet");
    hostdesk_free(d);
    hostpool_free(p);
}

Test(hostdesk, an_acceptance_must_name_a_sha256_fingerprint)
{
    HostPool *p = one_host_pool();
    HostDesk *d = hostdesk_new(p);
    Error err = {0};
    cr_assert_eq(hostdesk_accept(d, 0, "MD5:aa:bb", &err), -1);
    cr_assert(strstr(err.msg, "expected a SHA256:... fingerprint"), "%s", err.msg);
    hostdesk_free(d);
    hostpool_free(p);
}
