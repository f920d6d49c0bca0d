#include <criterion/criterion.h>
#include <cJSON.h>
#include <stdio.h>
#include <string.h>
#include <unistd.h>

#include "core/model/cluster.h"
#include "tests/support/low_memory.h"

static const char *LAB =
    "{\"name\": \"lab\", \"ssh\": {\"user\": \"ops\", \"port\": 2222, \"identity\": \"~/.ssh/k\","
    " \"known_hosts\": \"~/.ssh/kh\", \"connect_timeout_s\": 3},"
    " \"machine_types\": {\"g\": {\"bandwidth_gbps\": 1.5, \"devices\": ["
    "   {\"id\": \"cpu\", \"kind\": \"cpu\", \"threads\": 8},"
    "   {\"id\": \"gpu0\", \"kind\": \"gpu\", \"model\": \"K520\", \"max_inputs\": 1024}]},"
    "  \"c\": {\"bandwidth_gbps\": 10, \"devices\": [{\"id\": \"cpu\", \"kind\": \"cpu\"}]}},"
    " \"machines\": [{\"name\": \"g[0-1]\", \"host\": \"10.0.0.[10-11]\", \"type\": \"g\"},"
    "   {\"name\": \"node[08-10,20]\", \"host\": \"n[08-10,20].lab\", \"type\": \"c\", \"port\": 22,"
    "    \"user\": \"root\"}],"
    " \"trial\": {\"launch\": \"per-host\", \"command\": \"tunedeck-worker\"},"
    " \"custom\": {\"kept\": true}}";

static Cluster *parse(const char *text, Error *err)
{
    cJSON *j = cJSON_Parse(text);
    cr_assert_not_null(j, "test JSON must parse");
    Cluster *c = cluster_from_json(j, "lab.json", err);
    cJSON_Delete(j);
    return c;
}

Test(cluster, parses_types_devices_and_expands_host_ranges)
{
    Error err;
    Cluster *c = parse(LAB, &err);
    cr_assert_not_null(c, "%s", err.msg);
    cr_assert_eq(c->n_types, 2);
    cr_assert_eq(c->n_machines, 6);
    cr_assert_eq(c->n_devices, 2 * 2 + 4);
    cr_assert_str_eq(c->machines[0].name, "g0");
    cr_assert_str_eq(c->machines[1].host, "10.0.0.11");
    cr_assert_str_eq(c->machines[2].name, "node08");
    cr_assert_str_eq(c->machines[5].name, "node20");
    cr_assert_str_eq(c->machines[5].host, "n20.lab");
    cr_assert_eq(c->machines[5].port, 22);
    cr_assert_str_eq(c->machines[5].user, "root");
    cr_assert_str_eq(c->ssh.user, "ops");
    cr_assert_eq(c->ssh.port, 2222);
    cr_assert_float_eq(c->ssh.connect_timeout_s, 3.0, 1e-9);
    cr_assert_str_eq(c->trial.launch, "per-host");
    const DeviceSpec *d = cluster_device(c, 1, NULL);
    cr_assert_eq(d->kind, DEVICE_GPU);
    cr_assert_eq(d->max_inputs, 1024);
    cr_assert(cluster_machine_has_gpu(c, 0));
    cr_assert_not(cluster_machine_has_gpu(c, 3));
    char cls[96];
    cluster_device_class(c, 1, cls, sizeof cls);
    cr_assert_str_eq(cls, "K520");
    cluster_device_class(c, 4, cls, sizeof cls);
    cr_assert_str_eq(cls, "c/cpu");
    cluster_free(c);
}

Test(cluster, round_trips_through_json)
{
    Error err;
    Cluster *a = parse(LAB, &err);
    cr_assert_not_null(a, "%s", err.msg);
    cJSON *j = cluster_to_json(a);
    Cluster *b = cluster_from_json(j, "emitted", &err);
    cr_assert_not_null(b, "%s", err.msg);
    cJSON *j2 = cluster_to_json(b);
    cr_assert(cJSON_Compare(j, j2, 1), "emit(parse(emit(x))) must equal emit(x)");
    cr_assert_eq(b->n_machines, a->n_machines);
    for (size_t i = 0; i < a->n_machines; i++) {
        cr_assert_str_eq(a->machines[i].name, b->machines[i].name);
        cr_assert_str_eq(a->machines[i].host, b->machines[i].host);
    }
    cr_assert_not_null(cJSON_GetObjectItem(j2, "custom"), "unknown fields are carried through");
    cJSON_Delete(j);
    cJSON_Delete(j2);
    cluster_free(a);
    cluster_free(b);
}

