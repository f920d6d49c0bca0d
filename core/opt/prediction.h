/* A suggestion's prediction summarized from joint forward samples of a structured model (the
 * bespoke optimizers, parameter server and allreduce alike): the iteration's mean and
 * 10th/90th percentiles, the same per taking-part machine, and every device's mean. */
#ifndef TUNEDECK_PREDICTION_H
#define TUNEDECK_PREDICTION_H

#include <stddef.h>

#include "core/opt/optimizer.h"

/* Fills out's prediction fields from ns samples of schedule s: iter_s[ns] (sorted in place),
 * machine_s[ns * n_machines], device_s[ns * n_devices], comm_s[ns]. `who` names the optimizer
 * in the message. -1 when out of memory (what was allocated stays for suggestion_clear). */
int prediction_from_samples(Suggestion *out, const Schedule *s, size_t ns, double *iter_s,
                            const double *machine_s, const double *device_s,
                            const double *comm_s, const char *who, Error *err);

#endif
