/* The live driver's runs as Slurm batch jobs (remote/live/liverun.h, docs/slurm.md): a start
 * is `sbatch` on the scheduler's nodes with --gres=gpu:G per node (a heterogeneous job when
 * the nodes' counts differ), a stop `scancel --signal=TERM --full` (the batch script's
 * children checkpoint and exit 0, so the job is COMPLETED), the job's progress lines are read
 * from its output file (tunedeck runs on the login node: the folder is on the shared file
 * system). One `scontrol show -d job` round a second at most, whatever the number of jobs,
 * gives every job's state, pending reason and the GPU indices Slurm granted, and other
 * users' jobs for the console's GPU grid. */
#ifndef TUNEDECK_LIVERUN_SLURM_H
#define TUNEDECK_LIVERUN_SLURM_H

#include <cJSON.h>
#include <stdint.h>

#include "remote/live/livelog.h"
#include "remote/live/liverun.h"
#include "remote/slurm/slurm_ctl.h"
#include "remote/slurm/slurm_inventory.h"
#include "remote/slurm/slurm_jobinfo.h"
#include "remote/slurm/slurm_nodestate.h"

typedef struct LiveSlurm LiveSlurm;

/* A job of ours still pending this long (wall seconds) after a round first saw it pending
 * is said once, with Slurm's reason: the GPUs it was placed on went to other jobs. */
#define LIVESLURM_PENDING_SAY_S 30
/* After Slurm says a job ended, its output file is read again this long (wall seconds) for
 * the batch script's exit line before the run is concluded without it: on a shared file
 * system (NFS, Lustre) that last write can reach the node tunedeck reads it on after
 * slurmctld has the job's end. */
#define LIVESLURM_EXIT_GRACE_S 5

typedef struct {
    SlurmCtl *ctl;         /* commands run here (a login node is refused for live mode) */
    const char *partition; /* NULL or "": Slurm's default (copied) */
    double poll_s;         /* at least this between two scontrol rounds; default 1 */
    double node_poll_s;    /* at least this between two node-state rounds (sinfo) of the
                              driver's nodes; default 10 */
    double pending_say_s;  /* a job of ours pending this long is said, once; default
                              LIVESLURM_PENDING_SAY_S */
    double exit_grace_s;   /* the wait for a job's exit line once Slurm says it ended;
                              default LIVESLURM_EXIT_GRACE_S */
    /* the driver's (SchedLiveOptions), carried from the inventory's "slurm" block, never read
     * by the backend: liveslurm_ceiling_retry */
    double ceiling_retry_s, ceiling_retry_max_s;
    int poll_idle;         /* poll while no run is submitted too (the console's grid of
                              other jobs); else only while one is */
    LiveLogFn log;         /* controller trouble, once per outage (remote/live/livelog.h) */
    void *userdata;
} LiveSlurmOptions;

/* The live scheduler's inventory from an inventory object, whichever its backend: a plain
 * one (cluster_from_json; *ctl and *ls NULL), or "backend": "slurm": the controller's nodes,
 * the job command checked for Slurm (liveslurm_check), a "login" refused with advice, and
 * *ls the runs' backend (o gives the log and poll settings; ctl and partition are the
 * inventory's, and so are the intervals its "slurm" block sets). The caller frees *ls, then
 * *ctl, then *cl. (liverun_slurm_open.c) */
int liveslurm_open(const cJSON *root, const char *source, const LiveSlurmOptions *o, Cluster **cl,
                   SlurmCtl **ctl, LiveSlurm **ls, Error *err);

/* The intervals an inventory's "slurm" block sets (job_round_s, node_round_s,
 * pending_say_s, exit_grace_s) over o's; those it leaves out (0) keep o's.
 * (liverun_slurm_open.c) */
void liveslurm_options_intervals(LiveSlurmOptions *o, const SlurmIntervals *every);
/* The ceiling's back-off the inventory's "slurm" block sets, for the driver's options
 * (SchedLiveOptions.ceiling_retry_s, ceiling_retry_max_s): 0 where it leaves one out. The
 * backend only carries them. */
void liveslurm_ceiling_retry(const LiveSlurm *s, double *retry_s, double *retry_max_s);

/* ctx of LIVERUN_SLURM; the SlurmCtl must outlive it. */
LiveSlurm *liveslurm_new(const LiveSlurmOptions *o, Error *err);
void liveslurm_free(LiveSlurm *s);
extern const LiveRunOps LIVERUN_SLURM;

