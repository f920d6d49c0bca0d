/* The SSH algorithms tunedeck never uses (sshalgos.h). */
#include "remote/ssh/sshalgos.h"

#include <stdio.h>
#include <string.h>
#include <strings.h>

typedef enum { LIST_NONE, LIST_KEX, LIST_CIPHERS, LIST_MACS, LIST_KEYS } ListKind;

/* What tunedeck allows, as libssh 0.10 implements them, for the refusal to name. */
static const char ALLOWED_KEX[] =
    "curve25519-sha256, curve25519-sha256@libssh.org, ecdh-sha2-nistp256, ecdh-sha2-nistp384, "
    "ecdh-sha2-nistp521, diffie-hellman-group18-sha512, diffie-hellman-group16-sha512, "
    "diffie-hellman-group-exchange-sha256, diffie-hellman-group14-sha256";
static const char ALLOWED_CIPHERS[] =
    "chacha20-poly1305@openssh.com, aes256-gcm@openssh.com, aes128-gcm@openssh.com, "
    "aes256-ctr, aes192-ctr, aes128-ctr";
static const char ALLOWED_MACS[] =
    "hmac-sha2-256-etm@openssh.com, hmac-sha2-512-etm@openssh.com, hmac-sha2-256, "
    "hmac-sha2-512, hmac-sha1-etm@openssh.com, hmac-sha1";
static const char ALLOWED_KEYS[] =
    "ssh-ed25519, ecdsa-sha2-nistp256, ecdsa-sha2-nistp384, ecdsa-sha2-nistp521, "
    "sk-ssh-ed25519@openssh.com, sk-ecdsa-sha2-nistp256@openssh.com, rsa-sha2-512, "
    "rsa-sha2-256 (and their -cert-v01@openssh.com certificates)";

static ListKind list_kind(const char *keyword)
{
    if (!keyword)
        return LIST_NONE;
    if (strcasecmp(keyword, "kexalgorithms") == 0)
        return LIST_KEX;
    if (strcasecmp(keyword, "ciphers") == 0)
        return LIST_CIPHERS;
    if (strcasecmp(keyword, "macs") == 0)
        return LIST_MACS;
    if (strcasecmp(keyword, "hostkeyalgorithms") == 0 ||
        strcasecmp(keyword, "pubkeyacceptedalgorithms") == 0 ||
        strcasecmp(keyword, "pubkeyacceptedkeytypes") == 0)
        return LIST_KEYS;
    return LIST_NONE;
}

static int ends_with(const char *s, const char *tail)
{
    size_t n = strlen(s), t = strlen(tail);
    return n >= t && strcasecmp(s + n - t, tail) == 0;
}

static int has(const char *s, const char *part)
{
    return strcasestr(s, part) != NULL;
}

/* Families, not a list of today's names: a name libssh adds later in a weak family is
 * refused too, and a strong name it does not know yet is left to libssh (which drops it). */
static const char *weakness(ListKind kind, const char *a)
{
    if (strcasecmp(a, "none") == 0)
        return kind == LIST_CIPHERS ? "no encryption at all" : "no protection at all";
    switch (kind) {
    case LIST_KEX:
        if (has(a, "group1-"))
            return "a 1024-bit Diffie-Hellman group with SHA-1";
        if (ends_with(a, "-sha1") || has(a, "-sha1@"))
            return "key exchange hashed with SHA-1";
        return NULL;
    case LIST_CIPHERS:
        if (has(a, "cbc"))
            return "a CBC-mode cipher";
        if (has(a, "arcfour") || has(a, "rc4"))
            return "RC4";
        if (has(a, "des") || has(a, "blowfish") || has(a, "cast128"))
            return "a 64-bit block cipher";
        return NULL;
    case LIST_MACS:
        if (has(a, "md5"))
            return "MD5";
        if (has(a, "-96"))
            return "a MAC truncated to 96 bits";
        if (has(a, "ripemd"))
            return "RIPEMD-160";
        return NULL;
    case LIST_KEYS:
        if (strcasecmp(a, "ssh-rsa") == 0 || strncasecmp(a, "ssh-rsa-cert-", 13) == 0)
            return "RSA signatures with SHA-1";
        if (strncasecmp(a, "ssh-dss", 7) == 0)
            return "DSA (1024-bit keys, SHA-1 signatures)";
        return NULL;
    default:
        return NULL;
    }
}

