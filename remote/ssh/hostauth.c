/* How a host logs in once its key is checked: the inventory's identity alone, else the agent
 * and the keys libssh finds by itself, never with a private key others may read
 * (identities.h); never a passphrase prompt. */
#include "remote/ssh/hostpool_priv.h"

#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "remote/ssh/authwords.h"
#include "remote/ssh/identities.h"
#include "remote/ssh/sshpath.h"

/* libssh asks for a passphrase through this callback: we never prompt. */
int host_refuse_passphrase(const char *prompt, char *buf, size_t len, int echo, int verify,
                           void *userdata)
{
    (void)prompt, (void)echo, (void)verify;
    Host *h = userdata;
    h->passphrase_needed = 1;
    if (len)
        buf[0] = 0;
    return -1;
}

/* The inventory's identity is the only key offered (like IdentitiesOnly), whatever
 * IdentityFile the config names. One that needs a passphrase is left to the agent. */
void host_load_identity(Host *h)
{
    if (!h->conf.identity[0])
        return;
    if (ssh_pki_import_privkey_file(h->conf.identity, NULL, host_refuse_passphrase, h,
                                    &h->ident_key) != SSH_OK) {
        h->ident_key = NULL;
        /* libssh expands the name (%d, ~...): it must read the very file whose mode
         * host_start_attempt checked, never "%d/key" as ~/.ssh/key. */
        char for_libssh[sizeof h->conf.identity * 2 + 2];
        if (sshpath_for_libssh(h->conf.identity, for_libssh, sizeof for_libssh) == 0)
            ssh_options_set(h->s, SSH_OPTIONS_ADD_IDENTITY, for_libssh);
    }
}

/* The default identities others may read (h->open_defaults) and the warning that names
 * them: libssh would try them by itself, so host_auth_step then offers the others alone. */
void host_check_default_identities(Host *h)
{
    char dir[1024];
    identity_ssh_dir(dir, sizeof dir);
    h->open_defaults = 0;
    h->warning[0] = 0;
    if (h->ident_key)
        return; /* the inventory's identity is the only key offered */
    size_t used = 0;
    for (int i = 0; i < IDENTITY_N_DEFAULTS; i++) {
        char path[1100];
        snprintf(path, sizeof path, "%s/%s", dir, IDENTITY_DEFAULT_NAMES[i]);
        unsigned mode = identity_too_open(path);
        if (!mode || file_would_block(path)) /* said below, as what it is */
            continue;
        h->open_defaults |= 1u << i;
        if (used < sizeof h->warning)
            used += (size_t)snprintf(h->warning + used, sizeof h->warning - used, "%s%s (mode %03o)",
                                     used ? ", " : "the default identity ", path, mode);
    }
    if (h->open_defaults && used < sizeof h->warning)
        used += (size_t)snprintf(h->warning + used, sizeof h->warning - used,
                                 " may be read by others: not used, as ssh does not use it; "
                                 "chmod 600 it");
    /* A FIFO there: libssh's read of it would block the whole loop. Left out the same way. */
    for (int i = 0; i < IDENTITY_N_DEFAULTS; i++) {
        char path[1100];
        snprintf(path, sizeof path, "%s/%s", dir, IDENTITY_DEFAULT_NAMES[i]);
        const char *blocks = file_would_block(path);
        if (!blocks)
            continue;
        h->open_defaults |= 1u << i;
        if (used < sizeof h->warning)
            used += (size_t)snprintf(h->warning + used, sizeof h->warning - used,
                                     "%sthe default identity %s is %s: not used, libssh would "
                                     "wait forever to read it",
                                     used ? "; " : "", path, blocks);
    }
}

/* The key file ssh_userauth_publickey_auto would offer at index i, in its order: the
 * inventory's identity when it did not load (prepended last), the config's IdentityFile
 * files (each prepended as libssh parses it: the last line first), then the defaults. NULL
 * past the end. */
static const char *auto_key(const Host *h, int i, char *buf, size_t cap, int *default_i)
{
    *default_i = -1;
    if (h->conf.identity[0] && !h->ident_key) {
        if (i == 0)
            return h->conf.identity;
        i--;
    }
    if ((size_t)i < h->cfg.n_ids)
        return h->cfg.ids[h->cfg.n_ids - 1 - (size_t)i].file;
    i -= (int)h->cfg.n_ids;
    if (i >= IDENTITY_N_DEFAULTS)
        return NULL;
    char dir[1024];
    identity_ssh_dir(dir, sizeof dir);
    snprintf(buf, cap, "%s/%s", dir, IDENTITY_DEFAULT_NAMES[i]);
    *default_i = i;
    return buf;
}

