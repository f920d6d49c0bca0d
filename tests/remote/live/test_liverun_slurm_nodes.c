/* Which nodes of a node-state round the live scheduler adds (liveslurm_joined,
 * remote/live/liverun_slurm_nodes.c): those its partition lists now that it does not watch,
 * usable, with GPUs it can place on. */
#include <criterion/criterion.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "core/base/clock.h"
#include "remote/live/liverun_slurm.h"
#include "tests/support/fixtures.h"
#include "tests/support/liveslurm_fixture.h"
#include "tests/support/ssh_hermetic.h"
#include "tests/support/standins.h"
#include "tests/support/timeout.h"

/* sinfo -h -N -o '%N|%T|%G|%E' -p t4 after `scontrol update PartitionName=t4 Nodes=...` */
static const char ROUND[] = "n1|mixed|gpu:t4:2|none\n"
                            "n2|idle|gpu:t4:2|none\n"
                            "n7|idle|gpu:a100:8(S:0-1)|none\n"
                            "n3|idle|gpu:v100:4|none\n"
                            "n4|drained|gpu:v100:4|tunedeck: maintenance\n"
                            "n5|idle*|gpu:v100:4|none\n"
                            "n6|idle|(null)|none\n"
                            "n8|idle|gpu:9999|none\n";

static size_t joined(const char *const *known, size_t n_known, char names[][64])
{
    SlurmNodeStatuses st;
    Error e;
    cr_assert_eq(slurm_nodestate_parse(ROUND, "sinfo", &st, &e), 0, "%s", e.msg);
    size_t idx[16];
    size_t n = liveslurm_joined(&st, known, n_known, idx);
    for (size_t k = 0; k < n; k++)
        snprintf(names[k], 64, "%s", st.v[idx[k]].name);
    slurm_nodestate_clear(&st);
    return n;
}

Test(liverun_slurm_nodes, usable_nodes_with_gpus_that_are_not_watched_join_in_name_order)
{
    const char *known[] = {"n2", "n1"};
    char names[16][64];
    size_t n = joined(known, 2, names);
    /* n4 drained, n5 not responding, n6 has no GPU, n8 more than a node may have */
    cr_assert_eq(n, 2, "%zu", n);
    cr_assert_str_eq(names[0], "n3");
    cr_assert_str_eq(names[1], "n7");
}

Test(liverun_slurm_nodes, a_watched_node_or_one_that_left_adds_nothing)
{
    const char *known[] = {"n1", "n2", "n3", "n7", "gone"};
    char names[16][64];
    cr_assert_eq(joined(known, 5, names), 0, "every usable node is watched already");
}

Test(liverun_slurm_nodes, an_empty_round_adds_nothing)
{
    SlurmNodeStatuses st;
    Error e;
    cr_assert_eq(slurm_nodestate_parse("", "sinfo", &st, &e), 0, "%s", e.msg);
    size_t idx[1];
    const char *known[] = {"n1"};
    cr_assert_eq(liveslurm_joined(&st, known, 1, idx), 0);
    slurm_nodestate_clear(&st);
}

/* The node-state rounds against stand-in sinfo (prints the file sinfo-out) and scontrol
 * (prints scontrol-out: no job when there is none) on PATH, real processes. */
static char dir[] = "/tmp/tunedeck-lnodes.XXXXXX";
static char log_text[4096];
static FixtureLog said = {log_text, sizeof log_text};

static void write_file(const char *name, const char *text, int mode)
{
    char path[512];
    snprintf(path, sizeof path, "%s/%s", dir, name);
    FILE *f = fopen(path, "w");
    cr_assert_not_null(f);
    fputs(text, f);
    fclose(f);
    cr_assert_eq(chmod(path, (mode_t)mode), 0);
}

/* sinfo answers what sinfo-out holds; scontrol what scontrol-out holds (no job when none). */
static const char *const STAND_INS[][2] = {
    {"sinfo", "cat \"$D/sinfo-out\"\n"},
    {"scontrol", "cat \"$D/scontrol-out\" 2>/dev/null; exit 0\n"},
};

