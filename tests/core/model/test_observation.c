#include <criterion/criterion.h>
#include <math.h>
#include <string.h>

#include "core/model/observation.h"
#include "core/sim/simcluster.h"
#include "tests/support/fixtures.h"

static SimCluster *sim;
static Schedule *sched;

static void setup(void)
{
    sim = fixture_sim("C:googlenet");
    const Cluster *c = simcluster_cluster(sim);
    sched = schedule_new(c, simcluster_job(sim));
    sched->job.iterations = 4;
    sched->job.warmup = 2;
    /* g2-0 and g2-1 work and serve; each GPU gets half the batch. */
    for (size_t i = 0; i < 2; i++) {
        sched->worker[i] = sched->ps[i] = 1;
        sched->inputs[c->machines[i].first_device + 1] = sched->job.batch / 2;
    }
}

static void teardown(void)
{
    schedule_free(sched);
    simcluster_free(sim);
}

TestSuite(observation, .init = setup, .fini = teardown);

/* One host's iteration line: its machine only. */
static void add_host_iter(TrialAccumulator *a, int iter, const char *machine, double time_s,
                          double gpu_s)
{
    DeviceMeasure dev = {.inputs = 384, .time_s = gpu_s};
    strcpy(dev.id, "gpu0");
    MachineMeasure mm = {.compute_s = gpu_s, .devices = &dev, .n_devices = 1};
    strcpy(mm.name, machine);
    TrialEvent ev = {.kind = EVENT_ITERATION, .iter = iter, .time_s = time_s, .comm_s = 0.5,
                     .machines = &mm, .n_machines = 1};
    Error err;
    cr_assert_eq(trial_accumulator_add(a, &ev, &err), 0, "%s", err.msg);
}

Test(observation, merges_hosts_by_iter_and_averages_after_warmup)
{
    TrialAccumulator *a = trial_accumulator_new(sched);
    for (int it = 1; it <= 4; it++) {
        /* warm-up iterations are slow and must not count */
        double slow = it <= 2 ? 10.0 : 0.0;
        add_host_iter(a, it, "g2-0", 2.0 + slow, 1.5 + slow);
        add_host_iter(a, it, "g2-1", 3.0 + slow, 2.5 + slow);
    }
    Observation *o = trial_accumulator_finish(a);
    trial_accumulator_free(a);
    cr_assert_eq(o->status, TRIAL_OK, "%s", o->reason);
    cr_assert_float_eq(o->time_s, 3.0, 1e-9, "the slowest host sets an iteration's time");
    cr_assert_float_eq(o->comm_s, 0.5, 1e-9);
    const Cluster *c = sched->cluster;
    cr_assert_float_eq(o->device_time_s[c->machines[0].first_device + 1], 1.5, 1e-9);
    cr_assert_float_eq(o->device_time_s[c->machines[1].first_device + 1], 2.5, 1e-9);
    cr_assert_float_eq(o->machine_time_s[1], 2.5, 1e-9);
    cr_assert(o->device_time_s[c->machines[0].first_device] < 0, "unmeasured stays unknown");
    cr_assert_eq(o->iterations_seen, 4);
    Observation *copy = observation_copy(o);
    cr_assert_float_eq(copy->time_s, o->time_s, 0);
    cr_assert(schedule_equal(copy->schedule, sched));
    observation_free(o);
    observation_free(copy);
}

/* A trial stopped in warm-up (a probe, a prune) has no iteration after it: each part keeps its
 * fastest iteration, since warm-up only ever slows an iteration down. */
Test(observation, stopped_in_warmup_keeps_each_parts_fastest_iteration)
{
    sched->job.iterations = 20;
    sched->job.warmup = 10;
    TrialAccumulator *a = trial_accumulator_new(sched);
    const double g0[] = {9.0, 1.5, 4.0}, g1[] = {2.5, 7.0, 3.0};
    for (int it = 1; it <= 3; it++) {
        add_host_iter(a, it, "g2-0", g0[it - 1] + 1, g0[it - 1]);
        add_host_iter(a, it, "g2-1", g1[it - 1] + 1, g1[it - 1]);
    }
    Observation *o = trial_accumulator_finish(a);
    trial_accumulator_free(a);
    cr_assert_eq(o->iterations_seen, 3);
    const Cluster *c = sched->cluster;
    cr_assert_float_eq(o->device_time_s[c->machines[0].first_device + 1], 1.5, 1e-9);
    cr_assert_float_eq(o->device_time_s[c->machines[1].first_device + 1], 2.5, 1e-9);
    cr_assert_float_eq(o->machine_time_s[0], 1.5, 1e-9);
    cr_assert_float_eq(o->machine_time_s[1], 2.5, 1e-9);
    cr_assert_float_eq(o->comm_s, 0.5, 1e-9);
    observation_free(o);
}

