/* The shard reads pushes in worker-rank order and replies in the same order; workers push
 * to shards in shard order, so neither side can wait on the other in a cycle. */
#include "tools/worker/ps_shard.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "tools/worker/psnet.h"

int ps_shard_run(const PsShardConfig *cfg, Error *err)
{
    size_t n = cfg->hi - cfg->lo, nw = cfg->n_workers;
    int *conn = malloc(nw * sizeof *conn);
    double *sum = malloc((n ? n : 1) * sizeof *sum), *grad = malloc((n ? n : 1) * sizeof *grad);
    int rc = -1;
    if (!conn || !sum || !grad) {
        error_set(err, "shard %u: out of memory", cfg->shard);
        goto out;
    }
    for (size_t i = 0; i < nw; i++)
        conn[i] = -1;
    if (!cfg->secret) {
        error_set(err, "shard %u: no job secret to check the workers' handshakes with", cfg->shard);
        goto out;
    }
    PsGateConfig gate = {.listen_fd = cfg->listen_fd,
                         .secret = cfg->secret,
                         .shard = cfg->shard,
                         .n_workers = nw,
                         .timeout_s = cfg->connect_timeout_s,
                         .handshake_timeout_s = cfg->connect_timeout_s,
                         .log = cfg->log,
                         .log_userdata = cfg->log_userdata};
    if (psgate_admit(&gate, conn, err) < 0)
        goto out;
    PsMsg reply = {.type = PSMSG_PARAMS,
                   .sender = cfg->shard,
                   .iter = cfg->first_step,
                   .offset = cfg->lo,
                   .count = n};
    for (size_t w = 0; w < nw; w++)
        if (psnet_send(conn[w], &reply, cfg->params, err) < 0) {
            error_prefix(err, "shard %u: sending parameters to worker %zu", cfg->shard, w);
            goto out;
        }
    for (uint64_t step = cfg->first_step + 1;; step++) {
        memset(sum, 0, n * sizeof *sum);
        double max_compute = 0, loss = 0;
        uint64_t examples = 0;
        for (size_t w = 0; w < nw; w++) {
            PsMsg push;
            if (psnet_recv(conn[w], &push, grad, n, err) < 0) {
                error_prefix(err, "shard %u: step %llu: from worker %zu", cfg->shard,
                             (unsigned long long)step, w);
                goto out;
            }
            if (push.type != PSMSG_PUSH || push.iter != step || push.offset != cfg->lo ||
                push.count != n) {
                error_set(err,
                          "shard %u: step %llu: worker %zu sent a %s for step %llu at "
                          "offset %llu with %llu values: expected a push of [%zu, %zu)",
                          cfg->shard, (unsigned long long)step, w, psmsg_type_name(push.type),
                          (unsigned long long)push.iter, (unsigned long long)push.offset,
                          (unsigned long long)push.count, cfg->lo, cfg->hi);
                goto out;
            }
            for (size_t i = 0; i < n; i++)
                sum[i] += grad[i];
            max_compute = push.compute_s > max_compute ? push.compute_s : max_compute;
            loss += push.loss;
            examples += push.inputs;
        }
        /* Workers push gradients of summed losses: the step uses the batch mean. */
        double scale = examples ? cfg->learning_rate / (double)examples : 0;
        for (size_t i = 0; i < n; i++)
            cfg->params[i] -= scale * sum[i];
        double mean_loss = examples ? loss / (double)examples : 0;
        int stop = cfg->steps && step >= cfg->first_step + cfg->steps;
        int asked = cfg->on_step ? cfg->on_step(cfg->userdata, step, mean_loss, (uint32_t)examples,
                                                cfg->params, err)
                                 : 0;
        if (asked)
            stop = 1;
        reply = (PsMsg){.type = stop ? PSMSG_STOP : PSMSG_PARAMS,
                        .sender = cfg->shard,
                        .inputs = (uint32_t)examples,
                        .iter = step,
                        .offset = cfg->lo,
                        .count = n,
                        .compute_s = max_compute,
                        .loss = mean_loss};
        Error sent = {0};
        for (size_t w = 0; w < nw; w++)
            if (psnet_send(conn[w], &reply, cfg->params, asked < 0 ? &sent : err) < 0) {
                if (asked < 0) {
                    /* The step's own failure (its checkpoint) is why the job fails: the STOP
                     * that could not reach a worker is said after it, never in its place. */
                    error_prefix(err, "shard %u: step %llu", cfg->shard, (unsigned long long)step);
                    size_t len = err ? strlen(err->msg) : 0;
                    if (err)
                        snprintf(err->msg + len, sizeof err->msg - len,
                                 "; sending STOP to worker %zu failed too: %s", w, sent.msg);
                    goto out;
                }
                error_prefix(err, "shard %u: step %llu: to worker %zu", cfg->shard,
                             (unsigned long long)step, w);
                goto out;
            }
        if (asked < 0) {
            /* the workers have their STOP: they end, and this shard's failure is the job's */
            error_prefix(err, "shard %u: step %llu", cfg->shard, (unsigned long long)step);
            goto out;
        }
        if (stop)
            break;
    }
    rc = 0;
out:
    if (conn)
        for (size_t i = 0; i < nw; i++)
            if (conn[i] >= 0)
                close(conn[i]);
    free(conn);
    free(sum);
    free(grad);
    return rc;
}
