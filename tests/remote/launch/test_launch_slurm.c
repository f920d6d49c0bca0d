/* The slurm launcher's command lines, run by a real /bin/sh with stand-in srun and scancel
 * that record their arguments: what a trial command and the step ids become after the
 * shell (here, or on the login node) has parsed the quoting. */
#include <criterion/criterion.h>
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "core/base/readall.h"
#include "remote/launch/launch_slurm.h"
#include "remote/launch/launch_slurm_priv.h"
#include "remote/ssh/shquote.h"
#include "tests/support/fixtures.h"
#include "tests/support/launchstep.h"
#include "tests/support/timeout.h"

static Cluster *c;
static Schedule *s;
static char dir[] = "/tmp/tunedeck-lslurm.XXXXXX";

/* A stand-in for `name` on PATH: one argument a line, a "--" line after each call. One
 * printf, so one append: a heterogeneous step's sruns run at once and must not interleave. */
static void stand_in(const char *name)
{
    char path[256];
    snprintf(path, sizeof path, "%s/%s", dir, name);
    FILE *f = fopen(path, "w");
    cr_assert_not_null(f);
    fprintf(f, "#!/bin/sh\nprintf '%%s\\n' \"$@\" -- >> '%s/args'\n", dir);
    fclose(f);
    cr_assert_eq(chmod(path, 0755), 0);
}

static void setup(void)
{
    const char *inv =
        "{\"name\": \"s\", \"machine_types\": {"
        "\"two\": {\"bandwidth_gbps\": 10, \"devices\": [{\"id\": \"cpu\", \"kind\": \"cpu\"},"
        " {\"id\": \"gpu0\", \"kind\": \"gpu\"}, {\"id\": \"gpu1\", \"kind\": \"gpu\"}]},"
        "\"one\": {\"bandwidth_gbps\": 10, \"devices\": [{\"id\": \"cpu\", \"kind\": \"cpu\"},"
        " {\"id\": \"gpu0\", \"kind\": \"gpu\"}]}},"
        "\"machines\": [{\"name\": \"n1\", \"host\": \"n1\", \"type\": \"two\"},"
        " {\"name\": \"n2\", \"host\": \"n2\", \"type\": \"two\"},"
        " {\"name\": \"n3\", \"host\": \"n3\", \"type\": \"one\"}]}";
    c = fixture_cluster_json(inv);
    s = fixture_schedule(c, 10);
    cr_assert_not_null(mkdtemp(dir));
    stand_in("srun");
    stand_in("scancel");
}

static void teardown(void)
{
    char cmd[128];
    snprintf(cmd, sizeof cmd, "rm -rf '%s'", dir);
    cr_assert_eq(system(cmd), 0);
    memcpy(dir + strlen(dir) - 6, "XXXXXX", 6);
    schedule_free(s);
    cluster_free(c);
}

TestSuite(launch_slurm, .init = setup, .fini = teardown, .timeout = TEST_TIMEOUT_S);

/* Runs `command` with the stand-ins first on PATH, then returns what they recorded. */
static char *run(const char *command)
{
    char *quoted = shquote(command);
    cr_assert_not_null(quoted);
    size_t cap = strlen(quoted) + strlen(dir) * 2 + 64;
    char *sh = malloc(cap);
    cr_assert_not_null(sh);
    snprintf(sh, cap, "PATH='%s':\"$PATH\" sh -c %s < /dev/null", dir, quoted);
    cr_assert_eq(system(sh), 0, "%s", command);
    free(sh);
    free(quoted);
    char path[256];
    snprintf(path, sizeof path, "%s/args", dir);
    size_t len = 0;
    Error err;
    char *args = readall_file(path, 1 << 20, &len, &err);
    cr_assert_not_null(args, "%s", err.msg);
    return args;
}

/* Regression: the step's limit was (long)((timeout + 59) / 60) minutes: a timeout under a
 * second gave --time=0, which Slurm reads as no limit (and the backstop came 120 s in), and
 * 60.5 s gave 1 minute, under the timeout. */
Test(launch_slurm, the_step_limit_is_the_timeout_rounded_up_to_whole_minutes_at_least_one)
{
    static const double CASES[][2] = {{0.001, 1}, {0.5, 1}, {1, 1},   {59.5, 1},
                                      {60, 1},    {60.5, 2}, {61, 2}, {600, 10}};
    for (size_t i = 0; i < sizeof CASES / sizeof CASES[0]; i++)
        cr_assert_eq(launch_slurm_limit_min(CASES[i][0]), CASES[i][1], "%g s: %g min, expected %g",
                     CASES[i][0], launch_slurm_limit_min(CASES[i][0]), CASES[i][1]);
}

Test(launch_slurm, a_trial_command_reaches_srun_word_for_word)
{
    s->worker[0] = s->worker[1] = 1;
    const char *trial = "python3 '/shared/my trial.py' --tag \"it's\" $HOME; rm -rf /";
    LaunchConfig cfg = {.command = trial, .slurm_job = "12"};
    Error err;
    char *cmd = launch_slurm_command(&cfg, s, 2, &err);
    cr_assert_not_null(cmd, "%s", err.msg);
    char *args = run(cmd);
    cr_assert_not_null(strstr(args, "--jobid=12\n--job-name=tunedeck-trial\n--nodelist\nn1,n2\n"
                                    "--nodes=2\n"),
                       "%s", args);
    cr_assert_not_null(strstr(args, "--time=2\n--gres=gpu:2\nsh\n-c\n"), "%s", args);
    char want[256];
    snprintf(want, sizeof want, "\ntunedeck-trial\n%s\n--\n", trial);
    cr_assert_not_null(strstr(args, want), "the trial command changed on its way: %s", args);
    cr_assert_null(strstr(args, "--het-group"), "%s", args);
    free(args);
    free(cmd);
}

