/* The live driver's decisions turned into runs: what each job wants after a start, resize,
 * stop or finish, which GPU indices and port a new run gets, and its start through the
 * backend (remote/live/schedlive_priv.h). */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "core/base/plural.h"
#include "remote/live/schedlive_priv.h"

const char *schedlive_machine(const SchedLive *l, int m)
{
    if (m >= 0 && (size_t)m < l->c->n_machines)
        return l->c->machines[m].name;
    const char *joined = sched_node_name(l->s, m); /* a node the backend found later */
    return joined ? joined : "?";
}

/* The GPU indices of `node` the job is to use, `want` of them: the ones the scheduler's
 * model gives it (so the console's GPU grid shows the real CUDA_VISIBLE_DEVICES), or when
 * the model's slots no longer match (a later decision), the lowest no other running job
 * holds. The start waits until stopped jobs have left its nodes (schedlive_blocker), so what runs
 * there now is what the scheduler placed there and the count fits. */
static void pick_gpu_ids(const SchedLive *l, const LiveJob *j, int node, int want, int *out)
{
    enum { MAX_GPU_INDEX = 1024 };
    int gpn = sched_node_gpu_count(l->s, node); /* nodes may differ in size */
    int owners[MAX_GPU_INDEX];
    int n = 0, self = (int)(j - l->jobs);
    if (gpn > 0 && gpn <= MAX_GPU_INDEX && sched_node_gpus(l->s, node, owners, gpn) >= 0) {
        for (int g = 0; g < gpn && n < want; g++)
            if (owners[g] == self)
                out[n++] = g;
        if (n == want)
            return;
    }
    unsigned char held[MAX_GPU_INDEX] = {0};
    for (size_t i = 0; i < l->n_jobs; i++) {
        const LiveJob *k = &l->jobs[i];
        if (k == j || !k->run || !l->ops->running(k->run))
            continue;
        const int *ids = k->run_gpu_ids;
        for (size_t h = 0; h < k->n_run_nodes; ids += k->run_slot_gpus[h], h++)
            if (k->run_nodes[h] == node)
                for (int g = 0; g < k->run_slot_gpus[h]; g++)
                    if (ids[g] >= 0 && ids[g] < MAX_GPU_INDEX)
                        held[ids[g]] = 1;
    }
    n = 0;
    for (int idx = 0; n < want; idx++)
        if (idx >= MAX_GPU_INDEX || !held[idx])
            out[n++] = idx;
}

/* The job's rendezvous port: the first from the inventory's base that no other running
 * job uses, so two jobs never meet on one port (a restart may reuse its own). */
static int pick_port(const SchedLive *l, const LiveJob *j)
{
    int base = l->c->job_master_port > 0 ? l->c->job_master_port : CLUSTER_JOB_MASTER_PORT;
    for (int port = base;; port++) {
        int used = 0;
        for (size_t i = 0; i < l->n_jobs && !used; i++) {
            const LiveJob *k = &l->jobs[i];
            used = k != j && k->run && l->ops->running(k->run) && k->run_port == port;
        }
        if (!used)
            return port;
    }
}

/* A failed job is left stopped for good (docs/scheduler-live.md, "Deaths"): the model
 * gives its GPUs back and never places it again (sched_abandon), so other jobs get them and
 * no later decision restarts it. The model's stop that follows is said here, not as a
 * decision. */
void schedlive_fail(SchedLive *l, LiveJob *j)
{
    if (j->failed)
        return;
    j->failed = 1;
    j->need_start = 0;
    j->ceiling_until_ms = 0; /* no lift to wait for */
    j->resize_pending = 0;
    size_t idx = (size_t)(j - l->jobs);
    SchedJobInfo info;
    if (sched_job_info(l->s, idx, &info) < 0 || info.state == SCHED_JOB_DONE)
        return; /* finished in the model: it holds nothing and is placed no more */
    Error err;
    if (sched_abandon(l->s, idx, &err) < 0) {
        schedlive_log(l, "%s: %s", j->name, err.msg);
        return;
    }
    if (info.gpus > 0) {
        j->preempt_event = 1;
        schedlive_log(l, "%s: failed: its %d GPU%s go%s back to the scheduler for other jobs",
                      j->name, info.gpus, plural_s(info.gpus), info.gpus == 1 ? "es" : "");
    }
}

