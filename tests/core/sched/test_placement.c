#include <criterion/criterion.h>
#include <stdlib.h>

#include "core/sched/placement.h"

Test(placement, a_node_sized_job_takes_one_empty_node)
{
    int freeg[] = {3, 4, 2, 4};
    PlacementPool p;
    cr_assert_eq(placement_pool_init(&p, 4, 4, freeg), 0);
    int nodes[4], gpus[4];
    cr_assert_eq(placement_take(&p, 4, nodes, gpus, 4), 1);
    cr_assert_eq(nodes[0], 1);
    /* best fit: 2 GPUs go to the node with exactly 2 free, not into a fuller hole */
    cr_assert_eq(placement_take(&p, 2, nodes, gpus, 4), 1);
    cr_assert_eq(nodes[0], 2);
    placement_pool_free(&p);
}

Test(placement, large_job_spans_the_fewest_nodes)
{
    int freeg[] = {1, 4, 4, 2, 4};
    PlacementPool p;
    cr_assert_eq(placement_pool_init(&p, 5, 4, freeg), 0);
    int nodes[5], gpus[5];
    int n = placement_take(&p, 10, nodes, gpus, 5);
    cr_assert_eq(n, 3, "10 GPUs on 4-GPU nodes need 3 nodes, used %d", n);
    cr_assert_eq(placement_take(&p, 9, nodes, gpus, 5), -1);
    placement_pool_free(&p);
}

Test(placement, random_requests_never_exceed_capacity)
{
    srand(7);
    for (int trial = 0; trial < 500; trial++) {
        int nn = 1 + rand() % 12, g = 1 + rand() % 8, freeg[12], used[12] = {0};
        for (int i = 0; i < nn; i++)
            freeg[i] = rand() % (g + 1);
        PlacementPool p;
        cr_assert_eq(placement_pool_init(&p, nn, g, freeg), 0);
        int total = placement_pool_total(&p);
        for (int k = 0; k < 10; k++) {
            int want = 1 + rand() % (2 * g), nodes[12], gpus[12];
            int n = placement_take(&p, want, nodes, gpus, nn);
            if (n < 0)
                continue;
            int sum = 0;
            for (int s = 0; s < n; s++) {
                used[nodes[s]] += gpus[s];
                sum += gpus[s];
                cr_assert_leq(used[nodes[s]], freeg[nodes[s]]);
            }
            cr_assert_eq(sum, want);
            total -= want;
            cr_assert_eq(placement_pool_total(&p), total);
        }
        placement_pool_free(&p);
    }
}
