/* `tunedeck` with no command: the operator console, on the embedded simulator by default
 * or on a real cluster with --cluster FILE --job FILE. */
#include <getopt.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "cmd/commands.h"
#include "cmd/flags.h"
#include "cmd/paths.h"
#include "core/base/exitcode.h"
#include "core/model/cluster.h"
#include "core/model/job.h"
#include "core/opt/optimizer.h"
#include "remote/launch/launcher.h"
#include "remote/session/session.h"
#include "remote/slurm/slurm_inventory.h"
#include "tui/console.h"

static void usage(FILE *out)
{
    fprintf(
        out,
        "usage: tunedeck [--sim SETTING:NETWORK[:BATCH] | --cluster FILE --job FILE]\n"
        "       tunedeck --slurm [--partition P] [--job FILE --trial-cmd CMD]\n"
        "       tunedeck --slurm [--partition P] --workload FILE --job-command TEMPLATE\n"
        "                [--checkpoint-file NAME]\n"
        "       tunedeck --cluster FILE --workload FILE [--job FILE] [--job-dir DIR]\n"
        "                [--checkpoint-file NAME]\n"
        "                [--gpus-per-node G]\n"
        "                [--optimizer NAME] [--budget N] [--seed N] [--pace-ms MS]\n"
        "                [--launcher NAME] [--trial-cmd CMD] [--trial-timeout S]\n"
        "                [--theme NAME] [--plot braille|block|ascii] [--ascii]\n"
        "                [--policy NAME] [--sched-jobs N] [--sched-speed X] [--no-sched]\n"
        "                [--accept-new-host-keys] [--no-journal]\n"
        "       tunedeck --resume ID [--budget N] [--theme NAME] ...\n"
        "\n"
        "Opens the operator console (press ? inside for every key).\n");
    flags_help_sim(out, "the embedded simulated cluster", "default B:googlenet; ");
    fprintf(
        out,
        "  --cluster FILE     a cluster inventory, with --job FILE and/or --workload FILE\n"
        "                     (\"backend\": \"slurm\": alone, the console watches Slurm)\n"
        "  --slurm            the Slurm cluster this machine submits to: its nodes and queue\n"
        "                     in the hosts view, :drain NODE; with --job, trials as srun steps\n"
        "  --partition P      --slurm: only this partition's nodes\n"
        "  --workload FILE    run the scheduler live on the inventory's hosts: jobs started\n"
        "                     from its job_command, resized by --policy over SSH, progress\n"
        "                     from their lines; --sched-speed is its time scale\n"
        "                     (on Slurm: batch jobs on the GPUs Slurm grants)\n"
        "  --job-command T    --slurm --workload: the live jobs' command (an inventory's\n"
        "                     job_command; docs/slurm.md)\n"
        "  --job-dir DIR      the live jobs' folders on the hosts (default tunedeck-jobs)\n"
        "  --checkpoint-file NAME  --workload: the file the job command writes when it is\n"
        "                     stopped, which {resume} names (default: its --checkpoint FILE)\n"
        "  --gpus-per-node G  --workload: every machine counts G GPUs (default: its type's\n"
        "                     GPU devices; for CPU-only test hosts)\n"
        "  --optimizer NAME   %s\n"
        "  --budget N         trials to run (default 60; :budget N changes it)\n"
        "  --seed N           seed for the optimizer and the simulator (default 1)\n"
        "  --pace-ms MS       pause between simulated trials (default 600)\n"
        "  --launcher NAME    %s\n"
        "  --trial-cmd CMD    the trial command of every launcher but sim (local,\n"
        "                     per-host, single, slurm: --slurm too), run through\n"
        "                     /bin/sh -c; overrides the inventory's trial.command\n"
        "  --trial-timeout S  a trial running longer fails (default 600; on Slurm\n"
        "                     rounded up to whole minutes, Slurm's time limit)\n"
        "  --theme NAME       a theme from themes/ (default 'default'), or a PATH to one\n"
        "  --plot STYLE       best-so-far plot glyphs (default braille)\n"
        "  --ascii            no Unicode glyphs (boxes, bars, plot)\n"
        "  --policy NAME      the scheduler's policy (default doubling; :policy switches)\n"
        "  --sched-jobs N     jobs arriving (Poisson) in the simulated scheduler (default 40)\n"
        "  --sched-speed X    simulated seconds per real second (default 60)\n"
        "  --no-sched         no simulated scheduler\n"
        "  --accept-new-host-keys  add every unknown host key to known_hosts (default: the\n"
        "                     hosts view shows it and `a` accepts one after you compare)\n"
        "  --no-journal       no session journal (default: one in\n"
        "                     $TUNEDECK_STATE_DIR/sessions, else\n"
        "                     $XDG_STATE_HOME/tunedeck/sessions, else\n"
        "                     ~/.local/state/tunedeck/sessions)\n"
        "  --resume ID        open the console on a saved session (`tunedeck sessions`): its\n"
        "                     trials, settings and journal; it goes on to --budget N\n",
        optimizer_names(), launcher_names());
}

