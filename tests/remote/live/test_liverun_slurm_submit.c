/* The live Slurm backend's own calls (sbatch, the look-up by name, scancel) against stand-in
 * Slurm commands on PATH, real processes: an sbatch that answers after our timeout is not
 * submitted twice, one that hangs does not hold the driver's tick, a stop asked while the
 * sbatch flies reaches the job it gets, a kill asked while the TERM flies goes after it, and
 * a run freed mid-call leaves no process; the fds of every call in flight are the driver's
 * to wake on, and the last scancels of runs freed unended go together. */
#include <criterion/criterion.h>
#include <errno.h>
#include <poll.h>
#include <pwd.h>
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

static char dir[] = "/tmp/tunedeck-lsubmit.XXXXXX";
static char log_text[16384];
static FixtureLog said = {log_text, sizeof log_text};

/* sbatch records each call's job name (sbatch-calls) and the job it accepts ("ID NAME" in
 * jobs) and answers like --parsable, except for a job named *hang* (never accepted, never
 * answers: its pid in hang.pid), *late* (accepted, then answers after 5 s, past the tests'
 * timeout), *refuse* (refused, as Slurm words it), *down* (no controller, the first
 * time), *gate* (answers once a file "go" is there) and *garbled* (accepted, answered in
 * words --parsable does not use); *twice* fails like *down*, but its squeue, having found
 * nothing, then records the job (slurmctld took the first sbatch after the look-up). squeue
 * finds a job by --name=, except for *badlook* (refused); scontrol shows every recorded job pending
 * (running once a file "running" is there; with a file "hold-rounds", only once "go" is); scancel
 * records its arguments (scancel-calls), a TERM's after 0.5 s; with a file "refuse-twice", it
 * refuses its first two calls (as Slurm 22.05 words a job it cannot alter yet,
 * ESLURM_TRANSITION_STATE_NO_UPDATE: written, not captured), naming each id refused and no
 * "Terminating job" for it; with a file "gone", it says each id had ended (Invalid job
 * id specified) and exits 1 (tests/fixtures/slurm/scancel-22.05-ended.err); with a file
 * "barrier",
 * each waits (up to 5 s) for a second scancel to have started, and says in "alone" when none
 * did. */
static const char *const STAND_INS[][2] = {
    {"sbatch", "name=\nfor a; do case $a in --job-name=*) name=${a#--job-name=};; esac; done\n"
               "echo \"$name\" >> \"$D/sbatch-calls\"\n"
               "case $name in *hang*) echo $$ > \"$D/hang.pid\"; exec sleep 30;;\n"
               "*gate*) for i in $(seq 200); do [ -f \"$D/go\" ] && break; sleep 0.05; done;;\n"
               "*refuse*) echo 'sbatch: error: Batch job submission failed: Requested node "
               "configuration is not available' >&2; exit 1;;\n"
               "*down*|*twice*) [ -f \"$D/down-once\" ] || { : > \"$D/down-once\"; echo "
               "'sbatch: error: Batch job submission failed: Unable to contact slurm "
               "controller (connect failure)' >&2; exit 1; };; esac\n"
               "id=$((100 + $(wc -l < \"$D/jobs\")))\n"
               "echo \"$id $name\" >> \"$D/jobs\"\n"
               "case $name in *late*) exec sleep 5;; *slow*) sleep 0.3;; esac\n"
               "case $name in *garbled*) echo \"Submitted batch job $id\"; exit 0;; esac\n"
               "echo \"$id\"\n"},
    {"squeue", "name=\nfor a; do case $a in --name=*) name=${a#--name=};; esac; done\n"
               "echo \"$*\" >> \"$D/squeue-calls\"\n"
               "case $name in *badlook*) echo 'squeue: error: Invalid user: x' >&2; exit 1;; "
               "esac\n"
               "awk -v n=\"$name\" '$2 == n {print $1}' \"$D/jobs\"\n"
               "case $name in *twice*) [ -f \"$D/taken\" ] || { : > \"$D/taken\"; "
               "echo \"$((100 + $(wc -l < \"$D/jobs\"))) $name\" >> \"$D/jobs\"; };; esac\n"},
    {"scontrol",
     "[ -f \"$D/hold-rounds\" ] && for i in $(seq 200); do [ -f \"$D/go\" ] && break; "
     "sleep 0.05; done\n"
     "state=PENDING; [ -f \"$D/running\" ] && state=RUNNING\n"
     "while read -r id name; do printf 'JobId=%s JobName=%s\\n   UserId=%s(1) "
     "GroupId=g(1)\\n   JobState=%s Reason=Resources Dependency=(null)\\n"
     "   ExitCode=0:0\\n\\n' \"$id\" \"$name\" \"$(id -un)\" $state; done < \"$D/jobs\"\n"},
    {"scancel", "case $* in *TERM*) sleep 0.5;; esac\necho \"$*\" >> \"$D/scancel-calls\"\n"
                "r=; [ -f \"$D/refuse-twice\" ] && [ $(wc -l < \"$D/scancel-calls\") -le 2 ] && r=1\n"
                "[ -f \"$D/gone\" ] && r=gone\n"
                "for a; do case $a in -*) ;; *) if [ \"$r\" = gone ]; then echo \"scancel: error: "
                "Kill job error on job id $a: Invalid job id specified\" >&2; elif [ -n \"$r\" ]; "
                "then echo \"scancel: error: Kill "
                "job error on job id $a: Job can not be altered now, try again later\" >&2; elif "
                "[ \"$1\" = -v ] && [ ! -f \"$D/not-ours\" ]; then echo \"scancel: Terminating "
                "job $a\" >&2; fi;; esac; done\n"
                "[ -n \"$r\" ] && exit 1\n"
                "[ -f \"$D/barrier\" ] || exit 0\n"
                "for i in $(seq 100); do [ $(wc -l < \"$D/scancel-calls\") -ge 2 ] && exit 0; "
                "sleep 0.05; done\necho \"$*\" >> \"$D/alone\"\n"},
};

