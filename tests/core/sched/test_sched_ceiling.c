/* A job's ceiling (sched_set_ceiling): the most GPUs the cluster lets it have, learnt when it
 * refused the job a larger size. No policy gives it more; a job holding more falls back in
 * place, the event marked with the ceiling. */
#include <criterion/criterion.h>
#include <stdlib.h>
#include <string.h>

#include "core/sched/catalogue.h"
#include "core/sched/sched.h"
#include "tests/support/fixtures.h"

#define FIXTURE TUNEDECK_SOURCE_DIR "/tests/fixtures/workload-small.csv"

FIXTURE_CATALOGUE_SUITE(sched_ceiling);

/* The most GPUs any event of the run gave job `job` (the workload run to its end). */
static int most_given(const char *policy, int job, int ceiling)
{
    SchedState *s = fixture_sched(cat, policy, 4, NULL, 0);
    Error e;
    cr_assert_eq(sched_load_workload(s, FIXTURE, &e), 0, "%s", e.msg);
    if (ceiling)
        cr_assert_eq(sched_set_ceiling(s, (size_t)job, ceiling, 0, &e), 0, "%s", e.msg);
    while (!sched_finished(s) && sched_now(s) < 1e6)
        cr_assert_eq(sched_advance(s, 60, &e), 0, "%s: %s", policy, e.msg);
    cr_assert(sched_finished(s), "%s left jobs unfinished", policy);
    int most = 0;
    for (size_t i = 0; i < sched_event_count(s); i++) {
        const SchedEvent *ev = sched_event(s, i);
        if (ev->job == job && ev->gpus_to > most)
            most = ev->gpus_to;
    }
    SchedJobInfo info;
    sched_job_info(s, (size_t)job, &info);
    cr_assert_eq(info.ceiling_gpus, ceiling, "%s", policy);
    sched_free(s);
    return most;
}

/* cifar10-4 asks 16 GPUs (batch 4096), cifar10-0 asks 6: without a ceiling some policy gives
 * each more than 3; with one of 3, none does, and every job still finishes. */
Test(sched_ceiling, no_policy_gives_a_job_more_than_its_ceiling)
{
    const int jobs[] = {0, 2};
    for (size_t k = 0; k < sizeof jobs / sizeof *jobs; k++) {
        int over = 0;
        for (const char *const *p = sched_policy_names(); *p; p++) {
            over |= most_given(*p, jobs[k], 0) > 3;
            int most = most_given(*p, jobs[k], 3);
            cr_assert_leq(most, 3, "%s gave job %d %d GPUs over its ceiling of 3", *p, jobs[k],
                          most);
            cr_assert_gt(most, 0, "%s never ran job %d", *p, jobs[k]);
        }
        cr_assert(over, "no policy gives job %d more than 3 GPUs: the test proves nothing",
                  jobs[k]);
    }
}

/* One job of fixed-N on 2 nodes of 4 GPUs, placed by the first decision. */
static SchedState *placed(const char *policy)
{
    SchedState *s = fixture_sched(cat, policy, 2, NULL, 0);
    Error e;
    cr_assert_eq(sched_submit(s, &(SchedJobSpec){"j0", "cifar10", 0.0, 1, 512}, &e), 0, "%s",
                 e.msg);
    cr_assert_eq(sched_advance(s, 1, &e), 0, "%s", e.msg);
    return s;
}

Test(sched_ceiling, a_job_over_its_new_ceiling_keeps_part_of_its_gpus_logged_as_a_resize)
{
    SchedState *s = placed("fixed-8");
    Error e;
    SchedJobInfo info;
    sched_job_info(s, 0, &info);
    cr_assert_eq(info.gpus, 8);
    size_t before = sched_event_count(s);
    cr_assert_eq(sched_set_ceiling(s, 0, 7, 4, &e), 0, "%s", e.msg);
    cr_assert_eq(sched_event_count(s), before + 1);
    const SchedEvent *ev = sched_event(s, before);
    cr_assert_eq(ev->kind, SCHED_EV_RESIZE);
    cr_assert_eq(ev->gpus_from, 8);
    cr_assert_eq(ev->gpus_to, 4);
    cr_assert_eq(ev->ceiling_gpus, 7);
    cr_assert_eq(ev->n_slots, 1, "the fewest nodes");
    cr_assert_eq(ev->slots[0].node, 0);
    cr_assert_eq(ev->slots[0].gpus, 4);
    cr_assert_gt(ev->batch_size, 0);
    sched_job_info(s, 0, &info);
    cr_assert_eq(info.gpus, 4);
    cr_assert_eq(info.ceiling_gpus, 7);
    cr_assert_eq(info.state, SCHED_JOB_STALLED, "a restart, as every resize");
    fixture_sched_capacity(s);
    int owners[4];
    sched_node_gpus(s, 1, owners, 4);
    for (int g = 0; g < 4; g++)
        cr_assert_eq(owners[g], -1, "node 1's GPU %d still held", g);
    char *json = sched_event_json(s, ev);
    cr_assert(strstr(json, "\"ceiling_gpus\":7") && strstr(json, "\"event\":\"resize\""), "%s",
              json);
    free(json);
    /* fixed-8 wants 8: the later decisions give it at most 7 */
    for (int i = 0; i < 10; i++) {
        cr_assert_eq(sched_advance(s, 60, &e), 0, "%s", e.msg);
        sched_job_info(s, 0, &info);
        cr_assert_leq(info.gpus, 7);
    }
    fixture_sched_capacity(s);
    sched_free(s);
}