/* What ssh_userauth_publickey_auto does (the agent, then each identity file it holds, the
 * config's IdentityFile keys before the defaults), but never with a default identity others
 * may read: libssh would read it, and its list cannot be changed. */
static int auth_without_open_defaults(Host *h)
{
    for (;;) {
        if (h->auth_stage == 0) {
            int rc = ssh_userauth_agent(h->s, NULL);
            if (rc == SSH_AUTH_SUCCESS || rc == SSH_AUTH_PARTIAL || rc == SSH_AUTH_AGAIN)
                return rc;
            h->auth_stage = 1;
        }
        char buf[1100];
        int default_i;
        const char *path = auto_key(h, h->auth_stage - 1, buf, sizeof buf, &default_i);
        if (!path)
            return SSH_AUTH_DENIED;
        if (!h->auth_key) {
            if ((default_i >= 0 && (h->open_defaults & (1u << default_i))) ||
                identity_too_open(path) ||
                ssh_pki_import_privkey_file(path, NULL, host_refuse_passphrase, h, &h->auth_key) !=
                    SSH_OK) {
                h->auth_key = NULL;
                h->auth_stage++;
                continue;
            }
        }
        int rc = ssh_userauth_publickey(h->s, NULL, h->auth_key);
        if (rc == SSH_AUTH_AGAIN)
            return rc;
        ssh_key_free(h->auth_key);
        h->auth_key = NULL;
        if (rc != SSH_AUTH_DENIED)
            return rc;
        h->auth_stage++;
    }
}

/* The key files libssh would have offered (auto_key's, but the inventory's identity, said on
 * its own) that exist and cannot be read, with why, as "; the identity F cannot be read: W":
 * libssh skips them without a word, and a login that then fails said only "denied" (a key
 * made with sudo, root's, in the operator's ~/.ssh). ssh names each ("Load key"). Empty when
 * none. Returns the whole length, as snprintf: cap 0 asks for it. */
static size_t unreadable_keys(const Host *h, char *out, size_t cap)
{
    size_t used = 0;
    if (cap)
        out[0] = 0;
    if (h->ident_key)
        return 0; /* the only key offered, and it was read */
    for (int i = 0;; i++) {
        char buf[1100];
        int default_i;
        const char *path = auto_key(h, i, buf, sizeof buf, &default_i);
        if (!path)
            break;
        if (path == h->conf.identity || (default_i >= 0 && (h->open_defaults & (1u << default_i))))
            continue; /* said on its own, or in the warning */
        if (access(path, R_OK) == 0 || errno == ENOENT)
            continue;
        int n = snprintf(used < cap ? out + used : NULL, used < cap ? cap - used : 0,
                         "; the identity %s cannot be read: %s", path, strerror(errno));
        used += n > 0 ? (size_t)n : 0;
    }
    return used;
}

/* `words`' text whole, in a buffer of its own (free it), however long: the words that follow
 * it in a failed login's message must not be pushed out. "" when memory runs out. */
typedef size_t (*WordsFn)(const void *of, char *out, size_t cap);
static char *whole(WordsFn words, const void *of)
{
    size_t n = words(of, NULL, 0) + 1;
    char *out = malloc(n);
    if (out)
        words(of, out, n);
    return out;
}

static size_t none_accepted(const void *a, char *out, size_t cap)
{
    return authwords_none_accepted(a, out, cap);
}

static size_t agent_alone(const void *a, char *out, size_t cap)
{
    return authwords_agent(a, out, cap);
}

static size_t unreadable(const void *h, char *out, size_t cap)
{
    return unreadable_keys(h, out, cap);
}

/* The agent as libssh found it (authwords.h): the ssh config's IdentityAgent socket, else
 * $SSH_AUTH_SOCK's, and whether it takes a connection now (a relative one, "none" too, from
 * the working directory, as libssh's). Asked after the login failed, so the agent may have
 * gone since: a rare race that at worst names no agent where one was asked. */
