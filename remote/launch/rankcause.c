/* Names the failed rank that caused a trial's failure before its lost peers (rankcause.h). */
#include "remote/launch/rankcause.h"

#include <stdlib.h>
#include <string.h>

#include "core/model/peerloss.h"

typedef struct {
    long rank;
    int lost; /* every word of it so far was a lost peer's */
} RankSaid;

struct RankCause {
    RankSaid *said;
    size_t n, cap;
};

RankCause *rankcause_new(void)
{
    return calloc(1, sizeof(RankCause));
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

static RankSaid *said_of(const RankCause *c, long rank)
{
    for (size_t i = 0; c && i < c->n; i++)
        if (c->said[i].rank == rank)
            return &c->said[i];
    return NULL;
}

int rankcause_event(RankCause *c, const char *text)
{
    long rank = leading_rank(text, "on ");
    if (rank < 0)
        return 0;
    int lost = peerloss_said(text);
    RankSaid *s = said_of(c, rank);
    if (s) {
        s->lost &= lost;
        return 0;
    }
    if (c->n == c->cap) {
        size_t cap = c->cap ? c->cap * 2 : 8;
        RankSaid *grown = realloc(c->said, cap * sizeof *grown);
        if (!grown)
            return -1;
        c->said = grown;
        c->cap = cap;
    }
    c->said[c->n++] = (RankSaid){.rank = rank, .lost = lost};
    return 0;
}

size_t rankcause_first(const RankCause *c, const char *const *notices, size_t n,
                       const char *error_event)
{
    long cause = error_event && !peerloss_said(error_event) ? leading_rank(error_event, "on ") : -1;
    for (size_t i = 0; cause >= 0 && i < n; i++)
        if (rankcause_notice_rank(notices[i]) == cause)
            return i;
    for (size_t i = 0; i < n; i++) {
        const RankSaid *s = said_of(c, rankcause_notice_rank(notices[i]));
        if (!s || !s->lost)
            return i;
    }
    return 0;
}