Test(sched_ceiling, a_job_keeping_none_waits_queued_for_a_decision_within_its_ceiling)
{
    SchedState *s = placed("fixed-4");
    Error e;
    size_t before = sched_event_count(s);
    cr_assert_eq(sched_set_ceiling(s, 0, 2, 0, &e), 0, "%s", e.msg);
    const SchedEvent *ev = sched_event(s, before);
    cr_assert_eq(ev->kind, SCHED_EV_STOP);
    cr_assert_eq(ev->ceiling_gpus, 2);
    SchedJobInfo info;
    sched_job_info(s, 0, &info);
    cr_assert_eq(info.state, SCHED_JOB_QUEUED);
    cr_assert_eq(sched_advance(s, 60, &e), 0, "%s", e.msg);
    sched_job_info(s, 0, &info);
    cr_assert_eq(info.gpus, 2, "placed again, within its ceiling");
    cr_assert_eq(sched_event(s, before + 1)->ceiling_gpus, 0, "a decision, not a fall back");
    sched_free(s);
}

Test(sched_ceiling, a_ceiling_only_comes_down_and_refuses_pins_and_bad_values)
{
    SchedState *s = placed("fixed-2");
    Error e;
    cr_assert_eq(sched_set_ceiling(s, 0, 3, 2, &e), 0, "%s", e.msg);
    size_t events = sched_event_count(s);
    cr_assert_eq(sched_set_ceiling(s, 0, 6, 2, &e), 0, "%s", e.msg);
    SchedJobInfo info;
    sched_job_info(s, 0, &info);
    cr_assert_eq(info.ceiling_gpus, 3, "raised");
    cr_assert_eq(sched_event_count(s), events, "under its ceiling: nothing moves");
    cr_assert_eq(sched_pin(s, 0, 4, &e), -1);
    cr_assert(strstr(e.msg, "expected at most 3 GPUs (its ceiling"), "%s", e.msg);
    cr_assert_eq(sched_pin(s, 0, 3, &e), 0, "%s", e.msg);
    cr_assert_eq(sched_set_ceiling(s, 0, 0, 0, &e), -1);
    cr_assert(strstr(e.msg, "expected at least 1 GPU"), "%s", e.msg);
    cr_assert_eq(sched_set_ceiling(s, 0, 1, 2, &e), -1);
    cr_assert(strstr(e.msg, "expected to keep 0..1 GPUs, found 2"), "%s", e.msg);
    sched_job_info(s, 0, &info);
    cr_assert_eq(info.ceiling_gpus, 3, "a refused call changes nothing");
    cr_assert_eq(sched_set_ceiling(s, 5, 1, 0, &e), -1);
    sched_free(s);
}

/* A lifted ceiling lets decisions give the job more again (fixed-4 under a ceiling of 2
 * gets its 4 back); one set again after the lift holds as a new one. */
Test(sched_ceiling, a_lifted_ceiling_lets_decisions_give_more_again)
{
    SchedState *s = placed("fixed-4");
    Error e;
    cr_assert_eq(sched_set_ceiling(s, 0, 2, 2, &e), 0, "%s", e.msg);
    cr_assert_eq(sched_advance(s, 60, &e), 0, "%s", e.msg);
    SchedJobInfo info;
    sched_job_info(s, 0, &info);
    cr_assert_eq(info.gpus, 2);
    cr_assert_eq(sched_lift_ceiling(s, 0, &e), 0, "%s", e.msg);
    sched_job_info(s, 0, &info);
    cr_assert_eq(info.ceiling_gpus, 0);
    cr_assert_eq(sched_advance(s, 60, &e), 0, "%s", e.msg);
    sched_job_info(s, 0, &info);
    cr_assert_eq(info.gpus, 4, "grown past the lifted ceiling");
    cr_assert_eq(sched_set_ceiling(s, 0, 3, 2, &e), 0, "%s", e.msg);
    sched_job_info(s, 0, &info);
    cr_assert_eq(info.ceiling_gpus, 3, "set again");
    cr_assert_eq(info.gpus, 2);
    cr_assert_eq(sched_lift_ceiling(s, 7, &e), -1);
    sched_free(s);
}

/* What at most k nodes hold, as placement fills them (the largest first), drained ones out:
 * nodes of 8, 4, 4 and 2 GPUs. */
Test(sched_ceiling, the_most_gpus_on_k_nodes_takes_the_largest_usable_nodes)
{
    const SchedNodeGroup groups[] = {{"T4", 2, 4, 1}, {"V100", 1, 8, 1}, {"K80", 1, 2, 1}};
    SchedState *s = fixture_sched(cat, "doubling", 0, groups, 3);
    cr_assert_eq(sched_most_gpus_on_nodes(s, 0), 0);
    cr_assert_eq(sched_most_gpus_on_nodes(s, 1), 8);
    cr_assert_eq(sched_most_gpus_on_nodes(s, 2), 12);
    cr_assert_eq(sched_most_gpus_on_nodes(s, 3), 16);
    cr_assert_eq(sched_most_gpus_on_nodes(s, 9), 18, "every node");
    Error e;
    cr_assert_eq(sched_drain_node(s, 2, 1, &e), 0, "%s", e.msg); /* the 8-GPU node */
    cr_assert_eq(sched_most_gpus_on_nodes(s, 1), 4);
    cr_assert_eq(sched_most_gpus_on_nodes(s, 2), 8);
    sched_free(s);
}

/* Regression: a placement refused for its node count whose nodes - 1 largest hold as many GPUs
 * as it asked (4+4+2 over three nodes, where two hold 12) got a ceiling of one GPU fewer (9),
 * which the model spreads over three nodes again: refused once more, GPU by GPU. One node
 * fewer of that placement leaves 8. */
Test(sched_ceiling, a_node_ceiling_is_what_one_node_fewer_of_the_refused_placement_leaves)
{
    const SchedNodeGroup groups[] = {{"T4", 2, 4, 1}, {"V100", 1, 8, 1}, {"K80", 1, 2, 1}};
    SchedState *s = fixture_sched(cat, "doubling", 0, groups, 3);
    cr_assert_eq(sched_node_ceiling(s, (const int[]){4, 4, 2}, 3), 8);
    cr_assert_eq(sched_node_ceiling(s, (const int[]){2, 2}, 2), 2);
    cr_assert_eq(sched_node_ceiling(s, (const int[]){4}, 1), 3, "one node: one GPU fewer");
    Error e;
    cr_assert_eq(sched_drain_node(s, 2, 1, &e), 0, "%s", e.msg); /* the 8-GPU node */
    cr_assert_eq(sched_node_ceiling(s, (const int[]){8, 4, 4}, 3), 8,
                 "what the two largest usable nodes hold, where that is less");
    sched_free(s);
}

