/* Watching a Slurm cluster without leaning on slurmctld: one round is one `sinfo` (node
 * states) and one `squeue` (the queue with pending reasons). Rounds are at least
 * min_interval apart (2 s: one controller call per second at most, whatever the cluster
 * size); while nothing changes the interval doubles up to max_interval, and the first
 * change brings it back down. docs/slurm.md has the figures from bench/slurm.sh. */
#ifndef TUNEDECK_SLURM_WATCH_H
#define TUNEDECK_SLURM_WATCH_H

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
const SlurmNodes *slurm_watch_nodes(const SlurmWatch *w);
const SlurmQueue *slurm_watch_queue(const SlurmWatch *w);
double slurm_watch_interval_s(const SlurmWatch *w); /* the wait before the next round */

#endif
