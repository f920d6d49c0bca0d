#include <criterion/criterion.h>
#include <string.h>

#include "remote/ssh/sshalgos.h"

static void refused(const char *keyword, const char *value, const char *needle)
{
    Error err = {0};
    cr_assert_eq(sshalgos_check_line(keyword, value, &err), -1, "%s %s was allowed", keyword,
                 value);
    cr_assert(strstr(err.msg, needle), "'%s' lacks '%s'", err.msg, needle);
    cr_assert(strstr(err.msg, "allowed: "), "%s", err.msg);
    cr_assert_eq(err.kind, ERROR_INPUT);
}

static void allowed(const char *keyword, const char *value)
{
    Error err = {0};
    cr_assert_eq(sshalgos_check_line(keyword, value, &err), 0, "%s %s: %s", keyword, value,
                 err.msg);
}

/* What OpenSSH has off by default, and libssh 0.10 still implements (or may add). */
Test(sshalgos, every_weak_family_is_refused_naming_it_and_why)
{
    refused("HostKeyAlgorithms", "+ssh-rsa", "HostKeyAlgorithms names ssh-rsa (RSA signatures "
                                             "with SHA-1), which tunedeck never uses");
    refused("hostkeyalgorithms", "ssh-ed25519,ssh-dss", "names ssh-dss (DSA");
    refused("PubkeyAcceptedKeyTypes", "rsa-sha2-256,ssh-rsa", "names ssh-rsa");
    refused("PubkeyAcceptedAlgorithms", "ssh-rsa-cert-v01@openssh.com", "RSA signatures");
    refused("PubkeyAcceptedAlgorithms", "^ssh-dss-cert-v01@openssh.com", "DSA");
    refused("KexAlgorithms", "diffie-hellman-group1-sha1", "1024-bit Diffie-Hellman group");
    refused("KexAlgorithms", "curve25519-sha256,diffie-hellman-group14-sha1", "SHA-1");
    refused("KexAlgorithms", "diffie-hellman-group-exchange-sha1", "SHA-1");
    refused("Ciphers", "3des-cbc", "names 3des-cbc (a CBC-mode cipher)");
    refused("Ciphers", "aes256-ctr,aes128-cbc", "aes128-cbc");
    refused("ciphers", "blowfish-cbc", "blowfish-cbc");
    refused("Ciphers", "arcfour256", "RC4");
    refused("Ciphers", "none", "no encryption");
    refused("MACs", "hmac-md5", "MD5");
    refused("MACs", "hmac-sha1-96", "truncated to 96 bits");
    refused("MACs", "hmac-sha2-256,hmac-md5-96-etm@openssh.com", "hmac-md5-96-etm");
    refused("MACs", "hmac-ripemd160", "RIPEMD-160");
}

/* libssh 0.10.6 reads no '+', '-' or '^': it keeps the names it knows, whatever comes first,
 * so a "removal" list offers what it names. */
Test(sshalgos, a_sign_never_hides_a_weak_name)
{
    refused("HostKeyAlgorithms", "-ssh-rsa,ssh-dss", "names ssh-rsa");
    refused("HostKeyAlgorithms", "-x,ssh-rsa", "names ssh-rsa");
    refused("Ciphers", "-x,3des-cbc", "names 3des-cbc");
    refused("KexAlgorithms", "-x,diffie-hellman-group1-sha1", "diffie-hellman-group1-sha1");
    refused("MACs", "hmac-sha2-256,^hmac-md5", "names hmac-md5");
    refused("Ciphers", "+-^aes128-cbc", "names aes128-cbc");
    allowed("Ciphers", "-aes128-ctr,aes256-gcm@openssh.com");
}

Test(sshalgos, strong_lists_removals_and_other_keywords_pass)
{
    allowed("Ciphers", "chacha20-poly1305@openssh.com,aes256-gcm@openssh.com,aes128-ctr");
    allowed("KexAlgorithms", "sntrup761x25519-sha512@openssh.com,curve25519-sha256,"
                             "diffie-hellman-group14-sha256,diffie-hellman-group16-sha512");
    allowed("MACs", "hmac-sha2-256-etm@openssh.com,hmac-sha1,umac-128-etm@openssh.com");
    allowed("HostKeyAlgorithms", "ssh-ed25519,rsa-sha2-512,rsa-sha2-256,ecdsa-sha2-nistp256");
    allowed("PubkeyAcceptedAlgorithms", "rsa-sha2-512-cert-v01@openssh.com,ssh-ed25519");
    allowed("Host", "ssh-rsa");
    allowed("Ciphers", NULL);
}