static void setup(void)
{
    liveslurm_fixture_setup(dir, STAND_INS, sizeof STAND_INS / sizeof *STAND_INS, &said);
}

static void teardown(void)
{
    standins_remove(dir);
}

TestSuite(liverun_slurm_submit, .init = setup, .fini = teardown, .timeout = TEST_TIMEOUT_S);

static size_t lines(const char *text)
{
    size_t n = 0;
    for (; *text; text++)
        n += *text == '\n';
    return n;
}

/* The final scancel by the submission's unique name, as the stand-in records it: the name
 * is the one of the n-th job recorded (0 the first). */
static char *by_name(size_t n)
{
    char *jobs = standins_recorded(dir, "jobs"), *line = jobs, name[256] = "";
    for (size_t i = 0; i < n && line; i++)
        if ((line = strchr(line, '\n')))
            line++;
    cr_assert(line && sscanf(line, "%*s %255s", name) == 1, "job %zu recorded: %s", n, jobs);
    const struct passwd *pw = getpwuid(geteuid());
    cr_assert_not_null(pw);
    char *want = NULL;
    cr_assert_geq(asprintf(&want, "--user=%s --name=%s\n", pw->pw_name, name), 0);
    free(jobs);
    return want;
}

/* The scancel of a second job (liverun_slurm_doubles.c): limited to our user's jobs under the
 * submission's name, so an id from a forged record never cancels a job of ours, and verbose,
 * so that what it cancelled is known; `times` lines of it. */
static char *double_cancels(const char *id, int times)
{
    char *filters = by_name(0), *want = NULL, *line = NULL;
    filters[strlen(filters) - 1] = 0;
    cr_assert_geq(asprintf(&line, "-v %s %s\n", filters, id), 0);
    want = calloc((size_t)times, strlen(line) + 1);
    cr_assert_not_null(want);
    for (int i = 0; i < times; i++)
        strcat(want, line);
    free(filters), free(line);
    return want;
}

static Backend backend(double timeout_s)
{
    return backend_new(timeout_s, &said);
}

static void *start(Backend *b, const char *name)
{
    Error err;
    void *run = backend_start(b, dir, name, "train", &err);
    cr_assert_not_null(run, "%s", err.msg);
    return run;
}

/* One driver step: the backend's tick, then each run's step. */
static void tick(Backend *b, void **runs, size_t n)
{
    LIVERUN_SLURM.tick(b->s, clock_now_ms());
    for (size_t i = 0; i < n; i++)
        LIVERUN_SLURM.step(runs[i]);
    usleep(10000);
}

