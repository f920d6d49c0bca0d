/* A schedule for one job on one cluster: worker and parameter-server roles per machine and
 * inputs per device (DESIGN §2, §5.1). Device inputs use the cluster's flat device list. */
#ifndef TUNEDECK_SCHEDULE_H
#define TUNEDECK_SCHEDULE_H

#include <stddef.h>

#include "core/model/cluster.h"
#include "core/model/job.h"

typedef struct {
    const Cluster *cluster; /* borrowed; must outlive the schedule */
    JobSpec job;
    int trial;
    unsigned char *worker;  /* n_machines */
    unsigned char *ps;      /* n_machines */
    int *inputs;            /* cluster->n_devices */
} Schedule;

Schedule *schedule_new(const Cluster *c, const JobSpec *job);
Schedule *schedule_copy(const Schedule *s);
void schedule_copy_into(Schedule *dst, const Schedule *src); /* same cluster */
void schedule_free(Schedule *s);

/* At least one worker; at least one PS for a PS job, none for an allreduce job (its
 * participating devices are those with inputs); inputs >= 0; worker inputs sum to the batch; machines
 * that are not workers get zero; GPU inputs within the device's memory limit. */
int schedule_validate(const Schedule *s, Error *err);

int schedule_machine_inputs(const Schedule *s, size_t machine);
int schedule_count_workers(const Schedule *s);
int schedule_count_ps(const Schedule *s);
int schedule_equal(const Schedule *a, const Schedule *b);

/* Moves the schedule off the machines marked in out[n_machines] (a host it cannot reach):
 * their roles go, and the batch is split again over the devices left in proportion to the
 * inputs they had (every device of the machines left when none had any); a PS job that loses
 * its last parameter server gets one on each worker left. Returns schedule_validate's answer
 * (-1 also when no machine is left); s is changed either way. */
int schedule_leave_out(Schedule *s, const unsigned char *out, Error *err);

/* Splits `total` over n slots in proportion to weights (largest remainder); slots with
 * weight 0 get 0. Returns -1 if every weight is 0. */
int schedule_split_integer(const double *weights, size_t n, int total, int *out);

/* Protocol v1 input object (DESIGN §5.1). */
cJSON *schedule_to_json(const Schedule *s);
/* The same as one line of text ending in '\n', as a trial reads it on standard input;
 * *len counts the bytes to send (without the terminating NUL). NULL when out of memory.
 * Caller frees. */
char *schedule_to_line(const Schedule *s, size_t *len);
/* The line a trial reads: the same with the trial's secret as "ps_secret" (when not NULL;
 * hex digits, as secret_new_hex makes them, else NULL). Only a trial's input carries it: the
 * journal and `tune --json` use schedule_to_json. The line is the secret's only copy on the
 * heap: the caller wipes it before freeing it. */
char *schedule_to_input(const Schedule *s, const char *ps_secret, size_t *len);
Schedule *schedule_from_json(const cJSON *root, const Cluster *c, const char *source, Error *err);

#endif
