/* File names in ssh configuration as libssh 0.10 expands them (sshpath.h). */
#include "remote/ssh/sshpath.h"

#include <pwd.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

static int put(char *out, size_t cap, size_t *used, const char *s, size_t n)
{
    if (*used + n >= cap)
        return -1;
    memcpy(out + *used, s, n);
    *used += n;
    out[*used] = 0;
    return 0;
}

int sshpath_tilde(const char *in, const char *my_home, char *out, size_t cap)
{
    if (in[0] != '~')
        return snprintf(out, cap, "%s", in) < (int)cap ? 0 : -1;
    const char *rest = in + 1;
    const char *slash = strchr(rest, '/');
    const char *home;
    if (slash && slash > rest) {
        char user[128];
        if ((size_t)(slash - rest) >= sizeof user)
            return -1;
        snprintf(user, sizeof user, "%.*s", (int)(slash - rest), rest);
        const struct passwd *pw = getpwnam(user);
        if (!pw)
            return -1;
        home = pw->pw_dir;
        rest = slash;
    } else if (my_home) {
        home = my_home;
    } else {
        const struct passwd *pw = getpwuid(getuid());
        home = pw && pw->pw_dir ? pw->pw_dir : getenv("HOME");
        if (!home)
            return -1;
    }
    return snprintf(out, cap, "%s%s", home, rest) < (int)cap ? 0 : -1;
}

int sshpath_config_name(const char *named, const char *ssh_dir, char *path, size_t cap,
                        char *for_libssh, size_t cap_libssh, Error *err)
{
    char tilde[4096];
    if (sshpath_tilde(named, NULL, tilde, sizeof tilde) < 0) {
        error_set(err, "TUNEDECK_SSH_CONFIG %s: its ~ names no user here (or the name is too "
                       "long)", named);
        return error_mark(err, ERROR_INPUT);
    }
    size_t used = 0;
    path[0] = 0;
    for (const char *p = tilde; *p; p++) {
        int bad = 0;
        if (*p != '%') {
            bad = put(path, cap, &used, p, 1);
        } else if (p[1] == '%') {
            bad = put(path, cap, &used, "%", 1);
            p++;
        } else if (p[1] == 'd') {
            bad = put(path, cap, &used, ssh_dir, strlen(ssh_dir));
            p++;
        } else if (p[1] == 'u') {
            const struct passwd *pw = getpwuid(getuid());
            if (!pw) {
                error_set(err, "TUNEDECK_SSH_CONFIG %s: %%u: this user has no name in the "
                               "password database", named);
                return error_mark(err, ERROR_INPUT);
            }
            bad = put(path, cap, &used, pw->pw_name, strlen(pw->pw_name));
            p++;
        } else if (!p[1]) {
            break; /* libssh drops a last lone '%' */
        } else {
            error_set(err,
                      "TUNEDECK_SSH_CONFIG %s: %%%c is refused: libssh expands %%h, %%r and "
                      "%%p to each host's name, user and port (another file per host, not "
                      "one checked before it is read), %%l to nothing (libssh 0.10) and no "
                      "other; name one file (~, %%d, %%u and %%%% expand as in libssh)",
                      named, p[1]);
            return error_mark(err, ERROR_INPUT);
        }
        if (bad) {
            error_set(err, "TUNEDECK_SSH_CONFIG %s: the expanded name is too long", named);
            return error_mark(err, ERROR_INPUT);
        }
    }
    if (sshpath_for_libssh(path, for_libssh, cap_libssh) == 0)
        return 0;
    error_set(err, "TUNEDECK_SSH_CONFIG %s: the expanded name is too long", named);
    return error_mark(err, ERROR_INPUT);
}

int sshpath_for_libssh(const char *path, char *out, size_t cap)
{
    /* libssh expands the name it is given: each '%' doubled reads as itself, and a
     * relative name that starts with '~' is kept from its tilde by "./". */
    size_t used = 0;
    if (!cap)
        return -1;
    out[0] = 0;
    if (path[0] == '~' && put(out, cap, &used, "./", 2) < 0)
        return -1;
    for (const char *p = path; *p; p++)
        if ((*p == '%' && put(out, cap, &used, "%", 1) < 0) || put(out, cap, &used, p, 1) < 0)
            return -1;
    return 0;
}

int sshpath_identity_file(const char *arg, const char *home, const char *ssh_dir,
                          const SshpathHost *host, char *out, size_t cap)
{
    char tilde[4096];
    if (sshpath_tilde(arg, home, tilde, sizeof tilde) < 0)
        return -1;
    size_t used = 0;
    out[0] = 0;
    for (const char *p = tilde; *p; p++) {
        int bad;
        char port[16];
        if (*p != '%') {
            bad = put(out, cap, &used, p, 1);
        } else if (!p[1]) {
            break; /* libssh drops a last lone '%' */
        } else if (*++p == '%') {
            bad = put(out, cap, &used, "%", 1);
        } else if (*p == 'd') {
            bad = put(out, cap, &used, ssh_dir, strlen(ssh_dir));
        } else if (*p == 'u') {
            const struct passwd *pw = getpwuid(getuid());
            bad = !pw || put(out, cap, &used, pw->pw_name, strlen(pw->pw_name));
        } else if (*p == 'h') {
            bad = !host->host || put(out, cap, &used, host->host, strlen(host->host));
        } else if (*p == 'r') {
            bad = !host->user || put(out, cap, &used, host->user, strlen(host->user));
        } else if (*p == 'p') {
            snprintf(port, sizeof port, "%u", host->port ? host->port : 22u);
            bad = put(out, cap, &used, port, strlen(port));
        } else if (*p == 'l') {
            bad = 0; /* libssh 0.10.6 expands %l to nothing */
        } else {
            return -1; /* "Wrong escape sequence": libssh fails the connection */
        }
        if (bad)
            return -1;
    }
    return 0;
}
