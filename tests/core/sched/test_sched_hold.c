/* GPUs held by someone else (sched_hold_gpus): never placed on, counted out of the capacity,
 * and a job of ours that no longer fits beside them moves. */
#include <criterion/criterion.h>
#include <string.h>

#include "core/sched/catalogue.h"
#include "core/sched/sched.h"
#include "tests/support/fixtures.h"

#define FIXTURE TUNEDECK_SOURCE_DIR "/tests/fixtures/workload-small.csv"

FIXTURE_CATALOGUE_SUITE(sched_hold);

static SchedState *cluster(const char *policy, int nodes)
{
    return fixture_sched(cat, policy, nodes, NULL, 0);
}

static int ours_on(const SchedState *s, int node)
{
    int owners[4], n = 0;
    sched_node_gpus(s, node, owners, 4);
    for (int g = 0; g < 4; g++)
        n += owners[g] >= 0;
    return n;
}

static int job_on(const SchedState *s, int job, int node)
{
    int owners[4], n = 0;
    sched_node_gpus(s, node, owners, 4);
    for (int g = 0; g < 4; g++)
        n += owners[g] == job;
    return n;
}

Test(sched_hold, every_policy_leaves_held_gpus_alone_and_still_finishes)
{
    const char *const *names = sched_policy_names();
    for (const char *const *p = names; *p; p++) {
        /* 5 nodes: 17 GPUs left, room for the workload's largest request (16) and
         * doubling-explore's 8-GPU stage (test_sched_decide.c runs with fewer) */
        SchedState *s = cluster(*p, 5);
        Error e;
        cr_assert_eq(sched_load_workload(s, FIXTURE, &e), 0, "%s", e.msg);
        cr_assert_eq(sched_hold_gpus(s, 0, 3, &e), 0, "%s", e.msg);
        while (!sched_finished(s) && sched_now(s) < 1e6) {
            cr_assert_eq(sched_advance(s, 60, &e), 0, "%s", e.msg);
            cr_assert_leq(ours_on(s, 0), 1, "%s placed %d GPUs of ours beside 3 held on node 0", *p,
                          ours_on(s, 0));
        }
        cr_assert(sched_finished(s), "%s left jobs unfinished", *p);
        sched_free(s);
    }
}

Test(sched_hold, held_gpus_are_out_of_the_capacity_a_pin_may_take)
{
    SchedState *s = cluster("doubling", 2);
    Error e;
    cr_assert_eq(sched_submit(s, &(SchedJobSpec){"a", "cifar10", 0, 1, 0}, &e), 0, "%s", e.msg);
    cr_assert_eq(sched_pin(s, 0, 8, &e), 0, "%s", e.msg);
    cr_assert_eq(sched_hold_gpus(s, 1, 2, &e), 0, "%s", e.msg);
    cr_assert_eq(sched_node_held(s, 1), 2);
    cr_assert_eq(sched_pin(s, 0, 8, &e), -1, "8 GPUs pinned with 2 of 8 held");
    cr_assert(strstr(e.msg, "usable cluster"), "%s", e.msg);
    cr_assert_eq(sched_pin(s, 0, 6, &e), 0, "%s", e.msg);
    cr_assert_eq(sched_hold_gpus(s, 1, 0, &e), 0, "%s", e.msg);
    cr_assert_eq(sched_node_held(s, 1), 0, "0 gives them back");
    cr_assert_eq(sched_pin(s, 0, 8, &e), 0, "%s", e.msg);
    sched_free(s);
}

Test(sched_hold, a_hold_outside_the_node_is_refused_with_what_was_expected)
{
    SchedState *s = cluster("doubling", 2);
    Error e;
    cr_assert_eq(sched_hold_gpus(s, 2, 1, &e), -1);
    cr_assert(strstr(e.msg, "expected a node in 0..1, found 2"), "%s", e.msg);
    cr_assert_eq(sched_hold_gpus(s, 0, 5, &e), -1);
    cr_assert(strstr(e.msg, "expected 0..4 GPUs, found 5"), "%s", e.msg);
    cr_assert_eq(sched_hold_gpus(s, 0, -1, &e), -1);
    cr_assert_eq(sched_node_held(s, 0), 0, "a refused hold changes nothing");
    sched_free(s);
}

/* Two jobs packed on node 0; someone else then holds two of its GPUs (theirs started while
 * one of ours waited): the most recently placed of ours moves to node 1, the other stays. */
Test(sched_hold, only_the_newest_job_moves_off_an_over_held_node)
{
    SchedState *s = cluster("fixed-2", 2);
    Error e;
    cr_assert_eq(sched_submit(s, &(SchedJobSpec){"a", "cifar10", 0, 2, 0}, &e), 0, "%s", e.msg);
    cr_assert_eq(sched_submit(s, &(SchedJobSpec){"b", "cifar10", 30, 2, 0}, &e), 0, "%s", e.msg);
    cr_assert_eq(sched_advance(s, 61, &e), 0, "%s", e.msg);
    cr_assert_eq(job_on(s, 0, 0), 2, "a on node 0");
    cr_assert_eq(job_on(s, 1, 0), 2, "b packed beside it");
    size_t before = sched_event_count(s);
    cr_assert_eq(sched_hold_gpus(s, 0, 2, &e), 0, "%s", e.msg);
    cr_assert_eq(sched_advance(s, 60, &e), 0, "%s", e.msg);
    cr_assert_eq(job_on(s, 0, 0), 2, "a stays");
    cr_assert_eq(job_on(s, 1, 0), 0, "b left node 0");
    cr_assert_eq(job_on(s, 1, 1), 2, "b moved to node 1 at its size");
    int moves = 0;
    for (size_t i = before; i < sched_event_count(s); i++) {
        const SchedEvent *ev = sched_event(s, i);
        cr_assert_eq(ev->job, 1, "only b is restarted");
        moves += ev->kind == SCHED_EV_RESIZE && ev->gpus_to == 2 && ev->slots[0].node == 1;
    }
    cr_assert_eq(moves, 1);
    sched_free(s);
}

/* A hold that leaves room changes nothing: our running job is not moved. */
Test(sched_hold, a_hold_beside_a_job_that_fits_moves_nothing)
{
    SchedState *s = cluster("fixed-2", 2);
    Error e;
    cr_assert_eq(sched_submit(s, &(SchedJobSpec){"a", "cifar10", 0, 2, 0}, &e), 0, "%s", e.msg);
    cr_assert_eq(sched_advance(s, 61, &e), 0, "%s", e.msg);
    size_t before = sched_event_count(s);
    cr_assert_eq(sched_hold_gpus(s, 0, 2, &e), 0, "%s", e.msg);
    cr_assert_eq(sched_advance(s, 120, &e), 0, "%s", e.msg);
    cr_assert_eq(sched_event_count(s), before, "a job that fits beside the hold stays");
    cr_assert_eq(job_on(s, 0, 0), 2);
    sched_free(s);
}