/* Two fast nodes of 2 GPUs and one slow node of 4; fixed-4's job j0 (cifar10, batch 512). */
static SchedState *fast_two_by_two_slow_four(void)
{
    const SchedNodeGroup groups[] = {{"V100", 2, 2, 1.0}, {"K80", 1, 4, 0.5}};
    SchedState *s = fixture_sched(cat, "fixed-4", 0, groups, 2);
    Error e;
    cr_assert_eq(sched_submit(s, &(SchedJobSpec){"j0", "cifar10", 0.0, 1, 512}, &e), 0, "%s",
                 e.msg);
    return s;
}

/* Regression: a ceiling counted GPUs only, so placement, which keeps a job in the fastest
 * class that holds it, spread it over both 2-GPU fast nodes where the cluster allows one
 * node (MaxNodes); the slow 4-GPU node holds it on one. GPUs others take there lower it to
 * what is left (no second node), and the lift gives the fast class back. */
Test(sched_ceiling, a_node_ceiling_keeps_placement_on_that_many_nodes_across_classes_and_holds)
{
    SchedState *s = fast_two_by_two_slow_four();
    Error e;
    cr_assert_eq(sched_advance(s, 1, &e), 0, "%s", e.msg);
    SchedJobInfo info;
    sched_job_info(s, 0, &info);
    cr_assert(info.gpus == 4 && info.nodes == 2, "uncapped: the fast class, %d GPUs on %d nodes",
              info.gpus, info.nodes);
    sched_free(s);

    s = fast_two_by_two_slow_four();
    cr_assert_eq(sched_set_node_ceiling(s, 0, 1, &e), 0, "%s", e.msg);
    cr_assert_eq(sched_advance(s, 1, &e), 0, "%s", e.msg);
    sched_job_info(s, 0, &info);
    cr_assert_eq(info.ceiling_nodes, 1);
    cr_assert(info.gpus == 4 && info.nodes == 1, "%d GPUs on %d nodes", info.gpus, info.nodes);
    cr_assert_eq(sched_hold_gpus(s, 2, 1, &e), 0, "%s", e.msg);
    cr_assert_eq(sched_advance(s, 60, &e), 0, "%s", e.msg);
    sched_job_info(s, 0, &info);
    cr_assert(info.gpus == 3 && info.nodes == 1, "held around: %d GPUs on %d nodes", info.gpus,
              info.nodes);
    fixture_sched_capacity(s);
    cr_assert_eq(sched_lift_ceiling(s, 0, &e), 0, "%s", e.msg);
    sched_job_info(s, 0, &info);
    cr_assert_eq(info.ceiling_nodes, 0, "lifted with the ceiling");
    cr_assert_eq(sched_advance(s, 60, &e), 0, "%s", e.msg);
    sched_job_info(s, 0, &info);
    cr_assert(info.gpus == 4 && info.nodes == 2, "lifted: %d GPUs on %d nodes", info.gpus,
              info.nodes);
    sched_free(s);
}

/* A job over more nodes than a new node ceiling falls back to its largest slots on that many
 * nodes, whatever it asked to keep: 2+2 under one node keeps 2 (a resize), and a node
 * ceiling only comes down. */
Test(sched_ceiling, a_node_ceiling_under_the_jobs_nodes_keeps_its_largest_slots_on_that_many)
{
    SchedState *s = fast_two_by_two_slow_four();
    Error e;
    cr_assert_eq(sched_advance(s, 1, &e), 0, "%s", e.msg);
    cr_assert_eq(sched_set_node_ceiling(s, 0, 1, &e), 0, "%s", e.msg);
    cr_assert_eq(sched_set_node_ceiling(s, 0, 2, &e), 0, "%s", e.msg);
    cr_assert_eq(sched_set_node_ceiling(s, 0, 0, &e), -1);
    cr_assert_eq(sched_set_node_ceiling(s, 9, 1, &e), -1);
    size_t before = sched_event_count(s);
    cr_assert_eq(sched_set_ceiling(s, 0, 4, 4, &e), 0, "%s", e.msg);
    cr_assert_eq(sched_event_count(s), before + 1);
    const SchedEvent *ev = sched_event(s, before);
    cr_assert_eq(ev->kind, SCHED_EV_RESIZE);
    cr_assert_eq(ev->gpus_to, 2);
    cr_assert_eq(ev->n_slots, 1);
    SchedJobInfo info;
    sched_job_info(s, 0, &info);
    cr_assert(info.gpus == 2 && info.nodes == 1 && info.ceiling_nodes == 1);
    fixture_sched_capacity(s);
    sched_free(s);
}

/* Regression: the policy's limit for a one-node job counted others' holds, not our own jobs,
 * so doubling asked 4 where our jobs A and C leave 2 free on each of two 4-GPU nodes; the
 * capped placement fell back to 2 on one node, and every later decision released the job and
 * placed it again at 2: a "resize 2 -> 2" and a restart at each interval. A fall back to no
 * more than it holds, unforced, keeps its GPUs where they are. */