/* The flags of the console; the session's own go to o->spec. Returns 0 to go on, 1 after
 * --help, 2 on a bad flag (said on stderr). */
typedef struct {
    int no_journal, budget_set;
    const char *resume;
    int setup_flag; /* a flag that --resume takes from the journal */
} ConsoleArgs;

static int parse_args(int argc, char **argv, ConsoleOptions *o, ConsoleArgs *ca)
{
    static const struct option LONG[] = {{"sim", required_argument, 0, 'S'},
                                         {"cluster", required_argument, 0, 'c'},
                                         {"job", required_argument, 0, 'j'},
                                         {"workload", required_argument, 0, 'W'},
                                         {"job-dir", required_argument, 0, 'D'},
                                         {"checkpoint-file", required_argument, 0, 'F'},
                                         {"gpus-per-node", required_argument, 0, 'G'},
                                         {"launcher", required_argument, 0, 'l'},
                                         {"trial-cmd", required_argument, 0, 't'},
                                         {"optimizer", required_argument, 0, 'o'},
                                         {"budget", required_argument, 0, 'b'},
                                         {"seed", required_argument, 0, 's'},
                                         {"pace-ms", required_argument, 0, 'p'},
                                         {"trial-timeout", required_argument, 0, 'T'},
                                         {"theme", required_argument, 0, 'y'},
                                         {"plot", required_argument, 0, 'P'},
                                         {"ascii", no_argument, 0, 'A'},
                                         {"help", no_argument, 0, 'h'},
                                         {"policy", required_argument, 0, 'Y'},
                                         {"sched-jobs", required_argument, 0, 'J'},
                                         {"sched-speed", required_argument, 0, 'X'},
                                         {"no-sched", no_argument, 0, 'N'},
                                         {"accept-new-host-keys", no_argument, 0, 'K'},
                                         {"no-journal", no_argument, 0, 'n'},
                                         {"resume", required_argument, 0, 'R'},
                                         {"slurm", no_argument, 0, 'U'},
                                         {"partition", required_argument, 0, 'Q'},
                                         {"job-command", required_argument, 0, 'E'},
                                         {0, 0, 0, 0}};
    SessionSpec *sp = &o->spec;
    memset(ca, 0, sizeof *ca);
    long v;
    int c;
    optind = 1;
    opterr = 0;
    while ((c = flags_getopt(NULL, argc, argv, LONG, NULL)) != -1) {
        switch (c) {
        case 'S':
            sp->sim = optarg;
            break;
        case 'c':
            sp->cluster = optarg;
            break;
        case 'j':
            sp->job = optarg;
            break;
        case 'R':
            ca->resume = optarg;
            break;
        case 'U':
            sp->slurm = 1;
            break;
        case 'Q':
            if (flags_name(NULL, "--partition", optarg, "a partition name") < 0)
                return EXIT_USAGE;
            sp->slurm_partition = optarg;
            break;
        case 'E':
            sp->job_command = optarg;
            break;
        case 'W':
            o->workload = optarg;
            break;
        case 'D':
            o->job_dir = optarg;
            break;
        case 'F':
            o->checkpoint_file = optarg;
            break;
        case 'l':
            ca->setup_flag = 1;
            sp->launcher = optarg;
            break;
        case 't':
            ca->setup_flag = 1;
            sp->trial_cmd = optarg;
            break;
        case 'o':
            ca->setup_flag = 1;
            sp->optimizer = optarg;
            break;
        case 'y':
            o->theme = optarg;
            break;
        case 'P':
            o->plot = optarg;
            break;
        case 'A':
            o->ascii = 1;
            break;
        case 'Y':
            o->policy = optarg;
            break;
        case 'N':
            o->no_sched = 1;
            break;
        case 'K':
            sp->accept_new_host_keys = 1;
            break;
        case 'n':
            ca->no_journal = 1;
            break;
        case 'G':
            if (flags_long(NULL, "--gpus-per-node", optarg, 1, 64, &v) < 0)
                return EXIT_USAGE;
            o->gpus_per_node = (int)v;
            break;
        case 'J':
            if (flags_long(NULL, "--sched-jobs", optarg, 1, 10000, &v) < 0)
                return EXIT_USAGE;
            o->sched_jobs = (int)v;
            break;
        case 'X':
            if (flags_double(NULL, "--sched-speed", optarg, 0.001, 1e6, &o->sched_speed) < 0)
                return EXIT_USAGE;
            break;
        case 'b':
            if (flags_long(NULL, "--budget", optarg, 1, 100000, &v) < 0)
                return EXIT_USAGE;
            sp->budget = (int)v;
            ca->budget_set = 1;
            break;
        case 's':
            ca->setup_flag = 1;
            if (flags_long(NULL, "--seed", optarg, 0, 1L << 62, &sp->seed) < 0)
                return EXIT_USAGE;
            break;
        case 'p':
            if (flags_long(NULL, "--pace-ms", optarg, 0, 3600000, &v) < 0)
                return EXIT_USAGE;
            o->pace_ms = (int)v;
            break;
        case 'T':
            if (flags_double(NULL, "--trial-timeout", optarg, 0.001, 1e7,
                             &sp->trial_timeout_s) < 0)
                return EXIT_USAGE;
            break;
        case 'h':
            usage(stdout);
            return 1;
        default:
            return EXIT_USAGE; /* flags_getopt said why */
        }
    }
    if (optind < argc) {
        fprintf(stderr, "tunedeck: unexpected argument '%s' (try --help)\n", argv[optind]);
        return EXIT_USAGE;
    }
    if (sp->sim && sp->cluster) {
        fprintf(stderr, "tunedeck: --sim and --cluster: expected one of them, not both\n");
        return EXIT_USAGE;
    }
    if (sp->slurm && (sp->sim || sp->cluster)) {
        fprintf(stderr, "tunedeck: --slurm: the cluster is Slurm's; expected no --sim or "
                        "--cluster with it (an inventory with \"backend\": \"slurm\" is the "
                        "same with a login node)\n");
        return EXIT_USAGE;
    }
    if (sp->job_command && !(sp->slurm && o->workload)) {
        fprintf(stderr, "tunedeck: --job-command: expected --slurm and --workload with it (an "
                        "inventory names its \"job_command\")\n");
        return EXIT_USAGE;
    }
    if (o->checkpoint_file && !o->workload) {
        fprintf(stderr, "tunedeck: --checkpoint-file: expected --workload with it (the live "
                        "jobs' checkpoint; a tuning trial writes none)\n");
        return EXIT_USAGE;
    }
    /* An inventory with "backend": "slurm" is --slurm with a login node: refused alike. */
    if (o->gpus_per_node && (!o->workload || sp->slurm ||
                             (sp->cluster && slurm_inventory_is_slurm_file(sp->cluster)))) {
        fprintf(stderr, "tunedeck: --gpus-per-node: expected --cluster FILE --workload FILE "
                        "with it (the live scheduler on SSH hosts; Slurm says its nodes' GPUs)\n");
        return EXIT_USAGE;
    }
    if (sp->slurm_partition && !sp->slurm) {
        fprintf(stderr, "tunedeck: --partition: expected --slurm with it (an inventory names "
                        "its \"partition\")\n");
        return EXIT_USAGE;
    }
    if (ca->resume && (ca->setup_flag || sp->sim || sp->cluster || sp->slurm || sp->job ||
                       o->workload || ca->no_journal)) {
        fprintf(stderr, "tunedeck: --resume: the session's cluster, job and settings come from "
                        "its journal; expected no --sim, --cluster, --job, --workload, "
                        "--optimizer, --launcher, --trial-cmd, --seed or --no-journal with it\n");
        return EXIT_USAGE;
    }
    if (sp->job && !sp->cluster && !sp->slurm) {
        fprintf(stderr, "tunedeck: --job: expected --cluster FILE (or --slurm) with it; the "
                        "simulator brings its own job\n");
        return EXIT_USAGE;
    }
    return 0;
}