Test(liverun_slurm_submit, an_sbatch_answered_after_our_timeout_is_adopted_not_submitted_again)
{
    Backend b = backend(1); /* the stand-in accepts the job, then answers after 5 s */
    void *run = start(&b, "late");
    int64_t give_up_ms = clock_now_ms() + 8000; /* a bound on the loop, not on the answer */
    while (clock_now_ms() < give_up_ms && strncmp(LIVERUN_SLURM.label(run), "Slurm job", 9) != 0)
        tick(&b, &run, 1);
    char *jobs = standins_recorded(dir, "jobs");
    cr_assert_eq(lines(jobs), 1, "one submission, not two: %s", jobs);
    cr_assert_str_eq(LIVERUN_SLURM.label(run), "Slurm job 100", "%s", log_text);
    cr_assert(strstr(log_text, "adopted"), "the adoption is said: %s", log_text);
    cr_assert(strstr(jobs, " tunedeck-live-late."), "the name keeps the prefix: %s", jobs);
    char *looks = standins_recorded(dir, "squeue-calls");
    cr_assert(strstr(looks, "--name=tunedeck-live-late."), "looked up by its name: %s", looks);
    LIVERUN_SLURM.free(run); /* not ended: its job is cancelled (by liveslurm_free's end) */
    backend_free(&b);
    /* by the name: its sbatch went unanswered, so Slurm may hold a second job under it */
    char *cancels = standins_recorded(dir, "scancel-calls"), *want = by_name(0);
    cr_assert_str_eq(cancels, want);
    free(jobs), free(looks), free(cancels), free(want);
}

Test(liverun_slurm_submit, a_hanging_sbatch_does_not_hold_the_drivers_tick)
{
    Backend b = backend(20); /* far past this suite's timeout */
    void *runs[2];
    runs[0] = start(&b, "hang");
    runs[1] = start(&b, "quick");
    /* the other run is submitted and its state read, round after round, while the first's
     * sbatch still has not answered */
    for (int i = 0; i < 500 && liveslurm_rounds(b.s) < 5; i++)
        tick(&b, runs, 2);
    cr_assert_geq(liveslurm_rounds(b.s), 5, "%s", log_text);
    cr_assert_str_eq(LIVERUN_SLURM.label(runs[1]), "Slurm job 100");
    cr_assert_str_eq(LIVERUN_SLURM.waiting(runs[1]), "Resources");
    cr_assert_str_eq(LIVERUN_SLURM.label(runs[0]), "no Slurm job yet");
    cr_assert(LIVERUN_SLURM.running(runs[0]));
    char *pid_text = standins_recorded(dir, "hang.pid");
    pid_t pid = (pid_t)atol(pid_text);
    cr_assert_gt(pid, 0);
    cr_assert_eq(kill(pid, 0), 0, "the sbatch still runs");
    /* freed mid-call: its sbatch is killed and reaped, and whatever Slurm may have accepted
     * under its name is cancelled */
    LIVERUN_SLURM.free(runs[0]);
    cr_assert_eq(kill(pid, 0), -1, "no sbatch left behind");
    cr_assert_eq(errno, ESRCH);
    LIVERUN_SLURM.free(runs[1]);
    backend_free(&b);
    char *cancels = standins_recorded(dir, "scancel-calls");
    cr_assert(strstr(cancels, "--name=tunedeck-live-hang."), "%s", cancels);
    free(pid_text), free(cancels);
}

Test(liverun_slurm_submit, a_stop_asked_while_the_sbatch_flies_reaches_the_job_it_gets)
{
    Backend b = backend(10);
    void *run = start(&b, "slow"); /* answers after 0.3 s */
    Error err;
    cr_assert_eq(LIVERUN_SLURM.signal(run, SIGTERM, &err), 0, "%s", err.msg);
    char *cancels = standins_recorded(dir, "scancel-calls");
    for (int i = 0; i < 500 && !cancels[0]; i++) {
        tick(&b, &run, 1);
        free(cancels);
        cancels = standins_recorded(dir, "scancel-calls");
    }
    cr_assert_str_eq(cancels, "--state=PENDING 100\n", "%s", log_text);
    cr_assert(LIVERUN_SLURM.running(run), "ended by Slurm's word, not before");
    free(cancels);
    LIVERUN_SLURM.free(run);
    backend_free(&b);
}

Test(liverun_slurm_submit, a_kill_asked_while_the_term_flies_goes_after_it)
{
    Backend b = backend(10);
    void *run = start(&b, "quick");
    char path[512];
    snprintf(path, sizeof path, "%s/running", dir);
    fclose(fopen(path, "w"));
    /* running as far as the driver knows: a TERM now checkpoints it */
    for (int i = 0; i < 500 && liveslurm_rounds(b.s) < 3; i++)
        tick(&b, &run, 1);
    Error err;
    cr_assert_eq(LIVERUN_SLURM.signal(run, SIGTERM, &err), -1, "the TERM has not gone through");
    cr_assert(strstr(err.msg, "on its way"), "%s", err.msg);
    cr_assert_eq(LIVERUN_SLURM.signal(run, SIGKILL, &err), -1, "nor the kill, behind it");
    int term = -1, kill_rc = -1;
    for (int i = 0; i < 500 && (term || kill_rc); i++) {
        tick(&b, &run, 1);
        term = LIVERUN_SLURM.signal(run, SIGTERM, &err);
        kill_rc = LIVERUN_SLURM.signal(run, SIGKILL, &err);
    }
    cr_assert_eq(term, 0, "%s", err.msg);
    cr_assert_eq(kill_rc, 0, "%s", err.msg);
    char *cancels = standins_recorded(dir, "scancel-calls");
    cr_assert_str_eq(cancels, "--signal=TERM --full 100\n100\n", "one at a time, in order");
    free(cancels);
    LIVERUN_SLURM.free(run);
    backend_free(&b);
}

