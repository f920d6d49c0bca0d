/* Whether an ssh configuration may be read at all (sshconfig.h). */
#include "remote/ssh/sshconfig.h"

#include <errno.h>
#include <fcntl.h>
#include <glob.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>
#include <sys/stat.h>
#include <unistd.h>

#include <libssh/libssh.h>

#include "core/base/ownpath.h"
#include "remote/ssh/identities.h"
#include "remote/ssh/sshalgos.h"
#include "remote/ssh/sshmatch.h"
#include "remote/ssh/sshpath.h"

enum { MAX_INCLUDE_DEPTH = 16 }; /* libssh's own limit */

static const char GLOBAL_CONFIG[] = "/etc/ssh/ssh_config";

/* One walk over a config and its Includes: with `host`, the lines libssh applies to that host
 * are followed (sshmatch.h) and their IdentityFile lines expanded for it, checked and
 * collected; without, every line is read (any may apply to some host) and IdentityFile lines
 * are left to that per-host walk. */
typedef struct {
    const char *ssh_dir;
    int global;
    const SshpathHost *host;
    SshmatchHost *match;
    int applies; /* libssh's `parsing`: the verdict of the last Host or Match line, any file */
    unsigned applies_why; /* a MAYBE's SSHMATCH_BY_* bits */
    int block_match;      /* that line is a Match line, else a Host line */
    char block_at[1100];  /* its config:line */
    SshconfigHostFiles *out;
} Walk;

static int check_file(Walk *w, const char *path, const char *by, int depth, Error *err);
static int check_one(const char *path, const char *what, const char *included, int allow,
                     Error *err);

/* The next word of a config line, as libssh 0.10's ssh_config_get_token reads it: blanks
 * skipped; a double-quoted block whole; else up to a blank or '='; then blanks and one '='
 * skipped. Cuts the line in place; NULL at its end. */
static char *config_token(char **s)
{
    char *c = *s + strspn(*s, " \t");
    char *word;
    int had_equal = 0;
    if (*c == '"') {
        word = ++c;
        c += strcspn(c, "\"\n");
        if (*c)
            *c++ = 0;
    } else {
        word = c;
        c += strcspn(c, " \t=\n");
        if (*c) {
            had_equal = *c == '=';
            *c++ = 0;
        }
    }
    while (*c == ' ' || *c == '\t' || *c == '\n' || (!had_equal && *c == '=')) {
        had_equal |= *c == '=';
        c++;
    }
    *s = c;
    return *word ? word : NULL;
}

/* The folder, and every folder above it up to the first whose name has no wildcard, of one
 * that a glob's folder part matched: each must be one no one else can add an entry to. */
static int check_glob_folders(const char *match, size_t base_len, Error *err)
{
    char dir[2048];
    snprintf(dir, sizeof dir, "%s", match);
    while (strlen(dir) > base_len) {
        if (check_one(dir, "folder", "", 0, err) < 0)
            return -1;
        char up[2048];
        if (ownpath_folder(dir, up, sizeof up) < 0 || strcmp(up, dir) == 0)
            break;
        snprintf(dir, sizeof dir, "%s", up);
    }
    return 0;
}

/* The folder an Include reads from. A glob reads whatever appears there, and so does a file
 * name that is not there yet; the check runs before libssh parses, so a file someone else
 * adds between the two is read, its Match exec run as you. So that folder must be yours or
 * root's and writable by no one else, sticky or not (ssh's own safe_path() knows no sticky
 * exception either): a sticky folder such as /tmp lets anyone add a file. Only an existing
 * file may sit in a sticky folder (check_trusted), which keeps others from replacing it. */
