/* The live Slurm backend when Slurm preempts a job of ours (remote/live/liverun_slurm.c,
 * taken_off), against stand-in Slurm commands on PATH, real processes: a requeued job is
 * reported preempted once, its copy cancelled with one plain scancel, and the run ends once
 * Slurm says the copy ended; a job that ends PREEMPTED is reported and ended at once, with
 * the checkpoint its exit line says; a suspended one is said once with its end and keeps
 * running. A job's exit line that comes after Slurm says it ended (a shared file system)
 * is waited for (exit_grace_s), then given up. */
#include <criterion/criterion.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "core/base/clock.h"
#include "remote/live/liverun_slurm.h"
#include "tests/support/liveslurm_fixture.h"
#include "tests/support/standins.h"
#include "tests/support/timeout.h"

static char dir[] = "/tmp/tunedeck-lpreempt.XXXXXX";
static char log_text[16384];
static FixtureLog said = {log_text, sizeof log_text};

/* sbatch accepts every job (id 100 on); scontrol shows each recorded job in the state and
 * with the restarts the file "state" holds ("RUNNING 0" when there is none), on n1 with GPU
 * 0 while running or suspended; scancel records its arguments (scancel-calls). */
static const char *const STAND_INS[][2] = {
    {"sbatch", "name=\nfor a; do case $a in --job-name=*) name=${a#--job-name=};; esac; done\n"
               "id=$((100 + $(wc -l < \"$D/jobs\")))\n"
               "echo \"$id $name\" >> \"$D/jobs\"\necho \"$id\"\n"},
    {"scontrol", "st='RUNNING 0'; [ -f \"$D/state\" ] && st=$(cat \"$D/state\")\n"
                 "set -- $st\n"
                 "while read -r id name; do printf 'JobId=%s JobName=%s\\n   UserId=%s(1) "
                 "GroupId=g(1)\\n   JobState=%s Reason=None Dependency=(null)\\n"
                 "   Requeue=1 Restarts=%s BatchFlag=1 Reboot=0 ExitCode=0:0\\n' \"$id\" "
                 "\"$name\" \"$(id -un)\" $1 $2\n"
                 "case $1 in RUNNING|SUSPENDED) printf '     Nodes=n1 CPU_IDs=0 Mem=0 "
                 "GRES=gpu:1(IDX:0)\\n';; esac\necho; done < \"$D/jobs\"\n"},
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

TestSuite(liverun_slurm_preempt, .init = setup, .fini = teardown, .timeout = TEST_TIMEOUT_S);

static int granted(void *run)
{
    return strcmp(LIVERUN_SLURM.granted(run), "n1:0") == 0;
}

static int taken(void *run)
{
    return LIVERUN_SLURM.preempted(run)[0] != 0;
}

static int ended(void *run)
{
    return !LIVERUN_SLURM.running(run);
}

static char *cancels_when(Backend *b, void *run)
{
    char *c = standins_recorded(dir, "scancel-calls");
    for (int i = 0; i < 500 && !c[0]; i++) {
        LIVERUN_SLURM.tick(b->s, clock_now_ms());
        LIVERUN_SLURM.step(run);
        usleep(10000);
        free(c);
        c = standins_recorded(dir, "scancel-calls");
    }
    return c;
}

static void *started(Backend *b, const char *name)
{
    Error err;
    void *run = backend_start(b, dir, name, "train", &err);
    cr_assert_not_null(run, "%s", err.msg);
    backend_steps_until(b, run, granted);
    cr_assert(granted(run), "%s", log_text);
    return run;
}

/* The exit line the batch script prints last, as the job's checkpoint on the TERM wrote. */
static void exit_line(const char *name, long id, int status)
{
    char path[768], line[64];
    fixture_job_output(dir, name, id, path, sizeof path);
    FILE *f = fopen(path, "a");
    cr_assert_not_null(f, "%s", path);
    snprintf(line, sizeof line, "\n" LIVESLURM_EXIT_MARK "%ld %d\n", id, status);
    fputs(line, f);
    fclose(f);
}

/* The requeued copy keeps the job's id and output file: the exit line there is the preempted
 * instance's, this run's own (the copy never writes one), so the run ends at Slurm's word with
 * its checkpoint, not exit_grace_s later (300 s here: a wait would outlast the test's bound). */
Test(liverun_slurm_preempt, a_requeued_job_is_taken_its_copy_cancelled_then_it_ends)
{
    Backend b = backend_new_grace(10, &said, 300);
    void *run = started(&b, "rq");
    exit_line("rq", 100, 0);
    standins_put(dir, "state", "PENDING 1\n"); /* requeued: Slurm would start it again */
    backend_steps_until(&b, run, taken);
    cr_assert_str_eq(LIVERUN_SLURM.preempted(run),
                     "requeued by Slurm (Restarts=1: preempted with PreemptMode=REQUEUE, or its "
                     "node failed; now PENDING): its requeued copy is cancelled");
    cr_assert(LIVERUN_SLURM.rank0_saved(run), "its exit line said the checkpoint was written");
    cr_assert_str_eq(LIVERUN_SLURM.granted(run), "", "it holds no GPU");
    char *cancels = cancels_when(&b, run);
    cr_assert_str_eq(cancels, "100\n", "one plain scancel of the copy: %s", log_text);
    free(cancels);
    cr_assert(LIVERUN_SLURM.running(run), "ended by Slurm's word, not before");
    cr_assert_str_eq(LIVERUN_SLURM.waiting(run), "", "the copy is no run waiting for GPUs");
    standins_put(dir, "state", "CANCELLED 1\n");
    backend_steps_until(&b, run, ended);
    cr_assert(ended(run), "%s", log_text);
    cr_assert_str_eq(LIVERUN_SLURM.status(run), "requeued by Slurm (its copy cancelled)");
    cr_assert(LIVERUN_SLURM.rank0_saved(run), "the checkpoint its exit line told is counted");
    cr_assert(!strstr(log_text, "gave up waiting"), "%s", log_text);
    cancels = standins_recorded(dir, "scancel-calls");
    cr_assert_str_eq(cancels, "100\n", "cancelled once");
    free(cancels);
    LIVERUN_SLURM.free(run);
    backend_free(&b);
}

Test(liverun_slurm_preempt, a_job_ended_preempted_is_taken_at_once_without_a_scancel)
{
    Backend b = backend_new(10, &said);
    void *run = started(&b, "pe");
    exit_line("pe", 100, 0);
    standins_put(dir, "state", "PREEMPTED 0\n");
    backend_steps_until(&b, run, ended);
    cr_assert(ended(run), "%s", log_text);
    cr_assert_str_eq(LIVERUN_SLURM.preempted(run),
                     "preempted by Slurm (PreemptMode=CANCEL: it ended PREEMPTED)");
    cr_assert_str_eq(LIVERUN_SLURM.status(run), "preempted by Slurm");
    cr_assert(LIVERUN_SLURM.rank0_saved(run));
    char *cancels = standins_recorded(dir, "scancel-calls");
    cr_assert_str_eq(cancels, "", "nothing left to cancel");
    free(cancels);
    LIVERUN_SLURM.free(run);
    backend_free(&b);
}

/* Waited for exit_grace_s (1 s here) after Slurm says it ended, then given up, said once. */
Test(liverun_slurm_preempt, no_exit_line_no_checkpoint)
{
    Backend b = backend_new_grace(10, &said, 1);
    void *run = started(&b, "nk"); /* killed before it could write one */
    standins_put(dir, "state", "PREEMPTED 0\n");
    backend_steps_until(&b, run, ended);
    cr_assert(taken(run));
    cr_assert(!LIVERUN_SLURM.rank0_saved(run));
    const char *gave_up = strstr(log_text, "gave up waiting for it");
    cr_assert(gave_up && !strstr(gave_up + 1, "gave up waiting"), "said once: %s", log_text);
    cr_assert(strstr(log_text, "slurm: Slurm job 100 (tunedeck-live-nk."), "%s", log_text);
    char path[768], within[800];
    fixture_job_output(dir, "nk", 100, path, sizeof path);
    snprintf(within, sizeof within, "%s within 1 s (exit_grace_s)", path);
    cr_assert(strstr(log_text, within), "%s", log_text);
    LIVERUN_SLURM.free(run);
    backend_free(&b);
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

/* Regression (the late exit line): on a shared file system the batch script's exit line can
 * reach the output file after Slurm says the job ended. Concluded at Slurm's word, the run
 * counted no checkpoint: a preempted job started again fresh, a death restarted from an
 * older one. The run now waits for the line (exit_grace_s; 300 s here, so no margin of time
 * is at stake): Slurm reports the end, rounds pass, then the line comes. */
static void *ended_in_slurm_before_its_exit_line(Backend *b, const char *name, const char *state)
{
    void *run = started(b, name);
    standins_put(dir, "state", state);
    rounds_pass(b, run, 2);
    cr_assert(LIVERUN_SLURM.running(run),
              "Slurm says it ended; its exit line is awaited, yet it ended: %s (checkpoint %s)",
              LIVERUN_SLURM.status(run), LIVERUN_SLURM.rank0_saved(run) ? "counted" : "lost");
    cr_assert_str_eq(LIVERUN_SLURM.granted(run), "", "it holds no GPU in Slurm");
    exit_line(name, 100, 0);
    backend_steps_until(b, run, ended);
    cr_assert(ended(run), "%s", log_text);
    cr_assert(LIVERUN_SLURM.rank0_saved(run), "its late exit line says the checkpoint was written");
    cr_assert_null(strstr(log_text, "gave up"), "%s", log_text);
    return run;
}

Test(liverun_slurm_preempt, a_preempted_jobs_late_exit_line_still_counts_its_checkpoint)
{
    Backend b = backend_new_grace(10, &said, 300);
    void *run = ended_in_slurm_before_its_exit_line(&b, "lp", "PREEMPTED 0\n");
    cr_assert(taken(run));
    cr_assert_str_eq(LIVERUN_SLURM.status(run), "preempted by Slurm");
    LIVERUN_SLURM.free(run);
    backend_free(&b);
}

/* Cancelled by someone else: a death by Slurm's word, restarted from the checkpoint its
 * TERM wrote, which only the late line tells. */
Test(liverun_slurm_preempt, a_deaths_late_exit_line_still_counts_its_checkpoint)
{
    Backend b = backend_new_grace(10, &said, 300);
    void *run = ended_in_slurm_before_its_exit_line(&b, "ld", "CANCELLED 0\n");
    cr_assert(!taken(run));
    cr_assert_str_eq(LIVERUN_SLURM.status(run), "slurm: CANCELLED (None)");
    char *cancels = standins_recorded(dir, "scancel-calls");
    cr_assert_str_eq(cancels, "", "nothing sent to a job Slurm says ended");
    free(cancels);
    LIVERUN_SLURM.free(run);
    backend_free(&b);
}

static int resumed_said(void *run)
{
    (void)run;
    return strstr(log_text, "is resumed after") != NULL;
}

static int suspended_said(void *run)
{
    (void)run;
    return strstr(log_text, "is suspended (preempted") != NULL;
}

/* A progress line in the run's output file (its job's first). */
static void progress_line(const char *name, long id)
{
    char path[768];
    fixture_job_output(dir, name, id, path, sizeof path);
    FILE *f = fopen(path, "a");
    cr_assert_not_null(f, "%s", path);
    fputs("{\"event\":\"progress\",\"step\":1,\"loss\":0.5}\n", f);
    fclose(f);
}

static int has_progress(void *run)
{
    return LIVERUN_SLURM.progress(run)->seen > 0;
}

Test(liverun_slurm_preempt, a_suspended_job_is_said_once_with_its_end_and_keeps_its_gpus)
{
    Backend b = backend_new(10, &said);
    void *run = started(&b, "su");
    progress_line("su", 100);
    backend_steps_until(&b, run, has_progress);
    cr_assert(LIVERUN_SLURM.ready(run), "running with a progress line: a TERM may go");
    standins_put(dir, "state", "SUSPENDED 0\n");
    backend_steps_until(&b, run, suspended_said);
    long rounds = liveslurm_rounds(b.s);
    for (int i = 0; i < 500 && liveslurm_rounds(b.s) < rounds + 3; i++) {
        LIVERUN_SLURM.tick(b.s, clock_now_ms());
        LIVERUN_SLURM.step(run);
        usleep(10000);
    }
    cr_assert(LIVERUN_SLURM.running(run));
    cr_assert_str_eq(LIVERUN_SLURM.preempted(run), "", "not taken: it keeps its GPUs");
    cr_assert_str_eq(LIVERUN_SLURM.granted(run), "n1:0");
    const char *first = strstr(log_text, "is suspended (preempted");
    cr_assert(first && !strstr(first + 1, "is suspended (preempted"), "said once: %s", log_text);
    cr_assert(strstr(log_text, "slurm: Slurm job 100 (tunedeck-live-su."), "%s", log_text);
    cr_assert(LIVERUN_SLURM.suspended(run), "the driver is told: the model counts no progress");
    cr_assert(!LIVERUN_SLURM.ready(run), "no TERM while suspended: a stop waits for the resume");
    standins_put(dir, "state", "RUNNING 0\n");
    backend_steps_until(&b, run, resumed_said);
    const char *back = strstr(log_text, "is resumed after ");
    cr_assert(back && strstr(back, " s suspended: its progress counts again\n"), "%s", log_text);
    cr_assert(!LIVERUN_SLURM.suspended(run));
    cr_assert(LIVERUN_SLURM.ready(run), "resumed: a stop may go");
    char *cancels = standins_recorded(dir, "scancel-calls");
    cr_assert_str_eq(cancels, "");
    free(cancels);
    LIVERUN_SLURM.free(run);
    backend_free(&b);
}

/* Regression (a leftover output file): Slurm's job ids start again from 1 when its state is
 * reset, and wrap at MaxJobId, so a job folder can hold an earlier job's output under this
 * job's id. Read as this run's, its progress lines were this run's first steps, and its exit
 * line ended a stop at once, "exited 0" with a checkpoint counted, while the new job was still
 * pending. Each submission's output file is its own now (slurm-ID.NONCE-N.out). */
Test(liverun_slurm_preempt, an_earlier_jobs_output_under_the_same_id_is_not_read_as_this_runs)
{
    char path[768];
    snprintf(path, sizeof path, "%s/work", dir);
    cr_assert_eq(mkdir(path, 0700), 0, "%s", path);
    snprintf(path, sizeof path, "%s/work/st", dir);
    cr_assert_eq(mkdir(path, 0700), 0, "%s", path);
    snprintf(path, sizeof path, "%s/work/st/slurm-100.out", dir);
    FILE *f = fopen(path, "w");
    cr_assert_not_null(f, "%s", path);
    fputs("{\"event\":\"progress\",\"step\":9001,\"loss\":0.3}\n"
          "\n" LIVESLURM_EXIT_MARK "100 0\n",
          f);
    fclose(f);
    standins_put(dir, "state", "PENDING 0\n");
    Backend b = backend_new_grace(10, &said, 300);
    Error err;
    void *run = backend_start(&b, dir, "st", "train", &err);
    cr_assert_not_null(run, "%s", err.msg);
    rounds_pass(&b, run, 3);
    cr_assert_str_eq(LIVERUN_SLURM.label(run), "Slurm job 100", "%s", log_text);
    cr_assert_eq(LIVERUN_SLURM.progress(run)->seen, 0, "the earlier job's progress is not its own");
    cr_assert_eq(LIVERUN_SLURM.signal(run, SIGTERM, &err), 0, "%s", err.msg);
    char *cancels = cancels_when(&b, run);
    cr_assert_str_eq(cancels, "--state=PENDING 100\n", "%s", log_text);
    free(cancels);
    cr_assert(LIVERUN_SLURM.running(run), "a pending job's stop ends at Slurm's word: %s",
              LIVERUN_SLURM.status(run));
    standins_put(dir, "state", "CANCELLED 0\n");
    backend_steps_until(&b, run, ended);
    cr_assert(ended(run), "%s", log_text);
    cr_assert_str_eq(LIVERUN_SLURM.status(run), "cancelled while pending");
    cr_assert(!LIVERUN_SLURM.rank0_saved(run), "no checkpoint: it never ran");
    cr_assert_null(strstr(log_text, "gave up"), "no exit line awaited: %s", log_text);
    LIVERUN_SLURM.free(run);
    backend_free(&b);
}
