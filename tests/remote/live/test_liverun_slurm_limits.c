/* The live Slurm backend and a job Slurm holds pending on a limit of its size
 * (remote/live/liverun_slurm.c, LiveRunOps.over_limit), against stand-in Slurm commands on
 * PATH, real processes: over its limit only once the nodes' states are read since it was
 * first seen so (PartitionNodeLimit also says a requested node is down or drained), and that
 * node round is asked at once, not node_round_s later. */
#include <criterion/criterion.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "core/base/clock.h"
#include "remote/live/liverun_slurm.h"
#include "tests/support/liveslurm_fixture.h"
#include "tests/support/standins.h"
#include "tests/support/timeout.h"

static char dir[] = "/tmp/tunedeck-llimits.XXXXXX";
static char log_text[16384];
static FixtureLog said = {log_text, sizeof log_text};

/* sbatch accepts every job (id 100 on); scontrol shows each PENDING with the reason the file
 * "reason" holds; sinfo, once the file "go" exists, lists n1 idle (its calls counted in
 * sinfo-calls). */
static const char *const STAND_INS[][2] = {
    {"sbatch", "name=\nfor a; do case $a in --job-name=*) name=${a#--job-name=};; esac; done\n"
               "id=$((100 + $(wc -l < \"$D/jobs\")))\n"
               "echo \"$id $name\" >> \"$D/jobs\"\necho \"$id\"\n"},
    {"scontrol", "why=$(cat \"$D/reason\")\n"
                 "while read -r id name; do printf 'JobId=%s JobName=%s\\n   UserId=%s(1) "
                 "GroupId=g(1)\\n   JobState=PENDING Reason=%s Dependency=(null)\\n"
                 "   Requeue=1 Restarts=0 BatchFlag=1 Reboot=0 ExitCode=0:0\\n\\n' \"$id\" "
                 "\"$name\" \"$(id -un)\" \"$why\"; done < \"$D/jobs\"\n"},
    {"sinfo", "echo x >> \"$D/sinfo-calls\"\n"
              "n=0; while [ ! -f \"$D/go\" ] && [ $n -lt 100 ]; do sleep 0.05; n=$((n + 1)); done\n"
              "echo 'n1|idle|gpu:t4:2|none'\n"},
    {"scancel", "echo \"$*\" >> \"$D/scancel-calls\"\n"},
};

static void setup(void)
{
    liveslurm_fixture_setup(dir, STAND_INS, sizeof STAND_INS / sizeof *STAND_INS, &said);
}

static void teardown(void)
{
    standins_remove(dir);
}

TestSuite(liverun_slurm_limits, .init = setup, .fini = teardown, .timeout = TEST_TIMEOUT_S);

static int waits(void *run)
{
    return LIVERUN_SLURM.waiting(run)[0] != 0;
}

static int over(void *run)
{
    return LIVERUN_SLURM.over_limit(run, NULL) != NULL;
}

static int sinfo_calls(void)
{
    char *c = standins_recorded(dir, "sinfo-calls");
    int n = 0;
    for (const char *p = c; *p; p++)
        n += *p == '\n';
    free(c);
    return n;
}

static void *pending_on(Backend *b, const char *reason)
{
    char text[64];
    snprintf(text, sizeof text, "%s\n", reason);
    standins_put(dir, "reason", text);
    Error err;
    const char *names[] = {"n1"};
    cr_assert_eq(LIVERUN_SLURM.watch(b->s, names, (int[]){0}, 1, &err), 0, "%s", err.msg);
    void *run = backend_start(b, dir, "big", "train", &err);
    cr_assert_not_null(run, "%s", err.msg);
    backend_steps_until(b, run, waits);
    cr_assert_str_eq(LIVERUN_SLURM.waiting(run), reason, "%s", log_text);
    return run;
}

Test(liverun_slurm_limits, a_job_pending_on_its_partitions_limit_is_over_it_once_the_nodes_are_read)
{
    Backend b = backend_new(10, &said);
    void *run = pending_on(&b, "PartitionNodeLimit");
    /* the node round asked when it was first seen pending so has not answered */
    int64_t until = clock_now_ms() + 300;
    while (clock_now_ms() < until) {
        LIVERUN_SLURM.tick(b.s, clock_now_ms());
        LIVERUN_SLURM.step(run);
        cr_assert_null(LIVERUN_SLURM.over_limit(run, NULL), "before the nodes' states: %s",
                       log_text);
        usleep(10000);
    }
    int asked = sinfo_calls();
    standins_put(dir, "go", "");
    backend_steps_until(&b, run, over);
    cr_assert_str_eq(LIVERUN_SLURM.over_limit(run, NULL), "PartitionNodeLimit", "%s", log_text);
    /* the first round (watch) and the one the sighting asked for, not node_round_s (10 s) later */
    cr_assert_geq(asked, 1, "%s", log_text);
    cr_assert_leq(sinfo_calls(), 3, "%s", log_text);
    LIVERUN_SLURM.free(run);
    backend_free(&b);
}

Test(liverun_slurm_limits, a_job_pending_on_resources_is_not_over_a_limit)
{
    Backend b = backend_new(10, &said);
    standins_put(dir, "go", "");
    void *run = pending_on(&b, "Resources");
    int64_t until = clock_now_ms() + 500;
    while (clock_now_ms() < until) {
        LIVERUN_SLURM.tick(b.s, clock_now_ms());
        LIVERUN_SLURM.step(run);
        cr_assert_null(LIVERUN_SLURM.over_limit(run, NULL), "%s", log_text);
        usleep(10000);
    }
    LIVERUN_SLURM.free(run);
    backend_free(&b);
}