static int check_include_folder(const char *pattern, Error *err)
{
    struct stat st;
    int wild = strpbrk(pattern, "*?[") != NULL;
    if (!wild && stat(pattern, &st) == 0 && S_ISREG(st.st_mode))
        return 0;
    char folder[2048], base[2048];
    if (ownpath_folder(pattern, folder, sizeof folder) < 0)
        return 0;
    snprintf(base, sizeof base, "%s", folder);
    while (strpbrk(base, "*?[")) {
        char up[2048];
        if (ownpath_folder(base, up, sizeof up) < 0)
            return 0;
        snprintf(base, sizeof base, "%s", up);
    }
    /* A folder not there yet is as open as the nearest one above it that is. */
    char open_dir[2048];
    snprintf(open_dir, sizeof open_dir, "%s", base);
    while (ownpath_check(open_dir, 0).verdict == OWNPATH_MISSING) {
        char up[2048];
        if (ownpath_folder(open_dir, up, sizeof up) < 0 || strcmp(up, open_dir) == 0)
            break;
        snprintf(open_dir, sizeof open_dir, "%s", up);
    }
    if (check_one(open_dir, "folder", "", 0, err) < 0)
        return -1;
    if (strcmp(base, folder) == 0)
        return 0;
    /* Wildcards in the folder part: every folder they match now, and the ones between it
     * and base (a new one added later is in a folder checked here). */
    glob_t g;
    int rc = 0;
    if (glob(folder, GLOB_TILDE | GLOB_ONLYDIR, NULL, &g) != 0)
        return 0;
    for (size_t i = 0; rc == 0 && i < g.gl_pathc; i++)
        rc = check_glob_folders(g.gl_pathv[i], strlen(base), err);
    globfree(&g);
    return rc;
}

static int add_file(SshconfigFile **files, size_t *n, size_t *cap, const char *file,
                    const char *where, Error *err)
{
    if (*n == *cap) {
        size_t grown_cap = *cap ? *cap * 2 : 8;
        SshconfigFile *grown = realloc(*files, grown_cap * sizeof *grown);
        if (!grown)
            return error_set(err, "ssh configuration: out of memory");
        *files = grown;
        *cap = grown_cap;
    }
    SshconfigFile *f = &(*files)[(*n)++];
    snprintf(f->file, sizeof f->file, "%s", file);
    snprintf(f->where, sizeof f->where, "%s", where);
    return 0;
}

/* An IdentityFile line that applies to this host: libssh reads the key with no check of its
 * mode, as for the default ones (identities.h). The one file it names for this host (%h, %r,
 * %p expanded with the host's own values, as libssh expands them when it connects) must be
 * private: ssh would not use it, and a config names it on purpose, so it is refused as the
 * inventory's identity is. Another host's block is not this host's business: its key may be
 * open or missing without stopping this one. */
static int identity_line(Walk *w, const char *arg, const char *where, Error *err)
{
    char home[1024], file[4096];
    /* libssh 0.10.6 compares 6 characters ("pkcs11"), and expands no such name */
    if (!arg || strncmp(arg, "pkcs11:", 6) == 0 ||
        ownpath_folder(w->ssh_dir, home, sizeof home) < 0)
        return 0;
    if (sshpath_identity_file(arg, home, w->ssh_dir, w->host, file, sizeof file) < 0)
        return 0; /* libssh cannot expand it and reads nothing */
    const char *blocks = file_would_block(file);
    if (blocks) {
        error_set(err, "%s: IdentityFile %s: the key %s is %s: libssh would wait forever to "
                       "read it; refused",
                  where, arg, file, blocks);
        return error_mark(err, ERROR_INPUT);
    }
    unsigned mode = identity_too_open(file);
    if (mode) {
        error_set(err,
                  "%s: IdentityFile %s: the key %s may be read by others (mode %03o): "
                  "refused, as ssh refuses it; chmod 600 it",
                  where, arg, file, mode);
        return error_mark(err, ERROR_INPUT);
    }
    return add_file(&w->out->ids, &w->out->n_ids, &w->out->cap_ids, file, where, err);
}

/* A RevokedHostKeys line that may apply to this host (revokedkeys.h reads the file). ssh
 * expands ~ and %h, %r, %p, %d in it as in IdentityFile; a value that cannot be expanded
 * revokes keys no one can name, so it refuses the host rather than be skipped. */
