#include <cJSON.h>
#include <criterion/criterion.h>
#include <arpa/inet.h>
#include <math.h>
#include <netinet/in.h>
#include <pthread.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <unistd.h>

#include "core/model/schedule_cluster.h"
#include "tools/worker/ps_shard.h"
#include "tools/worker/psauth.h"
#include "tools/worker/psnet.h"
#include "tools/worker/sgd_machine.h"
#include "tools/worker/sgdplan.h"
#include "tools/worker/synthdata.h"

/* Two workers (one with two devices) and two PS shards over loopback TCP, in threads: the
 * parameters after K synchronous steps equal K steps of plain full-batch SGD computed here
 * directly, whatever the split of the batch over workers, devices and shards. */
static const char *SCHED =
    "{\"protocol\": 1, \"iterations\": 3, \"warmup\": 1,"
    " \"job\": {\"name\": \"t\", \"model_mb\": 0.05, \"batch\": 24, \"input_dim\": 8,"
    "          \"classes\": 3, \"learning_rate\": 0.3, \"data_seed\": 5},"
    " \"machines\": ["
    "  {\"name\": \"a\", \"host\": \"127.0.0.1\", \"type\": \"two\", \"worker\": true, \"ps\": "
    "true,"
    "   \"devices\": [{\"id\": \"cpu\", \"inputs\": 10}, {\"id\": \"cpu1\", \"inputs\": 4}]},"
    "  {\"name\": \"b\", \"host\": \"127.0.0.1\", \"type\": \"one\", \"worker\": true, \"ps\": "
    "true,"
    "   \"devices\": [{\"id\": \"cpu\", \"inputs\": 10}]}]}";

static const unsigned char SECRET[32] = "a job's secret, 32 bytes long..";

typedef struct {
    SgdMachineConfig cfg;
    Error err;
    int rc, iterations;
    double last_loss;
} Run;

static void count(void *ud, const SgdIteration *it)
{
    Run *r = ud;
    r->iterations++;
    r->last_loss = it->mean_loss;
    cr_assert(it->time_s >= it->compute_s - 1e-9);
    cr_assert(it->comm_s >= 0);
}

static void *run_machine(void *arg)
{
    Run *r = arg;
    r->rc = sgd_machine_run(&r->cfg, &r->err);
    return NULL;
}

typedef struct {
    double *params; /* the whole vector, shared */
    size_t lo, n;
    uint64_t last_step;
} Capture;

/* Keeps the shard's slice after every step: after the last, the final parameters. */
static int capture(void *ud, uint64_t step, double loss, uint32_t examples, const double *shard,
                   Error *err)
{
    (void)err;
    cr_assert_eq(examples, 24);
    cr_assert(loss >= 0); /* workers send the loss to shard 0 only */
    Capture *c = ud;
    memcpy(c->params + c->lo, shard, c->n * sizeof *shard);
    c->last_step = step;
    return 0;
}

Test(ps_shard, synchronous_steps_equal_full_batch_sgd)
{
    cJSON *root = cJSON_Parse(SCHED);
    Error e;
    Cluster *c = schedule_cluster_from_json(root, "t", &e);
    cr_assert_not_null(c, "%s", e.msg);
    Schedule *s = schedule_from_json(root, c, "t", &e);
    cr_assert_not_null(s, "%s", e.msg);
    SgdPlan plan;
    cr_assert_eq(sgdplan_build(s, &plan, &e), 0, "%s", e.msg);
    size_t np = plan.net.n_params;

    /* Reference: full-batch SGD on the same examples, step by step. */
    double *ref = malloc(np * sizeof *ref), *g = malloc(np * sizeof *g);
    densenet_init_params(&plan.net, ref, plan.data_seed);
    SynthData data;
    synthdata_init(&data, plan.data_seed, plan.input_dim, plan.classes, plan.n_examples);
    double x[24 * 8];
    int y[24];
    DenseNetWork *w = densenet_work_new(&plan.net, 24);
    for (int step = 0; step < 3; step++) {
        synthdata_fill(&data, (uint64_t)step * 24, 24, x, y);
        memset(g, 0, np * sizeof *g);
        densenet_gradient(&plan.net, ref, x, y, 24, g, w);
        for (size_t i = 0; i < np; i++)
            ref[i] -= plan.learning_rate * g[i] / 24;
    }

    int lfd[2], port[2];
    char hosts[2][256] = {"127.0.0.1", "127.0.0.1"};
    for (int k = 0; k < 2; k++) {
        lfd[k] = psnet_listen("127.0.0.1", 0, &port[k], &e);
        cr_assert(lfd[k] >= 0, "%s", e.msg);
    }
    double *got = calloc(np, sizeof *got);
    Capture cap[2];
    for (int m = 0; m < 2; m++) {
        long k = plan.machine_shard[m];
        cap[m] = (Capture){got, plan.shard_lo[k], plan.shard_hi[k] - plan.shard_lo[k], 0};
    }
    Run runs[2];
    pthread_t th[2];
    for (int m = 0; m < 2; m++) {
        memset(&runs[m], 0, sizeof runs[m]);
        runs[m].cfg = (SgdMachineConfig){.plan = &plan,
                                         .schedule = s,
                                         .machine = (size_t)m,
                                         .ps_listen_fd = lfd[m],
                                         .ps_host = hosts,
                                         .ps_port = port,
                                         .steps = 3,
                                         .connect_timeout_s = 10,
                                         .secret = SECRET,
                                         .on_step = capture,
                                         .step_userdata = &cap[m],
                                         .on_iteration = count,
                                         .userdata = &runs[m]};
        cr_assert_eq(pthread_create(&th[m], NULL, run_machine, &runs[m]), 0);
    }
    for (int m = 0; m < 2; m++) {
        pthread_join(th[m], NULL);
        cr_assert_eq(runs[m].rc, 0, "machine %d: %s", m, runs[m].err.msg);
        cr_assert_eq(runs[m].iterations, 3);
        cr_assert(runs[m].last_loss > 0 && isfinite(runs[m].last_loss));
    }
    cr_assert_eq(cap[0].last_step, 3);
    cr_assert_eq(cap[1].last_step, 3);
    double worst = 0;
    for (size_t i = 0; i < np; i++)
        worst = fmax(worst, fabs(got[i] - ref[i]));
    cr_assert(worst < 1e-9, "parameters differ from full-batch SGD by up to %g", worst);
    free(got);
    close(lfd[0]);
    close(lfd[1]);
    densenet_work_free(w);
    synthdata_clear(&data);
    free(g);
    free(ref);
    sgdplan_clear(&plan);
    schedule_free(s);
    cluster_free(c);
    cJSON_Delete(root);
}