/* Regression: "[::1]" in a host field was read as a range and refused, though the host
 * check's own error advised brackets for IPv6. It is one host, the bare address, for every
 * name a range gives (one host for all). */
Test(cluster, bracketed_ipv6_host_is_one_host)
{
    Error err;
    Cluster *c = parse("{\"name\": \"lab\", \"machine_types\": {\"t\": {\"bandwidth_gbps\": 1, "
                       "\"devices\": [{\"id\": \"cpu\", \"kind\": \"cpu\"}]}}, \"machines\": "
                       "[{\"name\": \"v[1-2]\", \"host\": \"[::1]\", \"type\": \"t\", "
                       "\"port\": 2222}, {\"name\": \"w\", \"host\": \"[fd00::7]\", "
                       "\"type\": \"t\"}]}",
                       &err);
    cr_assert_not_null(c, "%s", err.msg);
    cr_assert_eq(c->n_machines, 3);
    cr_assert_str_eq(c->machines[0].host, "::1");
    cr_assert_str_eq(c->machines[1].host, "::1");
    cr_assert_eq(c->machines[1].port, 2222);
    cr_assert_str_eq(c->machines[2].host, "fd00::7");
    cluster_free(c);
}

/* Each rejection names the place and what was expected. */
static void rejects(const char *text, const char *needle)
{
    Error err = {0};
    Cluster *c = parse(text, &err);
    cr_assert_null(c, "expected a rejection containing '%s'", needle);
    cr_assert(strstr(err.msg, needle), "message '%s' lacks '%s'", err.msg, needle);
    cr_assert(strstr(err.msg, "lab.json"), "message '%s' lacks the file name", err.msg);
}

#define TYPES "\"machine_types\": {\"t\": {\"bandwidth_gbps\": 1, \"devices\": [{\"id\": \"cpu\", \"kind\": \"cpu\"}]}}"