/* Nodes of two GPU counts: one srun, one heterogeneous step of one component each
 * ("srun A : B"), so that srun numbers the tasks through the step (two sruns labeled a task
 * 0 each); each component reads the schedule whole from the same file (fd 3). */
Test(launch_slurm, nodes_of_two_gpu_counts_are_one_step_of_a_component_each)
{
    s->worker[0] = s->worker[2] = 1;
    LaunchConfig cfg = {.command = "true", .slurm_job = "7", .slurm_het = 1};
    Error err;
    char *cmd = launch_slurm_command(&cfg, s, 1, &err);
    cr_assert_not_null(cmd, "%s", err.msg);
    char *args = run(cmd);
    const char *colon = strstr(args, "\n:\n--jobid=7\n");
    cr_assert_not_null(colon, "%s", args);
    cr_assert_not_null(strstr(args, "--nodelist\nn1\n--nodes=1\n"), "%s", args);
    cr_assert_not_null(strstr(args, "--gres=gpu:2\n--het-group=0\n"), "%s", args);
    cr_assert_not_null(strstr(colon, "--nodelist\nn3\n--nodes=1\n"), "%s", args);
    cr_assert_not_null(strstr(colon, "--gres=gpu:1\n--het-group=1\n"), "%s", args);
    cr_assert_not_null(strstr(colon, "--input=/dev/fd/3\n"), "%s", args);
    cr_assert_null(strstr(args, "--input=all"), "%s", args);
    cr_assert_eq(strstr(args, "\n--\n"), args + strlen(args) - 4, "one srun: %s", args);
    free(args);
    free(cmd);
}

/* The input file: every component opens /dev/fd/3 afresh and reads the schedule whole (a
 * stand-in srun that reads it twice, as two components do), and nothing is left in TMPDIR. */
Test(launch_slurm, each_component_reads_the_whole_input)
{
    s->worker[0] = s->worker[2] = 1;
    LaunchConfig cfg = {.command = "true", .slurm_job = "7", .slurm_het = 1};
    Error err;
    char *cmd = launch_slurm_command(&cfg, s, 1, &err);
    cr_assert_not_null(cmd, "%s", err.msg);
    char path[256];
    snprintf(path, sizeof path, "%s/srun", dir);
    FILE *f = fopen(path, "w");
    cr_assert_not_null(f);
    fprintf(f, "#!/bin/sh\ncat /dev/fd/3 /dev/fd/3 > '%s/args'\n", dir);
    fclose(f);
    char *quoted = shquote(cmd);
    cr_assert_not_null(quoted);
    size_t cap = strlen(quoted) + 4 * strlen(dir) + 128;
    char *sh = malloc(cap);
    cr_assert_not_null(sh);
    snprintf(sh, cap, "mkdir '%s/tmp' && printf '{\"schedule\": 1}\\n' | "
             "TMPDIR='%s/tmp' PATH='%s':\"$PATH\" sh -c %s && rmdir '%s/tmp'",
             dir, dir, dir, quoted, dir);
    cr_assert_eq(system(sh), 0, "%s", sh);
    free(sh);
    snprintf(path, sizeof path, "%s/args", dir);
    size_t len = 0;
    char *got = readall_file(path, 1 << 20, &len, &err);
    cr_assert_not_null(got, "%s", err.msg);
    cr_assert_str_eq(got, "{\"schedule\": 1}\n{\"schedule\": 1}\n");
    free(got);
    free(quoted);
    free(cmd);
}

Test(launch_slurm, a_schedule_that_uses_no_machine_is_an_error)
{
    LaunchConfig cfg = {.command = "true", .slurm_job = "7"};
    Error err;
    cr_assert_null(launch_slurm_command(&cfg, s, 1, &err));
    cr_assert_not_null(strstr(err.msg, "no machine"), "%s", err.msg);
}

Test(launch_slurm, scancel_gets_each_reported_step_as_one_argument)
{
    char *cmd = launch_slurm_scancel_command("12.0 12.1");
    cr_assert_not_null(cmd);
    char *args = run(cmd);
    cr_assert_str_eq(args, "12.0\n12.1\n--\n");
    free(args);
    free(cmd);
}

/* Regression: the steps reported after a scancel were passed on as the rest of the list, its
 * separating space first (" 57.2": said "steps" for one, the reason with a double space), and
 * the steps of a scancel the login node's drop cut not at all. */
Test(launch_slurm, steps_left_are_joined_one_space_apart_whatever_slices_they_come_in)
{
    const char *steps = "57.1 57.2 57.3";
    char left[64] = "";
    launch_slurm_steps_join(left, sizeof left, steps + 4, strlen(steps + 4));
    cr_assert_str_eq(left, "57.2 57.3", "the rest after a scancel of 57.1");
    left[0] = '\0';
    launch_slurm_steps_join(left, sizeof left, steps, 4);
    launch_slurm_steps_join(left, sizeof left, steps + 9, strlen(steps + 9));
    cr_assert_str_eq(left, "57.1 57.3", "a cut scancel's 57.1, then the unsent 57.3");
    launch_slurm_steps_join(left, sizeof left, steps + 14, 0);
    launch_slurm_steps_join(left, sizeof left, " ", 1);
    cr_assert_str_eq(left, "57.1 57.3", "nothing to add adds nothing");
    char small[8] = "";
    launch_slurm_steps_join(small, sizeof small, steps, strlen(steps));
    cr_assert_str_eq(small, "57.1", "a list cut at its room holds whole ids");
}

