/* Single-quote shell quoting and host name validation. */
#include "remote/ssh/shquote.h"

#include <stdlib.h>
#include <string.h>

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
    for (size_t i = 0; i < n; i++) {
        unsigned char c = (unsigned char)host[i];
        int ok = (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') || (c >= '0' && c <= '9') ||
                 c == '-' || c == '.' || c == '_' || c == ':' || c == '[' || c == ']';
        if (!ok)
            return error_set(err,
                             "host '%s': unexpected character '%c' at %zu: expected letters, "
                             "digits, '-', '.', '_', ':' or '[ ]' (IPv6) only",
                             host, c >= 32 && c < 127 ? c : '?', i + 1);
    }
    return 0;
}

int user_name_valid(const char *user, Error *err)
{
    size_t n = strlen(user);
    if (n > 64)
        return error_set(err, "user '%s': expected at most 64 characters", user);
    if (user[0] == '-')
        return error_set(err, "user '%s': expected a name not starting with '-'", user);
    for (size_t i = 0; i < n; i++) {
        unsigned char c = (unsigned char)user[i];
        int ok = (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') || (c >= '0' && c <= '9') ||
                 c == '-' || c == '.' || c == '_' || c == '@' || c == '+';
        if (!ok)
            return error_set(err,
                             "user '%s': unexpected character '%c' at %zu: expected letters, "
                             "digits, '-', '.', '_', '@' or '+' only (an ssh config's Match "
                             "exec hands the name to a shell as %%r)",
                             user, c >= 32 && c < 127 ? c : '?', i + 1);
    }
    return 0;
}