Test(cluster, rejects_every_bad_field)
{
    rejects("[]", "expected a JSON object");
    rejects("{\"name\": \"x\", \"machine_types\": {}, \"machines\": []}", "machine_types");
    rejects("{\"name\": \"x\", " TYPES ", \"machines\": []}", "at least one machine");
    rejects("{\"name\": \"x\", " TYPES ", \"machines\": [{\"name\": \"a\", \"host\": \"a\", "
            "\"type\": \"zz\"}]}",
            "unknown machine type 'zz'");
    rejects("{\"name\": \"x\", " TYPES ", \"machines\": [{\"name\": \"n[]\", \"host\": \"a\", "
            "\"type\": \"t\"}]}",
            "empty brackets");
    rejects("{\"name\": \"x\", \"machine_types\": {\"t\": {\"bandwidth_gbps\": \"fast\", "
            "\"devices\": [{\"id\": \"cpu\", \"kind\": \"cpu\"}]}}, \"machines\": [{\"name\": "
            "\"a\", \"host\": \"a\", \"type\": \"t\"}]}",
            "field 'bandwidth_gbps': expected a number, found a string");
    rejects("{\"name\": \"x\", \"machine_types\": {\"t\": {\"bandwidth_gbps\": 1, "
            "\"devices\": [{\"id\": \"cpu\", \"kind\": \"tpu\"}]}}, \"machines\": [{\"name\": "
            "\"a\", \"host\": \"a\", \"type\": \"t\"}]}",
            "field 'kind'");
    rejects("{\"name\": \"x\", \"machine_types\": {\"t\": {\"bandwidth_gbps\": 1, "
            "\"devices\": [{\"id\": \"cpu\", \"kind\": \"cpu\"}, {\"id\": \"cpu\", \"kind\": "
            "\"cpu\"}]}}, \"machines\": [{\"name\": \"a\", \"host\": \"a\", \"type\": \"t\"}]}",
            "appears twice");
    rejects("{\"name\": \"x\", " TYPES ", \"machines\": [{\"name\": \"a[1-3]\", \"host\": "
            "\"h[1-2]\", \"type\": \"t\"}]}",
            "field 'host'");
    rejects("{\"name\": \"x\", " TYPES ", \"machines\": [{\"name\": \"a\", \"host\": \"a\", "
            "\"type\": \"t\"}, {\"name\": \"a\", \"host\": \"b\", \"type\": \"t\"}]}",
            "appears twice");
    rejects("{\"name\": \"x\", " TYPES ", \"machines\": [{\"name\": \"a\", \"host\": \"a\", "
            "\"type\": \"t\"}], \"trial\": {\"launch\": \"carrier-pigeon\"}}",
            "field 'launch'");
    rejects("{\"name\": \"x\", " TYPES ", \"machines\": [{\"name\": \"a\", \"host\": \"a\", "
            "\"type\": \"t\"}], \"trial\": {\"ranks\": \"per-gpu\"}}",
            "field 'ranks': expected \"per-host\" or \"per-device\"");
    rejects("{\"name\": \"x\", " TYPES ", \"machines\": [{\"name\": \"a\", \"host\": \"a\", "
            "\"type\": \"t\"}], \"trial\": {\"master_port\": 70000}}",
            "field 'master_port'");
    /* the walkthrough's item: a misspelt key ran one command per machine, not per device */
    rejects("{\"name\": \"x\", " TYPES ", \"machines\": [{\"name\": \"a\", \"host\": \"a\", "
            "\"type\": \"t\"}], \"trial\": {\"rank\": \"per-device\"}}",
            "trial: field 'rank': unknown; expected launch, command, launch_host, ranks or "
            "master_port");
    rejects("{\"name\": \"x\", " TYPES ", \"machines\": {\"name\": \"a\"}}",
            "field 'machines'");
    rejects("{\"name\": \"x\", " TYPES ", \"machines\": [{\"name\": \"a\", \"host\": "
            "\"h[1-3]\", \"type\": \"t\"}]}",
            "field 'host': expected 1 host for machine 'a', found 3");
    rejects("{\"name\": \"x\", " TYPES ", \"machines\": [{\"name\": \"a\", \"host\": \"a\", "
            "\"type\": \"t\"}], \"job_launch\": \"everywhere\"}",
            "field 'job_launch': expected \"first-host\" or \"per-host\", found \"everywhere\"");
    /* Regression (a newcomer's walkthrough): the helper's host_ranks({node_rank}) pattern
     * without "job_launch": "per-host" started only the first host's ranks, and rank 0 waited
     * for the others until the stop timeout's SIGKILL. */
    rejects("{\"name\": \"x\", " TYPES ", \"machines\": [{\"name\": \"a[1-2]\", \"host\": "
            "\"a[1-2]\", \"type\": \"t\"}], "
            "\"job_command\": \"python3 train.py --node-rank {node_rank}\"}",
            "field 'job_command': {node_rank} is always 0 when the command runs on the "
            "placement's first host only");
    /* one machine: no placement spans hosts, and {node_rank} is 0 either way */
    Error err;
    Cluster *one = parse("{\"name\": \"x\", " TYPES ", \"machines\": [{\"name\": \"a\", "
                         "\"host\": \"a\", \"type\": \"t\"}], \"job_command\": "
                         "\"python3 train.py --node-rank {node_rank}\"}",
                         &err);
    cr_assert_not_null(one, "%s", err.msg);
    cluster_free(one);
}

/* Regression: a misspelt ssh key ("identiy", "knwon_hosts") was ignored, and every host was
 * reached with the default identity or known_hosts. It is refused by name, as bad input (exit
 * 3), the way the trial block's are; a password there keeps its own advice. */
Test(cluster, an_unknown_key_of_the_ssh_block_is_refused_by_name)
{
    const char *misspelt[] = {"identiy", "knwon_hosts", "User", "timeout"};
    for (size_t i = 0; i < sizeof misspelt / sizeof *misspelt; i++) {
        char text[512], want[256];
        snprintf(text, sizeof text,
                 "{\"name\": \"x\", \"ssh\": {\"user\": \"ops\", \"%s\": \"~/.ssh/k\"}, " TYPES
                 ", \"machines\": [{\"name\": \"a\", \"host\": \"a\", \"type\": \"t\"}]}",
                 misspelt[i]);
        snprintf(want, sizeof want,
                 "lab.json: ssh: field '%s': unknown; expected user, port, identity, "
                 "known_hosts or connect_timeout_s",
                 misspelt[i]);
        rejects(text, want);
        Error err = {0};
        cr_assert_null(parse(text, &err));
        cr_assert_eq(err.kind, ERROR_INPUT, "%s", err.msg);
    }
    Error err = {0};
    Cluster *c = parse("{\"name\": \"x\", \"ssh\": {\"user\": \"ops\", \"port\": 22, "
                       "\"identity\": \"~/.ssh/k\", \"known_hosts\": \"~/.ssh/kh\", "
                       "\"connect_timeout_s\": 5}, " TYPES
                       ", \"machines\": [{\"name\": \"a\", \"host\": \"a\", \"type\": \"t\"}]}",
                       &err);
    cr_assert_not_null(c, "every key of the ssh block: %s", err.msg);
    cluster_free(c);
    /* The password check comes first: a secret is never called a mere unknown key. */
    Error secret = {0};
    cJSON *ssh = cJSON_Parse("{\"identiy\": \"k\", \"password\": \"hunter2\"}");
    cr_assert_eq(inventory_ssh_keys_check(ssh, "lab.json", &secret), -1);
    cr_assert(strstr(secret.msg, "lab.json: ssh: field 'password': tunedeck never stores"), "%s",
              secret.msg);
    cr_assert_eq(secret.kind, ERROR_INPUT);
    cJSON_Delete(ssh);
}