/* A backend on partition t4 (stand-in sinfo answering first_round), watching names. */
static LiveSlurm *watching(const char *first_round, const char *const *names, size_t n,
                           SlurmCtl **ctl)
{
    standins_install(dir, STAND_INS, sizeof STAND_INS / sizeof *STAND_INS);
    write_file("sinfo-out", first_round, 0644);
    SlurmCtlOptions co = {.ssh_config = TEST_SSH_CONFIG, .timeout_s = 10};
    Error err;
    *ctl = slurm_ctl_new(&co, &err);
    cr_assert_not_null(*ctl, "%s", err.msg);
    LiveSlurmOptions o = {.ctl = *ctl,
                          .partition = "t4",
                          .poll_s = 0.01,
                          .node_poll_s = 0.01,
                          .log = fixture_log_line,
                          .userdata = &said};
    LiveSlurm *s = liveslurm_new(&o, &err);
    cr_assert_not_null(s, "%s", err.msg);
    cr_assert_eq(LIVERUN_SLURM.watch(s, names, NULL, n, &err), 0, "%s", err.msg);
    return s;
}

/* Ticks until `more` node rounds have been read, then the nodes as the driver sees them. */
static const LiveNodeState *after_rounds(LiveSlurm *s, long more, size_t *n)
{
    long until = liveslurm_node_rounds(s) + more, looks;
    for (int i = 0; i < 1000 && liveslurm_node_rounds(s) < until; i++) {
        LIVERUN_SLURM.tick(s, clock_now_ms());
        usleep(5000);
    }
    cr_assert_geq(liveslurm_node_rounds(s), until, "%s", log_text);
    return LIVERUN_SLURM.nodes(s, n, &looks);
}

Test(liverun_slurm_nodes, a_round_that_lists_no_node_drains_none, .timeout = TEST_TIMEOUT_S)
{
    SlurmCtl *ctl;
    const char *names[] = {"n1", "n2"};
    LiveSlurm *s = watching("n1|idle|gpu:t4:2|none\nn2|mixed|gpu:t4:2|none\n", names, 2, &ctl);
    size_t n;
    const LiveNodeState *v = after_rounds(s, 1, &n);
    for (int i = 0; i < 200 && !v; i++) /* the holds come with the first job round */
        v = after_rounds(s, 1, &n);
    cr_assert_not_null(v);
    cr_assert_eq(n, 2);
    cr_assert_not(v[0].unusable || v[1].unusable, "%s / %s", v[0].why, v[1].why);
    /* the partition renamed or removed (sinfo -p answers nothing, status 0): that says
     * nothing about the nodes, whose runs go on */
    write_file("sinfo-out", "", 0644);
    v = after_rounds(s, 2, &n);
    cr_assert_eq(n, 2);
    cr_assert_not(v[0].unusable || v[1].unusable, "%s / %s", v[0].why, v[1].why);
    cr_assert(strstr(log_text, "sinfo lists no node of partition t4"), "said: %s", log_text);
    /* one node taken out of the partition is still drained */
    write_file("sinfo-out", "n1|idle|gpu:t4:2|none\n", 0644);
    v = after_rounds(s, 1, &n);
    cr_assert_not(v[0].unusable, "%s", v[0].why);
    cr_assert(v[1].unusable);
    cr_assert_str_eq(v[1].why, "no longer in partition t4 (sinfo)");
    liveslurm_free(s);
    slurm_ctl_free(ctl);
    standins_remove(dir);
}

Test(liverun_slurm_nodes, a_node_back_with_fewer_gpus_in_its_gres_is_left, .timeout = TEST_TIMEOUT_S)
{
    SlurmCtl *ctl;
    const char *names[] = {"n1"};
    LiveSlurm *s = watching("n1|idle|gpu:t4:2|none\n", names, 1, &ctl);
    size_t n;
    const LiveNodeState *v = after_rounds(s, 1, &n);
    /* n3 joins with 4 GPUs, leaves, and is back with 2 (its GRES changed meanwhile) */
    write_file("sinfo-out", "n1|idle|gpu:t4:2|none\nn3|idle|gpu:v100:4|none\n", 0644);
    v = after_rounds(s, 1, &n);
    for (int i = 0; i < 200 && !v; i++) /* the holds come with the first job round */
        v = after_rounds(s, 1, &n);
    cr_assert_not_null(v);
    cr_assert_eq(n, 2);
    cr_assert_str_eq(v[1].name, "n3");
    cr_assert_eq(v[1].gpus, 4);
    cr_assert_not(v[1].unusable);
    write_file("sinfo-out", "n1|idle|gpu:t4:2|none\n", 0644);
    v = after_rounds(s, 1, &n);
    cr_assert(v[1].unusable);
    write_file("sinfo-out", "n1|idle|gpu:t4:2|none\nn3|idle|gpu:v100:2|none\n", 0644);
    v = after_rounds(s, 1, &n);
    cr_assert_eq(n, 2, "not joined twice");
    cr_assert(v[1].unusable, "%s", v[1].why);
    cr_assert_str_eq(v[1].why, "idle in Slurm with 2 of the 4 GPUs the scheduler has");
    /* a watched node the same: its count is the first round's */
    write_file("sinfo-out", "n1|mixed|gpu:t4:1|none\nn3|idle|gpu:v100:4|none\n", 0644);
    v = after_rounds(s, 1, &n);
    cr_assert(v[0].unusable, "%s", v[0].why);
    cr_assert_not(v[1].unusable, "back with all its GPUs: %s", v[1].why);
    liveslurm_free(s);
    slurm_ctl_free(ctl);
    standins_remove(dir);
}

