/* Internal: the live Slurm backend's state, shared by remote/live/liverun_slurm.c (each run:
 * start, signal, read its output), liverun_slurm_end.c (its end, held for its exit line),
 * liverun_slurm_submit.c (each run's own calls: sbatch, the look-up by name, scancel),
 * liverun_slurm_round.c (the scontrol rounds, the controller's outages, which jobs are ours),
 * liverun_slurm_byid.c (our jobs read by id when a round's answer holds forged records),
 * liverun_slurm_doubles.c (a second job Slurm took for one submission) and
 * liverun_slurm_folder.c (the job folders: made, and trusted only when ours). Not a public
 * API. */
#ifndef TUNEDECK_LIVERUN_SLURM_PRIV_H
#define TUNEDECK_LIVERUN_SLURM_PRIV_H

#include "core/base/strlist.h"
#include "remote/live/livelog.h"
#include "remote/live/liverun_slurm.h"

/* A submission whose sbatch once went unanswered, and the job its run took. */
typedef struct {
    char name[192], id[32];
} LiveSlurmDoubted;
/* A job that doubles one (liveslurm_doubles), as its scancel goes. */
typedef struct {
    char id[32], kept[32], name[192];
} LiveSlurmDouble;
enum { LIVESLURM_DOUBLES_PER_CALL = 16 }; /* more wait for the next round */
typedef struct LiveSlurmById LiveSlurmById; /* liverun_slurm_byid.c */

struct LiveSlurm {
    LiveSlurmOptions o;
    char partition[128];   /* o.partition points here: the caller's may not outlive new() */
    SlurmJobInfoList jobs; /* the last good round */
    SlurmCall *round;      /* the round in flight: the driver never waits on slurmctld */
    long rounds;
    int64_t last_round_ms;
    int round_now;          /* a stop's exit line awaits Slurm's word: a round at once (tick) */
    int64_t first_round_ms; /* -1 before the first: early rounds stay within the cadence */
    long rounds_started;
    int active;   /* runs submitted and not seen ended */
    int outage;   /* rounds failed in a row */
    int down;     /* a call found the controller not answering (said once, until one does) */
    StrList ours; /* ids of our runs, for telling foreign jobs apart */
    StrList followed;    /* those of runs not ended: read by id when an answer is doubtful */
    LiveSlurmById *byid; /* a round whose answer was doubtful, reading ours by id; or NULL */
    int doubt_said;      /* rounds' answers hold doubtful records: said once, until not */
    /* the driver's nodes (watch; liverun_slurm_nodes.c) */
    char **names;
    size_t n_names;
    size_t *by_name;      /* indices into names, sorted by name */
    LiveNodeState *nodes; /* node i's state and others' GPUs there */
    SlurmCall *node_round;
    long node_rounds, looks;
    int64_t last_node_round_ms;
    /* when the last node round that answered was asked (-1 none): a job pending on a limit of
     * its size is taken as over it only once the nodes' states are read since (Slurm's
     * PartitionNodeLimit also says a node is down or drained) */
    int64_t states_asked_ms;
    int node_outage; /* node rounds failed in a row */
    int have_states, have_holds, look_now;
    StrList left_out;   /* usable nodes not added for their GPUs (none, too many): said once */
    int leftovers_said; /* an earlier run's batch jobs: looked for in the first round */
    char user[64];      /* ours: the name look-up (squeue --user) */
    unsigned nonce;     /* this driver's, in every job name: a submission's name is its own */
    long submissions;
    /* the last scancels of runs freed before they ended: started together, waited for
     * together by liveslurm_free (liveslurm_run_calls_end) */
    SlurmCall **finals;
    size_t n_finals, cap_finals;
    /* a node round listed no node (the nodes' states kept as read): said once until one does */
    int none_listed_said;
    /* submissions whose sbatch once got no answer, and the job their run took: a second job
     * under the name is cancelled (liverun_slurm_doubles.c) */
    LiveSlurmDoubted *doubted;
    size_t n_doubted, cap_doubted;
    StrList doubles_done;     /* doubles whose scancel succeeded: cancelled once, said once */
    StrList doubles_refused;  /* doubles whose scancel Slurm refused: said once, retried */
    SlurmCall *double_cancel; /* one scancel of doubles in flight, never waited on */
    LiveSlurmDouble flying[LIVESLURM_DOUBLES_PER_CALL];
    size_t n_flying;
    /* the other partitions' node lists, for pending jobs there (liverun_slurm_parts.c) */
    SlurmCall *part_round;
    LiveSlurmPartition *parts;
    size_t n_parts;
    int64_t last_part_round_ms;
    char parts_said[320]; /* the last trouble reading them, said once ("" none) */
};

