/* The bounded pool of the best candidate schedules by mean (core/opt/candpool.h). */
#include "core/opt/candpool.h"

#include <math.h>

int cand_pool_offer(Cand *pool, size_t *n, size_t cap, const Schedule *s, double mean_s)
{
    if (!isfinite(mean_s))
        return 0;
    for (size_t i = 0; i < *n; i++)
        if (schedule_equal(pool[i].s, s))
            return 0;
    size_t at = *n;
    if (*n == cap) {
        at = 0;
        for (size_t i = 1; i < *n; i++)
            if (pool[i].mean_s > pool[at].mean_s)
                at = i;
        if (pool[at].mean_s <= mean_s)
            return 0;
    }
    Schedule *copy = schedule_copy(s);
    if (!copy)
        return -1;
    if (at < *n)
        schedule_free(pool[at].s);
    else
        (*n)++;
    pool[at].s = copy;
    pool[at].mean_s = mean_s;
    return 0;
}

int cand_cmp_mean(const void *a, const void *b)
{
    double x = ((const Cand *)a)->mean_s, y = ((const Cand *)b)->mean_s;
    return x < y ? -1 : x > y;
}
