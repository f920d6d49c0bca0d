/* The reason a failed trial of the per-host and single launchers gives (launch_ssh_failure.c):
 * whose failure leads it and the others after it as a timeline ("the command failed on h1:
 * rank 1 (h1 gpu0) exited with status 137 (SIGKILL); on h2: rank 2 (h2 cpu) exited with
 * status 1").
 * Apart from the launcher's channels, so that it reads and is tested on its own: it takes what
 * each part's fan-out and channel said, as text and numbers. */
#ifndef TUNEDECK_LAUNCH_SSH_REASON_H
#define TUNEDECK_LAUNCH_SSH_REASON_H

#include <stddef.h>

#include "remote/launch/rankcause.h"

/* The room of a trial's reason (SshRun's failure, launch_ssh_priv.h): one part's words never
 * need more. */
enum { LAUNCH_SSH_REASON_MAX = 256 };

/* What one part of the trial (its command on one host) said of its end. */
typedef struct {
    const char *host;   /* its machine's name (TUNEDECK_MACHINE), or the pool host named instead */
    const char *notice; /* its fan-out's notice of the rank that failed first there
                           (rankfan_notice); "" for none */
    const char *signal; /* the words for the signal that ended its command (rexec_error); NULL
                           where it exited */
    int exit_status;    /* its command's, where it exited */
    unsigned came;      /* 1 for the first part that failed, 2 for the next ... (its notice came,
                           or, without one, it ended failed); 0: it is not named */
} PartFailure;

/* "the command failed on HOST: WORDS" of part p into out (cap bytes). WORDS: with per-device
 * ranks, the rank that failed first there (its notice; its status is the host's), so a rank
 * that died without a word is named even when a peer's error event follows; else the
 * command's signal, else its exit status. A signal reads as a status does: the wrapping shell
 * ends by the signal a status above 128 names (groupstop.h), so a fan-out that passes on 137
 * for a rank the kernel killed comes back as SIGKILL. */
void launch_ssh_reason_head(const PartFailure *p, char *out, size_t cap);

/* The failure of a trial whose `n` parts are `parts` into out (cap bytes): the head of the part
 * that leads, then "; on HOST: WORDS" of each other part with a `came`, in the order they came
 * (not the inventory's), so the reason reads as a timeline; the words are cut at cap, and once
 * 8 bytes or fewer are left no other part is added. Which part ends first is a race: a rank that
 * crashed mid-training takes its peers down in their next collective ("Connection closed by peer"),
 * and a peer's host may end before the crashed rank's. So of the part that ended first
 * (`ended_first` < n, which failed) and every part whose fan-out named a failed rank, the one
 * rankcause_order picks leads: the notice of the rank whose error event is the trial's cause
 * (`error_event`, NULL for none; `causes`: what each rank said, NULL for nothing known), else
 * of a rank that said more than a lost peer's words on its own host (one killed without a word
 * said none), else the part that ended first. Where memory runs out, the part that ended first
 * leads and the others follow in the parts' order. Returns the index of the part that leads. */
size_t launch_ssh_reason_write(const RankCause *causes, const PartFailure *parts, size_t n,
                               size_t ended_first, const char *error_event, char *out, size_t cap);

#endif
