/* A trial's --slowdown specs resolved against its cluster (see slowdown.h). */
#include "tools/worker/slowdown.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

double *slowdown_resolve(const SlowdownSpec *specs, size_t n_specs, const Cluster *c, Error *err)
{
    double *f = malloc((c->n_devices ? c->n_devices : 1) * sizeof *f);
    if (!f) {
        error_set(err, "out of memory");
        return NULL;
    }
    for (size_t d = 0; d < c->n_devices; d++)
        f[d] = 1;
    for (size_t i = 0; i < n_specs; i++) {
        const SlowdownSpec *sp = &specs[i];
        char machine[200];
        snprintf(machine, sizeof machine, "%s", sp->name);
        char *slash = strchr(machine, '/');
        if (slash)
            *slash++ = 0;
        int hit = 0;
        for (size_t m = 0; m < c->n_machines; m++) {
            if (machine[0] && strcmp(c->machines[m].name, machine) != 0)
                continue;
            const MachineType *t = &c->types[c->machines[m].type];
            for (size_t d = 0; d < t->n_devices; d++)
                if (!slash || strcmp(t->devices[d].id, slash) == 0) {
                    f[c->machines[m].first_device + d] = sp->factor;
                    hit = 1;
                }
        }
        if (!hit) {
            free(f);
            error_set(err, "--slowdown %s=%g: expected a machine%s of the schedule, found none",
                      sp->name, sp->factor, slash ? " and device" : "");
            return NULL;
        }
    }
    return f;
}
