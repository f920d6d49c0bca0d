/* The scheduler's live mode: a wall-clock SchedState whose decisions are enacted through a
 * backend's runs (remote/live/liverun.h: SSH or Slurm); here the model's time, each run
 * served (its signals) and the queries. Enactment: schedlive_enact.c; a run's progress lines:
 * schedlive_progress.c; its end: schedlive_end.c. */
#include "remote/live/schedlive_priv.h"

#include <math.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "core/base/clock.h"
#include "core/base/evloop.h"
#include "core/sched/losscurve.h"
#include "remote/live/jobdir.h"
#include "remote/live/liverun.h"
#include "remote/ssh/groupstop.h"

SchedLive *schedlive_new(SchedState *s, const Cluster *c, HostPool *p, const SchedLiveOptions *o,
                         Error *err)
{
    char ck[512];
    if (schedlive_check(s, c, o, ck, sizeof ck, err) < 0)
        return NULL;
    if ((size_t)sched_node_count(s) > c->n_machines ||
        (!(o && o->backend) && (!p || hostpool_size(p) < c->n_machines))) {
        error_set(err, "the scheduler has %d nodes but the inventory %zu machines",
                  sched_node_count(s), c->n_machines);
        return NULL;
    }
    SchedLive *l = calloc(1, sizeof *l);
    l->s = s;
    l->c = c;
    l->pool = p;
    if (o)
        l->o = *o;
    l->ssh = (LiveRunSsh){.pool = p,
                          .per_host = c->job_launch_per_host,
                          .log = l->o.log,
                          .userdata = l->o.userdata};
    l->ssh.job_dir = l->o.job_dir ? l->o.job_dir : "tunedeck-jobs";
    l->ssh.prechecked = l->o.folders_checked;
    l->ops = l->o.backend ? l->o.backend : &LIVERUN_SSH;
    l->ops_ctx = l->o.backend ? l->o.backend_ctx : &l->ssh;
    if (l->o.time_scale <= 0)
        l->o.time_scale = 1;
    if (l->o.tick_s <= 0)
        l->o.tick_s = 0.2;
    if (!(l->o.loss_tol > 0 && l->o.loss_tol < 1))
        l->o.loss_tol = 0.05;
    if (l->o.stop_timeout_s <= 0)
        l->o.stop_timeout_s = GROUPSTOP_JOB_WAIT_S; /* the job's wrapping shell waits as long */
    if (l->o.death_window_s <= 0)
        l->o.death_window_s = 3600;
    if (l->o.ceiling_retry_s <= 0)
        l->o.ceiling_retry_s = SCHEDLIVE_CEILING_RETRY_S;
    if (l->o.ceiling_retry_max_s <= 0)
        l->o.ceiling_retry_max_s = SCHEDLIVE_CEILING_RETRY_MAX_S;
    /* one set over the other's default (ceiling_retry_s 7200 alone): the first hold holds; the
     * inventory refuses both set the wrong way round (slurm_intervals_from_json) */
    if (l->o.ceiling_retry_max_s < l->o.ceiling_retry_s)
        l->o.ceiling_retry_max_s = l->o.ceiling_retry_s;
    if (!l->o.job_dir)
        l->o.job_dir = "tunedeck-jobs";
    l->checkpoint = strdup(ck);
    l->n_jobs = sched_job_count(s);
    l->jobs = calloc(l->n_jobs ? l->n_jobs : 1, sizeof *l->jobs);
    for (size_t i = 0; i < l->n_jobs; i++) {
        LiveJob *j = &l->jobs[i];
        SchedJobInfo info;
        sched_job_info(s, i, &info);
        snprintf(j->name, sizeof j->name, "%s", info.name);
        snprintf(j->model, sizeof j->model, "%s", info.model);
        j->ckpt_path = strdup(ck); /* the command runs in the job's folder */
        j->host = -1;
        j->step = j->saved_step = j->resumed_step = j->run_first_step = -1;
        j->epoch = j->eps = -1; /* not given yet (the protocol's absent field), not 0 */
        j->loss_fraction = -1;
        j->loss_decile_logged = -1;
        j->loss = NAN; /* none reported yet: a loss may be negative, so no sign says it */
    }
    l->events_seen = sched_event_count(s);
    l->last_ms = clock_now_ms();
    if (!l->o.backend) { /* the hosts' job folders, checked as they answer (liverun_ssh.c) */
        const char **names = calloc(l->n_jobs ? l->n_jobs : 1, sizeof *names);
        for (size_t i = 0; names && i < l->n_jobs; i++)
            names[i] = l->jobs[i].name;
        l->ssh.folder_cmd = names ? jobdir_command(l->ssh.job_dir, names, l->n_jobs, err) : NULL;
        free(names);
        if (!l->ssh.folder_cmd) {
            error_no_memory(err, "live: job folder check");
            schedlive_free(l);
            return NULL;
        }
    }
    if (schedlive_watch_nodes(l, err) < 0) {
        schedlive_free(l);
        return NULL;
    }
    return l;
}

