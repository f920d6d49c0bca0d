/* Names the failed rank that caused a trial's failure before its lost peers (rankcause.h). */
#include "remote/launch/rankcause.h"

#include <stdlib.h>
#include <string.h>

#include "core/model/peerloss.h"

/* What a rank said in its error events. */
enum { SAID_NOTHING, SAID_LOST_PEER, SAID_CAUSE };

/* Memory follows the schedule, never the numbers a trial sends (observation.c): one byte per
 * rank of the world, so a trial that names ranks beyond it (a bug, or a user's own numbering)
 * costs nothing and every lookup is an index. */
struct RankCause {
    unsigned char *said;
    size_t world;
};

RankCause *rankcause_new(size_t world)
{
    RankCause *c = calloc(1, sizeof *c);
    if (c && !(c->said = calloc(world ? world : 1, 1))) {
        free(c);
        return NULL;
    }
    if (c)
        c->world = world;
    return c;
}

void rankcause_free(RankCause *c)
{
    if (!c)
        return;
    free(c->said);
    free(c);
}

/* "rank 3 ..." followed by `after` ("on " of an event, "(" of a notice): 3; else -1. */
static long leading_rank(const char *text, const char *after)
{
    if (!text || strncmp(text, "rank ", 5) != 0 || text[5] < '0' || text[5] > '9')
        return -1;
    char *end;
    long rank = strtol(text + 5, &end, 10);
    return *end == ' ' && strncmp(end + 1, after, strlen(after)) == 0 ? rank : -1;
}

long rankcause_notice_rank(const char *who)
{
    return leading_rank(who, "(");
}

/* What rank `rank` said; SAID_NOTHING for one outside the world or with nothing known. */
static int said_of(const RankCause *c, long rank)
{
    return c && rank >= 0 && (size_t)rank < c->world ? c->said[rank] : SAID_NOTHING;
}

void rankcause_event(RankCause *c, const char *text)
{
    long rank = leading_rank(text, "on ");
    if (!c || rank < 0 || (size_t)rank >= c->world)
        return;
    /* a cause said once stays one */
    if (c->said[rank] != SAID_CAUSE)
        c->said[rank] = peerloss_said(text) ? SAID_LOST_PEER : SAID_CAUSE;
}

/* Whether error event `event` ("rank 0 on h1: ...") is of the host notice `notice` names
 * ("rank 0 (h1 gpu0) exited ..."): a rank number alone is not enough, since a user's script
 * that numbers its ranks per host (LOCAL_RANK) has a "rank 0" on every host. The host is what
 * stands between "rank N (" and the last space before the ")" that ends before " exited with
 * status", read from that end since a host may hold a parenthesis (gpu(1)) or a space. A
 * notice cut short (first_failed's 160 bytes) before that ")" still names its host when the
 * event's host is followed there by a space. */
static int same_host(const char *event, const char *notice)
{
    const char *host = strchr(notice, '(');
    const char *on = strstr(event, " on ");
    if (!host || !on)
        return 0;
    host++;
    const char *ev = on + 4;
    const char *tail = NULL;
    for (const char *t = host; (t = strstr(t, ") exited with status")) != NULL; t++)
        tail = t;
    if (!tail) {
        size_t len = 0;
        while (host[len] && host[len] == ev[len])
            len++;
        return len > 0 && host[len] == ' ' && ev[len] == ':';
    }
    const char *end = tail;
    while (end > host && end[-1] != ' ')
        end--;
    if (end == host)
        return 0;
    size_t len = (size_t)(end - 1 - host);
    return len > 0 && strncmp(ev, host, len) == 0 && ev[len] == ':';
}

size_t rankcause_first(const RankCause *c, const char *const *notices, size_t n,
                       const char *error_event)
{
    long cause = error_event && !peerloss_said(error_event) ? leading_rank(error_event, "on ") : -1;
    for (size_t i = 0; cause >= 0 && i < n; i++)
        if (rankcause_notice_rank(notices[i]) == cause && same_host(error_event, notices[i]))
            return i;
    for (size_t i = 0; i < n; i++) {
        if (said_of(c, rankcause_notice_rank(notices[i])) != SAID_LOST_PEER)
            return i;
    }
    return 0;
}
