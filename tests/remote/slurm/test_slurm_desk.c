#include <criterion/criterion.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "core/base/clock.h"
#include "core/base/evloop.h"
#include "remote/slurm/slurm_desk.h"
#include "tests/support/ssh_hermetic.h"

Test(slurm_desk, recognises_slurms_refusals_for_want_of_rights)
{
    cr_assert(slurm_desk_is_refusal("scontrol exited with status 1: slurm_update error: "
                                    "Invalid user id"));
    cr_assert(slurm_desk_is_refusal("slurm_update error: Access/permission denied"));
    cr_assert(!slurm_desk_is_refusal("slurm_update error: Invalid node name specified"));
    cr_assert(!slurm_desk_is_refusal("Unable to contact slurm controller (connect failure)"));
}

Test(slurm_desk, refuses_a_bad_node_name_or_reason_before_asking_slurm)
{
    SlurmCtlOptions o = {.ssh_config = TEST_SSH_CONFIG, .timeout_s = 2};
    Error e;
    SlurmCtl *c = slurm_ctl_new(&o, &e);
    SlurmDesk *d = slurm_desk_new(c, NULL, 8);
    cr_assert_eq(slurm_desk_update_node(d, "n1;reboot", 1, NULL, &e), -1);
    cr_assert(strstr(e.msg, "expected a node name"), "%s", e.msg);
    cr_assert_eq(slurm_desk_update_node(d, "n1", 1, "bad\x1b[2J", &e), -1);
    cr_assert(strstr(e.msg, "printable"), "%s", e.msg);
    cr_assert_eq(slurm_desk_updating(d), 0);
    cr_assert_eq(slurm_desk_update_node(d, "n1", 1, "fan", &e), 0);
    cr_assert_eq(slurm_desk_update_node(d, "n2", 1, "fan", &e), -1, "one at a time");
    cr_assert(strstr(e.msg, "drain n1 is still running"), "%s", e.msg);
    cr_assert_eq(slurm_ctl_calls(c), 0, "nothing asked until the loop steps the desk");
    slurm_desk_free(d);
    slurm_ctl_free(c);
}

static size_t desk_pollfds(void *ctx, struct pollfd *fds, size_t cap, int64_t *deadline_ms)
{
    return slurm_desk_pollfds(ctx, fds, cap, deadline_ms);
}

static void desk_step(void *ctx, const struct pollfd *fds, size_t n, int64_t now_ms)
{
    slurm_desk_step(ctx, fds, n, now_ms);
}

static int desk_down(void *ctx)
{
    return slurm_desk_down_since_ms(ctx) != 0;
}

/* Without Slurm at all the first round fails: said once, as the controller not answering. */
Test(slurm_desk, a_controller_that_does_not_answer_is_said_once)
{
    setenv("PATH", "/nonexistent", 1);
    SlurmCtlOptions o = {.ssh_config = TEST_SSH_CONFIG, .timeout_s = 2};
    Error e;
    SlurmCtl *c = slurm_ctl_new(&o, &e);
    SlurmDesk *d = slurm_desk_new(c, NULL, 8);
    evloop_run_source(desk_pollfds, desk_step, d, desk_down, d, clock_now_ms() + 10000);
    cr_assert_gt(slurm_desk_down_since_ms(d), 0);
    char msg[512];
    int bad = 0;
    cr_assert_eq(slurm_desk_take_outcome(d, msg, sizeof msg, &bad), 1);
    cr_assert(bad);
    cr_assert(strstr(msg, "the controller does not answer") && strstr(msg, "squeue"), "%s", msg);
    cr_assert_eq(slurm_desk_take_outcome(d, msg, sizeof msg, &bad), 0, "said once");
    cr_assert(strstr(slurm_desk_last_error(d), "squeue"));
    slurm_desk_free(d);
    slurm_ctl_free(c);
}

static int first_round(void *ctx)
{
    SlurmDesk *d = ctx;
    return slurm_watch_rounds(slurm_desk_watch(d)) >= 1 && !slurm_watch_busy(slurm_desk_watch(d));
}

static int round_after_update(void *ctx)
{
    SlurmDesk *d = ctx;
    return slurm_watch_rounds(slurm_desk_watch(d)) >= 2 && !slurm_watch_busy(slurm_desk_watch(d));
}

