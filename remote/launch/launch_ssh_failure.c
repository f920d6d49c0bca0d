/* A per-host or single trial that a part's own failure ended: which part failed first, the
 * trial's status and reason (the words themselves: launch_ssh_reason.h), and, lost
 * unreachable, the machines it did not reach. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "remote/launch/launch_ssh_priv.h"

/* Part p's end as its trial's reason reads it (launch_ssh_reason.h). */
static PartFailure part_failure(const SshRun *r, const Part *p)
{
    int signaled = rexec_outcome(p->x) == EXEC_SIGNALED;
    return (PartFailure){.host = launch_ssh_machine_name(r, p),
                         .notice = p->first_failed,
                         .signal = signaled ? rexec_error(p->x) : NULL,
                         .exit_status = rexec_exit_status(p->x),
                         .came = p->failed_seq};
}

/* The first part that went wrong on its own (not by our stop) fails the trial: its ssh's
 * words are the reason's; a command's failure is written when the trial finishes
 * (write_failure: another part's failed rank may lead, the cause before the peers that lost
 * it, this one then said after it). */
void launch_ssh_failure_note(SshRun *r, Part *p)
{
    if (r->stopping || r->failure_status != TRIAL_OK)
        return;
    ExecOutcome o = rexec_outcome(p->x);
    const char *name = launch_ssh_machine_name(r, p);
    if (o == EXEC_SSH_FAILED) {
        r->failure_status = TRIAL_UNREACHABLE;
        /* A channel closing under us does not say where: name the host (a failed
         * connection's error already does). */
        const char *e = rexec_error(p->x);
        if (strncmp(e, "ssh to ", 7) == 0)
            snprintf(r->failure, sizeof r->failure, "ssh failed: %s", e);
        else
            snprintf(r->failure, sizeof r->failure, "ssh failed on %s: %s", name, e);
    } else if (o == EXEC_SIGNALED || (o == EXEC_EXITED && rexec_exit_status(p->x) != 0)) {
        r->failure_status = TRIAL_FAILED;
        /* without a notice, its end is its place in the reason's timeline */
        if (!p->failed_seq)
            p->failed_seq = ++r->failures_seen;
        r->failed_part = p;
    }
}

/* The failed trial's words in r->failure, every failed part named, the one that leads first
 * (launch_ssh_reason_write), and its last stderr line kept to say after them. */
static void write_failure(SshRun *r)
{
    for (size_t i = 0; i < r->n; i++)
        r->failures[i] = part_failure(r, &r->parts[i]);
    const char *said = NULL;
    trial_accumulator_has_error(r->acc, &said);
    size_t lead =
        launch_ssh_reason_write(r->causes, r->failures, r->n, (size_t)(r->failed_part - r->parts),
                                said, r->failure, sizeof r->failure);
    snprintf(r->failure_stderr, sizeof r->failure_stderr, "%s", r->parts[lead].last_stderr);
}

/* A trial lost unreachable names the machines it did not reach (Observation.unreachable, the
 * journal's `unreachable`): those whose connection failed, and those whose command was never
 * sent, their host not connected when the trial ended (it may be refused too). A resume checks
 * only those hosts again; one that ran its part accepted its key and login. The pool host a
 * caller named instead (r->where) is no machine of the schedule: none is named then. */
static void name_unreached(const SshRun *r, Observation *o)
{
    for (size_t i = 0; i < r->n && !r->where[0]; i++) {
        const Part *p = &r->parts[i];
        HostInfo hi;
        hostpool_info(r->pool, p->host, &hi);
        int failed = rexec_outcome(p->x) == EXEC_SSH_FAILED;
        if ((failed || (!rexec_sent(p->x) && hi.state != HOST_READY)) &&
            observation_mark_unreachable(o, p->machine) < 0) {
            /* out of memory: none named, so that a resume checks every host, as before */
            free(o->unreachable);
            o->unreachable = NULL;
            return;
        }
    }
}

void launch_ssh_failure_write(SshRun *r, Observation *o)
{
    /* A rank that said why it failed (an error event) is the trial's reason, not
     * only the exit status of the part that ended first. */
    const char *said = NULL;
    o->status = r->failure_status;
    if (o->status == TRIAL_UNREACHABLE)
        name_unreached(r, o);
    if (r->failed_part)
        write_failure(r);
    if (trial_accumulator_has_error(r->acc, &said))
        snprintf(o->reason, sizeof o->reason, "%s; error event: %s", r->failure, said);
    else
        snprintf(o->reason, sizeof o->reason, "%s%s%s", r->failure,
                 r->failure_stderr[0] ? ": " : "", r->failure_stderr);
}