/* The backend refused the start. One that may pass (an SSH exec that failed once, a script
 * not written) is tried once more, at the next tick at the soonest (need_start kept, the
 * placement as wanted then): a blip does not cost the job. One the backend says cannot pass
 * (bad input), or a second in a row, leaves the job failed (schedlive_fail). */
void schedlive_start_refused(SchedLive *l, LiveJob *j, LiveRefusal refusal, int gpus, size_t nodes,
                             const int *slot_gpus, const char *why)
{
    if (refusal == LIVERUN_REFUSED_TOO_BIG || refusal == LIVERUN_REFUSED_FOR_NOW ||
        refusal == LIVERUN_REFUSED_LIMIT || refusal == LIVERUN_REFUSED_TOO_MANY_NODES) {
        schedlive_limit_refused(l, j, refusal, gpus, nodes, slot_gpus, why);
        return;
    }
    const char *where = schedlive_machine(l, j->want_host);
    if (refusal == LIVERUN_REFUSED_ONCE && !j->start_refused) {
        j->start_refused = 1;
        j->need_start = 1;
        j->start_after_ms = l->last_ms + (int64_t)(l->o.tick_s * 1000); /* this step's now */
        snprintf(j->status, sizeof j->status, "not started: %s (trying again)", why);
        schedlive_log(l, "%s: could not start on %s: %s: tried once more at the next tick", j->name,
                      where, why);
        return;
    }
    snprintf(j->status, sizeof j->status, "not started: %s", why);
    schedlive_log(l, "%s: could not start on %s: %s: %s", j->name, where, why,
                  refusal == LIVERUN_REFUSED_FOR_GOOD
                      ? "refused for good (trying again cannot change it), left failed"
                      : "refused again, left failed");
    j->start_refused = 0;
    schedlive_fail(l, j);
}

