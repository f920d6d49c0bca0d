/* A second Slurm job for one submission, and its cancel (remote/live/liverun_slurm_priv.h).
 * An sbatch that gets no answer is looked up by its unique name before it goes again; but
 * slurmctld can take the first one only after the look-up found nothing, and the retry then
 * makes a second job. Every job round looks for one under the names of the submissions that
 * ever went unanswered, and cancels it. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "remote/live/liverun_slurm_priv.h"

int liveslurm_doubted_add(LiveSlurm *s, const char *job_name, const char *id)
{
    if (s->n_doubted == s->cap_doubted) {
        size_t nc = s->cap_doubted ? s->cap_doubted * 2 : 8;
        LiveSlurmDoubted *grown = realloc(s->doubted, nc * sizeof *grown);
        if (!grown)
            return -1;
        s->doubted = grown;
        s->cap_doubted = nc;
    }
    LiveSlurmDoubted *d = &s->doubted[s->n_doubted++];
    snprintf(d->name, sizeof d->name, "%s", job_name);
    snprintf(d->id, sizeof d->id, "%s", id);
    return 0;
}

/* The scancel names our user and the submission's name beside the ids: Slurm then cancels a
 * listed id only if it is a job of ours under that name (an id that is not, or is no job,
 * is left alone, and scancel still exits 0). The ids come from the round's answer, where a
 * record another user's job name forged can name any id (one Slurm does not list, or hands
 * to our next submission by the time the scancel goes): by itself it never cancels a job of
 * ours. One submission's doubles a call, then, the name being one. */
void liveslurm_doubles_cancel(LiveSlurm *s)
{
    if (s->double_cancel)
        return;
    s->n_flying = 0;
    for (size_t i = 0; i < s->n_doubted && !s->n_flying; i++) {
        const LiveSlurmDoubted *d = &s->doubted[i];
        char ids[LIVESLURM_DOUBLES_PER_CALL][32];
        size_t n =
            liveslurm_doubles(&s->jobs, s->user, d->name, d->id, ids, LIVESLURM_DOUBLES_PER_CALL);
        for (size_t k = 0; k < n && k < LIVESLURM_DOUBLES_PER_CALL; k++) {
            if (strlist_has(&s->doubles_done, ids[k]))
                continue;
            LiveSlurmDouble *f = &s->flying[s->n_flying++];
            snprintf(f->id, sizeof f->id, "%s", ids[k]);
            snprintf(f->kept, sizeof f->kept, "%s", d->id);
            snprintf(f->name, sizeof f->name, "%s", d->name);
        }
    }
    if (!s->n_flying)
        return;
    char user[80], name[200];
    snprintf(user, sizeof user, "--user=%s", s->user);
    snprintf(name, sizeof name, "--name=%s", s->flying[0].name);
    /* -v: scancel names each job it signals ("Terminating job 12"), so the log says a cancel
     * only where one was sent; the filters leave a listed id that is not ours unnamed. */
    const char *argv[LIVESLURM_DOUBLES_PER_CALL + 5] = {"scancel", "-v", user, name};
    for (size_t i = 0; i < s->n_flying; i++)
        argv[4 + i] = s->flying[i].id;
    argv[4 + s->n_flying] = NULL;
    Error err;
    if (!(s->double_cancel = slurm_call_start(s->o.ctl, argv, &err))) {
        if (liveslurm_no_controller(err.msg))
            liveslurm_controller_lost(s, err.msg);
        s->n_flying = 0; /* found again by the next round */
    }
}

/* 1 when scancel -v's standard error says it signalled job `id`: "scancel: Terminating job
 * ID" (its default, SIGKILL: no --signal is passed), and no "Kill job error on job id ID"
 * (slurmctld refused it). */
int liveslurm_scancel_sent(const char *err_text, const char *id)
{
    static const char said[] = "Terminating job ";
    int sent = 0;
    size_t n = strlen(id);
    for (const char *p = err_text; !sent && (p = strstr(p, said)); p++) {
        const char *q = p + strlen(said);
        sent = strncmp(q, id, n) == 0 && (q[n] == 0 || q[n] == '\n' || q[n] == ' ');
    }
    char refused[96];
    snprintf(refused, sizeof refused, "Kill job error on job id %s:", id);
    return sent && !strstr(err_text, refused);
}

/* Per id, the -v words first: Slurm 22.05's scancel exits 1 when one listed id has ended
 * ("Kill job error on job id A: Invalid job id specified") yet cancels the others, and says
 * "Terminating job B" for each of them. */