Test(launch_slurm, no_step_reported_is_no_scancel)
{
    cr_assert_null(launch_slurm_scancel_command(""));
}

/* srun replaced by a script with this body, first on PATH (this test's own process:
 * Criterion forks one per test), then a trial of `command` through the slurm launcher. */
static Observation *trial_ending(const char *srun_body, const char *command)
{
    char path[256];
    snprintf(path, sizeof path, "%s/srun", dir);
    FILE *f = fopen(path, "w");
    cr_assert_not_null(f);
    fprintf(f, "#!/bin/sh\n%s", srun_body);
    fclose(f);
    char env[1024];
    snprintf(env, sizeof env, "%s:%s", dir, getenv("PATH") ? getenv("PATH") : "/usr/bin:/bin");
    cr_assert_eq(setenv("PATH", env, 1), 0);
    LaunchConfig cfg = {.command = command, .slurm_job = "12", .timeout_s = 30};
    Error err;
    Observation *o = launcher_run_blocking(launcher_find("slurm"), &cfg, s, &err);
    cr_assert_not_null(o, "%s", err.msg);
    return o;
}

static Observation *trial_through(const char *srun_body, const char *command)
{
    Observation *o = trial_ending(srun_body, command);
    cr_assert_eq(o->status, TRIAL_FAILED, "%s", o->reason);
    return o;
}

/* srun --label as Slurm 22.05's (tests/remote/launch/test_srunlabel.c): the task script run
 * once per node of --nodelist, each in a session of its own as slurmstepd runs it, with
 * SLURM_PROCID, SLURMD_NODENAME and every task the input; each line of a task's output and
 * error comes labeled with its number ("1: ..."), and at the end srun's word for each task
 * that failed, and the highest status. TUNEDECK_STANDIN_DIR/rc.N is task N's status once it
 * has ended and said all it says. */
static const char LABELING_SRUN[] =
    "nodes=\n"
    "while [ $# -gt 0 ] && [ \"$1\" != sh ]; do\n"
    "    [ \"$1\" = --nodelist ] && nodes=$2\n"
    "    shift\n"
    "done\n"
    "in=$(cat)\n"
    "d=$(mktemp -d) || exit 1\n"
    "TUNEDECK_STANDIN_DIR=$d; export TUNEDECK_STANDIN_DIR\n"
    "i=0\n"
    "for node in $(echo \"$nodes\" | tr , ' '); do\n"
    "    ( { { printf '%s\\n' \"$in\" | SLURM_JOB_ID=12 SLURM_STEP_ID=0 SLURM_PROCID=$i \\\n"
    "        SLURMD_NODENAME=$node setsid -w \"$@\";\n"
    "        echo $? > \"$d/rc.run.$i\"; } 2>&1 1>&3 3>&- | sed \"s/^/$i: /\" >&2;\n"
    "    } 3>&1 | sed \"s/^/$i: /\"; mv \"$d/rc.run.$i\" \"$d/rc.$i\" ) &\n"
    "    i=$((i + 1))\n"
    "done\n"
    "wait\n"
    "rc=0; i=0\n"
    "for node in $(echo \"$nodes\" | tr , ' '); do\n"
    "    r=$(cat \"$d/rc.$i\")\n"
    "    if [ \"$r\" != 0 ]; then\n"
    "        echo \"srun: error: $node: task $i: Exited with exit code $r\" >&2\n"
    "        [ \"$r\" -gt $rc ] && rc=$r\n"
    "    fi\n"
    "    i=$((i + 1))\n"
    "done\n"
    "rm -rf \"$d\"\n"
    "exit $rc\n";

/* A trial through a stand-in srun that reads the schedule, says `lines` on stderr as srun
 * forwards them (the tasks', labeled with their numbers as --label has srun do, and Slurm's
 * own, in one stream) and exits `status`: the failed trial's reason. */
static Observation *failed_trial(const char *lines, int status)
{
    char body[1024];
    snprintf(body, sizeof body, "cat > /dev/null\nprintf '%%s\\n' %s >&2\nexit %d\n", lines,
             status);
    s->worker[0] = 1;
    return trial_through(body, "true");
}

/* slurmstepd names its node where several slurmd share a host ("slurmstepd-n1: error: ...",
 * as the test harness's Slurm prints them): Slurm's line, not the task's last words. */
Test(launch_slurm, a_node_named_slurmstepd_line_is_not_the_tasks_words)
{
    Observation *o = failed_trial("'0: no dataset at /data/x' 'srun: error: n1: task 0: Exited "
                                  "with exit code 3' '0: slurmstepd-n1: error: task/cgroup: gone'",
                                  3);
    cr_assert_not_null(strstr(o->reason, "; task 0 said: no dataset at /data/x"), "%s", o->reason);
    cr_assert_null(strstr(o->reason, "said: slurmstepd"), "%s", o->reason);
    observation_free(o);
}

/* A node whose NodeAddr srun cannot resolve starts no task, and srun's last line, "Job step
 * aborted", said nothing of why. The lines are the harness's Slurm 22.05 with n1 at NodeAddr
 * ::1 and no CommunicationParameters=EnableIPv6 (docs/slurm.md, "IPv6 node addresses"): the
 * node's launch failure is the reason, with the address srun could not resolve. */
