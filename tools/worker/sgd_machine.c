/* A machine that is both worker and PS serves its shard from a thread while its worker loop
 * runs in the caller's; the shard's traffic to its own worker still goes over TCP. */
#include "tools/worker/sgd_machine.h"

#include <pthread.h>
#include <stdlib.h>
#include <string.h>

typedef struct {
    PsShardConfig cfg;
    Error err;
    int rc;
} ShardThread;

static void *shard_main(void *arg)
{
    ShardThread *st = arg;
    st->rc = ps_shard_run(&st->cfg, &st->err);
    return NULL;
}

int sgd_machine_run(const SgdMachineConfig *cfg, Error *err)
{
    const SgdPlan *plan = cfg->plan;
    long shard = plan->machine_shard[cfg->machine];
    long rank = plan->machine_rank[cfg->machine];
    ShardThread st;
    memset(&st, 0, sizeof st);
    double *slice = NULL;
    pthread_t thread;
    int have_thread = 0;
    if (shard >= 0) {
        size_t lo = plan->shard_lo[shard], hi = plan->shard_hi[shard];
        double *full = malloc(plan->net.n_params * sizeof *full);
        slice = malloc((hi - lo + 1) * sizeof *slice);
        if (!full || !slice) {
            free(full);
            free(slice);
            return error_set(err, "out of memory for the parameter shard");
        }
        if (cfg->init_params)
            memcpy(full, cfg->init_params, plan->net.n_params * sizeof *full);
        else
            densenet_init_params(&plan->net, full, plan->data_seed);
        memcpy(slice, full + lo, (hi - lo) * sizeof *slice);
        free(full);
        st.cfg = (PsShardConfig){.listen_fd = cfg->ps_listen_fd,
                                 .shard = (uint32_t)shard,
                                 .n_workers = plan->n_workers,
                                 .lo = lo,
                                 .hi = hi,
                                 .params = slice,
                                 .learning_rate = plan->learning_rate,
                                 .first_step = cfg->first_step,
                                 .steps = cfg->steps,
                                 .connect_timeout_s = cfg->connect_timeout_s,
                                 .secret = cfg->secret,
                                 .log = cfg->log,
                                 .log_userdata = cfg->log_userdata,
                                 .on_step = cfg->on_step,
                                 .userdata = cfg->step_userdata};
        if (rank < 0) {
            st.rc = ps_shard_run(&st.cfg, &st.err);
        } else if (pthread_create(&thread, NULL, shard_main, &st) != 0) {
            free(slice);
            return error_set(err, "cannot start the parameter-server thread");
        } else {
            have_thread = 1;
        }
    }
    int rc = 0;
    if (rank >= 0) {
        SgdWorkerConfig w = {.plan = plan,
                             .schedule = cfg->schedule,
                             .machine = cfg->machine,
                             .ps_host = cfg->ps_host,
                             .ps_port = cfg->ps_port,
                             .slowdown = cfg->slowdown,
                             .examples_base = cfg->examples_base,
                             .connect_timeout_s = cfg->connect_timeout_s,
                             .secret = cfg->secret,
                             .on_iteration = cfg->on_iteration,
                             .userdata = cfg->userdata};
        rc = sgd_worker_run(&w, err);
    }
    if (have_thread)
        pthread_join(thread, NULL);
    free(slice);
    /* The worker's error comes first: a failing shard usually shows there as a closed peer. */
    if (rc < 0)
        return -1;
    if (shard >= 0 && st.rc < 0) {
        if (err)
            *err = st.err;
        return -1;
    }
    return 0;
}
