#include <criterion/criterion.h>
#include <cJSON.h>
#include <malloc.h>
#include <stdlib.h>
#include <string.h>

#include "core/model/schedule.h"
#include "core/sim/simcluster.h"
#include "tests/support/fixtures.h"

static SimCluster *sim;
static const Cluster *c;

static void setup(void)
{
    sim = fixture_sim("B:googlenet");
    c = simcluster_cluster(sim);
}

static void teardown(void)
{
    simcluster_free(sim);
}

/* Every GPU machine a worker and PS, the batch split evenly over the GPUs. */
static Schedule *gpu_schedule(void)
{
    Schedule *s = schedule_new(c, simcluster_job(sim));
    double w[256] = {0};
    for (size_t i = 0; i < c->n_machines; i++) {
        if (!cluster_machine_has_gpu(c, i))
            continue;
        s->worker[i] = s->ps[i] = 1;
        const MachineType *t = cluster_machine_type(c, i);
        for (size_t d = 0; d < t->n_devices; d++)
            if (t->devices[d].kind == DEVICE_GPU)
                w[c->machines[i].first_device + d] = 1;
    }
    cr_assert_eq(schedule_split_integer(w, c->n_devices, s->job.batch, s->inputs), 0);
    return s;
}

TestSuite(schedule, .init = setup, .fini = teardown);

Test(schedule, valid_schedule_passes_and_counts)
{
    Schedule *s = gpu_schedule();
    Error err;
    cr_assert_eq(schedule_validate(s, &err), 0, "%s", err.msg);
    cr_assert(schedule_count_workers(s) >= 1);
    cr_assert_eq(schedule_count_workers(s), schedule_count_ps(s));
    long total = 0;
    for (size_t i = 0; i < c->n_machines; i++)
        total += schedule_machine_inputs(s, i);
    cr_assert_eq(total, s->job.batch);
    schedule_free(s);
}

static void invalid(Schedule *s, const char *needle)
{
    Error err = {0};
    cr_assert_eq(schedule_validate(s, &err), -1, "expected invalid: %s", needle);
    cr_assert(strstr(err.msg, needle), "'%s' lacks '%s'", err.msg, needle);
    schedule_free(s);
}

Test(schedule, every_rule_is_enforced)
{
    Schedule *s = gpu_schedule();
    memset(s->worker, 0, c->n_machines);
    invalid(s, "at least one worker");

    s = gpu_schedule();
    memset(s->ps, 0, c->n_machines);
    invalid(s, "at least one parameter server");

    s = gpu_schedule();
    size_t g = c->machines[0].first_device;
    while (s->inputs[g] == 0)
        g++;
    s->inputs[g] = -1;
    invalid(s, "non-negative");

    s = gpu_schedule();
    s->inputs[c->machines[0].first_device + 1] += 1;
    invalid(s, "sum to the batch");

    s = gpu_schedule();
    size_t last = c->n_machines - 1; /* a CPU-only machine in setting B */
    cr_assert_not(s->worker[last]);
    s->inputs[c->machines[last].first_device] = 5;
    s->inputs[c->machines[0].first_device + 1] -= 5;
    invalid(s, "not a worker");
}

Test(schedule, allreduce_job_takes_no_parameter_servers)
{
    Schedule *s = gpu_schedule();
    s->job.sync = JOB_SYNC_ALLREDUCE;
    invalid(s, "an allreduce job has no parameter servers, found");

    s = gpu_schedule();
    s->job.sync = JOB_SYNC_ALLREDUCE;
    memset(s->ps, 0, c->n_machines);
    Error err;
    cr_assert_eq(schedule_validate(s, &err), 0, "%s", err.msg);
    cJSON *j = schedule_to_json(s);
    Schedule *back = schedule_from_json(j, c, "line", &err);
    cr_assert_not_null(back, "%s", err.msg);
    cr_assert_eq(back->job.sync, JOB_SYNC_ALLREDUCE, "the trial sees the sync mode");
    cr_assert(schedule_equal(s, back));
    cJSON_Delete(j);
    schedule_free(back);

    s->inputs[c->machines[0].first_device + 1] += 1;
    invalid(s, "sum to the batch");
}

