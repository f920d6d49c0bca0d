/* `tunedeck tune`: a headless tuning session on the simulator or a real cluster; prints a
 * table, or with --json exactly one result object on standard output (tune_report.c). */
#include <getopt.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "cmd/commands.h"
#include "cmd/flags.h"
#include "cmd/interrupts.h"
#include "cmd/paths.h"
#include "cmd/tune_interrupted.h"
#include "cmd/tune_report.h"
#include "core/base/evloop.h"
#include "core/base/exitcode.h"
#include "core/journal/triallog.h"
#include "core/opt/prune.h"
#include "remote/launch/tuner.h"
#include "remote/session/session.h"

static void usage(FILE *out)
{
    fprintf(out,
            "usage: tunedeck tune (--sim SETTING:NETWORK[:BATCH] | --cluster FILE --job FILE)\n"
            "                     [--launcher NAME] [--trial-cmd CMD] [--optimizer NAME]\n"
            "                     [--budget N] [--seed N] [--trial-timeout S] [--json]\n"
            "                     [--no-prune] [--stop-when-converged]\n"
            "                     [--no-journal] [--accept-new-host-keys]\n"
            "       tunedeck tune --resume ID [--budget N] [--json]\n"
            "\n");
    flags_help_sim(out, "tune on the embedded simulated cluster", "");
    fprintf(out,
            "  --cluster FILE     a cluster inventory (JSON); with --job FILE, a job file\n"
            "  --launcher NAME    how trials run: %s\n"
            "                     (default: sim with --sim, else the inventory's\n"
            "                     trial.launch, else local)\n"
            "  --trial-cmd CMD    the trial command, run through /bin/sh -c; it reads the\n"
            "                     schedule on stdin and prints protocol v1 lines\n"
            "  --optimizer NAME   %s\n"
            "                     (default bespoke)\n"
            "  --budget N         trials to run (default 10)\n"
            "  --seed N           seed for the optimizer and the simulator (default 1)\n"
            "  --trial-timeout S  a trial running longer fails (default 600; on Slurm\n"
            "                     rounded up to whole minutes, Slurm's time limit)\n"
            "  --no-prune         run every trial to its end (by default a trial stops\n"
            "                     once %d of its iterations are all over %gx the best\n"
            "                     trial's time, %gx during warm-up, and the first\n"
            "                     trial of a job of %d+ iterations is a %d-iteration\n"
            "                     probe)\n"
            "  --stop-when-converged  stop before the budget once %d suggestions in a row\n"
            "                     could gain no more over the best time than the model's\n"
            "                     error on recent trials, and expected under %g%% gain\n"
            "  --json             print one JSON result object on stdout\n"
            "  --resume ID        go on with a session from its journal (`tunedeck sessions`)\n"
            "  --no-journal       keep no journal (sessions live in\n"
            "                     $TUNEDECK_STATE_DIR/sessions, else\n"
            "                     $XDG_STATE_HOME/tunedeck/sessions, else\n"
            "                     ~/.local/state/tunedeck/sessions)\n"
            "  --accept-new-host-keys  per-host/single: add unknown host keys to known_hosts\n"
            "                     (a changed key is always refused)\n",
            launcher_names(), optimizer_names(), PRUNE_MIN_ITERATIONS, PRUNE_DEFAULT_K, PRUNE_DEFAULT_K * PRUNE_WARMUP_ALLOWANCE,
            2 * PRUNE_PROBE_ITERATIONS, PRUNE_PROBE_ITERATIONS,
            TUNER_CONVERGED_STREAK, 100 * TUNER_CONVERGED_EI_FRACTION);
    fprintf(out,
            "\n"
            "Ctrl-C or SIGTERM stops the running trial, prints the trials so far and the\n"
            "command that resumes the session, and exits 130 or 143. What trials print\n"
            "besides the protocol (stderr, other lines) is kept in ID.log beside the\n"
            "journal, the first %d and last %d KiB of each trial, %d MiB in all (the\n"
            "latest and the failed trials kept first).\n",
            TRIALLOG_HEAD_BYTES >> 10, TRIALLOG_TAIL_BYTES >> 10, TRIALLOG_TOTAL_BYTES >> 20);
}

