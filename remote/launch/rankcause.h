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

/* For a trial of `world` ranks (ranks_from_schedule) on the `nhosts` hosts `hosts` (the
 * schedule's machine names, as its fan-out notices and the trial helper's events name them;
 * copied: the caller's array and names may go once this returns). NULL out of memory, or
 * where world * nhosts bytes cannot be counted. */
RankCause *rankcause_new(size_t world, const char *const *hosts, size_t nhosts);
void rankcause_free(RankCause *c);

/* An error event's text as the trial helper writes it ("rank 3 on n3: RuntimeError: ..."):
 * rank 3 on host n3 said a cause, or lost a peer (peerloss_said); only a notice of that rank
 * on that host ("rank 3 (n3 gpu1) ...") counts it. A cause said once stays one. Text that
 * names no rank, a rank outside the world, or no host of rankcause_new's followed by ':' after
 * "rank N on ", is passed over and takes no room: what the trial sends never pushes out what
 * a rank of the schedule said. */
void rankcause_event(RankCause *c, const char *text);

/* The rank a fan-out notice names ("rank 2 (h2 cpu) exited with status 1": rankfan_notice's
 * `who`), or -1. */
long rankcause_notice_rank(const char *who);

/* Of `n` fan-out notices (NULL or "" for a part without one), the part that ended first's at
 * index 0, then the others in the order they came (a fan-out says its notice as its rank
 * fails, so in the order the ranks failed), the index of the one to name first: that of the rank
 * and host the trial's `error_event` names ("rank 3 on n3: ..." for "rank 3 (n3 gpu1) ...") when
 * that event is a cause, not a lost peer; else, for such a cause, the first notice of its
 * host (a peer beside the crashed rank may have ended first there). The event's host is, with
 * `c`, the longest of the schedule's names that fits it, and a notice must name that one (with
 * machines "a" and "a: b", "rank 1 on a: b: ..." is not a's); without `c` (srun's words), any
 * host a notice names that the event begins with, followed by ": ". Else the first whose rank
 * on its host `c` (NULL: nothing known) did not say only a lost peer's words, since a rank
 * killed without a word (SIGKILL: status 137) says nothing at all; else 0. */
size_t rankcause_first(const RankCause *c, const char *const *notices, size_t n,
                       const char *error_event);

/* The order a multi-host trial's reason names its failed parts in, of `n` parts (indices into
 * notices[], a notice as rankcause_first takes it, and came[]): the leader, the part
 * rankcause_first picks from [`ended_first`, then the others by came], then the others by
 * came, so the reason reads as a timeline. came[i]: when part i's notice came (a fan-out says
 * it as its rank fails, before its part ends) or, for the part that ended first without one,
 * when it ended (1, 2, ... in the order they happened); came[i] == 0: part i is not named.
 * Fills order[] (room for n) and returns how many it holds, order[0] the leader. */
size_t rankcause_order(const RankCause *c, const char *const *notices, const unsigned *came,
                       size_t n, size_t ended_first, const char *error_event, size_t *order);

#endif
