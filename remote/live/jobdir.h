/* The live jobs' folders on SSH hosts (--job-dir DIR, each job in DIR/NAME) checked before
 * the run: every folder on the way to them, links followed, must be the remote user's or
 * root's and no one else's to write (a sticky one, like /tmp, will do above a job's folder),
 * or another user could swap a job's folder, its hostfile or its checkpoints. The Slurm
 * backend checks its folders here (liverun_slurm_folder.c); this is the same on each host,
 * one shell-quoted command per host whose answer is read strictly. */
#ifndef TUNEDECK_JOBDIR_H
#define TUNEDECK_JOBDIR_H

#include <stddef.h>
#include <stdint.h>

#include "core/base/error.h"
#include "remote/ssh/hostpool.h"

/* The remote command: `sh -c SCRIPT tunedeck-jobdir DIR NAME...`, every argument quoted. The
 * script answers "uid U", then one line per folder or link on the way ("d MODE UID PATH",
 * "l MODE UID PATH", --job-dir's own "t ...", a job's own "j ...", "n PATH" where the rest is
 * not there yet: mkdir -p makes it, ours), "e WHY" when the walk cannot go on, then "end". MODE
 * and UID are `ls -ldn`'s. Caller frees; NULL (err) when out of memory. */
char *jobdir_command(const char *job_dir, const char *const *names, size_t n, Error *err);

/* Judges a host's answer (its lines joined by '\n'): 0 when every folder is trusted; -1 with
 * err naming the host, the folder, its mode or owner, what is expected and the fix, marked
 * ERROR_INPUT (exit 3); an answer that is not the script's, marked ERROR_REMOTE, quotes what
 * came back. */
int jobdir_judge(const char *host, const char *job_dir, const char *answer, Error *err);

/* One host's check in steps, for a caller on its own loop (the live driver checks a host
 * that answers only after the run began): begin sends the command (NULL: err, ERROR_REMOTE);
 * the pool must be stepped until done; end judges the answer as jobdir_judge does (an
 * unanswered or failed command is ERROR_REMOTE, naming host) and frees the probe. */
typedef struct JobdirProbe JobdirProbe;
JobdirProbe *jobdir_probe_begin(HostPool *p, size_t host, const char *command, Error *err);
int jobdir_probe_done(const JobdirProbe *pr);
int64_t jobdir_probe_began_ms(const JobdirProbe *pr);
int jobdir_probe_end(JobdirProbe *pr, const char *host, const char *job_dir, Error *err);

/* Runs the check on every host of the pool that is ready (one command each, all at once),
 * waiting at most timeout_s, and judges each answer; the first refusal or failure, hosts in
 * order, is the error (a host that does not answer in time is ERROR_REMOTE). checked (NULL,
 * or one per host) says which hosts passed: the driver checks the others once they answer. */
int jobdir_check_hosts(HostPool *p, const char *job_dir, const char *const *names, size_t n,
                       double timeout_s, unsigned char *checked, Error *err);

#endif
