/* The slurm launcher's command text (launch_slurm.h): the srun line of a trial, one
 * heterogeneous step over nodes of different GPU counts, with the per-device ranks' fan-out
 * when asked, and the scancel line of its steps. Built without running anything; the run
 * itself is launch_slurm.c, which shares launch_slurm_priv.h with this file. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "remote/launch/launch_slurm.h"
#include "remote/launch/launch_slurm_priv.h"
#include "remote/launch/rankfan.h"
#include "remote/launch/srunwords.h"
#include "remote/ssh/shquote.h"

/* Every task: report the step (the first task), say its node (srunwords.h: srun's word of
 * a failed task numbers it within its component of a heterogeneous step, the label within
 * the whole step; the node joins them), name its machine, run the trial command ($1). The
 * command runs as a child of a shell that outlives SIGTERM (trap :), so a task srun stops
 * because another failed (--kill-on-bad-exit) exits with its command's status instead of
 * dying of the signal: srun takes a task killed by a signal for a lost node and drops the
 * output it has not read yet, the failed task's last words with it (h-srun: 5 of 50
 * two-node steps on a loaded machine). The shell's own stderr goes nowhere ("Terminated",
 * which dash says of a child killed by a signal, is not the task's word); the command's is
 * fd 4, the task's, given in a subshell: dash applies a simple command's redirections in
 * the shell itself while it waits, so "sh -c ... 2>&4" had it say "Terminated" there after
 * all. */
static const char TASK_SCRIPT[] =
    "[ \"${SLURM_PROCID:-0}\" = 0 ] && printf '" STEP_MARK "%s.%s\\n' \"$SLURM_JOB_ID\" "
    "\"$SLURM_STEP_ID\" >&2; printf '" SRUNWORDS_NODE_MARK "%s\\n' \"$SLURMD_NODENAME\" >&2; "
    "TUNEDECK_MACHINE=$SLURMD_NODENAME; export TUNEDECK_MACHINE; "
    "trap : TERM; exec 4>&2 2>/dev/null; (exec 2>&4 4>&- sh -c \"$1\")";

/* The machines a step runs on: every worker and parameter server; with per-device ranks only
 * those with a device that has inputs (a PS-only machine has no rank), as over SSH. */
static int takes_part(const Schedule *s, size_t m)
{
    return rankfan_wanted(s) ? s->worker[m] && schedule_machine_inputs(s, m) > 0
                             : s->worker[m] || s->ps[m];
}

static int machine_gpus(const Cluster *c, size_t m)
{
    const MachineType *t = cluster_machine_type(c, m);
    int g = 0;
    for (size_t d = 0; d < t->n_devices; d++)
        g += t->devices[d].kind == DEVICE_GPU;
    return g;
}

/* srun's arguments for the machines of the schedule that have `gpus` GPUs, after `lead`
 * ("srun", or ":" between the components of one heterogeneous step): every task gets all of
 * its node's GPUs (the step is alone on them; the schedule's inputs say which it uses). */
static int append_srun(char **b, size_t *len, const LaunchConfig *cfg, const Schedule *s,
                       const char *command, int gpus, double limit_min, const char *lead,
                       const char *input)
{
    /* A heterogeneous allocation's component k holds the k-th distinct GPU count among all
     * the machines (remote/slurm/slurm_alloc.c makes it so). */
    int component = 0, seen[64];
    size_t distinct = 0;
    for (size_t m = 0; m < s->cluster->n_machines && distinct < 64; m++) {
        int g = machine_gpus(s->cluster, m), known = 0;
        for (size_t k = 0; k < distinct; k++)
            known |= seen[k] == g;
        if (known)
            continue;
        if (g == gpus)
            component = (int)distinct;
        seen[distinct++] = g;
    }
    const Cluster *c = s->cluster;
    size_t nodes = 0, cap = 1;
    for (size_t m = 0; m < c->n_machines; m++)
        if (takes_part(s, m) && machine_gpus(c, m) == gpus) {
            nodes++;
            cap += strlen(c->machines[m].name) + 1;
        }
    char *list = calloc(1, cap);
    if (!list)
        abort();
    for (size_t m = 0; m < c->n_machines; m++)
        if (takes_part(s, m) && machine_gpus(c, m) == gpus) {
            if (list[0])
                strcat(list, ",");
            strcat(list, c->machines[m].name);
        }
    char jobid[64], count[32], time[32], gres[48], het[32];
    snprintf(jobid, sizeof jobid, "--jobid=%s", cfg->slurm_job);
    snprintf(count, sizeof count, "--nodes=%zu", nodes);
    snprintf(time, sizeof time, "--time=%.0f", limit_min);
    snprintf(gres, sizeof gres, "--gres=gpu:%d", gpus);
    const char *argv[20] = {lead, jobid, "--job-name=tunedeck-trial", "--nodelist", list, count,
                            "--ntasks-per-node=1", input, "--kill-on-bad-exit=1",
                            "--label", time};
    size_t n = 11;
    if (gpus > 0)
        argv[n++] = gres;
    if (cfg->slurm_het) {
        snprintf(het, sizeof het, "--het-group=%d", component);
        argv[n++] = het;
    }
    argv[n++] = "sh";
    argv[n++] = "-c";
    argv[n++] = TASK_SCRIPT;
    argv[n++] = "tunedeck-trial";
    argv[n++] = command;
    char *cmd = shquote_argv(argv, n);
    free(list);
    int rc = cmd ? shquote_append_raw(b, len, cmd) : -1;
    free(cmd);
    return rc;
}