void schedlive_start_run(SchedLive *l, LiveJob *j)
{
    size_t n = j->n_want_hosts;
    int total = 0;
    for (size_t h = 0; h < n; h++)
        total += j->want_slot_gpus[h];
    int *ids = malloc((size_t)(total ? total : 1) * sizeof *ids);
    JobHost *hosts = calloc(n ? n : 1, sizeof *hosts);
    const char **names = calloc(n ? n : 1, sizeof *names);
    int *slots = malloc((n ? n : 1) * sizeof *slots);
    int *nodes = malloc((n ? n : 1) * sizeof *nodes);
    if (!ids || !hosts || !names || !slots || !nodes) {
        free(ids), free(hosts), free(names), free(slots), free(nodes);
        snprintf(j->status, sizeof j->status, "not started: out of memory");
        schedlive_fail(l, j);
        return;
    }
    int *next = ids;
    for (size_t h = 0; h < n; h++) {
        int node = j->want_nodes[h];
        /* a node the backend found later has no inventory entry: its name is its address */
        const Machine *m = (size_t)node < l->c->n_machines ? &l->c->machines[node] : NULL;
        pick_gpu_ids(l, j, node, j->want_slot_gpus[h], next);
        names[h] = m ? m->name : schedlive_machine(l, node);
        hosts[h] = (JobHost){.addr = m && m->host[0] ? m->host : names[h],
                             .gpus = j->want_slot_gpus[h],
                             .gpu_ids = next};
        slots[h] = j->want_slot_gpus[h];
        nodes[h] = j->want_nodes[h];
        next += j->want_slot_gpus[h];
    }
    int port = pick_port(l, j);
    JobAlloc a = {.gpus = j->want_gpus,
                  .hosts = hosts,
                  .n_hosts = n,
                  .master_port = port,
                  .resume = j->has_ckpt ? j->ckpt_path : ""};
    Error err;
    if (j->run)
        l->ops->free(j->run);
    LiveRunSpec spec = {.name = j->name,
                        .job_dir = l->o.job_dir,
                        .command_template = l->c->job_command,
                        .alloc = &a,
                        .nodes = nodes,
                        .node_names = names};
    LiveRefusal refusal = LIVERUN_REFUSED_ONCE;
    j->run = l->ops->start(l->ops_ctx, &spec, &refusal, &err);
    free(hosts);
    j->need_start = 0;
    j->seen = 0;
    j->refused_said = 0;
    j->run_first_step = -1;
    j->stopping = j->stop_wanted = j->killed = 0;
    j->status[0] = 0;
    if (!j->run) {
        free(ids), free(slots), free(nodes), free(names);
        schedlive_start_refused(l, j, refusal, j->want_gpus, n, j->want_slot_gpus, err.msg);
        return;
    }
    /* A backend that refuses after the start (LiveRunOps.refused) clears it once the run
     * ends otherwise (schedlive_end.c), so two refusals in a row still fail the job. */
    if (!l->ops->refused)
        j->start_refused = 0;
    j->host = j->want_host;
    j->run_gpus = j->want_gpus;
    j->run_port = port;
    free(j->run_nodes), free(j->run_slot_gpus), free(j->run_gpu_ids);
    j->run_nodes = nodes;
    j->run_slot_gpus = slots;
    j->run_gpu_ids = ids;
    j->n_run_nodes = n;
    j->wait_logged = 0;
    j->waiting[0] = 0;
    j->runs++;
    if (j->resize_pending) {
        j->resizes++;
        j->resize_pending = 0;
    }
    char *where = j->run_where, asked[256];
    schedlive_where_text(names, slots, ids, n, where, sizeof j->run_where);
    schedlive_where_text(names, slots, NULL, n, asked, sizeof asked);
    free(names);
    const char *label = l->ops->label ? l->ops->label(j->run) : NULL;
    if (l->ops->granted)
        where[0] = 0; /* until the backend says what it granted */
    if (j->fence_said) /* a start tried again while another run holds the folder: said then */
        return;
    if (label)        /* the backend picks the GPUs: they are known once it grants them */
        schedlive_log(l, "%s: started on %s with %d GPU%s (%s, asked for %s), %s", j->name,
                      schedlive_machine(l, j->host), a.gpus, plural_s(a.gpus), label, asked,
                      j->has_ckpt ? "resuming from its checkpoint" : "fresh");
    else
        schedlive_log(l, "%s: started on %s with %d GPU%s (GPUs %s%s), %s", j->name,
                      schedlive_machine(l, j->host), a.gpus, plural_s(a.gpus), where,
                      l->ops->size(j->run) > 1 ? ", one process group per host" : "",
                      j->has_ckpt ? "resuming from its checkpoint" : "fresh");
}

static void set_want(SchedLive *l, LiveJob *j, const SchedEvent *ev)
{
    schedlive_free_want(j);
    j->want_gpus = ev->gpus_to;
    j->want_host = ev->n_slots ? ev->slots[0].node : -1;
    j->n_want_hosts = ev->n_slots;
    j->want_hosts = calloc(ev->n_slots ? ev->n_slots : 1, sizeof *j->want_hosts);
    j->want_nodes = calloc(ev->n_slots ? ev->n_slots : 1, sizeof *j->want_nodes);
    j->want_slot_gpus = calloc(ev->n_slots ? ev->n_slots : 1, sizeof *j->want_slot_gpus);
    for (size_t i = 0; i < ev->n_slots; i++) {
        j->want_hosts[i] = strdup(schedlive_machine(l, ev->slots[i].node));
        j->want_nodes[i] = ev->slots[i].node;
        j->want_slot_gpus[i] = ev->slots[i].gpus;
    }
}

