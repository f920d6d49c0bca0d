/* Trial launchers, chosen by name from a table (DESIGN §3): each runs one trial of a
 * schedule and turns what comes back into an Observation. Non-blocking: the caller's poll
 * loop drives every run through pollfds()/step(), so nothing here ever blocks. */
#ifndef TUNEDECK_LAUNCHER_H
#define TUNEDECK_LAUNCHER_H

#include <poll.h>
#include <stddef.h>
#include <stdint.h>

#include "core/base/stream.h"
#include "core/model/observation.h"

typedef struct SimCluster SimCluster;

/* Called for every line that is log text (not a protocol event), for the console's log. */
typedef void (*LaunchLogFn)(void *userdata, const char *machine, StreamKind stream,
                            const char *line);
/* per-host/single: a remote part of trial `trial` reports its process group on `machine`
 * (sshd makes each command a session leader), so a journal can find it after a crash. */
/* A trial's process group on a machine, and its mark: the random TUNEDECK_RUN_MARK its
 * processes on that machine carry (one per launch and machine), by which a later stop knows
 * them from any other, even those that left the group (orphans.h). */
typedef void (*LaunchProcFn)(void *userdata, int trial, const char *machine, long pgid,
                             const char *mark);
/* Why a group's end was not seen (LaunchConfig.on_proc_lost): each leaves it possibly running
 * for its own reason, and the journal says which. */
typedef enum {
    PROC_LOST_DROPPED,         /* its connection dropped: a drop kills nothing there */
    PROC_LOST_FAILED,          /* its command failed, and no stop of what it left ran */
    PROC_LOST_STOP_UNANSWERED, /* a stop of its group (or of what its command left) was sent
                                * but not seen to run to its end */
} ProcLostCause;
typedef void (*LaunchProcLostFn)(void *userdata, int trial, const char *machine, long pgid,
                                 const char *mark, ProcLostCause cause);
/* slurm through a login node: at the trial's end, its steps ("JOB.STEP JOB.STEP ...") when
 * the login node's connection dropped under its srun: nobody saw them end, and no scancel
 * could reach them; they may still run there. */
typedef void (*LaunchStepsFn)(void *userdata, int trial, const char *steps);
/* Every iteration event as it arrives (one per host for per-host trials). Returning non-zero
 * stops the trial as tuner_cancel would: it ends TRIAL_CANCELLED with what it measured. */
typedef int (*LaunchIterFn)(void *userdata, int iter, double time_s);
/* Each line of the command's output before it is read, for a command whose lines carry a
 * prefix of its own (the slurm launcher's `srun --label`): returns the line to read in its
 * place (valid until the next call) or NULL for none yet (a piece of a longer line). A line
 * given here that turns out to be log text reaches on_log before the next line comes here. */
typedef const char *(*LaunchLineFn)(void *userdata, StreamKind stream, const char *line);

typedef struct {
    const char *command;     /* local/per-host/single: the trial command */
    double timeout_s;        /* whole-trial deadline; default 600 */
    SimCluster *sim;         /* sim launcher: the simulated cluster answering trials */
    uint64_t seed;           /* sim launcher: noise seed (combined with the trial number) */
    void *remote;            /* per-host/single: the remote layer's host pool; slurm: the
                                login node's session (NULL: srun runs here) */
    const char *remote_host; /* single: the pool's host to run on instead of
                                trial.launch_host (slurm: the login node) */
    const char *slurm_job;   /* slurm: the allocation its steps run in (remote/slurm) */
    int slurm_het;           /* slurm: one component per GPU count, in machine order */
    int ranks_elsewhere;     /* local: the command starts per-device ranks itself (the slurm
                                launcher's srun client): no fan-out here */
    LaunchLogFn on_log;
    LaunchLineFn on_line; /* optional, local/single; shares userdata with on_log */
    LaunchProcFn on_proc; /* optional; shares userdata with on_log */
    /* optional, per-host/single: at the trial's end, a group not seen to end (its connection
     * dropped, its command failed, or its stop went unanswered): it may still run there. */
    LaunchProcLostFn on_proc_lost;
    void *userdata;
    LaunchStepsFn on_steps_left; /* optional, slurm; its own userdata: */
    void *steps_userdata;
    LaunchIterFn on_iteration; /* optional: the tuner's pruning */
    void *iter_userdata;
} LaunchConfig;

typedef struct {
    const char *name;
    void *(*start)(const LaunchConfig *cfg, const Schedule *s, Error *err);
    /* Fills up to cap pollfds; sets *deadline_ms (monotonic, clock_now_ms) to its next timer
     * or leaves it untouched. Returns how many fds were filled. */
    size_t (*pollfds)(void *run, struct pollfd *fds, size_t cap, int64_t *deadline_ms);
    /* Handles ready fds (the same array pollfds filled, after poll) and expired deadlines. */
    void (*step)(void *run, const struct pollfd *fds, size_t n, int64_t now_ms);
    int (*finished)(const void *run);
    /* After finished: the outcome; the caller owns it. */
    Observation *(*result)(void *run);
    /* Stops the trial now; finished() becomes true with status TRIAL_CANCELLED. */
    void (*cancel)(void *run);
    void (*free)(void *run);
} LauncherKind;

const LauncherKind *launcher_find(const char *name);
const char *launcher_names(void);

/* For launchers that run a command: a cancel or a timeout names the trial's outcome whatever
 * the command did. Returns 1 when one of them did. */
int launcher_end_by_us(Observation *o, int cancelled, int timed_out, double timeout_s);
/* When the output had a refused line: a failed trial's reason gets "; first bad line: ERROR";
 * an ok trial keeps its status, and "first bad line: ERROR" is its reason (the note that
 * `tune`, `tune --json`, the journal and the console show). */
void launcher_note_bad_line(Observation *o, const char *protocol_error);

/* Calls cfg->on_iteration for an iteration event; returns 1 when it asks for a stop. */
int launcher_iteration_stop(const LaunchConfig *cfg, const TrialEvent *ev);
/* After on_iteration asked for a stop at iteration stop_iter, whether an event is past the
 * measurement (a later iteration, a done or error event) and is to be left out: what a trial
 * prints between the decision and its stop depends on timing, so keeping it would make the
 * observation differ between launchers and runs. */
int launcher_past_stop(int stop_iter, const TrialEvent *ev);

/* The line a trial reads on standard input: its schedule with a fresh secret of its own
 * ("ps_secret", core/base/secret.h), which its parameter servers ask every peer to prove.
 * It travels only there: over SSH's encrypted channel, a local pipe or srun's stdin, never
 * on a command line, in the environment, the journal or a log. A trial with per-device
 * ranks gets no secret (no tunedeck-worker PS runs in it; its fan-out keeps the input in a
 * file). Free with launcher_input_free. */
char *launcher_trial_input(const Schedule *s, size_t *len, Error *err);
/* Wipes the input (it holds the secret) and frees it; NULL is fine. */
void launcher_input_free(char *input, size_t len);

/* Drives a started run (k->start) with its own poll loop until it has finished: 0, or -1
 * when poll failed (errno; the run is not finished then). */
int launcher_wait(const LauncherKind *k, void *run);
/* Runs one trial to the end with its own poll loop (headless use and tests). */
Observation *launcher_run_blocking(const LauncherKind *k, const LaunchConfig *cfg,
                                   const Schedule *s, Error *err);

#endif
