/* Internal: the live Slurm backend's state, shared by remote/live/liverun_slurm.c (each run:
 * submit, signal, read its output, its end) and liverun_slurm_round.c (the scontrol rounds,
 * the controller's outages, which jobs are ours). Not a public API. */
#ifndef TUNEDECK_LIVERUN_SLURM_PRIV_H
#define TUNEDECK_LIVERUN_SLURM_PRIV_H

#include "remote/live/livelog.h"
#include "remote/live/liverun_slurm.h"

struct LiveSlurm {
    LiveSlurmOptions o;
    char partition[128];   /* o.partition points here: the caller's may not outlive new() */
    SlurmJobInfoList jobs; /* the last good round */
    SlurmCall *round;      /* the round in flight: the driver never waits on slurmctld */
    long rounds;
    int64_t last_round_ms;
    int active;  /* runs submitted and not seen ended */
    int outage;  /* rounds failed in a row */
    int down;    /* a call found the controller not answering (said once, until one does) */
    char **ours; /* ids of our runs, for telling foreign jobs apart */
    size_t n_ours, cap_ours;
    /* the driver's nodes (watch; liverun_slurm_nodes.c) */
    char **names;
    size_t n_names;
    size_t *by_name;      /* indices into names, sorted by name */
    LiveNodeState *nodes; /* node i's state and others' GPUs there */
    SlurmCall *node_round;
    long node_rounds, looks;
    int64_t last_node_round_ms;
    int node_outage; /* node rounds failed in a row */
    int have_states, have_holds, look_now;
    int leftovers_said; /* an earlier run's batch jobs: looked for in the first round */
};

#define liveslurm_say(s, ...) livelog((s)->o.log, (s)->o.userdata, __VA_ARGS__)

/* Said once an outage, whichever call (round, sbatch, scancel) meets it first; and its end. */
void liveslurm_controller_lost(LiveSlurm *s, const char *why);
void liveslurm_controller_back(LiveSlurm *s);
/* A job id that is ours (told apart from other users' jobs); -1 when out of memory. */
int liveslurm_remember(LiveSlurm *s, const char *id);
/* LIVERUN_SLURM's tick: starts a round when one is due, collects one in flight. */
void liveslurm_tick(void *ctx, int64_t now);
/* A job that is not ours (another user's, or one tunedeck did not start in this run). */
int liveslurm_is_foreign(const LiveSlurm *s, const SlurmJobInfo *j);
/* Steps a call without waiting; 1 once it is done. */
int liveslurm_call_poll(SlurmCall *k);

/* liverun_slurm_nodes.c: LIVERUN_SLURM's watch and nodes; the node-state round (started
 * and collected by the tick); the GPUs other users' jobs hold, after each job round. */
int liveslurm_watch(void *ctx, const char *const *names, size_t n, Error *err);
const LiveNodeState *liveslurm_nodes(void *ctx, size_t *n, long *looks);
void liveslurm_node_tick(LiveSlurm *s, int64_t now);
void liveslurm_count_holds(LiveSlurm *s);
void liveslurm_nodes_free(LiveSlurm *s);

#endif