typedef struct {
    const char *sim, *cluster, *job, *launcher, *trial_cmd, *optimizer;
    long budget, seed;
    double timeout_s;
    const char *resume, *setup_flag; /* setup_flag: a flag --resume takes from the journal */
    int budget_set, no_journal, no_prune, stop_when_converged;
    int json, accept_keys;
} TuneArgs;

static int parse_args(int argc, char **argv, TuneArgs *a)
{
    static const struct option LONG[] = {
        {"sim", required_argument, 0, 'S'},       {"cluster", required_argument, 0, 'c'},
        {"job", required_argument, 0, 'j'},       {"launcher", required_argument, 0, 'l'},
        {"trial-cmd", required_argument, 0, 't'}, {"optimizer", required_argument, 0, 'o'},
        {"budget", required_argument, 0, 'b'},    {"seed", required_argument, 0, 's'},
        {"trial-timeout", required_argument, 0, 'T'}, {"json", no_argument, 0, 'J'},
        {"resume", required_argument, 0, 'R'},    {"no-journal", no_argument, 0, 'N'},
        {"no-prune", no_argument, 0, 'P'},   {"stop-when-converged", no_argument, 0, 'C'},
        {"accept-new-host-keys", no_argument, 0, 'A'},
        {"help", no_argument, 0, 'h'},            {0, 0, 0, 0}};
    memset(a, 0, sizeof *a);
    a->budget = 10;
    a->seed = 1;
    a->timeout_s = 600;
    a->optimizer = optimizer_find("bespoke") ? "bespoke" : "random";
    int c;
    optind = 1;
    opterr = 0;
    int li = -1;
    while ((c = flags_getopt("tune", argc, argv, LONG, &li)) != -1) {
        /* By the option's own name: argv[optind - 1] is its value in "--seed 3". */
        if (c > 0 && strchr("ScjltosTNPC", c) && li >= 0)
            a->setup_flag = LONG[li].name;
        li = -1;
        switch (c) {
        case 'R': a->resume = optarg; break;
        case 'N': a->no_journal = 1; break;
        case 'P': a->no_prune = 1; break;
        case 'C': a->stop_when_converged = 1; break;
        case 'S': a->sim = optarg; break;
        case 'c': a->cluster = optarg; break;
        case 'j': a->job = optarg; break;
        case 'l': a->launcher = optarg; break;
        case 't': a->trial_cmd = optarg; break;
        case 'o': a->optimizer = optarg; break;
        case 'J': a->json = 1; break;
        case 'A': a->accept_keys = 1; break;
        case 'b':
            a->budget_set = 1;
            if (flags_long("tune", "--budget", optarg, 1, 100000, &a->budget) < 0)
                return EXIT_USAGE;
            break;
        case 's':
            if (flags_long("tune", "--seed", optarg, 0, 1L << 62, &a->seed) < 0)
                return EXIT_USAGE;
            break;
        case 'T':
            if (flags_double("tune", "--trial-timeout", optarg, 0.001, 1e7, &a->timeout_s) < 0)
                return EXIT_USAGE;
            break;
        case 'h': usage(stdout); return 1;
        default:
            return EXIT_USAGE; /* flags_getopt said why */
        }
    }
    if (optind < argc) {
        fprintf(stderr, "tunedeck tune: unexpected argument '%s' (try --help)\n", argv[optind]);
        return EXIT_USAGE;
    }
    if (a->resume && a->setup_flag) {
        fprintf(stderr, "tunedeck tune: --resume: '--%s' comes from the session's journal; only "
                        "--budget and --json go with --resume\n",
                a->setup_flag);
        return EXIT_USAGE;
    }
    if (a->resume)
        return 0;
    if (!a->sim == !a->cluster) {
        fprintf(stderr, "tunedeck tune: expected either --sim SPEC or --cluster FILE --job FILE\n");
        return EXIT_USAGE;
    }
    if (a->cluster && !a->job) {
        fprintf(stderr, "tunedeck tune: --cluster: expected a --job FILE with it\n");
        return EXIT_USAGE;
    }
    if (a->sim && a->job) {
        fprintf(stderr, "tunedeck tune: --job: the simulator brings its own job; drop --job "
                        "or use --cluster\n");
        return EXIT_USAGE;
    }
    return 0;
}

