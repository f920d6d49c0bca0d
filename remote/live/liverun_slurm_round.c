/* The live Slurm backend's shared state: the controller's rounds, the outage they meet, and
 * the jobs that are ours (remote/live/liverun_slurm.h). */
#include <poll.h>
#include <pwd.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "core/base/clock.h"
#include "core/base/plural.h"
#include "remote/live/liverun_slurm_priv.h"

/* Said once an outage, whichever call (round, sbatch, scancel) meets it first. */
void liveslurm_controller_lost(LiveSlurm *s, const char *why)
{
    if (!s->down)
        liveslurm_say(
            s,
            "slurm: the controller did not answer (%s): the jobs keep running, their state is "
            "read again and submissions and stops are retried (backing off)",
            why);
    s->down = 1;
}

void liveslurm_controller_back(LiveSlurm *s)
{
    if (s->down)
        liveslurm_say(s, "slurm: the controller answers again");
    s->down = 0;
}

LiveSlurm *liveslurm_new(const LiveSlurmOptions *o, Error *err)
{
    if (!o->ctl) {
        error_set(err, "slurm: no controller connection");
        return NULL;
    }
    LiveSlurm *s = calloc(1, sizeof *s);
    if (!s) {
        error_set(err, "slurm: out of memory");
        return NULL;
    }
    s->o = *o;
    snprintf(s->partition, sizeof s->partition, "%s", o->partition ? o->partition : "");
    s->o.partition = s->partition;
    if (s->o.poll_s <= 0)
        s->o.poll_s = 1;
    if (s->o.node_poll_s <= 0)
        s->o.node_poll_s = 10;
    if (s->o.pending_say_s <= 0)
        s->o.pending_say_s = LIVESLURM_PENDING_SAY_S;
    if (s->o.exit_grace_s <= 0)
        s->o.exit_grace_s = LIVESLURM_EXIT_GRACE_S;
    s->last_round_ms = s->last_node_round_ms = s->last_part_round_ms = -1;
    s->states_asked_ms = -1;
    s->first_round_ms = -1;
    const struct passwd *pw = getpwuid(geteuid());
    if (pw)
        snprintf(s->user, sizeof s->user, "%s", pw->pw_name);
    else
        snprintf(s->user, sizeof s->user, "%u", (unsigned)geteuid());
    /* Another tunedeck of this user (or this one, restarted) names its jobs apart. */
    s->nonce = (unsigned)clock_now_ms() * 2654435761u ^ (unsigned)getpid() * 40503u;
    return s;
}

void liveslurm_free(LiveSlurm *s)
{
    if (!s)
        return;
    liveslurm_doubles_free(s);
    liveslurm_finals_wait(s); /* the driver freed its runs first */
    slurm_call_free(s->round);
    liveslurm_byid_free(s);
    slurm_jobinfo_clear(&s->jobs);
    liveslurm_nodes_free(s);
    liveslurm_parts_free(s);
    strlist_free(&s->ours);
    strlist_free(&s->followed);
    free(s);
}

void liveslurm_ceiling_retry(const LiveSlurm *s, double *retry_s, double *retry_max_s)
{
    *retry_s = s->o.ceiling_retry_s;
    *retry_max_s = s->o.ceiling_retry_max_s;
}

long liveslurm_rounds(const LiveSlurm *s)
{
    return s->rounds;
}

long liveslurm_node_rounds(const LiveSlurm *s)
{
    return s->node_rounds;
}

int liveslurm_is_foreign(const LiveSlurm *s, const SlurmJobInfo *j)
{
    /* ours before its id is: taken by slurmctld, its sbatch's answer not collected yet */
    if (liveslurm_ours_by_name(j, s->user, s->nonce))
        return 0;
    return !strlist_has(&s->ours, j->het_id[0] ? j->het_id : j->id);
}

size_t liveslurm_foreign(const LiveSlurm *s, LiveSlurmForeign *out, size_t cap)
{
    size_t n = 0;
    for (size_t i = 0; i < s->jobs.n; i++) {
        const SlurmJobInfo *j = &s->jobs.v[i];
        if (strcmp(j->state, "RUNNING") != 0 || !liveslurm_is_foreign(s, j))
            continue;
        if (n < cap) {
            LiveSlurmForeign *f = &out[n];
            snprintf(f->id, sizeof f->id, "%s", j->id);
            snprintf(f->user, sizeof f->user, "%s", j->user);
            snprintf(f->name, sizeof f->name, "%s", j->name);
            slurm_jobinfo_where(&j, 1, f->where, sizeof f->where);
        }
        n++;
    }
    return n;
}

