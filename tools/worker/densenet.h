/* A small dense network (tanh hidden layers, softmax output, cross-entropy loss) whose
 * forward and backward passes are OpenBLAS matrix products: the trial workload's compute. */
#ifndef TUNEDECK_DENSENET_H
#define TUNEDECK_DENSENET_H

#include <stddef.h>
#include <stdint.h>

#include "core/base/error.h"

enum { DENSENET_MAX_LAYERS = 8 };

/* Layer widths: sizes[0] inputs, sizes[n_layers] classes. Parameters are one flat vector:
 * for each layer l, W_l (sizes[l+1] x sizes[l], row-major) then b_l (sizes[l+1]). */
typedef struct {
    size_t n_layers;
    size_t sizes[DENSENET_MAX_LAYERS + 1];
    size_t n_params;
} DenseNet;

/* Scratch space for passes over up to max_batch examples. */
typedef struct DenseNetWork DenseNetWork;

int densenet_init(DenseNet *net, const size_t *sizes, size_t n_sizes, Error *err);
/* Two tanh hidden layers of equal width chosen so the parameters take about model_bytes
 * (8 bytes each), at least 4 wide. */
int densenet_for_model_bytes(DenseNet *net, size_t inputs, size_t classes, double model_bytes,
                             Error *err);
/* Deterministic Glorot-uniform weights and zero biases from `seed`. */
void densenet_init_params(const DenseNet *net, double *params, uint64_t seed);

DenseNetWork *densenet_work_new(const DenseNet *net, size_t max_batch);
void densenet_work_free(DenseNetWork *w);

/* Forward and backward over n examples (x: n x sizes[0] row-major, labels in
 * [0, classes)): ADDS the gradient of the summed loss into grad and returns the summed loss.
 * Batches larger than the work's max_batch run in chunks. */
double densenet_gradient(const DenseNet *net, const double *params, const double *x,
                         const int *labels, size_t n, double *grad, DenseNetWork *w);
/* Forward only: the summed loss. */
double densenet_loss(const DenseNet *net, const double *params, const double *x, const int *labels,
                     size_t n, DenseNetWork *w);

#endif