void schedlive_free_want(LiveJob *j)
{
    for (size_t i = 0; i < j->n_want_hosts; i++)
        free(j->want_hosts[i]);
    free(j->want_hosts);
    free(j->want_nodes);
    free(j->want_slot_gpus);
    j->want_hosts = NULL;
    j->want_nodes = NULL;
    j->want_slot_gpus = NULL;
    j->n_want_hosts = 0;
}

void schedlive_free(SchedLive *l)
{
    if (!l)
        return;
    for (size_t i = 0; i < l->n_jobs; i++) {
        if (l->jobs[i].run)
            l->ops->free(l->jobs[i].run);
        losscurve_clear(&l->jobs[i].curve);
        free(l->jobs[i].ckpt_path);
        schedlive_free_want(&l->jobs[i]);
        free(l->jobs[i].run_nodes);
        free(l->jobs[i].run_slot_gpus);
        free(l->jobs[i].run_gpu_ids);
    }
    free(l->jobs);
    free(l->checkpoint);
    liverun_ssh_clear(&l->ssh);
    free(l->node_unusable);
    free(l->node_held);
    free(l->node_kept);
    free(l);
}

size_t schedlive_pollfds(SchedLive *l, struct pollfd *fds, size_t cap, int64_t *deadline_ms)
{
    size_t n = l->pool ? hostpool_pollfds(l->pool, fds, cap, deadline_ms) : 0;
    /* the backend's calls in flight: an answer is taken when it arrives, not a tick later */
    if (l->ops->pollfds && n < cap)
        n += l->ops->pollfds(l->ops_ctx, fds + n, cap - n, deadline_ms);
    for (size_t i = 0; l->ops->run_pollfds && i < l->n_jobs && n < cap; i++)
        if (l->jobs[i].run)
            n += l->ops->run_pollfds(l->jobs[i].run, fds + n, cap - n, deadline_ms);
    int64_t tick = clock_now_ms() + (int64_t)(l->o.tick_s * 1000);
    if (*deadline_ms <= 0 || *deadline_ms > tick)
        *deadline_ms = tick;
    return n;
}

static size_t source_pollfds(void *ctx, struct pollfd *fds, size_t cap, int64_t *deadline_ms)
{
    return schedlive_pollfds(ctx, fds, cap, deadline_ms);
}

static void source_step(void *ctx, const struct pollfd *fds, size_t n, int64_t now_ms)
{
    schedlive_step(ctx, fds, n, now_ms);
}

long schedlive_attach(SchedLive *l, EvLoop *loop)
{
    return evloop_add(loop, source_pollfds, source_step, l);
}

/* A backend that picks the GPUs itself (Slurm) says which once it granted them, and why a
 * run waits: the run's placement becomes what was granted (the console's GPU grid). */
static void note_backend(SchedLive *l, LiveJob *j)
{
    const char *why = l->ops->waiting ? l->ops->waiting(j->run) : "";
    if (why[0] && strcmp(why, j->waiting) != 0)
        schedlive_log(l, "%s: %s waits for its allocation: %s", j->name,
                      l->ops->label ? l->ops->label(j->run) : "run", why);
    snprintf(j->waiting, sizeof j->waiting, "%s", why);
    const char *got = l->ops->granted ? l->ops->granted(j->run) : "";
    if (got[0] && strcmp(got, j->run_where) != 0) {
        snprintf(j->run_where, sizeof j->run_where, "%s", got);
        schedlive_log(l, "%s: %s running on %s (the GPUs it was granted)", j->name,
                      l->ops->label ? l->ops->label(j->run) : "run", got);
    }
}

const char *schedlive_at_step(char *buf, size_t size, long step)
{
    if (step < 0)
        return "before its first progress line";
    snprintf(buf, size, "at step %ld", step);
    return buf;
}