static int revoked_line(Walk *w, const char *arg, const char *where, Error *err)
{
    char home[1024], file[4096];
    if (w->out->revoked_final)
        return 0; /* ssh keeps the first value that applies */
    if (!arg) {
        error_set(err, "%s: RevokedHostKeys without a file: expected the file of revoked keys",
                  where);
        return error_mark(err, ERROR_INPUT);
    }
    if (strcmp(arg, "none") == 0) {
        /* ssh's value, first come, then cleared (readconf.c's CLEAR_ON_NONE): no file, and
         * no later line counts. Under a Match exec block it may not apply: later ones do. */
        w->out->revoked_final = w->applies == SSHMATCH_YES;
        return 0;
    }
    if (ownpath_folder(w->ssh_dir, home, sizeof home) < 0 ||
        sshpath_identity_file(arg, home, w->ssh_dir, w->host, file, sizeof file) < 0) {
        error_set(err,
                  "%s: RevokedHostKeys %s: cannot expand it (expected ~, %%h, %%r, %%p or "
                  "%%d): tunedeck cannot tell which keys it revokes, so the host is refused",
                  where, arg);
        return error_mark(err, ERROR_INPUT);
    }
    if (strlen(file) >= sizeof w->out->revoked[0].file) {
        /* cut short it would name another file (refused as unreadable, with the wrong name) */
        error_set(err, "%s: RevokedHostKeys %.60s...: longer than %zu bytes once expanded",
                  where, file, sizeof w->out->revoked[0].file - 1);
        return error_mark(err, ERROR_INPUT);
    }
    w->out->revoked_final = w->applies == SSHMATCH_YES;
    return add_file(&w->out->revoked, &w->out->n_revoked, &w->out->cap_revoked, file, where,
                    err);
}

/* A UserKnownHostsFile or GlobalKnownHostsFile line that may apply to this host: each file
 * it names is read for @revoked lines only (hostrevoke.c). "none" names no file; a name that
 * cannot be expanded names none that can be read, and is left out, as a missing file is. */
static int known_line(Walk *w, const char *const *words, size_t n, int *final,
                      const char *where, Error *err)
{
    char home[1024], file[4096];
    if (*final || ownpath_folder(w->ssh_dir, home, sizeof home) < 0)
        return 0; /* ssh keeps the first value that applies */
    *final = w->applies == SSHMATCH_YES;
    for (size_t i = 0; i < n; i++) {
        if (strcmp(words[i], "none") == 0 ||
            sshpath_identity_file(words[i], home, w->ssh_dir, w->host, file, sizeof file) < 0 ||
            strlen(file) >= sizeof w->out->known[0].file)
            continue;
        if (add_file(&w->out->known, &w->out->n_known, &w->out->cap_known, file, where, err) < 0)
            return -1;
    }
    return 0;
}

enum { SSHCONFIG_AGENT_WIDE = 65536 }; /* past any home folder and value a config holds */

/* An IdentityAgent line that applies to the host (sshconfig.h): libssh takes the first one's
 * value as a socket path, ~ expanded (ssh_options_set: an empty value, or one whose ~user is
 * unknown, leaves none, and $SSH_AUTH_SOCK is asked). Under a Match exec block it took effect
 * only if the command succeeded (libssh marks the keyword seen only then): a candidate, and
 * the lines after it still count. */
static void agent_line(Walk *w, const char *arg, const char *where)
{
    SshconfigHostFiles *out = w->out;
    if (out->agent_final || out->agent_unknown)
        return;
    SshconfigFile *slot = &out->agent;
    if (w->applies == SSHMATCH_MAYBE) {
        if (out->n_agent_maybe == SSHCONFIG_AGENT_MAYBE) {
            out->agent_unknown = 1;
            return;
        }
        SshconfigMaybe *c = &out->agent_maybe_if[out->n_agent_maybe];
        *c = (SshconfigMaybe){.why = w->applies_why, .match = w->block_match};
        snprintf(c->block, sizeof c->block, "%s", w->block_at);
        snprintf(c->hostname, sizeof c->hostname, "%s", w->match->host_maybe_at);
        snprintf(c->user, sizeof c->user, "%s", w->match->user_unknown_at);
        slot = &out->agent_maybe[out->n_agent_maybe++];
    } else
        out->agent_final = 1;
    slot->file[0] = 0;
    snprintf(slot->where, sizeof slot->where, "%s", where);
    if (!arg || !arg[0])
        return;
    if (sshpath_tilde(arg, NULL, slot->file, sizeof slot->file) < 0) {
        slot->file[0] = 0;
        /* an unknown ~user leaves none; a value, or its expansion, too long to keep here is
         * still asked (libssh has no such limit): which agent answered is not known */
        char *wide = malloc(SSHCONFIG_AGENT_WIDE);
        out->agent_unknown = strlen(arg) >= sizeof slot->file - 1 || !wide ||
                             sshpath_tilde(arg, NULL, wide, SSHCONFIG_AGENT_WIDE) == 0;
        free(wide);
    }
}