/* The calls a run makes itself, one at a time. */
enum { RUN_CALL_NONE, RUN_CALL_SBATCH, RUN_CALL_LOOKUP, RUN_CALL_SCANCEL };
/* Which scancel: a pending job's (--state=PENDING), the checkpoint's TERM, the end, the copy
 * Slurm requeued (plain: pending, it has nothing to checkpoint; run again, its script ends
 * at once). */
enum { CANCEL_NONE, CANCEL_PENDING, CANCEL_TERM, CANCEL_KILL, CANCEL_REQUEUED };

typedef struct {
    LiveSlurm *s;
    char id[32], label[48]; /* id "" until sbatch answers (or its job is found by name) */
    char job_name[192];     /* unique to this submission (liveslurm_job_name) */
    char *dir;              /* the job's folder */
    char **argv;            /* sbatch's, until the job id is known */
    SlurmCall *call;        /* in flight: its sbatch, its look-up or a scancel; never waited on */
    int call_kind, call_cancel;
    int64_t call_since_ms;
    int maybe_submitted; /* an sbatch went unanswered: Slurm may hold its job (looked up
                            by name before any other sbatch) */
    int unanswered;      /* an sbatch of this submission ever went unanswered: once the run
                            has its job, any other under its name is a double */
    int fails;           /* calls for this run the controller did not answer, in a row */
    int64_t next_try_ms; /* and when the next may go (liveslurm_backoff_s) */
    char *out_path;
    long offset;
    char partial[4096];
    size_t plen;
    int partial_cut;
    JobProgress progress;
    /* its words: error event, else last output line that is not protocol (stdout and
     * stderr share the file) nor the batch script's exit line */
    JobWords said;
    long round_at_submit;
    int ran, ended, saved;
    int stop_asked, kill_asked;                    /* what the driver asked */
    int pending_cancel_sent, term_sent, kill_sent; /* and what went through */
    int script_rc; /* the batch script's exit line: its status; -1 before it */
    /* That line was read while line_round rounds had been (or were being) read; line_early: a
     * round begun after it still had the job RUNNING and never requeued. The line then
     * predates any requeue (slurmctld counts the restart before its TERM goes, and the
     * script prints its line after the TERM), so where Slurm keeps no record of the script's
     * status (a requeued job) it is the job's own line (liveslurm_line_saved). */
    long line_round;
    int line_early;
    int64_t running_since_ms;
    int64_t pending_since_ms; /* first round that saw the job pending; 0 before */
    int64_t over_limit_ms; /* first round that saw it pending on a limit of its size; 0 */
    int pending_said;         /* pending past LIVESLURM_PENDING_SAY_S: said once */
    /* Slurm took it off its GPUs (liveslurm_taken): how, said once by the driver through
     * LiveRunOps.preempted; a requeued copy is cancelled (requeue_cancel_sent once that
     * scancel went), the run ending once a round sees it ended */
    int taken, requeue_cancel_sent;
    char taken_how[200];
    int64_t suspended_ms; /* when a round first saw it SUSPENDED (said once); 0 when not */
    /* Slurm said it ended (or it left the controller's list) with no exit line read yet:
     * when, and the end in the driver's words; the run ends once the line comes or
     * exit_grace_s has passed (liverun_slurm.c, end_held) */
    int64_t end_seen_ms;
    char end_status[300];
    /* Slurm's record of the batch script's end, with that word (end_exit_known; 0 where
     * Slurm keeps none: a requeued job, a record gone): ExitCode=CODE:SIGNAL. The exit line's
     * status counts only where it agrees (liveslurm_line_saved). */
    int end_exit_known, end_exit_code, end_exit_signal;
    /* Slurm answered its sbatch and refused the job (or sbatch's answer held no job id):
     * the run ended "not started", which the driver takes as a refused start, not a death
     * (LiveRunOps.refused): how, and why in sbatch's words */
    int refused;
    LiveRefusal refusal;
    char refused_why[300];
    char state[24], waiting[96], granted[256], status[300];
} SlurmRun;

#define liveslurm_say(s, ...) livelog((s)->o.log, (s)->o.userdata, __VA_ARGS__)

/* Said once an outage, whichever call (round, sbatch, scancel) meets it first; and its end. */
void liveslurm_controller_lost(LiveSlurm *s, const char *why);
void liveslurm_controller_back(LiveSlurm *s);
/* A job id that is ours (told apart from other users' jobs), followed until its run ends
 * (liveslurm_unfollow); -1 when out of memory. */
