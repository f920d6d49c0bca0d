/* Random valid schedules: the random optimizer's proposals and fresh starts for others. */
#ifndef TUNEDECK_SCHEDULE_RANDOM_H
#define TUNEDECK_SCHEDULE_RANDOM_H

#include <gsl/gsl_rng.h>

#include "core/model/schedule.h"

/* Each machine is a worker and a PS with probability 1/2 (at least one of each; no PS for an
 * allreduce job); the batch is split over the workers' devices with Dirichlet(1) shares,
 * within memory limits (20 splits per role draw, then the last split capped at the limits and
 * its excess spread over the others; 20 role draws). */
Schedule *schedule_random(const Cluster *c, const JobSpec *job, gsl_rng *rng, Error *err);

#endif
