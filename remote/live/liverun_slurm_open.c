/* The live scheduler's inventory and, on Slurm, its runs' backend, from an inventory object:
 * shared by `schedule --live` and the console (remote/live/liverun_slurm.h). */
#include "remote/live/liverun_slurm.h"
#include "remote/slurm/slurm_inventory.h"

void liveslurm_options_intervals(LiveSlurmOptions *o, const SlurmIntervals *every)
{
    if (every->job_round_s > 0)
        o->poll_s = every->job_round_s;
    if (every->node_round_s > 0)
        o->node_poll_s = every->node_round_s;
    if (every->pending_say_s > 0)
        o->pending_say_s = every->pending_say_s;
    if (every->exit_grace_s > 0)
        o->exit_grace_s = every->exit_grace_s;
    if (every->ceiling_retry_s > 0)
        o->ceiling_retry_s = every->ceiling_retry_s;
    if (every->ceiling_retry_max_s > 0)
        o->ceiling_retry_max_s = every->ceiling_retry_max_s;
}

int liveslurm_open(const cJSON *root, const char *source, const LiveSlurmOptions *o, Cluster **cl,
                   SlurmCtl **ctl, LiveSlurm **ls, Error *err)
{
    *cl = NULL;
    *ctl = NULL;
    *ls = NULL;
    SlurmTarget t;
    int is = slurm_target_from_json(root, source, &t, err);
    if (is < 0)
        return error_mark(err, ERROR_INPUT);
    if (is && t.login[0]) {
        error_set(err,
                  "%s: live mode on Slurm runs sbatch and reads each job's output file on "
                  "this machine: run tunedeck on the login node %s (the inventory's \"login\" "
                  "serves hosts, watching and tuning sessions, not the live scheduler)",
                  source, t.login);
        return error_mark(err, ERROR_INPUT);
    }
    if (!(*cl = slurm_inventory_load(root, source, NULL, 0, ctl, err)))
        return -1;
    if (!is)
        return 0;
    LiveSlurmOptions mine = o ? *o : (LiveSlurmOptions){0};
    mine.ctl = *ctl;
    mine.partition = t.partition;
    liveslurm_options_intervals(&mine, &t.every);
    if (liveslurm_check((*cl)->job_command, (*cl)->job_launch_per_host,
                        (*cl)->n_machines, err) < 0) {
        error_prefix(err, "%s", source);
        error_mark(err, ERROR_INPUT);
    } else if ((*ls = liveslurm_new(&mine, err))) {
        return 0;
    }
    cluster_free(*cl);
    slurm_ctl_free(*ctl);
    *cl = NULL;
    *ctl = NULL;
    return -1;
}
