/* The SSH algorithms tunedeck never uses, whatever an ssh configuration asks for. An ssh
 * config's KexAlgorithms, Ciphers, MACs, HostKeyAlgorithms and PubkeyAcceptedAlgorithms
 * (PubkeyAcceptedKeyTypes) lines replace libssh's lists, and libssh 0.10 still implements
 * SHA-1 key exchange (group1, group14, group-exchange), CBC ciphers (3des, aes, blowfish),
 * ssh-rsa signatures with SHA-1 and ssh-dss: one line would bring them back. OpenSSH has all
 * of these off by default; so does tunedeck, with no way to turn them on. hmac-sha1 stays
 * allowed, as in OpenSSH's defaults (HMAC does not rest on SHA-1's collision resistance). */
#ifndef TUNEDECK_SSHALGOS_H
#define TUNEDECK_SSHALGOS_H

#include "core/base/error.h"

/* One ssh config line, its keyword and first value as libssh reads them (the value may be
 * NULL). 0 when the keyword sets no algorithm list, or when no name in its comma-separated
 * list, with any leading '+', '-' or '^' taken off (libssh 0.10.6 knows no such signs: it
 * keeps every name it knows, so "-x,ssh-rsa" offers ssh-rsa), is one tunedeck refuses; -1 with err
 * naming the keyword, the algorithm, why it is weak and what is allowed. */
int sshalgos_check_line(const char *keyword, const char *value, Error *err);

/* Why `name` in the list `keyword` sets (KexAlgorithms, Ciphers, MACs, HostKeyAlgorithms,
 * PubkeyAccepted*) is weak, or NULL when it is not (or the keyword sets no list). */
const char *sshalgos_weakness(const char *keyword, const char *name);

/* Whether every algorithm a server lists for `method` (libssh's name for the list it
 * could not match: "kex algos", "server host key algo", "encryption client->server",
 * "mac algo server->client"...) is one tunedeck refuses: 1 then, 0 when one is not (two
 * strong lists that do not meet), the method is another, or the list is empty. */
int sshalgos_server_only_weak(const char *method, const char *server_list);

/* What a session agreed on, as libssh's ssh_get_kex_algo, ssh_get_cipher_in/out and
 * ssh_get_hmac_in/out name it (NULL: unknown, not checked). libssh 0.10 has no getter for
 * the host key algorithm: only the config lines (above) guard that one. */
typedef struct {
    const char *kex, *cipher_in, *cipher_out, *hmac_in, *hmac_out;
} SshNegotiated;

/* The config lines are not all libssh offers: a FIPS-mode libssh's defaults include CBC
 * ciphers, and a libssh built elsewhere reads another global config. 0 when nothing
 * negotiated is weak; -1 with err naming which (direction, name, why). */
int sshalgos_check_negotiated(const SshNegotiated *n, Error *err);

#endif