/* A run the backend says waits on a limit of its size (LiveRunOps.over_limit: Slurm took the
 * job but will never start it as it is) is cancelled, and its end taken as a start refused
 * for its size (schedlive_run_ended): the job gets a ceiling and goes on at the size it had,
 * as when sbatch refuses it at once. Not while its nodes are out of the model's use: Slurm's
 * PartitionNodeLimit also stands for nodes down or drained, which the node rounds handle. */
static void over_limit(SchedLive *l, LiveJob *j)
{
    if (!l->ops->over_limit || j->limit_wait || j->stop_wanted || j->stopping || l->stopping_all)
        return;
    LiveRefusal how = LIVERUN_REFUSED_TOO_BIG;
    const char *why = l->ops->over_limit(j->run, &how);
    if (!why || schedlive_run_on_unusable(l, j) >= 0)
        return;
    j->limit_wait = 1;
    j->limit_how = how;
    j->stop_wanted = 1;
    snprintf(j->limit_why, sizeof j->limit_why, "%s waits on %s, a limit on its size",
             l->ops->label ? l->ops->label(j->run) : "its run", why);
    schedlive_log(l, "%s: %s: cancelled", j->name, j->limit_why);
}

static void serve_job(SchedLive *l, LiveJob *j, int64_t now)
{
    if (j->run) {
        l->ops->step(j->run);
        note_backend(l, j);
        schedlive_take_progress(l, j);
    }
    if (j->run) /* after its last lines: the step it was taken at, and its checkpoint's */
        schedlive_preempted(l, j);
    schedlive_sync_suspended(l, j); /* before the model's next advance */
    if (j->run && l->ops->running(j->run)) {
        if (j->preempted)
            return; /* the backend clears what is left of it; nothing to signal */
        over_limit(l, j);
        if (j->stop_wanted && !j->stopping && l->ops->ready(j->run)) {
            Error err;
            if (l->ops->signal(j->run, SIGTERM, &err) == 0) {
                j->stopping = 1;
                j->stop_sent_ms = now;
            }
        }
        if (j->stopping && !j->killed &&
            now - j->stop_sent_ms > (int64_t)(l->o.stop_timeout_s * 1000)) {
            Error err;
            if (l->ops->signal(j->run, SIGKILL, &err) == 0) {
                j->killed = 1;
                schedlive_log(l, "%s: no exit %.0f s after SIGTERM: SIGKILL", j->name,
                              l->o.stop_timeout_s);
            }
        }
        return;
    }
    if (j->run && l->ops->status(j->run)[0])
        schedlive_run_ended(l, j, now); /* schedlive_end.c */
    if (!j->run && j->need_start && j->want_gpus > 0 && !j->failed && !l->stopping_all &&
        now >= j->start_after_ms) {
        const LiveJob *k = schedlive_blocker(l, j);
        if (!k)
            schedlive_start_run(l, j);
        else if (!j->wait_logged) {
            j->wait_logged = 1;
            schedlive_log(l, "%s: waits for %s to checkpoint and free its GPUs", j->name, k->name);
        }
    }
}

/* Every job of the workload has ended: finished by the model (and stopped), ended by itself
 * (exit 0 unasked) or failed; a job still to arrive is not ended. Nothing is left to run, so
 * waiting for --duration would only keep the operator waiting. */
static int all_ended(const SchedLive *l, int *completed, int *failed)
{
    *completed = *failed = 0;
    for (size_t i = 0; i < l->n_jobs; i++) {
        const LiveJob *j = &l->jobs[i];
        SchedJobInfo info;
        if (j->run)
            return 0;
        if (j->failed) /* never restarted, whatever the model asks */
            ++*failed;
        else if (j->need_start)
            return 0;
        else if (j->ended_itself ||
                 (sched_job_info(l->s, i, &info) == 0 && info.state == SCHED_JOB_DONE))
            ++*completed;
        else
            return 0;
    }
    return l->n_jobs > 0;
}