Test(liverun_slurm_submit, an_sbatch_the_controller_never_got_is_looked_up_then_sent_again)
{
    Backend b = backend(10);
    void *run = start(&b, "down"); /* "Unable to contact slurm controller", the first time */
    for (int i = 0; i < 500 && strncmp(LIVERUN_SLURM.label(run), "Slurm job", 9) != 0; i++)
        tick(&b, &run, 1);
    cr_assert_str_eq(LIVERUN_SLURM.label(run), "Slurm job 100", "%s", log_text);
    char *calls = standins_recorded(dir, "sbatch-calls"),
         *looks = standins_recorded(dir, "squeue-calls");
    cr_assert_eq(lines(calls), 2, "%s", calls);
    size_t first = strcspn(calls, "\n");
    cr_assert(strncmp(calls, calls + first + 1, first) == 0, "the retry keeps its name: %s", calls);
    cr_assert_eq(lines(looks), 1, "looked up once, found nothing: %s", looks);
    cr_assert(strstr(log_text, "the controller did not answer"), "%s", log_text);
    cr_assert(strstr(log_text, "the controller answers again"), "%s", log_text);
    cr_assert_null(strstr(log_text, "adopted"), "%s", log_text);
    free(calls), free(looks);
    LIVERUN_SLURM.free(run);
    backend_free(&b);
}

Test(liverun_slurm_submit, an_sbatch_slurm_refuses_ends_the_run_with_slurms_words)
{
    Backend b = backend(10);
    void *run = start(&b, "refuse");
    for (int i = 0; i < 500 && LIVERUN_SLURM.running(run); i++)
        tick(&b, &run, 1);
    cr_assert_not(LIVERUN_SLURM.running(run));
    cr_assert_str_eq(LIVERUN_SLURM.status(run),
                     "not started: sbatch exited with status 1: sbatch: error: Batch job "
                     "submission failed: Requested node configuration is not available");
    /* a refused start for the driver, not a death (regression: it was a death, so the job
     * was submitted again fresh and then left stopped as "died twice") */
    LiveRefusal how = LIVERUN_REFUSED_ONCE;
    const char *why = LIVERUN_SLURM.refused(run, &how);
    cr_assert_not_null(why, "the end is a refused start");
    cr_assert_eq(how, LIVERUN_REFUSED_FOR_GOOD, "Slurm's words say trying again cannot help");
    cr_assert(strstr(why, "Requested node configuration is not available"), "%s", why);
    char *looks = standins_recorded(dir, "squeue-calls");
    cr_assert_str_eq(looks, "", "a refusal is an answer: nothing to look up");
    free(looks);
    LIVERUN_SLURM.free(run);
    backend_free(&b);
}

Test(liverun_slurm_submit, a_job_slurm_took_before_its_sbatch_answered_is_not_another_users)
{
    Backend b = backend(10); /* the stand-in takes the job, then answers after 5 s */
    char path[512];
    snprintf(path, sizeof path, "%s/running", dir);
    fclose(fopen(path, "w"));
    void *run = start(&b, "late");
    for (int i = 0; i < 500 && liveslurm_rounds(b.s) < 3; i++)
        tick(&b, &run, 1);
    cr_assert_str_eq(LIVERUN_SLURM.label(run), "no Slurm job yet");
    char *jobs = standins_recorded(dir, "jobs");
    cr_assert_eq(lines(jobs), 1, "Slurm has it running: %s", jobs);
    cr_assert_eq(liveslurm_foreign(b.s, NULL, 0), 0, "its GPUs are not held as another user's");
    free(jobs);
    LIVERUN_SLURM.free(run);
    backend_free(&b);
}

static void touch(const char *name)
{
    char path[512];
    snprintf(path, sizeof path, "%s/%s", dir, name);
    fclose(fopen(path, "w"));
}

/* The backend's fds and the run's, as the driver collects them (schedlive_pollfds). */
static size_t all_pollfds(Backend *b, void *run, struct pollfd *fds, size_t cap, int64_t *dl)
{
    *dl = -1;
    size_t n = LIVERUN_SLURM.pollfds(b->s, fds, cap, dl);
    return n + LIVERUN_SLURM.run_pollfds(run, fds + n, cap - n, dl);
}