Test(schedule, split_integer_is_exact_and_proportional)
{
    double w[] = {1, 1, 1, 0, 2};
    int out[5];
    cr_assert_eq(schedule_split_integer(w, 5, 100, out), 0);
    cr_assert_eq(out[0] + out[1] + out[2] + out[3] + out[4], 100);
    cr_assert_eq(out[3], 0);
    cr_assert(out[4] == 40);
    cr_assert(out[0] >= 20 && out[0] <= 20);
    double zero[] = {0, 0};
    cr_assert_eq(schedule_split_integer(zero, 2, 10, out), -1);
    double odd[] = {1, 1, 1};
    cr_assert_eq(schedule_split_integer(odd, 3, 10, out), 0);
    cr_assert_eq(out[0] + out[1] + out[2], 10);
    for (int i = 0; i < 3; i++)
        cr_assert(out[i] == 3 || out[i] == 4);
}

Test(schedule, round_trips_through_protocol_json_with_job_fields)
{
    Schedule *s = gpu_schedule();
    s->trial = 7;
    cJSON_AddStringToObject(s->job.extra ? s->job.extra : (s->job.extra = cJSON_CreateObject()),
                            "dataset", "imagenet");
    cJSON *j = schedule_to_json(s);
    cr_assert_eq(cJSON_GetObjectItem(j, "protocol")->valueint, 1);
    cr_assert_str_eq(
        cJSON_GetObjectItem(cJSON_GetObjectItem(j, "job"), "dataset")->valuestring, "imagenet");
    Error err;
    Schedule *back = schedule_from_json(j, c, "stdin", &err);
    cr_assert_not_null(back, "%s", err.msg);
    cr_assert(schedule_equal(s, back));
    cr_assert_eq(back->trial, 7);
    cJSON *j2 = schedule_to_json(back);
    cr_assert(cJSON_Compare(j, j2, 1));
    Schedule *copy = schedule_copy(back);
    cr_assert(schedule_equal(copy, s));
    cJSON_Delete(j);
    cJSON_Delete(j2);
    schedule_free(s);
    schedule_free(back);
    schedule_free(copy);
}

Test(schedule, input_line_is_one_json_object_and_one_newline)
{
    Schedule *s = gpu_schedule();
    size_t len = 0;
    char *line = schedule_to_line(s, &len);
    cr_assert_not_null(line);
    cr_assert_eq(len, strlen(line));
    cr_assert_eq(line[len - 1], '\n');
    cr_assert_null(memchr(line, '\n', len - 1), "one line only");
    cJSON *j = cJSON_Parse(line);
    Error err;
    Schedule *back = schedule_from_json(j, c, "line", &err);
    cr_assert_not_null(back, "%s", err.msg);
    cr_assert(schedule_equal(s, back));
    cJSON_Delete(j);
    schedule_free(back);
    schedule_free(s);
    free(line);
}

Test(schedule, only_a_trials_input_carries_the_secret)
{
    Schedule *s = gpu_schedule();
    size_t len = 0;
    char *line = schedule_to_input(s, "00ff", &len);
    cr_assert_not_null(line);
    cJSON *j = cJSON_Parse(line);
    cr_assert_str_eq(cJSON_GetStringValue(cJSON_GetObjectItem(j, "ps_secret")), "00ff");
    Error err;
    Schedule *back = schedule_from_json(j, c, "line", &err); /* readers take it in their stride */
    cr_assert_not_null(back, "%s", err.msg);
    cr_assert(schedule_equal(s, back));
    cJSON *plain = schedule_to_json(s); /* what the journal and tune --json write */
    cr_assert_null(cJSON_GetObjectItem(plain, "ps_secret"));
    char *plain_line = schedule_to_line(s, &len);
    cr_assert_null(strstr(plain_line, "ps_secret"));
    free(plain_line);
    cJSON_Delete(plain);
    cJSON_Delete(j);
    schedule_free(back);
    schedule_free(s);
    free(line);
}

