/* `tunedeck` with no command: the operator console, on the embedded simulator by default
 * or on a real cluster with --cluster FILE --job FILE. */
#include <getopt.h>
#include <stdio.h>
#include <string.h>

#include "cmd/commands.h"
#include "cmd/flags.h"
#include "cmd/tune_journal.h"
#include "cmd/tune_orphans.h"
#include "core/model/cluster.h"
#include "core/model/job.h"
#include "core/opt/optimizer.h"
#include "core/sim/simcluster.h"
#include "remote/launch/launcher.h"
#include "tui/console.h"

static void usage(FILE *out)
{
    fprintf(
        out,
        "usage: tunedeck [--sim SETTING:NETWORK[:BATCH] | --cluster FILE --job FILE]\n"
        "       tunedeck --cluster FILE --workload FILE [--job FILE] [--job-dir DIR]\n"
        "                [--optimizer NAME] [--budget N] [--seed N] [--pace-ms MS]\n"
        "                [--launcher NAME] [--trial-cmd CMD] [--trial-timeout S]\n"
        "                [--theme NAME] [--plot braille|block|ascii] [--ascii]\n"
        "                [--policy NAME] [--sched-jobs N] [--sched-speed X] [--no-sched]\n"
        "                [--accept-new-host-keys] [--no-journal]\n"
        "       tunedeck --resume ID [--budget N] [--theme NAME] ...\n"
        "\n"
        "Opens the operator console (press ? inside for every key).\n"
        "  --sim SPEC         the embedded simulated cluster (default B:googlenet; %s)\n"
        "  --cluster FILE     a cluster inventory, with --job FILE and/or --workload FILE\n"
        "  --workload FILE    run the scheduler live on the inventory's hosts: jobs started\n"
        "                     from its job_command, resized by --policy over SSH, progress\n"
        "                     from their lines; --sched-speed is its time scale\n"
        "  --job-dir DIR      the live jobs' folders on the hosts (default tunedeck-jobs)\n"
        "  --optimizer NAME   %s\n"
        "  --budget N         trials to run (default 60; :budget N changes it)\n"
        "  --seed N           seed for the optimizer and the simulator (default 1)\n"
        "  --pace-ms MS       pause between simulated trials (default 600)\n"
        "  --launcher NAME    %s\n"
        "  --trial-cmd CMD    the trial command for the local launcher\n"
        "  --trial-timeout S  a trial running longer fails (default 600)\n"
        "  --theme NAME       a theme from themes/ (default 'default'), or a PATH to one\n"
        "  --plot STYLE       best-so-far plot glyphs (default braille)\n"
        "  --ascii            no Unicode glyphs (boxes, bars, plot)\n"
        "  --policy NAME      the scheduler's policy (default doubling; :policy switches)\n"
        "  --sched-jobs N     jobs arriving (Poisson) in the simulated scheduler (default 40)\n"
        "  --sched-speed X    simulated seconds per real second (default 60)\n"
        "  --no-sched         no simulated scheduler\n"
        "  --accept-new-host-keys  add every unknown host key to known_hosts (default: the\n"
        "                     hosts view shows it and `a` accepts one after you compare)\n"
        "  --no-journal       no session journal (default: one under $XDG_STATE_HOME/tunedeck)\n"
        "  --resume ID        open the console on a saved session (`tunedeck sessions`): its\n"
        "                     trials, settings and journal; it goes on to --budget N\n",
        simcluster_settings_help(), optimizer_names(), launcher_names());
}

/* The console's session journal: the same format as `tunedeck tune`, so `tunedeck tune
 * --resume ID` continues a console session headless. */
typedef struct {
    TuneJournal *tj;
    const ConsoleOptions *o;
    int resume;      /* --resume: replay the loaded journal into the tuner and go on */
    TuneProcs procs; /* the remote process groups its trials started */
} ConsoleJournal;

