/* A job's loss curve and the fraction of training it says is done; see losscurve.h. */
#include "core/sched/losscurve.h"

#include <math.h>
#include <stdlib.h>

/* the fitted loss must fall by this share over the points before it predicts an end */
static const double MIN_DROP = 0.01;

void losscurve_init(LossCurve *c)
{
    *c = (LossCurve){0};
}

void losscurve_clear(LossCurve *c)
{
    free(c->step);
    free(c->loss);
    losscurve_init(c);
}

static void thin(LossCurve *c)
{
    size_t w = 0;
    for (size_t r = 0; r < c->n; r += 2, w++) {
        c->step[w] = c->step[r];
        c->loss[w] = c->loss[r];
    }
    /* keep the newest point: the fit must reach the present */
    if (c->n % 2 == 0) {
        c->step[w] = c->step[c->n - 1];
        c->loss[w] = c->loss[c->n - 1];
        w++;
    }
    c->n = w;
    c->n_at_fit = 0;
}

int losscurve_add(LossCurve *c, double step, double loss)
{
    if (!isfinite(loss) || !(step >= 0) || !isfinite(step))
        return 0;
    if (!(loss > 0)) {
        int first = !c->below_model;
        c->below_model = 1;
        c->fitted = 0;
        return first;
    }
    if (c->below_model)
        return 0;
    while (c->n && c->step[c->n - 1] >= step)
        c->n--;
    if (c->n_at_fit > c->n)
        c->n_at_fit = 0;
    if (c->n == c->cap) {
        size_t cap = c->cap ? c->cap * 2 : 32;
        double *s = realloc(c->step, cap * sizeof *s);
        if (!s)
            return -1;
        c->step = s;
        double *l = realloc(c->loss, cap * sizeof *l);
        if (!l)
            return -1;
        c->loss = l;
        c->cap = cap;
    }
    c->step[c->n] = step;
    c->loss[c->n] = loss;
    c->n++;
    if (c->n > LOSSCURVE_MAX_POINTS)
        thin(c);
    if (c->n >= LOSSCURVE_MIN_POINTS && (c->n_at_fit == 0 || c->n * 10 >= c->n_at_fit * 11)) {
        Error err;
        ConvModel m;
        if (convmodel_fit(&m, c->step, c->loss, c->n, &err) == 0) {
            c->model = m;
            c->fitted = 1;
        }
        c->n_at_fit = c->n;
    }
    return 0;
}

double losscurve_total_steps(const LossCurve *c, double tol)
{
    if (c->below_model || !c->fitted || c->model.theta0 <= 0 || c->n < 2)
        return INFINITY;
    double l0 = convmodel_loss(&c->model, 0);
    /* A curve that barely moved over the points seen says nothing about its end. */
    double first = convmodel_loss(&c->model, c->step[0]);
    double last = convmodel_loss(&c->model, c->step[c->n - 1]);
    if (!isfinite(l0) || !(first - last > MIN_DROP * first))
        return INFINITY;
    return convmodel_steps_to(&c->model, c->model.theta2 + tol * (l0 - c->model.theta2));
}

double losscurve_fraction_done(const LossCurve *c, double step, double tol)
{
    double total = losscurve_total_steps(c, tol);
    if (!isfinite(total))
        return -1;
    if (total <= 0)
        return 1;
    double f = step / total;
    return f < 1 ? f : 1;
}
