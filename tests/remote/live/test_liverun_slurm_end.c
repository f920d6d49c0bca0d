/* A live Slurm run's end in the driver's words (remote/live/liverun_slurm_end.c), against
 * stand-in Slurm commands on PATH: a job that fails says why in its own words, the last line
 * of its output that is not protocol (or its error event), as a run over SSH does
 * (remote/live/jobctl.c); a job that exits 0 says only that. */
#include <criterion/criterion.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "core/base/clock.h"
#include "remote/live/liverun_slurm.h"
#include "tests/support/liveslurm_fixture.h"
#include "tests/support/standins.h"
#include "tests/support/timeout.h"

static char dir[] = "/tmp/tunedeck-lend.XXXXXX";
static char log_text[16384];
static FixtureLog said = {log_text, sizeof log_text};

/* sbatch accepts every job (id 100 on); scontrol shows each in the state, exit code, signal
 * and restarts the file "state" holds ("RUNNING 0" when there is none; the signal and the
 * restarts 0 when left out), on n1 with GPU 0 while running. */
static const char *const STAND_INS[][2] = {
    {"sbatch", "name=\nfor a; do case $a in --job-name=*) name=${a#--job-name=};; esac; done\n"
               "id=$((100 + $(wc -l < \"$D/jobs\")))\n"
               "echo \"$id $name\" >> \"$D/jobs\"\necho \"$id\"\n"},
    {"scontrol", "st='RUNNING 0'; [ -f \"$D/state\" ] && st=$(cat \"$D/state\")\n"
                 "set -- $st\n"
                 "while read -r id name; do printf 'JobId=%s JobName=%s\\n   UserId=%s(1) "
                 "GroupId=g(1)\\n   JobState=%s Reason=None Dependency=(null)\\n"
                 "   Requeue=1 Restarts=%s BatchFlag=1 Reboot=0 ExitCode=%s:%s\\n' \"$id\" "
                 "\"$name\" \"$(id -un)\" $1 \"${4:-0}\" $2 \"${3:-0}\"\n"
                 "case $1 in RUNNING) printf '     Nodes=n1 CPU_IDs=0 Mem=0 "
                 "GRES=gpu:1(IDX:0)\\n';; esac\necho; done < \"$D/jobs\"\n"},
    {"scancel", ":\n"},
};

static void setup(void)
{
    liveslurm_fixture_setup(dir, STAND_INS, sizeof STAND_INS / sizeof *STAND_INS, &said);
}

static void teardown(void)
{
    standins_remove(dir);
}

TestSuite(liverun_slurm_end, .init = setup, .fini = teardown, .timeout = TEST_TIMEOUT_S);

static int granted(void *run)
{
    return strcmp(LIVERUN_SLURM.granted(run), "n1:0") == 0;
}

static int ended(void *run)
{
    return !LIVERUN_SLURM.running(run);
}

/* Job `name` (id 100) runs, writes `output` (the batch script's exit line with `status`
 * after it, as the script prints it), then Slurm says it ended `state`: the run's status. */
static char *status_after(const char *name, const char *output, int status, const char *state)
{
    Backend b = backend_new(10, &said);
    Error err;
    void *run = backend_start(&b, dir, name, "train", &err);
    cr_assert_not_null(run, "%s", err.msg);
    backend_steps_until(&b, run, granted);
    cr_assert(granted(run), "%s", log_text);
    char path[768];
    fixture_job_output(dir, name, 100, path, sizeof path);
    FILE *f = fopen(path, "a");
    cr_assert_not_null(f, "%s", path);
    fprintf(f, "%s\n" LIVESLURM_EXIT_MARK "100 %d\n", output, status);
    fclose(f);
    standins_put(dir, "state", state);
    backend_steps_until(&b, run, ended);
    cr_assert(ended(run), "%s", log_text);
    char *st = strdup(LIVERUN_SLURM.status(run));
    LIVERUN_SLURM.free(run);
    backend_free(&b);
    return st;
}

/* The walk on the harness: a job command that printed "no dataset" and exited 3 died as
 * "exited 3" alone, its reason only in DIR/NAME/slurm-ID.NONCE-N.out. */