/* scontrol rounds so far (each one controller call; slurm_ctl_calls counts sbatch and
 * scancel too), and node-state rounds (sinfo). */
long liveslurm_rounds(const LiveSlurm *s);
long liveslurm_node_rounds(const LiveSlurm *s);
/* The operator changed a node (the console's :drain): the next tick reads the nodes' states
 * without waiting for node_poll_s. */
void liveslurm_look_at_nodes(LiveSlurm *s);

/* A running job that is not one of ours, from the last round: for the console's GPU grid. */
typedef struct {
    char id[32], user[64], name[128];
    char where[256]; /* "n3:0+1,n4:2" */
} LiveSlurmForeign;
/* Writes up to cap of them; returns how many there are. */
size_t liveslurm_foreign(const LiveSlurm *s, LiveSlurmForeign *out, size_t cap);

/* The nodes of a node-state round (the partition's, sinfo) that the driver does not watch
 * yet and may add: listed, usable, with 1..64 GPUs. Writes their indices into st->v to out
 * (room for st->n) in name order and returns how many; 0 when out of memory (the next round
 * tries again). known: the watched nodes' names, n_known of them. Pure
 * (liverun_slurm_nodes.c, unit-tested). */
size_t liveslurm_joined(const SlurmNodeStatuses *st, const char *const *known, size_t n_known,
                        size_t *out);

/* A watched node as the claims of other users' pending jobs see it. */
typedef struct {
    int gpus;     /* its GPUs (0: not known yet; nothing is claimed there) */
    int busy;     /* GPUs running jobs hold there, ours and others' */
    int others;   /* of those, other users' */
    int unusable; /* drained, down: no job is placed there */
    const char *gpu_type; /* its GRES's ("t4"; "a100,t4" for a node of both); NULL or ""
                             unknown: a job of any type fits */
} LiveSlurmClaimNode;

/* A pending job that only waits for GPUs or for its turn (reason Priority, Resources or
 * None): Slurm could start it now. */
int liveslurm_pending_may_start(const SlurmJobInfo *j);

/* A partition and its nodes, as `sinfo -a -h -o '%R|%N'` lists them. */
typedef struct {
    char name[128];
    char *nodes; /* a Slurm node list, "n[1-4]" */
} LiveSlurmPartition;

/* `sinfo -a -h -o '%R|%N'` (LIVESLURM_PARTITIONS_ARGV) into partitions (free with
 * liveslurm_partitions_free); -1 with err naming source and line on a line without '|'.
 * -a: without it sinfo hides hidden partitions and those our group may not use, which are
 * exactly other users'. */
#define LIVESLURM_PARTITIONS_FORMAT "%R|%N"
#define LIVESLURM_PARTITIONS_ARGV                                                                  \
    {                                                                                              \
        "sinfo", "-a", "-h", "-o", LIVESLURM_PARTITIONS_FORMAT, NULL                               \
    }
int liveslurm_partitions_parse(const char *text, const char *source, LiveSlurmPartition **out,
                               size_t *n, Error *err);
void liveslurm_partitions_free(LiveSlurmPartition *v, size_t n);
/* 1 with why ("partition debug's node list: ...") when a partition's node list does not
 * read; 0 when all do. */
int liveslurm_partitions_unreadable(const LiveSlurmPartition *v, size_t n, char *why, size_t cap);

/* The GPUs of each node (claims[i], names[i] being nodes[i]'s) that other users' pending
 * jobs will take before a job of ours submitted now: the jobs of `jobs` flagged
 * foreign, PENDING, asking for GPUs (per node, per job or per task), that Slurm could
 * start now (reason Priority, Resources or None) or has planned (SchedNodeList), highest
 * Priority first (then the oldest). Each takes its GPUs on its planned nodes, else the
 * nodes it asked for (-w), else the nodes with room for it (GPUs others' running jobs and
 * more important pending jobs leave) and of the GPU type it asks for, the most idle first;
 * idle GPUs and ours alike (a resize of ours frees those). Without a plan or -w, a job outside `partition` (NULL or
 * "": every job is in it) goes only to the nodes of ours its partitions share, as `parts`
 * (the other partitions' node lists) says; one in a partition not there takes nothing.
 * Returns how many jobs take GPUs of ours or idle ones. Pure (liverun_slurm_pending.c,
 * unit-tested; the rule and why in that file). */
size_t liveslurm_pending_claims(const SlurmJobInfoList *jobs, const unsigned char *foreign,
                                const char *partition, const LiveSlurmPartition *parts,
                                size_t n_parts, const char *const *names,
                                const LiveSlurmClaimNode *nodes, size_t n, int *claims);