Test(observation, done_time_is_the_objective)
{
    TrialAccumulator *a = trial_accumulator_new(sched);
    for (int it = 1; it <= 4; it++)
        add_host_iter(a, it, "g2-0", 2.0, 1.0);
    TrialEvent done = {.kind = EVENT_DONE, .time_s = 1.75, .comm_s = -1};
    Error err;
    cr_assert_eq(trial_accumulator_add(a, &done, &err), 0);
    Observation *o = trial_accumulator_finish(a);
    trial_accumulator_free(a);
    cr_assert_float_eq(o->time_s, 1.75, 1e-12);
    observation_free(o);
}

/* Each worker host (or each rank) of a trial prints its own done line, in any order: the
 * trial took as long as its slowest one, whichever line comes last (a later, smaller done
 * must not become the objective). */
Test(observation, several_done_lines_keep_the_slowest)
{
    TrialAccumulator *a = trial_accumulator_new(sched);
    double times[] = {1.5, 2.25, 0.001};
    Error err;
    for (size_t i = 0; i < 3; i++) {
        TrialEvent done = {.kind = EVENT_DONE, .time_s = times[i], .comm_s = -1};
        cr_assert_eq(trial_accumulator_add(a, &done, &err), 0);
    }
    Observation *o = trial_accumulator_finish(a);
    trial_accumulator_free(a);
    cr_assert_eq(o->status, TRIAL_OK);
    cr_assert_float_eq(o->time_s, 2.25, 1e-12);
    observation_free(o);
}

Test(observation, no_usable_output_fails_with_a_reason)
{
    TrialAccumulator *a = trial_accumulator_new(sched);
    Observation *o = trial_accumulator_finish(a);
    trial_accumulator_free(a);
    cr_assert_eq(o->status, TRIAL_FAILED);
    cr_assert(strlen(o->reason) > 0);
    observation_free(o);
}

Test(observation, error_event_fails_the_trial_with_its_message)
{
    TrialAccumulator *a = trial_accumulator_new(sched);
    add_host_iter(a, 1, "g2-0", 2.0, 1.0);
    char msg[] = "out of GPU memory on g2-0";
    TrialEvent ev = {.kind = EVENT_ERROR, .text = msg};
    Error err;
    trial_accumulator_add(a, &ev, &err);
    const char *m = NULL;
    cr_assert(trial_accumulator_has_error(a, &m));
    Observation *o = trial_accumulator_finish(a);
    trial_accumulator_free(a);
    cr_assert_eq(o->status, TRIAL_FAILED);
    cr_assert(strstr(o->reason, "out of GPU memory"), "%s", o->reason);
    observation_free(o);
}

/* Regression: the ranks of two hosts reach the launcher through two streams (srun's per-node
 * forwarding, two SSH channels), so a peer's lost connection may come before the crashed
 * rank's own error event. The reason was the first event, the peer's; it is the crash's. */
Test(observation, a_peers_lost_connection_gives_way_to_the_crashed_ranks_error)
{
    TrialAccumulator *a = trial_accumulator_new(sched);
    char peer[] = "rank 3 on n2: RuntimeError: Connection reset by peer";
    char crash[] = "rank 1 on n1: RuntimeError: crashing on purpose (--crash-rank 1)";
    char later[] = "rank 4 on n2: RuntimeError: out of memory";
    TrialEvent ev[] = {{.kind = EVENT_ERROR, .text = peer},
                       {.kind = EVENT_ERROR, .text = crash},
                       {.kind = EVENT_ERROR, .text = later}};
    Error err;
    for (size_t i = 0; i < 3; i++)
        trial_accumulator_add(a, &ev[i], &err);
    Observation *o = trial_accumulator_finish(a);
    trial_accumulator_free(a);
    cr_assert_str_eq(o->reason, "error event: rank 1 on n1: RuntimeError: crashing on purpose "
                                "(--crash-rank 1)");
    observation_free(o);
}

/* Only lost connections: the first is the reason, as before. */
Test(observation, only_lost_connections_keep_the_first)
{
    TrialAccumulator *a = trial_accumulator_new(sched);
    char one[] = "rank 2 on n1: RuntimeError: [pair.cc:598] Connection closed by peer [n2]:1";
    char two[] = "rank 0 on n2: RuntimeError: Connection reset by peer";
    TrialEvent ev[] = {{.kind = EVENT_ERROR, .text = one}, {.kind = EVENT_ERROR, .text = two}};
    Error err;
    for (size_t i = 0; i < 2; i++)
        trial_accumulator_add(a, &ev[i], &err);
    Observation *o = trial_accumulator_finish(a);
    trial_accumulator_free(a);
    cr_assert(strstr(o->reason, "Connection closed by peer [n2]:1"), "%s", o->reason);
    observation_free(o);
}

/* An error event without text is no cause: it kept the peer's words out with a bare "error
 * event" (peerloss_said(NULL) is 0, so "not a lost peer" held for it). */
