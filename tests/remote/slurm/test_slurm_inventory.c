#include <criterion/criterion.h>
#include <cJSON.h>
#include <stdio.h>
#include <string.h>
#include <unistd.h>

#include "remote/slurm/slurm_inventory.h"
#include "tests/support/ssh_hermetic.h"

/* A Slurm inventory is not a Cluster until the controller is read: its ssh block is
 * checked for stored secrets on its own path. */
Test(slurm_inventory, a_password_in_the_ssh_block_is_refused)
{
    cJSON *j = cJSON_Parse("{\"name\": \"s\", \"backend\": \"slurm\", \"login\": \"l1\", "
                           "\"ssh\": {\"user\": \"ops\", \"password\": \"hunter2\"}}");
    cr_assert_not_null(j);
    SlurmTarget t;
    Error err = {0};
    cr_assert_eq(slurm_target_from_json(j, "slurm.json", &t, &err), -1);
    cr_assert(strstr(err.msg, "slurm.json: ssh: field 'password': tunedeck never stores"),
              "%s", err.msg);
    cJSON_DeleteItemFromObject(cJSON_GetObjectItem(j, "ssh"), "password");
    cr_assert_eq(slurm_target_from_json(j, "slurm.json", &t, &err), 1, "%s", err.msg);
    cr_assert_str_eq(t.ssh.user, "ops");
    cJSON_Delete(j);
}

/* Regression: the Slurm inventory's ssh block (its login node's) ignored a misspelt key. */
Test(slurm_inventory, an_unknown_key_of_the_ssh_block_is_refused)
{
    cJSON *j = cJSON_Parse("{\"name\": \"s\", \"backend\": \"slurm\", \"login\": \"l1\", "
                           "\"ssh\": {\"user\": \"ops\", \"knwon_hosts\": \"~/kh\"}}");
    cr_assert_not_null(j);
    SlurmTarget t;
    Error err = {0};
    cr_assert_eq(slurm_target_from_json(j, "slurm.json", &t, &err), -1);
    cr_assert(strstr(err.msg, "slurm.json: ssh: field 'knwon_hosts': unknown; expected user, "
                              "port, identity, known_hosts or connect_timeout_s"),
              "%s", err.msg);
    cr_assert_eq(err.kind, ERROR_INPUT);
    cJSON_Delete(j);
}

static cJSON *inventory(const char *slurm_block)
{
    char text[512];
    snprintf(text, sizeof text, "{\"name\": \"s\", \"backend\": \"slurm\"%s%s}",
             slurm_block ? ", \"slurm\": " : "", slurm_block ? slurm_block : "");
    cJSON *j = cJSON_Parse(text);
    cr_assert_not_null(j, "%s", text);
    return j;
}

/* Without a "slurm" block every interval is 0: each user keeps its own default (30 s a
 * command, rounds 1 and 10 s, pending said after 30 s), as before the block existed. */
Test(slurm_inventory, no_slurm_block_leaves_every_interval_to_its_default)
{
    cJSON *j = inventory(NULL);
    SlurmTarget t;
    Error err = {0};
    cr_assert_eq(slurm_target_from_json(j, "slurm.json", &t, &err), 1, "%s", err.msg);
    cr_assert_eq(t.every.command_timeout_s, 0);
    cr_assert_eq(t.every.job_round_s, 0);
    cr_assert_eq(t.every.node_round_s, 0);
    cr_assert_eq(t.every.pending_say_s, 0);
    cr_assert_eq(t.every.exit_grace_s, 0);
    cr_assert_eq(t.every.ceiling_retry_s, 0);
    cr_assert_eq(t.every.release_wait_s, 0);
    cJSON_Delete(j);
}

Test(slurm_inventory, the_slurm_block_sets_each_interval_it_names)
{
    cJSON *j = inventory("{\"command_timeout_s\": 12.5, \"job_round_s\": 0.5, "
                         "\"node_round_s\": 2, \"pending_say_s\": 45, \"exit_grace_s\": 20, "
                         "\"ceiling_retry_s\": 60, \"ceiling_retry_max_s\": 7200, "
                         "\"release_wait_s\": 5}");
    SlurmTarget t;
    Error err = {0};
    cr_assert_eq(slurm_target_from_json(j, "slurm.json", &t, &err), 1, "%s", err.msg);
    cr_assert_float_eq(t.every.command_timeout_s, 12.5, 1e-12);
    cr_assert_float_eq(t.every.job_round_s, 0.5, 1e-12);
    cr_assert_float_eq(t.every.node_round_s, 2, 1e-12);
    cr_assert_float_eq(t.every.pending_say_s, 45, 1e-12);
    cr_assert_float_eq(t.every.exit_grace_s, 20, 1e-12);
    cr_assert_float_eq(t.every.ceiling_retry_s, 60, 1e-12);
    cr_assert_float_eq(t.every.ceiling_retry_max_s, 7200, 1e-12);
    cr_assert_float_eq(t.every.release_wait_s, 5, 1e-12);
    cJSON_Delete(j);
    j = inventory("{\"node_round_s\": 3}");
    cr_assert_eq(slurm_target_from_json(j, "slurm.json", &t, &err), 1, "%s", err.msg);
    cr_assert_float_eq(t.every.node_round_s, 3, 1e-12);
    cr_assert_eq(t.every.command_timeout_s, 0, "the others keep their defaults");
    cr_assert_eq(t.every.job_round_s, 0);
    cr_assert_eq(t.every.pending_say_s, 0);
    cr_assert_eq(t.every.exit_grace_s, 0);
    cr_assert_eq(t.every.ceiling_retry_s, 0);
    cJSON_Delete(j);
}

