/* Dense network passes as cblas_dgemm products: Z = A W^T + b forward, dW = dZ^T A and
 * dA = dZ W backward (the standard matrix form of backpropagation). */
#include "tools/worker/densenet.h"

#include <cblas.h>
#include <math.h>
#include <stdlib.h>
#include <string.h>

struct DenseNetWork {
    size_t max_batch;
    double *act[DENSENET_MAX_LAYERS + 1]; /* act[0] unused: the input is the caller's */
    double *delta[2];
};

int densenet_init(DenseNet *net, const size_t *sizes, size_t n_sizes, Error *err)
{
    memset(net, 0, sizeof *net);
    if (n_sizes < 2 || n_sizes > DENSENET_MAX_LAYERS + 1)
        return error_set(err, "network: expected 2 to %d layer sizes, found %zu",
                         DENSENET_MAX_LAYERS + 1, n_sizes);
    for (size_t i = 0; i < n_sizes; i++) {
        if (sizes[i] < 1 || sizes[i] > 1000000)
            return error_set(err,
                             "network: layer %zu: expected a width of 1 to 1000000, "
                             "found %zu",
                             i, sizes[i]);
        net->sizes[i] = sizes[i];
    }
    if (sizes[n_sizes - 1] < 2)
        return error_set(err, "network: expected at least 2 classes, found %zu",
                         sizes[n_sizes - 1]);
    net->n_layers = n_sizes - 1;
    for (size_t l = 0; l < net->n_layers; l++)
        net->n_params += (net->sizes[l] + 1) * net->sizes[l + 1];
    return 0;
}

int densenet_for_model_bytes(DenseNet *net, size_t inputs, size_t classes, double model_bytes,
                             Error *err)
{
    /* params(h) = (inputs+1)h + (h+1)h + (h+1)classes; solve h^2 + (inputs+classes+2)h = P. */
    double p = model_bytes / 8.0 - (double)classes;
    double b = (double)(inputs + classes + 2);
    double h = p > 0 ? (-b + sqrt(b * b + 4 * p)) / 2 : 0;
    size_t width = h < 4 ? 4 : h > 100000 ? 100000 : (size_t)h;
    size_t sizes[] = {inputs, width, width, classes};
    return densenet_init(net, sizes, 4, err);
}

static uint64_t splitmix(uint64_t *s)
{
    uint64_t z = (*s += 0x9E3779B97F4A7C15ULL);
    z = (z ^ (z >> 30)) * 0xBF58476D1CE4E5B9ULL;
    z = (z ^ (z >> 27)) * 0x94D049BB133111EBULL;
    return z ^ (z >> 31);
}

void densenet_init_params(const DenseNet *net, double *params, uint64_t seed)
{
    uint64_t s = seed;
    double *p = params;
    for (size_t l = 0; l < net->n_layers; l++) {
        size_t in = net->sizes[l], out = net->sizes[l + 1];
        double bound = sqrt(6.0 / (double)(in + out)); /* Glorot & Bengio 2010 */
        for (size_t i = 0; i < in * out; i++)
            *p++ = bound * (2.0 * ((double)(splitmix(&s) >> 11) / 9007199254740992.0) - 1.0);
        for (size_t i = 0; i < out; i++)
            *p++ = 0.0;
    }
}

DenseNetWork *densenet_work_new(const DenseNet *net, size_t max_batch)
{
    DenseNetWork *w = calloc(1, sizeof *w);
    if (!w)
        return NULL;
    w->max_batch = max_batch ? max_batch : 1;
    size_t widest = 0;
    for (size_t l = 0; l <= net->n_layers; l++)
        widest = net->sizes[l] > widest ? net->sizes[l] : widest;
    int ok = 1;
    for (size_t l = 1; l <= net->n_layers; l++)
        ok &= (w->act[l] = malloc(w->max_batch * net->sizes[l] * sizeof(double))) != NULL;
    for (int i = 0; i < 2; i++)
        ok &= (w->delta[i] = malloc(w->max_batch * widest * sizeof(double))) != NULL;
    if (!ok) {
        densenet_work_free(w);
        return NULL;
    }
    return w;
}

void densenet_work_free(DenseNetWork *w)
{
    if (!w)
        return;
    for (size_t l = 0; l <= DENSENET_MAX_LAYERS; l++)
        free(w->act[l]);
    free(w->delta[0]);
    free(w->delta[1]);
    free(w);
}