Test(sched_ceiling, a_node_capped_job_that_cannot_grow_keeps_its_place_without_a_restart)
{
    SchedState *s = fixture_sched(cat, "doubling", 2, NULL, 0);
    Error e;
    cr_assert_eq(sched_submit(s, &(SchedJobSpec){"A", "cifar10", 0.0, 2, 512}, &e), 0, "%s", e.msg);
    cr_assert_eq(sched_pin(s, 0, 2, &e), 0, "%s", e.msg);
    cr_assert_eq(sched_advance(s, 1, &e), 0, "%s", e.msg);
    /* someone else's GPUs beside A send C to the other node, then leave */
    cr_assert_eq(sched_hold_gpus(s, 0, 2, &e), 0, "%s", e.msg);
    cr_assert_eq(sched_submit(s, &(SchedJobSpec){"C", "cifar10", 1.0, 2, 512}, &e), 0, "%s", e.msg);
    cr_assert_eq(sched_pin(s, 1, 2, &e), 0, "%s", e.msg);
    cr_assert_eq(sched_submit(s, &(SchedJobSpec){"X", "cifar10", 100.0, 1, 512}, &e), 0, "%s",
                 e.msg);
    cr_assert_eq(sched_set_node_ceiling(s, 2, 1, &e), 0, "%s", e.msg);
    cr_assert_eq(sched_advance(s, 60, &e), 0, "%s", e.msg);
    cr_assert_eq(sched_hold_gpus(s, 0, 0, &e), 0, "%s", e.msg);
    SchedJobInfo a, c;
    sched_job_info(s, 0, &a);
    sched_job_info(s, 1, &c);
    cr_assert(a.gpus == 2 && c.gpus == 2 && a.nodes == 1 && c.nodes == 1);
    cr_assert_eq(sched_advance(s, 60, &e), 0, "%s", e.msg);
    SchedJobInfo x;
    sched_job_info(s, 2, &x);
    cr_assert(x.gpus == 2 && x.nodes == 1, "X: %d GPUs on %d nodes", x.gpus, x.nodes);
    for (int i = 0; i < 5; i++) {
        size_t before = sched_event_count(s);
        cr_assert_eq(sched_advance(s, 60, &e), 0, "%s", e.msg);
        for (size_t k = before; k < sched_event_count(s); k++)
            cr_assert_neq(sched_event(s, k)->job, 2, "decision %d: X %s %d -> %d", i,
                          sched_event(s, k)->kind == SCHED_EV_RESIZE ? "resized" : "moved",
                          sched_event(s, k)->gpus_from, sched_event(s, k)->gpus_to);
        sched_job_info(s, 2, &x);
        cr_assert(x.gpus == 2 && x.nodes == 1 && x.state == SCHED_JOB_RUNNING,
                  "decision %d: X %d GPUs on %d nodes, state %d", i, x.gpus, x.nodes, x.state);
    }
    fixture_sched_capacity(s);
    sched_free(s);
}

/* Two 8-GPU nodes: n_capped jobs of one node at most (A0, A1) run on node 0's GPUs from 0, two
 * each; F on 6 of node 1. Then, with other users holding held1 of node 1's GPUs, the policy
 * asks a new job C for c_gpus and each A for ask[a] (a pin; 0 leaves it to fixed-1, which
 * gives it 1 GPU if any is left): the decision is made, what each GPU's owner was before it in
 * before[16], after it in after[16]; returns the index of the first event it logged. */
static size_t capped_beside_new(SchedState *s, int n_capped, const int *ask, int c_gpus, int held1,
                                int *before, int *after)
{
    Error e;
    for (int a = 0; a < n_capped; a++) {
        char name[4] = {'A', (char)('0' + a), 0};
        cr_assert_eq(sched_submit(s, &(SchedJobSpec){name, "cifar10", 0.0, 2, 512}, &e), 0, "%s",
                     e.msg);
        cr_assert_eq(sched_pin(s, (size_t)a, 2, &e), 0, "%s", e.msg);
        cr_assert_eq(sched_set_node_ceiling(s, (size_t)a, 1, &e), 0, "%s", e.msg);
    }
    cr_assert_eq(sched_advance(s, 1, &e), 0, "%s", e.msg);
    /* someone else's GPUs beside the A send F to the other node, then leave */
    cr_assert_eq(sched_hold_gpus(s, 0, 8 - 2 * n_capped, &e), 0, "%s", e.msg);
    size_t f = (size_t)n_capped, c = f + 1;
    cr_assert_eq(sched_submit(s, &(SchedJobSpec){"F", "cifar10", 1.0, 6, 512}, &e), 0, "%s", e.msg);
    cr_assert_eq(sched_pin(s, f, 6, &e), 0, "%s", e.msg);
    cr_assert_eq(sched_advance(s, 60, &e), 0, "%s", e.msg);
    cr_assert_eq(sched_hold_gpus(s, 0, 0, &e), 0, "%s", e.msg);
    for (int n = 0; n < 2; n++)
        sched_node_gpus(s, n, before + 8 * n, 8);
    for (int g = 0; g < 8; g++)
        cr_assert_eq(before[g], g < 2 * n_capped ? g / 2 : -1, "node 0 GPU %d", g);
    cr_assert(before[8] == (int)f && before[13] == (int)f && before[14] == -1, "F on node 1");

    cr_assert_eq(sched_submit(s, &(SchedJobSpec){"C", "cifar10", sched_now(s), c_gpus, 512}, &e), 0,
                 "%s", e.msg);
    cr_assert_eq(sched_hold_gpus(s, 1, held1, &e), 0, "%s", e.msg);
    cr_assert_eq(sched_pin(s, c, c_gpus, &e), 0, "%s", e.msg);
    for (int a = 0; a < n_capped; a++)
        cr_assert_eq(sched_pin(s, (size_t)a, ask[a], &e), 0, "%s", e.msg);
    size_t first = sched_event_count(s);
    cr_assert_eq(sched_advance(s, 60, &e), 0, "%s", e.msg);
    for (int n = 0; n < 2; n++)
        sched_node_gpus(s, n, after + 8 * n, 8);
    SchedJobInfo ci;
    sched_job_info(s, c, &ci);
    cr_assert(ci.gpus == c_gpus && ci.nodes == 1, "C: %d GPUs on %d nodes", ci.gpus, ci.nodes);
    fixture_sched_capacity(s);
    return first;
}

static int logged_since(const SchedState *s, size_t first, int job)
{
    for (size_t k = first; k < sched_event_count(s); k++)
        if (sched_event(s, k)->job == job)
            return 1;
    return 0;
}

/* Its process runs on the GPU numbers it had: a job the decision logs nothing for (no restart)
 * must hold exactly those in the model, which the live driver starts the others around. */
