/* Names the failed rank that caused a trial's failure before its lost peers (rankcause.h). */
#include "remote/launch/rankcause.h"

#include <stdlib.h>
#include <string.h>

#include "core/model/peerloss.h"

/* What a rank said in its error events, in this order: a cause outweighs a lost peer. */
enum { SAID_NOTHING, SAID_LOST_PEER, SAID_CAUSE };

/* What each rank said on each host of the schedule: keyed by both, since a script that numbers
 * its ranks per host (LOCAL_RANK) has a "rank 0" on every host, and only a rank's words on its
 * own host are its own. Memory follows the schedule, never the numbers or hosts a trial sends
 * (observation.c): one byte per rank of the world and host, fixed when made, and an event of a
 * rank beyond the world or of a host that is no machine of the schedule (a trial's own flood)
 * is not kept and pushes nothing out. */
struct RankCause {
    size_t world, nhosts;
    char **host; /* the schedule's machine names, each with ':' after it: an event's "h1:" */
    unsigned char *said; /* [rank * nhosts + host index] */
};

RankCause *rankcause_new(size_t world, const char *const *hosts, size_t nhosts)
{
    RankCause *c = calloc(1, sizeof *c);
    if (!c)
        return NULL;
    c->world = world;
    size_t cells = world * nhosts;
    if ((nhosts && cells / nhosts != world) || !(c->said = calloc(cells ? cells : 1, 1)) ||
        !(c->host = calloc(nhosts ? nhosts : 1, sizeof *c->host))) {
        rankcause_free(c);
        return NULL;
    }
    for (; c->nhosts < nhosts; c->nhosts++) {
        const char *h = hosts[c->nhosts] ? hosts[c->nhosts] : "";
        size_t len = strlen(h);
        char *copy = malloc(len + 2);
        if (!copy) {
            rankcause_free(c);
            return NULL;
        }
        memcpy(copy, h, len);
        copy[len] = ':';
        copy[len + 1] = '\0';
        c->host[c->nhosts] = copy;
    }
    return c;
}

