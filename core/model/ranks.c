/* One rank per device with inputs on a worker machine; see ranks.h. */
#include <stdlib.h>

#include "core/model/ranks.h"

int ranks_from_schedule(const Schedule *s, Rank **out, size_t *n, Error *err)
{
    const Cluster *c = s->cluster;
    *out = NULL;
    *n = 0;
    Rank *r = malloc((c->n_devices ? c->n_devices : 1) * sizeof *r);
    if (!r)
        return error_set(err, "ranks: out of memory");
    size_t world = 0;
    for (size_t m = 0; m < c->n_machines; m++) {
        if (!s->worker[m])
            continue;
        const MachineType *t = cluster_machine_type(c, m);
        size_t first = world;
        for (size_t d = 0; d < t->n_devices; d++) {
            size_t flat = c->machines[m].first_device + d;
            if (s->inputs[flat] <= 0)
                continue;
            r[world] = (Rank){.rank = (int)world,
                              .machine = m,
                              .device = flat,
                              .local_rank = (int)(world - first),
                              .local_batch = s->inputs[flat]};
            world++;
        }
        for (size_t i = first; i < world; i++)
            r[i].local_world = (int)(world - first);
    }
    if (world == 0) {
        free(r);
        return error_set(err, "ranks: the schedule gives no device any inputs");
    }
    *out = r;
    *n = world;
    return 0;
}
