/* One tuning session, opened from a plain spec by `tunedeck tune` and by the console alike:
 * the cluster and job (the simulator, files, or what a journal recorded), the launcher chosen
 * by name and checked, the hosts' pool, the tuner with its journal hooks, and the remote
 * process groups a killed session left behind (orphans). A new backend plugs in here once. */
#ifndef TUNEDECK_SESSION_H
#define TUNEDECK_SESSION_H

#include <cJSON.h>

#include "core/journal/triallog.h"
#include "core/model/cluster.h"
#include "core/model/job.h"
#include "core/sim/simcluster.h"
#include "remote/launch/tuner.h"
#include "remote/session/login_hold.h"
#include "remote/session/login_steps.h"
#include "remote/session/release_wait.h"
#include "remote/session/tune_alloc.h"
#include "remote/session/tune_journal.h"
#include "remote/session/tune_orphans.h"
#include "remote/slurm/slurm_alloc.h"
#include "remote/ssh/hostpool.h"

/* SessionSpec.keep_hosts. USED: when the session reaches its hosts at all (it has no job,
 * so its hosts are watched or the live scheduler's, or its launcher is per-host or single);
 * a session whose trials all run here (local, sim, slurm) connects none, since each would
 * only read "down" there for a host nothing uses. ALL: whatever the launcher (the console's
 * live scheduler beside local tuning). */
enum { SESSION_KEEP_USED = 1, SESSION_KEEP_ALL = 2 };

typedef struct {
    /* Where the cluster and job come from: the simulator (sim), or an inventory and a job
     * file; on resume the objects the journal recorded (cluster, job then only name the
     * source in messages). No job on a real cluster: no tuner (the console's live
     * scheduler alone). */
    const char *sim;
    const char *cluster, *job;
    const cJSON *cluster_json, *job_json;
    /* --slurm [--partition P]: the controller's nodes here, as an inventory with only
     * "backend": "slurm" would give (instead of cluster) */
    int slurm;
    const char *slurm_partition;
    const char *job_command; /* --slurm: the live jobs' job_command (console --workload) */
    const char *launcher;    /* NULL: sim on the simulator, else the inventory's, else local */
    const char *trial_cmd;   /* NULL: the inventory's trial.command */
    const char *optimizer;
    long seed;
    int budget;
    double trial_timeout_s;
    int no_prune;            /* run every trial to its end (docs/optimizer.md) */
    int stop_when_converged; /* the stop rule from the start */
    const char *ssh_config;  /* NULL: ~/.ssh/config */
    int accept_new_host_keys;
    /* SESSION_KEEP_*: whether every host is connected at the start and kept (the console's
     * hosts view and live scheduler); 0: only the remote launchers get a pool, connected on
     * use. */
    int keep_hosts;
    int async_suggest;
    /* Tuner events, after the journal has them on disk (NULL: none). */
    TunerEventFn on_event;
    void *userdata;
    /* What the session stopped between trials (a dropped connection's leftover group), one
     * line each (NULL: said nowhere, journaled only). */
    TuneOrphanReportFn on_report;
    void *report_userdata;
    /* A key of the inventory or job file that tunedeck does not read but is one slip from one
     * it does ("synch": inventory_misspelt_warning, job_misspelt_warning), said once as the
     * files are read, with report_userdata (NULL: through on_report; files from a journal
     * are not said again). */
    TuneOrphanReportFn on_warning;
    /* The caller's loop steps the pool (the console's does, for its hosts view): a leftover
     * stop (before a trial, on resume, at the end) is begun and left to that loop, ended by
     * session_stop_step, instead of waited for; the tuner's trial waits meanwhile
     * (TunerBeforeLaunchFn's "not yet"). 0: every stop blocks its caller (`tune`). */
    int stops_on_loop;
    /* Once no trial can run for refused hosts (session_refused.c), the next trial waits (said
     * once, with what the operator can do: accept an unknown key, fix a file and reconnect)
     * and goes on once a host is no longer refused: the console's operator can accept a key
     * there. 0: the session stops (`tune`, exit 4). */
    int holds_refused;
    /* At the close, the release of the Slurm allocation waits a bounded time for a login node
     * that is down (remote/session/release_wait.h): its lines go to on_close_report (NULL:
     * on_report), and close_interrupted, asked at each step of the wait, ends it when nonzero
     * (the operator's interrupt: the allocation is then left as when the node stays down;
     * NULL: never). Both with report_userdata. */
    TuneOrphanReportFn on_close_report;
    int (*close_interrupted)(void *userdata);
    /* Asked while the Slurm allocation's salloc waits (here or on a login node): when
     * nonzero (the operator's interrupt) salloc is stopped, its queued job revoked, and the
     * open fails. With report_userdata; NULL: salloc waits its own --immediate. */
    int (*open_interrupted)(void *userdata);
} SessionSpec;