static void fake_command(const char *dir, const char *name, const char *body)
{
    char path[256];
    snprintf(path, sizeof path, "%s/%s", dir, name);
    FILE *f = fopen(path, "w");
    cr_assert_not_null(f);
    fprintf(f, "#!/bin/sh\n%s\n", body);
    fclose(f);
    chmod(path, 0755);
}

/* A fake squeue prints its file with the mark the watch asked for after each row (the part
 * of -o's format after its last '|'), as Slurm does (slurm_queue.h). */
#define SQUEUE_MARKS                                                                       \
    "m=; while [ $# -gt 0 ]; do [ \"$1\" = -o ] && m=\"${2##*|}\"; shift; done; "      \
    "exec /bin/sed \"s/\\$/|$m/\" "

/* The operator's drain goes through, and the next round (2 s after the last) reads the node
 * table though it is younger than the watch's 10 s: the panel shows the node drained at once.
 * Fakes first on PATH: sinfo prints DIR/nodes.txt (the captured busy cluster, n4 idle), and
 * scontrol puts the captured table with n4 drained there, as Slurm would. */
Test(slurm_desk, a_drain_that_went_through_is_shown_at_the_next_round)
{
    char dir[] = "/tmp/td-slurmdesk.XXXXXX";
    cr_assert_not_null(mkdtemp(dir));
    char body[768];
    const char *fx = TUNEDECK_SOURCE_DIR "/tests/fixtures/slurm";
    snprintf(body, sizeof body, "exec /bin/cat '%s/nodes.txt'", dir);
    fake_command(dir, "sinfo", body);
    snprintf(body, sizeof body, SQUEUE_MARKS "'%s/squeue-22.05.txt'", fx);
    fake_command(dir, "squeue", body);
    snprintf(body, sizeof body, "/bin/cp '%s/sinfo-22.05.txt' '%s/nodes.txt'", fx, dir);
    fake_command(dir, "scontrol", body);
    char cmd[768];
    snprintf(cmd, sizeof cmd, "/bin/cp '%s/sinfo-22.05-busy.txt' '%s/nodes.txt'", fx, dir);
    cr_assert_eq(system(cmd), 0);
    setenv("PATH", dir, 1);
    SlurmCtlOptions o = {.ssh_config = TEST_SSH_CONFIG, .timeout_s = 10};
    Error e;
    SlurmCtl *c = slurm_ctl_new(&o, &e);
    SlurmDesk *d = slurm_desk_new(c, NULL, 16);
    evloop_run_source(desk_pollfds, desk_step, d, first_round, d, clock_now_ms() + 10000);
    cr_assert_str_eq(slurm_watch_nodes(slurm_desk_watch(d))->v[3].state_raw, "idle");
    cr_assert_eq(slurm_desk_update_node(d, "n4", 1, "fan", &e), 0, "%s", e.msg);
    evloop_run_source(desk_pollfds, desk_step, d, round_after_update, d, clock_now_ms() + 20000);
    const SlurmWatch *w = slurm_desk_watch(d);
    cr_assert_eq(slurm_watch_rounds(w), 2);
    cr_assert_eq(slurm_watch_node_tables(w), 2, "the round after the drain read the nodes");
    cr_assert_eq(slurm_ctl_calls(c), 2 + 1 + 2, "round, scontrol, round with sinfo");
    cr_assert_str_eq(slurm_watch_nodes(w)->v[3].name, "n4");
    cr_assert_str_eq(slurm_watch_nodes(w)->v[3].state_raw, "drained");
    char msg[512];
    int bad = 1;
    cr_assert_eq(slurm_desk_take_outcome(d, msg, sizeof msg, &bad), 1);
    cr_assert(!bad && strstr(msg, "drain n4 done"), "%s", msg);
    slurm_desk_free(d);
    slurm_ctl_free(c);
    const char *names[] = {"sinfo", "squeue", "scontrol", "nodes.txt"};
    for (size_t i = 0; i < sizeof names / sizeof *names; i++) {
        snprintf(cmd, sizeof cmd, "%s/%s", dir, names[i]);
        unlink(cmd);
    }
    rmdir(dir);
}