/* The session the flags (or, with --resume, its journal) describe. */
static int spec_from_args(const TuneArgs *a, Session *ses, SessionSpec *spec)
{
    memset(spec, 0, sizeof *spec);
    spec->sim = a->sim;
    spec->cluster = a->cluster;
    spec->job = a->job;
    spec->launcher = a->launcher;
    spec->trial_cmd = a->trial_cmd;
    spec->optimizer = a->optimizer;
    spec->seed = a->seed;
    spec->budget = (int)a->budget;
    spec->trial_timeout_s = a->timeout_s;
    spec->no_prune = a->no_prune;
    spec->stop_when_converged = a->stop_when_converged;
    spec->ssh_config = getenv("TUNEDECK_SSH_CONFIG");
    spec->accept_new_host_keys = a->accept_keys;
    if (!a->resume)
        return 0;
    Error err;
    if (session_resume(ses, a->resume, spec, a->budget_set, &err) < 0) {
        fprintf(stderr, "tunedeck tune: --resume: %s\n", err.msg);
        /* as before the lock came first: the work (that session's) is there, not started;
         * and a journal that cannot be written here is one the session could not write */
        if (tune_journal_running(ses->journal) || tune_journal_unwritable(ses->journal))
            return EXIT_FAILED;
        return exitcode_for(&err, EXIT_USAGE);
    }
    return 0;
}

/* Lines about the process groups stopped, on stderr. */
static void report_stderr(void *userdata, const char *line)
{
    (void)userdata;
    fprintf(stderr, "tunedeck tune: %s\n", line);
}

/* Opens the session and its journal; says why not on stderr and returns the exit status
 * (a bad option value, a bad input file, a journal that cannot begin). */
static int open_session(const TuneArgs *a, Session *ses, const SessionSpec *spec)
{
    Error err;
    if (session_open(ses, spec, &err) < 0) {
        fprintf(stderr, "tunedeck tune: %s\n", err.msg);
        return exitcode_for(&err, EXIT_USAGE);
    }
    if (session_journal_begin(ses, &err) < 0) {
        fprintf(stderr, "tunedeck tune: %s%s\n", err.msg,
                a->resume ? "" : " (--no-journal runs without one)");
        return EXIT_FAILED;
    }
    if (ses->journal_open)
        fprintf(stderr, "tunedeck tune: session %s (journal %s)\n", tune_journal_id(ses->journal),
                tune_journal_path(ses->journal));
    return 0;
}

static volatile sig_atomic_t interrupted_by, interrupts, closing;
static sig_atomic_t interrupts_before_close;

/* The first signal ends the session; one more while its trial is being stopped only says
 * that this goes on: ending here would lose the summary and could leave the trial's
 * processes (or its Slurm steps and allocation) behind. At the close, one more ends the wait
 * for a login node that is down (close_session). write(2): async-signal-safe. */
static void on_interrupt(int sig)
{
    interrupts++;
    if (interrupted_by) {
        static const char MSG[] = "tunedeck tune: still stopping (the running trial, then "
                                  "the session); the summary and the command to resume "
                                  "follow\n";
        ssize_t n = 0;
        if (!closing)
            n = write(STDERR_FILENO, MSG, sizeof MSG - 1);
        (void)n;
        return;
    }
    interrupted_by = sig;
}

/* The session's close, waiting for a login node that is down: ended by a signal that came
 * after the one that ended the session (the first one, if any, stopped the trials; the
 * wait still runs for it, as the release is what it asked for too). */