typedef struct {
    SessionSpec spec; /* as opened; its strings belong to the caller */
    SimCluster *sim;  /* NULL on a real cluster */
    const Cluster *cluster;
    const JobSpec *job; /* NULL: no tuning */
    Cluster *owned_cluster;
    JobSpec owned_job;
    HostPool *pool; /* NULL when nothing needs SSH */
    Tuner *tuner;   /* NULL without a job */
    char launcher[32];
    const char *trial_cmd;
    /* The journal; resume: replayed into the tuner at journal_begin. Without one
     * (--no-journal) it is never begun: its id stays empty, its events are dropped. */
    TuneJournal *journal;
    int with_journal;
    TuneSetup resumed; /* what a resumed session was started with */
    int resume;
    int resume_budget_set; /* resumed with the operator's --budget, not the journal's */
    int journal_open; /* journal_begin succeeded */
    TuneProcs procs;  /* the remote process groups its trials started */
    /* The slurm launcher, or an inventory with "backend": "slurm": the controller (here or
     * on the login node) and the allocation the trials run in (remote/slurm). */
    SlurmCtl *slurm;
    SlurmAlloc alloc;
    double release_wait_s; /* the inventory's "slurm" block's, else RELEASE_WAIT_DEFAULT_S */
    LoginHold login_hold;   /* trials wait while the login node is down */
    LoginSteps login_steps; /* what its drops left running there, cancelled when it is back */
    /* Resume: the allocations earlier runs left (their journal's word), each released before
     * the new salloc, its result ("released", "gone"; "" when it failed) journaled once the
     * journal is open. alloc_left: why the session's own could not be released at its close,
     * with the command that does (session_alloc_left). */
    TuneAllocLeft left[TUNE_ALLOC_LEFT_MAX];
    const char *left_result[TUNE_ALLOC_LEFT_MAX];
    size_t n_left;
    char alloc_left[ERROR_MSG_MAX];
    /* spec.stops_on_loop: the leftover stop under way (NULL: none), and the verdict of the
     * last one before a trial, kept for the tuner's next before_launch. */
    TuneStop *stop;
    int stop_before_trial; /* the stop under way is the next trial's own */
    int verdict_ready, verdict_rc;
    char verdict_why[ERROR_MSG_MAX];
    /* What its trials print besides the protocol (stderr, other lines), beside the journal
     * (core/journal/triallog.h); NULL without a journal. log_trial: the trial running now, by
     * the journal's number. */
    TrialLog *trial_log;
    int log_trial;
    int log_error_said;
    /* Machines whose refusal (host key, login, ...) was said (n_machines; NULL until one is), and whether
     * the session stopped since no trial could run without them (session_refused.c). */
    unsigned char *refused_said;
    int refused_stopped;
    /* A resume's machines its journal last left out (refused), those a trial lost
     * unreachable since did not reach and those a trial interrupted since used, checked
     * again before its first new trial (session_recheck.c; n_machines, NULL when none):
     * under way, or answered. */
    unsigned char *recheck;
    int *recheck_attempts; /* each one's HostInfo.attempts as its recheck began */
    /* The recheck was decided (its hosts connected, or none to check): once, before the
     * first new trial; a resume with none left decides when a budget raise gives one. */
    int recheck_decided;
    /* spec.holds_refused: the line said when the next trial began to wait for refused
     * hosts, kept while it waits ("" when it does not: session_refused_hold) */
    char refused_hold[600];
} Session;

/* with_journal: keep one (begun by session_journal_begin) in journal_dir, the journals'
 * folder main decided (cmd/paths.c; NULL: none, so a journal cannot start, nor a resume by
 * id). NULL: out of memory. */