/* Its pipes polled with no timeout, as long as they have something (the answer, then the
 * ends of both pipes, then the exit): a command that has ended is collected in one tick,
 * not one step a tick (an sbatch's job id is known before its job can print). The driver's
 * own loop comes back every tick_s. */
int liveslurm_call_poll(SlurmCall *k)
{
    for (int rounds = 0; rounds < 16 && !slurm_call_done(k); rounds++) {
        struct pollfd fds[8];
        int64_t deadline = 0;
        size_t n = slurm_call_pollfds(k, fds, 8, &deadline);
        if (n > 8)
            n = 8;
        int ready = n ? poll(fds, n, 0) : 0;
        if (ready < 0)
            for (size_t i = 0; i < n; i++)
                fds[i].revents = 0;
        slurm_call_step(k, fds, n, clock_now_ms());
        if (ready <= 0)
            break; /* nothing more now (or only the exit, looked for once) */
    }
    return slurm_call_done(k);
}

size_t liveslurm_pollfds(void *ctx, struct pollfd *fds, size_t cap, int64_t *deadline_ms)
{
    LiveSlurm *s = ctx;
    size_t n = s->round ? slurm_call_pollfds(s->round, fds, cap, deadline_ms) : 0;
    if (s->node_round && n < cap)
        n += slurm_call_pollfds(s->node_round, fds + n, cap - n, deadline_ms);
    if (s->double_cancel && n < cap)
        n += slurm_call_pollfds(s->double_cancel, fds + n, cap - n, deadline_ms);
    if (s->part_round && n < cap)
        n += slurm_call_pollfds(s->part_round, fds + n, cap - n, deadline_ms);
    if (s->byid && n < cap)
        n += liveslurm_byid_pollfds(s, fds + n, cap - n, deadline_ms);
    return n;
}

/* The round in flight, stepped without waiting; once ended, its answer replaces the last. */
/* A live run killed with SIGKILL leaves its batch jobs: said once, with the command that ends
 * them. Not cancelled here: another tunedeck of the same user may still own them. */
static void say_leftovers(LiveSlurm *s)
{
    char ids[512];
    size_t n = liveslurm_leftovers(&s->jobs, s->user, (const char *const *)s->ours.v, s->ours.n,
                                   s->nonce, ids, sizeof ids);
    if (n)
        liveslurm_say(s,
                      "slurm: %zu batch job%s of an earlier live run (%s*) %s still in Slurm: "
                      "left alone, another tunedeck may own %s; `scancel %s` ends %s",
                      n, plural_s(n), LIVESLURM_NAME_PREFIX, plural_of(n, "is", "are"),
                      plural_of(n, "it", "them"), ids, plural_of(n, "it", "them"));
}

static void round_failed(LiveSlurm *s, const char *why)
{
    liveslurm_controller_lost(s, why);
    s->outage++;
    s->last_round_ms = clock_now_ms(); /* the wait counts from the failure */
}

/* The round's jobs (taken: *jobs left empty) replace the last round's. */
static void round_done(LiveSlurm *s, SlurmJobInfoList *jobs)
{
    liveslurm_controller_back(s);
    s->outage = 0;
    slurm_jobinfo_clear(&s->jobs);
    s->jobs = *jobs;
    memset(jobs, 0, sizeof *jobs);
    s->rounds++;
    liveslurm_count_holds(s);
    liveslurm_doubles_cancel(s);
    if (!s->leftovers_said) {
        s->leftovers_said = 1;
        say_leftovers(s);
    }
}

static void collect_byid(LiveSlurm *s)
{
    SlurmJobInfoList jobs;
    Error err;
    int rc = liveslurm_byid_collect(s, &jobs, &err);
    if (rc < 0)
        round_failed(s, err.msg);
    else if (rc > 0)
        round_done(s, &jobs);
}