/* The user a HostName value sets, into user ("" none). libssh 0.10.6 expands the value
 * (ssh_path_expand_escape, with the host and user it holds at that line; the raw value when
 * that fails) and hands it to SSH_OPTIONS_HOST, which reads `user@host` as a user and a host
 * (ssh_config_parse_uri): a later `Match user` sees that user, and a User line after it is
 * skipped. OpenSSH does not split it (it resolves "user@host" and fails), so this follows
 * libssh, which connects. libssh itself reads the value, on a session of its own: which
 * values it takes (no port, a valid host name, a non-empty user) is its rule, not a copy. */
static void hostname_user(const Walk *w, const char *arg, char *user, size_t cap)
{
    char home[1024], expanded[2048];
    SshpathHost at = {w->match->alias, w->match->user[0] ? w->match->user : NULL,
                      w->host ? w->host->port : 0};
    if (ownpath_folder(w->ssh_dir, home, sizeof home) < 0 ||
        sshpath_identity_file(arg, home, w->ssh_dir, &at, expanded, sizeof expanded) < 0)
        snprintf(expanded, sizeof expanded, "%s", arg);
    if (!strchr(expanded, '@'))
        return;
    ssh_session probe = ssh_new();
    char *got = NULL;
    if (probe && ssh_options_set(probe, SSH_OPTIONS_HOST, expanded) == 0 &&
        ssh_options_get(probe, SSH_OPTIONS_USER, &got) == SSH_OK && got)
        snprintf(user, cap, "%s", got);
    ssh_string_free_char(got);
    ssh_free(probe);
}

/* Libssh's verdict on a Host or Match line, and what a HostName or User line changes in what
 * later ones match (sshmatch.h). 0, 1 when libssh refuses the line and stops the file, -1
 * (err set, `where` the file:line) when what libssh does cannot be known here. */
static int follow_block(Walk *w, const char *keyword, const char *const *words, size_t n,
                        const char *where, Error *err)
{
    int host = strcasecmp(keyword, "host") == 0, match = strcasecmp(keyword, "match") == 0;
    if (host || match) {
        w->block_match = match;
        snprintf(w->block_at, sizeof w->block_at, "%s", where);
    }
    if (host)
        w->applies = sshmatch_host(w->match, words, n, &w->applies_why);
    else if (match) {
        w->applies = sshmatch_match(w->match, words, n, &w->applies_why);
        if (w->applies == SSHMATCH_ERROR) {
            w->applies = SSHMATCH_NO; /* libssh set it so before it refused the line */
            return 1;
        }
    } else if (strcasecmp(keyword, "hostname") == 0) {
        char user[256] = "";
        if (n && w->applies != SSHMATCH_NO && !w->match->hostname_seen)
            hostname_user(w, words[0], user, sizeof user);
        if (user[0] && w->applies == SSHMATCH_MAYBE) {
            /* Whether the user changes hangs on a command libssh runs and tunedeck does not
             * run twice: every later `Match user` would be a guess. */
            error_set(err,
                      "%s: HostName %s sets the user %s (libssh reads user@host as a user and "
                      "a host) under a Match exec block: whether later Match user lines see "
                      "it depends on that command, so tunedeck cannot tell which IdentityFile "
                      "keys libssh would offer; refused: give the user in a User line, or the "
                      "inventory's ssh.user, and HostName the host alone",
                      where, words[0], user);
            return error_mark(err, ERROR_INPUT);
        }
        sshmatch_hostname(w->match, w->applies, n ? words[0] : NULL, user[0] ? user : NULL, where);
    } else if (strcasecmp(keyword, "user") == 0)
        sshmatch_user(w->match, w->applies, n ? words[0] : NULL, where);
    return 0;
}

/* Every line of one file: its Include lines followed, its algorithm lines checked whichever
 * Host or Match block they are in, since libssh may apply any to some host; in a per-host
 * walk, its IdentityFile lines checked where they apply to that host, and its Includes
 * followed only there, as libssh follows them. */
