/* Talking to the Slurm controller: one Slurm command (sinfo, squeue, scontrol, salloc,
 * scancel) run to its end, either here (tunedeck on the login node) or on the login node
 * named by the inventory, over one SSH session kept for every command. Every call is
 * counted, so the watch and its benchmark can say how hard they lean on slurmctld. */
#ifndef TUNEDECK_SLURM_CTL_H
#define TUNEDECK_SLURM_CTL_H

#include <poll.h>
#include <stddef.h>
#include <stdint.h>

#include "core/base/error.h"
#include "core/model/cluster.h"
#include "remote/ssh/hostpool.h"

typedef struct SlurmCtl SlurmCtl;

typedef struct {
    const char *login;        /* NULL or "": run the commands here */
    const SshSettings *ssh;   /* login: user, port, identity, known hosts (NULL: defaults) */
    const char *ssh_config;   /* NULL: ~/.ssh/config */
    int accept_new_host_keys; /* login: an unknown key is added; never a changed one */
    double timeout_s;         /* per command; default 30 */
} SlurmCtlOptions;

SlurmCtl *slurm_ctl_new(const SlurmCtlOptions *o, Error *err);
void slurm_ctl_free(SlurmCtl *c);

/* Runs argv (argv[0] a Slurm command, NULL-terminated) with input on its standard input
 * (NULL: none). *out gets its standard output (caller frees; may be NULL when unwanted).
 * Returns the exit status; a command that exits non-zero leaves its last standard-error
 * line in err. -1: it could not run (err says why: not found, timeout, SSH failed). */
int slurm_ctl_run(SlurmCtl *c, const char *const *argv, char **out, Error *err);
/* slurm_ctl_run, asking stop(ud) whenever the wait wakes (a signal wakes it): once it says
 * so, a command run here gets SIGINT in its process group (salloc then revokes the job it
 * queued and exits at once) and is waited for as before. On a login node the command runs
 * under a shell that says its pid first (slurm_loginstop.h) and execs it; the stop is a
 * `kill -INT` of that pid there, sent while the command runs, to it alone (its environment
 * has a mark of this call). Then the job it queued or was granted, queued(its standard
 * error so far) (-1: none yet, asked again at each wake), is cancelled there with scancel
 * (salloc then says it is revoked and exits). A command not yet started there never starts.
 * Cut by the timeout there, it gets the same kill -INT (slurm_call_step below), and its error
 * says whether that reached it. stop NULL: slurm_ctl_run. */
int slurm_ctl_run_stoppable(SlurmCtl *c, const char *const *argv, char **out, int (*stop)(void *),
                            void *ud, long (*queued)(const char *), Error *err);

/* The same command without waiting for it: started now, stepped by the caller's loop (its
 * fds and its deadline: a child's pipes here, the login node's SSH session there), and
 * finished once done, with slurm_ctl_run's return, *out and err. A controller that does
 * not answer costs the caller nothing while it waits (sinfo takes ~9 s to give up). Past the
 * timeout a command here has its process group killed; on the login node one that said its
 * pid (run stoppable) is sent the guarded kill -INT there and waited for up to 5 s more (the
 * kill, then its end), since closing its channel does not end it there. */
typedef struct SlurmCall SlurmCall;
SlurmCall *slurm_call_start(SlurmCtl *c, const char *const *argv, Error *err);
size_t slurm_call_pollfds(SlurmCall *k, struct pollfd *fds, size_t cap, int64_t *deadline_ms);
void slurm_call_step(SlurmCall *k, const struct pollfd *fds, size_t n, int64_t now_ms);
int slurm_call_done(const SlurmCall *k);
/* Frees the call. */
int slurm_call_finish(SlurmCall *k, char **out, Error *err);
/* Stops a command still running (its process group is killed) and frees the call. */
void slurm_call_free(SlurmCall *k);

/* The last command's standard error (salloc reports its job there); "" when none. */
const char *slurm_ctl_last_stderr(const SlurmCtl *c);
/* Whether the last command was cut by the timeout: 0 no; 1 yes; 2 yes, and on the login node
 * the guarded kill -INT sent there by its pid reached it (a command run stoppable, as below). */
int slurm_ctl_last_cut(const SlurmCtl *c);
/* Whether the last command could not run where the commands run: not installed there, or it
 * found no Slurm configuration. No later call changes that, unlike a controller that does
 * not answer; a watch stops on it rather than retry. */
int slurm_ctl_last_unusable(const SlurmCtl *c);

/* Commands run so far through this object: each one is a request to slurmctld. */
long slurm_ctl_calls(const SlurmCtl *c);
/* Bytes of standard output those commands returned (what tunedeck read and parsed). */
long long slurm_ctl_bytes_read(const SlurmCtl *c);
/* "here" or the login host. */
const char *slurm_ctl_where(const SlurmCtl *c);
/* The login node's SSH session, for commands that stream (a trial's srun), and the name of
 * its host in that pool; NULL when the commands run here. The pool stays the SlurmCtl's. */
HostPool *slurm_ctl_login_pool(SlurmCtl *c, const char **host);

#endif