Test(liverun_slurm_end, a_failed_job_says_its_last_line)
{
    char *st = status_after("fa",
                            "{\"event\":\"progress\",\"step\":1}\nloading\n"
                            "no dataset at /data/x\n",
                            3, "FAILED 3\n");
    cr_assert_str_eq(st, "exited 3: no dataset at /data/x");
    free(st);
}

Test(liverun_slurm_end, a_failed_jobs_error_event_is_not_replaced_by_a_later_line)
{
    char *st = status_after("fe",
                            "{\"event\":\"error\",\"message\":\"CUDA out of memory\"}\n"
                            "Traceback (most recent call last):\n",
                            1, "FAILED 1\n");
    cr_assert_str_eq(st, "exited 1: CUDA out of memory");
    free(st);
}

Test(liverun_slurm_end, a_job_that_exits_0_says_only_that)
{
    char *st = status_after("ok", "all done\n", 0, "COMPLETED 0\n");
    cr_assert_str_eq(st, "exited 0");
    free(st);
}

/* Text others control is made visible, never sent to the terminal as it is. */
Test(liverun_slurm_end, a_failed_jobs_words_are_termsafe)
{
    char *st = status_after("ts", "bad \033[2J\n", 2, "FAILED 2\n");
    cr_assert_str_eq(st, "exited 2: bad ^[[2J");
    free(st);
}

/* Driver steps until `more` job rounds have been read after the call (the last one began
 * after it, so it saw what the stand-ins said by then), or the run ended. */
static void rounds_pass(Backend *b, void *run, long more)
{
    long until = liveslurm_rounds(b->s) + more;
    for (int i = 0; i < 800 && liveslurm_rounds(b->s) < until && LIVERUN_SLURM.running(run); i++) {
        LIVERUN_SLURM.tick(b->s, clock_now_ms());
        LIVERUN_SLURM.step(run);
        usleep(10000);
    }
}

/* Appends `text` to job 100's output file, as the job (or its batch script) prints it. */
static void job_prints(const char *name, const char *text)
{
    char path[768];
    fixture_job_output(dir, name, 100, path, sizeof path);
    FILE *f = fopen(path, "a");
    cr_assert_not_null(f, "%s", path);
    fputs(text, f);
    fclose(f);
}

static void *stopped_while_running(Backend *b, const char *name)
{
    Error err;
    void *run = backend_start(b, dir, name, "train", &err);
    cr_assert_not_null(run, "%s", err.msg);
    backend_steps_until(b, run, granted);
    cr_assert(granted(run), "%s", log_text);
    /* asked again until the TERM has gone, as the driver does */
    int term = LIVERUN_SLURM.signal(run, SIGTERM, &err);
    for (int i = 0; i < 500 && term < 0; i++) {
        LIVERUN_SLURM.tick(b->s, clock_now_ms());
        LIVERUN_SLURM.step(run);
        usleep(10000);
        term = LIVERUN_SLURM.signal(run, SIGTERM, &err);
    }
    cr_assert_eq(term, 0, "%s", err.msg);
    return run;
}

/* Regression (security review): the job's command shares the batch script's output file and
 * knows its job id, so it can print the script's exit line itself. Asked to stop, the run
 * took that line for the script's and ended "exited 0" with its checkpoint counted while the
 * job still ran. Now a stop believes the line once Slurm says the script is over. */
Test(liverun_slurm_end, an_exit_line_the_job_prints_does_not_end_a_stop_while_slurm_runs_it)
{
    Backend b = backend_new(10, &said);
    void *run = stopped_while_running(&b, "fk");
    job_prints("fk", "\n" LIVESLURM_EXIT_MARK "100 0\n");
    rounds_pass(&b, run, 3);
    cr_assert(LIVERUN_SLURM.running(run), "Slurm has it RUNNING, yet it ended: %s (checkpoint %s)",
              LIVERUN_SLURM.status(run), LIVERUN_SLURM.rank0_saved(run) ? "counted" : "lost");
    /* the script's own line, then Slurm's word that the script is over */
    job_prints("fk", "\n" LIVESLURM_EXIT_MARK "100 0\n");
    standins_put(dir, "state", "COMPLETING 0\n");
    backend_steps_until(&b, run, ended);
    cr_assert(ended(run), "%s", log_text);
    cr_assert_str_eq(LIVERUN_SLURM.status(run), "exited 0");
    cr_assert(LIVERUN_SLURM.rank0_saved(run), "the script's exit 0: the TERM's checkpoint");
    LIVERUN_SLURM.free(run);
    backend_free(&b);
}