static int check_lines(Walk *w, FILE *f, const char *path, int depth, Error *err)
{
    char line[1024]; /* libssh's MAX_LINE_SIZE: it reads a longer line as several */
    int rc = 0, at_start = 1;
    long lineno = 0, block_line = 0;
    char block[120] = ""; /* the Host or Match line the lines below are under */
    while (rc == 0 && fgets(line, sizeof line, f)) {
        lineno += at_start;
        size_t len = strlen(line);
        at_start = len && line[len - 1] == '\n';
        while (len && strchr(" \t\r\n\f\v", line[len - 1]))
            line[--len] = 0; /* libssh trims trailing blanks first */
        char raw[sizeof line];
        snprintf(raw, sizeof raw, "%s", line + strspn(line, " \t"));
        char *s = line;
        const char *keyword = config_token(&s);
        if (!keyword || keyword[0] == '#')
            continue;
        if (strcasecmp(keyword, "host") == 0 || strcasecmp(keyword, "match") == 0) {
            snprintf(block, sizeof block, "%.100s%s", raw, strlen(raw) > 100 ? "..." : "");
            block_line = lineno;
        }
        const char *words[sizeof line / 2];
        size_t n = 0;
        while (n < sizeof words / sizeof *words && (words[n] = config_token(&s)))
            n++;
        const char *arg = n ? words[0] : NULL;
        char at[2100];
        snprintf(at, sizeof at, "%s:%ld", path, lineno);
        int follow = w->match ? follow_block(w, keyword, words, n, at, err) : 0;
        if (follow < 0) {
            rc = -1;
            break;
        }
        if (follow)
            break; /* libssh reads no more of this file; the one that included it reads on */
        if (strcasecmp(keyword, "identityfile") == 0) {
            if (w->host && w->applies != SSHMATCH_NO)
                rc = identity_line(w, arg, at, err);
            continue;
        }
        if (strcasecmp(keyword, "revokedhostkeys") == 0) {
            if (w->host && w->applies != SSHMATCH_NO)
                rc = revoked_line(w, arg, at, err);
            continue;
        }
        if (strcasecmp(keyword, "userknownhostsfile") == 0 ||
            strcasecmp(keyword, "globalknownhostsfile") == 0) {
            if (w->host && w->applies != SSHMATCH_NO)
                rc = known_line(w, words, n,
                                keyword[0] == 'u' || keyword[0] == 'U'
                                    ? &w->out->user_known_final
                                    : &w->out->global_known_final,
                                at, err);
            continue;
        }
        if (strcasecmp(keyword, "identityagent") == 0) {
            if (w->host && w->applies != SSHMATCH_NO)
                agent_line(w, arg, at);
            continue;
        }
        if (strcasecmp(keyword, "hashknownhosts") == 0) {
            if (w->host && w->applies != SSHMATCH_NO && !w->out->hash_known_final) {
                if (arg && strcasecmp(arg, "yes") == 0)
                    w->out->hash_known_hosts = 1;
                w->out->hash_known_final = w->applies == SSHMATCH_YES;
            }
            continue;
        }
        if (strcasecmp(keyword, "include") != 0) {
            /* One weak line refuses the file: say which block holds it, since the
             * operator may not know that one host's legacy block stops them all. */
            if (sshalgos_check_line(keyword, arg, err) < 0) {
                if (block_line)
                    rc = error_prefix(err, "%s:%ld, in \"%s\" (line %ld)", path, lineno, block,
                                      block_line);
                else
                    rc = error_prefix(err, "%s:%ld, before any Host or Match line", path, lineno);
            }
            continue;
        }
        if (!arg || (w->match && w->applies == SSHMATCH_NO))
            continue;
        /* ssh_config_make_absolute's order: a global file's relative name, "~/x" too, is
         * under /etc/ssh; ~ (the password database's home, ~user's) is expanded before the
         * glob, which then sees no ~ (glob's own would take $HOME); no % is expanded. */
        char pattern[2048];
        if (arg[0] == '/')
            snprintf(pattern, sizeof pattern, "%s", arg);
        else if (w->global)
            snprintf(pattern, sizeof pattern, "/etc/ssh/%s", arg);
        else if (arg[0] == '~') {
            /* ssh_dir is libssh's ~/.ssh: its parent is the same home */
            char home[1024];
            if (ownpath_folder(w->ssh_dir, home, sizeof home) < 0 ||
                sshpath_tilde(arg, home, pattern, sizeof pattern) < 0)
                continue; /* libssh reads nothing either */
        } else
            snprintf(pattern, sizeof pattern, "%s/%s", w->ssh_dir, arg);
        if (check_include_folder(pattern, err) < 0) {
            rc = error_prefix(err, "%s includes %s", path, arg);
            break;
        }
        glob_t g;
        if (glob(pattern, GLOB_TILDE, NULL, &g) != 0)
            continue; /* nothing there: libssh reads nothing either */
        for (size_t i = 0; rc == 0 && i < g.gl_pathc; i++)
            rc = check_file(w, g.gl_pathv[i], path, depth + 1, err);
        globfree(&g);
    }
    return rc;
}

