/* The queued overrides' predicted times, kept between frames (queuepred.h). */
#include "tui/queuepred.h"

#include <math.h>
#include <string.h>

/* The trials the model has observed: every record but a running trial's (obs NULL), which
 * is only ever the newest. */
static size_t model_trials(const Tuner *t)
{
    size_t n = tuner_n_trials(t);
    return n && !tuner_trial(t, n - 1)->obs ? n - 1 : n;
}

static const QueuedPrediction *find(const QueuePredictions *q, int id)
{
    for (size_t i = 0; i < q->n; i++)
        if (q->v[i].id == id)
            return &q->v[i];
    return NULL;
}

int queuepred_update(QueuePredictions *q, Tuner *t)
{
    QueuedPrediction v[OVERRIDEQUEUE_MAX] = {{0}};
    size_t n = t ? tuner_overrides(t) : 0, model = t ? model_trials(t) : 0;
    int changed = n != q->n, busy = 0;
    for (size_t i = 0; i < n && i < OVERRIDEQUEUE_MAX; i++) {
        int id = tuner_override_id(t, i);
        const QueuedPrediction *had = find(q, id);
        v[i] = had ? *had : (QueuedPrediction){.id = id, .mean_s = NAN, .model = (size_t)-1};
        changed |= !had || i >= q->n || q->v[i].id != id;
        if (v[i].model == model)
            continue;
        Suggestion sg;
        Error err;
        q->asked++;
        int rc = tuner_predict(t, tuner_override_at(t, i), &sg, &err);
        if (rc == TUNER_PREDICT_BUSY) {
            busy = 1;
            continue;
        }
        if (rc < 0) /* anything but busy will not get better */
            sg.has_prediction = 0;
        double mean_s = sg.has_prediction ? sg.mean_s : NAN;
        suggestion_clear(&sg);
        changed |= !(mean_s == v[i].mean_s || (isnan(mean_s) && isnan(v[i].mean_s)));
        v[i].mean_s = mean_s;
        v[i].model = model;
    }
    q->n = n < OVERRIDEQUEUE_MAX ? n : OVERRIDEQUEUE_MAX;
    memcpy(q->v, v, q->n * sizeof *v);
    q->busy = busy;
    return changed;
}

double queuepred_mean_s(const QueuePredictions *q, int id)
{
    const QueuedPrediction *p = find(q, id);
    return p ? p->mean_s : NAN;
}
