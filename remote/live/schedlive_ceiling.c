/* A start the cluster refused for one of its limits (LiveRefusal TOO_BIG, TOO_MANY_NODES,
 * FOR_NOW, LIMIT: Slurm's MaxTRESPerJob, MaxNodes, MaxSubmitJobs): a size too big becomes the
 * job's ceiling in the model for a back-off, and the job goes on at the size it had; a count
 * of jobs is waited out. A job that ran a moment ago is never failed for asking to grow
 * (docs/scheduler-live.md). */
#include <math.h>
#include <stdio.h>
#include <string.h>

#include "core/base/duration.h"
#include "core/base/plural.h"
#include "remote/live/schedlive_priv.h"

/* The wait before the next try of a start turned away by a count of jobs: 10 s, doubled at
 * each refusal in a row up to SCHEDLIVE_LIMIT_RETRY_MAX_S. Such a limit clears only as other
 * jobs end, which may be minutes; trying at once would only ask slurmctld again. */
static int retry_s(int tries)
{
    int s = SCHEDLIVE_LIMIT_RETRY_S;
    for (int i = 1; i < tries && s < SCHEDLIVE_LIMIT_RETRY_MAX_S; i++)
        s *= 2;
    return s < SCHEDLIVE_LIMIT_RETRY_MAX_S ? s : SCHEDLIVE_LIMIT_RETRY_MAX_S;
}

static void for_now(SchedLive *l, LiveJob *j, const char *why, const char *taken)
{
    int wait_s = retry_s(++j->limit_tries);
    j->need_start = 1;
    j->start_after_ms = l->last_ms + (int64_t)wait_s * 1000;
    snprintf(j->status, sizeof j->status, "not started: %s (a limit on jobs: tried again in %d s)",
             why, wait_s);
    schedlive_log(
        l,
        "%s: could not start on %s: %s: %sa limit on how many jobs the cluster takes, which "
        "clears as other jobs end: tried again in %d s",
        j->name, schedlive_machine(l, j->want_host), why, taken, wait_s);
}

/* How long the job's next ceiling holds: ceiling_retry_s, doubled at each refusal in a row
 * that set one (the limit stayed), up to ceiling_retry_max_s. */
static double ceiling_hold_s(const SchedLive *l, int refusals)
{
    double s = l->o.ceiling_retry_s;
    for (int i = 1; i < refusals && s < l->o.ceiling_retry_max_s; i++)
        s *= 2;
    return s < l->o.ceiling_retry_max_s ? s : l->o.ceiling_retry_max_s;
}

/* The ceiling under a refused size of `gpus` GPUs on `nodes` nodes (slot_gpus on each): one
 * GPU fewer, or, where the limit counts nodes, what one node fewer holds
 * (sched_node_ceiling: one GPU fewer would often still need as many nodes, and be refused
 * once more). *how_said: why, for the log; "" where nothing is to be said (words of a limit
 * on GPUs, a placement not known, or one node fewer holding no fewer than one GPU fewer). */
static int ceiling_under(const SchedLive *l, LiveRefusal how, int gpus, size_t nodes,
                         const int *slot_gpus, char *how_said, size_t cap)
{
    how_said[0] = 0;
    if (how == LIVERUN_REFUSED_TOO_MANY_NODES && nodes == 1) /* 0: the placement is not known */
        snprintf(how_said, cap,
                 " (one node is over no limit on nodes: the words are taken for a limit on GPUs)");
    if (how != LIVERUN_REFUSED_TOO_MANY_NODES || nodes < 2 || !slot_gpus)
        return gpus - 1;
    int fit = sched_node_ceiling(l->s, slot_gpus, nodes);
    if (fit < 1 || fit >= gpus)
        return gpus - 1;
    snprintf(how_said, cap, " (what %zu node%s hold%s: the limit counts nodes)", nodes - 1,
             plural_s((int)nodes - 1), nodes - 1 == 1 ? "s" : "");
    return fit;
}

void schedlive_ran(LiveJob *j)
{
    j->ran_gpus = j->run_gpus;
    /* Past a lifted ceiling in what its limit counts, the limit was raised: the doubling
     * starts afresh. Nodes for a limit on nodes (more GPUs on as few nodes says nothing of
     * it), GPUs otherwise. */
    if (j->ceiling_gpus && !j->ceiling_until_ms &&
        (j->ceiling_node_cap > 0 ? j->n_run_nodes > (size_t)j->ceiling_node_cap
                                 : j->run_gpus > j->ceiling_gpus))
        j->ceiling_refusals = j->ceiling_gpus = j->ceiling_node_cap = 0;
}