/* An exit line followed by more of the job's output is not the script's (it prints its own
 * after the command has exited, last): a job that printed one and then failed, its script
 * killed before its line, has no checkpoint counted from that line. exit_grace_s 0: Slurm's
 * word is concluded from at once, no time margin at stake. */
Test(liverun_slurm_end, an_exit_line_with_output_after_it_is_not_the_scripts)
{
    Backend b = backend_new_grace(10, &said, 0);
    void *run = stopped_while_running(&b, "fl");
    job_prints("fl", "\n" LIVESLURM_EXIT_MARK "100 0\nTraceback (most recent call last):\n");
    standins_put(dir, "state", "FAILED 1\n");
    backend_steps_until(&b, run, ended);
    cr_assert(ended(run), "%s", log_text);
    cr_assert_str_eq(LIVERUN_SLURM.status(run), "exited 1: Traceback (most recent call last):");
    cr_assert(!LIVERUN_SLURM.rank0_saved(run), "no checkpoint counted from the job's line: %s",
              log_text);
    LIVERUN_SLURM.free(run);
    backend_free(&b);
}

/* Asks for the KILL (the driver's, after the stop timeout) until its scancel has gone. */
static void killed(Backend *b, void *run)
{
    Error err;
    int rc = LIVERUN_SLURM.signal(run, SIGKILL, &err);
    for (int i = 0; i < 500 && rc < 0; i++) {
        LIVERUN_SLURM.tick(b->s, clock_now_ms());
        LIVERUN_SLURM.step(run);
        usleep(10000);
        rc = LIVERUN_SLURM.signal(run, SIGKILL, &err);
    }
    cr_assert_eq(rc, 0, "%s", err.msg);
}

/* Regression: the job's command printed the exit line itself as its last output and ignored
 * the TERM; the KILL after the stop timeout makes Slurm show the job COMPLETING at once, with
 * ExitCode 0:0 before its script's end comes in, and the run ended on the line, "exited 0"
 * with a checkpoint counted the job never wrote. Now COMPLETING after our KILL says nothing
 * of the script: the ended job's ExitCode does (0:9: its script was killed). */
Test(liverun_slurm_end, an_exit_line_the_job_prints_before_our_kill_counts_no_checkpoint)
{
    Backend b = backend_new(10, &said);
    void *run = stopped_while_running(&b, "fx");
    job_prints("fx", "\n" LIVESLURM_EXIT_MARK "100 0\n");
    killed(&b, run);
    standins_put(dir, "state", "COMPLETING 0\n");
    rounds_pass(&b, run, 3);
    cr_assert(LIVERUN_SLURM.running(run), "ended on COMPLETING after our KILL: %s (checkpoint %s)",
              LIVERUN_SLURM.status(run), LIVERUN_SLURM.rank0_saved(run) ? "counted" : "lost");
    standins_put(dir, "state", "CANCELLED 0 9\n");
    backend_steps_until(&b, run, ended);
    cr_assert(ended(run), "%s", log_text);
    cr_assert_str_eq(LIVERUN_SLURM.status(run), "slurm: CANCELLED (None)");
    cr_assert(!LIVERUN_SLURM.rank0_saved(run), "the script was killed: no checkpoint");
    cr_assert(strstr(log_text, "killed by signal 9 (ExitCode=0:9): the line is not the script's"),
              "%s", log_text);
    LIVERUN_SLURM.free(run);
    backend_free(&b);
}

/* The same KILL with a job that checkpoints within KillWait: its script exits 0 and prints
 * its own line, and Slurm records 0:0 for the cancelled job: the checkpoint counts. */