static int close_interrupted(void *userdata)
{
    (void)userdata;
    return interrupts > interrupts_before_close;
}

/* The session's open (the Slurm allocation's salloc) ends at the first signal. */
static int open_interrupted(void *userdata)
{
    (void)userdata;
    return interrupted_by != 0;
}

static void interrupts_note(Interrupts *saved);

/* Closes the session; a Slurm allocation it could not release (the login node down at the
 * end, past the wait for it) is said plainly, with the command that releases it: left in
 * silence, it would hold the cluster's GPUs until its time limit. -1 then. A session that
 * ended without a signal notes one again while it waits for the login node, so that Ctrl-C
 * ends the wait (the allocation said as left) rather than tunedeck; the signal then ends
 * tunedeck as it would have, after the message (the caller sees interrupted_by). */
static int close_session(Session *ses)
{
    Interrupts old;
    int signalled = interrupted_by != 0;
    if (!signalled)
        interrupts_note(&old);
    interrupts_before_close = interrupts;
    closing = 1;
    session_close(ses);
    if (!signalled)
        interrupts_restore(&old);
    if (!session_alloc_left(ses))
        return 0;
    fprintf(stderr, "tunedeck tune: %s\n", session_alloc_left(ses));
    return -1;
}

static int done_or_interrupted(void *t)
{
    return interrupted_by || tuner_done(t);
}

static void wake_only(void *ctx, int64_t now_ms)
{
    (void)ctx, (void)now_ms;
}

/* SIGINT and SIGTERM only note the signal from here on, for the caller to stop the running
 * trial as a cancel does (its remote processes, its Slurm steps), print the summary, close
 * the session (the allocation) and end as the signal would have; they stay noted until then.
 * From before the session opens: a signal during the Slurm allocation's salloc (its own
 * process group, which the terminal's Ctrl-C does not reach) ended tunedeck and left salloc
 * to be granted an allocation no one released; now the session opens, then is closed,
 * releasing it. A signal ignored at start stays ignored. */
static void interrupts_note(Interrupts *saved)
{
    interrupts_catch(saved, on_interrupt);
}

/* Runs the session until its budget is spent, or until a signal noted (interrupts_note):
 * then it returns the signal. The journal stays that of an interrupted session. */
static int run_interruptible(Tuner *t)
{
    EvLoop *l = evloop_new();
    if (!interrupted_by && l && tuner_attach(t, l) > 0 &&
        evloop_wake_every(l, 100, wake_only, NULL) > 0)
        evloop_run(l, done_or_interrupted, t, -1);
    evloop_free(l);
    return interrupted_by;
}

