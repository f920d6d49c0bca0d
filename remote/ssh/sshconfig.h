/* Whether an ssh configuration may be read at all. libssh runs a config's `Match exec`
 * commands through the shell while it parses the file, and its HostName, User and
 * IdentityFile lines decide where tunedeck connects and as whom: a file that someone else
 * can write is a way to run their commands as you. So, as ssh itself requires, the file
 * and every file it Includes must belong to you or to root and be writable by no one else. */
#ifndef TUNEDECK_SSHCONFIG_H
#define TUNEDECK_SSHCONFIG_H

#include <stddef.h>

#include "core/base/error.h"
#include "remote/ssh/sshmatch.h"
#include "remote/ssh/sshpath.h"

/* The same files' KexAlgorithms, Ciphers, MACs, HostKeyAlgorithms and PubkeyAccepted*
 * lines, in any Host or Match block, must name no algorithm tunedeck refuses (sshalgos.h):
 * refused with file:line otherwise. IdentityFile lines name another file per host, and only
 * the blocks that apply to a host count for it: they are checked per host
 * (sshconfig_host_files). */

/* 0 when `path` and every file its Include lines name (followed as libssh follows them:
 * globbed, relative to /etc/ssh for the global file, else to ssh_dir, whose parent is what
 * "~/" means, as libssh reads it; 16 levels deep) may be
 * trusted, or are missing or not regular files (not ours to judge here). -1 with err naming
 * the file, who could write it and what to do, and the file that included it. */
int sshconfig_check_trusted(const char *path, const char *ssh_dir, Error *err);

/* One file a config line names for one host: the file, and "config:line". */
enum { SSHCONFIG_AGENT_MAYBE = 4 }; /* Match exec IdentityAgent lines kept (agent_maybe) */
typedef struct {
    char file[1024];
    char where[1100];
} SshconfigFile;

/* Why an IdentityAgent line's block may or may not apply (sshmatch.h's MAYBE): what a failed
 * login then says hangs on it (authwords.h). */
typedef struct {
    unsigned why;        /* SSHMATCH_BY_* bits */
    int match;           /* the block is a Match line's, else a Host line's */
    char block[1100];    /* its Host or Match line's config:line */
    char hostname[1100]; /* SSHMATCH_BY_HOST: the HostName line the host hangs on */
    char user[1100];     /* SSHMATCH_BY_USER: the User line the user hangs on */
} SshconfigMaybe;

/* The files the lines that apply to one host name, in the files' order (the caller frees
 * both arrays: sshconfig_host_files_free). */
typedef struct {
    SshconfigFile *ids; /* IdentityFile: the keys libssh offers */
    size_t n_ids, cap_ids;
    /* RevokedHostKeys, which libssh does not read: tunedeck reads them (revokedkeys.h). ssh
     * takes the first value that applies; a Match exec block may or may not apply, so its
     * value is kept as well as the first one that surely does, which ends the list
     * (revoked_final): a key either names is refused, never fewer than ssh refuses. */
    SshconfigFile *revoked;
    size_t n_revoked, cap_revoked;
    int revoked_final;
    /* UserKnownHostsFile and GlobalKnownHostsFile: no key of theirs is trusted (one file
     * decides), but ssh honours their @revoked lines, and so does tunedeck (hostrevoke.c).
     * As with RevokedHostKeys, the first value of each that surely applies ends its list. */
    SshconfigFile *known;
    size_t n_known, cap_known;
    int user_known_final, global_known_final;
    /* HashKnownHosts, which libssh ignores: a key tunedeck adds is written with its host
     * name hashed, as ssh would write it. ssh takes the first value that applies; a Match
     * exec block's "yes" counts too (hashing never changes which keys match). */
    int hash_known_hosts, hash_known_final;
    /* The socket libssh 0.10.6 asks for keys instead of $SSH_AUTH_SOCK's (authwords.h): the
     * first IdentityAgent line that surely applies (config.c's `seen`: later ones are skipped,
     * in the global file too), its value with ~ expanded as ssh_path_expand_tilde does and
     * nothing else ("none" and "SSH_AUTH_SOCK" are file names to libssh, in its working
     * directory), and "config:line". agent.file is "" when no line applies, or the first one
     * has no value or one libssh cannot expand (it asks $SSH_AUTH_SOCK's then).
     * libssh runs a `Match exec` command while it parses ($SHELL -c, else /bin/sh; the block
     * applies when it exits 0, or above 0 when negated) and tunedeck does not run it again:
     * the IdentityAgent lines under such blocks before `agent`'s are kept in agent_maybe, in
     * order, each the socket libssh asked if its command succeeded and no earlier one's did
     * (its file "" when that line leaves $SSH_AUTH_SOCK's). agent_unknown: which socket was
     * asked cannot be told (a value too long to keep here, or more than
     * SSHCONFIG_AGENT_MAYBE such lines). */
    SshconfigFile agent;
    SshconfigFile agent_maybe[SSHCONFIG_AGENT_MAYBE];
    SshconfigMaybe agent_maybe_if[SSHCONFIG_AGENT_MAYBE]; /* why each may not apply */
    size_t n_agent_maybe;
    int agent_unknown, agent_final;
} SshconfigHostFiles;

void sshconfig_host_files_free(SshconfigHostFiles *f);

/* The IdentityFile, RevokedHostKeys, Known-hosts-file, HashKnownHosts and IdentityAgent lines of
 * `path` and its Includes that libssh 0.10.6 applies to one host (under a Host or Match line that
 * holds for it as libssh decides, sshmatch.h; a Match exec block counts as applying), expanded for
 * `host` as libssh expands them when it connects (sshpath.h), appended to *out, in the files'
 * order. `match` carries what libssh matches from this file to the next one of the same parse
 * (sshmatch_begin before the first). -1 with err naming config:line, the line, the file and
 * its mode when a file others may read is one of them (or the config may not be trusted, as
 * sshconfig_check_trusted). A "pkcs11:" line or one libssh cannot expand names no file and is
 * left out. A RevokedHostKeys line without a file, or one that cannot be expanded, is -1
 * naming config:line: ssh refuses the config, and tunedeck cannot tell which keys it revokes. */
int sshconfig_host_files(const char *path, const char *ssh_dir, const SshpathHost *host,
                         SshmatchHost *match, SshconfigHostFiles *out, Error *err);

#endif
