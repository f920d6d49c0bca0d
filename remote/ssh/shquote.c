/* Single-quote shell quoting and host name validation. */
#include "remote/ssh/shquote.h"

#include <stdlib.h>
#include <string.h>

#include "core/base/termsafe.h"

static int grow(char **buf, size_t *len, const char *bytes, size_t n)
{
    char *g = realloc(*buf, *len + n + 1);
    if (!g)
        return -1;
    memcpy(g + *len, bytes, n);
    *len += n;
    g[*len] = 0;
    *buf = g;
    return 0;
}

int shquote_append_raw(char **buf, size_t *len, const char *text)
{
    return grow(buf, len, text, strlen(text));
}

int shquote_append_raw_n(char **buf, size_t *len, const char *text, size_t n)
{
    return grow(buf, len, text, n);
}

int shquote_append(char **buf, size_t *len, const char *arg)
{
    if (grow(buf, len, "'", 1) < 0)
        return -1;
    for (const char *p = arg; *p;) {
        const char *q = strchr(p, '\'');
        size_t n = q ? (size_t)(q - p) : strlen(p);
        if (grow(buf, len, p, n) < 0)
            return -1;
        if (!q)
            break;
        /* Close the quote, add an escaped quote, reopen: the only way in POSIX sh. */
        if (grow(buf, len, "'\\''", 4) < 0)
            return -1;
        p = q + 1;
    }
    return grow(buf, len, "'", 1);
}

char *shquote(const char *arg)
{
    char *buf = NULL;
    size_t len = 0;
    if (shquote_append(&buf, &len, arg) < 0) {
        free(buf);
        return NULL;
    }
    return buf;
}

char *shquote_argv(const char *const *argv, size_t n)
{
    char *buf = NULL;
    size_t len = 0;
    if (grow(&buf, &len, "", 0) < 0)
        return NULL;
    for (size_t i = 0; i < n; i++) {
        if ((i && grow(&buf, &len, " ", 1) < 0) || shquote_append(&buf, &len, argv[i]) < 0) {
            free(buf);
            return NULL;
        }
    }
    return buf;
}

int host_name_valid(const char *host, Error *err)
{
    size_t n = strlen(host);
    if (n == 0 || n > 253)
        return error_set(err, "host '%s': expected 1 to 253 characters", host);
    if (host[0] == '-')
        return error_set(err, "host '%s': expected a name not starting with '-'", host);
    /* Brackets only around a whole IPv6 address, "[fd00::1]", as libssh reads them (it
     * strips them); anywhere else they were a stray glob in every command and advice. */
    int bracketed = host[0] == '[' && n > 2 && host[n - 1] == ']' && memchr(host, ':', n);
    for (size_t i = 0; i < n; i++) {
        unsigned char c = (unsigned char)host[i];
        int ok = (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') || (c >= '0' && c <= '9') ||
                 c == '-' || c == '.' || c == '_' || c == ':' ||
                 (bracketed && (i == 0 || i == n - 1));
        if (!ok) {
            char shown[48]; /* 'è' (U+00E8), '\xE8': it showed '?' for both */
            termsafe_char(shown, sizeof shown, host + i);
            return error_set(err,
                             "host '%s': unexpected character %s at %zu: expected letters, "
                             "digits, '-', '.', '_' or ':' only (an IPv6 address bare, "
                             "fd00::1, or in brackets around the whole host, [fd00::1])",
                             host, shown, i + 1);
        }
    }
    return 0;
}

/* libssh 0.10.6 pastes the user name as %r, unquoted, into an ssh config's `Match exec`
 * command and runs that through $SHELL -c (OpenSSH did so before 9.6). The rule is theirs
 * (libssh's ssh_check_username_syntax, OpenSSH's valid_ruser: none of '`";&<>|(){}, no
 * leading '-', no trailing '\') plus what makes a name several words or other words: no
 * blank or control byte (word splitting, a newline ends the command), no '*', '?', '['
 * (file names), no leading '~' or '#' (a home folder, a comment), no '%' (an escape of
 * ssh's own), and no '$' but a last one ($x, $@ expand). So it keeps the names sites use:
 * winbind's DOMAIN\user, a machine account's trailing '$', AD names up to 256 bytes.
 * Why a '\' cannot break out: with the quotes refused it cannot end a quote the operator
 * put around %r, a trailing one (the only one that could escape what follows the name in
 * the command) is refused, and elsewhere it escapes, or inside "..." keeps, the next
 * character of the name, which is then one of the harmless ones above. A last '$' meets
 * the operator's own text after %r: a blank or a quote leaves it a plain '$'. */
int user_name_valid(const char *user, Error *err)
{
    size_t n = strlen(user);
    if (n > USER_NAME_MAX)
        return error_set(err, "user '%.32s...': expected at most %d bytes, found %zu", user,
                         USER_NAME_MAX, n);
    if (user[0] == '-' || user[0] == '~' || user[0] == '#')
        return error_set(err, "user '%s': expected a name not starting with '%c'", user, user[0]);
    if (n && user[n - 1] == '\\')
        return error_set(err, "user '%s': expected a name not ending in '\\'", user);
    for (size_t i = 0; i < n; i++) {
        unsigned char c = (unsigned char)user[i];
        int bad =
            c <= ' ' || c == 0x7f || strchr("'`\";&<>|(){}*?[%", c) || (c == '$' && i + 1 < n);
        if (bad) {
            char shown[48];
            termsafe_char(shown, sizeof shown, user + i);
            size_t at = 1; /* in characters: a name may hold non-ASCII ones before it */
            for (size_t k = 0; k < i; k++)
                at += ((unsigned char)user[k] & 0xC0) != 0x80;
            return error_set(err,
                             "user '%s': unexpected character %s at %zu: expected no blank, "
                             "control byte, quote or any of ;&<>|(){}*?[%%, and a '$' only "
                             "last (an ssh config's Match exec hands the name to a shell as "
                             "%%r)",
                             user, shown, at);
        }
    }
    return 0;
}