Test(launch_slurm, a_node_whose_address_srun_cannot_resolve_is_named_with_it)
{
    Observation *o = failed_trial(
        "'srun: error: get_addr_info: getaddrinfo() fAiled: Address family for hostname not "
        "supported' 'srun: error: slurm_set_addr: Unable to resolve \"::1\"' 'srun: error: "
        "fwd_tree_thread: can'\\''t find address for host n1, check slurm.conf' 'srun: error: "
        "Task launch for StepId=1.0 failed on node n1: Can'\\''t find an address, check "
        "slurm.conf' 'srun: error: Application launch failed: Can'\\''t find an address, check "
        "slurm.conf' 'srun: Job step aborted'",
        244);
    cr_assert_eq(o->status, TRIAL_FAILED);
    cr_assert_str_eq(o->reason,
                     "slurm: Task launch for StepId=1.0 failed on node n1: Can't find an address, "
                     "check slurm.conf (srun could not resolve the node's address \"::1\": an "
                     "IPv6 NodeAddr needs CommunicationParameters=EnableIPv6)");
    observation_free(o);
}

/* Long job and node names and a full IPv6 address leave no room for both srun's line and the
 * hint: the hint, what to do, stays whole, and srun's words are cut before it at a space. */
Test(launch_slurm, a_long_task_launch_failure_keeps_the_address_hint_whole)
{
    Observation *o = failed_trial(
        "'srun: error: slurm_set_addr: Unable to resolve "
        "\"fd00:1234:5678:9abc:def0:1234:5678:9abc\"' 'srun: error: Task launch for "
        "StepId=1234567.0 failed on node gpu-node-0017-rack-42.hpc.example.org: Can'\\''t find "
        "an address, check slurm.conf' 'srun: Job step aborted'",
        244);
    cr_assert_eq(o->status, TRIAL_FAILED);
    const char *hint = " (srun could not resolve the node's address "
                       "\"fd00:1234:5678:9abc:def0:1234:5678:9abc\": an IPv6 NodeAddr needs "
                       "CommunicationParameters=EnableIPv6)";
    size_t len = strlen(o->reason), hlen = strlen(hint);
    cr_assert(len > hlen && strcmp(o->reason + len - hlen, hint) == 0, "%s", o->reason);
    cr_assert(strncmp(o->reason, "slurm: Task launch for StepId=1234567.0 failed on node ", 55) ==
                  0,
              "%s", o->reason);
    cr_assert(o->reason[len - hlen - 1] != ' ', "cut at a space, the space dropped: %s",
              o->reason);
    observation_free(o);
}

/* srun cancels the step's other tasks when one fails (--kill-on-bad-exit): Slurm's
 * "CANCELLED" line is kept beside srun's, and the failed task's own words are not lost. */
Test(launch_slurm, a_step_srun_cancelled_keeps_the_tasks_words)
{
    Observation *o = failed_trial("'0: RuntimeError: CUDA out of memory' '0: slurmstepd: error: "
                                  "*** STEP 12.4 ON n1 CANCELLED AT 2026-11-27T04:40:00 ***' "
                                  "'srun: Force Terminated StepId=12.4'",
                                  143);
    cr_assert_not_null(strstr(o->reason, "slurm: STEP 12.4 ON n1 CANCELLED AT"), "%s", o->reason);
    cr_assert_not_null(strstr(o->reason, "; task 0 said: RuntimeError: CUDA out of memory"), "%s",
                       o->reason);
    observation_free(o);
}

/* One task fails; srun says so, then forwards its last line, then the others it stopped
 * speak ("Connection closed by peer"): the failed task's words are the cause, not an earlier
 * warning nor a later farewell. */
Test(launch_slurm, the_failed_tasks_words_not_those_srun_stopped_after_it)
{
    Observation *o = failed_trial("'0: UserWarning: TypedStorage is deprecated' 'srun: error: n2: "
                                  "task 1: Exited with exit code 1' 'srun: launch/slurm: "
                                  "_step_signal: Terminating StepId=12.0' '1: RuntimeError: rank 1 "
                                  "crashed' '0: gloo: Connection closed by peer'",
                                  1);
    cr_assert_not_null(strstr(o->reason, "; task 1 (n2, exit code 1) said: RuntimeError: rank 1 "
                                         "crashed"),
                       "%s", o->reason);
    observation_free(o);
}

/* A task's words kept whole after srun's line and the task's own: the reason was cut at 255
 * bytes, and a missing trial script lost "No such file or directory" (seen on the harness,
 * a pyenv python3's path before the words). */
Test(launch_slurm, the_failed_tasks_words_are_kept_whole_after_sruns_line)
{
    Observation *o = failed_trial(
        "'0: /root/.pyenv/versions/3.11.7/bin/python3: can'\\''t open file "
        "'\\''/no/such/trial.py'\\'': [Errno 2] No such file or directory' 'srun: error: n1: "
        "task 0: Exited with exit code 2' 'srun: error: n2: task 1: Exited with exit code 143'",
        143);
    cr_assert_not_null(strstr(o->reason, "said: /root/.pyenv/versions/3.11.7/bin/python3: can't "
                                         "open file '/no/such/trial.py': [Errno 2] No such file "
                                         "or directory"),
                       "%s", o->reason);
    observation_free(o);
}

/* An srun that labels nothing (no --label, as before it was given): the words go by order,
 * the first task line after srun's word, else the last before it. */
Test(launch_slurm, with_no_label_the_failed_tasks_words_go_by_order)
{
    Observation *o = failed_trial("'UserWarning: TypedStorage is deprecated' 'srun: error: n2: "
                                  "task 1: Exited with exit code 1' 'RuntimeError: rank 1 crashed' "
                                  "'gloo: Connection closed by peer'",
                                  1);
    cr_assert_not_null(strstr(o->reason, "; the task said: RuntimeError: rank 1 crashed"), "%s",
                       o->reason);
    observation_free(o);
    o = failed_trial("'no dataset at /data/x' 'srun: error: n1: task 0: Exited with exit code 3'",
                     3);
    cr_assert_not_null(strstr(o->reason, "; the task said: no dataset at /data/x"), "%s", o->reason);
    observation_free(o);
}