static void unlogged_jobs_keep_their_gpus(const SchedState *s, size_t first, int n_jobs,
                                          const int *before, const int *after)
{
    for (int job = 0; job < n_jobs; job++)
        for (int g = 0; g < 16 && !logged_since(s, first, job); g++)
            cr_assert_eq(before[g] == job, after[g] == job,
                         "job %d moved on or off node %d GPU %d with no event", job, g / 8, g % 8);
}

/* Regression: a node-capped job kept in place got whatever GPU numbers of its node were left,
 * not its own: C, placed first (the bigger), took the lowest free, A0's 0-1, and A0 was kept
 * with no event on 6-7, where it does not run; live, C would start on A0's GPUs. C now takes
 * the numbers no job held before, and A0 keeps its own without a restart. */
Test(sched_ceiling, a_node_capped_job_kept_in_place_keeps_its_own_gpu_numbers)
{
    const SchedNodeGroup groups[] = {{"V100", 2, 8, 1.0}};
    SchedState *s = fixture_sched(cat, "fixed-1", 0, groups, 1);
    int before[16], after[16];
    size_t first = capped_beside_new(s, 1, (const int[]){3}, 6, 0, before, after);
    unlogged_jobs_keep_their_gpus(s, first, 3, before, after);
    cr_assert_not(logged_since(s, first, 0), "A0 restarted where it could stay");
    cr_assert(after[0] == 0 && after[1] == 0 && after[2] == 2, "A0 on 0-1, C from 2");
    sched_free(s);
}

/* Where C needs a node-capped job's GPUs all the same, A0 must be placed again even where its
 * node still shows as many free as it holds. Three 8-GPU nodes: A0 and A1, one node at most,
 * hold node 0's 0-1 and 2-3; other users hold 6 of each other node. C asks 6, A0 and A1 ask 3
 * each (12: all there is). C, placed first, takes 4-7, then A0's 0-1; A0 falls back to 2 with
 * node 0 showing 2 free (A1's 2-3): the free count passes, and only the GPU numbers say that
 * A0's were taken. Kept on a count alone it would run on C's GPUs with no event. */
Test(sched_ceiling, a_node_capped_job_whose_gpus_another_took_is_placed_again)
{
    const SchedNodeGroup groups[] = {{"V100", 3, 8, 1.0}};
    SchedState *s = fixture_sched(cat, "fixed-1", 0, groups, 1);
    Error e;
    for (int a = 0; a < 2; a++) {
        char name[4] = {'A', (char)('0' + a), 0};
        cr_assert_eq(sched_submit(s, &(SchedJobSpec){name, "cifar10", 0.0, 2, 512}, &e), 0, "%s",
                     e.msg);
        cr_assert_eq(sched_pin(s, (size_t)a, 2, &e), 0, "%s", e.msg);
        cr_assert_eq(sched_set_node_ceiling(s, (size_t)a, 1, &e), 0, "%s", e.msg);
    }
    for (int n = 1; n < 3; n++)
        cr_assert_eq(sched_hold_gpus(s, n, 8, &e), 0, "%s", e.msg);
    cr_assert_eq(sched_advance(s, 1, &e), 0, "%s", e.msg);
    for (int n = 1; n < 3; n++)
        cr_assert_eq(sched_hold_gpus(s, n, 6, &e), 0, "%s", e.msg);
    int before[24], after[24];
    for (int n = 0; n < 3; n++)
        sched_node_gpus(s, n, before + 8 * n, 8);
    for (int g = 0; g < 8; g++)
        cr_assert_eq(before[g], g < 4 ? g / 2 : -1, "node 0 GPU %d", g);
    cr_assert_eq(sched_submit(s, &(SchedJobSpec){"C", "cifar10", sched_now(s), 6, 512}, &e), 0,
                 "%s", e.msg);
    cr_assert_eq(sched_pin(s, 2, 6, &e), 0, "%s", e.msg);
    for (int a = 0; a < 2; a++)
        cr_assert_eq(sched_pin(s, (size_t)a, 3, &e), 0, "%s", e.msg);
    size_t first = sched_event_count(s);
    cr_assert_eq(sched_advance(s, 60, &e), 0, "%s", e.msg);
    for (int n = 0; n < 3; n++)
        sched_node_gpus(s, n, after + 8 * n, 8);
    SchedJobInfo ci;
    sched_job_info(s, 2, &ci);
    cr_assert(ci.gpus == 6 && ci.nodes == 1, "C: %d GPUs on %d nodes", ci.gpus, ci.nodes);
    cr_assert(after[0] == 2 && after[1] == 2, "C took A0's GPUs 0-1: the case this test is about");
    cr_assert(logged_since(s, first, 0), "A0 lost its GPUs to C with no event");
    for (int job = 0; job < 3; job++)
        for (int g = 0; g < 24 && !logged_since(s, first, job); g++)
            cr_assert_eq(before[g] == job, after[g] == job,
                         "job %d moved on or off node %d GPU %d with no event", job, g / 8, g % 8);
    fixture_sched_capacity(s);
    sched_free(s);
}

/* A node-capped job that stops (the policy gives it 0: A1, unpinned, finds no GPU left once
 * the pins of A0, F and C fill what others' hold on node 1 leaves) restarts nothing it could
 * keep: C, 6, takes the numbers no job held (4-7), then A1's 2-3, not A0's 0-1; A0, asking 3,
 * falls back to its 2 and keeps 0-1 with no event. Were A1's numbers kept for it, C would take
 * A0's and A0 would restart. */