Test(liverun_slurm_nodes, a_node_left_out_for_its_gpus_is_said_once, .timeout = TEST_TIMEOUT_S)
{
    SlurmCtl *ctl;
    const char *names[] = {"n1"};
    LiveSlurm *s = watching("n1|idle|gpu:t4:2|none\n", names, 1, &ctl);
    size_t n;
    after_rounds(s, 1, &n);
    write_file("sinfo-out",
               "n1|idle|gpu:t4:2|none\nn6|idle|(null)|none\nn8|idle|gpu:9999|none\n"
               "n9|mixed|gpu:a100:96|none\nn10|drained|(null)|fan\n",
               0644);
    after_rounds(s, 3, &n);
    cr_assert_eq(n, 1, "none of them added");
    const char *want[] = {
        "n6 is in partition t4 (idle in Slurm) but is not added to the schedule: its GRES "
        "lists no GPU\n",
        "n8 is in partition t4 (idle in Slurm) but is not added to the schedule: its GRES "
        "lists more than 1024 GPUs, the scheduler takes at most 64 on a node\n",
        "n9 is in partition t4 (mixed in Slurm) but is not added to the schedule: its GRES "
        "lists 96 GPUs, the scheduler takes at most 64 on a node\n",
    };
    for (size_t k = 0; k < 3; k++) {
        const char *said = strstr(log_text, want[k]);
        cr_assert(said, "said: %s", log_text);
        cr_assert_null(strstr(said + 1, want[k]), "once: %s", log_text);
    }
    cr_assert_null(strstr(log_text, "n10"), "a drained node is not one to add: %s", log_text);
    /* given GPUs, it joins as any other */
    write_file("sinfo-out", "n1|idle|gpu:t4:2|none\nn6|idle|gpu:t4:2|none\n", 0644);
    const LiveNodeState *v = after_rounds(s, 1, &n);
    for (int i = 0; i < 200 && !v; i++) /* the holds come with the first job round */
        v = after_rounds(s, 1, &n);
    cr_assert_eq(n, 2);
    cr_assert_str_eq(v[1].name, "n6");
    liveslurm_free(s);
    slurm_ctl_free(ctl);
    standins_remove(dir);
}

/* The captured round with other users' pending jobs (none of its jobs ours: root's two
 * running jobs hold n1's GPU 0 and both of n2's): nobody's 12, planned on n1 for 2 GPUs,
 * has room for the one left there; 14 (n[1-2]) and 15 find none; 13 is held. */
Test(liverun_slurm_nodes, pending_jobs_claims_come_with_the_job_round, .timeout = TEST_TIMEOUT_S)
{
    char *text = fixture_read("slurm/scontrol-job-22.05-pending.txt");
    SlurmCtl *ctl;
    const char *names[] = {"n1", "n2"};
    LiveSlurm *s = watching("n1|mixed|gpu:t4:2|none\nn2|mixed|gpu:t4:2|none\n", names, 2, &ctl);
    write_file("scontrol-out", text, 0644);
    size_t n;
    const LiveNodeState *v = after_rounds(s, 1, &n);
    for (int i = 0; i < 200 && (!v || !v[0].pending_gpus); i++) /* a job round after sinfo */
        v = after_rounds(s, 1, &n);
    cr_assert_not_null(v);
    cr_assert_eq(v[0].held_gpus, 1);
    cr_assert_eq(v[1].held_gpus, 2);
    cr_assert_eq(v[0].pending_gpus, 1);
    cr_assert_eq(v[1].pending_gpus, 0);
    liveslurm_free(s);
    slurm_ctl_free(ctl);
    standins_remove(dir);
    free(text);
}