static void agent_now(const Host *h, AuthAgent *a)
{
    *a = (AuthAgent){.config_unknown = h->cfg.agent_unknown, .auth_sock = getenv("SSH_AUTH_SOCK")};
    if (h->cfg.agent.file[0]) {
        a->config_sock = h->cfg.agent.file;
        a->config_where = h->cfg.agent.where;
    }
    /* IdentityAgent lines under Match exec: each a socket libssh may have asked */
    for (size_t i = 0; i < h->cfg.n_agent_maybe; i++) {
        const SshconfigFile *m = &h->cfg.agent_maybe[i];
        AuthMaybe *am = &a->maybe[a->n_maybe++];
        am->sock = m->file[0] ? m->file : NULL;
        am->where = m->where;
        am->cond = &h->cfg.agent_maybe_if[i];
        const char *sock = am->sock ? am->sock : a->auth_sock;
        if (!a->config_unknown && sock && sock[0])
            am->connect_errno = authwords_connect_errno(sock);
    }
    const char *sock = authwords_socket(a);
    if (!a->config_unknown && sock && sock[0])
        a->connect_errno = authwords_connect_errno(sock);
}

void host_auth_step(HostPool *p, Host *h, int64_t now_ms)
{
    int rc = h->ident_key       ? ssh_userauth_publickey(h->s, NULL, h->ident_key)
             : h->open_defaults ? auth_without_open_defaults(h)
                                : ssh_userauth_publickey_auto(h->s, NULL, NULL);
    if (rc == SSH_AUTH_AGAIN)
        return;
    if (rc == SSH_AUTH_SUCCESS) {
        h->state = HOST_READY;
        h->handshake_ms = (double)(now_ms - h->started_ms);
        h->connects++;
        h->attempt = 0;
        host_forget_error(h);
        h->last_rx_ms = now_ms;
        h->next_ka_ms = now_ms + (int64_t)(p->opt.heartbeat_s * 1000);
        h->ev = ssh_event_new();
        if (!h->ev || ssh_event_add_session(h->ev, h->s) != SSH_OK) {
            host_down(p, h, now_ms, "cannot watch the session");
            return;
        }
        h->dirty = 1;
        return;
    }
    /* An error (the connection lost mid-login) is no refusal: the back-off holds for it. */
    h->refused = rc != SSH_AUTH_ERROR;
    h->keep = 0;
    /* A key file that cannot be read is skipped by libssh (the agent may still log in):
     * when nothing did, the file the inventory named is the likely cause. What was asked is
     * said as it was: the agent only where one answered (authwords.h), and where the
     * inventory's identity loaded, that key alone. */
    AuthAgent agent;
    agent_now(h, &agent);
    char *tried = NULL;
    if (h->passphrase_needed)
        host_down(p, h, now_ms,
                  "authentication failed: the identity %s is encrypted and no ssh-agent "
                  "holds it (tunedeck never asks for a passphrase: run ssh-add)",
                  h->conf.identity[0] ? h->conf.identity : "file");
    else if (h->conf.identity[0] && access(h->conf.identity, R_OK) != 0) {
        int why = errno;
        tried = whole(agent_alone, &agent);
        host_down(p, h, now_ms,
                  "authentication failed for %s: %s, and the identity %s (the inventory's "
                  "ssh.identity) cannot be read: %s",
                  h->target, tried ? tried : "the agent's part is not known (out of memory)",
                  h->conf.identity, strerror(why));
    } else if (h->ident_key)
        host_down(p, h, now_ms,
                  "authentication failed for %s: the identity %s (the inventory's ssh.identity, "
                  "the only key offered) was not accepted (%s)",
                  h->target, h->conf.identity,
                  rc == SSH_AUTH_ERROR ? ssh_get_error(h->s) : "denied");
    else {
        char *cannot = whole(unreadable, h);
        tried = whole(none_accepted, &agent);
        const char *said = tried ? tried : "no agent key or identity file was accepted";
        if (h->open_defaults)
            /* The config's keys come first: said before the warning, which may be cut short. */
            host_down(p, h, now_ms, "authentication failed for %s: %s%s%s; %s", h->target, said,
                      h->cfg.n_ids ? " (the ssh config's IdentityFile keys were offered too)" : "",
                      cannot ? cannot : "", h->warning);
        else
            host_down(p, h, now_ms, "authentication failed for %s: %s (%s)%s", h->target, said,
                      rc == SSH_AUTH_ERROR ? ssh_get_error(h->s) : "denied", cannot ? cannot : "");
        free(cannot);
    }
    free(tried);
}