/* What a session agreed on: libssh's own defaults may offer what no config line named. */
Test(sshalgos, a_weak_negotiated_algorithm_is_refused_naming_it)
{
    SshNegotiated strong = {"curve25519-sha256", "aes256-gcm@openssh.com",
                            "chacha20-poly1305@openssh.com", "aead-gcm", "aead-poly1305"};
    Error err = {0};
    cr_assert_eq(sshalgos_check_negotiated(&strong, &err), 0, "%s", err.msg);
    SshNegotiated etm = {"diffie-hellman-group14-sha256", "aes128-ctr", "aes256-ctr",
                         "hmac-sha2-256-etm@openssh.com", "hmac-sha1"};
    cr_assert_eq(sshalgos_check_negotiated(&etm, &err), 0, "%s", err.msg);
    SshNegotiated unknown = {NULL, NULL, NULL, NULL, NULL};
    cr_assert_eq(sshalgos_check_negotiated(&unknown, &err), 0, "%s", err.msg);

    const struct {
        SshNegotiated n;
        const char *needle;
    } weak[] = {
        {{"diffie-hellman-group1-sha1", "aes128-ctr", "aes128-ctr", "hmac-sha1", "hmac-sha1"},
         "key exchange diffie-hellman-group1-sha1 (a 1024-bit"},
        {{"curve25519-sha256", "aes256-cbc", "aes256-ctr", "hmac-sha1", "hmac-sha1"},
         "cipher server->client aes256-cbc (a CBC-mode cipher)"},
        {{"curve25519-sha256", "aes256-ctr", "3des-cbc", "hmac-sha1", "hmac-sha1"},
         "cipher client->server 3des-cbc"},
        {{"curve25519-sha256", "aes256-ctr", "aes256-ctr", "hmac-md5", "hmac-sha1"},
         "MAC server->client hmac-md5 (MD5)"},
        {{"curve25519-sha256", "aes256-ctr", "aes256-ctr", "hmac-sha1", "none"},
         "MAC client->server none"},
    };
    for (size_t i = 0; i < sizeof weak / sizeof weak[0]; i++) {
        Error e = {0};
        cr_assert_eq(sshalgos_check_negotiated(&weak[i].n, &e), -1, "case %zu allowed", i);
        cr_assert(strstr(e.msg, weak[i].needle), "'%s' lacks '%s'", e.msg, weak[i].needle);
        cr_assert(strstr(e.msg, "which tunedeck never uses"), "%s", e.msg);
        cr_assert_eq(e.kind, ERROR_INPUT);
    }
}

/* "the server offers only algorithms tunedeck never uses" is true only when it is. */
Test(sshalgos, a_server_list_is_only_weak_when_every_name_is)
{
    cr_assert_eq(sshalgos_server_only_weak("server host key algo", "ssh-rsa"), 1);
    cr_assert_eq(sshalgos_server_only_weak("encryption client->server", "3des-cbc,aes128-cbc"), 1);
    cr_assert_eq(sshalgos_server_only_weak("kex algos", "diffie-hellman-group1-sha1"), 1);
    cr_assert_eq(sshalgos_server_only_weak("kex algos", "diffie-hellman-group1-sha1,ext-info-s,"
                                                        "kex-strict-s-v00@openssh.com"),
                 1, "markers are no algorithm");
    cr_assert_eq(sshalgos_server_only_weak("mac algo server->client", "hmac-md5,hmac-sha1-96"), 1);
    cr_assert_eq(sshalgos_server_only_weak("encryption client->server", "aes128-gcm@openssh.com"),
                 0);
    cr_assert_eq(sshalgos_server_only_weak("encryption server->client", "3des-cbc,aes256-ctr"), 0);
    cr_assert_eq(sshalgos_server_only_weak("kex algos", "sntrup761x25519-sha512@openssh.com"), 0);
    cr_assert_eq(sshalgos_server_only_weak("compression algo client->server", "zlib"), 0);
    cr_assert_eq(sshalgos_server_only_weak("kex algos", ""), 0);
}