/* A password field was ignored in silence: the operator thought it used, and the file held
 * a secret tunedeck never reads. Every place one could be written is refused. */
Test(cluster, a_password_or_passphrase_field_is_refused_wherever_it_is)
{
    rejects("{\"name\": \"x\", \"ssh\": {\"user\": \"ops\", \"password\": \"hunter2\"}, " TYPES
            ", \"machines\": [{\"name\": \"a\", \"host\": \"a\", \"type\": \"t\"}]}",
            "lab.json: ssh: field 'password': tunedeck never stores passwords");
    rejects("{\"name\": \"x\", " TYPES ", \"machines\": [{\"name\": \"a\", \"host\": \"a\", "
            "\"type\": \"t\"}, {\"name\": \"b\", \"type\": \"t\", \"Password\": \"x\"}]}",
            "lab.json: machines[1]: field 'Password'");
    rejects("{\"name\": \"x\", \"password\": \"x\", " TYPES ", \"machines\": [{\"name\": "
            "\"a\", \"type\": \"t\"}]}",
            "lab.json: field 'password': tunedeck never stores passwords or passphrases; remove "
            "it and log in with a key (ssh.identity) or an ssh-agent");
    rejects("{\"name\": \"x\", \"ssh\": {\"passphrase\": \"x\"}, " TYPES
            ", \"machines\": [{\"name\": \"a\", \"type\": \"t\"}]}",
            "lab.json: ssh: field 'passphrase'");
    /* An unknown top-level field is kept, a secret inside one too would be. */
    rejects("{\"name\": \"x\", \"custom\": {\"login\": {\"password\": \"x\"}}, " TYPES
            ", \"machines\": [{\"name\": \"a\", \"type\": \"t\"}]}",
            "lab.json: custom.login: field 'password'");
    Error err = {0};
    cJSON *j = cJSON_Parse("{\"name\": \"s\", \"backend\": \"slurm\", \"ssh\": "
                           "{\"password\": \"x\"}}");
    cr_assert_eq(inventory_refuse_secrets(j, "slurm.json", &err), -1);
    cr_assert(strstr(err.msg, "slurm.json: ssh: field 'password'"), "%s", err.msg);
    cr_assert_eq(err.kind, ERROR_INPUT);
    cJSON_Delete(j);
    /* A password as a value (a trial command's argument, say) is not a stored one. */
    Error ok = {0};
    Cluster *c = parse("{\"name\": \"password\", " TYPES ", \"machines\": [{\"name\": \"a\", "
                       "\"type\": \"t\"}], \"trial\": {\"command\": \"x --password-file f\"}}",
                       &ok);
    cr_assert_not_null(c, "%s", ok.msg);
    cluster_free(c);
}

Test(cluster, load_names_the_file_and_position)
{
    Error err = {0};
    cr_assert_null(cluster_load("no/such/inventory.json", &err));
    cr_assert(strstr(err.msg, "no/such/inventory.json"), "%s", err.msg);
    char path[] = "/tmp/tunedeck-test-XXXXXX";
    int fd = mkstemp(path);
    cr_assert(fd >= 0);
    const char *bad = "{\n  \"name\": \"x\",\n  \"machines\": [,]\n}\n";
    cr_assert_eq(write(fd, bad, strlen(bad)), (ssize_t)strlen(bad));
    close(fd);
    cr_assert_null(cluster_load(path, &err));
    cr_assert(strstr(err.msg, path) && strstr(err.msg, ":3:"), "%s", err.msg);
    unlink(path);
}

Test(cluster, example_inventory_loads)
{
    Error err;
    Cluster *c = cluster_load(TUNEDECK_SOURCE_DIR "/examples/lab-cluster.json", &err);
    cr_assert_not_null(c, "%s", err.msg);
    cr_assert_eq(c->n_machines, 5);
    cluster_free(c);
}