/* A checkpoint that fails, then a STOP that cannot reach the worker: the shard's own
 * connection to it is found by its local port (this test's process holds every fd) and its
 * sending side shut, so the send fails every time (EPIPE), with no race on a reset. */
typedef struct {
    int port; /* the shard's listening port */
    int listen_fd;
} Breaker;

static int checkpoint_fails(void *ud, uint64_t step, double loss, uint32_t examples,
                            const double *shard, Error *err)
{
    (void)step, (void)loss, (void)examples, (void)shard;
    const Breaker *b = ud;
    int shut = 0;
    for (int fd = 3; fd < 1024; fd++) {
        struct sockaddr_in a;
        socklen_t len = sizeof a;
        if (fd == b->listen_fd || getsockname(fd, (struct sockaddr *)&a, &len) < 0 ||
            a.sin_family != AF_INET || ntohs(a.sin_port) != b->port)
            continue;
        cr_assert_eq(shutdown(fd, SHUT_WR), 0);
        shut++;
    }
    cr_assert_eq(shut, 1, "the shard's connection to its worker was not found");
    return error_set(err, "writing checkpoint ckpt.bin: No space left on device");
}

typedef struct {
    PsShardConfig cfg;
    Error err;
    int rc;
} ShardRun;

static void *run_shard(void *arg)
{
    ShardRun *r = arg;
    r->rc = ps_shard_run(&r->cfg, &r->err);
    return NULL;
}

/* Regression: the STOP's send error replaced the checkpoint's ("shard 0: step 1: to worker
 * 0: send: Broken pipe"), so the job's failure named a symptom, not the cause. */
Test(ps_shard, a_failed_checkpoint_stays_the_reason_when_the_stop_cannot_be_sent)
{
    Error e = {0};
    int port;
    int lfd = psnet_listen("127.0.0.1", 0, &port, &e);
    cr_assert(lfd >= 0, "%s", e.msg);
    double params[2] = {1, 2}, got[2];
    Breaker b = {port, lfd};
    ShardRun r = {.cfg = {.listen_fd = lfd,
                          .shard = 0,
                          .n_workers = 1,
                          .lo = 0,
                          .hi = 2,
                          .params = params,
                          .learning_rate = 0.1,
                          .connect_timeout_s = 10,
                          .secret = SECRET,
                          .on_step = checkpoint_fails,
                          .userdata = &b}};
    pthread_t th;
    cr_assert_eq(pthread_create(&th, NULL, run_shard, &r), 0);
    int fd = psauth_dial("127.0.0.1", port, SECRET, 0, 0, 10, &e);
    cr_assert(fd >= 0, "%s", e.msg);
    PsMsg m;
    cr_assert_eq(psnet_recv(fd, &m, got, 2, &e), 0, "%s", e.msg);
    cr_assert_eq(m.type, PSMSG_PARAMS);
    PsMsg push = {.type = PSMSG_PUSH, .iter = 1, .offset = 0, .count = 2, .inputs = 4, .loss = 1};
    double grad[2] = {0.5, 0.5};
    cr_assert_eq(psnet_send(fd, &push, grad, &e), 0, "%s", e.msg);
    pthread_join(th, NULL);
    cr_assert_eq(r.rc, -1);
    cr_assert(strstr(r.err.msg, "shard 0: step 1: writing checkpoint ckpt.bin: No space left on "
                                "device; sending STOP to worker 0 failed too: send: "),
              "the checkpoint's failure is not the reason: %s", r.err.msg);
    close(fd);
    close(lfd);
}
