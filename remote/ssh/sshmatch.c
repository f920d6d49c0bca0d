/* Host and Match blocks as libssh 0.10.6 decides them (sshmatch.h). */
#include "remote/ssh/sshmatch.h"

#include <ctype.h>
#include <pwd.h>
#include <stdio.h>
#include <string.h>
#include <strings.h>
#include <unistd.h>

enum { MATCH_SUB = 1024 }; /* libssh's subpattern buffer: a longer one fails the whole list */

/* match_pattern as Debian's libssh 0.10.6 has it (CVE-2026-0967 made it iterative): `*` any
 * run, `?` one character, the rest itself, tried in that order (so a '*' in the string is
 * first taken as itself); a mismatch goes back to the last '*' only. */
static int pattern(const char *s, const char *p)
{
    const char *s_star = NULL, *p_star = NULL;
    if (!s || !p)
        return 0;
    while (*s) {
        if (*p == *s || *p == '?') {
            s++;
            p++;
        } else if (*p == '*') {
            p_star = ++p;
            s_star = s;
        } else if (p_star) {
            p = p_star;
            s = ++s_star;
        } else
            return 0;
    }
    while (*p == '*')
        p++;
    return !*p;
}

int sshmatch_list(const char *s, const char *list, int lower)
{
    int positive = 0;
    size_t len = strlen(list), i = 0;
    while (i < len) {
        int negated = list[i] == '!';
        i += (size_t)negated;
        char sub[MATCH_SUB];
        size_t k = 0;
        for (; i < len && k < sizeof sub - 1 && list[i] != ','; i++, k++)
            sub[k] = lower ? (char)tolower((unsigned char)list[i]) : list[i];
        if (k >= sizeof sub - 1)
            return 0;
        if (i < len && list[i] == ',')
            i++;
        sub[k] = 0;
        if (pattern(s, sub)) {
            if (negated)
                return -1;
            positive = 1;
        }
    }
    return positive;
}

void sshmatch_begin(SshmatchHost *h, const char *alias, const char *target, const char *user)
{
    memset(h, 0, sizeof *h);
    h->alias = alias;
    h->target = target;
    snprintf(h->user, sizeof h->user, "%s", user ? user : "");
}

/* The host libssh holds at this line: a HostName line that applied replaced it. */
static const char *current_host(const SshmatchHost *h)
{
    return h->host_replaced && h->target ? h->target : h->alias;
}

/* One Host line against one host name. */
static int host_line(const char *host, const char *const *words, size_t n)
{
    char lower[1024];
    if (!host)
        return SSHMATCH_NO;
    size_t i = 0;
    for (; i < sizeof lower - 1 && host[i]; i++)
        lower[i] = (char)tolower((unsigned char)host[i]);
    lower[i] = 0;
    /* libssh's loop: the first word that matches, positively or negated, decides; a negated
     * match stops it, a positive one does not (so a later negation is never seen). */
    for (size_t w = 0; w < n; w++) {
        int ok = sshmatch_list(lower, words[w], 1);
        if (ok)
            return ok > 0 ? SSHMATCH_YES : SSHMATCH_NO;
    }
    return SSHMATCH_NO;
}

/* Whether the host may be either alias or target (a HostName under a Match exec block). */
static int host_uncertain(const SshmatchHost *h)
{
    return h->host_maybe && !h->host_replaced && h->target;
}

/* Two verdicts for the two hosts it may be: the same, or MAYBE. */
static int either(int a, int b)
{
    return a == b ? a : SSHMATCH_MAYBE;
}

int sshmatch_host(const SshmatchHost *h, const char *const *words, size_t n, unsigned *why)
{
    int v = host_line(current_host(h), words, n);
    if (host_uncertain(h))
        v = either(v, host_line(h->target, words, n));
    if (why)
        *why = v == SSHMATCH_MAYBE ? SSHMATCH_BY_HOST : 0;
    return v;
}

/* ssh_config_match: one criterion's verdict, '!' turning it over. */
static int criterion(const char *value, const char *list, int negate)
{
    int ok = sshmatch_list(value, list, 0) > 0;
    return ok != negate ? SSHMATCH_YES : SSHMATCH_NO;
}

/* libssh's `result &= x`, with MAYBE between NO and YES. */
static int both(int a, int b)
{
    if (a == SSHMATCH_NO || b == SSHMATCH_NO)
        return SSHMATCH_NO;
    return a == SSHMATCH_MAYBE || b == SSHMATCH_MAYBE ? SSHMATCH_MAYBE : SSHMATCH_YES;
}

static int match_why(const SshmatchHost *h, const char *const *words, size_t n, unsigned *why);

