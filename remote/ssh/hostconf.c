/* Per-host connection settings from the inventory (DESIGN §5.2). */
#include "remote/ssh/hostconf.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "remote/ssh/shquote.h"

void hostconf_expand_home(const char *path, const char *home, char *out, size_t cap)
{
    if (path[0] == '~' && (path[1] == '/' || path[1] == 0) && home && home[0])
        snprintf(out, cap, "%s%s", home, path + 1);
    else
        snprintf(out, cap, "%s", path);
}

int hostconf_from_machine(const SshSettings *ssh, const Machine *m, HostConf *out, Error *err)
{
    memset(out, 0, sizeof *out);
    const char *host = m->host[0] ? m->host : m->name;
    if (host_name_valid(host, err) < 0)
        return error_prefix(err, "machine '%s'", m->name);
    snprintf(out->name, sizeof out->name, "%s", m->name);
    snprintf(out->host, sizeof out->host, "%s", host);
    snprintf(out->user, sizeof out->user, "%s", m->user[0] ? m->user : ssh->user);
    if (user_name_valid(out->user, err) < 0) {
        error_prefix(err, "machine '%s'", m->name);
        if (!m->user[0]) { /* the ssh block's: the machine's own entry has no user to fix */
            size_t n = strlen(err->msg);
            snprintf(err->msg + n, sizeof err->msg - n,
                     " (the inventory's ssh.user, which every machine without a user of its "
                     "own takes)");
        }
        return -1;
    }
    out->port = m->port > 0 ? m->port : ssh->port;
    const char *home = getenv("HOME");
    hostconf_expand_home(ssh->identity, home, out->identity, sizeof out->identity);
    hostconf_expand_home(ssh->known_hosts, home, out->known_hosts, sizeof out->known_hosts);
    out->connect_timeout_s = ssh->connect_timeout_s > 0 ? ssh->connect_timeout_s : 5;
    return 0;
}