Test(sched_ceiling, a_node_capped_job_that_stops_frees_its_gpu_numbers_for_a_new_job)
{
    const SchedNodeGroup groups[] = {{"V100", 2, 8, 1.0}};
    SchedState *s = fixture_sched(cat, "fixed-1", 0, groups, 1);
    int before[16], after[16];
    size_t first = capped_beside_new(s, 2, (const int[]){3, 0}, 6, 1, before, after);
    unlogged_jobs_keep_their_gpus(s, first, 4, before, after);
    SchedJobInfo a1;
    sched_job_info(s, 1, &a1);
    cr_assert(a1.gpus == 0 && logged_since(s, first, 1), "A1 stopped, with its event: %d GPUs",
              a1.gpus);
    cr_assert(after[2] == 3 && after[3] == 3, "C on A1's 2-3");
    cr_assert_not(logged_since(s, first, 0), "A0 restarted at the 2 GPUs it had");
    cr_assert(after[0] == 0 && after[1] == 0, "A0 on its own 0-1");
    sched_free(s);
}

/* Regression: in the same decision A1 shrinks to 1 (it restarts whatever it gets), yet C took
 * A0's 0-1, the lowest of the numbers node-capped jobs held, and A0, kept at its 2 GPUs, was
 * placed again: a restart of a job whose GPU count did not change. C now takes the numbers of
 * the job that restarts anyway, A1's 2-3, and A0 keeps its own with no event. */
Test(sched_ceiling, a_node_capped_job_keeps_its_gpus_where_a_restarting_ones_free_the_room)
{
    const SchedNodeGroup groups[] = {{"V100", 2, 8, 1.0}};
    SchedState *s = fixture_sched(cat, "fixed-1", 0, groups, 1);
    int before[16], after[16];
    size_t first = capped_beside_new(s, 2, (const int[]){3, 1}, 6, 0, before, after);
    unlogged_jobs_keep_their_gpus(s, first, 4, before, after);
    cr_assert_not(logged_since(s, first, 0), "A0 restarted at the 2 GPUs it had");
    cr_assert(after[0] == 0 && after[1] == 0, "A0 on its own 0-1");
    cr_assert(after[2] == 3 && after[3] == 3, "C on A1's 2-3");
    cr_assert(logged_since(s, first, 1), "A1 shrinks: its event");
    sched_free(s);
}

/* sched_keep_old_place is only for a fall back to exactly what the job holds (want == from): A0,
 * capped at one node, holding 2 and asking 4, finds 3 on its node once C (5, placed first)
 * took its share; it grows to 3 with its event, not kept at 2 on its old GPUs (which are still
 * free). */
Test(sched_ceiling, a_node_capped_job_that_can_grow_part_of_the_way_grows_with_its_event)
{
    const SchedNodeGroup groups[] = {{"V100", 2, 8, 1.0}};
    SchedState *s = fixture_sched(cat, "fixed-1", 0, groups, 1);
    int before[16], after[16];
    size_t first = capped_beside_new(s, 1, (const int[]){4}, 5, 0, before, after);
    unlogged_jobs_keep_their_gpus(s, first, 3, before, after);
    SchedJobInfo a;
    sched_job_info(s, 0, &a);
    cr_assert(a.gpus == 3 && a.nodes == 1, "A0: %d GPUs on %d nodes", a.gpus, a.nodes);
    int resized = 0;
    for (size_t k = first; k < sched_event_count(s); k++) {
        const SchedEvent *ev = sched_event(s, k);
        resized |=
            ev->job == 0 && ev->kind == SCHED_EV_RESIZE && ev->gpus_from == 2 && ev->gpus_to == 3;
    }
    cr_assert(resized, "A0's resize 2 -> 3 logged");
    sched_free(s);
}

/* A node-capped job over more nodes than its ceiling restarts whatever placement gives it, even
 * asked more: its GPU numbers are forgotten like those of one that shrinks. Three 8-GPU nodes:
 * A0 (one node at most) holds node 0's 0-1, B 2+2 over nodes 0 (2-3) and 1, F 6 of node 2.
 * Then B is capped at one node (no fall back yet: sched_set_node_ceiling alone) and asks 5, A0
 * asks 3, new C asks 6, and other users hold 3 of node 1. C, on node 0, takes the numbers no
 * job held (4-7), then B's 2-3, not A0's 0-1; B goes to node 1, and A0, finding no node with
 * 3 free, falls back to its 2 and keeps 0-1 with no event. Were B's numbers kept for it (as
 * for a job within its node ceiling), C would take A0's and A0 would restart. */
