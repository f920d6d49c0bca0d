/* What the live driver takes from the inventory before any job runs: each machine's GPU
 * count as scheduler node groups, the checkpoint file the job command names, and each job's
 * command line wrapped to run in its own folder with only its own GPUs visible; what it
 * refuses of those (checked before any host or controller is reached); and the placement as
 * text for the log and the console's GPU grid. Pure. */
#include "remote/live/schedlive.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "core/base/error.h"
#include "remote/live/jobctl.h"
#include "remote/live/liverun.h"
#include "remote/ssh/shquote.h"

int schedlive_node_groups(const Cluster *c, int gpus_override, SchedNodeGroup **groups, size_t *n,
                          Error *err)
{
    *groups = NULL;
    *n = 0;
    if (c->n_machines == 0)
        return error_set(err, "%s: no machines", c->name);
    SchedNodeGroup *g = calloc(c->n_machines, sizeof *g);
    if (!g)
        return error_set(err, "out of memory");
    size_t k = 0;
    for (size_t m = 0; m < c->n_machines; m++) {
        const MachineType *t = cluster_machine_type(c, m);
        int gpus = 0;
        for (size_t d = 0; d < t->n_devices; d++)
            gpus += t->devices[d].kind == DEVICE_GPU;
        if (gpus_override > 0)
            gpus = gpus_override;
        if (gpus == 0) {
            free(g);
            return error_set(err,
                             "%s: machine '%s' (type '%s') has no GPU device: live mode "
                             "places jobs on GPUs (--gpus-per-node overrides)",
                             c->name, c->machines[m].name, t->name);
        }
        if (gpus > 64) {
            free(g);
            return error_set(err, "%s: machine '%s': expected at most 64 GPUs, found %d", c->name,
                             c->machines[m].name, gpus);
        }
        /* Consecutive machines of one type and size are one group; the inventory has no
         * speed figure, so every GPU counts as the measured kind (speed 1). */
        if (k && g[k - 1].gpus_per_node == gpus && strcmp(g[k - 1].type, t->name) == 0)
            g[k - 1].nodes++;
        else
            g[k++] = (SchedNodeGroup){t->name, 1, gpus, 1.0};
    }
    *groups = g;
    *n = k;
    return 0;
}

int schedlive_template_checkpoint(const char *t, char *out, size_t cap)
{
    const char *p = strstr(t, "--checkpoint");
    while (p) {
        const char *q = p + strlen("--checkpoint");
        if (*q == ' ' || *q == '=') {
            while (*q == ' ' || *q == '=')
                q++;
            size_t n = strcspn(q, " \t;&|");
            if (n > 0 && n < cap && *q != '{') {
                memcpy(out, q, n);
                out[n] = 0;
                return 0;
            }
        }
        p = strstr(p + 1, "--checkpoint");
    }
    return -1;
}

static int name_ok(const char *n)
{
    if (!n[0])
        return 0;
    for (const char *p = n; *p; p++)
        if (!((*p >= 'a' && *p <= 'z') || (*p >= 'A' && *p <= 'Z') || (*p >= '0' && *p <= '9') ||
              *p == '.' || *p == '_' || *p == '-'))
            return 0;
    return strcmp(n, ".") != 0 && strcmp(n, "..") != 0;
}