Test(cluster, an_empty_device_id_is_refused)
{
    rejects("{\"name\": \"x\", \"machine_types\": {\"t\": {\"bandwidth_gbps\": 1, \"devices\": "
            "[{\"id\": \"\", \"kind\": \"cpu\"}]}}, \"machines\": [{\"name\": \"n\", \"type\": \"t\"}]}",
            "devices[0]: field 'id': expected a device id");
}

/* Regression: "host": "" (a template's variable left empty) sent tunedeck to the machine's
 * name, and "user": "" to the ssh block's user, without a word. */
Test(cluster, an_empty_host_or_user_of_a_machine_is_refused)
{
    rejects("{\"name\": \"x\", " TYPES ", \"machines\": [{\"name\": \"a\", \"host\": \"\", "
            "\"type\": \"t\"}]}",
            "machines[0]: field 'host': expected a host name or address, found '' (leave the "
            "field out to use the machine's name)");
    rejects("{\"name\": \"x\", " TYPES ", \"machines\": [{\"name\": \"a\", \"user\": \"\", "
            "\"type\": \"t\"}]}",
            "machines[0]: field 'user': expected a user name, found '' (leave the field out to "
            "use the ssh block's)");
}

Test(cluster, machine_names_are_checked_whether_or_not_host_is_set)
{
    rejects("{\"name\": \"x\", " TYPES ", \"machines\": [{\"name\": \"a;touch x\", \"host\": "
            "\"h1\", \"type\": \"t\"}]}",
            "machine 'a;touch x': unexpected character ';'");
    rejects("{\"name\": \"x\", " TYPES ", \"machines\": [{\"name\": \"$(id)\", \"type\": \"t\"}]}",
            "unexpected character '$'");
    rejects("{\"name\": \"x\", " TYPES ", \"machines\": [{\"name\": \"-oProxyCommand=x\", "
            "\"host\": \"h\", \"type\": \"t\"}]}",
            "not starting with '-'");
    /* a multi-byte character was shown as '?', then as its first byte ('\xC3'); now whole,
     * with its code point, as the host check names it */
    rejects("{\"name\": \"x\", " TYPES
            ", \"machines\": [{\"name\": \"n\u00e9\", \"type\": \"t\"}]}",
            "machine 'n\xc3\xa9': unexpected character '\xc3\xa9' (U+00E9) at 2");
}

Test(cluster, job_command_placeholders_are_checked_at_load)
{
#define ONE_MACHINE "\"machines\": [{\"name\": \"a\", \"host\": \"a\", \"type\": \"t\"}]"
    rejects("{\"name\": \"x\", " TYPES ", " ONE_MACHINE ", \"job_command\": \"run {gpu}\"}",
            "field 'job_command': unknown placeholder '{gpu}'");
    rejects("{\"name\": \"x\", " TYPES ", " ONE_MACHINE
            ", \"job_command\": \"run --hosts '{hosts}'\"}",
            "placeholder '{hosts}' inside single quotes");
    rejects("{\"name\": \"x\", " TYPES ", " ONE_MACHINE
            ", \"job_command\": \"run \\\"--resume={resume}\\\"\"}",
            "placeholder '{resume}' inside double quotes");
}

/* ---- out of memory (core/base/error.h's policy: report, never abort) ---- */

static int add_machines_until_refused(void *ud)
{
    (void)ud;
    Cluster *c = cluster_new("big");
    DeviceSpec cpu = {.id = "cpu", .kind = DEVICE_CPU};
    MachineType t = {.name = "t", .bandwidth_gbps = 1, .devices = &cpu, .n_devices = 1};
    if (!c || cluster_add_type(c, &t, NULL) != 0)
        return 10;
    Error err = {0};
    for (size_t i = 0; i < 100000000; i++) {
        char name[32];
        snprintf(name, sizeof name, "m%zu", i);
        if (cluster_add_machine(c, name, NULL, 0, &err) < 0) {
            /* Refused: the machines added so far are all still there, unchanged. */
            if (!strstr(err.msg, "out of memory") || c->n_machines != i ||
                i == 0)
                return 11;
            for (size_t k = 0; k < i; k += i / 7 + 1) {
                snprintf(name, sizeof name, "m%zu", k);
                if (strcmp(c->machines[k].name, name) != 0)
                    return 12;
            }
            cluster_free(c);
            return 0;
        }
    }
    return 13; /* the limit never bit */
}

Test(cluster, adding_machines_past_the_memory_limit_is_refused_not_aborted)
{
    if (!low_memory_supported())
        cr_skip_test("RLIMIT_AS does not work under AddressSanitizer");
    cr_assert_eq(low_memory_run(16 << 20, add_machines_until_refused, NULL), 0);
}