Test(sched_ceiling, a_capped_job_over_more_nodes_than_its_ceiling_frees_its_numbers_first)
{
    const SchedNodeGroup groups[] = {{"V100", 3, 8, 1.0}};
    SchedState *s = fixture_sched(cat, "fixed-1", 0, groups, 1);
    Error e;
    cr_assert_eq(sched_submit(s, &(SchedJobSpec){"A0", "cifar10", 0.0, 2, 512}, &e), 0, "%s",
                 e.msg);
    cr_assert_eq(sched_pin(s, 0, 2, &e), 0, "%s", e.msg);
    cr_assert_eq(sched_set_node_ceiling(s, 0, 1, &e), 0, "%s", e.msg);
    cr_assert_eq(sched_advance(s, 1, &e), 0, "%s", e.msg);
    /* others' GPUs leave F 6 of node 2 and B 2 on each of nodes 0 and 1, then leave */
    const int held[] = {4, 6, 2};
    for (int n = 0; n < 3; n++)
        cr_assert_eq(sched_hold_gpus(s, n, held[n], &e), 0, "%s", e.msg);
    cr_assert_eq(sched_submit(s, &(SchedJobSpec){"B", "cifar10", 1.0, 4, 512}, &e), 0, "%s", e.msg);
    cr_assert_eq(sched_pin(s, 1, 4, &e), 0, "%s", e.msg);
    cr_assert_eq(sched_submit(s, &(SchedJobSpec){"F", "cifar10", 1.0, 6, 512}, &e), 0, "%s", e.msg);
    cr_assert_eq(sched_pin(s, 2, 6, &e), 0, "%s", e.msg);
    cr_assert_eq(sched_advance(s, 60, &e), 0, "%s", e.msg);
    const int held_then[] = {0, 3, 0};
    for (int n = 0; n < 3; n++)
        cr_assert_eq(sched_hold_gpus(s, n, held_then[n], &e), 0, "%s", e.msg);
    int before[24], after[24];
    for (int n = 0; n < 3; n++)
        sched_node_gpus(s, n, before + 8 * n, 8);
    for (int g = 0; g < 8; g++)
        cr_assert_eq(before[g], g < 4 ? g / 2 : -1, "node 0 GPU %d", g);
    SchedJobInfo b;
    sched_job_info(s, 1, &b);
    cr_assert(b.gpus == 4 && b.nodes == 2 && before[8] == 1 && before[16] == 2,
              "B: %d GPUs on %d nodes", b.gpus, b.nodes);

    cr_assert_eq(sched_set_node_ceiling(s, 1, 1, &e), 0, "%s", e.msg);
    cr_assert_eq(sched_submit(s, &(SchedJobSpec){"C", "cifar10", sched_now(s), 6, 512}, &e), 0,
                 "%s", e.msg);
    cr_assert_eq(sched_pin(s, 3, 6, &e), 0, "%s", e.msg);
    cr_assert_eq(sched_pin(s, 1, 5, &e), 0, "%s", e.msg);
    cr_assert_eq(sched_pin(s, 0, 3, &e), 0, "%s", e.msg);
    size_t first = sched_event_count(s);
    cr_assert_eq(sched_advance(s, 60, &e), 0, "%s", e.msg);
    for (int n = 0; n < 3; n++)
        sched_node_gpus(s, n, after + 8 * n, 8);
    SchedJobInfo ci;
    sched_job_info(s, 3, &ci);
    cr_assert(ci.gpus == 6 && ci.nodes == 1, "C: %d GPUs on %d nodes", ci.gpus, ci.nodes);
    sched_job_info(s, 1, &b);
    cr_assert(b.gpus == 5 && b.nodes == 1 && after[8] == 1, "B: %d GPUs on %d nodes", b.gpus,
              b.nodes);
    for (int job = 0; job < 4; job++)
        for (int g = 0; g < 24 && !logged_since(s, first, job); g++)
            cr_assert_eq(before[g] == job, after[g] == job,
                         "job %d moved on or off node %d GPU %d with no event", job, g / 8, g % 8);
    cr_assert_not(logged_since(s, first, 0), "A0 restarted at the 2 GPUs it had");
    cr_assert(after[0] == 0 && after[1] == 0, "A0 on its own 0-1");
    cr_assert(after[2] == 3 && after[3] == 3, "C on B's 2-3");
    fixture_sched_capacity(s);
    sched_free(s);
}

/* A node-capped job forced off its nodes by a drain restarts wherever placement puts it, even
 * asked more: it has no numbers to keep, so the jobs placed beside it take its old ones first.
 * Four 8-GPU nodes: A0 (one node at most) holds node 0's 0-1, B (two nodes at most) 2+2 over
 * node 0 (2-3) and node 1 (0-1), F 6 of node 2. Then node 1 is drained, others hold 3 of node
 * 3, B asks 5, A0 3, new C 6. C, on node 0, takes 2-7 (B's 2-3 among them), not A0's 0-1; B
 * goes to node 3, and A0, finding no node with 3 free, falls back to its 2 and keeps 0-1 with
 * no event. Were a drained job's numbers kept for it (as for a job within its node ceiling
 * asked more), C would take A0's and A0 would restart. */
Test(sched_ceiling, a_drained_node_capped_job_frees_its_numbers_for_the_jobs_placed_beside_it)
{
    const SchedNodeGroup groups[] = {{"V100", 4, 8, 1.0}};
    SchedState *s = fixture_sched(cat, "fixed-1", 0, groups, 1);
    Error e;
    cr_assert_eq(sched_submit(s, &(SchedJobSpec){"A0", "cifar10", 0.0, 2, 512}, &e), 0, "%s",
                 e.msg);
    cr_assert_eq(sched_pin(s, 0, 2, &e), 0, "%s", e.msg);
    cr_assert_eq(sched_set_node_ceiling(s, 0, 1, &e), 0, "%s", e.msg);
    cr_assert_eq(sched_advance(s, 1, &e), 0, "%s", e.msg);
    /* others' GPUs leave F 6 of node 2 and B 2 on each of nodes 0 and 1, then leave */
    const int held[] = {4, 6, 2, 8};
    for (int n = 0; n < 4; n++)
        cr_assert_eq(sched_hold_gpus(s, n, held[n], &e), 0, "%s", e.msg);
    cr_assert_eq(sched_submit(s, &(SchedJobSpec){"B", "cifar10", 1.0, 4, 512}, &e), 0, "%s", e.msg);
    cr_assert_eq(sched_pin(s, 1, 4, &e), 0, "%s", e.msg);
    cr_assert_eq(sched_set_node_ceiling(s, 1, 2, &e), 0, "%s", e.msg);
    cr_assert_eq(sched_submit(s, &(SchedJobSpec){"F", "cifar10", 1.0, 6, 512}, &e), 0, "%s", e.msg);
    cr_assert_eq(sched_pin(s, 2, 6, &e), 0, "%s", e.msg);
    cr_assert_eq(sched_advance(s, 60, &e), 0, "%s", e.msg);
    const int held_then[] = {0, 0, 0, 3};
    for (int n = 0; n < 4; n++)
        cr_assert_eq(sched_hold_gpus(s, n, held_then[n], &e), 0, "%s", e.msg);
    int before[32], after[32];
    for (int n = 0; n < 4; n++)
        sched_node_gpus(s, n, before + 8 * n, 8);
    for (int g = 0; g < 8; g++)
        cr_assert_eq(before[g], g < 4 ? g / 2 : -1, "node 0 GPU %d", g);
    SchedJobInfo b;
    sched_job_info(s, 1, &b);
    cr_assert(b.gpus == 4 && b.nodes == 2 && before[8] == 1 && before[9] == 1 && before[16] == 2,
              "B: %d GPUs on %d nodes", b.gpus, b.nodes);

    cr_assert_eq(sched_drain_node(s, 1, 1, &e), 0, "%s", e.msg);
    cr_assert_eq(sched_submit(s, &(SchedJobSpec){"C", "cifar10", sched_now(s), 6, 512}, &e), 0,
                 "%s", e.msg);
    cr_assert_eq(sched_pin(s, 3, 6, &e), 0, "%s", e.msg);
    cr_assert_eq(sched_pin(s, 1, 5, &e), 0, "%s", e.msg);
    cr_assert_eq(sched_pin(s, 0, 3, &e), 0, "%s", e.msg);
    size_t first = sched_event_count(s);
    cr_assert_eq(sched_advance(s, 60, &e), 0, "%s", e.msg);
    for (int n = 0; n < 4; n++)
        sched_node_gpus(s, n, after + 8 * n, 8);
    SchedJobInfo ci;
    sched_job_info(s, 3, &ci);
    cr_assert(ci.gpus == 6 && ci.nodes == 1, "C: %d GPUs on %d nodes", ci.gpus, ci.nodes);
    sched_job_info(s, 1, &b);
    cr_assert(b.gpus == 5 && b.nodes == 1 && after[24] == 1, "B: %d GPUs on %d nodes", b.gpus,
              b.nodes);
    for (int g = 8; g < 16; g++)
        cr_assert_eq(after[g], -1, "drained node 1 GPU %d still held", g - 8);
    for (int job = 0; job < 4; job++)
        for (int g = 0; g < 32 && !logged_since(s, first, job); g++)
            cr_assert_eq(before[g] == job, after[g] == job,
                         "job %d moved on or off node %d GPU %d with no event", job, g / 8, g % 8);
    cr_assert_not(logged_since(s, first, 0), "A0 restarted at the 2 GPUs it had");
    cr_assert(after[0] == 0 && after[1] == 0, "A0 on its own 0-1");
    cr_assert(after[2] == 3 && after[3] == 3, "C on B's 2-3");
    fixture_sched_capacity(s);
    sched_free(s);
}