/* ---- pure helpers (liverun_slurm_cmd.c, unit-tested) ---- */

/* A job_command Slurm can run: {gpu_ids} is refused (Slurm picks the GPUs and sets
 * CUDA_VISIBLE_DEVICES), and so is "job_launch": "per-host" (the command runs once, on the
 * allocation's first node), and {node_rank} where the cluster has several nodes (`n_nodes`;
 * 0: not known yet, before the controller was asked: not checked). err says why and what
 * to do. */
int liveslurm_check(const char *template_text, int per_host, size_t n_nodes, Error *err);
/* The line the batch script prints last: LIVESLURM_EXIT_MARK JOBID STATUS. */
#define LIVESLURM_EXIT_MARK "tunedeck-batch-exit "
/* The batch script: trap TERM (the shell waits for the job's checkpoint and exits with its
 * status), an exit at once when Slurm runs it again after a requeue (SLURM_RESTART_COUNT set
 * and not 0: tunedeck resubmits the job itself, from its checkpoint), TUNEDECK_JOB, the
 * hostfile, then the job's command with its placeholders filled (jobctl_command), then the
 * exit line with the command's status. Caller frees. */
char *liveslurm_script(const char *template_text, const char *name, const JobAlloc *a, Error *err);
/* sbatch's arguments for the placement (names[i] with gpus[i] GPUs): the job's name
 * (liveslurm_job_name), one component per distinct GPU count, in the order the counts first
 * appear, ':' between them; then the script's path. NULL-terminated, each string malloc'd
 * (free with liveslurm_argv_free). */
char **liveslurm_sbatch_argv(const char *job_name, const char *dir, const char *partition,
                             const char *const *names, const int *gpus, size_t n,
                             const char *script_path);
void liveslurm_argv_free(char **argv);
/* The job id in `sbatch --parsable`'s answer ("12" or "12;cluster"); -1 when none. */
long liveslurm_parse_jobid(const char *out);
/* 1 when a Slurm command's error (slurm_ctl_run's err) says the controller did not answer
 * ("Unable to contact slurm controller", a socket timeout, no answer in time, the login
 * node's SSH failing): the request is retried. 0 when Slurm answered and refused it
 * ("Requested node configuration is not available"): it fails with Slurm's words. */
int liveslurm_no_controller(const char *error_text);
/* How a refused sbatch's error (slurm_ctl_run's err: "sbatch exited with status 1: sbatch:
 * error: Batch job submission failed: WORDS") is taken: LIVERUN_REFUSED_FOR_GOOD for a
 * request the cluster can never take (an invalid partition, account, QOS or GRES, a node
 * configuration no node has, a time limit); LIVERUN_REFUSED_TOO_BIG for a limit on the
 * job's size (a QOS or association limit whose reason sbatch names first, "QOSMaxGRESPerJob"),
 * _TOO_MANY_NODES where that limit counts nodes (a partition's MaxNodes under
 * EnforcePartLimits, "Node count specification invalid"; "QOSMaxNodePerJobLimit");
 * LIVERUN_REFUSED_FOR_NOW for a limit on the jobs one may submit (its reason
 * "...SubmitJob..."); LIVERUN_REFUSED_LIMIT for "Job violates accounting/QOS policy" with no
 * reason named (either); LIVERUN_REFUSED_ONCE for the rest (the controller's "try again"
 * answers, and words not known). Pure. */
LiveRefusal liveslurm_sbatch_refusal(const char *error_text);
/* 1 when a pending job's reason is a limit on its size that it never passes as it is: the
 * partition's (PartitionNodeLimit) or a QOS's or association's per-job one (QOSMax...PerJob...,
 * AssocMax...PerJob..., but no wall time or CPU-minutes limit, which the size does not
 * change). Limits over several jobs (per user, Grp...) clear as other jobs end: 0. Pure. */
int liveslurm_size_reason(const char *reason);
/* 1 when such a reason, or a refused sbatch's words, count the job's nodes rather than its
 * GPUs: PartitionNodeLimit, "Node count specification invalid" (a partition's MaxNodes),
 * QOSMaxNodePerJobLimit, AssocMaxNodePerJobLimit (MaxNodesPerJob). Pure. */
int liveslurm_nodes_reason(const char *text);
/* The wait before the next try after `fails` failed tries in a row: poll_s times 2, 4, 8,
 * then 16 for every later one (the scontrol rounds' back-off too). */