static int parse_huge_inventory(void *text)
{
    cJSON *j = cJSON_Parse(text);
    if (!j)
        return 20;
    Error err = {0};
    Cluster *c = cluster_from_json(j, "huge.json", &err);
    cJSON_Delete(j);
    if (c)
        return 21;
    return strstr(err.msg, "huge.json: machines[") && strstr(err.msg, "out of memory") ? 0 : 22;
}

Test(cluster, an_inventory_too_large_for_memory_is_an_error_naming_the_entry)
{
    if (!low_memory_supported())
        cr_skip_test("RLIMIT_AS does not work under AddressSanitizer");
    /* Each entry is within HOSTRANGE_MAX; together they need hundreds of megabytes. */
    char text[4096];
    int len = snprintf(text, sizeof text,
                       "{\"machine_types\": {\"t\": {\"bandwidth_gbps\": 1, \"devices\": "
                       "[{\"id\": \"cpu\", \"kind\": \"cpu\"}]}}, \"machines\": [");
    for (int i = 0; i < 10; i++)
        len += snprintf(text + len, sizeof text - (size_t)len,
                        "%s{\"name\": \"r%d-n[0-99999]\", \"type\": \"t\"}", i ? ", " : "", i);
    snprintf(text + len, sizeof text - (size_t)len, "]}");
    cr_assert_eq(low_memory_run(32 << 20, parse_huge_inventory, text), 0);
}

Test(cluster, a_missing_or_bad_inventory_is_marked_as_bad_input)
{
    Error e;
    cr_assert_null(cluster_load("/nonexistent/cluster.json", &e));
    cr_assert_eq(e.kind, ERROR_INPUT, "%s", e.msg);
    cJSON *bad = cJSON_Parse("{\"name\": 3}");
    cr_assert_null(cluster_from_json(bad, "x.json", &e));
    cr_assert_eq(e.kind, ERROR_INPUT, "%s", e.msg);
    cJSON_Delete(bad);
}

Test(cluster, every_flat_device_is_found_on_its_own_machine)
{
    Error err;
    Cluster *c = parse(LAB, &err);
    cr_assert_not_null(c, "%s", err.msg);
    for (size_t m = 0; m < c->n_machines; m++) {
        const MachineType *t = cluster_machine_type(c, m);
        for (size_t d = 0; d < t->n_devices; d++) {
            size_t found = 99;
            const DeviceSpec *ds = cluster_device(c, c->machines[m].first_device + d, &found);
            cr_assert_eq(ds, &t->devices[d], "machine %zu device %zu", m, d);
            cr_assert_eq(found, m);
        }
    }
    size_t untouched = 99;
    cr_assert_null(cluster_device(c, c->n_devices, &untouched));
    cr_assert_eq(untouched, 99, "a device past the end names no machine");
    cluster_free(c);
}

Test(cluster, a_user_name_of_256_bytes_is_kept_whole)
{
    char name[257], text[1024];
    memset(name, 'u', 256);
    name[256] = 0;
    snprintf(text, sizeof text,
             "{\"name\": \"ad\", \"ssh\": {\"user\": \"%s\"},"
             " \"machine_types\": {\"c\": {\"bandwidth_gbps\": 1,"
             " \"devices\": [{\"id\": \"cpu\", \"kind\": \"cpu\"}]}},"
             " \"machines\": [{\"name\": \"m\", \"type\": \"c\", \"user\": \"%s\"}]}",
             name, name);
    Error err;
    Cluster *c = parse(text, &err);
    cr_assert_not_null(c, "%s", err.msg);
    cr_assert_str_eq(c->ssh.user, name);
    cr_assert_str_eq(c->machines[0].user, name);
    cluster_free(c);
}

/* launch_host matters to the single launcher alone: loading never refuses it (a journal's
 * inventory with a stale value still resumes), the check says what is wrong when asked. */
Test(cluster, launch_host_is_checked_for_the_single_launcher_only)
{
    Error err = {0};
    cJSON *j = cJSON_Parse("{\"name\": \"x\", " TYPES ", \"machines\": [{\"name\": \"a\", "
                           "\"host\": \"a\", \"type\": \"t\"}], \"trial\": {\"launch\": "
                           "\"single\", \"launch_host\": \"b\"}}");
    cr_assert_not_null(j);
    Cluster *c = cluster_from_json(j, "inv.json", &err);
    cJSON_Delete(j);
    cr_assert_not_null(c, "%s", err.msg);
    cr_assert_eq(cluster_check_launch_host(c, "inv.json", &err), -1);
    cr_assert(strstr(err.msg, "inv.json: trial: field 'launch_host': expected the name of a "
                              "machine, found 'b'"),
              "%s", err.msg);
    snprintf(c->trial.launch_host, sizeof c->trial.launch_host, "a");
    cr_assert_eq(cluster_check_launch_host(c, "inv.json", &err), 0, "%s", err.msg);
    cluster_free(c);
}

