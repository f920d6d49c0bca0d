/* Which failed rank a trial's reason names first. The ranks of a data-parallel trial fail
 * together: the one that crashed, then every peer that lost it (peerloss.h). Each host's (or
 * node's) fan-out names the rank that failed first there (rankfan_notice), and which host's
 * word reaches tunedeck first is a race: the crashed rank's notice must lead, not a peer's. */
#ifndef TUNEDECK_RANKCAUSE_H
#define TUNEDECK_RANKCAUSE_H

#include <stddef.h>

/* What each rank said in its error events: a cause, or only a lost peer's words. */
typedef struct RankCause RankCause;

/* For a trial of `world` ranks (ranks_from_schedule); NULL out of memory. */
RankCause *rankcause_new(size_t world);
void rankcause_free(RankCause *c);

/* An error event's text as the trial helper writes it ("rank 3 on n3: RuntimeError: ..."):
 * its rank said a cause, or lost a peer (peerloss_said). A cause said once stays one. Text
 * that names no rank, or a rank outside the world, is passed over. */
void rankcause_event(RankCause *c, const char *text);

/* The rank a fan-out notice names ("rank 2 (h2 cpu) exited with status 1": rankfan_notice's
 * `who`), or -1. */
long rankcause_notice_rank(const char *who);

/* Of `n` fan-out notices (NULL or "" for a part without one), the part that ended first's at
 * index 0, then the others in the order they came (a fan-out says its notice as its rank
 * fails, so in the order the ranks failed), the index of the one to name first: that of the rank
 * and host the trial's `error_event` names ("rank 3 on n3: ..." for "rank 3 (n3 gpu1) ...") when
 * that event is a cause, not a lost peer; else the first whose rank `c` (NULL: nothing known) did
 * not see say only a lost peer's words, since a rank killed without a word (SIGKILL: status 137)
 * says nothing at all; else 0. */
size_t rankcause_first(const RankCause *c, const char *const *notices, size_t n,
                       const char *error_event);

#endif