/* Fills w->act[1..L]; the last holds softmax probabilities. Returns the summed loss. */
static double forward(const DenseNet *net, const double *params, const double *x, const int *labels,
                      size_t n, DenseNetWork *w)
{
    const double *a = x;
    const double *p = params;
    int nn = (int)n;
    for (size_t l = 0; l < net->n_layers; l++) {
        int in = (int)net->sizes[l], out = (int)net->sizes[l + 1];
        const double *W = p, *b = p + (size_t)in * out;
        double *z = w->act[l + 1];
        for (size_t i = 0; i < n; i++)
            memcpy(z + i * (size_t)out, b, (size_t)out * sizeof(double));
        cblas_dgemm(CblasRowMajor, CblasNoTrans, CblasTrans, nn, out, in, 1.0, a, in, W, in, 1.0, z,
                    out);
        if (l + 1 < net->n_layers)
            for (size_t i = 0; i < n * (size_t)out; i++)
                z[i] = tanh(z[i]);
        a = z;
        p += (size_t)(in + 1) * out;
    }
    size_t classes = net->sizes[net->n_layers];
    double *prob = w->act[net->n_layers];
    double loss = 0;
    for (size_t i = 0; i < n; i++) {
        double *row = prob + i * classes;
        double mx = row[0];
        for (size_t k = 1; k < classes; k++)
            mx = row[k] > mx ? row[k] : mx;
        double sum = 0;
        for (size_t k = 0; k < classes; k++)
            sum += (row[k] = exp(row[k] - mx));
        for (size_t k = 0; k < classes; k++)
            row[k] /= sum;
        double py = row[labels[i]];
        loss -= log(py > 1e-300 ? py : 1e-300);
    }
    return loss;
}

double densenet_loss(const DenseNet *net, const double *params, const double *x, const int *labels,
                     size_t n, DenseNetWork *w)
{
    double loss = 0;
    for (size_t at = 0; at < n; at += w->max_batch) {
        size_t k = n - at < w->max_batch ? n - at : w->max_batch;
        loss += forward(net, params, x + at * net->sizes[0], labels + at, k, w);
    }
    return loss;
}

static double gradient_chunk(const DenseNet *net, const double *params, const double *x,
                             const int *labels, size_t n, double *grad, DenseNetWork *w)
{
    double loss = forward(net, params, x, labels, n, w);
    size_t L = net->n_layers, classes = net->sizes[L];
    /* d loss / d logits = softmax - onehot */
    double *dz = w->delta[0];
    memcpy(dz, w->act[L], n * classes * sizeof(double));
    for (size_t i = 0; i < n; i++)
        dz[i * classes + (size_t)labels[i]] -= 1.0;
    size_t offsets[DENSENET_MAX_LAYERS] = {0};
    size_t off = 0;
    for (size_t l = 0; l < L; l++) {
        offsets[l] = off;
        off += (net->sizes[l] + 1) * net->sizes[l + 1];
    }
    int nn = (int)n, cur = 0;
    for (size_t l = L; l-- > 0;) {
        int in = (int)net->sizes[l], out = (int)net->sizes[l + 1];
        const double *W = params + offsets[l];
        double *gW = grad + offsets[l], *gb = gW + (size_t)in * out;
        const double *a = l == 0 ? x : w->act[l];
        dz = w->delta[cur];
        cblas_dgemm(CblasRowMajor, CblasTrans, CblasNoTrans, out, in, nn, 1.0, dz, out, a, in, 1.0,
                    gW, in);
        for (size_t i = 0; i < n; i++)
            for (int k = 0; k < out; k++)
                gb[k] += dz[i * (size_t)out + (size_t)k];
        if (l == 0)
            break;
        double *da = w->delta[1 - cur];
        cblas_dgemm(CblasRowMajor, CblasNoTrans, CblasNoTrans, nn, in, out, 1.0, dz, out, W, in,
                    0.0, da, in);
        for (size_t i = 0; i < n * (size_t)in; i++)
            da[i] *= 1.0 - a[i] * a[i]; /* tanh' = 1 - tanh^2 */
        cur = 1 - cur;
    }
    return loss;
}

double densenet_gradient(const DenseNet *net, const double *params, const double *x,
                         const int *labels, size_t n, double *grad, DenseNetWork *w)
{
    double loss = 0;
    for (size_t at = 0; at < n; at += w->max_batch) {
        size_t k = n - at < w->max_batch ? n - at : w->max_batch;
        loss += gradient_chunk(net, params, x + at * net->sizes[0], labels + at, k, grad, w);
    }
    return loss;
}
