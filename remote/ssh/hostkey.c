/* The server's host key, checked by tunedeck's own rules whatever any ssh config says (one
 * known_hosts file decides; revoked and changed keys are refused; an unknown one is added
 * only when accepted), and the known_hosts view the handshake reads, so that libssh asks for
 * the key type the check will look at, and every rekey held to the type it passed. Steps of a
 * host's connection (hostconn.c). */
#include "remote/ssh/hostpool_priv.h"

#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/random.h>
#include <unistd.h>

#include "remote/ssh/knownhosts.h"
#include "remote/ssh/sha1.h"
#include "remote/ssh/shquote.h"

/* Adds the server key of this very session (the one just fingerprinted) to known_hosts,
 * its host name hashed when the ssh config says HashKnownHosts yes (libssh would write it
 * in clear: it ignores the option), with a fresh salt as ssh uses. */
static int add_known_host(Host *h, Error *err)
{
    char *entry = NULL;
    if (ssh_session_export_known_hosts_entry(h->s, &entry) != SSH_OK || !entry)
        return error_set(err, "cannot add the host key to %s: %s", h->known_file,
                         ssh_get_error(h->s));
    int rc = 0;
    char *line = entry, *hashed = NULL;
    if (h->cfg.hash_known_hosts) {
        unsigned char salt[SHA1_BYTES];
        size_t cap = strlen(entry) + 80;
        hashed = malloc(cap);
        if (!hashed)
            rc = error_set(err, "cannot add the host key to %s: out of memory", h->known_file);
        else if (getrandom(salt, sizeof salt, 0) != (ssize_t)sizeof salt)
            rc = error_set(err,
                           "cannot add the host key to %s: no random salt to hash its "
                           "name (HashKnownHosts yes): %s",
                           h->known_file, strerror(errno));
        else
            rc = knownhosts_hash_entry(entry, salt, hashed, cap, err);
        line = hashed;
    }
    if (rc == 0)
        rc = knownhosts_append(h->known_file, line, err);
    free(hashed);
    ssh_string_free_char(entry);
    return rc;
}

/* The name known_hosts lists the host under: the host, or "[host]:port" off port 22. */
static void host_port_name(const Host *h, char *out, size_t cap)
{
    if (h->port == 22)
        snprintf(out, cap, "%s", h->target);
    else
        snprintf(out, cap, "[%s]:%d", h->target, h->port);
}

/* libssh asks the server first for the key types known_hosts lists for the host
 * (ssh_client_select_hostkeys), reading the file itself: a `!host,*` line counted for the
 * host there. A host known by one key type, with a key of another type on a line that
 * excludes it, was asked for that other type, and the check (without that line) then found
 * the key "changed". The handshake reads the same view of the file as the check, kept open
 * until the check. */
int host_use_handshake_view(Host *h, Error *err)
{
    char host_port[300], view[sizeof h->known_file];
    host_port_name(h, host_port, sizeof host_port);
    int *fd = &h->handshake_view_fd;
    if (knownhosts_view(h->known_file, host_port, view, sizeof view, fd, err) < 0)
        return -1;
    if (h->handshake_view_fd >= 0) {
        ssh_options_set(h->s, SSH_OPTIONS_KNOWNHOSTS, view);
        ssh_options_set(h->s, SSH_OPTIONS_GLOBAL_KNOWNHOSTS, view);
    }
    return 0;
}

/* libssh's verdict on the server's key, read from the known_hosts file without the lines
 * that exclude this host by a negated pattern (knownhosts_view): libssh would take them. */
static enum ssh_known_hosts_e known_server(Host *h, Error *err)
{
    char host_port[300], view[sizeof h->known_file];
    host_port_name(h, host_port, sizeof host_port);
    int view_fd;
    if (knownhosts_view(h->known_file, host_port, view, sizeof view, &view_fd, err) < 0)
        return SSH_KNOWN_HOSTS_ERROR; /* err says why */
    if (view_fd < 0)
        return ssh_session_is_known_server(h->s);
    ssh_options_set(h->s, SSH_OPTIONS_KNOWNHOSTS, view);
    ssh_options_set(h->s, SSH_OPTIONS_GLOBAL_KNOWNHOSTS, view);
    enum ssh_known_hosts_e known = ssh_session_is_known_server(h->s);
    ssh_options_set(h->s, SSH_OPTIONS_KNOWNHOSTS, h->known_file);
    ssh_options_set(h->s, SSH_OPTIONS_GLOBAL_KNOWNHOSTS, h->known_file);
    close(view_fd);
    return known;
}