const char *sshalgos_weakness(const char *keyword, const char *name)
{
    ListKind kind = list_kind(keyword);
    return kind == LIST_NONE || !name ? NULL : weakness(kind, name);
}

int sshalgos_server_only_weak(const char *method, const char *server_list)
{
    /* libssh 0.10's names for the lists it could not match (kex.c) */
    const char *keyword = strncmp(method, "kex algos", 9) == 0               ? "KexAlgorithms"
                          : strncmp(method, "server host key algo", 20) == 0 ? "HostKeyAlgorithms"
                          : strncmp(method, "encryption ", 11) == 0          ? "Ciphers"
                          : strncmp(method, "mac algo ", 9) == 0             ? "MACs"
                                                                             : NULL;
    if (!keyword || !server_list || !server_list[0])
        return 0;
    for (const char *p = server_list; *p;) {
        size_t n = strcspn(p, ",");
        char name[128];
        snprintf(name, sizeof name, "%.*s", (int)n, p);
        /* A kex list also carries markers that are no algorithm (RFC 8308, strict kex). */
        int marker = strncmp(name, "ext-info-", 9) == 0 || strncmp(name, "kex-strict-", 11) == 0;
        if (!marker && !sshalgos_weakness(keyword, name))
            return 0;
        p += n;
        p += *p == ',';
    }
    return 1;
}

int sshalgos_check_negotiated(const SshNegotiated *n, Error *err)
{
    const struct {
        const char *keyword, *what, *name;
    } used[] = {
        {"KexAlgorithms", "key exchange", n->kex},
        {"Ciphers", "cipher client->server", n->cipher_out},
        {"Ciphers", "cipher server->client", n->cipher_in},
        {"MACs", "MAC client->server", n->hmac_out},
        {"MACs", "MAC server->client", n->hmac_in},
    };
    for (size_t i = 0; i < sizeof used / sizeof used[0]; i++) {
        if (!used[i].name)
            continue;
        const char *why = sshalgos_weakness(used[i].keyword, used[i].name);
        if (why) {
            error_set(err,
                      "the session negotiated the %s %s (%s), which tunedeck never uses: "
                      "refused before the host key is checked or anything runs (this libssh's "
                      "own defaults or its global configuration offered it)",
                      used[i].what, used[i].name, why);
            return error_mark(err, ERROR_INPUT);
        }
    }
    return 0;
}

int sshalgos_check_line(const char *keyword, const char *value, Error *err)
{
    ListKind kind = list_kind(keyword);
    if (kind == LIST_NONE || !value)
        return 0;
    const char *allowed = kind == LIST_KEX       ? ALLOWED_KEX
                          : kind == LIST_CIPHERS ? ALLOWED_CIPHERS
                          : kind == LIST_MACS    ? ALLOWED_MACS
                                                 : ALLOWED_KEYS;
    for (const char *p = value; *p;) {
        size_t n = strcspn(p, ",");
        char name[128];
        /* libssh 0.10.6 (ssh_options_set_algo) knows no leading '+', '-' or '^': it keeps
         * the names it knows and drops the rest, so "-x,ssh-rsa" offers ssh-rsa alone, and
         * a '-' never removes. Every name counts, whatever sign it starts with (a later
         * libssh that reads "-list" as a removal only makes refusing it stricter). */
        size_t sign = strspn(p, "+-^");
        if (sign > n)
            sign = n;
        snprintf(name, sizeof name, "%.*s", (int)(n - sign), p + sign);
        const char *why = weakness(kind, name);
        if (why) {
            error_set(err,
                      "%s names %s (%s), which tunedeck never uses, whatever the ssh "
                      "configuration says: refused, and the whole file with it, whichever "
                      "Host or Match block the line is in; remove it from the line, or point "
                      "TUNEDECK_SSH_CONFIG at a config for tunedeck's hosts only; allowed: %s",
                      keyword, name, why, allowed);
            return error_mark(err, ERROR_INPUT);
        }
        p += n;
        p += *p == ',';
    }
    return 0;
}
