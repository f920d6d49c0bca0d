/* The scheduler's live mode: a wall-clock SchedState whose decisions are enacted through a
 * backend's runs (remote/live/liverun.h: SSH or Slurm); here the model's time, each run
 * served (its signals, its end) and the queries. Enactment: schedlive_enact.c; a run's
 * progress lines: schedlive_progress.c. */
#include "remote/live/schedlive_priv.h"

#include <math.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "core/base/clock.h"
#include "core/base/evloop.h"
#include "core/base/plural.h"
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

const char *schedlive_ended(char *buf, size_t size, long step, const char *status)
{
    if (step < 0)
        snprintf(buf, size, "before its first progress line (%s)", status);
    else
        snprintf(buf, size, "after step %ld (its last progress line; %s)", step, status);
    return buf;
}

/* A node of the job's run that the backend now calls unusable (its host down over SSH,
 * drained or down in Slurm), or -1. */
static int run_on_unusable(const SchedLive *l, const LiveJob *j)
{
    for (size_t h = 0; l->node_unusable && h < j->n_run_nodes; h++) {
        int node = j->run_nodes[h];
        if (node >= 0 && node < sched_node_count(l->s) && l->node_unusable[node])
            return node;
    }
    return -1;
}

/* A run the backend says waits on a limit of its size (LiveRunOps.over_limit: Slurm took the
 * job but will never start it as it is) is cancelled, and its end taken as a start refused
 * for its size (serve_job): the job gets a ceiling and goes on at the size it had, as when
 * sbatch refuses it at once. Not while its nodes are out of the model's use: Slurm's
 * PartitionNodeLimit also stands for nodes down or drained, which the node rounds handle. */
static void over_limit(SchedLive *l, LiveJob *j)
{
    if (!l->ops->over_limit || j->limit_wait || j->stop_wanted || j->stopping || l->stopping_all)
        return;
    LiveRefusal how = LIVERUN_REFUSED_TOO_BIG;
    const char *why = l->ops->over_limit(j->run, &how);
    if (!why || run_on_unusable(l, j) >= 0)
        return;
    j->limit_wait = 1;
    j->limit_how = how;
    j->stop_wanted = 1;
    snprintf(j->limit_why, sizeof j->limit_why, "%s waits on %s, a limit on its size",
             l->ops->label ? l->ops->label(j->run) : "its run", why);
    schedlive_log(l, "%s: %s: cancelled", j->name, j->limit_why);
}

/* Counts a death; returns how many there have been in a row, each within death_window_s of
 * the one before: a job that dies once a day is restarted each time, one that dies again
 * soon after a restart is left failed. */
static int count_death(SchedLive *l, LiveJob *j, int64_t now)
{
    if (j->deaths_near && now - j->last_death_ms >= (int64_t)(l->o.death_window_s * 1000))
        j->deaths_near = 0;
    j->deaths++;
    j->last_death_ms = now;
    return ++j->deaths_near;
}

/* The run exited 0 unasked: its script says the training is done, so the job is done. The
 * model finishes it now (sched_complete): its GPUs go back at once for the other jobs, and no
 * decision places it again (docs/scheduler-live.md, "Deaths"). Left to the model's progress,
 * its GPUs sat idle in the model until it finished the job there, and a decision that resized
 * it meanwhile started it again. */