/* The job's size `gpus` is over a limit: its ceiling becomes the size under it (ceiling_under)
 * for a while (ceiling_hold_s) and it keeps the size it last ran at (when under it; under a
 * node ceiling, what its largest slots on that many nodes hold), else waits for a decision
 * within it. Where the model cannot take the ceiling the job is left failed; a node ceiling
 * set just before stays, harmless on a job no decision places again. */
static void too_big(SchedLive *l, LiveJob *j, LiveRefusal how, int gpus, size_t nodes,
                    const int *slot_gpus, const char *why)
{
    size_t idx = (size_t)(j - l->jobs);
    if (gpus <= 1) {
        snprintf(j->status, sizeof j->status, "not started: %s", why);
        schedlive_log(l,
                      "%s: could not start on %s: %s: refused at 1 GPU, the smallest size (trying "
                      "again cannot change it), left failed",
                      j->name, schedlive_machine(l, j->want_host), why);
        schedlive_fail(l, j);
        return;
    }
    char how_said[128];
    int ceiling = ceiling_under(l, how, gpus, nodes, slot_gpus, how_said, sizeof how_said);
    int keep = j->ran_gpus > 0 && j->ran_gpus <= ceiling ? j->ran_gpus : 0;
    SchedJobInfo info = {0};
    Error err;
    if (sched_job_info(l->s, idx, &info) == 0 && info.state == SCHED_JOB_DONE) {
        /* the model finished it while the submission was under way: nothing to go on with */
        j->need_start = 0;
        snprintf(j->status, sizeof j->status, "not started: %s", why);
        schedlive_log(l, "%s: the cluster refused it at %d GPUs (%s); the model has finished it",
                      j->name, gpus, why);
        return;
    }
    /* A limit on nodes caps the nodes too: a ceiling in GPUs alone may still be placed over
     * as many nodes (mixed node sizes, GPUs others hold) and be refused once more. One node
     * is over no limit on nodes: no cap, the refusal one on GPUs throughout (ceiling_under),
     * its back-off's reset included. */
    int node_cap = how == LIVERUN_REFUSED_TOO_MANY_NODES && nodes >= 2 ? (int)nodes - 1 : 0;
    size_t events = sched_event_count(l->s);
    if ((node_cap > 0 && sched_set_node_ceiling(l->s, idx, node_cap, &err) < 0) ||
        sched_set_ceiling(l->s, idx, ceiling, keep, &err) < 0) {
        snprintf(j->status, sizeof j->status, "not started: %s", why);
        schedlive_log(l, "%s: could not start on %s: %s: left failed (%s)", j->name,
                      schedlive_machine(l, j->want_host), why, err.msg);
        schedlive_fail(l, j);
        return;
    }
    /* The model's fall back (an event, enacted at the driver's next step) places it; a job the
     * model holds within both ceilings without one starts at what a later decision wanted,
     * only where that placement is itself within them: the refused one never goes again. */
    int fell_back = sched_event_count(l->s) > events;
    if (sched_job_info(l->s, idx, &info) < 0)
        info.gpus = info.nodes = 0;
    /* While a ceiling holds the model keeps the fewest nodes of any refusal
     * (sched_set_node_ceiling): so do the checks below and the back-off's reset, which read the
     * cap. A refusal on GPUs under a held node ceiling has no node cap of its own (node_cap 0),
     * yet a placement over the held one would be refused again. */
    if (!j->ceiling_until_ms || !j->ceiling_gpus)
        j->ceiling_node_cap = node_cap;
    else if (node_cap > 0 && (j->ceiling_node_cap < 1 || node_cap < j->ceiling_node_cap))
        j->ceiling_node_cap = node_cap;
    int cap = j->ceiling_node_cap;
    int want_within =
        j->want_gpus > 0 && j->want_gpus <= ceiling && (cap < 1 || j->n_want_hosts <= (size_t)cap);
    j->need_start =
        !fell_back && info.gpus <= ceiling && (cap < 1 || info.nodes <= cap) && want_within;
    /* in ms: ceiling_retry_s is a double (1.5 s holds 1.5 s, not 1) */
    double hold_s = ceiling_hold_s(l, ++j->ceiling_refusals);
    j->ceiling_gpus = ceiling;
    j->ceiling_until_ms = l->last_ms + llround(hold_s * 1000);
    snprintf(j->status, sizeof j->status, "not started at %d GPUs: %s (ceiling %d)", gpus, why,
             ceiling);
    char then[160];
    if (keep && fell_back && info.gpus > 0 && info.gpus < keep && info.ceiling_nodes > 0)
        /* the fall back keeps what the job's largest slots on its node ceiling hold */
        snprintf(then, sizeof then,
                 "it goes on at %d of the %d GPUs it had (what its largest slots on %d node%s "
                 "hold), from its checkpoint",
                 info.gpus, keep, info.ceiling_nodes, plural_s(info.ceiling_nodes));
    else if (keep)
        snprintf(then, sizeof then, "it goes on at the %d GPU%s it had, from its checkpoint", keep,
                 plural_s(keep));
    else
        snprintf(then, sizeof then, "the next decision places it within it");
    schedlive_log(
        l,
        "%s: the cluster refused it at %d GPUs (%s): its ceiling is now %d GPU%s%s, which "
        "no decision goes past for %g s (then it may be tried larger again); %s",
        j->name, gpus, why, ceiling, plural_s(ceiling), how_said, hold_s, then);
}