void schedlive_enact(SchedLive *l, const SchedEvent *ev)
{
    if (ev->job < 0 || (size_t)ev->job >= l->n_jobs)
        return;
    LiveJob *j = &l->jobs[ev->job];
    if (ev->kind == SCHED_EV_STOP && j->preempt_event) {
        /* the model's side of a preemption the backend reported: said then, not a decision */
        j->preempt_event = 0;
        j->need_start = 0;
        j->want_gpus = 0;
        j->resize_pending = 0;
        return;
    }
    if (ev->kind == SCHED_EV_FINISH && j->complete_event) {
        /* the model's side of a run that ended by itself: said then (schedlive_end.c) */
        j->complete_event = 0;
        return;
    }
    char place[512] = "";
    size_t pl = 0;
    for (size_t i = 0; i < ev->n_slots && pl < sizeof place - 64; i++)
        pl += (size_t)snprintf(place + pl, sizeof place - pl, "%s%s:%d", i ? "," : "",
                               schedlive_machine(l, ev->slots[i].node), ev->slots[i].gpus);
    /* The model's fall back under a refusal is said as such, not as a decision. */
    char said[256]; /* a job name is at most 127 bytes */
    if (ev->ceiling_gpus > 0)
        snprintf(said, sizeof said, "%s: under its ceiling of %d GPU%s: %s", j->name,
                 ev->ceiling_gpus, plural_s(ev->ceiling_gpus), sched_event_kind_name(ev->kind));
    else
        snprintf(said, sizeof said, "decision t=%.0fs: %s %s", ev->time_s,
                 sched_event_kind_name(ev->kind), j->name);
    schedlive_log(l, "%s %d -> %d GPU%s%s%s", said, ev->gpus_from, ev->gpus_to,
                  plural_s(ev->gpus_to), place[0] ? " on " : "", place);
    int up = j->run && l->ops->running(j->run) && !j->preempted; /* a taken run is no stop's */
    char at[48];
    switch (ev->kind) {
    case SCHED_EV_START:
    case SCHED_EV_RESIZE:
        if (ev->n_slots == 0 || ev->gpus_to <= 0)
            return;
        if (j->failed || j->ended_itself) /* the model no longer places it: never restarted */
            return;
        set_want(l, j, ev);
        if (up) {
            j->stop_wanted = 1;
            j->resize_pending = 1;
            schedlive_log(l, "%s: resize: checkpoint and stop %s, then restart with %d GPU%s",
                          j->name, schedlive_at_step(at, sizeof at, j->step), ev->gpus_to,
                          plural_s(ev->gpus_to));
        }
        j->need_start = 1;
        break;
    case SCHED_EV_STOP:
    case SCHED_EV_FINISH:
        j->need_start = 0;
        j->want_gpus = 0;
        j->resize_pending = 0;
        if (up) {
            j->stop_wanted = 1;
            schedlive_log(l, "%s: checkpoint and stop %s (%s)", j->name,
                          schedlive_at_step(at, sizeof at, j->step),
                          ev->kind == SCHED_EV_FINISH ? "the model says it is done" : "preempted");
        }
        break;
    }
}

/* A job being stopped whose run holds GPUs on a node j is to start on: j waits for it (its
 * old process still holds all the GPUs it had). Stops never wait, so nothing deadlocks. */
const LiveJob *schedlive_blocker(const SchedLive *l, const LiveJob *j)
{
    for (size_t i = 0; i < l->n_jobs; i++) {
        const LiveJob *k = &l->jobs[i];
        if (k == j || !k->run || !(k->stop_wanted || k->stopping))
            continue;
        for (size_t a = 0; a < k->n_run_nodes; a++)
            for (size_t b = 0; b < j->n_want_hosts; b++)
                if (k->run_nodes[a] == j->want_nodes[b])
                    return k;
    }
    return NULL;
}