/* Where srun's line came first, the failed task's line after it is still its own. */
Test(launch_slurm, the_failed_tasks_words_after_sruns_line_when_none_came_before)
{
    Observation *o = failed_trial("'srun: error: n1: task 0: Exited with exit code 3' "
                                  "'0: no dataset at /data/x' '1: gloo: Connection closed by peer'",
                                  3);
    cr_assert_not_null(strstr(o->reason, "; task 0 said: no dataset at /data/x"), "%s", o->reason);
    observation_free(o);
}

/* The case order alone got wrong: srun says task 1 failed, and task 0, which srun has not
 * stopped yet, speaks first ("loading shard 7"): before --label that line was taken for the
 * cause. Its label says whose it is; task 1's own line, after it, is the reason. */
Test(launch_slurm, a_task_that_speaks_after_the_failure_is_not_taken_for_the_cause)
{
    Observation *o = failed_trial("'srun: error: n2: task 1: Exited with exit code 3' "
                                  "'0: loading shard 7 of 9' '1: no dataset at /data/x' "
                                  "'0: Terminated'",
                                  3);
    cr_assert_not_null(strstr(o->reason, "; task 1 said: no dataset at /data/x"), "%s", o->reason);
    cr_assert_null(strstr(o->reason, "shard"), "%s", o->reason);
    observation_free(o);
    /* the failed task spoke first; another speaks after srun's word */
    o = failed_trial("'1: no dataset at /data/x' 'srun: error: n2: task 1: Exited with exit "
                     "code 3' '0: epoch 2: loss 0.91'",
                     3);
    cr_assert_not_null(strstr(o->reason, "; task 1 said: no dataset at /data/x"), "%s", o->reason);
    cr_assert_null(strstr(o->reason, "epoch"), "%s", o->reason);
    observation_free(o);
}

/* srun says so of the tasks of a node that ended alike in one line ("tasks 0-1"); a node's
 * out-of-memory kill is a failure too. */
Test(launch_slurm, sruns_other_words_of_a_failure_name_the_task)
{
    Observation *o = failed_trial("'srun: error: n2: tasks 1-2: Exited with exit code 3' "
                                  "'0: epoch 2: loss 0.91' '1: no dataset at /data/x'",
                                  3);
    cr_assert_not_null(strstr(o->reason, "; task 1 said: no dataset at /data/x"), "%s", o->reason);
    observation_free(o);
    o = failed_trial("'2: allocating 40 GB' 'srun: error: n3: task 2: Out Of Memory' "
                     "'0: epoch 2: loss 0.91'",
                     137);
    cr_assert_not_null(strstr(o->reason, "; task 2 said: allocating 40 GB"), "%s", o->reason);
    observation_free(o);
}

/* Twelve tasks: srun right-aligns the numbers to two digits (" 3: ", "11: "). */
Test(launch_slurm, labels_wider_than_one_digit_name_their_task)
{
    Observation *o = failed_trial("' 3: epoch 1: loss 1.20' '11: CUDA error: device-side assert' "
                                  "'srun: error: n12: task 11: Exited with exit code 1' "
                                  "' 3: epoch 2: loss 0.97' '10: gloo: Connection closed by peer'",
                                  1);
    cr_assert_not_null(strstr(o->reason, "; task 11 said: CUDA error: device-side assert"), "%s",
                       o->reason);
    cr_assert_null(strstr(o->reason, "epoch"), "%s", o->reason);
    observation_free(o);
}

/* A heterogeneous step (n1 : n3): each task says its node first; srun names the failed one
 * by its node and its number within its component ("n3: task 0"), which is the step's task 1,
 * and the step's task 0 (n1) speaks after it. The words are n3's, said with its node. */
Test(launch_slurm, a_heterogeneous_steps_failed_task_is_named_by_its_node)
{
    Observation *o = failed_trial("'0: tunedeck-node n1' '1: tunedeck-node n3' "
                                  "'1: no dataset at /data/x' 'srun: error: n3: task 0: Exited "
                                  "with exit code 3' '0: warming up the GPUs' 'srun: error: n1: "
                                  "task 0: Exited with exit code 143'",
                                  143);
    cr_assert_not_null(strstr(o->reason, "; task 1 (n3, exit code 3) said: no dataset at /data/x"),
                       "%s", o->reason);
    cr_assert_null(strstr(o->reason, "warming"), "%s", o->reason);
    cr_assert_null(strstr(o->reason, "tunedeck-node"), "%s", o->reason);
    observation_free(o);
}

/* A failed task that said nothing (killed before a word): no other task's line is given as
 * its words. */
Test(launch_slurm, a_silent_failed_task_gets_no_other_tasks_words)
{
    Observation *o = failed_trial("'0: epoch 1: loss 1.20' 'srun: error: n2: task 1: Exited "
                                  "with exit code 137' '0: gloo: Connection closed by peer'",
                                  137);
    cr_assert_null(strstr(o->reason, "said:"), "%s", o->reason);
    cr_assert_not_null(strstr(o->reason, "task 1: Exited with exit code 137"), "%s", o->reason);
    observation_free(o);
}

/* Protocol lines come labeled on standard output, and one longer than 1,024 bytes comes in
 * pieces slurmstepd cut, interleaved with another task's (as the harness's srun printed a
 * 2,500-byte line of two tasks): each is read as the task wrote it. */
