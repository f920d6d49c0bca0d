/* Internal: the live Slurm backend's state, shared by remote/live/liverun_slurm.c (each run:
 * submit, signal, read its output, its end) and liverun_slurm_round.c (the scontrol rounds,
 * the controller's outages, which jobs are ours). Not a public API. */
#ifndef TUNEDECK_LIVERUN_SLURM_PRIV_H
#define TUNEDECK_LIVERUN_SLURM_PRIV_H

#include "remote/live/livelog.h"
#include "remote/live/liverun_slurm.h"

struct LiveSlurm {
    LiveSlurmOptions o;
    char partition[128]; /* o.partition points here: the caller's may not outlive new() */
    SlurmJobInfoList jobs; /* the last good round */
    SlurmCall *round;      /* the round in flight: the driver never waits on slurmctld */
    long rounds;
    int64_t last_round_ms;
    int active;  /* runs submitted and not seen ended */
    int outage;  /* rounds failed in a row */
    int down;    /* a call found the controller not answering (said once, until one does) */
    char **ours; /* ids of our runs, for telling foreign jobs apart */
    size_t n_ours, cap_ours;
};

#define liveslurm_say(s, ...) livelog((s)->o.log, (s)->o.userdata, __VA_ARGS__)

/* Said once an outage, whichever call (round, sbatch, scancel) meets it first; and its end. */
void liveslurm_controller_lost(LiveSlurm *s, const char *why);
void liveslurm_controller_back(LiveSlurm *s);
/* A job id that is ours (told apart from other users' jobs); -1 when out of memory. */
int liveslurm_remember(LiveSlurm *s, const char *id);
/* LIVERUN_SLURM's tick: starts a round when one is due, collects one in flight. */
void liveslurm_tick(void *ctx, int64_t now);

#endif