int liveslurm_remember(LiveSlurm *s, const char *id);
void liveslurm_unfollow(LiveSlurm *s, const char *id);
/* A round is under way (its scontrol in flight, or ours read by id): a job id known now is
 * not in its answer. */
int liveslurm_round_flying(const LiveSlurm *s);
/* LIVERUN_SLURM's tick: starts a round when one is due, collects one in flight. */
void liveslurm_tick(void *ctx, int64_t now);
/* A job that is not ours (another user's, or one tunedeck did not start in this run). */
int liveslurm_is_foreign(const LiveSlurm *s, const SlurmJobInfo *j);
/* Steps a call without waiting; 1 once it is done. */
int liveslurm_call_poll(SlurmCall *k);
/* LIVERUN_SLURM's pollfds: the job round's and the node round's fds, when in flight. */
size_t liveslurm_pollfds(void *ctx, struct pollfd *fds, size_t cap, int64_t *deadline_ms);

/* liverun_slurm_end.c: the run's end, in the driver's words. */
void liveslurm_run_end(SlurmRun *r, const char *status);
/* Slurm says the job ended (status: the end in the driver's words), or its record is gone.
 * Its exit line (whether the TERM wrote a checkpoint) is the batch script's last write to
 * its output file, and on a shared file system (NFS, Lustre) that write can reach this node
 * after slurmctld has the job's end: concluded then, the run would count no checkpoint (a
 * preempted job started again fresh, a death restarted from an older checkpoint) and miss
 * its last progress lines. So the end is held: liveslurm_end_held, now and at each step
 * after (the output file read again first), ends the run as Slurm said once the line is
 * read, or exit_grace_s after Slurm said it (then said in the log), the checkpoint counted
 * (rank0_saved) when Slurm says it exited 0 or the line's status is 0 and Slurm's record of
 * the ended job (j, NULL for none) agrees (liveslurm_line_saved). A job that never ran
 * (no round saw it running, no output file) writes no line: ended at once. */
void liveslurm_ended_in_slurm(SlurmRun *r, const SlurmJobInfo *j, const char *status);
void liveslurm_end_held(SlurmRun *r);
/* Slurm's word on how the batch script ended, from its record of the ended job j (NULL: none,
 * as for a requeued job, whose script's status slurmctld drops, or a record gone): what the
 * exit line is checked against. */
void liveslurm_note_exit(SlurmRun *r, const SlurmJobInfo *j);
/* The exit line says the script exited 0 (the TERM's checkpoint written) and Slurm's record,
 * where it has one, agrees: ExitCode 0:0. The job's command can print the line itself as its
 * last output and then be killed (SIGKILL at the end of KillWait, a preemption's or our
 * stop's): Slurm then records the script's SIGKILL (0:9), and the line is not counted. With
 * no record (a requeued job), a line a later round saw the job still running after is not
 * counted either (line_early). */
int liveslurm_line_saved(const SlurmRun *r);

/* liverun_slurm_submit.c: collects the run's call if it has answered, then starts the next
 * one it needs (sbatch, or the look-up by name after an unanswered one; the scancel the
 * driver asked for), not before its back-off is over. Never waits. */
void liveslurm_run_calls(SlurmRun *r);
/* Why the run waits on the controller ("the controller (sbatch is retried)"); NULL when it
 * does not. */
const char *liveslurm_run_calls_waiting(const SlurmRun *r);
/* LIVERUN_SLURM's run_pollfds: the fds of the run's call in flight. */
size_t liveslurm_run_pollfds(void *run, struct pollfd *fds, size_t cap, int64_t *deadline_ms);
/* For freeing a run: its call stopped (the child killed and reaped), and its job cancelled
 * unless it ended: by id, or by its unique name when an sbatch may have been accepted. By
 * name even once ended when an sbatch of it ever went unanswered (r->unanswered: a second
 * job under the name may have been taken after the last job round looked) or answered
 * without a job id. That scancel is started, not waited for: liveslurm_finals_wait waits for
 * every run's at once, so a controller that does not answer costs one call's timeout, not
 * one per run. */
void liveslurm_run_calls_end(SlurmRun *r);
/* Waits for those scancels (each until it ends or its own deadline) and frees them. */
void liveslurm_finals_wait(LiveSlurm *s);