Test(launch_slurm, labeled_protocol_lines_and_their_pieces_are_read_whole)
{
    char pad[2600], path[256];
    memset(pad, ' ', sizeof pad - 1);
    pad[sizeof pad - 1] = '\0';
    char task0[3000], task1[3000];
    snprintf(task0, sizeof task0, "{\"event\": \"done\", %s\"time_s\": 4.25}", pad);
    snprintf(task1, sizeof task1, "{\"event\": \"done\", %s\"time_s\": 4.5}", pad + 10);
    snprintf(path, sizeof path, "%s/out", dir);
    FILE *f = fopen(path, "w");
    cr_assert_not_null(f);
    fprintf(f, "0: %.1024s\n1: %.1024s\n0: %.1024s\n", task0, task1, task0 + 1024);
    fprintf(f, "1: %.1024s\n1: %s\n0: %s\n", task1 + 1024, task1 + 2048, task0 + 2048);
    fclose(f);
    char body[512];
    snprintf(body, sizeof body, "cat > /dev/null\ncat '%s'\nexit 0\n", path);
    s->worker[0] = s->worker[1] = 1;
    Observation *o = trial_ending(body, "true");
    cr_assert_eq(o->status, TRIAL_OK, "%s", o->reason);
    cr_assert_float_eq(o->time_s, 4.5, 1e-9, "%g", o->time_s);
    observation_free(o);
}

/* The task script itself, run as srun would (a stand-in srun that executes the task in a
 * session of its own, as slurmstepd does, where the stop reaches its processes alone): a
 * command stopped by SIGTERM with its process group leaves a task that exits with its status
 * (srun takes a task killed by a signal for a lost node and drops unread output), and says
 * nothing of its own ("Terminated") after the command's last words. */
Test(launch_slurm, a_task_stopped_by_sigterm_exits_with_its_status_and_its_words)
{
    s->worker[0] = 1;
    Observation *o = trial_through(LABELING_SRUN, "cat > /dev/null; echo 'my last words' >&2; "
                                                  "kill -TERM 0; sleep 5");
    cr_assert_not_null(strstr(o->reason, "143"), "%s", o->reason);
    cr_assert_null(strstr(o->reason, "SIGTERM"), "%s", o->reason);
    cr_assert_null(strstr(o->reason, "Terminated"), "%s", o->reason);
    cr_assert_not_null(strstr(o->reason, "my last words"), "%s", o->reason);
    observation_free(o);
}

/* Two tasks really run by the labeling stand-in: task 1 fails with its own words; task 0,
 * once task 1 has ended and said all it says, speaks of something else and ends well. Its
 * line comes after the failed task's, and before the old reading took the last line before
 * srun's word: task 0's. */
Test(launch_slurm, a_task_that_speaks_after_the_failed_one_ended_is_not_its_words)
{
    s->worker[0] = s->worker[1] = 1;
    Observation *o = trial_through(
        LABELING_SRUN, "cat > /dev/null; if [ \"$SLURM_PROCID\" = 1 ]; then "
                       "echo 'no dataset at /data/x' >&2; exit 3; fi; "
                       "while [ ! -e \"$TUNEDECK_STANDIN_DIR/rc.1\" ]; do sleep 0.05; done; "
                       "echo 'checkpoint written to /ckpt/step-40' >&2");
    cr_assert_not_null(strstr(o->reason, "task 1: Exited with exit code 3"), "%s", o->reason);
    cr_assert_not_null(strstr(o->reason, "; task 1 said: no dataset at /data/x"), "%s", o->reason);
    cr_assert_null(strstr(o->reason, "checkpoint"), "%s", o->reason);
    observation_free(o);
}

/* srun as the walk on the harness saw it when one task failed (`--kill-on-bad-exit`): its
 * own lines first, then the failing task's last line, then its sibling's shell saying it was
 * ended ("Terminated"), exit 143; `stepd` adds slurmstepd's line for the sibling's step. */
static Observation *failed_step(const char *stepd)
{
    char body[1024];
    snprintf(body, sizeof body,
             "cat > /dev/null\n"
             "echo '0: tunedeck-step 7.0' >&2\n"
             "echo 'srun: error: n1: task 0: Exited with exit code 2' >&2\n"
             "echo 'srun: launch/slurm: _step_signal: Terminating StepId=7.0' >&2\n"
             "echo '0: no dataset at /data/x' >&2\n%s"
             "echo '1: Terminated' >&2\n"
             "echo '1: sh: line 1:  4242 Killed                  sleep 30' >&2\n"
             "echo 'srun: error: n2: task 1: Exited with exit code 143' >&2\nexit 143\n",
             stepd);
    s->worker[0] = s->worker[1] = 1;
    return trial_through(body, "python3 trial.py");
}

Test(launch_slurm, a_failing_tasks_last_line_outlives_its_siblings_terminated)
{
    Observation *o = failed_step("");
    cr_assert_eq(o->status, TRIAL_FAILED);
    cr_assert_not_null(strstr(o->reason, "; task 0 (n1, exit code 2) said: no dataset at /data/x"),
                       "%s", o->reason);
    observation_free(o);
}

/* srun's plain CANCELLED of the sibling's step: the failing task's words, then Slurm's. */
Test(launch_slurm, a_failing_tasks_last_line_comes_before_slurms_cancel)
{
    Observation *o = failed_step(
        "echo '1: slurmstepd: error: *** STEP 7.0 ON n2 CANCELLED AT 2026-11-27T03:40:09 ***' "
        ">&2\n");
    cr_assert_eq(o->status, TRIAL_FAILED);
    cr_assert_not_null(strstr(o->reason, "; task 0 (n1, exit code 2) said: no dataset at /data/x "
                                         "(slurm: STEP 7.0 ON n2 CANCELLED AT 2026-11-27T03:40:09)"),
                       "%s", o->reason);
    observation_free(o);
}

