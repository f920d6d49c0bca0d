/* `tunedeck schedule --live`'s command line: the usage text and the flags, each value checked
 * as it is read, then what they must say together (see schedule_live_args.h). */
#include "cmd/schedule_live_args.h"

#include <getopt.h>
#include <stdio.h>
#include <string.h>

#include "cmd/flags.h"
#include "cmd/schedule_cli.h"
#include "core/base/exitcode.h"
#include "remote/slurm/slurm_inventory.h"

static const char USAGE[] =
    "usage: tunedeck schedule --live --cluster FILE --workload FILE [--policy P]\n"
    "           [--interval S] [--time-scale X] [--resize-cost S] [--duration S]\n"
    "           [--events FILE] [--job-dir DIR] [--checkpoint-file NAME]\n"
    "           [--gpus-per-node G] [--status-every S] [--data DIR]\n"
    "           [--real-progress] [--loss-progress] [--accept-new-host-keys]\n"
    "           [--job-command TEMPLATE]\n"
    "       tunedeck schedule --live --slurm [--partition P] --workload FILE\n"
    "           --job-command TEMPLATE [options above]\n"
    "Runs the scheduler live: node i is machine i of the inventory, time runs at\n"
    "--time-scale simulated seconds per wall second (default 1), the policy (default\n"
    "doubling) decides every --interval simulated seconds (default 60), and every\n"
    "start, resize, stop and finish is enacted on a real job started from the\n"
    "inventory's job_command ({gpus} {hosts} {resume}) in DIR/NAME on the placement's\n"
    "first machine (DIR: --job-dir, default tunedeck-jobs). A resize checkpoints\n"
    "(SIGTERM), stops and restarts the job from its checkpoint. Each machine's GPU\n"
    "count comes from its type's GPU devices (machines may differ; --gpus-per-node\n"
    "sets one count for all). A job that dies unasked is restarted from its\n"
    "checkpoint once. The run ends when the model's jobs are done, when every real\n"
    "job has ended (finished, exited 0 by itself or failed; none left to arrive),\n"
    "after --duration wall seconds or on Ctrl-C: every job is checkpointed and\n"
    "stopped. --events\n"
    "writes the decisions and the jobs' real progress as JSON lines. Exit 1 when a\n"
    "job failed. --real-progress feeds each job's epoch from its progress lines to\n"
    "the model, so a job finishes when the real one reaches its epoch count.\n"
    "--loss-progress fits each job's loss curve (its progress lines' loss) with the\n"
    "convergence model: its remaining work comes from its own curve (done within 5%\n"
    "of the way to the fitted asymptote), not from the catalogue (one of the two).\n"
    "--job-command sets the job command template in place of the inventory's.\n"
    "On Slurm (--slurm, or an inventory with \"backend\": \"slurm\"): the nodes come\n"
    "from the controller (--partition P), each run is a batch job (sbatch on the\n"
    "scheduler's nodes with --gres=gpu:G) in DIR/NAME, a resize is scancel\n"
    "--signal=TERM --full then a resubmission with {resume}, and the GPUs are the\n"
    "ones Slurm granted (CUDA_VISIBLE_DEVICES). Run it on the login node: the jobs'\n"
    "output files are read here (--login is refused with that advice).\n";

static void usage(FILE *out)
{
    schedule_usage(out, USAGE);
}

static int fail(const char *msg)
{
    return schedule_fail("schedule --live", msg);
}

