/* Decoding the generic optimizers' flat vector (roles and share weights) into a valid
 * schedule, with repairs instead of rejections so that every point of the box is a trial. */
#include "core/opt/flatsched.h"

#include <math.h>
#include <stdlib.h>
#include <string.h>

const char *flatsched_role_name(int role)
{
    static const char *const NAMES[] = {"none", "worker", "ps", "both"};
    return role >= 0 && role < FLAT_N_ROLES ? NAMES[role] : "?";
}

static int clamp_role(int r)
{
    return r < 0 ? 0 : r >= FLAT_N_ROLES ? FLAT_N_ROLES - 1 : r;
}

static double clean_weight(double w)
{
    return isfinite(w) && w > 0 ? w : 0;
}

/* Splits the batch over the worker devices (active[d]), capping devices at their memory
 * limit and re-splitting what they could not take over the rest. */
static int split_capped(const Cluster *c, const unsigned char *active, const double *weights,
                        int batch, int *inputs, Error *err)
{
    size_t n = c->n_devices;
    unsigned char *capped = calloc(n ? n : 1, 1);
    double *w = calloc(n ? n : 1, sizeof *w);
    int *part = calloc(n ? n : 1, sizeof *part);
    int rc = capped && w && part ? 0 : error_no_memory(err, "flat schedule: %zu devices", n);
    if (rc < 0) {
        free(capped), free(w), free(part);
        return rc;
    }
    memset(inputs, 0, n * sizeof *inputs);
    for (;;) {
        int fixed = 0;
        size_t open = 0;
        double sum = 0;
        for (size_t d = 0; d < n; d++) {
            if (capped[d])
                fixed += inputs[d];
            else if (active[d]) {
                w[d] = clean_weight(weights[d]);
                sum += w[d];
                open++;
            } else
                w[d] = 0;
        }
        int remaining = batch - fixed;
        if (remaining == 0)
            break;
        if (!open) {
            rc = error_set(err,
                           "flat schedule: the workers' devices cannot hold the batch %d "
                           "within their memory limits",
                           batch);
            break;
        }
        if (sum <= 0)
            for (size_t d = 0; d < n; d++)
                w[d] = active[d] && !capped[d] ? 1.0 : 0.0;
        for (size_t d = 0; d < n; d++)
            if (capped[d])
                w[d] = 0;
        schedule_split_integer(w, n, remaining, part);
        int over = 0;
        for (size_t d = 0; d < n; d++) {
            if (capped[d])
                continue;
            inputs[d] = part[d];
            const DeviceSpec *dev = cluster_device(c, d, NULL);
            if (active[d] && dev->max_inputs > 0 && part[d] > dev->max_inputs) {
                inputs[d] = dev->max_inputs;
                capped[d] = 1;
                over = 1;
            }
        }
        if (!over)
            break;
        /* Devices that were not over their limit are split again with the rest. */
        for (size_t d = 0; d < n; d++)
            if (!capped[d])
                inputs[d] = 0;
    }
    free(capped);
    free(w);
    free(part);
    return rc;
}

int flatsched_decode(const int *roles, const double *weights, Schedule *out, Error *err)
{
    const Cluster *c = out->cluster;
    size_t nm = c->n_machines;
    if (!nm)
        return error_set(err, "flat schedule: the cluster '%s' has no machine", c->name);
    for (size_t m = 0; m < nm; m++) {
        int r = clamp_role(roles[m]);
        out->worker[m] = (unsigned char)(r == FLAT_WORKER || r == FLAT_BOTH);
        out->ps[m] = (unsigned char)(r == FLAT_PS || r == FLAT_BOTH);
        if (out->job.sync == JOB_SYNC_ALLREDUCE)
            out->ps[m] = 0;
    }
    if (!schedule_count_workers(out)) {
        size_t best = 0;
        double best_w = -1;
        for (size_t m = 0; m < nm; m++) {
            const Machine *mc = &c->machines[m];
            double sum = 0;
            for (size_t d = 0; d < c->types[mc->type].n_devices; d++)
                sum += clean_weight(weights[mc->first_device + d]);
            if (sum > best_w) {
                best_w = sum;
                best = m;
            }
        }
        out->worker[best] = 1;
    }
    unsigned char *active = calloc(c->n_devices ? c->n_devices : 1, 1);
    if (!active)
        return error_no_memory(err, "flat schedule: %zu devices", c->n_devices);
    for (size_t m = 0; m < nm; m++) {
        const Machine *mc = &c->machines[m];
        for (size_t d = 0; d < c->types[mc->type].n_devices; d++)
            active[mc->first_device + d] = out->worker[m];
    }
    int rc = split_capped(c, active, weights, out->job.batch, out->inputs, err);
    free(active);
    if (rc < 0)
        return -1;
    size_t busiest = 0;
    int most = -1;
    for (size_t m = 0; m < nm; m++) {
        int x = schedule_machine_inputs(out, m);
        if (out->worker[m] && x == 0)
            out->worker[m] = 0;
        if (x > most) {
            most = x;
            busiest = m;
        }
    }
    if (out->job.sync == JOB_SYNC_PS && !schedule_count_ps(out))
        out->ps[busiest] = 1;
    return schedule_validate(out, err);
}

void flatsched_encode(const Schedule *s, int *roles, double *weights)
{
    const Cluster *c = s->cluster;
    for (size_t m = 0; m < c->n_machines; m++)
        roles[m] = (s->worker[m] ? FLAT_WORKER : 0) | (s->ps[m] ? FLAT_PS : 0);
    for (size_t d = 0; d < c->n_devices; d++)
        weights[d] = s->job.batch > 0 ? (double)s->inputs[d] / s->job.batch : 0;
}