void schedlive_ceilings_expire(SchedLive *l, int64_t now)
{
    if (l->stopping_all)
        return; /* the run is ending: no decision is made that a lift could change */
    for (size_t i = 0; i < l->n_jobs; i++) {
        LiveJob *j = &l->jobs[i];
        if (!j->ceiling_until_ms)
            continue;
        /* Nothing to lift it for where no decision places the job again: failed (abandoned in
         * the model) or done in the model (finished there, or its run ended by itself:
         * sched_complete). */
        SchedJobInfo info;
        if (j->failed || (sched_job_info(l->s, i, &info) == 0 && info.state == SCHED_JOB_DONE)) {
            j->ceiling_until_ms = 0; /* not looked at again */
            continue;
        }
        if (now < j->ceiling_until_ms)
            continue;
        j->ceiling_until_ms = 0;
        Error err;
        if (sched_lift_ceiling(l->s, i, &err) < 0)
            continue; /* an index of ours: cannot fail */
        /* the console shows the status line: a job still waiting said "(ceiling N)" */
        char *said = strstr(j->status, " (ceiling ");
        if (said)
            snprintf(said, sizeof j->status - (size_t)(said - j->status), " (ceiling %d lifted)",
                     j->ceiling_gpus);
        schedlive_log(l,
                      "%s: its ceiling of %d GPU%s is lifted (%g s passed): decisions may give it "
                      "more again, as the cluster's limit may have been raised (a refusal sets "
                      "it again, for %g s)",
                      j->name, j->ceiling_gpus, plural_s(j->ceiling_gpus),
                      ceiling_hold_s(l, j->ceiling_refusals),
                      ceiling_hold_s(l, j->ceiling_refusals + 1));
    }
}

void schedlive_limit_refused(SchedLive *l, LiveJob *j, LiveRefusal how, int gpus, size_t nodes,
                             const int *slot_gpus, const char *why)
{
    j->start_refused = 0; /* a limit is no blip: the "once more" rule is not for it */
    if (how == LIVERUN_REFUSED_FOR_NOW) {
        for_now(l, j, why, "");
        return;
    }
    if (how == LIVERUN_REFUSED_LIMIT) {
        /* The words do not say whether the size or the count of jobs is over. A size the job
         * has run at since the run began, or 1 GPU, passed the size limits (or nothing can):
         * a count then. A larger one is taken for a size limit: a ceiling costs growth,
         * while a count taken for a size would be tried and refused at every decision, each
         * try a checkpoint and a stop of a job that was running. */
        if (gpus <= 1 || gpus <= j->ran_gpus) {
            char taken[160];
            snprintf(taken, sizeof taken, "at %d GPU%s, %s, the words are taken for ", gpus,
                     plural_s(gpus), gpus <= 1 ? "the smallest size" : "a size it ran at");
            for_now(l, j, why, taken);
            return;
        }
    }
    too_big(l, j, how, gpus, nodes, slot_gpus, why);
}

const char *schedlive_ceiling_text(const SchedLiveJob *j, char *buf, size_t size)
{
    if (!size)
        return buf;
    buf[0] = 0;
    if (j->ceiling_gpus <= 0)
        return buf;
    char nodes[32] = "", left[48] = "";
    if (j->ceiling_nodes > 0)
        snprintf(nodes, sizeof nodes, " on %d node%s", j->ceiling_nodes,
                 plural_s(j->ceiling_nodes));
    if (j->ceiling_left_s > 0) {
        char t[24];
        duration_text(t, sizeof t, j->ceiling_left_s);
        snprintf(left, sizeof left, ", retry in %s", t);
    }
    snprintf(buf, size, "ceiling %d GPU%s%s%s", j->ceiling_gpus, plural_s(j->ceiling_gpus), nodes,
             left);
    return buf;
}