/* Another user's job name (comment, path) can hold records of its own, and scontrol has no
 * way to mark where Slurm's end: an answer holding one that can be caught (an id listed
 * twice, a record left without its state) is not thrown away, which would let any user of
 * the cluster stop the scheduler's rounds for as long as that job is listed. Our jobs are
 * read by id instead (liverun_slurm_byid.c), where no other user's text comes, and other
 * users' jobs count as every record of theirs says: the real one is among them, so the
 * GPUs they hold are never missed, and a forged one only holds more back (as a forged
 * record of an id Slurm does not list always could). */
static void collect_round(LiveSlurm *s)
{
    if (!liveslurm_call_poll(s->round))
        return;
    char *text = NULL;
    Error err, doubt;
    SlurmJobInfoList jobs;
    int rc = slurm_call_finish(s->round, &text, &err);
    s->round = NULL;
    if (rc != 0 || slurm_jobinfo_read(text, "scontrol show -d job", &jobs, &doubt, &err) < 0) {
        free(text);
        round_failed(s, err.msg);
        return;
    }
    free(text);
    if (!jobs.n_doubtful) {
        if (s->doubt_said)
            liveslurm_say(s, "slurm: scontrol's answer holds no forged record any more: our "
                             "jobs are read from it again");
        s->doubt_said = 0;
        round_done(s, &jobs);
        return;
    }
    if (!s->doubt_said)
        liveslurm_say(s,
                      "slurm: %s; while its answer holds such records, our jobs are read one by "
                      "one (scontrol show -d job ID), and other users' jobs count as every "
                      "record of theirs says",
                      doubt.msg);
    s->doubt_said = 1;
    if (liveslurm_byid_start(s, &jobs, &err) < 0) {
        slurm_jobinfo_clear(&jobs);
        round_failed(s, err.msg);
        return;
    }
    collect_byid(s);
}

/* One `scontrol show -d job` for every job, at most once per poll_s, while a run is up (or
 * always, with poll_idle; while the driver's nodes are watched and none is up, once per
 * node_poll_s, for the GPUs others hold before the next start): started here, collected by
 * a later tick. Then the node-state round, on its own clock. */
void liveslurm_tick(void *ctx, int64_t now)
{
    LiveSlurm *s = ctx;
    liveslurm_node_tick(s, now);
    liveslurm_parts_tick(s, now);
    liveslurm_doubles_collect(s);
    if (s->round) {
        collect_round(s);
        return;
    }
    if (s->byid) {
        collect_byid(s);
        return;
    }
    double every_s = s->active || s->o.poll_idle ? s->o.poll_s : s->names ? s->o.node_poll_s : 0;
    if (every_s <= 0)
        return;
    /* A controller that does not answer makes each round last (scontrol gives up after about
     * 9 s): the wait between rounds doubles while it lasts, up to 16 poll_s. */
    double wait_s = liveslurm_backoff_s(s->o.poll_s, s->outage);
    if (wait_s < every_s)
        wait_s = every_s;
    /* A stop's exit line waits for Slurm to confirm the script is over (liverun_slurm.c): its
     * round goes at once rather than up to a poll_s later, as long as the rounds so far stay
     * within one a poll_s since the first (+1): early rounds use the slack slow answers left,
     * so however many stops ask (or lines a job prints), slurmctld gets no more rounds than
     * the cadence gives. Not while the controller is away. */
    int early =
        s->round_now && s->outage == 0 && s->first_round_ms >= 0 &&
        (double)s->rounds_started < (double)(now - s->first_round_ms) / (s->o.poll_s * 1000) + 1;
    if (!early && s->last_round_ms >= 0 && now - s->last_round_ms < wait_s * 1000)
        return;
    const char *argv[] = {"scontrol", "show", "-d", "job", NULL};
    Error err;
    s->last_round_ms = now;
    s->round_now = 0;
    if (s->first_round_ms < 0)
        s->first_round_ms = now;
    s->rounds_started++;
    if (!(s->round = slurm_call_start(s->o.ctl, argv, &err))) {
        liveslurm_controller_lost(s, err.msg);
        s->outage++;
        return;
    }
    collect_round(s); /* a fast controller may have answered already */
}

int liveslurm_remember(LiveSlurm *s, const char *id)
{
    if (strlist_add(&s->ours, id) < 0)
        return -1;
    return strlist_add(&s->followed, id);
}

void liveslurm_unfollow(LiveSlurm *s, const char *id)
{
    strlist_remove(&s->followed, id);
}

int liveslurm_round_flying(const LiveSlurm *s)
{
    return s->round != NULL || s->byid != NULL;
}