Test(observation, an_error_without_text_does_not_replace_a_lost_peers_words)
{
    TrialAccumulator *a = trial_accumulator_new(sched);
    char peer[] = "rank 3 on n2: RuntimeError: [pair.cc:598] Connection closed by peer [n1]:7";
    TrialEvent ev[] = {{.kind = EVENT_ERROR, .text = peer}, {.kind = EVENT_ERROR, .text = NULL}};
    Error err;
    for (size_t i = 0; i < 2; i++)
        trial_accumulator_add(a, &ev[i], &err);
    Observation *o = trial_accumulator_finish(a);
    trial_accumulator_free(a);
    cr_assert(strstr(o->reason, "Connection closed by peer [n1]:7"), "%s", o->reason);
    observation_free(o);
}

/* A message longer than the reason was cut by snprintf wherever the byte count ran out, in
 * the middle of a character: the reason in the journal and `tune --json` was then not UTF-8.
 * It is cut at a whole character. */
Test(observation, a_long_error_message_is_cut_at_a_whole_character)
{
    TrialAccumulator *a = trial_accumulator_new(sched);
    char msg[1200] = "x"; /* "x" then "é" (2 bytes) repeated: any cut may land mid-character */
    for (size_t i = 1; i + 2 < sizeof msg; i += 2)
        memcpy(msg + i, "\xc3\xa9", 2);
    msg[sizeof msg - 1] = 0;
    TrialEvent ev = {.kind = EVENT_ERROR, .text = msg};
    Error err;
    trial_accumulator_add(a, &ev, &err);
    Observation *o = trial_accumulator_finish(a);
    trial_accumulator_free(a);
    cr_assert_eq(o->status, TRIAL_FAILED);
    size_t n = strlen(o->reason);
    cr_assert_gt(n, 200, "%s", o->reason);
    /* "error event: " is 13 bytes, then "x": every "é" after it starts at an even offset */
    cr_assert_eq((n - 14) % 2, 0, "cut mid-character: %zu bytes: %s", n, o->reason);
    observation_free(o);
}

Test(observation, unknown_machine_or_device_is_rejected)
{
    TrialAccumulator *a = trial_accumulator_new(sched);
    DeviceMeasure dev = {.inputs = 1, .time_s = 1};
    strcpy(dev.id, "gpu0");
    MachineMeasure mm = {.compute_s = 1, .devices = &dev, .n_devices = 1};
    strcpy(mm.name, "ghost");
    TrialEvent ev = {.kind = EVENT_ITERATION, .iter = 1, .time_s = 1, .comm_s = -1,
                     .machines = &mm, .n_machines = 1};
    Error err = {0};
    cr_assert_eq(trial_accumulator_add(a, &ev, &err), -1);
    cr_assert(strstr(err.msg, "unknown machine 'ghost'"), "%s", err.msg);
    strcpy(mm.name, "c4x8-0");
    strcpy(dev.id, "gpu0");
    cr_assert_eq(trial_accumulator_add(a, &ev, &err), -1);
    cr_assert(strstr(err.msg, "no device 'gpu0'"), "%s", err.msg);
    trial_accumulator_free(a);
}

Test(observation, iterations_past_the_schedule_are_a_protocol_error)
{
    /* The schedule runs 4 iterations: 0..4 (counting from 0 or 1) and one spare, 5, are kept;
     * anything a trial claims beyond is refused before any memory is taken for it. */
    TrialAccumulator *a = trial_accumulator_new(sched);
    for (int it = 0; it <= 5; it++)
        add_host_iter(a, it, "g2-0", 2.0, 1.0);
    int refused[] = {6, 1000, 999999, -1};
    for (size_t k = 0; k < sizeof refused / sizeof *refused; k++) {
        TrialEvent ev = {.kind = EVENT_ITERATION, .iter = refused[k], .time_s = 1, .comm_s = -1};
        Error err = {0};
        cr_assert_eq(trial_accumulator_add(a, &ev, &err), -1, "iter %d", refused[k]);
        cr_assert(strstr(err.msg, "expected an iteration number from 0 to 5 (the schedule runs 4"),
                  "%s", err.msg);
    }
    trial_accumulator_free(a);
}

Test(observation, every_status_name_reads_back_as_its_status)
{
    /* `tunedeck sessions` once stopped before "pruned" and called every probe a bad line. */
    for (int s = TRIAL_OK; s <= TRIAL_PRUNED; s++) {
        TrialStatus back = TRIAL_OK;
        cr_assert_eq(trial_status_from_name(trial_status_name((TrialStatus)s), &back), 0, "%d", s);
        cr_assert_eq(back, (TrialStatus)s);
    }
    TrialStatus none;
    cr_assert_eq(trial_status_from_name("unknown", &none), -1);
    cr_assert_eq(trial_status_from_name(NULL, &none), -1);
}
