/* The flat search space a generic optimizer sees (Optuna, Spearmint-like GP-BO): one role per
 * machine and one share weight per device, decoded into a schedule that is always valid. */
#ifndef TUNEDECK_FLATSCHED_H
#define TUNEDECK_FLATSCHED_H

#include "core/model/schedule.h"

/* A machine's role in the flat vector. */
typedef enum { FLAT_NONE = 0, FLAT_WORKER = 1, FLAT_PS = 2, FLAT_BOTH = 3 } FlatRole;
enum { FLAT_N_ROLES = 4 };

/* The vector has c->n_machines roles (0..3, FlatRole) and c->n_devices weights (in [0, 1]
 * for optimizers; any value is accepted). Decoding, in order:
 *  1. roles outside 0..3 are clamped; weights that are negative or not finite count as 0;
 *  2. no worker at all: the machine with the largest summed device weight becomes one;
 *  3. the batch is split over the workers' devices in proportion to their weights by
 *     largest remainder (schedule_split_integer); if every such weight is 0, evenly;
 *     devices with a memory limit (max_inputs) are capped and the excess re-split over the
 *     others (water-filling);
 *  4. a worker that received no input is demoted (it stays a PS if it was one);
 *  5. no PS at all: the worker with the most inputs also becomes the PS.
 * For an allreduce job the PS half of every role is ignored (steps 1 and 5 leave no PS): the
 * ranks are the workers' devices that receive inputs.
 * Fails (-1) only when the workers' memory limits cannot hold the batch. `out` is a schedule
 * for the same cluster; its roles and inputs are overwritten. */
int flatsched_decode(const int *roles, const double *weights, Schedule *out, Error *err);

/* The inverse for a valid schedule: roles from its flags and weights = inputs / batch.
 * Decoding the result gives the schedule back when every worker has inputs. */
void flatsched_encode(const Schedule *s, int *roles, double *weights);

const char *flatsched_role_name(int role);

#endif
