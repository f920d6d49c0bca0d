/* A sweep's line for a host that did not answer (remote/session/sweep_unchecked.h). */
#include "remote/session/sweep_unchecked.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "remote/ssh/shquote.h"

/* A word an operator pastes into a shell: as it is when no byte of it means anything to the
 * shell, else single-quoted, so an IPv6 address's brackets are not a glob. */
static int append_word(char **buf, size_t *len, const char *word)
{
    int plain = word[0] != 0;
    for (const char *c = word; *c; c++)
        plain &= (*c >= 'a' && *c <= 'z') || (*c >= 'A' && *c <= 'Z') || (*c >= '0' && *c <= '9') ||
                 strchr("@%+=:,./_-", *c) != NULL;
    return plain ? shquote_append_raw(buf, len, word) : shquote_append(buf, len, word);
}

static int append_fmt_long(char **buf, size_t *len, const char *fmt, long v)
{
    char text[64];
    snprintf(text, sizeof text, fmt, v);
    return shquote_append_raw(buf, len, text);
}

/* "ssh [-l USER] [-p PORT] HOST kill -KILL -- -P1 -P2": the pool's own login, so the command
 * reaches the host the stop could not. */
static int append_command(char **buf, size_t *len, const OrphanList *l, const char *machine,
                          const HostInfo *host)
{
    int rc = shquote_append_raw(buf, len, "ssh ");
    if (host && host->user && host->user[0]) {
        rc |= shquote_append_raw(buf, len, "-l ");
        rc |= append_word(buf, len, host->user);
        rc |= shquote_append_raw(buf, len, " ");
    }
    if (host && host->port > 0 && host->port != 22)
        rc |= append_fmt_long(buf, len, "-p %ld ", (long)host->port);
    rc |= append_word(buf, len, host && host->host && host->host[0] ? host->host : machine);
    rc |= shquote_append_raw(buf, len, " kill -KILL --");
    for (size_t i = 0; i < l->n; i++)
        if (!l->items[i].seen_end && strcmp(l->items[i].machine, machine) == 0)
            rc |= append_fmt_long(buf, len, " -%ld", l->items[i].pgid);
    return rc;
}

char *sweep_unchecked_line(const OrphanList *l, const char *machine, const HostInfo *host,
                           const char *label, const char *why)
{
    char *buf = NULL;
    size_t len = 0, n = 0;
    char head[1024];
    snprintf(head, sizeof head, "%s on %s: not checked (%s did not answer: %s); ", label, machine,
             machine, why);
    int rc = shquote_append_raw(&buf, &len, head);
    for (size_t i = 0; i < l->n; i++)
        n += !l->items[i].seen_end && strcmp(l->items[i].machine, machine) == 0;
    if (n == 0) /* a safety check only: nothing there is known to run */
        rc |= shquote_append_raw(&buf, &len,
                                 "every process group there was seen to end with "
                                 "its trial");
    int last_trial = 0;
    size_t said = 0;
    for (size_t i = 0; i < l->n; i++) {
        const Orphan *o = &l->items[i];
        if (o->seen_end || strcmp(o->machine, machine) != 0)
            continue;
        char part[96];
        if (said == 0)
            snprintf(part, sizeof part, "trial %d's process group%s %ld", o->trial,
                     n > 1 ? "s" : "", o->pgid);
        else if (o->trial == last_trial)
            snprintf(part, sizeof part, ", %ld", o->pgid);
        else
            snprintf(part, sizeof part, ", trial %d's %ld", o->trial, o->pgid);
        rc |= shquote_append_raw(&buf, &len, part);
        last_trial = o->trial;
        said++;
    }
    if (n > 0) {
        rc |= shquote_append_raw(&buf, &len,
                                 n > 1 ? " may still run: stop them by hand with: "
                                       : " may still run: stop it by hand with: ");
        rc |= append_command(&buf, &len, l, machine, host);
    }
    if (rc < 0) {
        free(buf);
        return NULL;
    }
    return buf;
}
