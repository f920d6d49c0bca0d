/* The one Slurm allocation a tuning session runs its trials in: every machine of the
 * inventory, whole (`salloc --no-shell --exclusive` with every GPU as GRES), granted once at
 * the start and cancelled at the end; or the allocation tunedeck already runs inside
 * (SLURM_JOB_ID), which it uses and leaves alone. Nodes with different GPU counts make a
 * heterogeneous job, one component per count (Slurm 22.05 refuses a step more GPUs on a node
 * than the smallest node of a one-component allocation has). */
#ifndef TUNEDECK_SLURM_ALLOC_H
#define TUNEDECK_SLURM_ALLOC_H

#include "core/model/cluster.h"
#include "remote/slurm/slurm_ctl.h"

enum { SLURM_ALLOC_MAX_GROUPS = 16, SLURM_ALLOC_HINT_MAX = 320 };

typedef struct {
    char job_id[32]; /* empty: none */
    char name[48];   /* owned: its --job-name, tunedeck-tune-PID */
    int owned;       /* we asked for it: we cancel it */
    int het;         /* one component per GPU count (slurm_alloc_gpu_groups' order) */
} SlurmAlloc;

/* The GPUs of a machine's type, and the distinct counts in the order they first appear
 * among the machines (at most SLURM_ALLOC_MAX_GROUPS): component k has counts[k]. */
int slurm_alloc_machine_gpus(const Cluster *cl, size_t machine);
size_t slurm_alloc_gpu_groups(const Cluster *cl, int *counts);

/* existing: an allocation to use as it is (NULL or "": salloc one). wait_s: how long Slurm
 * may take to grant it (salloc --immediate), below c's command timeout so that salloc gives
 * up (and revokes its job) first; a job salloc queued and did not hand over is cancelled. */
int slurm_alloc_open(SlurmCtl *c, const Cluster *cl, const char *partition, const char *existing,
                     double wait_s, int (*stop)(void *), void *stop_ud, SlurmAlloc *a, Error *err);
/* Cancels an allocation we made (scancel), and forgets it either way. -1 when the scancel
 * could not reach the controller (the login node down) or was refused: err names the job and
 * the command that releases it, where to run it; the allocation holds its nodes until its
 * time limit. One Slurm no longer has (ended by its limit) counts as released. */
int slurm_alloc_close(SlurmCtl *c, SlurmAlloc *a, Error *err);
/* What a failed release tells the user to do by hand: "release it with `scancel JOB`", with
 * " on HOST" when c runs Slurm's commands on a login node. Written into buf (room for any job
 * id and host: SLURM_ALLOC_HINT_MAX); returns buf. */
const char *slurm_alloc_release_hint(const SlurmCtl *c, const char *job_id, char *buf, size_t size);
/* slurm_alloc_close without forgetting it, for a caller that tries again (the login node back,
 * remote/session/release_wait.h): 0 released, or none of ours; -1 with err as above. */
int slurm_alloc_cancel(SlurmCtl *c, const SlurmAlloc *a, Error *err);
/* err (ERROR_REMOTE): allocation a was not released, `why`, with the command that releases it
 * and where to run it. Returns -1. */
int slurm_alloc_left_error(SlurmCtl *c, const SlurmAlloc *a, const char *why, Error *err);

/* An allocation an earlier run of the session made and could not release (its journal's
 * word): cancelled only if Slurm still has a job of ours with that id under that name
 * (`scancel -v --me --name=NAME ID`), so an id Slurm has since handed to another job is left
 * alone. 1: cancelled; 0: Slurm has no such job (ended by its limit, or released by hand);
 * -1: scancel could not run or was refused (err says why). */
int slurm_alloc_release_left(SlurmCtl *c, const char *job_id, const char *name, Error *err);

/* Pure: what scancel's exit status and standard error say of job `id` (verbose: it ran with
 * -v, which names each job it signals, "Terminating job ID"). Slurm 22.05 exits 1 for an id
 * it no longer has ("Invalid job id specified"; "Job/step already completing or completed"
 * for one ending): released all the same. */
typedef enum {
    SLURM_CANCEL_SENT,    /* cancelled now */
    SLURM_CANCEL_GONE,    /* no such job (left): nothing to release */
    SLURM_CANCEL_REFUSED, /* scancel answered with another error */
} SlurmCancelOutcome;
SlurmCancelOutcome slurm_alloc_cancel_outcome(int rc, const char *err_text, const char *id,
                                              int verbose);

/* Pure: whether the allocation in SLURM_JOB_ID (job) is one the session can run in, from
 * `squeue -h -j JOB -o '%T|%N'` (a line per component): listed, every component RUNNING, and
 * every machine of cl on one of its nodes. -1 with err (ERROR_INPUT) naming what is wrong. */
int slurm_alloc_check_existing(const char *job, const char *squeue_out, const Cluster *cl,
                               Error *err);

/* Pure: the job number in salloc's "Granted job allocation N" (-1 when absent). */
long slurm_alloc_parse_granted(const char *salloc_stderr);
/* Pure: the job salloc made, granted or still "Pending job allocation N" (-1 when none). */
long slurm_alloc_parse_queued(const char *salloc_stderr);

#endif