char *schedlive_job_template(const char *t, const char *dir, const char *name, Error *err)
{
    if (!name_ok(name)) {
        error_set(err,
                  "job '%s': live mode needs a name of letters, digits, '.', '_', '-' "
                  "(it names the job's folder)",
                  name);
        error_mark(err, ERROR_INPUT); /* the same at every start */
        return NULL;
    }
    if (strlen(name) > SCHEDLIVE_NAME_MAX) {
        /* a workload takes 511 bytes; a folder's name only 255 (NAME_MAX), and mkdir said so
         * mid-run, when the job was first started */
        error_set(err,
                  "job '%.40s...': live mode needs a name of at most %d bytes (it names the "
                  "job's folder), found %zu bytes",
                  name, SCHEDLIVE_NAME_MAX, strlen(name));
        error_mark(err, ERROR_INPUT); /* the same at every start */
        return NULL;
    }
    if (!dir[0] || strpbrk(dir, "{}\n")) {
        error_set(err, "job folder '%s': expected a path without '{', '}' or newlines", dir);
        error_mark(err, ERROR_INPUT); /* the same at every start */
        return NULL;
    }
    char path[4096];
    /* A folder starting with '-' would be read as options by mkdir and cd. */
    if ((size_t)snprintf(path, sizeof path, "%s%s/%s", dir[0] == '-' ? "./" : "", dir, name) >=
        sizeof path) {
        /* cut short, it would name another folder: the job would run and resume there */
        error_set(err, "job '%s': its folder %.60s.../%s is longer than %zu bytes", name, dir,
                  name, sizeof path - 1);
        error_mark(err, ERROR_INPUT); /* the same at every start */
        return NULL;
    }
    char *b = NULL;
    size_t len = 0;
    int rc = 0; /* one failed append (out of memory) would leave a command with a part left out */
    /* The shell survives the SIGTERM sent to the job's group and honours one sent before
     * the job starts (JOBCTL_TERM_TRAP). */
    /* The folder holds the job's hostfile and checkpoints: private (0700) whatever the remote
     * umask, one made before as well; the umask only in a subshell, not the job's own. */
    rc |= shquote_append_raw(&b, &len, JOBCTL_TERM_TRAP "; (umask 077 && mkdir -p ");
    rc |= shquote_append(&b, &len, path);
    rc |= shquote_append_raw(&b, &len, ") && chmod 700 ");
    rc |= shquote_append(&b, &len, path);
    rc |= shquote_append_raw(&b, &len, " && cd ");
    rc |= shquote_append(&b, &len, path);
    /* The fence (schedlive.h): fd 9 stays open in the shell and the job it starts, so the
     * lock lasts as long as any process of the run; flock(1) is util-linux's. Only its 1 is
     * "held": a host without flock (127) must not read as a busy folder, tried for ever.
     * The rank's own lock is opened only as a plain file, as rank 0's tries below are: `>>`
     * follows a symlink (creating its target, or locking a file elsewhere) and blocks on a
     * FIFO for ever, so anything else of its name fails the run (exit 2), naming it. A file
     * it cannot open fails it too, in words of ours: the open is tried first in a subshell
     * (silenced; a failed redirection of a special builtin would end dash itself), then
     * made with `command exec`, which, should it fail all the same, leaves the shell alive to
     * say so. No brace group: `{...}` is a placeholder (jobctl_command). */
    rc |= shquote_append_raw(&b, &len,
                             " && lf=" SCHEDLIVE_FENCE_LOCK " && if [ -f \"$lf\" ] && "
                             "[ ! -h \"$lf\" ]; then :; elif [ -e \"$lf\" ] || [ -h \"$lf\" ]; "
                             "then echo \"tunedeck: $lf in the job's folder is not a plain file "
                             "(a rank's lock is one): not opened; remove it\" >&2; exit 2; fi && "
                             "if (: >>\"$lf\") 2>/dev/null && command exec 9>>\"$lf\"; then :; "
                             "else echo \"tunedeck: cannot open $lf to take its lock\" >&2; "
                             "exit 2; fi"
                             " && if flock -n 9; then :; "
                             "else fr=$?; if [ $fr = 1 ]; then echo '" SCHEDLIVE_FENCE_WORD
                             ": another run of this job still holds its folder' >&2; exit 75; "
                             "fi; echo \"tunedeck: flock -n failed (status $fr): the job's "
                             "fence needs util-linux's flock on this host\" >&2; exit $fr; fi");
    /* A run that shrank (2 hosts -> 1) takes only ranks 0..nnodes-1: an old run's rank left
     * beyond those would share the folder unfenced. So rank 0 also tries the lock of every
     * other rank's file there, on fd 8, open only around the try (closed after its `fi`, so
     * let go at once and never the job's); a held one is the fence too. Only rank 0, so that
     * two ranks of this run never see each other's try as a holder; and no start race: such
     * a rank is an old run already running. A file
     * with no holder (left by any run) blocks nothing. The name is matched by case and the
     * run's own ranks by a loop, since ${...} would read as a placeholder (jobctl_command).
     * Only a plain file is opened: `>>` follows a symlink (creating its target, or trying a
     * lock elsewhere: its own rank 0's is held, a fence for ever) and blocks on a FIFO, so
     * anything else of such a name fails the run, naming it (a name gone since the glob is
     * passed over). The open is told from flock's 1 by fr, set only inside the `if`: a
     * redirection that fails is status 1 in bash (RHEL's, SUSE's sh), the fence's word. */
    rc |= shquote_append_raw(&b, &len,
                             " && if [ {node_rank} = 0 ]; then for lf in " SCHEDLIVE_FENCE_GLOB
                             "; do case $lf in " SCHEDLIVE_FENCE_PREFIX SCHEDLIVE_FENCE_SUFFIX
                             "|" SCHEDLIVE_FENCE_PREFIX "*[!0-9]*" SCHEDLIVE_FENCE_SUFFIX
                             ") continue;; esac; lr=0; while [ $lr -lt {nnodes} ] && "
                             "[ \"$lf\" != " SCHEDLIVE_FENCE_PREFIX "$lr" SCHEDLIVE_FENCE_SUFFIX
                             " ]; do lr=$((lr+1)); done; [ $lr = {nnodes} ] || continue; "
                             "if [ -f \"$lf\" ] && [ ! -h \"$lf\" ]; then :; "
                             "elif [ -e \"$lf\" ] || [ -h \"$lf\" ]; then echo \"tunedeck: $lf "
                             "in the job's folder is not a plain file (a rank's lock is one): "
                             "not opened; remove it\" >&2; exit 2; else continue; fi; "
                             "fr=open; if flock -n 8; then fr=0; else fr=$?; fi 8>>\"$lf\"; "
                             "[ $fr = 0 ] && continue; if [ $fr = 1 ]; then echo '"
                             SCHEDLIVE_FENCE_WORD ": another run of this job still holds its "
                             "folder' >&2; exit 75; fi; if [ $fr = open ]; then echo \"tunedeck: "
                             "cannot open $lf to try its lock\" >&2; exit 2; fi; "
                             "echo \"tunedeck: flock -n on $lf failed (status $fr)\" >&2; "
                             "exit $fr; done; fi");
    rc |= shquote_append_raw(&b, &len, " && TUNEDECK_JOB=");
    rc |= shquote_append(&b, &len, name);
    /* Only the GPUs the scheduler placed the job on are visible to it, so jobs packed on
     * one node cannot touch each other's; Horovod and MPI read the hostfile. It is written
     * to a new file mktemp makes and renamed into place, so a symlink planted at its name is
     * replaced, never followed. A symlink is removed first, as mv onto a symlink to a folder
     * moves the file into that folder (`mv -T` is GNU only); a plain file is not: rename
     * replaces it at once, so a rank of another host sharing the folder (NFS, or hosts on
     * one machine) never finds the name missing (multihost.sh saw that). A folder there
     * fails the rm, as before. */
    rc |= shquote_append_raw(&b, &len,
                             " && export TUNEDECK_JOB TUNEDECK_RUN_MARK && "
                             "CUDA_VISIBLE_DEVICES={gpu_ids} && "
                             "export CUDA_VISIBLE_DEVICES && hf=$(mktemp " JOBCTL_HOSTFILE ".XXXXXX) && "
                             "printf '%s\\n' {hostfile_text} > \"$hf\" && if [ -L " JOBCTL_HOSTFILE
                             " ] || [ ! -f " JOBCTL_HOSTFILE " ]; then rm -f " JOBCTL_HOSTFILE
                             "; fi && mv -f \"$hf\" " JOBCTL_HOSTFILE " && " JOBCTL_TERM_CHECK " && ");
    rc |= shquote_append_raw(&b, &len, t);
    if (rc < 0) {
        free(b);
        error_set(err, "job '%s': out of memory building its command", name);
        return NULL;
    }
    return b;
}