Test(liverun_slurm_end, a_checkpoint_written_before_our_kill_lands_counts)
{
    Backend b = backend_new(10, &said);
    void *run = stopped_while_running(&b, "fy");
    killed(&b, run);
    job_prints("fy", "\n" LIVESLURM_EXIT_MARK "100 0\n");
    standins_put(dir, "state", "CANCELLED 0 0\n");
    backend_steps_until(&b, run, ended);
    cr_assert(ended(run), "%s", log_text);
    cr_assert(LIVERUN_SLURM.rank0_saved(run), "%s", log_text);
    LIVERUN_SLURM.free(run);
    backend_free(&b);
}

/* Our stop, and the script exits 3 (the job failed to write its checkpoint): COMPLETING with
 * ExitCode 3:0 agrees with its line, the run ends "exited 3" with no checkpoint. */
Test(liverun_slurm_end, a_stop_whose_script_exits_non_zero_counts_no_checkpoint)
{
    Backend b = backend_new(10, &said);
    void *run = stopped_while_running(&b, "n3");
    job_prints("n3", "checkpoint: disk full\n\n" LIVESLURM_EXIT_MARK "100 3\n");
    standins_put(dir, "state", "COMPLETING 3\n");
    backend_steps_until(&b, run, ended);
    cr_assert(ended(run), "%s", log_text);
    cr_assert_str_eq(LIVERUN_SLURM.status(run), "exited 3: checkpoint: disk full");
    cr_assert(!LIVERUN_SLURM.rank0_saved(run), "exit 3 is no checkpoint");
    LIVERUN_SLURM.free(run);
    backend_free(&b);
}

/* Regression: during our stop the job printed a line of 0 as its last output and its script
 * exited 3: COMPLETING 3:0 does not end it on the line, and once Slurm says FAILED (exit 3)
 * the line's 0 counted the checkpoint all the same (the end took any line of 0). Now Slurm's
 * ExitCode has to agree. */
Test(liverun_slurm_end, an_exit_line_of_0_that_slurms_exit_code_refutes_counts_no_checkpoint)
{
    Backend b = backend_new_grace(10, &said, 0);
    void *run = stopped_while_running(&b, "n0");
    job_prints("n0", "\n" LIVESLURM_EXIT_MARK "100 0\n");
    standins_put(dir, "state", "COMPLETING 3\n");
    rounds_pass(&b, run, 3);
    cr_assert(LIVERUN_SLURM.running(run), "ended on a line Slurm's ExitCode refutes: %s",
              LIVERUN_SLURM.status(run));
    standins_put(dir, "state", "FAILED 3\n");
    backend_steps_until(&b, run, ended);
    cr_assert(ended(run), "%s", log_text);
    cr_assert_str_eq(LIVERUN_SLURM.status(run), "exited 3");
    cr_assert(!LIVERUN_SLURM.rank0_saved(run), "Slurm says the script exited 3: %s", log_text);
    LIVERUN_SLURM.free(run);
    backend_free(&b);
}

/* Regression: a job Slurm preempts (PreemptMode=CANCEL) whose command printed the exit line
 * itself and was killed at the end of KillWait had its checkpoint counted from that line:
 * restarted from a checkpoint it never wrote. Slurm's ExitCode of the PREEMPTED job is its
 * script's (0:9, killed). */
Test(liverun_slurm_end, a_preempted_job_killed_after_printing_an_exit_line_counts_no_checkpoint)
{
    Backend b = backend_new_grace(10, &said, 0);
    Error err;
    void *run = backend_start(&b, dir, "px", "train", &err);
    cr_assert_not_null(run, "%s", err.msg);
    backend_steps_until(&b, run, granted);
    cr_assert(granted(run), "%s", log_text);
    job_prints("px", "\n" LIVESLURM_EXIT_MARK "100 0\n");
    standins_put(dir, "state", "PREEMPTED 0 9\n");
    backend_steps_until(&b, run, ended);
    cr_assert(ended(run), "%s", log_text);
    cr_assert(LIVERUN_SLURM.preempted(run)[0], "taken, not a death: %s", log_text);
    cr_assert(!LIVERUN_SLURM.rank0_saved(run), "its script was killed: %s", log_text);
    LIVERUN_SLURM.free(run);
    backend_free(&b);
}