/* A node-capped job left failed (live: sched_abandon) gives every GPU back, its numbers with
 * them: on one 8-GPU node A (one node at most) holds all 8 and B, asking 8, waits; once A is
 * abandoned the next decision starts B on all 8, and A is never placed again. */
Test(sched_ceiling, an_abandoned_node_capped_job_gives_its_gpus_to_the_next_decision)
{
    const SchedNodeGroup groups[] = {{"V100", 1, 8, 1.0}};
    SchedState *s = fixture_sched(cat, "fixed-1", 0, groups, 1);
    Error e;
    cr_assert_eq(sched_submit(s, &(SchedJobSpec){"A", "cifar10", 0.0, 8, 512}, &e), 0, "%s", e.msg);
    cr_assert_eq(sched_pin(s, 0, 8, &e), 0, "%s", e.msg);
    cr_assert_eq(sched_set_node_ceiling(s, 0, 1, &e), 0, "%s", e.msg);
    cr_assert_eq(sched_submit(s, &(SchedJobSpec){"B", "cifar10", 0.0, 8, 512}, &e), 0, "%s", e.msg);
    cr_assert_eq(sched_pin(s, 1, 8, &e), 0, "%s", e.msg);
    cr_assert_eq(sched_advance(s, 1, &e), 0, "%s", e.msg);
    SchedJobInfo a, b;
    sched_job_info(s, 0, &a);
    sched_job_info(s, 1, &b);
    cr_assert(a.gpus == 8 && b.gpus == 0, "A %d, B %d GPUs", a.gpus, b.gpus);
    cr_assert_eq(sched_abandon(s, 0, &e), 0, "%s", e.msg);
    int owners[8];
    sched_node_gpus(s, 0, owners, 8);
    for (int g = 0; g < 8; g++)
        cr_assert_eq(owners[g], -1, "GPU %d still A's after its abandon", g);
    fixture_sched_capacity(s);
    for (int i = 0; i < 3; i++)
        cr_assert_eq(sched_advance(s, 60, &e), 0, "%s", e.msg);
    sched_job_info(s, 0, &a);
    sched_job_info(s, 1, &b);
    cr_assert(a.gpus == 0 && a.state == SCHED_JOB_FAILED, "A: %d GPUs, state %d", a.gpus, a.state);
    cr_assert(b.gpus == 8 && b.nodes == 1, "B: %d GPUs on %d nodes", b.gpus, b.nodes);
    sched_node_gpus(s, 0, owners, 8);
    for (int g = 0; g < 8; g++)
        cr_assert_eq(owners[g], 1, "GPU %d not B's", g);
    fixture_sched_capacity(s);
    sched_free(s);
}

/* While a ceiling holds, a later refusal that counts more nodes (a looser cap) must not raise
 * the node cap a refusal's start checks read: only a lift clears it. A refused value (0 nodes,
 * no such job) leaves the held cap as it was. */
Test(sched_ceiling, a_node_ceiling_held_keeps_the_smallest_until_lifted)
{
    SchedState *s = fast_two_by_two_slow_four();
    Error e;
    SchedJobInfo info;
    cr_assert_eq(sched_set_node_ceiling(s, 0, 2, &e), 0, "%s", e.msg);
    cr_assert_eq(sched_set_node_ceiling(s, 0, 1, &e), 0, "%s", e.msg);
    cr_assert_eq(sched_set_node_ceiling(s, 0, 3, &e), 0, "%s", e.msg);
    cr_assert_eq(sched_set_node_ceiling(s, 0, 0, &e), -1);
    sched_job_info(s, 0, &info);
    cr_assert_eq(info.ceiling_nodes, 1, "a looser or refused cap must not replace the smallest");
    cr_assert_eq(sched_lift_ceiling(s, 0, &e), 0, "%s", e.msg);
    cr_assert_eq(sched_set_node_ceiling(s, 0, 3, &e), 0, "%s", e.msg);
    sched_job_info(s, 0, &info);
    cr_assert_eq(info.ceiling_nodes, 3, "after a lift, the next refusal sets the cap afresh");
    sched_free(s);
}
