/* One machine of a per-host trial (see trial_host.h). */
#include "tools/worker/trial_host.h"

#include <stdio.h>
#include <stdlib.h>
#include <unistd.h>

#include "core/model/protocol.h"
#include "tools/worker/psnet.h"

/* The done line of a per-host trial is this machine's own mean; tunedeck merges the
 * machines' lines. */
typedef struct {
    const char *machine;
    int warmup;
    double sum;
    int count;
} OwnTimes;

static void print_own_iteration(void *ud, const SgdIteration *it)
{
    OwnTimes *t = ud;
    int iter = (int)it->step - 1;
    char *line = sgd_iteration_format(it, t->machine, iter);
    printf("%s\n", line);
    fflush(stdout);
    free(line);
    if (iter >= t->warmup) {
        t->sum += it->time_s;
        t->count++;
    }
}

/* The schedule's machine names, "a, b, c", cut with "..." past cap. */
static void machine_names(const Cluster *c, char *out, size_t cap)
{
    size_t len = 0;
    out[0] = 0;
    for (size_t m = 0; m < c->n_machines; m++) {
        int n = snprintf(out + len, cap - len, "%s%s", m ? ", " : "", c->machines[m].name);
        if (n < 0 || (size_t)n >= cap - len) {
            snprintf(out + (cap > 4 ? cap - 4 : 0), cap > 4 ? 4 : cap, "...");
            return;
        }
        len += (size_t)n;
    }
}

int trial_host_run(const SgdMachineConfig *base, const char *name, const char *from, int port_base,
                   const double *slowdown, Error *err)
{
    const SgdPlan *plan = base->plan;
    const Schedule *s = base->schedule;
    const Cluster *c = s->cluster;
    long mi = cluster_find_machine(c, name);
    if (mi < 0) {
        char names[200];
        machine_names(c, names, sizeof names);
        error_set(err, "%s: expected a machine of the schedule (%s), found '%s'", from, names,
                  name);
        return error_mark(err, ERROR_INPUT);
    }
    size_t ns = plan->n_shards;
    char(*hosts)[256] = calloc(ns, sizeof *hosts);
    int *ports = calloc(ns, sizeof *ports);
    if (!hosts || !ports) {
        free(hosts);
        free(ports);
        return error_set(err, "out of memory");
    }
    for (size_t k = 0; k < ns; k++) {
        size_t m = plan->shard_machine[k];
        snprintf(hosts[k], sizeof hosts[k], "%s", c->machines[m].host);
        ports[k] = port_base + (int)m;
    }
    int listen_fd = -1, rc = -1;
    if (plan->machine_shard[mi] >= 0) {
        listen_fd = psnet_listen(NULL, port_base + (int)mi, NULL, err);
        if (listen_fd < 0)
            goto out;
    } else if (plan->machine_rank[mi] < 0) {
        rc = 0; /* neither worker nor PS in this schedule: nothing to do */
        goto out;
    }
    OwnTimes own = {.machine = c->machines[mi].name, .warmup = s->job.warmup};
    SgdMachineConfig mc = *base;
    mc.machine = (size_t)mi;
    mc.ps_listen_fd = listen_fd;
    mc.ps_host = hosts;
    mc.ps_port = ports;
    mc.slowdown = slowdown + c->machines[mi].first_device;
    mc.on_iteration = print_own_iteration;
    mc.userdata = &own;
    rc = sgd_machine_run(&mc, err);
    if (rc == 0 && own.count > 0) {
        TrialEvent done = {.kind = EVENT_DONE, .time_s = own.sum / own.count};
        char *line = protocol_format(&done);
        printf("%s\n", line);
        free(line);
        fflush(stdout);
    }
out:
    if (listen_fd >= 0)
        close(listen_fd);
    free(hosts);
    free(ports);
    return rc;
}