static void rejects(const char *text, const char *needle)
{
    cJSON *j = cJSON_Parse(text);
    cr_assert_not_null(j, "test JSON must parse: %s", text);
    Error err = {0};
    Schedule *s = schedule_from_json(j, c, "sched.json", &err);
    cJSON_Delete(j);
    cr_assert_null(s, "expected rejection: %s", needle);
    cr_assert(strstr(err.msg, needle), "'%s' lacks '%s'", err.msg, needle);
    cr_assert(strstr(err.msg, "sched.json"), "'%s' lacks the source", err.msg);
}

#define JOB "\"job\": {\"name\": \"g\", \"model_mb\": 26.7, \"batch\": 768}"

Test(schedule, from_json_rejects_every_bad_field)
{
    rejects("[]", "expected a JSON object");
    rejects("{\"protocol\": 2, " JOB ", \"machines\": []}", "field 'protocol'");
    rejects("{\"protocol\": 1, \"machines\": []}", "field 'job'");
    rejects("{\"protocol\": 1, \"job\": {\"name\": \"g\"}, \"machines\": []}", "model_mb");
    rejects("{\"protocol\": 1, " JOB "}", "field 'machines'");
    rejects("{\"protocol\": 1, " JOB ", \"machines\": [{\"name\": \"nope\", \"worker\": true, "
            "\"ps\": true}]}",
            "unknown machine 'nope'");
    rejects("{\"protocol\": 1, " JOB ", \"machines\": [{\"name\": \"g2-0\", \"type\": "
            "\"c4.8xlarge\", \"worker\": true, \"ps\": true}]}",
            "field 'type'");
    rejects("{\"protocol\": 1, " JOB ", \"machines\": [{\"name\": \"g2-0\", \"worker\": \"yes\", "
            "\"ps\": true}]}",
            "field 'worker'");
    rejects("{\"protocol\": 1, " JOB ", \"machines\": [{\"name\": \"g2-0\", \"worker\": true, "
            "\"ps\": true, \"devices\": [{\"id\": \"gpu7\", \"inputs\": 3}]}]}",
            "no device 'gpu7'");
    rejects("{\"protocol\": 1, " JOB ", \"machines\": [{\"name\": \"g2-0\", \"worker\": true, "
            "\"ps\": true, \"devices\": [{\"id\": \"gpu0\", \"inputs\": -3}]}]}",
            "field 'inputs'");
    /* the second g2-0 once replaced the first without a word */
    rejects("{\"protocol\": 1, " JOB ", \"machines\": [{\"name\": \"g2-0\", \"worker\": true, "
            "\"ps\": true}, {\"name\": \"g2-0\", \"worker\": false, \"ps\": false}]}",
            "machines[1]: field 'name': machine 'g2-0' appears twice");
}

/* Blocks cJSON hands back while the hooks below are in place, and how many held the secret. */
static const char *freed_secret;
static int freed_with_secret;

static void free_and_look(void *p)
{
    if (p && memmem(p, malloc_usable_size(p), freed_secret, strlen(freed_secret)))
        freed_with_secret++;
    free(p);
}

/* Regression: the secret went through cJSON (a node of its own, print buffers grown by copy)
 * and every such copy went back to the heap unwiped, though the line itself is wiped by
 * launcher_input_free and the worker wipes every block it frees. */
Test(schedule, a_trials_input_leaves_no_copy_of_its_secret_on_the_heap)
{
    static const char SECRET[] = "5ec2e75ec2e75ec2e75ec2e75ec2e75ec2e75ec2e75ec2e75ec2e75ec2e70123";
    Schedule *s = gpu_schedule();
    freed_secret = SECRET;
    freed_with_secret = 0;
    cJSON_InitHooks(&(cJSON_Hooks){.malloc_fn = malloc, .free_fn = free_and_look});
    size_t len = 0;
    char *line = schedule_to_input(s, SECRET, &len);
    cJSON_InitHooks(NULL);
    cr_assert_not_null(line);
    cr_assert_eq(freed_with_secret, 0, "%d freed blocks held the secret", freed_with_secret);
    cJSON *j = cJSON_ParseWithLength(line, len);
    cr_assert_str_eq(cJSON_GetStringValue(cJSON_GetObjectItem(j, "ps_secret")), SECRET);
    cr_assert_eq(line[len - 1], '\n');
    cr_assert_eq(strlen(line), len);
    cJSON_Delete(j);
    explicit_bzero(line, len);
    free(line);
    schedule_free(s);
}