/* --resume: the session as its journal recorded it; the skipped lines are said now, while
 * the screen is not the console's yet. */
/* 0, or the exit status of a resume refused, as `tune --resume` gives it: a session still
 * running or a journal that cannot be written here 1, a bad journal 3 (it gave 2 for every
 * refusal, a damaged journal included), an unknown session 2. */
static int resume_session(ConsoleOptions *o, const ConsoleArgs *ca)
{
    Error err;
    if (session_resume(o->session, ca->resume, &o->spec, ca->budget_set, &err) < 0) {
        fprintf(stderr, "tunedeck: --resume: %s\n", err.msg);
        if (tune_journal_running(o->session->journal) ||
            tune_journal_unwritable(o->session->journal))
            return EXIT_FAILED;
        return exitcode_for(&err, EXIT_USAGE);
    }
    const char *const *lines;
    size_t n = tune_journal_problems(o->session->journal, &lines);
    for (size_t i = 0; i < n; i++)
        fprintf(stderr, "tunedeck: %s\n", lines[i]);
    o->journal_required = 1;
    return 0;
}

/* After the console: where the session's journal and trial log are, or why one could not be
 * written. The screen is gone by now, so stderr is the one place left to say it: a write that
 * failed at the quit itself (the journal's `ended` line, the running trial's end in the trial
 * log) was said nowhere before. One line per file, naming it; what was written before the
 * failure stays (the journal's lines are whole, and resume). Returns 1 when a write failed:
 * the console then ends EXIT_FAILED, as tune does for its journal (and so for a Slurm
 * allocation left unreleased). */