Session *session_new(int with_journal, const char *journal_dir);
/* Resume, before session_open: reads the journal of ID (or a path) and fills spec with the
 * session it recorded; budget_set: the caller's spec->budget stays (refused when below the
 * trials the journal already has: the budget counts them too). */
int session_resume(Session *s, const char *id_or_path, SessionSpec *spec, int budget_set,
                   Error *err);
/* Builds the cluster, job, launcher, pool and tuner; err names the flag at fault. */
int session_open(Session *s, const SessionSpec *spec, Error *err);
/* A new session's journal is created, a resumed one replayed and reopened. No journal: 0. */
int session_journal_begin(Session *s, Error *err);
/* Resume: stops what the killed session's unfinished trials left running (before the first
 * trial); each line goes to report. With spec.stops_on_loop it is only begun (the first trial
 * waits for it); a stop already under way is waited for first. */
void session_stop_interrupted(Session *s, TuneOrphanReportFn report, void *userdata);
/* At the end: stops what the session's own trials left running where a connection dropped.
 * Begun only with spec.stops_on_loop, as above. On Slurm through a login node, the steps its
 * drops left are cancelled first, or said with the allocation whose release ends them
 * (login_steps_end: waited for, up to LOGIN_STEPS_WAIT_MS); session_stop_lost too. */
void session_stop_leftovers(Session *s, TuneOrphanReportFn report, void *userdata);
/* The console's quit: stops what dropped connections left that no trial has stopped yet
 * (those a stop before a trial could not reach, or that no later trial's hosts included),
 * journaling each result, unanswered ones too, and forgets them. Begun only with
 * spec.stops_on_loop, as above. */
void session_stop_lost(Session *s, TuneOrphanReportFn report, void *userdata);
/* spec.stops_on_loop: a leftover stop is under way. */
int session_stop_busy(const Session *s);
/* When it must end even if no host answered (clock_now_ms; -1: no stop under way). */
int64_t session_stop_deadline(const Session *s);
/* From the caller's loop, after the pool's step: ends the stop once every host answered or
 * its deadline passed (each result journaled and reported as the blocking stop does).
 * Returns whether one is still under way. */
int session_stop_step(Session *s, int64_t now_ms);
/* Waits for a leftover stop still under way (its results journaled and reported), then
 * writes the journal's closing line (if it began). */
void session_journal_end(Session *s);
/* tune's SIGINT/SIGTERM: the running trial is stopped, waited for and left without an
 * outcome (tuner_halt: the journal keeps it unfinished, a resume marks it interrupted; its
 * part of the trial log ends "interrupted: why"); nothing more starts. The records stay for
 * the caller's summary until session_close. */
void session_interrupt(Session *s, const char *why);
/* The trial log's file once a trial printed a line there, in this run or an earlier one of
 * the session (NULL: none written, or no journal); how many lines trial `trial` (1..n, as
 * TrialRecord.trial) printed, whichever run it was of (the log read back); and whether they
 * were left out whole to keep the log's total bound. */
const char *session_trial_log(const Session *s);
size_t session_trial_log_lines(const Session *s, int trial);
int session_trial_log_left_out(const Session *s, int trial);
/* Why the trial log could not be written (its path, what failed, the system's reason; what
 * was written before stays), or NULL. */
const char *session_trial_log_error(const Session *s);
/* Whether the session stopped because no trial could run, the hosts refused for good (a key
 * unknown, changed or revoked, a login or an identity refused, ...): a remote refusal, not a
 * failed run (tune exits 4). */
int session_refused_stopped(const Session *s);
/* spec.holds_refused: while the next trial waits for refused hosts, the line that said why
 * and what lets it go on (its storage lives as long as the session); "" otherwise. */
const char *session_refused_hold(const Session *s);
/* Frees the tuner, pool, cluster and job (the journal stays for its id and path), and
 * releases the Slurm allocation the session made (a `slurm_allocation_released` line),
 * waiting up to release_wait_s for a login node that is down (spec.on_close_report,
 * spec.close_interrupted). */
void session_close(Session *s);
/* After session_close: why the session's Slurm allocation could not be released (the login
 * node or the controller did not answer its scancel), naming the job and the command that
 * releases it; NULL when released or none. The journal keeps the allocation for the next
 * resume of the session to release. */
const char *session_alloc_left(const Session *s);
void session_free(Session *s); /* closes it too */

#endif