int cmd_tune(int argc, char **argv)
{
    TuneArgs a;
    int rc = parse_args(argc, argv, &a);
    if (rc)
        return rc == 1 ? 0 : rc;
    Session *ses = session_new(!a.no_journal || a.resume, paths_sessions(NULL));
    if (!ses) {
        fprintf(stderr, "tunedeck tune: out of memory\n");
        return EXIT_FAILED;
    }
    SessionSpec spec;
    if ((rc = spec_from_args(&a, ses, &spec)) == 0) {
        spec.on_report = report_stderr;
        spec.report_userdata = NULL;
        spec.close_interrupted = close_interrupted;
        spec.open_interrupted = open_interrupted;
    }
    Interrupts old_handlers;
    interrupts_note(&old_handlers);
    if (rc || (rc = open_session(&a, ses, &spec))) {
        session_free(ses);
        interrupts_restore(&old_handlers);
        if (interrupted_by) { /* what failed may be the signal's doing: end as it would */
            signal(interrupted_by, SIG_DFL);
            kill(getpid(), interrupted_by);
            return 128 + interrupted_by;
        }
        return rc;
    }
    Tuner *t = ses->tuner;
    session_stop_interrupted(ses, report_stderr, NULL);
    /* the budget and seed as run: with --resume, the journal's, not the flags' defaults */
    TuneEnding e = {.signal = run_interruptible(t), .ses = ses, .budget = spec.budget,
                    .seed = spec.seed, .json = a.json};
    if (!e.signal) /* done: a signal from here on ends tunedeck as it would have */
        interrupts_restore(&old_handlers);
    /* A session stopped early on an error (a leftover group it cannot stop, a journal it
     * cannot write, an optimizer that failed) did not do the work asked: it ends EXIT_FAILED
     * whatever it measured before, which it still prints and its journal keeps to resume.
     * An interrupted one stops its running trial (waited for, never recorded: the journal
     * keeps it unfinished, as a killed session's) and prints what it has, with how to go on. */
    Error err;
    if (e.signal) {
        if (tuner_running(t))
            fprintf(stderr, "tunedeck tune: %s: stopping the running trial, then the summary\n",
                    tune_signal_name(e.signal));
        session_interrupt(ses, tune_signal_name(e.signal));
    } else if (tuner_run_blocking(t, &err) < 0) {
        fprintf(stderr, "tunedeck tune: the session stopped early: %s\n", err.msg);
        e.stopped_early = err.msg;
    } else if (tuner_converged(t))
        fprintf(stderr, "tunedeck tune: %s\n", tuner_converged(t));
    /* A part whose connection dropped could not be stopped then (its sshd died, say): what
     * it left running is stopped now, if its host answers again. */
    session_stop_leftovers(ses, report_stderr, NULL);
    if (!e.signal) /* an interrupted journal has no `ended` line: sessions shows it so */
        session_journal_end(ses);
    if (a.json)
        tune_report_json(t, &e);
    else
        tune_report_table(t, &e);
    fflush(stdout);
    int failed_trial = 0;
    for (size_t i = 0; i < tuner_n_trials(t); i++) {
        const Observation *o = tuner_trial(t, i)->obs;
        failed_trial |= o && o->status != TRIAL_OK && o->status != TRIAL_PRUNED;
    }
    if (failed_trial && session_trial_log(ses))
        fprintf(stderr,
                "tunedeck tune: what the trials printed besides the protocol (standard error, "
                "other lines) is in %s\n",
                session_trial_log(ses));
    if (e.signal) {
        if (a.json) { /* the table says it on stdout; with --json, said here too */
            char cmd[256];
            const char *resume = tune_report_resume_command(cmd, sizeof cmd, &e);
            size_t done = tune_report_trials_done(t), counted = tune_report_trials_counted(t);
            char note[96] = "";
            if (counted > done) /* what a resume's --budget N is measured against */
                snprintf(note, sizeof note,
                         " (%zu counted against the budget, unfinished included)", counted);
            fprintf(stderr, "tunedeck tune: interrupted (%s) after %zu of %d trials%s; %s%s\n",
                    tune_signal_name(e.signal), done, tuner_budget(t), note,
                    resume ? "to go on: " : "not resumable (--no-journal)", resume ? resume : "");
        }
        close_session(ses);
        session_free(ses);
        interrupts_restore(&old_handlers);
        signal(e.signal, SIG_DFL);
        kill(getpid(), e.signal);
        return 128 + e.signal;
    }
    rc = tuner_best(t) ? EXIT_OK : EXIT_FAILED;
    if (rc)
        fprintf(stderr, "tunedeck tune: no trial succeeded\n");
    if (e.stopped_early || tune_journal_failed(ses->journal))
        rc = EXIT_FAILED; /* said on stderr when it happened */
    if (e.stopped_early && session_refused_stopped(ses))
        rc = EXIT_REMOTE; /* no trial could run: the hosts refused, as `hosts` says it */
    if (close_session(ses) < 0 && rc == EXIT_OK)
        rc = EXIT_REMOTE;
    session_free(ses);
    if (interrupted_by) { /* during the wait for the login node: as the signal ends it */
        signal(interrupted_by, SIG_DFL);
        kill(getpid(), interrupted_by);
        return 128 + interrupted_by;
    }
    return rc;
}
