/* Slurm's jobs as `scontrol show -d job` prints them (every job in one call, or one job),
 * parsed without running anything (tested on captured output, fuzzed): each job's id,
 * heterogeneous-job component, name, user, state and reason, exit code, and, from the
 * detail lines (`Nodes=n3 CPU_IDs=0-1 Mem=0 GRES=gpu:v100:2(IDX:0-1)`), the GPU indices
 * Slurm granted on each node. The one source the live scheduler on Slurm reads a job's
 * placement and end from, and the console's GPU grid other users' jobs. */
#ifndef TUNEDECK_SLURM_JOBINFO_H
#define TUNEDECK_SLURM_JOBINFO_H

#include <stddef.h>
#include <stdint.h>

#include "core/base/error.h"
#include "remote/slurm/slurm_joblimits.h"

typedef struct {
    char node[64];
    uint64_t gpu_idx; /* bit i: GPU index i of the node is the job's */
} SlurmJobNode;

typedef struct {
    char id[32];     /* JobId */
    char het_id[32]; /* HetJobId: the heterogeneous job this is a component of; "" if none */
    int het_offset;  /* HetJobOffset */
    char het_set[64]; /* HetJobIdSet= ("9-10"): every component's id, on each component */
    char name[128];  /* JobName (may hold spaces) */
    char user[64];   /* UserId without "(uid)" */
    char state[24];  /* PENDING, RUNNING, COMPLETED, CANCELLED, FAILED, TIMEOUT, NODE_FAIL... */
    char reason[96]; /* Slurm's reason: Resources, Priority, None... */
    int exit_code;   /* ExitCode=C:S */
    int exit_signal;
    int restarts;    /* Restarts=: times Slurm requeued it (preemption, a failed node); 0 */
    char nodelist[256];
    /* what a pending job asks for and when Slurm means to start it (the live scheduler
     * keeps the GPUs other users' pending jobs will take out of its growth) */
    long long priority;     /* Priority=; -1 when not listed */
    char partition[128];    /* Partition=: "t4", or "t4,debug" for a job in several */
    int num_nodes;          /* NumNodes= ("1-1": 1; "2-4": 2, the least it takes); 0 unknown */
    int gpus_per_node;      /* TresPerNode=gres:gpu[:TYPE]:N (--gres=gpu:N, --gpus-per-node=N);
                               0 when none */
    int gpus_per_job;       /* TresPerJob=gres:gpu[:TYPE]:N (--gpus=N); 0 when none */
    int gpus_per_task;      /* TresPerTask=gres:gpu[:TYPE]:N (--gpus-per-task=N); 0 when none */
    int num_tasks;          /* NumTasks= (-n); 0 unknown */
    char gpu_type[32];      /* the TYPE of gres:gpu:TYPE:N in those; "" any */
    char req_nodes[256];    /* ReqNodeList= (-w), "" for (null) */
    char sched_nodes[256];  /* SchedNodeList=: the nodes the scheduler planned it on; "" */
    SlurmJobNode *nodes; /* the detail lines, expanded one per node (none while pending) */
    size_t n_nodes;
    /* slurm_jobinfo_read: the record cannot be told real (its id is listed twice, or it lacks
     * JobId or JobState, or a value of it does not read); never one of slurm_jobinfo_parse */
    int doubtful;
} SlurmJobInfo;

typedef struct {
    SlurmJobInfo *v;
    size_t n;
    size_t n_doubtful; /* records marked doubtful (slurm_jobinfo_read) */
} SlurmJobInfoList;

/* Parses `scontrol show -d job [ID]` output; "No jobs in the system" is an empty list. A
 * record without JobId or JobState is refused (err names the source and the line), and so
 * is an answer listing one JobId twice: another user's job name (or comment, or path) that
 * holds newlines and a record of its own, which no record of the answer can be told from. */
int slurm_jobinfo_parse(const char *text, const char *source, SlurmJobInfoList *out, Error *err);
/* The same answer read whole, for the records that can still be used: every record is kept,
 * and those slurm_jobinfo_parse would refuse the answer for (an id listed twice: each of
 * its records; one without JobId or JobState, or with a value that does not read) are
 * marked doubtful, out->n_doubtful counting them and doubt (when not NULL) saying the first
 * as slurm_jobinfo_parse would. -1 (err) only for text that is no answer: its first line no
 * record (a command's error), or out of memory. */
int slurm_jobinfo_read(const char *text, const char *source, SlurmJobInfoList *out, Error *doubt,
                       Error *err);
void slurm_jobinfo_clear(SlurmJobInfoList *l);

/* The record whose JobId is id, or NULL; never a doubtful one. */
const SlurmJobInfo *slurm_jobinfo_find(const SlurmJobInfoList *l, const char *id);
/* The job's component records, the record of id first: that record alone or, when it leads a
 * heterogeneous job (HetJobId=id), with the records whose HetJobId is id and whose id its
 * HetJobIdSet lists. The leader is Slurm's own (a forged record of a listed id makes the
 * answer doubtful), so a forged record of an id Slurm does not list never joins a job as a
 * component. Doubtful records never count. Writes up to cap pointers, returns how many there
 * are (0 when no record has the id). */
size_t slurm_jobinfo_components(const SlurmJobInfoList *l, const char *id, const SlurmJobInfo **out,
                                size_t cap);

/* "n3:0+1,n4:0" from the detail lines of the given components (the console's GPU grid
 * format, schedlive.h); "" when Slurm has granted nothing yet. */
void slurm_jobinfo_where(const SlurmJobInfo *const *parts, size_t n, char *out, size_t cap);
/* Expands a Slurm node list ("n[1-2],gpu07") into names (free with hostrange_free); at most
 * SLURM_JOBINFO_MAX_NODES. */
int slurm_nodelist_expand(const char *list, char ***names, size_t *n, Error *err);
/* Whether the node list holds name, read range by range without expanding it (no bound on
 * its size): 1 or 0; -1 with err when the list is not one. */
int slurm_nodelist_contains(const char *list, const char *name, Error *err);
/* A state that will not change any more (COMPLETED, FAILED, CANCELLED, TIMEOUT, NODE_FAIL,
 * PREEMPTED, OUT_OF_MEMORY, BOOT_FAIL, DEADLINE). */
int slurm_jobinfo_ended(const char *state);

#endif