static void settle_key(HostPool *p, Host *h, int64_t now_ms, enum ssh_known_hosts_e known,
                       int accepting, const char *accepted, Error *errp);

/* A rekey (libssh's own, or the server's: OpenSSH rekeys after RekeyLimit, about 1 GB by
 * default) chooses the host-key type afresh: ssh_send_rekex and ssh_packet_kexinit call
 * ssh_set_client_kex, whose ssh_client_select_hostkeys reads known_hosts again
 * (ssh_known_hosts_get_algorithms_names), the real file now, `!host` lines counted, and
 * ssh_packet_newkeys then verifies only the new key's signature, never checking it against
 * known_hosts nor comparing it with the key checked here. So a host known by its ecdsa key
 * went on after its first rekey with an ed25519 key that known_hosts lists on a line
 * excluding it (tests/integration/trust.sh). Pinned to the checked key's type, every rekey
 * asks for that type alone, and libssh refuses a signature of any other (its check against
 * the HOSTKEYS option in ssh_packet_newkeys): the connection then drops, and the next one is
 * checked whole. RSA keys sign with SHA-2 only (sshalgos.c). */
static int pin_key_type(Host *h, enum ssh_keytypes_e type)
{
    const char *algos =
        type == SSH_KEYTYPE_RSA ? "rsa-sha2-512,rsa-sha2-256" : ssh_key_type_to_char(type);
    if (!algos || type == SSH_KEYTYPE_UNKNOWN)
        return -1;
    return ssh_options_set(h->s, SSH_OPTIONS_HOSTKEYS, algos) == SSH_OK ? 0 : -1;
}

/* tunedeck's own rules, whatever any ssh config says: a key is accepted only when it is
 * listed for the host in our one known_hosts file; revoked and changed keys are always
 * refused; an unknown key is added only by --accept-new-host-keys or when the operator
 * accepted exactly its fingerprint. */
void host_check_key(HostPool *p, Host *h, int64_t now_ms)
{
    ssh_key key = NULL;
    unsigned char *hash = NULL;
    size_t hlen = 0;
    char *b64 = NULL;
    const char *file = h->known_file;
    char accepted[128];
    snprintf(accepted, sizeof accepted, "%s", h->accept_fp);
    h->accept_fp[0] = 0; /* an acceptance serves one attempt */
    if (ssh_get_server_publickey(h->s, &key) == SSH_OK &&
        ssh_get_publickey_hash(key, SSH_PUBLICKEY_HASH_SHA256, &hash, &hlen) == 0) {
        char *fp = ssh_get_fingerprint_hash(SSH_PUBLICKEY_HASH_SHA256, hash, hlen);
        if (fp) {
            snprintf(h->fingerprint, sizeof h->fingerprint, "%s", fp);
            ssh_string_free_char(fp);
        }
        ssh_clean_pubkey_hash(&hash);
    }
    if (!key || !h->fingerprint[0] || ssh_pki_export_pubkey_base64(key, &b64) != SSH_OK) {
        ssh_key_free(key);
        h->key = HOSTKEY_ERROR;
        host_down(p, h, now_ms, "cannot read the host key of %s", h->target);
        return;
    }
    enum ssh_keytypes_e type = ssh_key_type(key);
    Error err;
    int revoked =
        knownhosts_check_private(file, &err) < 0 ? -1 : host_key_revoked(h, key, b64, &err);
    ssh_key_free(key);
    ssh_string_free_char(b64);
    if (revoked != 0) {
        h->key = revoked > 0 ? HOSTKEY_REVOKED : HOSTKEY_ERROR;
        if (revoked > 0)
            host_refused(p, h, now_ms, "host key for %s (%s) %s: refused", h->target,
                         h->fingerprint, err.msg);
        else
            host_refused(p, h, now_ms, "cannot check the host key: %s", err.msg);
        return;
    }
    err.msg[0] = 0;
    enum ssh_known_hosts_e known = known_server(h, &err);
    int accepting =
        p->opt.accept_new_host_keys || (accepted[0] && strcmp(accepted, h->fingerprint) == 0);
    int lock = -1;
    if ((known == SSH_KNOWN_HOSTS_UNKNOWN || known == SSH_KNOWN_HOSTS_NOT_FOUND) && accepting) {
        /* Another tunedeck (a second session, `hosts` beside the console) may be adding a key
         * for this host at this moment: checked again under the file's lock and added before
         * it is let go, so two different keys offered to two sessions at once (a MITM) are
         * never both written: the second is refused as changed. */
        lock = knownhosts_lock(file, &err);
        known = lock < 0 ? SSH_KNOWN_HOSTS_ERROR : known_server(h, &err);
    }
    settle_key(p, h, now_ms, known, accepting, accepted, &err);
    knownhosts_unlock(lock);
    if (h->state == HOST_AUTH && pin_key_type(h, type) < 0) {
        h->key = HOSTKEY_ERROR;
        host_down(p, h, now_ms, "cannot hold the session of %s to its %s host key for rekeys: %s",
                  h->target, ssh_key_type_to_char(type) ? ssh_key_type_to_char(type) : "unknown",
                  ssh_get_error(h->s));
    }
}

