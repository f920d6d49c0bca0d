/* One trial's outcome: the schedule, the objective and every part measurement (per device
 * time, per machine compute time, communication), built from its protocol events. */
#ifndef TUNEDECK_OBSERVATION_H
#define TUNEDECK_OBSERVATION_H

#include <stddef.h>

#include "core/model/protocol.h"
#include "core/model/schedule.h"

typedef enum {
    TRIAL_OK,
    TRIAL_FAILED,      /* the command failed: non-zero exit, error event, garbage, OOM */
    TRIAL_TIMEOUT,
    TRIAL_UNREACHABLE, /* SSH failed: the command never ran */
    TRIAL_CANCELLED,
    TRIAL_INTERRUPTED,
    TRIAL_PRUNED       /* stopped early as hopeless: time_s is the mean of its few iterations */
} TrialStatus;

typedef struct {
    Schedule *schedule;    /* owned */
    TrialStatus status;
    char reason[512];      /* why it failed; empty when ok (srun line, task, its words) */
    double time_s;         /* objective: done.time_s, else mean post-warm-up iteration */
    double comm_s;         /* mean post-warm-up communication time; < 0 unknown */
    double *device_time_s; /* cluster->n_devices; mean post-warm-up; < 0 unknown */
    double *machine_time_s;/* cluster->n_machines; mean post-warm-up compute; < 0 unknown */
    int iterations_seen;
    /* cluster->n_machines flags: the machines a trial lost unreachable did not reach (its
     * connection failed there, or its command was never sent to a host not connected), so
     * that a resume checks again only those hosts for a refusal; NULL: none named (a trial
     * that reached every host, or a journal from before the field: all of them, then). */
    unsigned char *unreachable;
} Observation;

/* Accumulates events of one trial (possibly from several hosts, merged by iter). */
typedef struct TrialAccumulator TrialAccumulator;

/* The constructors here return NULL when out of memory (core/base/error.h's policy). */
TrialAccumulator *trial_accumulator_new(const Schedule *s);
/* Returns -1 with a reason when the event names an unknown machine or device. */
int trial_accumulator_add(TrialAccumulator *a, const TrialEvent *ev, Error *err);
int trial_accumulator_has_error(const TrialAccumulator *a, const char **message);
/* Finishes: fills an Observation (takes a copy of the schedule). When no objective can be
 * formed, the status is TRIAL_FAILED with a reason. */
Observation *trial_accumulator_finish(TrialAccumulator *a);
void trial_accumulator_free(TrialAccumulator *a);

Observation *observation_new(const Schedule *s);
Observation *observation_copy(const Observation *o);
/* Names machine m among o->unreachable (made on first use): 0, or -1 out of memory. */
int observation_mark_unreachable(Observation *o, size_t m);
void observation_free(Observation *o);
const char *trial_status_name(TrialStatus s);
/* The status a name (as trial_status_name writes it) stands for; -1 for any other name. */
int trial_status_from_name(const char *name, TrialStatus *out);
/* The trial measured the schedule: ok, or pruned with its few iterations. */
int observation_measured(const Observation *o);

#endif