Test(liverun_slurm_submit, the_calls_in_flight_give_the_driver_their_fds_to_wake_on)
{
    Backend b = backend(10);
    touch("hold-rounds");
    void *run = start(&b, "gate"); /* its sbatch answers once "go" is there; so does scontrol */
    LIVERUN_SLURM.tick(b.s, clock_now_ms()); /* the first job round goes */
    struct pollfd fds[16];
    int64_t dl;
    size_t n_round = LIVERUN_SLURM.pollfds(b.s, fds, 16, &dl);
    cr_assert_gt(n_round, 0, "the job round in flight has fds");
    dl = -1;
    size_t n_run = LIVERUN_SLURM.run_pollfds(run, fds, 16, &dl);
    cr_assert_gt(n_run, 0, "the run's sbatch in flight has fds");
    cr_assert_gt(dl, clock_now_ms(), "and its deadline (the call's timeout)");
    size_t n = all_pollfds(&b, run, fds, 16, &dl);
    cr_assert_eq(n, n_round + n_run);
    cr_assert_eq(poll(fds, n, 0), 0, "neither has answered");
    touch("go");
    /* woken by the answers (or the ends) themselves, then one step takes them */
    for (int i = 0; i < 100 && (liveslurm_rounds(b.s) < 1 ||
                                strcmp(LIVERUN_SLURM.label(run), "no Slurm job yet") == 0);
         i++) {
        n = all_pollfds(&b, run, fds, 16, &dl);
        int64_t wait = dl < 0 ? 10000 : dl - clock_now_ms();
        int ready = poll(fds, n, wait < 0 ? 0 : (int)wait);
        cr_assert_geq(ready, 0);
        LIVERUN_SLURM.tick(b.s, clock_now_ms());
        LIVERUN_SLURM.step(run);
    }
    cr_assert_str_eq(LIVERUN_SLURM.label(run), "Slurm job 100", "%s", log_text);
    cr_assert_geq(liveslurm_rounds(b.s), 1, "%s", log_text);
    cr_assert_eq(LIVERUN_SLURM.run_pollfds(run, fds, 16, &dl), 0, "no call in flight now");
    LIVERUN_SLURM.free(run);
    backend_free(&b);
}

Test(liverun_slurm_submit, the_last_scancels_of_runs_freed_unended_go_together)
{
    Backend b = backend(10);
    void *runs[2];
    for (size_t k = 0; k < 2; k++) { /* one after the other: the stand-in numbers by count */
        runs[k] = start(&b, "quick");
        for (int i = 0; i < 500 && strncmp(LIVERUN_SLURM.label(runs[k]), "Slurm job", 9) != 0; i++)
            tick(&b, runs, k + 1);
    }
    cr_assert_str_eq(LIVERUN_SLURM.label(runs[1]), "Slurm job 101", "%s", log_text);
    touch("barrier"); /* each scancel waits for the other to have started */
    LIVERUN_SLURM.free(runs[0]);
    LIVERUN_SLURM.free(runs[1]);
    backend_free(&b);
    char *cancels = standins_recorded(dir, "scancel-calls"),
         *alone = standins_recorded(dir, "alone");
    cr_assert_eq(lines(cancels), 2, "%s", cancels);
    cr_assert(strstr(cancels, "100\n") && strstr(cancels, "101\n"), "%s", cancels);
    cr_assert_str_eq(alone, "", "both ran at once, not one after the other");
    free(cancels), free(alone);
}

/* A run ended while Slurm may hold its job (its sbatch went unanswered and the look-up was
 * refused, or sbatch took it but answered no job id) leaves nothing behind: freed, its job
 * is cancelled by its unique name. */
static void ended_unsure_cancels_by_name(const char *name, double timeout_s)
{
    Backend b = backend(timeout_s);
    void *run = start(&b, name);
    int64_t give_up_ms = clock_now_ms() + 8000; /* a bound on the loop, not on the answer */
    while (clock_now_ms() < give_up_ms && LIVERUN_SLURM.running(run))
        tick(&b, &run, 1);
    cr_assert_not(LIVERUN_SLURM.running(run), "%s", log_text);
    cr_assert(strstr(LIVERUN_SLURM.status(run), "not started"), "%s", LIVERUN_SLURM.status(run));
    char *jobs = standins_recorded(dir, "jobs");
    cr_assert_eq(lines(jobs), 1, "Slurm took the job: %s", jobs);
    LIVERUN_SLURM.free(run);
    backend_free(&b); /* the last scancels are waited for there */
    char *cancels = standins_recorded(dir, "scancel-calls"), want[128];
    snprintf(want, sizeof want, "--name=tunedeck-live-%s.", name);
    cr_assert(strstr(cancels, want), "its job cancelled by name: '%s'", cancels);
    free(jobs), free(cancels);
}