/* A machine whose host cannot be reached (its key refused) is left out of the optimizer's
 * schedule: the rest keeps its shape, and the batch stays whole. */
/* Every machine a worker and PS, the batch split evenly over every device. */
static Schedule *every_device_schedule(void)
{
    Schedule *s = schedule_new(c, simcluster_job(sim));
    double w[256];
    for (size_t d = 0; d < c->n_devices; d++)
        w[d] = 1;
    memset(s->worker, 1, c->n_machines);
    memset(s->ps, 1, c->n_machines);
    cr_assert_eq(schedule_split_integer(w, c->n_devices, s->job.batch, s->inputs), 0);
    return s;
}

Test(schedule, leave_out_moves_a_machines_share_to_the_workers_left_in_proportion)
{
    Schedule *s = every_device_schedule(), *before = every_device_schedule();
    unsigned char out[256] = {0};
    out[0] = 1;
    Error err;
    cr_assert_eq(schedule_leave_out(s, out, &err), 0, "%s", err.msg);
    cr_assert_not(s->worker[0] || s->ps[0]);
    cr_assert_eq(schedule_machine_inputs(s, 0), 0);
    for (size_t m = 1; m < c->n_machines; m++) {
        cr_assert_eq(s->worker[m], before->worker[m], "machine %zu keeps its role", m);
        cr_assert_eq(s->ps[m], before->ps[m]);
        const MachineType *t = cluster_machine_type(c, m);
        for (size_t d = 0; d < t->n_devices; d++) {
            size_t i = c->machines[m].first_device + d;
            cr_assert(before->inputs[i] ? s->inputs[i] >= before->inputs[i] : !s->inputs[i],
                      "device %zu: %d, was %d", i, s->inputs[i], before->inputs[i]);
        }
    }
    schedule_free(s);
    schedule_free(before);
}

Test(schedule, leave_out_gives_a_ps_job_a_parameter_server_on_each_worker_left)
{
    Schedule *s = every_device_schedule();
    memset(s->ps, 0, c->n_machines);
    s->ps[0] = 1; /* its one parameter server, on the machine left out */
    unsigned char out[256] = {0};
    out[0] = 1;
    Error err;
    cr_assert_eq(schedule_leave_out(s, out, &err), 0, "%s", err.msg);
    cr_assert_gt(schedule_count_ps(s), 0);
    for (size_t m = 0; m < c->n_machines; m++)
        cr_assert_eq(s->ps[m], s->worker[m], "machine %zu", m);
    schedule_free(s);
}

Test(schedule, leave_out_of_the_only_worker_spreads_the_batch_over_every_machine_left)
{
    Schedule *s = gpu_schedule();
    for (size_t m = 1; m < c->n_machines; m++)
        s->worker[m] = s->ps[m] = 0;
    double w[256] = {0};
    for (size_t d = 0; d < cluster_machine_type(c, 0)->n_devices; d++)
        w[c->machines[0].first_device + d] = 1;
    cr_assert_eq(schedule_split_integer(w, c->n_devices, s->job.batch, s->inputs), 0);
    unsigned char out[256] = {0};
    out[0] = 1;
    Error err;
    cr_assert_eq(schedule_leave_out(s, out, &err), 0, "%s", err.msg);
    cr_assert_not(s->worker[0]);
    for (size_t m = 1; m < c->n_machines; m++)
        cr_assert(s->worker[m] && schedule_machine_inputs(s, m) > 0, "machine %zu", m);
    schedule_free(s);
}

Test(schedule, leave_out_of_every_machine_is_refused)
{
    Schedule *s = gpu_schedule();
    unsigned char out[256];
    memset(out, 1, sizeof out);
    Error err = {0};
    cr_assert_eq(schedule_leave_out(s, out, &err), -1);
    cr_assert(strstr(err.msg, "no machine left"), "%s", err.msg);
    schedule_free(s);
}
