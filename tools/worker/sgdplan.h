/* How a schedule maps onto synchronous parameter-server SGD: worker ranks, the parameter
 * shard each PS machine owns, which examples of the batch each device takes, and the
 * network and data the job asks for. */
#ifndef TUNEDECK_SGDPLAN_H
#define TUNEDECK_SGDPLAN_H

#include <stddef.h>
#include <stdint.h>

#include "tools/worker/densenet.h"
#include "core/model/schedule.h"

typedef struct {
    DenseNet net;
    size_t input_dim, classes;
    double learning_rate;
    uint64_t data_seed, n_examples; /* the synthetic data set (one epoch = n_examples) */
    int batch;
    size_t n_workers;
    size_t *worker_machine; /* rank -> machine index */
    long *machine_rank;     /* machine -> rank, -1 for non-workers */
    size_t n_shards;
    size_t *shard_machine;       /* shard -> machine index */
    size_t *shard_lo, *shard_hi; /* [lo, hi) of the flat parameter vector */
    long *machine_shard;         /* machine -> shard, -1 for non-PS machines */
    int *device_offset;          /* flat device -> its first example within the batch */
} SgdPlan;

/* Job fields read (all optional, from the job's extra fields): input_dim (64), classes (10),
 * learning_rate (0.1), data_seed (1), examples (65536); the network's two hidden layers are
 * sized so its parameters take about model_mb. The schedule must be valid. */
int sgdplan_build(const Schedule *s, SgdPlan *p, Error *err);
void sgdplan_clear(SgdPlan *p);

#endif