Test(liverun_slurm_submit, a_refused_look_up_after_a_lost_answer_leaves_no_job)
{
    ended_unsure_cancels_by_name("late-badlook", 1);
}

Test(liverun_slurm_submit, an_sbatch_answer_without_a_job_id_leaves_no_job)
{
    ended_unsure_cancels_by_name("garbled", 10);
}

/* An exit 0 without a job id is a refused start that may pass, naming what was expected. */
Test(liverun_slurm_submit, an_sbatch_answer_without_a_job_id_is_a_refusal_that_may_pass)
{
    Backend b = backend(10);
    void *run = start(&b, "garbled");
    for (int i = 0; i < 500 && LIVERUN_SLURM.running(run); i++)
        tick(&b, &run, 1);
    cr_assert_not(LIVERUN_SLURM.running(run));
    LiveRefusal how = LIVERUN_REFUSED_FOR_GOOD;
    const char *why = LIVERUN_SLURM.refused(run, &how);
    cr_assert_not_null(why);
    cr_assert_eq(how, LIVERUN_REFUSED_ONCE);
    cr_assert_str_eq(why, "sbatch --parsable exited 0 but answered 'Submitted batch job 100': "
                          "expected a job id, as '123' or '123;CLUSTER'");
    LIVERUN_SLURM.free(run);
    backend_free(&b);
}

/* A run that ran and ended is no refusal. */
Test(liverun_slurm_submit, a_submitted_run_is_no_refusal)
{
    Backend b = backend(10);
    void *run = start(&b, "fine");
    for (int i = 0; i < 500 && !strstr(LIVERUN_SLURM.label(run), "Slurm job 1"); i++)
        tick(&b, &run, 1);
    LiveRefusal how;
    cr_assert_null(LIVERUN_SLURM.refused(run, &how));
    LIVERUN_SLURM.free(run);
    backend_free(&b);
}

Test(liverun_slurm_submit, a_job_slurm_took_after_the_look_up_found_none_is_cancelled_once)
{
    Backend b = backend(10);
    void *run = start(&b, "twice"); /* no answer; the look-up finds none; Slurm takes it then */
    for (int i = 0; i < 500 && strncmp(LIVERUN_SLURM.label(run), "Slurm job", 9) != 0; i++)
        tick(&b, &run, 1);
    cr_assert_str_eq(LIVERUN_SLURM.label(run), "Slurm job 101", "the retry's: %s", log_text);
    char *jobs = standins_recorded(dir, "jobs");
    cr_assert_eq(lines(jobs), 2, "Slurm holds two jobs under the name: %s", jobs);
    /* the rounds find the double, the stand-in keeps listing it even once cancelled */
    for (int i = 0; i < 500 && !strstr(log_text, "second job"); i++)
        tick(&b, &run, 1);
    long seen = liveslurm_rounds(b.s);
    for (int i = 0; i < 500 && liveslurm_rounds(b.s) < seen + 5; i++)
        tick(&b, &run, 1);
    char *cancels = standins_recorded(dir, "scancel-calls"), *dbl = double_cancels("100", 1);
    cr_assert_str_eq(cancels, dbl, "the double, once; not the run's job: %s", log_text);
    const char *said = strstr(log_text, "has a second job, Slurm job 100");
    cr_assert(said, "%s", log_text);
    cr_assert(strstr(said, "cancelled; Slurm job 101 is the run's"), "%s", log_text);
    cr_assert_null(strstr(said + strlen("has a second job"), "second job"), "said once: %s",
                   log_text);
    cr_assert(LIVERUN_SLURM.running(run), "the run goes on with its job");
    free(jobs), free(cancels);
    LIVERUN_SLURM.free(run);
    backend_free(&b);
    cancels = standins_recorded(dir, "scancel-calls");
    char *want = NULL, *name_line = by_name(1);
    cr_assert_geq(asprintf(&want, "%s%s", dbl, name_line), 0);
    cr_assert_str_eq(cancels, want, "the run's own job at the end, by its name: %s", cancels);
    free(cancels), free(want), free(name_line), free(dbl);
}

/* Regression: a filtered scancel that cancelled nothing (the id was not a job of ours under
 * the name: a forged record's) exits 0 all the same, and the log said "cancelled". */
