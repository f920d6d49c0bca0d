/* Job control for the scheduler's live mode: a training job starts on a host from the
 * inventory's job command template with its placeholders filled in (each value
 * single-quoted; docs/scheduler-live.md lists them), is stopped by a signal to its process group over a separate
 * channel (so it can checkpoint), restarts at a new size, and reports its `progress`
 * lines (DESIGN §5.1). */
#ifndef TUNEDECK_JOBCTL_H
#define TUNEDECK_JOBCTL_H

#include "core/model/jobtemplate.h"
#include "core/model/protocol.h"
#include "remote/ssh/hostpool.h"

typedef struct JobRun JobRun;

/* How many of a run's latest progress lines keep their (step, loss): more than a backend
 * reads between two driver steps (a Slurm job's file read after a late wake-up). */
enum { JOBPROGRESS_POINTS = 256 };

typedef struct {
    long step;
    double loss; /* NAN: not given */
} JobLossPoint;

typedef struct {
    long step;
    double epoch, examples_per_s; /* -1: not given */
    double loss;                  /* NAN: not given (any finite value is a loss) */
    int seen; /* progress lines so far */
    /* The run's first progress line: where it started (a resumed run's first step). A
     * backend may read several lines at once, so `step` is already a later one by then. */
    long first_step;
    double first_loss; /* NAN: not given */
    /* Protocol lines refused so far ("loss ... found NaN (training diverged?)"): the first
     * one's reason, terminal-safe, so that the driver can say it. */
    int refused;
    char first_refused[200];
    /* Every line's step and loss, not only the latest: each is a point of the job's loss
     * curve. Line i (from 0) is at points[i % JOBPROGRESS_POINTS] while i >= seen -
     * JOBPROGRESS_POINTS. */
    JobLossPoint points[JOBPROGRESS_POINTS];
} JobProgress;

/* A run's progress before its first line: nothing given (loss NAN, epoch and rate -1). */
JobProgress jobctl_progress_none(void);
/* Counts a protocol line the job printed that was refused, keeping the first reason. */
void jobctl_progress_refused(JobProgress *p, const char *why);
/* A progress line the job printed (ev->kind EVENT_PROGRESS): the latest, the first, and its
 * point among the latest JOBPROGRESS_POINTS. */
void jobctl_progress_note(JobProgress *p, const TrialEvent *ev);

/* A failed run's own words, both backends': its last error event's text, which a later line
 * does not replace, else its last other line; made terminal-safe when stored, as
 * `schedule --live` prints it (a progress bar's colours and \r). */
typedef struct {
    char text[200];
    int from_error;
    int left_noted; /* the wrapping shell named what the run left: later lines are theirs */
} JobWords;
/* Notes a line the run printed (error: an error event's text); an empty one says nothing. */
void jobctl_words_note(JobWords *w, const char *line, int error);
/* Notes a line of an SSH run's stderr, which its wrapping shell (groupstop.h) shares, as
 * groupstop_own_part reads it (a trial's launcher reads it so too): its note on what the job
 * left and its end line are not the job's words, nor is what the leftovers print after the
 * note (a "Terminated" of theirs would read as the failure's cause); the job's last line
 * without a newline, before the note or the end line on its line, is. len: the line's length
 * as the channel gave it (rexec_line_len), past a NUL the job printed, as a trial's is read. */
void jobctl_words_stderr(JobWords *w, const char *line, size_t len);

/* Every placeholder a job_command may use. */
#define JOBCTL_PLACEHOLDERS JOBTEMPLATE_PLACEHOLDERS /* one list, checked at load too */

/* The host:slots file's name, in the job's folder (the command runs there). */
#define JOBCTL_HOSTFILE "tunedeck-hostfile"

/* The wrapping shell outlives the SIGTERM sent to the job's group: it waits for the job to
 * write its checkpoint and exits with the job's status. A SIGTERM that lands while the shell
 * still sets the job up (its folder, lock, hostfile) must not be lost with a `trap :`: the
 * job would start without ever seeing it and be killed stop_timeout_s later with no
 * checkpoint. So the trap remembers it, and the check just before the job ends the shell
 * instead (143, the status of a shell the signal killed). td_term is emptied first: a value
 * inherited from the remote environment must not stop every job. */
#define JOBCTL_TERM_TRAP "td_term=; trap 'td_term=1' TERM"
#define JOBCTL_TERM_CHECK                                                                      \
    "if [ -n \"$td_term\" ]; then echo 'tunedeck: asked to stop before the job started: not "   \
    "started' >&2; exit 143; fi"

