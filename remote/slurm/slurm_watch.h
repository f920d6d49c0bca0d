/* Watching a Slurm cluster without leaning on slurmctld: every round is one `squeue` (the
 * queue with pending reasons); the `sinfo` node table, which is most of the controller's work
 * on a long partition, only when it is 5 minimum intervals old (10 s: every 5th round while
 * the rounds are 2 s apart) or when there is reason to look at once (the rule is in
 * slurm_watch.c). Rounds are at least min_interval apart (2 s: one controller call per
 * second at most, whatever the cluster size); while the queue does not change the interval
 * doubles up to max_interval, and its first change brings it back down. docs/slurm.md has the
 * figures from bench/slurm.sh and bench/slurm_scale.sh. */
#ifndef TUNEDECK_SLURM_WATCH_H
#define TUNEDECK_SLURM_WATCH_H

#include <poll.h>
#include <stddef.h>
#include <stdint.h>

#include "remote/slurm/slurm_ctl.h"
#include "remote/slurm/slurm_nodes.h"
#include "remote/slurm/slurm_queue.h"

typedef struct SlurmWatch SlurmWatch;

SlurmWatch *slurm_watch_new(SlurmCtl *c, const char *partition, double min_interval_s,
                            double max_interval_s);
void slurm_watch_free(SlurmWatch *w);
/* When the next round is due (clock_now_ms); the first is due at once. */
int64_t slurm_watch_due_ms(const SlurmWatch *w);
/* Runs a round when due (else does nothing, returns 0). Returns 1 when the nodes or the
 * queue changed since the last round, 0 when not (or not due), -1 when the controller did
 * not answer (err; the last good state is kept and the next round backs off). */
int slurm_watch_poll(SlurmWatch *w, int64_t now_ms, Error *err);

/* The same rounds on the caller's loop, never blocking it (a controller that does not answer
 * keeps sinfo waiting ~9 s): pollfds/step run the round's commands one after the other as a
 * loop source; slurm_watch_take says once how each round ended (1 changed, 0 same, -1 the
 * controller did not answer: err), -2 while no round has ended since the last take. */
size_t slurm_watch_pollfds(SlurmWatch *w, struct pollfd *fds, size_t cap, int64_t *deadline_ms);
void slurm_watch_step(SlurmWatch *w, const struct pollfd *fds, size_t n, int64_t now_ms);
int slurm_watch_take(SlurmWatch *w, Error *err);
int slurm_watch_busy(const SlurmWatch *w); /* a round's command is under way */
/* When the rounds began to fail (clock_now_ms), 0 while the controller answers. */
int64_t slurm_watch_down_since_ms(const SlurmWatch *w);
long slurm_watch_rounds(const SlurmWatch *w); /* rounds ended, answered or not */
long slurm_watch_node_tables(const SlurmWatch *w); /* sinfo answers read so far */
/* Something changed that the operator did (a drain), or may have (the controller may be
 * away): the next round as soon as the minimum interval since the last one allows, with the
 * node table, and the back-off starts over. */
void slurm_watch_poke(SlurmWatch *w, int64_t now_ms);

/* The last good state (kept through an outage). */
const SlurmNodes *slurm_watch_nodes(const SlurmWatch *w);
const SlurmQueue *slurm_watch_queue(const SlurmWatch *w);
double slurm_watch_interval_s(const SlurmWatch *w); /* the wait before the next round */

#endif
