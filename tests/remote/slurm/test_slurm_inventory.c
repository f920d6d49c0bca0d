#include <criterion/criterion.h>
#include <cJSON.h>
#include <string.h>

#include "remote/slurm/slurm_inventory.h"

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