void schedlive_where_text(const char *const *names, const int *slots, const int *ids, size_t n,
                          char *out, size_t cap)
{
    size_t len = 0;
    out[0] = 0;
    for (size_t h = 0; h < n; h++) {
        char host[320];
        size_t hl = (size_t)snprintf(host, sizeof host, "%s%s:", h ? "," : "", names[h]);
        if (!ids)
            hl += (size_t)snprintf(host + hl, sizeof host - hl, "%d", slots[h]);
        for (int k = 0; ids && k < slots[h] && hl < sizeof host - 16; k++)
            hl += (size_t)snprintf(host + hl, sizeof host - hl, "%s%d", k ? "+" : "", ids[k]);
        if (ids)
            ids += slots[h];
        if (len + hl >= cap)
            return; /* cut at a whole host */
        memcpy(out + len, host, hl + 1);
        len += hl;
    }
}

/* A ".." component: the name leaves the job's folder (../ck.pt is DIR/ck.pt, every job's). */
static int climbs_out(const char *ck)
{
    for (const char *p = ck; *p; p += strcspn(p, "/"), p += *p == '/')
        if (p[0] == '.' && p[1] == '.' && (p[2] == '/' || p[2] == 0))
            return 1;
    return 0;
}

/* The job command runs in the job's own folder, so a relative name is a file per job. An
 * absolute or home-relative one, or one through "..", would be one file for every job of the
 * workload, each resuming from another's checkpoint; an empty one would never be found, so
 * every resize would start the job afresh; so would one the shell expands ($VAR, `cmd`) or
 * unquotes ("ck.pt" or 'ck.pt': the job writes ck.pt; a backslash escapes), as {resume}
 * passes the name quoted, as written. */