Test(liverun_slurm_submit, a_second_job_the_filtered_scancel_did_not_cancel_is_not_said_cancelled)
{
    Backend b = backend(10);
    touch("not-ours"); /* scancel -v names no job: the filters left id 100 out */
    void *run = start(&b, "twice");
    for (int i = 0; i < 500 && strncmp(LIVERUN_SLURM.label(run), "Slurm job", 9) != 0; i++)
        tick(&b, &run, 1);
    for (int i = 0; i < 500 && !strstr(log_text, "second job"); i++)
        tick(&b, &run, 1);
    /* Regression too: the line began "NAME has a second job", claiming the job was ours */
    cr_assert_null(strstr(log_text, "has a second job"), "claimed it ours: %s", log_text);
    const char *said = strstr(log_text, "slurm: a round listed Slurm job 100 under "
                                        "tunedeck-live-twice.");
    cr_assert(said, "%s", log_text);
    cr_assert(strstr(said, ", whose sbatch got no answer (a second job if Slurm took that sbatch "
                           "after all, or another user's record under the name): scancel "
                           "cancelled nothing (Slurm has no job of ours under that name with "
                           "that id"),
              "%s", log_text);
    cr_assert_null(strstr(log_text, ": cancelled;"), "claimed a cancel: %s", log_text);
    LIVERUN_SLURM.free(run);
    backend_free(&b);
}

Test(liverun_slurm_submit, a_second_job_no_round_saw_is_cancelled_by_name_at_the_end)
{
    Backend b = backend(10);
    touch("hold-rounds"); /* no job round answers: the double is never seen */
    void *run = start(&b, "twice");
    for (int i = 0; i < 500 && strncmp(LIVERUN_SLURM.label(run), "Slurm job", 9) != 0; i++)
        tick(&b, &run, 1);
    cr_assert_str_eq(LIVERUN_SLURM.label(run), "Slurm job 101", "the retry's: %s", log_text);
    char *jobs = standins_recorded(dir, "jobs");
    cr_assert_eq(lines(jobs), 2, "Slurm holds two jobs under the name: %s", jobs);
    cr_assert_eq(liveslurm_rounds(b.s), 0, "no round answered");
    LIVERUN_SLURM.free(run);
    backend_free(&b);
    char *cancels = standins_recorded(dir, "scancel-calls"), *want = by_name(1);
    cr_assert_str_eq(cancels, want, "both jobs under the name, 100 with 101: %s", log_text);
    cr_assert_null(strstr(log_text, "second job"), "%s", log_text);
    free(jobs), free(cancels), free(want);
}

Test(liverun_slurm_submit, a_refused_cancel_of_a_second_job_is_said_once_and_tried_again)
{
    Backend b = backend(10);
    touch("refuse-twice"); /* as for a job Slurm cannot alter yet */
    void *run = start(&b, "twice");
    for (int i = 0; i < 500 && strncmp(LIVERUN_SLURM.label(run), "Slurm job", 9) != 0; i++)
        tick(&b, &run, 1);
    cr_assert_str_eq(LIVERUN_SLURM.label(run), "Slurm job 101", "the retry's: %s", log_text);
    for (int i = 0; i < 1000 && !strstr(log_text, ": cancelled;"); i++)
        tick(&b, &run, 1);
    long seen = liveslurm_rounds(b.s);
    for (int i = 0; i < 500 && liveslurm_rounds(b.s) < seen + 5; i++)
        tick(&b, &run, 1);
    char *cancels = standins_recorded(dir, "scancel-calls"), *dbl = double_cancels("100", 3);
    cr_assert_str_eq(cancels, dbl, "refused twice, then cancelled, then no more: %s", log_text);
    free(dbl);
    /* refused, the job is not known ours: listed, not claimed */
    const char *refused = strstr(log_text, "a round listed Slurm job 100 under ");
    cr_assert(refused && strstr(refused, "scancel refused"), "%s", log_text);
    cr_assert_null(strstr(refused + 1, "a round listed Slurm job 100"), "said once: %s", log_text);
    const char *then = strstr(refused + 1, "has a second job, Slurm job 100 (");
    cr_assert(then, "%s", log_text);
    cr_assert(strstr(then, ": cancelled; Slurm job 101 is the run's"), "said once each: %s",
              log_text);
    cr_assert_null(strstr(then + strlen("has a second job, Slurm job 100 ("), "Slurm job 100 ("),
                   "said once each: %s", log_text);
    cr_assert(LIVERUN_SLURM.running(run), "the run goes on with its job");
    free(cancels);
    LIVERUN_SLURM.free(run);
    backend_free(&b);
}

/* Regression: a second job that had ended by the time its scancel went (scancel -v naming
 * only it exits 1: "Kill job error on job id 100: Invalid job id specified") was logged
 * "scancel refused (tried again while Slurm lists it)". It is said to have ended, and the
 * scancel goes once. */