void rankcause_free(RankCause *c)
{
    if (!c)
        return;
    for (size_t i = 0; c->host && i < c->nhosts; i++)
        free(c->host[i]);
    free(c->host);
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

/* Whether the ':' at ev[len] ends the host's name: followed by `after`, the helper's space in
 * an event ("a: ...") or the end of a stored "a:", since a name may hold ':' ("a:b: ..." and
 * the stored "a:b:" are not of host "a") or ": " (the stored "a: b:" is not "a"). */
static int name_ends(const char *ev, size_t len, char after)
{
    return ev[len] == ':' && ev[len + 1] == after;
}

/* Whether the host `ev` begins with, followed by ':' and `after` (an error event's text after
 * "rank 0 on ", "h1: ...", with ' '; a stored "h1:" with '\0'), is the host notice `notice` names
 * ("rank 0 (h1 gpu0) exited ..."): a rank number alone is not enough, since a user's script that
 * numbers its ranks per host (LOCAL_RANK) has a "rank 0" on every host. The host is what stands
 * between "rank N (" and the last space before the ")" that ends before " exited with status", read
 * from that end since a host may hold a parenthesis (gpu(1)) or a space. A notice cut short
 * (first_failed's 160 bytes) before that ")" still names its host when the event's host is followed
 * there by a space. */
static int host_is_notices(const char *ev, const char *notice, char after)
{
    const char *host = strchr(notice, '(');
    if (!host)
        return 0;
    host++;
    const char *tail = NULL;
    for (const char *t = host; (t = strstr(t, ") exited with status")) != NULL; t++)
        tail = t;
    if (!tail) {
        size_t len = 0;
        while (host[len] && host[len] == ev[len])
            len++;
        return len > 0 && host[len] == ' ' && name_ends(ev, len, after);
    }
    const char *end = tail;
    while (end > host && end[-1] != ' ')
        end--;
    if (end == host)
        return 0;
    size_t len = (size_t)(end - 1 - host);
    return len > 0 && strncmp(ev, host, len) == 0 && name_ends(ev, len, after);
}

/* The index of the host of `c` an event's text after "rank N on " ("h1: ...") is of;
 * c->nhosts for none. The stored "name:" must be followed by the helper's space, since "a:"
 * begins "a:b: ...". A name holding ": " may still begin another ("a" and "a: b"); the longest
 * is the event's, so one event is of one host. */
static size_t event_host(const RankCause *c, const char *ev)
{
    size_t best = c->nhosts, best_len = 0;
    for (size_t h = 0; h < c->nhosts; h++) {
        const char *name = c->host[h];
        size_t len = strlen(name);
        if (len > 1 && len > best_len && strncmp(ev, name, len) == 0 &&
            (ev[len] == ' ' || ev[len] == '\0')) {
            best = h;
            best_len = len;
        }
    }
    return best;
}

/* An error event's host ("rank 0 on h1: ..."), worked out once for all the notices it is held
 * to: `name` then ':' and `after`, as host_is_notices reads them; NULL for none. With the
 * schedule's hosts known (`c`), the event's host is the stored "name:" of the longest of them
 * that fits, and a notice must name that one: with machines "a" and "a: b", "rank 0 on a: b: ..."
 * begins like an event of "a" followed by its message, and is not a's. Without them (srun's
 * words), the event's own text after " on ": a host a notice names that it begins with,
 * followed by ": ", is the event's. */
typedef struct {
    const char *name;
    char after;
} EventHost;

static EventHost event_host_of(const RankCause *c, const char *event)
{
    const char *on = strstr(event, " on ");
    if (!on)
        return (EventHost){NULL, '\0'};
    if (!c)
        return (EventHost){on + 4, ' '};
    size_t h = event_host(c, on + 4);
    return h < c->nhosts ? (EventHost){c->host[h], '\0'} : (EventHost){NULL, '\0'};
}

/* Whether the event whose host is `eh` is of the host notice `notice` names. */
static int same_host(EventHost eh, const char *notice)
{
    return eh.name && host_is_notices(eh.name, notice, eh.after);
}

void rankcause_event(RankCause *c, const char *text)
{
    long rank = leading_rank(text, "on ");
    if (!c || rank < 0 || (size_t)rank >= c->world)
        return;
    /* the trial helper writes "rank 3 on n3: " before the message */
    const char *ev = strstr(text, " on ") + 4;
    unsigned char said = peerloss_said(text) ? SAID_LOST_PEER : SAID_CAUSE;
    unsigned char *row = c->said + (size_t)rank * c->nhosts;
    size_t h = event_host(c, ev);
    if (h < c->nhosts && row[h] != SAID_CAUSE) /* stays a cause */
        row[h] = said;
}

/* What the rank and host a notice names said; SAID_NOTHING with nothing known. Every host is
 * looked at, since a notice cut short names its host only in part: once per failed host as a
 * trial ends, never per event. */
static int said_of(const RankCause *c, const char *notice)
{
    long rank = rankcause_notice_rank(notice);
    if (!c || rank < 0 || (size_t)rank >= c->world)
        return SAID_NOTHING;
    const unsigned char *row = c->said + (size_t)rank * c->nhosts;
    int said = SAID_NOTHING;
    for (size_t h = 0; h < c->nhosts; h++)
        if (row[h] > said && host_is_notices(c->host[h], notice, '\0'))
            said = row[h];
    return said;
}

/* The i-th notice in `order` (NULL: in turn). */
static const char *nth(const char *const *notices, const size_t *order, size_t i)
{
    return notices[order ? order[i] : i];
}

/* rankcause_first over notices[order[0]], notices[order[1]], ... */
static size_t first_of(const RankCause *c, const char *const *notices, const size_t *order,
                       size_t n, const char *error_event)
{
    long cause = error_event && !peerloss_said(error_event) ? leading_rank(error_event, "on ") : -1;
    /* the event's host once, not once per notice: event_host looks at every host */
    EventHost eh = cause >= 0 ? event_host_of(c, error_event) : (EventHost){NULL, '\0'};
    for (size_t i = 0; cause >= 0 && i < n; i++)
        if (rankcause_notice_rank(nth(notices, order, i)) == cause &&
            same_host(eh, nth(notices, order, i)))
            return i;
    /* A fan-out names the rank that ended first on its host: a peer beside the crashed rank
     * whose all_reduce failed while the crashed rank was still on its way out may be the one
     * named. Its host is still the cause's. */
    for (size_t i = 0; cause >= 0 && i < n; i++)
        if (same_host(eh, nth(notices, order, i)))
            return i;
    for (size_t i = 0; i < n; i++) {
        if (said_of(c, nth(notices, order, i)) != SAID_LOST_PEER)
            return i;
    }
    return 0;
}

size_t rankcause_first(const RankCause *c, const char *const *notices, size_t n,
                       const char *error_event)
{
    return first_of(c, notices, NULL, n, error_event);
}

/* `leader`'s index, then every other part stamped in came[] in the order of its stamp. */
static size_t timeline(const unsigned *came, size_t n, size_t leader, size_t *order)
{
    size_t k = 0;
    order[k++] = leader;
    /* an insertion sort: a trial has a few hosts */
    for (size_t i = 0; i < n; i++) {
        if (i == leader || !came[i])
            continue;
        size_t at = k++;
        for (; at > 1 && came[order[at - 1]] > came[i]; at--)
            order[at] = order[at - 1];
        order[at] = i;
    }
    return k;
}

size_t rankcause_order(const RankCause *c, const char *const *notices, const unsigned *came,
                       size_t n, size_t ended_first, const char *error_event, size_t *order)
{
    if (ended_first >= n)
        return 0;
    size_t k = timeline(came, n, ended_first, order);
    size_t leader = order[first_of(c, notices, order, k, error_event)];
    return leader == ended_first ? k : timeline(came, n, leader, order);
}