/* Regression: cJSON keeps both copies of a key and reads the first, so a device pasted twice
 * and edited in its second copy was read from the first without a word. */
Test(cluster, an_inventory_with_a_key_twice_is_refused_naming_file_path_and_key)
{
    char path[] = "/tmp/tunedeck-test-XXXXXX";
    int fd = mkstemp(path);
    cr_assert(fd >= 0);
    const char *dup =
        "{\"name\": \"lab\", \"machine_types\": {\"g\": {\"bandwidth_gbps\": 1, \"devices\": ["
        "{\"id\": \"cpu\", \"kind\": \"cpu\"}, {\"id\": \"gpu0\", \"kind\": \"gpu\", "
        "\"model\": \"K520\", \"model\": \"T4\"}]}},"
        " \"machines\": [{\"name\": \"g0\", \"host\": \"h\", \"type\": \"g\"}],"
        " \"trial\": {\"launch\": \"local\", \"command\": \"true\"}}";
    cr_assert_eq(write(fd, dup, strlen(dup)), (ssize_t)strlen(dup));
    close(fd);
    Error err = {0};
    cr_assert_null(cluster_load(path, &err));
    char want[256];
    snprintf(want, sizeof want,
             "%s: machine_types.g.devices[1]: key \"model\" appears twice; expected each key "
             "once per object",
             path);
    cr_assert_str_eq(err.msg, want);
    cr_assert_eq(err.kind, ERROR_INPUT); /* exit status 3, like any bad inventory */
    unlink(path);
}

/* A misspelt key of a machine, a machine type or a device was ignored and its default used:
 * "hots" sent tunedeck to the machine's name instead of its address, "max_input" dropped a
 * GPU's limit, with nothing said. Each is refused naming the key, like the ssh block's. */
Test(cluster, an_unknown_key_of_a_machine_type_or_device_is_refused_by_name)
{
    rejects("{\"name\": \"x\", " TYPES
            ", \"machines\": [{\"name\": \"a\", \"hots\": \"10.0.0.1\", \"type\": \"t\"}]}",
            "lab.json: machines[0]: field 'hots': unknown; expected name, host, type, port or "
            "user");
    rejects("{\"name\": \"x\", \"machine_types\": {\"t\": {\"bandwith_gbps\": 2, "
            "\"bandwidth_gbps\": 1, \"devices\": [{\"id\": \"cpu\", \"kind\": \"cpu\"}]}}, "
            "\"machines\": [{\"name\": \"a\", \"type\": \"t\"}]}",
            "lab.json: machine_types.t: field 'bandwith_gbps': unknown; expected "
            "bandwidth_gbps or devices");
    rejects("{\"name\": \"x\", \"machine_types\": {\"t\": {\"bandwidth_gbps\": 1, \"devices\": "
            "[{\"id\": \"gpu0\", \"kind\": \"gpu\", \"max_input\": 64}]}}, "
            "\"machines\": [{\"name\": \"a\", \"type\": \"t\"}]}",
            "lab.json: machine_types.t.devices[0]: field 'max_input': unknown; expected id, "
            "kind, threads, model or max_inputs");
    /* What cluster_to_json writes reads back: every known key is accepted. */
    Error err = {0};
    Cluster *c = parse(LAB, &err);
    cr_assert_not_null(c, "%s", err.msg);
    cJSON *j = cluster_to_json(c);
    Cluster *back = cluster_from_json(j, "lab.json", &err);
    cr_assert_not_null(back, "%s", err.msg);
    cluster_free(back), cluster_free(c), cJSON_Delete(j);
}

static void write_file(const char *path, const char *text, size_t len)
{
    FILE *f = fopen(path, "wb");
    cr_assert_not_null(f);
    cr_assert_eq(fwrite(text, 1, len, f), len);
    fclose(f);
}

/* cJSON reads bytes that are not UTF-8 and a \u0000 escape without a word: the first went on
 * to the journal and `tune --json` as they were (a strict reader then refused the whole
 * output), the second cut the string ("a\u0000b" was "a"). Both are refused at load, naming
 * the file, line and column; an escaped backslash before "u0000" is text and is kept. */