LiveSlurmCancelled liveslurm_cancel_outcome(int rc, const char *err_text, const char *id)
{
    if (liveslurm_scancel_sent(err_text, id))
        return LIVESLURM_CANCEL_SENT;
    /* An id Slurm no longer has is no refusal: nothing is left to cancel, nor to try again.
     * Under the --user/--name filters production always passes, Slurm 22.05 says "Invalid job
     * id specified" for any id it has not running, a job just completing included (and an
     * id a forged record named, whoever's it was); unfiltered, a completing job is "Job/step
     * already completing or completed": ended as well, never retried. */
    static const char *const ended[] = {"Invalid job id specified",
                                        "Job/step already completing or completed"};
    for (size_t k = 0; k < sizeof ended / sizeof *ended; k++) {
        char gone[128];
        snprintf(gone, sizeof gone, "Kill job error on job id %s: %s", id, ended[k]);
        if (strstr(err_text, gone))
            return LIVESLURM_CANCEL_ENDED;
    }
    return rc == 0 ? LIVESLURM_CANCEL_NOTHING : LIVESLURM_CANCEL_REFUSED;
}

void liveslurm_doubles_collect(LiveSlurm *s)
{
    if (!s->double_cancel || !liveslurm_call_poll(s->double_cancel))
        return;
    char *out = NULL;
    Error err;
    int rc = slurm_call_finish(s->double_cancel, &out, &err);
    free(out);
    s->double_cancel = NULL;
    if (rc != 0 && liveslurm_no_controller(err.msg)) {
        liveslurm_controller_lost(s, err.msg);
        s->n_flying = 0; /* found again by a later round */
        return;
    }
    liveslurm_controller_back(s);
    /* A refusal is not remembered as done: a scancel of several ids fails when one of them
     * has just ended, yet cancels the others; the next round lists only the jobs still
     * there, so the retry goes to the survivors (or to one Slurm refused for a while). */
    for (size_t i = 0; i < s->n_flying; i++) {
        const LiveSlurmDouble *f = &s->flying[i];
        char what[300];
        LiveSlurmCancelled got =
            liveslurm_cancel_outcome(rc, slurm_ctl_last_stderr(s->o.ctl), f->id);
        if (got != LIVESLURM_CANCEL_REFUSED) {
            (void)strlist_add(&s->doubles_done, f->id); /* out of memory: again, harmless */
            if (got == LIVESLURM_CANCEL_SENT)
                snprintf(what, sizeof what, "cancelled");
            else if (got == LIVESLURM_CANCEL_ENDED)
                snprintf(what, sizeof what,
                         "Slurm no longer has job %s running (ended, or not ours): nothing to "
                         "cancel",
                         f->id);
            else /* filtered out: the round's record that named it was not ours */
                snprintf(what, sizeof what,
                         "scancel cancelled nothing (Slurm has no job of ours under that name "
                         "with that id: the record that listed it was another user's, or it "
                         "had ended)");
        } else if (strlist_has(&s->doubles_refused, f->id) ||
                   strlist_add(&s->doubles_refused, f->id) < 0) {
            continue; /* said already (or no memory to keep it said): retried in silence */
        } else {
            snprintf(what, sizeof what, "scancel refused (tried again while Slurm lists it): %s",
                     err.msg);
        }
        /* Only a cancel scancel -v names (under --user and --name) shows the job was ours;
         * otherwise the round's record may have been another user's, forged under the name. */
        if (got == LIVESLURM_CANCEL_SENT)
            liveslurm_say(s,
                          "slurm: %s has a second job, Slurm job %s (its sbatch got no answer, "
                          "the look-up by name found none, and Slurm took it after all): %s; "
                          "Slurm job %s is the run's",
                          f->name, f->id, what, f->kept);
        else
            liveslurm_say(s,
                          "slurm: a round listed Slurm job %s under %s, whose sbatch got no "
                          "answer (a second job if Slurm took that sbatch after all, or another "
                          "user's record under the name): %s; Slurm job %s is the run's",
                          f->id, f->name, what, f->kept);
    }
    s->n_flying = 0;
}

void liveslurm_doubles_free(LiveSlurm *s)
{
    if (s->double_cancel)
        liveslurm_final_add(s, s->double_cancel);
    s->double_cancel = NULL;
    free(s->doubted);
    strlist_free(&s->doubles_done);
    strlist_free(&s->doubles_refused);
}