/* The task's step mark shares a stream with the trial command's stderr: a trial that prints
 * marks of its own (another job's step, a whole job, its own allocation without a step) must
 * not make a stop scancel them. Only the real step of allocation 12 is cancelled. */
static int said_ready;

static void note_ready(void *ud, const char *machine, StreamKind stream, const char *line)
{
    (void)ud, (void)machine, (void)stream;
    if (strcmp(line, "ready") == 0)
        said_ready = 1;
}

Test(launch_slurm, a_stop_cancels_only_the_steps_of_its_own_allocation)
{
    char path[256];
    snprintf(path, sizeof path, "%s/srun", dir);
    FILE *f = fopen(path, "w");
    cr_assert_not_null(f);
    fprintf(f, "#!/bin/sh\ncat > /dev/null\necho 'tunedeck-step 12.0' >&2\n"
               "printf '%%s\\n' 'tunedeck-step 999' 'tunedeck-step 5.3' 'tunedeck-step 12' "
               "'tunedeck-step 123.1' 'tunedeck-step 12.1 --me' 'tunedeck-step 12.' "
               "'tunedeck-step -u' ready >&2\nexec sleep 30\n");
    fclose(f);
    cr_assert_eq(chmod(path, 0755), 0);
    char env[1024];
    snprintf(env, sizeof env, "%s:%s", dir, getenv("PATH") ? getenv("PATH") : "/usr/bin:/bin");
    cr_assert_eq(setenv("PATH", env, 1), 0);
    s->worker[0] = 1;
    LaunchConfig cfg = {.command = "true", .slurm_job = "12", .timeout_s = 60,
                        .on_log = note_ready};
    Observation *o = launchstep_cancel_once("slurm", &cfg, s, &said_ready,
                                            "the stand-in srun ended before it said all");
    observation_free(o);
    /* scancel runs as a grandchild, not waited for: its record comes when it comes */
    snprintf(path, sizeof path, "%s/args", dir);
    char *args = NULL;
    Error err;
    for (int i = 0; i < 400 && !args; i++) {
        size_t len = 0;
        args = readall_file(path, 1 << 20, &len, &err);
        if (args && !strstr(args, "--\n")) {
            free(args);
            args = NULL;
        }
        if (!args)
            usleep(50 * 1000);
    }
    cr_assert_not_null(args, "scancel was never run");
    cr_assert_str_eq(args, "12.0\n--\n", "a trial's own text chose what scancel ends: %s", args);
    free(args);
}

Test(launch_slurm, a_step_mark_names_a_step_of_the_allocation_and_nothing_else)
{
    cr_assert_eq(launch_slurm_step_mark("tunedeck-step 12.0", "12"), 4);
    cr_assert_eq(launch_slurm_step_mark("tunedeck-step 12.31\r", "12"), 5);
    cr_assert_eq(launch_slurm_step_mark("tunedeck-step 12", "12"), 0);
    cr_assert_eq(launch_slurm_step_mark("tunedeck-step 120.1", "12"), 0);
    cr_assert_eq(launch_slurm_step_mark("tunedeck-step 1.1", "12"), 0);
    cr_assert_eq(launch_slurm_step_mark("tunedeck-step 12.1_2", "12"), 0);
    cr_assert_eq(launch_slurm_step_mark("tunedeck-step 12.1 x", "12"), 0);
    cr_assert_eq(launch_slurm_step_mark("tunedeck-step 12.0", ""), 0);
    cr_assert_eq(launch_slurm_step_mark("tunedeck-step 12.0", NULL), 0);
}

/* Per-device ranks through srun: rank 2 (n2 gpu0) dies without a word (SIGKILL, as the OOM
 * killer does), and rank 0 on the other node, which lost its peer, says so in an error
 * event. The reason names the rank that died, from its node's fan-out notice (srun --label
 * puts the task's number before it), as over SSH and local. */
Test(launch_slurm, a_rank_killed_without_a_word_is_named_from_its_nodes_fan_out)
{
    snprintf(c->trial.ranks, sizeof c->trial.ranks, "per-device");
    s->worker[0] = s->worker[1] = 1;
    s->inputs[1] = 5; /* n1 gpu0: rank 0 */
    s->inputs[3] = 3; /* n2 cpu: rank 1 */
    s->inputs[4] = 2; /* n2 gpu0: rank 2 */
    Observation *o = trial_through(
        LABELING_SRUN,
        "cat > /dev/null; case $RANK in 2) kill -KILL $$ ;; 0) sleep 1; echo '{\"event\": "
        "\"error\", \"message\": \"rank 0: Connection closed by peer\"}'; exit 1 ;; esac; "
        "sleep 5");
    cr_assert_not_null(strstr(o->reason, "rank 2 (n2 gpu0) exited with status 137 (SIGKILL)"),
                       "%s", o->reason);
    cr_assert_not_null(strstr(o->reason, "Connection closed by peer"), "%s", o->reason);
    observation_free(o);
}

/* Regression, on the lines srun gave for a PyTorch trial whose rank 1 (n1) raised at step 2
 * (slurm.sh, examples/pytorch_ddp.py --crash-rank 1 --crash-step 2), with n2's lines first:
 * each node's output comes its own way, and n2's ranks, which lost rank 1 in the step's
 * all_reduce, may be forwarded before n1's. The reason was n2's: "the command exited: rank 3
 * (n2 cpu) ...; rank 1 (n1 gpu0) ... (error event: rank 3 on n2: ... Connection closed by
 * peer ...)"; it is the crashed rank's, its notice first. */