void schedlive_step(SchedLive *l, const struct pollfd *fds, size_t n, int64_t now)
{
    if (l->pool)
        hostpool_step(l->pool, fds, n, now);
    if (l->ops->tick)
        l->ops->tick(l->ops_ctx, now);
    schedlive_ceilings_expire(l, now); /* before the model's next decision */
    if (!schedlive_sync_nodes(l))
        l->last_ms = now; /* the model's clock starts once the backend has seen the cluster */
    else if (!l->stopping_all && now > l->last_ms) {
        double dt = (double)(now - l->last_ms) / 1000.0 * l->o.time_scale;
        Error err;
        if (sched_advance(l->s, dt, &err) < 0)
            schedlive_log(l, "scheduler: %s", err.msg);
        l->last_ms = now;
    }
    /* also after stop_all: a finish reported by real progress lands between two steps */
    size_t ne = sched_event_count(l->s);
    for (; l->events_seen < ne; l->events_seen++)
        schedlive_enact(l, sched_event(l->s, l->events_seen));
    int any = 0;
    for (size_t i = 0; i < l->n_jobs; i++) {
        serve_job(l, &l->jobs[i], now);
        any |= l->jobs[i].run != NULL;
    }
    /* A finish that a progress line reported (--real-progress) is enacted in this step, as
     * the model's finish: the caller, which ends the run once the model is finished, would
     * otherwise say that job's stop as the run's end first, then the finish as a second stop. */
    for (ne = sched_event_count(l->s); l->events_seen < ne; l->events_seen++)
        schedlive_enact(l, sched_event(l->s, l->events_seen));
    int completed, failed;
    if (!l->stopping_all && !any && all_ended(l, &completed, &failed)) {
        schedlive_log(l, "every job has ended (%d completed, %d failed): the run is over",
                      completed, failed);
        schedlive_stop_all(l);
    }
    if (l->stopping_all && !any)
        l->done = 1;
}

void schedlive_stop_all(SchedLive *l)
{
    if (l->stopping_all)
        return;
    l->stopping_all = 1;
    for (size_t i = 0; i < l->n_jobs; i++) {
        LiveJob *j = &l->jobs[i];
        /* a stop already said (a finish, a preemption) is not said again as the run's end;
         * one with a restart to follow (a resize's) is, since that restart is now off */
        int said = (j->stop_wanted || j->stopping) && !j->resize_pending && !j->need_start;
        j->need_start = 0;
        j->resize_pending = 0;
        if (j->run && l->ops->running(j->run) && !said) {
            j->stop_wanted = 1;
            char at[48];
            schedlive_log(l, "%s: end of the run: checkpoint and stop %s", j->name,
                          schedlive_at_step(at, sizeof at, j->step));
        }
    }
}

int schedlive_done(const SchedLive *l)
{
    return l->done;
}

double schedlive_sim_time(const SchedLive *l)
{
    return sched_now(l->s);
}

size_t schedlive_job_count(const SchedLive *l)
{
    return l->n_jobs;
}

void schedlive_job(const SchedLive *l, size_t i, SchedLiveJob *out)
{
    const LiveJob *j = &l->jobs[i];
    SchedJobInfo info;
    sched_job_info(l->s, i, &info);
    /* A ceiling reads as "capped now": a job done or failed has no cap left to show. Cleared
     * here, not in the model, so every view (status lines, --events, the console) agrees,
     * also where the model was not told (its sched_complete or sched_abandon failed). */
    int ended = j->failed || j->ended_itself || info.state == SCHED_JOB_DONE ||
                info.state == SCHED_JOB_FAILED;
    int64_t left_ms = !ended && info.ceiling_gpus ? j->ceiling_until_ms - l->last_ms : 0;
    *out = (SchedLiveJob){.name = j->name,
                          .model = j->model,
                          .running = j->run && l->ops->running(j->run) && !j->preempted,
                          .gpus = j->run ? j->run_gpus : 0,
                          .gpu_ids = j->run ? j->run_where : "",
                          .host = j->host >= 0 ? schedlive_machine(l, j->host) : "",
                          .runs = j->runs,
                          .resizes = j->resizes,
                          .deaths = j->deaths,
                          .preemptions = j->preemptions,
                          .suspended = j->suspended,
                          .failed = j->failed,
                          .ceiling_gpus = ended ? 0 : info.ceiling_gpus,
                          .ceiling_nodes = ended ? 0 : info.ceiling_nodes,
                          .ceiling_left_s = left_ms > 0 ? (double)left_ms / 1000 : 0,
                          .step = j->step,
                          .loss = j->loss,
                          .examples_per_s = j->eps,
                          .epoch = j->epoch,
                          .saved_step = j->saved_step,
                          .resumed_step = j->resumed_step,
                          .model_progress = info.progress,
                          .loss_fraction = j->loss_fraction,
                          .status = j->status};
}
