#include <criterion/criterion.h>
#include <math.h>
#include <stdlib.h>

#include "tools/worker/densenet.h"
#include "tools/worker/synthdata.h"

/* Central finite differences agree with backpropagation on every parameter of a small
 * network (relative error below 1e-5 in double precision). */
Test(densenet, gradient_matches_finite_differences)
{
    DenseNet net;
    Error e;
    size_t sizes[] = {5, 4, 3, 3};
    cr_assert_eq(densenet_init(&net, sizes, 4, &e), 0, "%s", e.msg);
    cr_assert_eq(net.n_params, (5 + 1) * 4 + (4 + 1) * 3 + (3 + 1) * 3);
    double *p = malloc(net.n_params * sizeof *p), *g = calloc(net.n_params, sizeof *g);
    densenet_init_params(&net, p, 7);
    for (size_t i = 0; i < net.n_params; i++)
        p[i] += 0.1 * sin((double)i); /* non-zero biases too */
    SynthData d;
    cr_assert_eq(synthdata_init(&d, 3, 5, 3, 100), 0);
    double x[6 * 5];
    int y[6];
    synthdata_fill(&d, 0, 6, x, y);
    /* max_batch 4 < 6 examples: the chunked path is checked as well */
    DenseNetWork *w = densenet_work_new(&net, 4);
    double loss = densenet_gradient(&net, p, x, y, 6, g, w);
    cr_assert(loss > 0 && isfinite(loss));
    cr_assert_float_eq(densenet_loss(&net, p, x, y, 6, w), loss, 1e-12);
    double worst = 0;
    for (size_t i = 0; i < net.n_params; i++) {
        double keep = p[i], h = 1e-6;
        p[i] = keep + h;
        double up = densenet_loss(&net, p, x, y, 6, w);
        p[i] = keep - h;
        double down = densenet_loss(&net, p, x, y, 6, w);
        p[i] = keep;
        double fd = (up - down) / (2 * h);
        double rel = fabs(fd - g[i]) / fmax(1e-7, fabs(fd) + fabs(g[i]));
        worst = rel > worst ? rel : worst;
    }
    cr_assert(worst < 1e-5, "worst relative gradient error %g", worst);
    densenet_work_free(w);
    synthdata_clear(&d);
    free(p);
    free(g);
}

Test(densenet, gradient_adds_into_the_buffer)
{
    DenseNet net;
    size_t sizes[] = {3, 4, 2};
    cr_assert_eq(densenet_init(&net, sizes, 3, NULL), 0);
    double *p = malloc(net.n_params * sizeof *p), *g1 = calloc(net.n_params, sizeof *g1),
           *g2 = calloc(net.n_params, sizeof *g2);
    densenet_init_params(&net, p, 1);
    double x[2 * 3] = {0.1, -0.2, 0.3, 1.0, 0.5, -0.7};
    int y[2] = {0, 1};
    DenseNetWork *w = densenet_work_new(&net, 2);
    densenet_gradient(&net, p, x, y, 2, g1, w);
    densenet_gradient(&net, p, x, y, 1, g2, w);
    densenet_gradient(&net, p, x + 3, y + 1, 1, g2, w);
    for (size_t i = 0; i < net.n_params; i++)
        cr_assert_float_eq(g1[i], g2[i], 1e-12, "param %zu", i);
    densenet_work_free(w);
    free(p);
    free(g1);
    free(g2);
}

Test(densenet, a_few_sgd_steps_lower_the_loss)
{
    DenseNet net;
    cr_assert_eq(densenet_for_model_bytes(&net, 16, 4, 8 * 2000.0, NULL), 0);
    double *p = malloc(net.n_params * sizeof *p), *g = malloc(net.n_params * sizeof *g);
    densenet_init_params(&net, p, 2);
    SynthData d;
    synthdata_init(&d, 9, 16, 4, 256);
    double *x = malloc(256 * 16 * sizeof *x);
    int *y = malloc(256 * sizeof *y);
    synthdata_fill(&d, 0, 256, x, y);
    DenseNetWork *w = densenet_work_new(&net, 256);
    double first = densenet_loss(&net, p, x, y, 256, w) / 256;
    for (int step = 0; step < 30; step++) {
        for (size_t i = 0; i < net.n_params; i++)
            g[i] = 0;
        densenet_gradient(&net, p, x, y, 256, g, w);
        for (size_t i = 0; i < net.n_params; i++)
            p[i] -= 0.2 * g[i] / 256;
    }
    double last = densenet_loss(&net, p, x, y, 256, w) / 256;
    cr_assert(last < 0.8 * first, "loss %g -> %g", first, last);
    densenet_work_free(w);
    synthdata_clear(&d);
    free(x);
    free(y);
    free(p);
    free(g);
}

Test(densenet, bad_shapes_are_refused_with_the_layer_named)
{
    DenseNet net;
    Error e;
    size_t zero[] = {4, 0, 2};
    cr_assert_eq(densenet_init(&net, zero, 3, &e), -1);
    cr_assert(strstr(e.msg, "layer 1"), "%s", e.msg);
    size_t one_class[] = {4, 1};
    cr_assert_eq(densenet_init(&net, one_class, 2, &e), -1);
    cr_assert(strstr(e.msg, "classes"), "%s", e.msg);
}

Test(synthdata, examples_are_a_function_of_their_index)
{
    SynthData d;
    synthdata_init(&d, 5, 8, 3, 1000);
    double a[4 * 8], b[8];
    int ya[4], yb[1];
    synthdata_fill(&d, 10, 4, a, ya);
    synthdata_fill(&d, 12, 1, b, yb);
    for (int j = 0; j < 8; j++)
        cr_assert_eq(a[2 * 8 + j], b[j]);
    cr_assert_eq(ya[2], yb[0]);
    synthdata_fill(&d, 1012, 1, b, yb); /* wraps at the data set size */
    cr_assert_eq(a[2 * 8], b[0]);
    synthdata_clear(&d);
}
