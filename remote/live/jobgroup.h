/* One live job's processes as a unit: its command on the placement's first host, or with
 * "job_launch": "per-host" on every host of the placement with its own {node_rank}. The
 * group starts, signals and ends together: when one member ends without being asked while
 * others still run (a crashed rank), the rest get SIGTERM so the job checkpoints and the
 * driver sees one death, with the failed member's status. Progress is rank 0's. */
#ifndef TUNEDECK_JOBGROUP_H
#define TUNEDECK_JOBGROUP_H

#include "remote/live/jobctl.h"

typedef struct JobGroup JobGroup;

/* pool_hosts[i] is the host pool's index of a->hosts[i]. Each member gets a fresh run mark of
 * its own (jobctl_start, jobctl_mark), as each host's part of a trial does: a stop of one
 * member (its wrapping shell's at its end, its KILL, a stale-run stop) never reaches another
 * member's processes on a machine that two of the placement's hosts share. */
JobGroup *jobgroup_start(HostPool *p, const size_t *pool_hosts, int per_host,
                         const char *template_text, const JobAlloc *a, Error *err);
/* Signals every running member (each one's process group). */
int jobgroup_signal(JobGroup *g, int signo, Error *err);
/* Call after every hostpool_step. */
void jobgroup_step(JobGroup *g);
int jobgroup_running(const JobGroup *g); /* a member is up (or starting) */
int jobgroup_ready(const JobGroup *g);   /* every running member reported its group */
size_t jobgroup_size(const JobGroup *g);
const JobRun *jobgroup_member(const JobGroup *g, size_t i); /* node rank i's, i < size */
const JobProgress *jobgroup_progress(const JobGroup *g);
/* "" while a member runs; then the first failed member's end ("node 1: exited 3"), else
 * rank 0's ("exited 0"). */
const char *jobgroup_status(const JobGroup *g);
/* After the group ended: rank 0 exited 0, so it wrote its checkpoint (even when another
 * member's death was what ended the group). */
int jobgroup_rank0_saved(const JobGroup *g);
void jobgroup_free(JobGroup *g);

#endif
