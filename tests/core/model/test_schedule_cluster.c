/* core/model/schedule_cluster.c: the cluster a schedule object describes. */
#include <cJSON.h>
#include <criterion/criterion.h>
#include <string.h>

#include "core/model/schedule_cluster.h"

/* Regression: "stdin: machines[2]: field 'devices': expected the devices of the other small
 * machines, in the same order" named neither machine nor the devices either lists. */
Test(schedule_cluster, a_machine_listing_other_devices_than_its_type_names_both_machines)
{
    cJSON *root =
        cJSON_Parse("{\"machines\": ["
                    " {\"name\": \"a\", \"type\": \"big\", \"devices\": [{\"id\": \"cpu\"}]},"
                    " {\"name\": \"b\", \"type\": \"small\", \"devices\": [{\"id\": \"cpu\"}]},"
                    " {\"name\": \"c\", \"type\": \"small\","
                    "  \"devices\": [{\"id\": \"cpu\"}, {\"id\": \"gpu0\"}]}]}");
    cr_assert_not_null(root);
    Error e;
    cr_assert_null(schedule_cluster_from_json(root, "stdin", &e));
    cr_assert_str_eq(e.msg, "stdin: machines[2]: field 'devices': expected machine 'c' to list "
                            "the devices of type 'small' as machines[1] 'b' does (cpu), in that "
                            "order, found (cpu, gpu0)");
    cJSON_Delete(root);
}

Test(schedule_cluster, the_same_devices_in_another_order_are_refused)
{
    cJSON *root = cJSON_Parse(
        "{\"machines\": ["
        " {\"name\": \"a\", \"type\": \"t\", \"devices\": [{\"id\": \"cpu\"}, {\"id\": \"gpu0\"}]},"
        " {\"name\": \"b\", \"type\": \"t\", \"devices\": [{\"id\": \"gpu0\"}, {\"id\": "
        "\"cpu\"}]}]}");
    Error e;
    cr_assert_null(schedule_cluster_from_json(root, "stdin", &e));
    cr_assert(
        strstr(e.msg, "as machines[0] 'a' does (cpu, gpu0), in that order, found (gpu0, cpu)"),
        "%s", e.msg);
    cJSON_Delete(root);
}
