/* Random valid schedules, drawn uniformly over roles and over the simplex of loads. */
#include "core/opt/schedule_random.h"

#include <gsl/gsl_randist.h>
#include <stdlib.h>

#include "core/opt/flatsched.h"

Schedule *schedule_random(const Cluster *c, const JobSpec *job, gsl_rng *rng, Error *err)
{
    Schedule *s = schedule_new(c, job);
    double *w = calloc(c->n_devices ? c->n_devices : 1, sizeof *w);
    int *roles = malloc((c->n_machines ? c->n_machines : 1) * sizeof *roles);
    if (!s || !w || !roles) {
        schedule_free(s);
        free(w);
        free(roles);
        error_no_memory(err, "random: schedule");
        return NULL;
    }
    size_t n = c->n_machines;
    /* Roles whose devices cannot hold the batch in memory are drawn again. */
    for (int draw = 0; draw < 20; draw++) {
        for (size_t m = 0; m < n; m++) {
            s->worker[m] = (unsigned char)gsl_rng_uniform_int(rng, 2);
            s->ps[m] = (unsigned char)gsl_rng_uniform_int(rng, 2);
            if (job->sync == JOB_SYNC_ALLREDUCE)
                s->ps[m] = 0;
        }
        if (!schedule_count_workers(s))
            s->worker[gsl_rng_uniform_int(rng, n)] = 1;
        if (job->sync == JOB_SYNC_PS && !schedule_count_ps(s))
            s->ps[gsl_rng_uniform_int(rng, n)] = 1;
        for (int attempt = 0; attempt < 20; attempt++) {
            for (size_t d = 0; d < c->n_devices; d++) {
                size_t m = 0;
                cluster_device(c, d, &m);
                w[d] = s->worker[m] ? gsl_ran_exponential(rng, 1.0) : 0.0;
            }
            if (schedule_split_integer(w, c->n_devices, job->batch, s->inputs) == 0 &&
                schedule_validate(s, NULL) == 0) {
                free(w);
                free(roles);
                return s;
            }
        }
        /* Only declared memory limits fail a split: cap the last draw's shares there and
         * spread the excess over the others, as the flat decoding does. */
        for (size_t m = 0; m < n; m++)
            roles[m] = (s->worker[m] ? FLAT_WORKER : 0) | (s->ps[m] ? FLAT_PS : 0);
        if (flatsched_decode(roles, w, s, NULL) == 0) {
            free(w);
            free(roles);
            return s;
        }
    }
    free(w);
    free(roles);
    schedule_free(s);
    error_set(err, "random: no valid split of the batch %d found in 400 draws (memory limits?)",
              job->batch);
    return NULL;
}