static void refused(const char *block, const char *says)
{
    cJSON *j = inventory(block);
    SlurmTarget t;
    Error err = {0};
    cr_assert_eq(slurm_target_from_json(j, "slurm.json", &t, &err), -1, "%s accepted", block);
    cr_assert(strstr(err.msg, says), "%s: '%s' does not say '%s'", block, err.msg, says);
    cJSON_Delete(j);
}

/* A misspelt interval would silently be its default: refused, naming what is known. */
Test(slurm_inventory, an_unknown_field_of_the_slurm_block_is_refused)
{
    refused("{\"node_round\": 2}",
            "slurm.json: slurm: field 'node_round': unknown; expected command_timeout_s, "
            "job_round_s, node_round_s, pending_say_s, exit_grace_s, ceiling_retry_s, "
            "ceiling_retry_max_s or release_wait_s (seconds)");
}

Test(slurm_inventory, an_interval_out_of_its_bounds_or_not_a_number_is_refused)
{
    refused(
        "{\"command_timeout_s\": 0}",
        "slurm.json: slurm: field 'command_timeout_s': expected a number in [1, 3600], found 0");
    refused("{\"command_timeout_s\": 3601}",
            "slurm.json: slurm: field 'command_timeout_s': expected a number in [1, 3600], found "
            "3601");
    refused("{\"job_round_s\": 0.05}",
            "slurm.json: slurm: field 'job_round_s': expected a number in [0.1, 3600], found 0.05");
    refused("{\"node_round_s\": -1}",
            "slurm.json: slurm: field 'node_round_s': expected a number in [0.5, 3600], found -1");
    refused("{\"pending_say_s\": 1e999}",
            "slurm.json: slurm: field 'pending_say_s': expected a number in [1, 3600], found one "
            "too large to represent (Infinity)");
    /* a session's end held longer than an hour is a hung session */
    refused("{\"release_wait_s\": 0}",
            "slurm.json: slurm: field 'release_wait_s': expected a number in [1, 3600], found 0");
    refused("{\"release_wait_s\": 3601}",
            "slurm.json: slurm: field 'release_wait_s': expected a number in [1, 3600], found "
            "3601");
    /* a grace every killed job's death waits out: bounded tighter than the intervals */
    refused("{\"exit_grace_s\": 0}",
            "slurm.json: slurm: field 'exit_grace_s': expected a number in [1, 300], found 0");
    refused("{\"exit_grace_s\": 301}",
            "slurm.json: slurm: field 'exit_grace_s': expected a number in [1, 300], found 301");
    refused("{\"node_round_s\": \"10\"}",
            "slurm.json: slurm: field 'node_round_s': expected a number, found a string");
    refused("{\"node_round_s\": null}",
            "slurm.json: slurm: field 'node_round_s': expected a number, found null");
    refused("[10]", "slurm.json: field 'slurm': expected an object, found an array");
    refused("30", "slurm.json: field 'slurm': expected an object, found a number");
}

/* A bad block is bad input (exit 3), found before any Slurm command runs. */
Test(slurm_inventory, a_bad_slurm_block_is_bad_input_before_the_controller_is_asked)
{
    cJSON *j = inventory("{\"node_round_s\": 0}");
    SlurmCtl *ctl = NULL;
    Error err = {0};
    cr_assert_null(slurm_inventory_load(j, "slurm.json", NULL, 0, &ctl, &err));
    cr_assert_eq(err.kind, ERROR_INPUT, "%s", err.msg);
    cr_assert(strstr(err.msg, "slurm.json: slurm: field 'node_round_s'"), "%s", err.msg);
    cr_assert_null(ctl);
    cJSON_Delete(j);
}

/* The Slurm block pasted twice, its second copy edited: the file is refused, naming the key,
 * before anything is asked of the controller (cJSON alone would read the first copy). */