static void ended_itself(SchedLive *l, LiveJob *j)
{
    j->ended_itself = 1;
    j->need_start = 0;
    j->want_gpus = 0;
    j->resize_pending = 0;
    j->ceiling_until_ms = 0; /* no lift to wait for */
    char at[48];
    schedlive_at_step(at, sizeof at, j->step);
    size_t idx = (size_t)(j - l->jobs);
    SchedJobInfo info;
    Error err;
    if (sched_job_info(l->s, idx, &info) < 0 || info.state == SCHED_JOB_DONE) {
        schedlive_log(l, "%s: ended by itself %s", j->name, at); /* the model finished it too */
        return;
    }
    if (sched_complete(l->s, idx, &err) < 0) {
        schedlive_log(l, "%s: ended by itself %s (the scheduler: %s)", j->name, at, err.msg);
        return;
    }
    j->complete_event = 1;
    if (info.gpus > 0)
        schedlive_log(l,
                      "%s: ended by itself %s: done, its %d GPU%s go back to the scheduler "
                      "for other jobs",
                      j->name, at, info.gpus, plural_s(info.gpus));
    else
        schedlive_log(l, "%s: ended by itself %s: done", j->name, at);
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
    if (j->run && l->ops->status(j->run)[0]) {
        /* the process ended */
        snprintf(j->status, sizeof j->status, "%s", l->ops->status(j->run));
        int asked = j->stop_wanted || j->stopping;
        /* The backend's request was refused after its start returned (Slurm: sbatch's
         * error): a refused start, not a death; a stop asked meanwhile is only a stop. */
        LiveRefusal how = LIVERUN_REFUSED_ONCE;
        const char *refused_why = !j->preempted && !asked && !l->stopping_all && l->ops->refused
                                      ? l->ops->refused(j->run, &how)
                                      : NULL;
        /* cancelled on a limit of its size before it printed a line (one that started
         * meanwhile and was stopped is an end like any other) */
        int limited = j->limit_wait && j->seen == 0 && !l->stopping_all;
        j->limit_wait = 0;
        if (!refused_why && !limited) {
            j->start_refused = 0;
            j->limit_tries = 0;
        }
        /* Only a run seen running says its size passed the cluster's limits: one stopped or
         * preempted while pending may have waited on a limit whose reason no round had read
         * yet (LiveRunOps.over_limit), and would make a size refusal read as a count one
         * (schedlive_limit_refused) or forget a ceiling the limit still holds.
         * A preempted run was counted when the backend took it (schedlive_preempted), before
         * its size was cleared. */
        if (!refused_why && !limited && j->seen > 0 && !j->preempted)
            schedlive_ran(j);
        if (refused_why || limited) {
            j->runs--; /* the job never ran */
            schedlive_start_refused(l, j, refused_why ? how : j->limit_how, j->run_gpus,
                                    j->n_run_nodes, j->run_slot_gpus,
                                    refused_why ? refused_why : j->limit_why);
        } else if (j->preempted) {
            /* said when the backend took it (schedlive_preempted): no death. With REQUEUE that
             * is usually while its copy is pending, before the exit line that says the TERM
             * wrote a checkpoint reached its output: read again now that the run is over, so
             * the next run resumes from that checkpoint rather than an older one or none. */
            if (!j->preempt_saved && l->ops->rank0_saved(j->run)) {
                j->has_ckpt = 1;
                j->saved_step = j->step;
                schedlive_log(l,
                              "%s: its preempted run ended having written its checkpoint at "
                              "step %ld: the next run resumes from it",
                              j->name, j->step);
            }
        } else if (strstr(j->status, "exited 75: " SCHEDLIVE_FENCE_WORD)) {
            /* Not a death: the job never started. Another run of it still holds its folder
             * (left on a host whose sshd died); the backend stops that one when its host
             * answers. The model keeps the placement; the start is tried again. */
            if (!j->fence_said && !l->stopping_all)
                schedlive_log(l,
                              "%s: another run of it still holds its folder (one left on a "
                              "host whose connection dropped?): it starts once that run has "
                              "stopped, tried every %d s",
                              j->name, SCHEDLIVE_FENCE_RETRY_S);
            j->fence_said = 1;
            j->runs--; /* the job never ran: the start that gets through is the run */
            j->need_start = j->want_gpus > 0;
            j->start_after_ms = now + SCHEDLIVE_FENCE_RETRY_S * 1000;
        } else if (asked && strcmp(j->status, "exited 0") == 0) {
            j->has_ckpt = 1;
            j->saved_step = j->step;
            char epoch[40] = "", loss[40] = "";
            if (j->epoch >= 0)
                snprintf(epoch, sizeof epoch, " (epoch %.2f)", j->epoch);
            if (!isnan(j->loss))
                snprintf(loss, sizeof loss, " (loss %.4f)", j->loss);
            char at[48];
            schedlive_log(l, "%s: stopped %s%s, checkpoint written%s", j->name,
                          schedlive_at_step(at, sizeof at, j->step), epoch, loss);
        } else if (asked) {
            schedlive_log(l, "%s: stopped: %s (no new checkpoint)", j->name, j->status);
        } else if (strcmp(j->status, "exited 0") == 0) {
            ended_itself(l, j);
        } else {
            char ended[384]; /* its status (300) and where it stood */
            /* where this run stood: its own last line, not the run's before it (j->step is
             * the job's, kept across runs) when it died before printing one */
            long run_step = j->seen ? j->step : -1;
            if (l->ops->rank0_saved(j->run)) { /* another host's run died; rank 0 saved */
                j->has_ckpt = 1;
                j->saved_step = j->step;
            }
            int down = run_on_unusable(l, j);
            if (down >= 0 && j->want_gpus > 0 && !l->stopping_all) {
                /* Its host went down (drained in the model: schedlive_nodes.c). A restart
                 * there now would only fail and leave the job failed; the decision that
                 * moves it off the node starts it. Not the job's death: its node's. That
                 * decision may have come in this very step, enacted before this end was
                 * read (need_start set while the run was already over): its start stands. */
                schedlive_log(l,
                              "%s: its run ended %s with %s, which the scheduler no longer "
                              "uses: it restarts %s where %s decision places it",
                              j->name, schedlive_ended(ended, sizeof ended, run_step, j->status),
                              schedlive_machine(l, down),
                              j->has_ckpt ? "from its checkpoint" : "fresh (no checkpoint yet)",
                              j->need_start ? "this" : "the next");
                /* No decision of this step placed it elsewhere: its GPUs go back in the model
                 * (as a preemption's do), so the next decision places it again. Kept there, a
                 * node that answers again before that decision left it placed and "running"
                 * in the model, and a policy that does not resize it never started it. */
                Error err;
                if (!j->need_start && sched_evict(l->s, (size_t)(j - l->jobs), &err) < 0)
                    schedlive_log(l, "%s: %s", j->name, err.msg);
                else if (!j->need_start)
                    j->preempt_event = 1; /* the model's stop that follows: said here */
            } else if (count_death(l, j, now) == 1 && j->want_gpus > 0 && !l->stopping_all) {
                char ago[96] = "";
                double w = l->o.death_window_s;
                if (j->deaths > 1)
                    snprintf(ago, sizeof ago,
                             " (its last death was over %.0f %s ago: counted as a first)",
                             w >= 120 ? w / 60 : w, w >= 120 ? "min" : "s");
                schedlive_log(l, "%s: died unexpectedly %s: restarting %s%s", j->name,
                              schedlive_ended(ended, sizeof ended, run_step, j->status),
                              j->has_ckpt ? "from its checkpoint" : "fresh (no checkpoint yet)",
                              ago);
                j->need_start = 1;
            } else {
                schedlive_log(l, "%s: died unexpectedly %s%s", j->name,
                              schedlive_ended(ended, sizeof ended, run_step, j->status),
                              j->want_gpus > 0 && !l->stopping_all
                                  ? ": second death in a row, left stopped"
                                  : "");
                if (j->want_gpus > 0 && !l->stopping_all)
                    schedlive_fail(l, j);
            }
        }
        l->ops->free(j->run);
        j->run = NULL;
        j->run_gpus = 0;
        j->n_run_nodes = 0;
        j->stopping = j->stop_wanted = j->killed = 0;
        j->preempted = j->preempt_saved = 0;
    }
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
        j->need_start = 0;
        j->resize_pending = 0;
        if (j->run && l->ops->running(j->run)) {
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
                          .ceiling_gpus = info.ceiling_gpus,
                          .ceiling_nodes = info.ceiling_nodes,
                          .ceiling_left_s = info.ceiling_gpus && j->ceiling_until_ms > l->last_ms
                                                ? (double)(j->ceiling_until_ms - l->last_ms) / 1000
                                                : 0,
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