Test(liverun_slurm_submit, a_second_job_that_had_ended_before_its_cancel_is_said_ended)
{
    Backend b = backend(10);
    touch("gone");
    void *run = start(&b, "twice");
    for (int i = 0; i < 1000 && !strstr(log_text, "Slurm job 100 under"); i++)
        tick(&b, &run, 1);
    long seen = liveslurm_rounds(b.s);
    for (int i = 0; i < 500 && liveslurm_rounds(b.s) < seen + 5; i++)
        tick(&b, &run, 1);
    char *cancels = standins_recorded(dir, "scancel-calls"), *dbl = double_cancels("100", 1);
    cr_assert_str_eq(cancels, dbl, "once, not again: %s", log_text);
    /* ended, or never ours: the line does not say it was a second job of ours */
    cr_assert_null(strstr(log_text, "has a second job"), "claimed it ours: %s", log_text);
    cr_assert(strstr(log_text, ", whose sbatch got no answer (a second job if Slurm took that "
                               "sbatch after all, or another user's record under the name): "
                               "Slurm no longer has job 100 running (ended, or not ours): nothing "
                               "to cancel; Slurm job 101 is the run's"),
              "%s", log_text);
    cr_assert_null(strstr(log_text, "scancel refused"), "%s", log_text);
    free(cancels), free(dbl);
    LIVERUN_SLURM.free(run);
    backend_free(&b);
}

/* The stand-in scontrol keeps the job pending (Resources): past pending_say_s it is said,
 * with Slurm's reason, once however many rounds follow. The 10 s bound only guards against
 * a hang (a loaded machine may take long to say it), inside the suite's timeout (one value
 * for every test: tests/support/timeout.h says why). "Once" is checked over later rounds. */
Test(liverun_slurm_submit, a_job_of_ours_pending_past_the_bound_is_said_once_with_the_reason)
{
    Backend b = backend_new_pending(5, &said, 0.3);
    void *run = start(&b, "waiter");
    int64_t hang_guard = clock_now_ms() + 10000;
    while (!strstr(log_text, "is still pending") && clock_now_ms() < hang_guard)
        tick(&b, &run, 1);
    long seen = liveslurm_rounds(b.s);
    for (int i = 0; i < 2000 && liveslurm_rounds(b.s) < seen + 4; i++)
        tick(&b, &run, 1);
    cr_assert_geq(liveslurm_rounds(b.s), seen + 4, "more rounds followed: %s", log_text);
    const char *said = strstr(log_text, "is still pending after 0.3 s (reason: Resources): the "
                                        "GPUs it was placed on went to other jobs");
    cr_assert_not_null(said, "%s", log_text);
    cr_assert_null(strstr(said + 1, "is still pending"), "said once: %s", log_text);
    cr_assert(strstr(log_text, "slurm: Slurm job 100 (tunedeck-live-waiter."), "%s", log_text);
    LIVERUN_SLURM.free(run);
    backend_free(&b);
}

/* Regression: the job's file holds two progress lines at the first read (the driver woke
 * late): the run's progress keeps the first as where it started (the driver's "resumed at
 * step"), and the second as its latest. */
Test(liverun_slurm_submit, a_first_read_of_two_lines_keeps_the_first_as_the_start)
{
    Backend b = backend(10);
    void *run = start(&b, "quick");
    for (int i = 0; i < 500 && strcmp(LIVERUN_SLURM.label(run), "Slurm job 100"); i++)
        tick(&b, &run, 1);
    cr_assert_str_eq(LIVERUN_SLURM.label(run), "Slurm job 100", "%s", log_text);
    char path[512];
    fixture_job_output(dir, "quick", 100, path, sizeof path);
    FILE *f = fopen(path, "w");
    cr_assert_not_null(f, "%s: %s", path, strerror(errno));
    fputs("tunedeck-worker: resuming ckpt at step 30821 on 2 workers (it was written by 2)\n"
          "{\"event\":\"progress\",\"step\":30822,\"loss\":0.4}\n"
          "{\"event\":\"progress\",\"step\":31062,\"loss\":0.12}\n",
          f);
    fclose(f);
    tick(&b, &run, 1);
    const JobProgress *p = LIVERUN_SLURM.progress(run);
    cr_assert_eq(p->seen, 2, "%s", log_text);
    cr_assert_eq(p->first_step, 30822);
    cr_assert_float_eq(p->first_loss, 0.4, 1e-12);
    cr_assert_eq(p->step, 31062);
    LIVERUN_SLURM.free(run);
    backend_free(&b);
}
