/* The connection settings of one host: the inventory's ssh block, the machine's own
 * port/user overrides, then ~/.ssh/config for what neither gives (as ssh(1) treats
 * command-line options: explicit settings win over the config file). */
#ifndef TUNEDECK_HOSTCONF_H
#define TUNEDECK_HOSTCONF_H

#include "core/model/cluster.h"
#include "remote/ssh/shquote.h"

typedef struct {
    char name[128];        /* the machine's name in the inventory */
    char host[256];        /* what to connect to (an ~/.ssh/config Host alias is fine) */
    char user[USER_NAME_MAX + 1]; /* empty: ~/.ssh/config, else the local user */
    int port;              /* 0: ~/.ssh/config, else 22 */
    char identity[512];    /* empty: the agent and the default identities */
    char known_hosts[512]; /* empty: ~/.ssh/known_hosts */
    double connect_timeout_s;
} HostConf;

/* Merges the ssh block and the machine's overrides; "~/" in paths becomes $HOME. Rejects
 * a host name with shell metacharacters. */
int hostconf_from_machine(const SshSettings *ssh, const Machine *m, HostConf *out, Error *err);

/* Expands a leading "~/" with home (when home is NULL or empty, the path is kept). */
void hostconf_expand_home(const char *path, const char *home, char *out, size_t cap);

#endif