static int journal_start(void *ud, Tuner *t, const Cluster *c, const char *launcher, Error *err)
{
    ConsoleJournal *cj = ud;
    const ConsoleOptions *o = cj->o;
    if (cj->resume)
        return tune_journal_resume(cj->tj, t, c, o->budget, err);
    TuneSetup s;
    memset(&s, 0, sizeof s);
    snprintf(s.sim, sizeof s.sim, "%s", o->cluster ? "" : o->sim ? o->sim : "B:googlenet");
    snprintf(s.optimizer, sizeof s.optimizer, "%s", tuner_optimizer_name(t));
    snprintf(s.launcher, sizeof s.launcher, "%s", launcher);
    snprintf(s.trial_cmd, sizeof s.trial_cmd, "%s", o->trial_cmd ? o->trial_cmd : "");
    s.seed = o->seed;
    s.budget = o->budget;
    s.timeout_s = o->trial_timeout_s;
    if (o->cluster) {
        Cluster *c = cluster_load(o->cluster, err);
        JobSpec j;
        memset(&j, 0, sizeof j);
        if (!c || job_load(o->job, &j, err) < 0) {
            cluster_free(c);
            job_clear(&j);
            return -1;
        }
        s.cluster = cluster_to_json(c);
        s.job = job_to_json(&j);
        cluster_free(c);
        job_clear(&j);
    }
    int rc = tune_journal_start(cj->tj, t, &s, err);
    tune_setup_clear(&s);
    return rc;
}

static void journal_event(void *ud, TunerEvent ev, const TrialRecord *rec)
{
    ConsoleJournal *cj = ud;
    tune_journal_on_event(cj->tj, ev, rec);
}

static void journal_end(void *ud, const Tuner *t)
{
    ConsoleJournal *cj = ud;
    tune_journal_end(cj->tj, t);
}

static void journal_proc(void *ud, int trial, const char *machine, long pgid)
{
    ConsoleJournal *cj = ud;
    tune_procs_on_proc(&cj->procs, trial, machine, pgid);
}

/* --resume: what the killed session's unfinished trials left running is stopped first. */
static void journal_hosts(void *ud, HostPool *pool, void (*log)(void *, const char *), void *lud)
{
    ConsoleJournal *cj = ud;
    if (cj->resume)
        tune_orphans_stop_interrupted(pool, cj->tj, log, lud);
}