/* What check_host_key concludes from libssh's verdict on the key. */
static void settle_key(HostPool *p, Host *h, int64_t now_ms, enum ssh_known_hosts_e known,
                       int accepting, const char *accepted, Error *errp)
{
    const char *file = h->known_file;
    Error err = *errp;
    switch (known) {
    case SSH_KNOWN_HOSTS_OK:
        h->key = HOSTKEY_OK;
        h->offered_fp[0] = 0;
        h->state = HOST_AUTH;
        return;
    case SSH_KNOWN_HOSTS_CHANGED:
    case SSH_KNOWN_HOSTS_OTHER:
        h->key = HOSTKEY_CHANGED;
        h->offered_fp[0] = 0;
        {
            /* The command that removes the line: its name is "[host]:port" off port 22, which
             * an operator would not guess, and a file written under HashKnownHosts (Debian's
             * default) shows no name to look for. */
            char host_port[300];
            host_port_name(h, host_port, sizeof host_port);
            char *qname = shquote(host_port), *qfile = shquote(file);
            host_refused(p, h, now_ms,
                         "host key for %s changed (now %s): refused; if the change is expected, "
                         "remove its old line from %s: ssh-keygen -R %s -f %s",
                         h->target, h->fingerprint, file, qname ? qname : host_port,
                         qfile ? qfile : file);
            free(qname);
            free(qfile);
        }
        return;
    case SSH_KNOWN_HOSTS_UNKNOWN:
    case SSH_KNOWN_HOSTS_NOT_FOUND:
        if (accepting) {
            if (add_known_host(h, &err) < 0) {
                h->key = HOSTKEY_ERROR;
                host_down(p, h, now_ms, "%s", err.msg);
                return;
            }
            h->key = HOSTKEY_ACCEPTED;
            h->offered_fp[0] = 0;
            h->state = HOST_AUTH;
            return;
        }
        h->key = HOSTKEY_UNKNOWN;
        if (accepted[0]) {
            /* The key shown is not the key offered now: the operator saw another one. */
            snprintf(h->offered_fp, sizeof h->offered_fp, "%s", h->fingerprint);
            host_refused(p, h, now_ms,
                         "unknown host key for %s (%s) is not the %s that was accepted: the "
                         "host now offers another key; refused, nothing written to %s",
                         h->target, h->fingerprint, accepted, file);
            return;
        }
        snprintf(h->offered_fp, sizeof h->offered_fp, "%s", h->fingerprint);
        char host_port[300];
        host_port_name(h, host_port, sizeof host_port);
        int ca_line = knownhosts_cert_authority(file, host_port);
        if (ca_line > 0) /* trusted there through a CA only, which libssh 0.10 cannot check */
            host_refused(p, h, now_ms,
                         "unknown host key for %s (%s): refused, %s trusts it only through the "
                         "@cert-authority line %d, and tunedeck does not use certificate "
                         "authorities; check the fingerprint and accept the host key itself "
                         "with --accept-new-host-keys (or add it to %s)",
                         h->target, h->fingerprint, file, ca_line, file);
        else
            host_refused(p, h, now_ms,
                         "unknown host key for %s (%s): refused, it is not in %s; check the "
                         "fingerprint and accept it with --accept-new-host-keys",
                         h->target, h->fingerprint, file);
        return;
    case SSH_KNOWN_HOSTS_ERROR:
    default:
        h->key = HOSTKEY_ERROR;
        if (err.msg[0])
            host_down(p, h, now_ms, "%s", err.msg);
        else
            host_down(p, h, now_ms, "cannot check the host key against %s: %s", file,
                      ssh_get_error(h->s));
        return;
    }
}