Test(launch_slurm, a_peers_lost_connection_forwarded_first_is_not_the_reason)
{
    snprintf(c->trial.ranks, sizeof c->trial.ranks, "per-device");
    s->worker[0] = s->worker[1] = 1;
    s->inputs[1] = 5; /* n1 gpu0 */
    s->inputs[3] = 3; /* n2 cpu */
    Observation *o = trial_through(
        "cat > /dev/null\n"
        "printf '%s\\n' '0: tunedeck-node n1' '1: tunedeck-node n2' "
        "'1: RuntimeError: [./gloo/transport/tcp/pair.cc:598] Connection closed by peer "
        "[127.0.0.1]:49895' >&2\n"
        "printf '%s\\n' '1: {\"event\": \"error\", \"message\": \"rank 3 on n2: RuntimeError: "
        "[./gloo/transport/tcp/pair.cc:598] Connection closed by peer [127.0.0.1]:49895\"}' "
        "'1: tunedeck: rank 3 (n2 cpu) exited with status 1; stopping the other ranks of this "
        "host' "
        "'0: {\"event\": \"error\", \"message\": \"rank 1 on n1: RuntimeError: crashing on "
        "purpose (--crash-rank 1 at step 2)\"}' "
        "'0: {\"event\": \"error\", \"message\": \"rank 0 on n1: RuntimeError: "
        "[./gloo/transport/tcp/pair.cc:598] Connection closed by peer [127.0.0.1]:17811\"}' "
        "'0: tunedeck: rank 1 (n1 gpu0) exited with status 1; stopping the other ranks of this "
        "host'\n"
        "printf '%s\\n' '0: RuntimeError: crashing on purpose (--crash-rank 1 at step 2)' "
        "'srun: error: n2: task 1: Exited with exit code 1' "
        "'srun: launch/slurm: _step_signal: Terminating StepId=1.0' "
        "'srun: error: n1: task 0: Exited with exit code 1' >&2\n"
        "exit 1\n",
        "true");
    cr_assert_str_eq(o->reason,
                     "the command exited: rank 1 (n1 gpu0) exited with status 1; rank 3 (n2 cpu) "
                     "exited with status 1 (error event: rank 1 on n1: RuntimeError: crashing on "
                     "purpose (--crash-rank 1 at step 2))");
    observation_free(o);
}

/* Rank 0's node has an IPv6 NodeAddr (the Slurm inventory's host, test_slurm_nodes.c): every
 * rank, on each node, gets it bare as MASTER_ADDR, as torch's env:// rendezvous takes it (::1
 * works with torch 1.13's gloo, [::1] does not; slurm.sh runs it on the harness). */
Test(launch_slurm, an_ipv6_node_address_is_every_ranks_master_addr_bare)
{
    snprintf(c->trial.ranks, sizeof c->trial.ranks, "per-device");
    snprintf(c->machines[0].host, sizeof c->machines[0].host, "::1");
    s->worker[0] = s->worker[1] = 1;
    s->inputs[1] = 5; /* n1 gpu0: rank 0 */
    s->inputs[3] = 3; /* n2 cpu: rank 1 */
    char command[256];
    snprintf(command, sizeof command,
             "cat > /dev/null; echo \"$RANK $TUNEDECK_MACHINE $MASTER_ADDR\" >> '%s/ranks'", dir);
    Observation *o = trial_ending(LABELING_SRUN, command);
    observation_free(o);
    char path[256];
    snprintf(path, sizeof path, "%s/ranks", dir);
    size_t len = 0;
    Error err;
    char *got = readall_file(path, 4096, &len, &err);
    cr_assert_not_null(got, "%s", err.msg);
    cr_assert_not_null(strstr(got, "0 n1 ::1\n"), "%s", got);
    cr_assert_not_null(strstr(got, "1 n2 ::1\n"), "%s", got);
    cr_assert_eq(strlen(got), strlen("0 n1 ::1\n1 n2 ::1\n"), "%s", got);
    free(got);
}

/* A rank killed without a word (rank 3, n2) has no error event; the event is a peer's that
 * lost it (rank 2, n1), whose notice came second: the killed rank's notice stays first. */
Test(launch_slurm, a_peers_notice_never_goes_before_a_rank_killed_without_a_word)
{
    snprintf(c->trial.ranks, sizeof c->trial.ranks, "per-device");
    s->worker[0] = s->worker[1] = 1;
    s->inputs[1] = 5; /* n1 gpu0 */
    s->inputs[3] = 3; /* n2 cpu */
    Observation *o = trial_through(
        "cat > /dev/null\n"
        "printf '%s\\n' '0: tunedeck-node n1' '1: tunedeck-node n2' >&2\n"
        "printf '%s\\n' '1: tunedeck: rank 3 (n2 cpu) exited with status 137 (SIGKILL); "
        "stopping the other ranks of this host' "
        "'0: {\"event\": \"error\", \"message\": \"rank 2 on n1: RuntimeError: "
        "[./gloo/transport/tcp/pair.cc:598] Connection closed by peer [127.0.0.1]:52903\"}' "
        "'0: tunedeck: rank 2 (n1 gpu1) exited with status 1; stopping the other ranks of this "
        "host'\n"
        "printf '%s\\n' 'srun: error: n2: task 1: Exited with exit code 137' >&2\n"
        "exit 137\n",
        "true");
    const char *want = "the command exited: rank 3 (n2 cpu) exited with status 137 (SIGKILL); "
                       "rank 2 (n1 gpu1) exited with status 1 (error event: rank 2 on n1: ";
    cr_assert(strncmp(o->reason, want, strlen(want)) == 0, "%s", o->reason);
    observation_free(o);
}