double liveslurm_backoff_s(double poll_s, int fails);
/* The run's end in the driver's words: "exited 0" (COMPLETED), "exited 3", "killed by
 * SIGKILL", "cancelled while pending", "slurm: TIMEOUT (TimeLimit)"... */
void liveslurm_status_text(const SlurmJobInfo *j, int ran, char *out, size_t cap);
/* How Slurm took a job of ours off its GPUs, read from its record (preemption,
 * docs/slurm.md): */
typedef enum {
    LIVESLURM_TAKEN_NONE,
    LIVESLURM_TAKEN_PREEMPTED, /* ended PREEMPTED: PreemptMode=CANCEL */
    LIVESLURM_TAKEN_REQUEUED,  /* Restarts > 0: requeued (PreemptMode=REQUEUE, a failed node,
                                  scontrol requeue); pending again, or run again */
    LIVESLURM_TAKEN_SUSPENDED, /* SUSPENDED: PreemptMode=SUSPEND or scontrol suspend; it keeps
                                  its GPUs (Slurm 22.05 frees a suspended job's CPUs, not its
                                  GRES) */
} LiveSlurmTaken;
/* Our submissions start at Restarts=0, so any restart is Slurm's requeue; requeued wins over
 * the state the copy is in now (pending, running again, or ended). */
LiveSlurmTaken liveslurm_taken(const SlurmJobInfo *j);
/* The prefix of every live run's batch job name (tunedeck-live-NAME.NONCE-N). */
#define LIVESLURM_NAME_PREFIX "tunedeck-live-"
/* 1 when `id` is one of the n `ids` (a job id among ours). */
int liveslurm_id_in(const char *id, const char *const *ids, size_t n);
/* The batch job name of a driver's (nonce's) n-th submission, for the job `name`: unique to
 * the submission, so that an sbatch whose answer was lost can be looked up by it and its job
 * adopted instead of submitted twice. -1 when it does not fit in cap. */
int liveslurm_job_name(char *out, size_t cap, const char *name, unsigned nonce, long n);
/* The output file of the submission job_name (liveslurm_job_name) as job `id` ("%j": sbatch's
 * pattern), in its folder dir: DIR/slurm-ID.NONCE-N.out, the name's tail after its last '.'
 * (the whole name when it has none). Its own to the submission: Slurm's job ids start again
 * from 1 when its state is reset and wrap at MaxJobId, so a folder can hold an earlier job's
 * slurm-ID.out under this job's id, whose progress and exit line are not this run's. NULL
 * when out of memory; caller frees. */
char *liveslurm_output_path(const char *dir, const char *job_name, const char *id);
/* 1 when job_name is one liveslurm_job_name gave for this nonce: a job of this driver's,
 * even before its sbatch has answered. */
int liveslurm_named_by(const char *job_name, unsigned nonce);
/* 1 when j is a job of this driver's by its name alone (before its sbatch has answered):
 * named by the nonce and of `user`. Names are anyone's to choose, and squeue shows ours to
 * every user: another user's job named like ours is still another user's, whose GPUs are
 * taken. */
int liveslurm_ours_by_name(const SlurmJobInfo *j, const char *user, unsigned nonce);
/* The job id in the look-up's answer (`squeue --noheader --format=%i`: "12", or "12+0" for
 * a heterogeneous job's parts, one a line): -1 when it lists none, -2 when the answer is
 * not that. */
long liveslurm_parse_lookup(const char *out);
/* Batch jobs of an earlier live run: named with LIVESLURM_NAME_PREFIX, of `user`, not ended,
 * not among `ours` (ids; a heterogeneous job counts once) and not named with this driver's
 * nonce (a job whose sbatch has not answered yet is ours too). Writes their ids, ' '
 * between, to ids (cap bytes; "" when none) and returns how many there are. */
size_t liveslurm_leftovers(const SlurmJobInfoList *jobs, const char *user,
                           const char *const *ours, size_t n_ours, unsigned nonce, char *ids,
                           size_t cap);
/* The jobs that double one submission: named job_name, of user, not ended, and not the job
 * `id` its run follows (a heterogeneous job counts once, by its own id; none while id is "",
 * as any of them may be the one the run adopts). An sbatch that got no answer, was looked up
 * by name and found nowhere, then sent again, leaves one when slurmctld took the first after
 * the look-up. Writes up to cap ids to out and returns how many there are. */
size_t liveslurm_doubles(const SlurmJobInfoList *jobs, const char *user, const char *job_name,
                         const char *id, char (*out)[32], size_t cap);

#endif