/* One path (a file, or the folder one is in: whoever can write that can put another file
 * in its place; a sticky folder such as /tmp may be shared). */
static int check_one(const char *path, const char *what, const char *included, int allow,
                     Error *err)
{
    OwnpathCheck c = ownpath_check(path, OWNPATH_ROOT_OK | allow);
    char label[4200];
    snprintf(label, sizeof label, "the ssh configuration %s %s%s", what, path, included);
    if (ownpath_refused(&c, label,
                        "make tunedeck run commands as you (Match exec) or connect elsewhere",
                        err) == 0)
        return 0;
    return error_mark(err, ERROR_INPUT);
}

/* The file and its folder, and where a link points, file and folder, as for known_hosts. */
static int check_trusted(const char *path, const char *included, Error *err)
{
    char dir[4096];
    char *real = realpath(path, NULL);
    int rc = check_one(path, "file", included, 0, err);
    if (rc == 0 && ownpath_folder(path, dir, sizeof dir) == 0)
        rc = check_one(dir, "folder", included, OWNPATH_STICKY_OK, err);
    if (rc == 0 && real && strcmp(real, path) != 0) {
        rc = check_one(real, "file", included, 0, err);
        if (rc == 0 && ownpath_folder(real, dir, sizeof dir) == 0)
            rc = check_one(dir, "folder", included, OWNPATH_STICKY_OK, err);
    }
    free(real);
    return rc;
}

static int check_file(Walk *w, const char *path, const char *by, int depth, Error *err)
{
    if (depth > MAX_INCLUDE_DEPTH)
        return 0; /* libssh stops there too */
    char included[1100] = "";
    if (by)
        snprintf(included, sizeof included, " (included by %s)", by);
    /* libssh skips what it cannot open, and reads a folder or /dev/null as nothing; but it
     * opens a FIFO without O_NONBLOCK (~/.ssh/config, an Include), and that open blocked
     * the whole loop forever. */
    const char *blocks = file_would_block(path);
    if (blocks) {
        error_set(err,
                  "the ssh configuration file %s%s is %s: libssh would wait forever to read "
                  "it; refused",
                  path, included, blocks);
        return error_mark(err, ERROR_INPUT);
    }
    int fd = open(path, O_RDONLY | O_NONBLOCK | O_CLOEXEC);
    struct stat st;
    if (fd < 0 || fstat(fd, &st) < 0 || !S_ISREG(st.st_mode)) {
        if (fd >= 0)
            close(fd);
        return 0;
    }
    if (check_trusted(path, included, err) < 0) {
        close(fd);
        return -1;
    }
    FILE *f = fdopen(fd, "r");
    if (!f) {
        close(fd);
        return 0;
    }
    int rc = check_lines(w, f, path, depth, err);
    fclose(f);
    return rc;
}

int sshconfig_check_trusted(const char *path, const char *ssh_dir, Error *err)
{
    /* libssh reads Include paths of the global file relative to /etc/ssh, all others
     * relative to ~/.ssh, and knows the global file by its name alone. */
    Walk w = {.ssh_dir = ssh_dir, .global = strcmp(path, GLOBAL_CONFIG) == 0};
    return check_file(&w, path, NULL, 0, err);
}

void sshconfig_host_files_free(SshconfigHostFiles *f)
{
    free(f->ids);
    free(f->revoked);
    free(f->known);
    *f = (SshconfigHostFiles){0};
}

int sshconfig_host_files(const char *path, const char *ssh_dir, const SshpathHost *host,
                         SshmatchHost *match, SshconfigHostFiles *out, Error *err)
{
    Walk w = {.ssh_dir = ssh_dir,
              .global = strcmp(path, GLOBAL_CONFIG) == 0,
              .host = host,
              .match = match,
              .applies = SSHMATCH_YES, /* each file libssh is given starts so */
              .out = out};
    return check_file(&w, path, NULL, 0, err);
}
