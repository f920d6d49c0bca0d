/* A trial's --slowdown specs resolved against its cluster (see slowdown.h). */
#include "tools/worker/slowdown.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

/* "a, b, c": the n names at names[i * stride], cut with "..." past cap. */
static void join_names(const char *names, size_t stride, size_t n, char *out, size_t cap)
{
    size_t len = 0;
    out[0] = 0;
    for (size_t i = 0; i < n; i++) {
        int k = snprintf(out + len, cap - len, "%s%s", i ? ", " : "", names + i * stride);
        if (k < 0 || (size_t)k >= cap - len) {
            snprintf(out + (cap > 4 ? cap - 4 : 0), cap > 4 ? 4 : cap, "...");
            return;
        }
        len += (size_t)k;
    }
}

/* A spec that names nothing of the schedule is bad input (exit 3, as a --machine the schedule
 * lacks), not a failed run: it says what was given and what there is to name. */
static void unknown_name(const SlowdownSpec *sp, const char *machine, const char *device,
                         const Cluster *c, Error *err)
{
    char names[200];
    long m = machine[0] ? cluster_find_machine(c, machine) : -1;
    if (machine[0] && m < 0) {
        join_names(c->machines[0].name, sizeof c->machines[0], c->n_machines, names, sizeof names);
        error_set(err, "--slowdown %s=%g: expected a machine of the schedule (%s), found '%s'",
                  sp->name, sp->factor, names, machine);
    } else if (m >= 0) {
        const MachineType *t = &c->types[c->machines[m].type];
        join_names(t->devices[0].id, sizeof t->devices[0], t->n_devices, names, sizeof names);
        error_set(err, "--slowdown %s=%g: expected a device of machine '%s' (%s), found '%s'",
                  sp->name, sp->factor, machine, names, device);
    } else {
        error_set(err, "--slowdown %s=%g: expected a device of the schedule, found '%s'", sp->name,
                  sp->factor, device);
    }
    error_mark(err, ERROR_INPUT);
}

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
            unknown_name(sp, machine, slash, c, err);
            return NULL;
        }
    }
    return f;
}