static int checkpoint_name_ok(const char *ck, const char *where, Error *err)
{
    if (ck[0] && ck[0] != '/' && ck[0] != '~' && !strpbrk(ck, "$`\"'\\\n") && !climbs_out(ck))
        return 0;
    error_set(err,
              "%s: checkpoint '%s': expected a file name relative to the job's folder, without "
              "'..', '$', '`', quotes or '\\' (each job runs in its own folder and resumes from "
              "that name as written)",
              where, ck);
    return error_mark(err, ERROR_INPUT);
}

int schedlive_check_command(const char *job_command, const char *inv, const SchedLiveOptions *o,
                            char *ck, size_t cap, Error *err)
{
    if (!job_command || !job_command[0]) {
        error_set(err,
                  "%s: field 'job_command': live mode needs the job command template "
                  "(expected --job-command T, or \"job_command\" in the inventory)",
                  inv);
        return error_mark(err, ERROR_INPUT);
    }
    char where[600];
    if (o && o->job_command_flag)
        snprintf(where, sizeof where, "--job-command");
    else
        snprintf(where, sizeof where, "%s: field 'job_command'", inv);
    if (o && o->checkpoint) {
        snprintf(ck, cap, "%s", o->checkpoint);
        return checkpoint_name_ok(ck, "--checkpoint-file", err);
    }
    if (schedlive_template_checkpoint(job_command, ck, cap) == 0)
        return checkpoint_name_ok(ck, where, err);
    /* {resume} names that file next time: without it a resize could not resume */
    error_set(err,
              "%s: expected '--checkpoint FILE' in it (the file the job writes when it is "
              "stopped, which {resume} names next time), or that file's name given with "
              "--checkpoint-file",
              where);
    return error_mark(err, ERROR_INPUT);
}

/* Every job's folder the backend can check before the run (liverun.h's check_folders): one
 * others can write refuses the run now, not each job as it starts. */
static int check_folders(const SchedState *s, const SchedLiveOptions *o, const char *dir,
                         Error *err)
{
    if (!o || !o->backend || !o->backend->check_folders)
        return 0;
    size_t n = sched_job_count(s);
    const char **names = calloc(n ? n : 1, sizeof *names);
    if (!names)
        return error_set(err, "job folders: out of memory");
    for (size_t i = 0; i < n; i++) {
        SchedJobInfo info;
        sched_job_info(s, i, &info);
        names[i] = info.name;
    }
    int rc = o->backend->check_folders(o->backend_ctx, dir, names, n, err);
    free(names);
    return rc;
}

int schedlive_check(const SchedState *s, const Cluster *c, const SchedLiveOptions *o, char *ck,
                    size_t cap, Error *err)
{
    const char *inv = o && o->inventory ? o->inventory : c->name;
    if (schedlive_check_command(c->job_command, inv, o, ck, cap, err) < 0)
        return -1;
    const char *dir = o && o->job_dir ? o->job_dir : "tunedeck-jobs";
    /* The folder is --job-dir's, not the workload's: checked on its own, so its error names
     * the flag rather than the workload file the job names come from. */
    if (!dir[0] || strpbrk(dir, "{}\n")) {
        error_set(err, "--job-dir: job folder '%s': expected a non-empty path without '{', '}' "
                       "or newlines",
                  dir);
        return -1;
    }
    for (size_t i = 0; i < sched_job_count(s); i++) {
        SchedJobInfo info;
        sched_job_info(s, i, &info);
        /* checked once here, so a bad name never reaches a start */
        char *wrapped = schedlive_job_template(c->job_command, dir, info.name, err);
        free(wrapped);
        if (!wrapped)
            return o && o->workload ? error_prefix(err, "%s", o->workload) : -1;
    }
    return check_folders(s, o, dir, err);
}