/* One host of an allocation. */
typedef struct {
    const char *addr;   /* its address: {hosts}, {master_addr}, the hostfile */
    int gpus;           /* GPUs the job holds there */
    const int *gpu_ids; /* their indices (gpus of them): {gpu_ids}, CUDA_VISIBLE_DEVICES */
} JobHost;

typedef struct {
    int gpus; /* the total over every host: {gpus} */
    const JobHost *hosts;
    size_t n_hosts;   /* {nnodes} */
    size_t node_rank; /* the host this command line runs on: {node_rank}, {gpus_per_host} */
    int master_port;  /* {master_port} */
    const char *resume; /* checkpoint path, or "" for a fresh start */
} JobAlloc;

/* The command line for an allocation: placeholders replaced by quoted values. A template
 * with an unknown {placeholder} is refused. Caller frees. */
char *jobctl_command(const char *template_text, const JobAlloc *a, Error *err);

/* Starts the job on `host` of the pool (the pool must outlive it). mark: the run's
 * TUNEDECK_RUN_MARK (GROUPSTOP_MARK_CHARS lowercase hex digits, groupstop_mark_ok; NULL or ""
 * for none; another is refused), exported by its wrapping shell to the command, as a trial's
 * launch does, so that the stop at the run's end (and the guard's) finds what the job started
 * with setsid: the first run exports this one as given. Each relaunch of a job started with a
 * mark gets a fresh one (orphans_mark_new): the old run's guard, KILL or own stop goes by the
 * old mark and never reaches the new run. */
JobRun *jobctl_start(HostPool *p, size_t host, const char *template_text, const JobAlloc *a,
                     const char *mark, Error *err);
/* The text a run's exec channel is given: the guard, then the command handed to the wrapping
 * shell (groupstop_trial_sh) with mark (NULL or "" for none) exported to it. Caller frees;
 * NULL when memory runs out. */
char *jobctl_launch_text(const char *command, const char *mark);
/* Sends a signal (SIGTERM: checkpoint and exit) to the job's process group; SIGKILL also to
 * every process that carries the run's mark (groupstop_kill_command). */
int jobctl_signal(JobRun *j, int signo, Error *err);
/* jobctl_signal's remote text for group pgid and the run's mark (NULL or "" for none). Caller
 * frees; NULL (err) for a signal with no name or when memory runs out. */
char *jobctl_signal_text(int signo, long pgid, const char *mark, Error *err);
/* Stops the job (SIGTERM) and starts it again with a new allocation and a fresh mark once it
 * has exited and the signal sent to it was delivered. An old run that ended without its exit
 * status (jobctl_may_linger), other than on a SIGKILL of jobctl_signal that was delivered, is
 * not restarted: jobctl_status says so, and every later call fails at once (-1, err). The way
 * out: stop what is left of it on the host (its group jobctl_pgid, its processes that carry
 * jobctl_mark), then jobctl_free it and jobctl_start the job again. -1 with nothing pending
 * when the TERM cannot be sent. */
int jobctl_restart(JobRun *j, const JobAlloc *a, Error *err);
/* jobctl_step's decision on a pending restart: 0 wait (nothing pending, the old run or the
 * signal sent to it not over yet), 1 relaunch, -1 refuse (lingers_on: the old run may still run
 * on the host). */
int jobctl_relaunch_due(int pending, int x_done, int signaller_done, int lingers_on);
/* Call after every hostpool_step: launches a pending restart. */
void jobctl_step(JobRun *j);
int jobctl_running(const JobRun *j);
int jobctl_restarts(const JobRun *j);
long jobctl_pgid(const JobRun *j); /* 0 until the host reported it */
const char *jobctl_mark(const JobRun *j); /* the current run's mark, or "" */
/* The run ended without its wrapping shell's own exit status (which it gives only once the
 * job is over): its connection dropped or was closed, or the shell was killed by a signal
 * (also what sshd reports when its session process is killed, with the job left running),
 * so its processes may still run on the host. */
int jobctl_may_linger(const JobRun *j);
const JobProgress *jobctl_progress(const JobRun *j);
/* After the job ended: "exited 0", "killed by SIGTERM", "ssh failed: ..."; after a restart
 * refused, "not restarted: ..."; after a relaunch that could not start, "restart failed: ...". */
const char *jobctl_status(const JobRun *j);
void jobctl_free(JobRun *j);

#endif