Test(cluster, a_file_with_bytes_that_are_not_utf8_or_a_nul_escape_is_refused_with_its_position)
{
    char path[] = "/tmp/tunedeck-test-XXXXXX";
    int fd = mkstemp(path);
    cr_assert(fd >= 0);
    close(fd);
    const char *latin1 = "{\"name\": \"x\",\n \"custom\": \"caf\xe9\"}";
    write_file(path, latin1, strlen(latin1));
    Error err = {0};
    cr_assert_null(cluster_load(path, &err));
    cr_assert(strstr(err.msg, ":2:16: expected UTF-8 JSON text, found a byte that is not UTF-8"),
              "%s", err.msg);
    cr_assert(strstr(err.msg, path), "%s", err.msg);
    const char *nul = "{\"name\": \"x\\u0000y\"}";
    write_file(path, nul, strlen(nul));
    cr_assert_null(cluster_load(path, &err));
    cr_assert(strstr(err.msg, ":1:12: expected UTF-8 JSON text, found a \\u0000 escape"), "%s",
              err.msg);
    /* Valid UTF-8 and an escaped backslash are kept; the inventory is then read as usual. */
    const char *fine = "{\"name\": \"caf\xc3\xa9 \\\\u0000\", \"machines\": 1}";
    write_file(path, fine, strlen(fine));
    cr_assert_null(cluster_load(path, &err));
    cr_assert(strstr(err.msg, "machine_types"), "%s", err.msg);
    unlink(path);
}

/* Regression: a misspelt inventory key ("job_comand", a Slurm inventory's "partiton") was
 * carried in extra without a word, and the field meant left at its default (no job command,
 * Slurm's default partition); tune warned only of a job file's. The same warning now, for the
 * file's object or a Cluster's extra; a Slurm inventory's own keys are no slip. */
Test(cluster, a_misspelt_inventory_key_is_warned_with_the_key_meant)
{
    char out[256];
    cJSON *o = cJSON_Parse("{\"name\": \"s\", \"backend\": \"slurm\", \"partiton\": \"gpu\"}");
    cr_assert_eq(inventory_misspelt_warning(o, "slurm.json", out, sizeof out), 1);
    cr_assert_str_eq(out, "slurm.json: key 'partiton' is not one tunedeck reads; did you mean "
                          "'partition'?");
    cJSON_Delete(o);
    o = cJSON_Parse("{\"name\": \"s\", \"backend\": \"slurm\", \"partition\": \"gpu\", \"login\": "
                    "\"l\", \"slurm\": {}, \"bandwidth_gbps\": 10, \"job_command\": \"x\"}");
    cr_assert_eq(inventory_misspelt_warning(o, "slurm.json", out, sizeof out), 0, "%s", out);
    cJSON_Delete(o);
    Error err;
    char text[4096];
    snprintf(text, sizeof text, "%.*s, \"job_comand\": \"train\"}", (int)strlen(LAB) - 1, LAB);
    o = cJSON_Parse(text);
    cr_assert_not_null(o, "%s", text);
    Cluster *c = cluster_from_json(o, "lab.json", &err);
    cr_assert_not_null(c, "%s", err.msg);
    cr_assert_eq(inventory_misspelt_warning(c->extra, "lab.json", out, sizeof out), 1);
    cr_assert(strstr(out, "key 'job_comand' is not one tunedeck reads; did you mean "
                          "'job_command'?"),
              "%s", out);
    cluster_free(c);
    cJSON_Delete(o);
}

/* Regression: a misspelt "backend" was read as an SSH inventory, and `hosts --cluster` said
 * only "field 'machine_types' is missing" (tune, through the Slurm reader, named the field). */
Test(cluster, a_backend_that_is_neither_ssh_nor_slurm_is_named)
{
    rejects("{\"name\": \"x\", \"backend\": \"slurmm\", \"partition\": \"debug\"}",
            "lab.json: field 'backend': expected \"ssh\" or \"slurm\", found \"slurmm\"");
    rejects("{\"name\": \"x\", \"backend\": 1, " TYPES
            ", \"machines\": [{\"name\": \"a\", \"type\": \"t\"}]}",
            "lab.json: field 'backend'");
    Error err = {0};
    Cluster *c = parse("{\"name\": \"x\", \"backend\": \"ssh\", " TYPES
                       ", \"machines\": [{\"name\": \"a\", \"type\": \"t\"}]}",
                       &err);
    cr_assert_not_null(c, "%s", err.msg);
    cluster_free(c);
}