/* And one that wrote its checkpoint on the preemption's TERM: its script's exit 0, ExitCode
 * 0:0, counted. */
Test(liverun_slurm_end, a_preempted_job_whose_script_exited_0_counts_its_checkpoint)
{
    Backend b = backend_new_grace(10, &said, 0);
    Error err;
    void *run = backend_start(&b, dir, "pk", "train", &err);
    cr_assert_not_null(run, "%s", err.msg);
    backend_steps_until(&b, run, granted);
    cr_assert(granted(run), "%s", log_text);
    job_prints("pk", "\n" LIVESLURM_EXIT_MARK "100 0\n");
    standins_put(dir, "state", "PREEMPTED 0\n");
    backend_steps_until(&b, run, ended);
    cr_assert(ended(run), "%s", log_text);
    cr_assert(LIVERUN_SLURM.preempted(run)[0], "%s", log_text);
    cr_assert(LIVERUN_SLURM.rank0_saved(run), "%s", log_text);
    LIVERUN_SLURM.free(run);
    backend_free(&b);
}

/* A job Slurm requeues (PreemptMode=REQUEUE) has no ExitCode of its script: slurmctld drops a
 * requeued job's batch status. Its line counts unless a round saw the job still running,
 * never requeued, after the line was read: the script prints its line after the requeue's
 * TERM, which slurmctld sends after counting the restart. Regression: the job's command
 * printed the line long before (and was killed at the end of KillWait): counted. */
Test(liverun_slurm_end, a_requeued_jobs_exit_line_printed_while_it_still_ran_counts_no_checkpoint)
{
    Backend b = backend_new_grace(10, &said, 0);
    Error err;
    void *run = backend_start(&b, dir, "rq", "train", &err);
    cr_assert_not_null(run, "%s", err.msg);
    backend_steps_until(&b, run, granted);
    cr_assert(granted(run), "%s", log_text);
    job_prints("rq", "\n" LIVESLURM_EXIT_MARK "100 0\n");
    rounds_pass(&b, run, 3); /* RUNNING, Restarts=0, after the line */
    standins_put(dir, "state", "PENDING 0 0 1\n");
    rounds_pass(&b, run, 2);
    cr_assert(LIVERUN_SLURM.preempted(run)[0], "requeued: %s", log_text);
    standins_put(dir, "state", "CANCELLED 0 0 1\n"); /* its copy, cancelled */
    backend_steps_until(&b, run, ended);
    cr_assert(ended(run), "%s", log_text);
    cr_assert(!LIVERUN_SLURM.rank0_saved(run), "a line from before the requeue: %s", log_text);
    LIVERUN_SLURM.free(run);
    backend_free(&b);
}

/* The script's own line, written after the requeue (no round saw the job running after it):
 * counted, as before. */
Test(liverun_slurm_end, a_requeued_jobs_exit_line_written_after_the_requeue_counts)
{
    Backend b = backend_new_grace(10, &said, 0);
    Error err;
    void *run = backend_start(&b, dir, "rk", "train", &err);
    cr_assert_not_null(run, "%s", err.msg);
    backend_steps_until(&b, run, granted);
    cr_assert(granted(run), "%s", log_text);
    standins_put(dir, "state", "PENDING 0 0 1\n");
    job_prints("rk", "\n" LIVESLURM_EXIT_MARK "100 0\n");
    rounds_pass(&b, run, 2);
    standins_put(dir, "state", "CANCELLED 0 0 1\n");
    backend_steps_until(&b, run, ended);
    cr_assert(ended(run), "%s", log_text);
    cr_assert(LIVERUN_SLURM.preempted(run)[0], "%s", log_text);
    cr_assert(LIVERUN_SLURM.rank0_saved(run), "%s", log_text);
    LIVERUN_SLURM.free(run);
    backend_free(&b);
}