/* liverun_slurm_byid.c: a round whose answer holds doubtful records (slurm_jobinfo_read):
 * each followed job of ours is read by id (scontrol show -d job ID, a few at a time), its
 * text all ours and Slurm's. start takes the answer (answer left empty); collect steps the
 * calls without waiting: 0 while some fly, 1 with the round's jobs in *jobs (ours from their
 * own answers, none for a job Slurm no longer lists; every other record of the answer,
 * doubtful ones still marked), -1 with err when a call failed (as a round whose scontrol
 * failed). Either end frees the state; liveslurm_byid_free stops calls still in flight. */
int liveslurm_byid_start(LiveSlurm *s, SlurmJobInfoList *answer, Error *err);
int liveslurm_byid_collect(LiveSlurm *s, SlurmJobInfoList *jobs, Error *err);
size_t liveslurm_byid_pollfds(LiveSlurm *s, struct pollfd *fds, size_t cap, int64_t *deadline_ms);
void liveslurm_byid_free(LiveSlurm *s);

/* liverun_slurm_doubles.c: a submission whose sbatch once went unanswered (r->unanswered)
 * and has its job now is watched for a second job under its name; after each job round such
 * a double is cancelled (one scancel for all, not waited on) and said once; a refused
 * scancel is said once and tried again while a round lists the job. -1 when out of memory:
 * not watched, the double is cancelled only when the run is freed (by name,
 * liveslurm_run_calls_end), as is one taken after the last round. */
int liveslurm_doubted_add(LiveSlurm *s, const char *job_name, const char *id);
/* After a good job round: starts the scancel of the doubles found, unless one flies. */
void liveslurm_doubles_cancel(LiveSlurm *s);
/* Collects that scancel once it has answered (each tick). */
void liveslurm_doubles_collect(LiveSlurm *s);
/* What scancel -v did to one listed id, from its exit status and standard error. */
typedef enum {
    LIVESLURM_CANCEL_SENT,    /* "Terminating job ID" */
    LIVESLURM_CANCEL_NOTHING, /* exit 0, the id unnamed: not ours under that name, or ended */
    LIVESLURM_CANCEL_REFUSED, /* exit non-zero and the id unnamed: tried again */
    /* "Kill job error on job id ID: Invalid job id specified": Slurm no longer has the job,
     * which had ended (exit 1 where it was the only id; scancel 22.05, filtered by name) */
    LIVESLURM_CANCEL_ENDED,
} LiveSlurmCancelled;
int liveslurm_scancel_sent(const char *err_text, const char *id);
LiveSlurmCancelled liveslurm_cancel_outcome(int rc, const char *err_text, const char *id);
/* For liveslurm_free: the one in flight goes with the last scancels (liveslurm_finals_wait);
 * the records are freed. */
void liveslurm_doubles_free(LiveSlurm *s);
/* A call to wait for with the last scancels (liveslurm_finals_wait); run at once when out of
 * memory. */
void liveslurm_final_add(LiveSlurm *s, SlurmCall *k);

/* liverun_slurm_nodes.c: LIVERUN_SLURM's watch and nodes; the node-state round (started
 * and collected by the tick); the GPUs other users' jobs hold, after each job round. */
int liveslurm_watch(void *ctx, const char *const *names, const int *unusable, size_t n,
                    Error *err);
const LiveNodeState *liveslurm_nodes(void *ctx, size_t *n, long *looks);
void liveslurm_node_tick(LiveSlurm *s, int64_t now);
void liveslurm_count_holds(LiveSlurm *s);
void liveslurm_nodes_free(LiveSlurm *s);

/* liverun_slurm_parts.c: the other partitions' node lists, read (sinfo) on the node round's
 * clock while a pending job of another user in another partition names no nodes; the
 * claims counted again when they come. */
void liveslurm_parts_tick(LiveSlurm *s, int64_t now);
void liveslurm_parts_free(LiveSlurm *s);

/* The job folders (liverun_slurm_folder.c). DIR/NAME as an absolute path (DIR relative to
 * the working folder), made with the folders on the way (0755); caller frees. */
char *liveslurm_folder_make(const char *job_dir, const char *name, Error *err);
/* -1 unless the folder dir and the one it is in are ours and no one else's to write (the
 * one it is in may be root's, or sticky like /tmp); err names the folder, its owner or mode
 * ("is world-writable (mode 0777)"), what is expected and the fix (chmod go-w FOLDER).
 * missing_ok: a folder not there yet passes (the start makes it, ours). */
int liveslurm_folder_trusted(const char *dir, int missing_ok, Error *err);
/* LIVERUN_SLURM's check_folders: every job's folder that exists, before the run begins;
 * err "job NAME: ...", marked bad input. */
int liveslurm_check_folders(void *ctx, const char *job_dir, const char *const *names, size_t n,
                            Error *err);

#endif