int sshmatch_match(const SshmatchHost *h, const char *const *words, size_t n, unsigned *why)
{
    unsigned by = 0;
    int v = match_why(h, words, n, &by);
    if (why)
        *why = v == SSHMATCH_MAYBE ? by : 0;
    return v;
}

/* sshmatch_match, with every criterion that gave a MAYBE in *why. */
static int match_why(const SshmatchHost *h, const char *const *words, size_t n, unsigned *why)
{
    int result = SSHMATCH_YES;
    size_t args = 0;
    for (size_t w = 0; w < n; w++) {
        const char *p = words[w];
        args++;
        int negate = p[0] == '!';
        p += negate;
        if (strcasecmp(p, "all") == 0) {
            /* alone, or after one canonical or final word */
            if (args > 2 || w + 1 < n)
                return SSHMATCH_ERROR;
            return negate ? SSHMATCH_NO : result;
        }
        if (strcasecmp(p, "canonical") == 0 || strcasecmp(p, "final") == 0)
            continue; /* unsupported by libssh 0.10.6: no effect */
        int known = strcasecmp(p, "exec") == 0 || strcasecmp(p, "localuser") == 0 ||
                    strcasecmp(p, "originalhost") == 0 || strcasecmp(p, "host") == 0 ||
                    strcasecmp(p, "user") == 0;
        if (!known || w + 1 >= n)
            return SSHMATCH_ERROR; /* unknown, or no argument */
        const char *arg = words[++w];
        if (strcasecmp(p, "exec") == 0) {
            if (result == SSHMATCH_NO)
                continue; /* libssh skips the command, and does not count its argument */
            result = SSHMATCH_MAYBE;
            *why |= SSHMATCH_BY_EXEC;
        } else if (strcasecmp(p, "localuser") == 0) {
            const struct passwd *me = getpwuid(getuid());
            if (!me || !me->pw_name)
                return SSHMATCH_ERROR;
            result = both(result, criterion(me->pw_name, arg, negate));
        } else if (strcasecmp(p, "originalhost") == 0) {
            result = SSHMATCH_NO; /* unsupported by libssh 0.10.6: never, even negated */
        } else if (strcasecmp(p, "host") == 0) {
            int v = criterion(current_host(h), arg, negate);
            if (host_uncertain(h))
                v = either(v, criterion(h->target, arg, negate));
            if (v == SSHMATCH_MAYBE)
                *why |= SSHMATCH_BY_HOST;
            result = both(result, v);
        } else if (h->user_unknown) {
            result = both(result, SSHMATCH_MAYBE);
            *why |= SSHMATCH_BY_USER;
        } else {
            result = both(result, criterion(h->user[0] ? h->user : NULL, arg, negate));
        }
        args++;
    }
    return args ? result : SSHMATCH_ERROR;
}

void sshmatch_hostname(SshmatchHost *h, int applies, const char *arg, const char *user,
                       const char *where)
{
    if (applies == SSHMATCH_NO || h->hostname_seen)
        return;
    /* Under a Match exec: if the command failed, libssh neither set the host nor marked the
     * keyword seen, and a later HostName may be the one. Either way the value libssh kept is
     * target: only when it took effect is unknown. */
    if (applies == SSHMATCH_MAYBE) {
        if (arg && !h->host_maybe)
            snprintf(h->host_maybe_at, sizeof h->host_maybe_at, "%s", where ? where : "?");
        h->host_maybe |= arg != NULL;
        if (user && !h->user_unknown)
            snprintf(h->user_unknown_at, sizeof h->user_unknown_at, "%s", where ? where : "?");
        h->user_unknown |= user != NULL; /* sshconfig.c refuses this case before it comes here */
        return;
    }
    if (user) /* `HostName user@host`: libssh replaces the user it holds, whatever it was */
        snprintf(h->user, sizeof h->user, "%s", user);
    /* libssh marks the keyword seen even with no value; the value it sets is the target the
     * parse ended with (a value libssh could not take left the host as it was, and so is
     * the target). */
    h->hostname_seen = 1;
    h->host_replaced = arg != NULL;
}

void sshmatch_user(SshmatchHost *h, int applies, const char *arg, const char *where)
{
    if (applies == SSHMATCH_NO || h->user_seen)
        return;
    /* Under a Match exec, the user libssh holds from here on is this one or a later line's
     * (or none): unknown, unless one was set before, which libssh never replaces. */
    if (applies == SSHMATCH_MAYBE) {
        if (!h->user[0] && !h->user_unknown)
            snprintf(h->user_unknown_at, sizeof h->user_unknown_at, "%s", where ? where : "?");
        h->user_unknown |= !h->user[0];
        return;
    }
    h->user_seen = 1;
    if (arg && !h->user[0])
        snprintf(h->user, sizeof h->user, "%s", arg);
}
