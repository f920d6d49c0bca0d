/* The console's Slurm desk: what an operator's screen does with the controller, on the
 * screen's own loop and never waiting on it. It watches (remote/slurm/slurm_watch: a squeue
 * a round, the sinfo node table when it is 10 s old or there is reason to look, back-off),
 * says when the controller stops answering and when it is back, and runs the operator's node
 * updates (`scontrol update NodeName=N State=DRAIN|RESUME`) one command at a time, so the
 * controller never sees more than the watch's rate plus what the operator asks. */
#ifndef TUNEDECK_SLURM_DESK_H
#define TUNEDECK_SLURM_DESK_H

#include <poll.h>
#include <stddef.h>
#include <stdint.h>

#include "remote/slurm/slurm_ctl.h"
#include "remote/slurm/slurm_watch.h"

typedef struct SlurmDesk SlurmDesk;

/* Keeps c (the caller's, freed after the desk). max_interval_s: the back-off cap. */
SlurmDesk *slurm_desk_new(SlurmCtl *c, const char *partition, double max_interval_s);
void slurm_desk_free(SlurmDesk *d);

size_t slurm_desk_pollfds(SlurmDesk *d, struct pollfd *fds, size_t cap, int64_t *deadline_ms);
void slurm_desk_step(SlurmDesk *d, const struct pollfd *fds, size_t n, int64_t now_ms);

const SlurmWatch *slurm_desk_watch(const SlurmDesk *d);
SlurmCtl *slurm_desk_ctl(const SlurmDesk *d);
/* The controller has not answered since down_since (clock_now_ms); 0 while it answers or
 * before the first round. err gets the last failure. */
int64_t slurm_desk_down_since_ms(const SlurmDesk *d);
const char *slurm_desk_last_error(const SlurmDesk *d);
/* The state shown changed since the last call (a round ended, an update ran). */
int slurm_desk_changed(SlurmDesk *d);
/* One line to tell the operator, once: the controller went away or came back, an update was
 * done or refused. bad: it is a failure. Returns 0 when there is none. */
int slurm_desk_take_outcome(SlurmDesk *d, char *msg, size_t cap, int *bad);

/* Something says the controller may be away (a trial's srun could not reach it), or the
 * caller waits for a node's state (unknown after slurmctld restarted): the next round as soon
 * as the watch's spacing allows, with the node table. */
void slurm_desk_poke(SlurmDesk *d, int64_t now_ms);

/* The node is one the last round listed. */
int slurm_desk_has_node(const SlurmDesk *d, const char *node);
/* The node as the last node table listed it; NULL when none listed it, or when that table
 * was read before the operator's last node update ended (what it lists may be what the
 * update changed). Valid until the next step. */
const SlurmNode *slurm_desk_listed_node(const SlurmDesk *d, const char *node);
/* `scontrol update NodeName=node State=DRAIN Reason="tunedeck: reason"` (drain) or
 * `State=RESUME` (undrain), started after the watch's command under way; its outcome comes
 * through slurm_desk_take_outcome (a refusal quotes Slurm's error). -1 with err when another
 * update is still running or the reason cannot be sent. */
int slurm_desk_update_node(SlurmDesk *d, const char *node, int drain, const char *reason,
                           Error *err);
int slurm_desk_updating(const SlurmDesk *d);

/* Pure: Slurm's refusal of an operator command for want of rights ("Invalid user id",
 * "Access/permission denied", "Permission denied"). */
int slurm_desk_is_refusal(const char *error);

#endif
