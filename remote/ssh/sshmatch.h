/* Which Host and Match blocks of an ssh configuration libssh 0.10.6 applies to one host, decided
 * as its parser decides (src/config.c, src/match.c), quirks included: what tunedeck checks and
 * offers from a config (its IdentityFile keys) is then what libssh would hold for that host. */
#ifndef TUNEDECK_SSHMATCH_H
#define TUNEDECK_SSHMATCH_H

#include <stddef.h>

/* A block's verdict. MAYBE: a `Match exec` that tunedeck does not run a second time (libssh
 * runs it while it parses, and a command may have effects); its block is taken as applying,
 * which checks more, never less. ERROR: libssh refuses the line and stops reading the file. */
enum { SSHMATCH_NO = 0, SSHMATCH_YES = 1, SSHMATCH_MAYBE = 2, SSHMATCH_ERROR = -1 };

/* Why a verdict is MAYBE, bits: a `Match exec` word; a host that may be either of two (a
 * HostName under a MAYBE block, host_maybe_at); a user not known (a User line under one,
 * user_unknown_at). A failed login names these (authwords.h). */
enum { SSHMATCH_BY_EXEC = 1, SSHMATCH_BY_HOST = 2, SSHMATCH_BY_USER = 4 };

/* What libssh matches against while it parses the files for one host. It lasts over every
 * file of one parse (libssh's user config, then the global one), as libssh's session does. */
typedef struct {
    const char *alias;  /* the host libssh was given, before any HostName line */
    const char *target; /* the host once parsed (SSH_OPTIONS_HOST after the parse) */
    char user[256];     /* the user libssh holds so far; "" none yet */
    int hostname_seen;  /* a HostName line applied: later ones are skipped */
    int host_replaced;  /* ...with a value: from there on, the host is target */
    int user_seen;      /* a User line applied: later ones are skipped, as libssh skips them */
    /* A HostName or User line under a Match exec block (MAYBE) applied only if the command
     * succeeded when libssh ran it: from there on the host is alias or target, and the user
     * unknown, and a line matching them is MAYBE where the two ways differ. */
    int host_maybe;
    int user_unknown;
    char host_maybe_at[1100];   /* config:line of the HostName that made host_maybe */
    char user_unknown_at[1100]; /* config:line of the User line that made user_unknown */
} SshmatchHost;

/* The state before the first file: alias and target are kept (not copied), user may be NULL. */
void sshmatch_begin(SshmatchHost *h, const char *alias, const char *target, const char *user);

/* match_pattern_list: `s` against a comma-separated list of patterns (`*`, `?`, `!` before
 * one to negate), `lower` lowering the patterns (Host lines). -1 when a negated one matches,
 * 1 when a plain one does, else 0. A NULL `s` matches nothing. */
int sshmatch_list(const char *s, const char *list, int lower);

/* A "Host" line's words after the keyword, n of them: SSHMATCH_YES or NO (MAYBE where the
 * host may be either of two, sshmatch_hostname). *why (when not NULL): the SSHMATCH_BY_* bits
 * of a MAYBE, 0 else; the same for sshmatch_match. libssh 0.10.6 takes
 * the first word that matches either way: `Host * !b` applies to b, `Host *,!b` does not. */
int sshmatch_host(const SshmatchHost *h, const char *const *words, size_t n, unsigned *why);

/* A "Match" line's words: all, canonical and final (no effect), host, user, localuser,
 * originalhost (never, in 0.10.6), exec (MAYBE), each negatable with '!'. */
int sshmatch_match(const SshmatchHost *h, const char *const *words, size_t n, unsigned *why);

/* A HostName or User line (`arg` its value, NULL none) under a block whose verdict is
 * `applies`: the first that applies is the one libssh keeps. `user`: the user part libssh
 * reads in a HostName `user@host` (sshconfig.c asks libssh), NULL none; it replaces the user
 * held so far, so later `Match user` lines see it and User lines are skipped. Under a MAYBE
 * block the line may or may not have applied, and what it sets is then matched both ways;
 * `where`, its config:line, is kept to say so (host_maybe_at, user_unknown_at). */
void sshmatch_hostname(SshmatchHost *h, int applies, const char *arg, const char *user,
                       const char *where);
void sshmatch_user(SshmatchHost *h, int applies, const char *arg, const char *where);

#endif