static int say_files(const Session *s)
{
    const TuneJournal *tj = s->journal;
    int failed = 0;
    /* The session is closed by then (console_close_session): an allocation its scancel could
     * not release holds the cluster's GPUs until its time limit, unless this says so. */
    if (session_alloc_left(s)) {
        failed = 1;
        fprintf(stderr, "tunedeck: %s\n", session_alloc_left(s));
    }
    if (!s->with_journal)
        return 0;
    if (tune_journal_failed(tj)) {
        failed = 1;
        if (tune_journal_error(tj))
            fprintf(stderr,
                    "tunedeck: the journal could not be written: %s; no trial was launched "
                    "after that, and the lines before it are kept\n",
                    tune_journal_error(tj));
        else
            fprintf(stderr,
                    "tunedeck: the journal %s could not be written (a full disk?); the "
                    "session stopped launching trials then\n",
                    tune_journal_path(tj));
    } else if (tune_journal_id(tj)[0])
        fprintf(stderr,
                "tunedeck: session %s (journal %s; tunedeck --resume %s opens it again, "
                "tunedeck tune --resume %s goes on headless)\n",
                tune_journal_id(tj), tune_journal_path(tj), tune_journal_id(tj),
                tune_journal_id(tj));
    if (session_trial_log_error(s)) {
        failed = 1;
        fprintf(stderr,
                "tunedeck: the trial log could not be written: %s; the lines before it are "
                "kept\n",
                session_trial_log_error(s));
    }
    if (session_trial_log(s))
        fprintf(stderr, "tunedeck: what the trials printed besides the protocol (standard "
                        "error, other lines) is in %s\n",
                session_trial_log(s));
    return failed;
}

int cmd_console(int argc, char **argv)
{
    ConsoleOptions o;
    console_defaults(&o);
    ConsoleArgs ca;
    int rc = parse_args(argc, argv, &o, &ca);
    if (rc)
        return rc == 1 ? 0 : rc;
    if (!o.spec.cluster && !o.spec.sim && !o.spec.slurm)
        o.spec.sim = "B:googlenet";
    o.spec.ssh_config = getenv("TUNEDECK_SSH_CONFIG");
    o.themes_dir = paths_themes();
    o.catalogue_dir = paths_catalogue();
    o.session = session_new(!ca.no_journal, paths_sessions(NULL));
    if (!o.session) {
        fprintf(stderr, "tunedeck: out of memory\n");
        return EXIT_FAILED;
    }
    if (ca.resume && (rc = resume_session(&o, &ca)) != 0) {
        session_free(o.session);
        return rc;
    }
    Error err;
    rc = console_run(&o, &err);
    int quit_signal = rc > 0 ? rc : 0, files_failed = 0;
    if (rc < 0)
        fprintf(stderr, "tunedeck: %s\n", err.msg);
    else {
        if (quit_signal) /* after SIGHUP no one reads it; a script or systemd's log does */
            fprintf(stderr, "tunedeck: %s: the console quit as q does\n",
                    quit_signal == SIGHUP   ? "SIGHUP"
                    : quit_signal == SIGINT ? "SIGINT"
                                            : "SIGTERM");
        files_failed = say_files(o.session);
    }
    /* Setup errors are mostly option values (as in tune); a bad file says so in err. A
     * journal or trial log that could not be written fails the session. */
    int status = rc < 0 ? exitcode_for(&err, EXIT_USAGE) : files_failed ? EXIT_FAILED : EXIT_OK;
    session_free(o.session);
    if (quit_signal) {
        /* Ended as the signal ends a process (as `tune` does): the shell says 128 + it, and
         * systemd counts a TERM or HUP as a clean stop; the terminal and the journal are
         * closed already. */
        fflush(NULL);
        signal(quit_signal, SIG_DFL);
        kill(getpid(), quit_signal);
        return EXIT_SIGNAL_BASE + quit_signal;
    }
    return status;
}
