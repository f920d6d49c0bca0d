/* Names the failed rank that caused a trial's failure before its lost peers (rankcause.h). */
#include "remote/launch/rankcause.h"

#include <stdlib.h>
#include <string.h>

#include "core/model/peerloss.h"

/* What a rank said in its error events, in this order: a cause outweighs a lost peer. */
enum { SAID_NOTHING, SAID_LOST_PEER, SAID_CAUSE };

/* The longest host an event may name and be kept: an inventory machine's name is shorter
 * (cluster.c reads it into 128 bytes), and only a machine's rank has a notice. */
#define HOST_MAX 255

/* What one rank on one host said: keyed by both, since a script that numbers its ranks per
 * host (LOCAL_RANK) has a "rank 0" on every host, and only a rank's words on its own host are
 * its own. */
typedef struct {
    char *key; /* the event's words before its message, "rank 3 on n3:"; NULL: a free slot */
    size_t key_len;
    long rank;
    unsigned char said;
} Said;

/* Memory follows the schedule, never the numbers or hosts a trial sends (observation.c): the
 * first `world` (rank, host) pairs heard are kept, one per rank of the world, in a table of
 * twice as many slots, so a lookup stays a probe or two; a rank beyond the world, or a pair
 * past them (a trial's flood of events from hosts of its own), costs nothing. */
struct RankCause {
    Said *slot;
    size_t cap, used, world;
};

RankCause *rankcause_new(size_t world)
{
    RankCause *c = calloc(1, sizeof *c);
    if (!c)
        return NULL;
    c->world = world;
    c->cap = world ? 2 * world : 1;
    if (world > ((size_t)-1) / 2 / sizeof *c->slot ||
        !(c->slot = calloc(c->cap, sizeof *c->slot))) {
        free(c);
        return NULL;
    }
    return c;
}

void rankcause_free(RankCause *c)
{
    if (!c)
        return;
    for (size_t i = 0; i < c->cap; i++)
        free(c->slot[i].key);
    free(c->slot);
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

/* FNV-1a (Fowler, Noll, Vo): a key's slot. */
static size_t key_hash(const char *key, size_t len)
{
    size_t h = (size_t)14695981039346656037ULL;
    for (size_t i = 0; i < len; i++)
        h = (h ^ (unsigned char)key[i]) * (size_t)1099511628211ULL;
    return h;
}

void rankcause_event(RankCause *c, const char *text)
{
    long rank = leading_rank(text, "on ");
    if (!c || rank < 0 || (size_t)rank >= c->world)
        return;
    /* the trial helper writes "rank 3 on n3: " before the message */
    const char *host = strstr(text, " on ") + 4;
    const char *colon = strstr(host, ": ");
    if (!colon || colon == host || (size_t)(colon - host) > HOST_MAX)
        return;
    size_t len = (size_t)(colon + 1 - text);
    unsigned char said = peerloss_said(text) ? SAID_LOST_PEER : SAID_CAUSE;
    size_t i = key_hash(text, len) % c->cap;
    for (; c->slot[i].key; i = (i + 1) % c->cap) {
        Said *s = &c->slot[i];
        if (s->key_len == len && memcmp(s->key, text, len) == 0) {
            /* a cause said once stays one */
            if (s->said != SAID_CAUSE)
                s->said = said;
            return;
        }
    }
    char *key = c->used < c->world ? malloc(len + 1) : NULL;
    if (!key) /* the world's worth kept, or no memory: passed over */
        return;
    memcpy(key, text, len);
    key[len] = '\0';
    c->slot[i] = (Said){.key = key, .key_len = len, .rank = rank, .said = said};
    c->used++;
}

/* What the rank and host a notice names said; SAID_NOTHING with nothing known. Every slot is
 * looked at, since a notice cut short names its host only in part: once per failed host as a
 * trial ends, never per event. */
static int said_of(const RankCause *c, const char *notice)
{
    long rank = rankcause_notice_rank(notice);
    int said = SAID_NOTHING;
    for (size_t i = 0; c && rank >= 0 && i < c->cap; i++) {
        const Said *s = &c->slot[i];
        if (s->key && s->rank == rank && s->said > said && same_host(s->key, notice))
            said = s->said;
    }
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
    for (size_t i = 0; cause >= 0 && i < n; i++)
        if (rankcause_notice_rank(nth(notices, order, i)) == cause &&
            same_host(error_event, nth(notices, order, i)))
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