int schedule_live_args_parse(int argc, char **argv, LiveArgs *a)
{
    enum {
        O_CLUSTER = 1,
        O_WORKLOAD,
        O_POLICY,
        O_INTERVAL,
        O_SCALE,
        O_RESIZE,
        O_DURATION,
        O_EVENTS,
        O_JOBDIR,
        O_CKPT,
        O_GPN,
        O_STATUS,
        O_SEED,
        O_DATA,
        O_ACCEPT,
        O_REAL,
        O_LOSS,
        O_LIVE,
        O_SLURM,
        O_PARTITION,
        O_LOGIN,
        O_JOBCMD,
        O_HELP
    };
    static const struct option LONG[] = {{"cluster", required_argument, 0, O_CLUSTER},
                                         {"workload", required_argument, 0, O_WORKLOAD},
                                         {"policy", required_argument, 0, O_POLICY},
                                         {"interval", required_argument, 0, O_INTERVAL},
                                         {"time-scale", required_argument, 0, O_SCALE},
                                         {"resize-cost", required_argument, 0, O_RESIZE},
                                         {"duration", required_argument, 0, O_DURATION},
                                         {"events", required_argument, 0, O_EVENTS},
                                         {"job-dir", required_argument, 0, O_JOBDIR},
                                         {"checkpoint-file", required_argument, 0, O_CKPT},
                                         {"gpus-per-node", required_argument, 0, O_GPN},
                                         {"status-every", required_argument, 0, O_STATUS},
                                         {"seed", required_argument, 0, O_SEED},
                                         {"data", required_argument, 0, O_DATA},
                                         {"accept-new-host-keys", no_argument, 0, O_ACCEPT},
                                         {"real-progress", no_argument, 0, O_REAL},
                                         {"loss-progress", no_argument, 0, O_LOSS},
                                         {"live", no_argument, 0, O_LIVE},
                                         {"slurm", no_argument, 0, O_SLURM},
                                         {"partition", required_argument, 0, O_PARTITION},
                                         {"login", required_argument, 0, O_LOGIN},
                                         {"job-command", required_argument, 0, O_JOBCMD},
                                         {"help", no_argument, 0, O_HELP},
                                         {0, 0, 0, 0}};
    memset(a, 0, sizeof *a);
    sched_config_default(&a->cfg);
    a->cfg.policy = "doubling";
    a->status_every = 5;
    int c;
    optind = 1;
    opterr = 0;
    while ((c = flags_getopt("schedule --live", argc, argv, LONG, NULL)) != -1) {
        int bad = 0;
        const char *cmd = "schedule --live";
        switch (c) {
        case O_CLUSTER:
            a->cluster_path = optarg;
            break;
        case O_WORKLOAD:
            a->workload = optarg;
            break;
        case O_POLICY:
            a->cfg.policy = optarg;
            break;
        case O_INTERVAL:
            bad = flags_double(cmd, "--interval", optarg, 1e-3, 1e7, &a->cfg.interval_s);
            break;
        case O_SCALE:
            bad = flags_double(cmd, "--time-scale", optarg, 1e-3, 1e6, &a->lo.time_scale);
            break;
        case O_RESIZE:
            bad = flags_double(cmd, "--resize-cost", optarg, 0, 1e7, &a->cfg.resize_cost_s);
            break;
        case O_DURATION:
            bad = flags_double(cmd, "--duration", optarg, 1e-3, 1e9, &a->duration);
            break;
        case O_EVENTS:
            a->events_path = optarg;
            break;
        case O_JOBDIR:
            a->lo.job_dir = optarg;
            break;
        case O_CKPT:
            a->lo.checkpoint = optarg;
            break;
        case O_GPN:
            bad = flags_long(cmd, "--gpus-per-node", optarg, 1, 64, &a->gpn);
            break;
        case O_STATUS:
            bad = flags_double(cmd, "--status-every", optarg, 0, 1e6, &a->status_every);
            break;
        case O_SEED:
            /* It was listed and taken, and changed nothing: the seed draws only the
             * simulator's Poisson arrivals, and a live run's jobs are its --workload's (no
             * policy draws at random). Two runs "with different seeds" were the same run. */
            return fail("--seed: a live run draws nothing at random (its jobs are the "
                        "--workload's and the policies decide deterministically): expected no "
                        "--seed with --live");
        case O_DATA:
            a->data = optarg;
            break;
        case O_ACCEPT:
            a->accept = 1;
            break;
        case O_REAL:
            a->lo.real_progress = 1;
            break;
        case O_LOSS:
            a->lo.loss_progress = 1;
            break;
        case O_LIVE:
            break; /* `tunedeck schedule --live` */
        case O_SLURM:
            a->slurm = 1;
            break;
        case O_PARTITION:
            if (flags_name("schedule --live", "--partition", optarg, "a partition name") < 0)
                return EXIT_USAGE;
            a->partition = optarg;
            break;
        case O_LOGIN:
            a->login = optarg;
            break;
        case O_JOBCMD:
            a->job_command = optarg;
            break;
        case O_HELP:
        case 'h':
            usage(stdout);
            return 1;
        default:
            return EXIT_USAGE; /* flags_getopt said why */
        }
        if (bad)
            return EXIT_USAGE;
    }
    if (optind < argc)
        return fail("unexpected argument (see --help)");
    if ((!a->cluster_path && !a->slurm) || !a->workload)
        return fail("expected --cluster FILE (or --slurm) and --workload FILE (see --help)");
    const char *inputs[] = {a->workload, a->cluster_path ? a->cluster_path : "", NULL};
    if (schedule_events_over_input(a->events_path, inputs))
        return fail("--events: expected a file other than the --workload or --cluster it reads "
                    "(it would be written over)");
    /* Both set the model's progress; --loss-progress took over without a word. */
    if (a->lo.real_progress && a->lo.loss_progress)
        return fail("--real-progress and --loss-progress: expected one of them (the job's "
                    "epochs or its loss curve set the model's progress, not both)");
    if (a->slurm && a->cluster_path)
        return fail("--slurm reads the nodes from the controller: give it or --cluster, not "
                    "both (an inventory says \"backend\": \"slurm\" itself)");
    /* Slurm says each node's GPUs (its GRES); one count over them all placed runs of more
     * GPUs than a node has, and Slurm refused every such sbatch: each job left failed. */
    int on_slurm = a->slurm || (a->cluster_path && slurm_inventory_is_slurm_file(a->cluster_path));
    if (a->gpn && on_slurm)
        return fail("--gpus-per-node: expected --cluster FILE of SSH hosts with it (on Slurm "
                    "each node's GPUs are its GRES, as sinfo lists them; leave it out)");
    return 0;
}
