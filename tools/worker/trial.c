/* A trial from its schedule, played by the mode its options choose (see trial.h). */
#include "tools/worker/trial.h"

#include <cJSON.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "core/base/jfield.h"
#include "core/model/schedule_cluster.h"
#include "tools/worker/trial_host.h"
#include "tools/worker/trial_local.h"
#include "tools/worker/trial_secret.h"

enum { PORT_MAX = 65535 };

/* The parsed schedule is needed only until the secret is taken (the Schedule and Cluster
 * copy what they keep); its "ps_secret" is wiped before its memory goes back to the heap. */
static void drop_json(cJSON **root)
{
    trial_secret_wipe_json(*root);
    cJSON_Delete(*root);
    *root = NULL;
}

/* Per-host, machine i's shard listens on port_base + i: every machine's port must exist, or
 * the shards past 65535 fail to listen (or wrap, by the kernel's 16 bits, onto a low port)
 * only after the others have started. Every machine is counted, not only this trial's PS
 * machines, so that a cluster either fits its base or is refused at its first trial. */
static int check_port_range(const TrialOptions *o, const Cluster *c, Error *err)
{
    long last = (long)o->port_base + (long)c->n_machines - 1;
    if (last <= PORT_MAX)
        return 0;
    error_set(err,
              "%s %d: the schedule's %zu machines need shard ports %d to %ld, past the limit "
              "%d; expected a port base of at most %ld",
              o->port_base_from ? o->port_base_from : "--port-base", o->port_base, c->n_machines,
              o->port_base, last, PORT_MAX, PORT_MAX - (long)c->n_machines + 1);
    return error_mark(err, ERROR_INPUT);
}

int trial_run(const TrialOptions *o, char *text, size_t len, const char *source, Error *err)
{
    cJSON *root = jfield_parse_text(text, len, source, "protocol v1 schedule object", err);
    explicit_bzero(text, len);
    if (!root) /* the blocks of its tree were wiped as they were freed (secret_wipe_free) */
        return error_mark(err, ERROR_INPUT);
    int rc = -1;
    Cluster *c = schedule_cluster_from_json(root, source, err);
    Schedule *s = c ? schedule_from_json(root, c, source, err) : NULL;
    double *slow = NULL;
    unsigned char secret[SECRET_BYTES];
    SgdPlan plan;
    memset(&plan, 0, sizeof plan);
    if (!s || schedule_validate(s, err) < 0) {
        if (s) /* schedule_from_json's errors name it already */
            error_prefix(err, "%s", source);
        error_mark(err, ERROR_INPUT); /* the schedule on standard input */
        goto out;
    }
    int one_machine = o->machine && o->machine[0];
    if (!o->all_local && one_machine && check_port_range(o, c, err) < 0)
        goto out;
    if (trial_secret_take(root, source, o->all_local || !one_machine, secret, err) < 0)
        goto out;
    drop_json(&root);
    if (sgdplan_build(s, &plan, err) < 0 || !(slow = slowdown_resolve(o->slow, o->n_slow, c, err)))
        goto out;
    SgdMachineConfig base = {.plan = &plan,
                             .schedule = s,
                             .steps = (uint64_t)s->job.iterations,
                             .connect_timeout_s = o->connect_timeout_s,
                             .secret = secret,
                             .log = o->log};
    if (o->all_local) {
        rc = trial_local_run(&base, slow, stdout, err);
    } else if (one_machine) {
        rc = trial_host_run(&base, o->machine, o->machine_from ? o->machine_from : "--machine",
                            o->port_base, slow, err);
    } else {
        error_set(err, "expected $TUNEDECK_MACHINE (or --machine NAME) to say which machine "
                       "this is, or --all-local to play every machine here");
        error_mark(err, ERROR_INPUT);
    }
out:
    explicit_bzero(secret, sizeof secret);
    sgdplan_clear(&plan);
    free(slow);
    schedule_free(s);
    cluster_free(c);
    drop_json(&root);
    return rc;
}
