#include <criterion/criterion.h>
#include <stdlib.h>
#include <string.h>

#include "remote/ssh/hostconf.h"

static SshSettings block(void)
{
    SshSettings s = {.port = 2222, .connect_timeout_s = 7};
    strcpy(s.user, "ops");
    strcpy(s.identity, "~/.ssh/id_ed25519");
    strcpy(s.known_hosts, "/etc/tunedeck/known_hosts");
    return s;
}

Test(hostconf, ssh_block_applies_when_the_machine_says_nothing)
{
    SshSettings s = block();
    Machine m = {0};
    strcpy(m.name, "g2-0");
    strcpy(m.host, "10.1.0.10");
    HostConf c;
    Error e;
    setenv("HOME", "/home/op", 1);
    cr_assert_eq(hostconf_from_machine(&s, &m, &c, &e), 0, "%s", e.msg);
    cr_assert_str_eq(c.host, "10.1.0.10");
    cr_assert_str_eq(c.user, "ops");
    cr_assert_eq(c.port, 2222);
    cr_assert_str_eq(c.identity, "/home/op/.ssh/id_ed25519");
    cr_assert_str_eq(c.known_hosts, "/etc/tunedeck/known_hosts");
    cr_assert_float_eq(c.connect_timeout_s, 7, 1e-9);
}

Test(hostconf, machine_port_and_user_override_the_block)
{
    SshSettings s = block();
    Machine m = {.port = 2200};
    strcpy(m.name, "g2-1");
    strcpy(m.host, "node1");
    strcpy(m.user, "alice");
    HostConf c;
    Error e;
    cr_assert_eq(hostconf_from_machine(&s, &m, &c, &e), 0, "%s", e.msg);
    cr_assert_eq(c.port, 2200);
    cr_assert_str_eq(c.user, "alice");
}

Test(hostconf, nothing_given_leaves_ssh_config_to_decide)
{
    SshSettings s = {0};
    Machine m = {0};
    strcpy(m.name, "alias");
    HostConf c;
    Error e;
    cr_assert_eq(hostconf_from_machine(&s, &m, &c, &e), 0, "%s", e.msg);
    cr_assert_str_eq(c.host, "alias"); /* no host: the name, for ~/.ssh/config's Host */
    cr_assert_eq(c.port, 0);
    cr_assert_str_eq(c.user, "");
    cr_assert_str_eq(c.identity, "");
    cr_assert(c.connect_timeout_s > 0);
}

Test(hostconf, shell_metacharacters_in_a_host_are_refused)
{
    SshSettings s = block();
    Machine m = {0};
    strcpy(m.name, "evil");
    strcpy(m.host, "x;touch /tmp/y");
    HostConf c;
    Error e;
    cr_assert_eq(hostconf_from_machine(&s, &m, &c, &e), -1);
    cr_assert(strstr(e.msg, "machine 'evil'") && strstr(e.msg, "';'"), "%s", e.msg);
}

Test(hostconf, tilde_only_expands_at_the_start)
{
    char out[128];
    hostconf_expand_home("~/k", "/h", out, sizeof out);
    cr_assert_str_eq(out, "/h/k");
    hostconf_expand_home("/a/~/k", "/h", out, sizeof out);
    cr_assert_str_eq(out, "/a/~/k");
    hostconf_expand_home("~bob/k", "/h", out, sizeof out);
    cr_assert_str_eq(out, "~bob/k");
    hostconf_expand_home("~/k", NULL, out, sizeof out);
    cr_assert_str_eq(out, "~/k");
}

Test(hostconf, user_names_sites_use_pass_whole)
{
    SshSettings s = block();
    strcpy(s.user, "DOMAIN\\svc");
    Machine m = {0};
    strcpy(m.name, "win");
    HostConf c;
    Error e;
    cr_assert_eq(hostconf_from_machine(&s, &m, &c, &e), 0, "%s", e.msg);
    cr_assert_str_eq(c.user, "DOMAIN\\svc");
    memset(m.user, 'a', USER_NAME_MAX - 1);
    m.user[USER_NAME_MAX - 1] = '$';
    m.user[USER_NAME_MAX] = 0;
    cr_assert_eq(hostconf_from_machine(&s, &m, &c, &e), 0, "%s", e.msg);
    cr_assert_str_eq(c.user, m.user);
    strcpy(m.user, "a$b");
    cr_assert_eq(hostconf_from_machine(&s, &m, &c, &e), -1);
    cr_assert(strstr(e.msg, "machine 'win'") && strstr(e.msg, "'$' at 2"), "%s", e.msg);
}

/* A user name from the ssh block is fixed there, not in the machine named: the message says
 * which (it said only "machine 'win'", whose entry had no user). */
Test(hostconf, a_bad_user_from_the_ssh_block_names_the_block)
{
    SshSettings s = block();
    strcpy(s.user, "ro ot");
    Machine m = {0};
    strcpy(m.name, "win");
    HostConf c;
    Error e;
    cr_assert_eq(hostconf_from_machine(&s, &m, &c, &e), -1);
    cr_assert(strstr(e.msg, "machine 'win': user 'ro ot'") && strstr(e.msg, "ssh.user"), "%s",
              e.msg);
    strcpy(m.user, "a b");
    cr_assert_eq(hostconf_from_machine(&s, &m, &c, &e), -1);
    cr_assert(!strstr(e.msg, "ssh.user"), "%s", e.msg);
}