int cmd_console(int argc, char **argv)
{
    static const struct option LONG[] = {{"sim", required_argument, 0, 'S'},
                                         {"cluster", required_argument, 0, 'c'},
                                         {"job", required_argument, 0, 'j'},
                                         {"workload", required_argument, 0, 'W'},
                                         {"job-dir", required_argument, 0, 'D'},
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
                                         {0, 0, 0, 0}};
    ConsoleOptions o;
    console_defaults(&o);
    long v;
    int c, no_journal = 0, budget_set = 0;
    const char *resume = NULL;
    int setup_flag = 0; /* a flag that --resume takes from the journal */
    optind = 1;
    opterr = 0;
    while ((c = getopt_long(argc, argv, "h", LONG, NULL)) != -1) {
        switch (c) {
        case 'S':
            o.sim = optarg;
            break;
        case 'c':
            o.cluster = optarg;
            break;
        case 'j':
            o.job = optarg;
            break;
        case 'R':
            resume = optarg;
            break;
        case 'W':
            o.workload = optarg;
            break;
        case 'D':
            o.job_dir = optarg;
            break;
        case 'l':
            setup_flag = 1;
            o.launcher = optarg;
            break;
        case 't':
            setup_flag = 1;
            o.trial_cmd = optarg;
            break;
        case 'o':
            setup_flag = 1;
            o.optimizer = optarg;
            break;
        case 'y':
            o.theme = optarg;
            break;
        case 'P':
            o.plot = optarg;
            break;
        case 'A':
            o.ascii = 1;
            break;
        case 'Y':
            o.policy = optarg;
            break;
        case 'N':
            o.no_sched = 1;
            break;
        case 'K':
            o.accept_new_host_keys = 1;
            break;
        case 'n':
            no_journal = 1;
            break;
        case 'J':
            if (flags_long("console", "--sched-jobs", optarg, 1, 10000, &v) < 0)
                return 2;
            o.sched_jobs = (int)v;
            break;
        case 'X':
            if (flags_double("console", "--sched-speed", optarg, 0.001, 1e6, &o.sched_speed) < 0)
                return 2;
            break;
        case 'b':
            if (flags_long("console", "--budget", optarg, 1, 100000, &v) < 0)
                return 2;
            o.budget = (int)v;
            budget_set = 1;
            break;
        case 's':
            setup_flag = 1;
            if (flags_long("console", "--seed", optarg, 0, 1L << 62, &o.seed) < 0)
                return 2;
            break;
        case 'p':
            if (flags_long("console", "--pace-ms", optarg, 0, 3600000, &v) < 0)
                return 2;
            o.pace_ms = (int)v;
            break;
        case 'T':
            if (flags_double("console", "--trial-timeout", optarg, 0.001, 1e7, &o.trial_timeout_s) <
                0)
                return 2;
            break;
        case 'h':
            usage(stdout);
            return 0;
        default:
            return flags_unknown(NULL, argv[optind - 1]);
        }
    }
    if (optind < argc) {
        fprintf(stderr, "tunedeck: unexpected argument '%s' (try --help)\n", argv[optind]);
        return 2;
    }
    if (o.sim && o.cluster) {
        fprintf(stderr, "tunedeck: --sim and --cluster: expected one of them, not both\n");
        return 2;
    }
    if (resume && (setup_flag || o.sim || o.cluster || o.job || o.workload || no_journal)) {
        fprintf(stderr, "tunedeck: --resume: the session's cluster, job and settings come from "
                        "its journal; expected no --sim, --cluster, --job, --workload, "
                        "--optimizer, --launcher, --trial-cmd, --seed or --no-journal with it\n");
        return 2;
    }
    ConsoleJournal cj = {no_journal ? NULL : tune_journal_new(), &o, resume != NULL, {0}};
    cj.procs.tj = cj.tj;
    TuneSetup rs;
    memset(&rs, 0, sizeof rs);
    if (resume) {
        Error lerr;
        if (tune_journal_load(cj.tj, resume, &rs, &lerr) < 0) {
            fprintf(stderr, "tunedeck: --resume: %s\n", lerr.msg);
            tune_journal_free(cj.tj);
            return 2;
        }
        const char *const *lines;
        size_t n = tune_journal_problems(cj.tj, &lines);
        for (size_t i = 0; i < n; i++) /* said now: the screen is not ours yet */
            fprintf(stderr, "tunedeck: %s\n", lines[i]);
        o.sim = rs.sim[0] ? rs.sim : NULL;
        o.cluster = o.job = rs.sim[0] ? NULL : tune_journal_path(cj.tj);
        o.cluster_json = rs.cluster;
        o.job_json = rs.job;
        o.optimizer = rs.optimizer;
        o.launcher = rs.launcher;
        o.trial_cmd = rs.trial_cmd[0] ? rs.trial_cmd : NULL;
        o.seed = rs.seed;
        o.trial_timeout_s = rs.timeout_s;
        if (!budget_set)
            o.budget = (int)rs.budget;
        o.journal_required = 1;
    }
    if (cj.tj) {
        tune_journal_set_quiet(cj.tj, 1); /* a failed write is shown as a stopped session */
        o.journal = &cj;
        o.journal_event = journal_event;
        o.journal_start = journal_start;
        o.journal_end = journal_end;
        o.journal_proc = journal_proc;
        o.journal_hosts = journal_hosts;
    }
    Error err;
    int rc = console_run(&o, &err);
    if (rc < 0)
        fprintf(stderr, "tunedeck: %s\n", err.msg);
    else if (cj.tj && tune_journal_failed(cj.tj))
        fprintf(stderr, "tunedeck: the journal %s could not be written (a full disk?); the "
                        "session stopped launching trials then\n",
                tune_journal_path(cj.tj));
    else if (cj.tj && tune_journal_id(cj.tj)[0])
        fprintf(stderr,
                "tunedeck: session %s (journal %s; tunedeck --resume %s opens it again, "
                "tunedeck tune --resume %s goes on headless)\n",
                tune_journal_id(cj.tj), tune_journal_path(cj.tj), tune_journal_id(cj.tj),
                tune_journal_id(cj.tj));
    orphans_clear(&cj.procs.seen);
    tune_journal_free(cj.tj);
    tune_setup_clear(&rs);
    return rc < 0 ? 1 : 0;
}