Test(slurm_inventory, an_inventory_file_with_a_key_twice_is_bad_input)
{
    char path[] = "/tmp/td-slurm-inv-XXXXXX";
    int fd = mkstemp(path);
    cr_assert_geq(fd, 0);
    static const char TEXT[] = "{\"name\": \"s\", \"backend\": \"slurm\", \"login\": \"l1\", "
                               "\"slurm\": {\"node_round_s\": 2, \"node_round_s\": 20}}";
    cr_assert_eq(write(fd, TEXT, sizeof TEXT - 1), (ssize_t)(sizeof TEXT - 1));
    close(fd);
    SlurmCtl *ctl = NULL;
    Error err = {0};
    cr_assert_null(slurm_inventory_load_file(path, NULL, 0, &ctl, &err));
    char want[256];
    snprintf(want, sizeof want,
             "%s: slurm: key \"node_round_s\" appears twice; expected each key once per object",
             path);
    cr_assert_str_eq(err.msg, want);
    cr_assert_eq(err.kind, ERROR_INPUT);
    cr_assert_null(ctl);
    unlink(path);
}

/* command_timeout_s is every command's: a command that has not answered by then is cut and
 * said with the inventory's value (here `sleep 30`, which cannot answer within 1 s). */
Test(slurm_inventory, command_timeout_s_is_the_controller_connections_timeout)
{
    cJSON *j = inventory("{\"command_timeout_s\": 1}");
    SlurmTarget t;
    Error err = {0};
    cr_assert_eq(slurm_target_from_json(j, "slurm.json", &t, &err), 1, "%s", err.msg);
    SlurmCtl *c = slurm_target_ctl(&t, TEST_SSH_CONFIG, 0, &err);
    cr_assert_not_null(c, "%s", err.msg);
    const char *slow[] = {"sleep", "30", NULL};
    cr_assert_eq(slurm_ctl_run(c, slow, NULL, &err), -1);
    cr_assert(strstr(err.msg, "sleep: no answer within 1 s (is slurmctld up?)"), "%s", err.msg);
    slurm_ctl_free(c);
    cJSON_Delete(j);
}

/* An operator's node list, written as for SSH hosts ("machines"): read it, and the session ran
 * on every node of the partition instead, silently (the walk on the harness: a node "n9" that
 * does not exist, and trials ran on n1 and n2). Refused before the controller is asked. */
Test(slurm_inventory, machines_or_machine_types_in_a_slurm_inventory_are_refused)
{
    const char *const files[][2] = {
        {"{\"backend\": \"slurm\", \"partition\": \"t4\", \"machines\": [{\"name\": \"n9\"}]}",
         "machines"},
        {"{\"backend\": \"slurm\", \"machine_types\": {}}", "machine_types"},
    };
    for (size_t i = 0; i < sizeof files / sizeof *files; i++) {
        cJSON *j = cJSON_Parse(files[i][0]);
        cr_assert_not_null(j);
        SlurmCtl *ctl = NULL;
        Error err = {0};
        cr_assert_null(slurm_inventory_load(j, "slurm.json", NULL, 0, &ctl, &err), "%s",
                       files[i][0]);
        cr_assert_eq(err.kind, ERROR_INPUT, "%s", err.msg);
        char want[160];
        snprintf(want, sizeof want, "slurm.json: field '%s': a Slurm inventory takes its machines "
                 "from the controller", files[i][1]);
        cr_assert(strstr(err.msg, want), "%s", err.msg);
        cr_assert_null(ctl);
        cJSON_Delete(j);
    }
}

/* Regression: "partition": "" was taken as no partition, every node the controller lists,
 * without a word; it is refused, and leaving the field out still means every node. */
Test(slurm_inventory, an_empty_partition_is_refused)
{
    cJSON *j = cJSON_Parse("{\"name\": \"s\", \"backend\": \"slurm\", \"partition\": \"\"}");
    cr_assert_not_null(j);
    SlurmTarget t;
    Error err = {0};
    cr_assert_eq(slurm_target_from_json(j, "slurm.json", &t, &err), -1);
    cr_assert(strstr(err.msg, "slurm.json: field 'partition': expected a partition name, "
                              "found ''"),
              "%s", err.msg);
    cJSON_DeleteItemFromObject(j, "partition");
    cr_assert_eq(slurm_target_from_json(j, "slurm.json", &t, &err), 1, "%s", err.msg);
    cr_assert_str_eq(t.partition, "");
    cJSON_Delete(j);
}

/* Regression: a most under the first hold was taken, and the driver raised it in silence. */
Test(slurm_inventory, a_ceiling_retry_max_under_the_ceiling_retry_is_refused)
{
    refused("{\"ceiling_retry_s\": 600, \"ceiling_retry_max_s\": 300}",
            "slurm.json: slurm: field 'ceiling_retry_max_s': expected at least ceiling_retry_s "
            "(600 s, the first hold, which it caps as it doubles), found 300");
}
