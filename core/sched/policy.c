/* The policy table and the wrapper that applies pins and exploration around a policy. */
#include "core/sched/policy.h"

#include <math.h>
#include <stddef.h>
#include <stdlib.h>
#include <string.h>

#include "core/base/registry.h"

_Static_assert(offsetof(Policy, name) == 0, "registry entries begin with their name");

static const void *const TABLE[] = {
    &POLICY_DOUBLING, &POLICY_DOUBLING_EXPLORE, &POLICY_DOUBLING_SEED, &POLICY_OPTIMUS,
    &POLICY_TIRESIAS, &POLICY_POLLUX,           &POLICY_FIXED_1,       &POLICY_FIXED_2,
    &POLICY_FIXED_4,  &POLICY_FIXED_8,          NULL,
};
#define NPOL (sizeof TABLE / sizeof TABLE[0] - 1)

/* The seed's names for the two knowledge modes of doubling. */
static const RegistryAlias ALIASES[] = {
    {"precompute", "doubling"},
    {"exploratory", "doubling-explore"},
    {NULL, NULL},
};

static const Registry REGISTRY = {TABLE, ALIASES};

const Policy *policy_find(const char *name)
{
    return registry_find(&REGISTRY, name);
}

const char *const *policy_names(void)
{
    static const char *names[NPOL + 1];
    for (size_t i = 0; i < NPOL; i++)
        names[i] = registry_name(&REGISTRY, i);
    return names;
}

const char *policy_names_joined(void)
{
    static char names[256];
    return names[0] ? names : registry_names(&REGISTRY, names, sizeof names);
}

double policy_remaining_s(const PolicyInput *in, size_t i, int w)
{
    if (w <= 0)
        return INFINITY;
    double v = in->speed(in->ud, i, w);
    return v > 0 ? in->jobs[i].remaining / v : INFINITY;
}

/* The policy sees only its own jobs; speed() is re-indexed through `rest`. */
typedef struct {
    const PolicyInput *outer;
    const size_t *rest;
} SubMap;

static double sub_speed(void *ud, size_t i, int w)
{
    const SubMap *map = ud;
    return map->outer->speed(map->outer->ud, map->rest[i], w);
}

/* The most GPUs job i can be given: its own limit, and never more than the capacity, so that
 * no policy waits for an ask the cluster cannot meet. */
static int job_limit(const PolicyInput *in, size_t i)
{
    int most = in->jobs[i].max_gpus;
    return most < in->capacity ? most : in->capacity;
}

int policy_decide(const Policy *p, const PolicyInput *in, int *gpus)
{
    size_t n = in->n;
    int cap = in->capacity;
    memset(gpus, 0, n * sizeof *gpus);
    /* Pins first, then jobs exploring, each in submission order (the input's order). */
    int *fixed = calloc(n ? n : 1, sizeof *fixed);
    size_t *rest = malloc((n ? n : 1) * sizeof *rest);
    PolicyJob *sub = malloc((n ? n : 1) * sizeof *sub);
    int *subg = calloc(n ? n : 1, sizeof *subg);
    if (!fixed || !rest || !sub || !subg) {
        free(fixed), free(rest), free(sub), free(subg);
        return -1;
    }
    for (int pass = 0; pass < 2; pass++)
        for (size_t i = 0; i < n; i++) {
            int want = pass == 0 ? in->jobs[i].pinned
                                 : (in->jobs[i].pinned ? 0 : in->jobs[i].explore_gpus);
            /* A pin or a stage made for a larger cluster (before a drain, or beside fewer
             * held GPUs) runs at what the job may have now rather than waiting for ever. */
            int most = job_limit(in, i);
            if (want > most)
                want = most;
            if (want > 0) {
                fixed[i] = 1;
                if (want <= cap) {
                    gpus[i] = want;
                    cap -= want;
                }
            }
        }
    size_t m = 0;
    for (size_t i = 0; i < n; i++)
        if (!fixed[i]) {
            rest[m] = i;
            sub[m] = in->jobs[i];
            sub[m].max_gpus = job_limit(in, i);
            m++;
        }
    int rc = 0;
    if (m > 0 && cap > 0) {
        SubMap map = {in, rest};
        PolicyInput pi = *in;
        pi.jobs = sub;
        pi.n = m;
        pi.capacity = cap;
        pi.ud = &map;
        pi.speed = sub_speed;
        rc = p->allocate(&pi, subg);
        int used = 0;
        for (size_t k = 0; k < m; k++) {
            int g = subg[k] < 0 ? 0 : subg[k];
            /* No policy gives a job more than it may have (its batch limits, a ceiling the
             * cluster set: sched_set_ceiling), whatever its own rule. */
            if (g > sub[k].max_gpus)
                g = sub[k].max_gpus;
            if (used + g > cap)
                g = cap - used;
            gpus[rest[k]] = g;
            used += g;
        }
    }
    free(fixed), free(rest), free(sub), free(subg);
    return rc;
}