/* The srun command line, every argument quoted. Nodes whose GPU counts differ cannot share
 * one component's --gres (it is per node, and a --gpus total is spread evenly, not as
 * asked), so each GPU count is a component of one heterogeneous step ("srun A : B"): srun
 * numbers its tasks through the whole step, the labels of two components never collide,
 * and one failed task stops every component (--kill-on-bad-exit). Its components read
 * standard input apart, each from the same file descriptor, so with --input=all on a pipe
 * the first took the schedule and the others got nothing (seen on the harness): the input
 * goes to a file of its own, deleted at once and held open as fd 3, which each component
 * opens again from the start (--input=/dev/fd/3, a new read offset each on Linux). */
static char *srun_command(const LaunchConfig *cfg, const Schedule *s, const char *command,
                          double limit_min, Error *err)
{
    const Cluster *c = s->cluster;
    int counts[64];
    size_t groups = 0;
    for (size_t m = 0; m < c->n_machines; m++) {
        if (!takes_part(s, m))
            continue;
        int g = machine_gpus(c, m), seen = 0;
        for (size_t k = 0; k < groups; k++)
            seen |= counts[k] == g;
        if (!seen && groups < sizeof counts / sizeof *counts)
            counts[groups++] = g;
    }
    if (!groups) {
        error_set(err, "slurm launcher: the schedule uses no machine");
        return NULL;
    }
    char *b = NULL;
    size_t len = 0;
    int rc = 0;
    if (groups == 1) {
        rc = shquote_append_raw(&b, &len, "exec ") < 0 ||
             append_srun(&b, &len, cfg, s, command, counts[0], limit_min, "srun",
                         "--input=all") < 0;
    } else {
        rc = shquote_append_raw(&b, &len, "f=$(mktemp) && exec 3<>\"$f\" && rm -f \"$f\" && "
                                          "cat >&3 || exit 1; exec ") < 0;
        for (size_t k = 0; k < groups && !rc; k++)
            rc = (k && shquote_append_raw(&b, &len, " ") < 0) ||
                 append_srun(&b, &len, cfg, s, command, counts[k], limit_min,
                             k ? ":" : "srun", "--input=/dev/fd/3") < 0;
    }
    if (rc) {
        free(b);
        error_set(err, "slurm launcher: out of memory");
        return NULL;
    }
    return b;
}

/* trial.ranks "per-device": each task starts the ranks of its own node (rankfan.h) —
 * `case $TUNEDECK_MACHINE in 'n1') exec sh -c '<n1's fan-out>' ;; ... esac` — with
 * MASTER_ADDR the NodeAddr of rank 0's node (the Slurm inventory's machine host). */
static char *ranks_command(const Schedule *s, const char *command, Error *err)
{
    const Cluster *c = s->cluster;
    char *b = NULL;
    size_t len = 0;
    int rc = shquote_append_raw(&b, &len, "case $TUNEDECK_MACHINE in\n");
    for (size_t m = 0; m < c->n_machines && rc == 0; m++) {
        if (!takes_part(s, m))
            continue;
        char *fan = rankfan_script(s, m, 0, command, err);
        if (!fan) {
            free(b);
            return NULL;
        }
        rc = shquote_append(&b, &len, c->machines[m].name) < 0 ||
             shquote_append_raw(&b, &len, ") exec sh -c ") < 0 ||
             shquote_append(&b, &len, fan) < 0 || shquote_append_raw(&b, &len, " ;;\n") < 0;
        free(fan);
    }
    if (rc || shquote_append_raw(&b, &len,
                                 "*) echo \"tunedeck: node $TUNEDECK_MACHINE has no rank in this "
                                 "schedule\" >&2; exit 1 ;;\nesac\n") < 0) {
        free(b);
        error_set(err, "slurm launcher: out of memory");
        return NULL;
    }
    return b;
}

char *launch_slurm_command(const LaunchConfig *cfg, const Schedule *s, double limit_min,
                           Error *err)
{
    char *fan = rankfan_wanted(s) ? ranks_command(s, cfg->command, err) : NULL;
    if (rankfan_wanted(s) && !fan)
        return NULL;
    char *cmd = srun_command(cfg, s, fan ? fan : cfg->command, limit_min, err);
    free(fan);
    return cmd;
}

/* The step ids as scancel's arguments, in `copy` (a copy of steps that argv points into). */
size_t launch_slurm_steps_argv(const char *steps, char *copy, size_t copy_cap,
                               const char **argv, size_t cap)
{
    size_t n = 0;
    snprintf(copy, copy_cap, "%s", steps);
    argv[n++] = "scancel";
    for (char *save = NULL, *t = strtok_r(copy, " ", &save); t && n + 1 < cap;
         t = strtok_r(NULL, " ", &save))
        argv[n++] = t;
    argv[n] = NULL;
    return n;
}

void launch_slurm_steps_join(char *list, size_t cap, const char *piece, size_t n)
{
    size_t used = strlen(list);
    for (size_t i = 0; i < n;) {
        while (i < n && piece[i] == ' ')
            i++;
        size_t id = i;
        while (i < n && piece[i] != ' ')
            i++;
        size_t len = i - id;
        if (!len || used + (used ? 1 : 0) + len + 1 > cap)
            return; /* whole ids only: a cut one would scancel another step */
        snprintf(list + used, cap - used, "%s%.*s", used ? " " : "", (int)len, piece + id);
        used = strlen(list);
    }
}

char *launch_slurm_scancel_command(const char *steps)
{
    char copy[256];
    const char *argv[16];
    size_t n = launch_slurm_steps_argv(steps, copy, sizeof copy, argv, 16);
    return n > 1 ? shquote_argv(argv, n) : NULL;
}
