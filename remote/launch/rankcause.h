/* Which failed rank a trial's reason names first. The ranks of a data-parallel trial fail
 * together: the one that crashed, then every peer that lost it (peerloss.h). Each host's (or
 * node's) fan-out names the rank that failed first there (rankfan_notice), and which host's
 * word reaches tunedeck first is a race: the crashed rank's notice must lead, not a peer's. */
#ifndef TUNEDECK_RANKCAUSE_H
#define TUNEDECK_RANKCAUSE_H

#include <stddef.h>

/* What each rank said in its error events, keyed by rank and host: a cause, or only a lost
 * peer's words. */
typedef struct RankCause RankCause;

/* For a trial of `world` ranks (ranks_from_schedule); NULL out of memory. */
RankCause *rankcause_new(size_t world);
void rankcause_free(RankCause *c);

/* An error event's text as the trial helper writes it ("rank 3 on n3: RuntimeError: ..."):
 * rank 3 on host n3 said a cause, or lost a peer (peerloss_said); only a notice of that rank
 * on that host ("rank 3 (n3 gpu1) ...") counts it. A cause said once stays one. Text that
 * names no rank and host before ": ", a rank outside the world, or a rank and host past the
 * first `world` pairs heard, is passed over. */
void rankcause_event(RankCause *c, const char *text);

/* The rank a fan-out notice names ("rank 2 (h2 cpu) exited with status 1": rankfan_notice's
 * `who`), or -1. */
long rankcause_notice_rank(const char *who);

/* Of `n` fan-out notices (NULL or "" for a part without one), the part that ended first's at
 * index 0, then the others in the order they came (a fan-out says its notice as its rank
 * fails, so in the order the ranks failed), the index of the one to name first: that of the rank
 * and host the trial's `error_event` names ("rank 3 on n3: ..." for "rank 3 (n3 gpu1) ...") when
 * that event is a cause, not a lost peer; else the first whose rank on its host `c` (NULL:
 * nothing known) did not see say only a lost peer's words, since a rank killed without a word
 * (SIGKILL: status 137) says nothing at all; else 0. */
size_t rankcause_first(const RankCause *c, const char *const *notices, size_t n,
                       const char *error_event);

/* The order a multi-host trial's reason names its failed parts in: of `n` parts (indices into
 * notices[] and came[], a notice as rankcause_first takes it), the one to lead, as
 * rankcause_first picks it from the part that ended first (`ended_first`) and the others in the
 * order their notices came (a fan-out says its notice as its rank fails, before its part ends),
 * then the others as they came, so the reason reads as a timeline. came[i]: when part i's
 * notice came or, for the part that ended first without one, when it ended (1, 2, ... in the
 * order they happened); 0: part i is not named. Fills order[] (room for n) and returns how
 * many it holds, order[0] the leader. */
size_t rankcause_order(const RankCause *c, const char *const *notices, const unsigned *came,
                       size_t n, size_t ended_first, const char *error_event, size_t *order);

#endif
