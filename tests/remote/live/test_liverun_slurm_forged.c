/* The live Slurm backend when another user's job name forges records in `scontrol show -d
 * job` (remote/live/liverun_slurm_round.c, liverun_slurm_byid.c), against stand-in Slurm
 * commands on PATH answering with output captured from Slurm 22.05
 * (tests/fixtures/slurm/README): our jobs are read by id while the answer holds such
 * records, so the rounds go on and our jobs are neither stalled nor failed by them; a clean
 * answer is still one call a round. */
#include <criterion/criterion.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "core/base/clock.h"
#include "remote/live/liverun_slurm.h"
#include "tests/support/fixtures.h"
#include "tests/support/liveslurm_fixture.h"
#include "tests/support/standins.h"
#include "tests/support/timeout.h"

static char dir[] = "/tmp/tunedeck-lforged.XXXXXX";
static char log_text[16384];
static FixtureLog said = {log_text, sizeof log_text};

/* sbatch accepts every job: a job named *third* is 13, any other the file "first-id"'s (12
 * when there is none; the runs' sbatches fly together, so ids go by name);
 * scontrol without an id prints the file "answer" (a line to "rounds" each time), with one
 * the file "byid-ID" (a line to "byid-calls"), or, when there is none, Slurm 22.05's words
 * for a job it does not list (captured, on standard error, exit 1); scancel records its
 * arguments. */
static const char *const STAND_INS[][2] = {
    {"sbatch", "name=\nfor a; do case $a in --job-name=*) name=${a#--job-name=};; esac; done\n"
               "id=12; [ -f \"$D/first-id\" ] && id=$(cat \"$D/first-id\")\n"
               "case $name in *third*) id=13;; esac\n"
               "echo \"$id $name\" >> \"$D/jobs\"\necho \"$id\"\n"},
    {"scontrol", "if [ -n \"$4\" ]; then echo \"$4\" >> \"$D/byid-calls\"\n"
                 "[ -f \"$D/byid-$4\" ] && exec cat \"$D/byid-$4\"\n"
                 "cat \"$D/invalid-id.err\" >&2; exit 1; fi\n"
                 "echo >> \"$D/rounds\"\ncat \"$D/answer\"\n"},
    {"scancel", "echo \"$*\" >> \"$D/scancel-calls\"\n"},
};

static void put_fixture(const char *name, const char *fixture);

static void setup(void)
{
    liveslurm_fixture_setup(dir, STAND_INS, sizeof STAND_INS / sizeof *STAND_INS, &said);
    put_fixture("invalid-id.err", "slurm/scontrol-22.05-invalid-id.err");
}

static void teardown(void)
{
    standins_remove(dir);
}

TestSuite(liverun_slurm_forged, .init = setup, .fini = teardown, .timeout = TEST_TIMEOUT_S);

/* The stand-in's file `name` holds the captured fixture `fixture`. */
static void put_fixture(const char *name, const char *fixture)
{
    char *text = fixture_read(fixture);
    standins_put(dir, name, text);
    free(text);
}

static void *start(Backend *b, const char *name)
{
    Error err;
    void *run = backend_start(b, dir, name, "train", &err);
    cr_assert_not_null(run, "%s", err.msg);
    return run;
}

/* Driver steps until both runs hold the GPUs wanted, or the 8 s bound (a loop that would
 * never end; not a timing threshold). */
static void steps_until_granted(Backend *b, void **runs, const char *const *want, size_t n)
{
    int64_t give_up_ms = clock_now_ms() + 8000;
    for (;;) {
        size_t ok = 0;
        for (size_t i = 0; i < n; i++)
            ok += strcmp(LIVERUN_SLURM.granted(runs[i]), want[i]) == 0;
        if (ok == n || clock_now_ms() >= give_up_ms)
            return;
        LIVERUN_SLURM.tick(b->s, clock_now_ms());
        for (size_t i = 0; i < n; i++)
            LIVERUN_SLURM.step(runs[i]);
        usleep(10000);
    }
}

/* n more rounds collected. */
static void rounds(Backend *b, void **runs, size_t n_runs, long n)
{
    long seen = liveslurm_rounds(b->s);
    for (int i = 0; i < 800 && liveslurm_rounds(b->s) < seen + n; i++) {
        LIVERUN_SLURM.tick(b->s, clock_now_ms());
        for (size_t k = 0; k < n_runs; k++)
            LIVERUN_SLURM.step(runs[k]);
        usleep(10000);
    }
    cr_assert_geq(liveslurm_rounds(b->s), seen + n, "%s", log_text);
}

static size_t count(const char *text, const char *what)
{
    size_t n = 0;
    for (const char *p = text; (p = strstr(p, what)); p += strlen(what))
        n++;
    return n;
}

/* Captured: nobody's held job 14, named "a\nJobId=12 ... JobState=FAILED ...\nJobId=11 ...
 * JobState=COMPLETED ...", lists our job 12 and root's job 11 twice and leaves its own
 * record without JobState. The old round refused the answer whole: no round was ever
 * collected, so our jobs were never seen running (and would not have been seen ending) for
 * as long as job 14 was listed. Now 12 and 13 are read by id (their by-id answers captured
 * at the same moment) and run where Slurm put them; job 11 still holds n2's GPU 0. */
Test(liverun_slurm_forged, a_name_forging_our_jobs_records_neither_stalls_nor_fails_them)
{
    put_fixture("answer", "slurm/scontrol-job-22.05-forged-ours.txt");
    put_fixture("byid-12", "slurm/scontrol-job-22.05-forged-ours-12.txt");
    put_fixture("byid-13", "slurm/scontrol-job-22.05-forged-ours-13.txt");
    Backend b = backend_new(10, &said);
    void *runs[] = {start(&b, "solo"), start(&b, "third")};
    const char *want[] = {"n1:0+1", "n2:1"};
    steps_until_granted(&b, runs, want, 2);
    cr_assert_str_eq(LIVERUN_SLURM.granted(runs[0]), "n1:0+1", "%s", log_text);
    cr_assert_str_eq(LIVERUN_SLURM.granted(runs[1]), "n2:1", "%s [%s] [%s] %s",
                     LIVERUN_SLURM.label(runs[1]), LIVERUN_SLURM.status(runs[1]),
                     LIVERUN_SLURM.waiting(runs[1]), log_text);
    rounds(&b, runs, 2, 3);
    cr_assert(LIVERUN_SLURM.running(runs[0]) && LIVERUN_SLURM.running(runs[1]),
              "the forged FAILED record of 12 is never believed: %s", log_text);
    char *byid = standins_recorded(dir, "byid-calls");
    cr_assert(strstr(byid, "12\n") && strstr(byid, "13\n"), "%s", byid);
    cr_assert_null(strstr(byid, "14") ? strstr(byid, "14") : strstr(byid, "11"),
                   "only ours are asked by id: %s", byid);
    free(byid);
    cr_assert_eq(count(log_text, "our jobs are read one by one"), 1, "said once: %s", log_text);
    cr_assert(strstr(log_text, "the job record ending at line 97: expected JobId= and JobState="),
              "%s", log_text);
    LiveSlurmForeign f[4];
    cr_assert_eq(liveslurm_foreign(b.s, f, 4), 1);
    cr_assert_str_eq(f[0].id, "11");
    cr_assert_str_eq(f[0].where, "n2:0");
    LIVERUN_SLURM.free(runs[0]), LIVERUN_SLURM.free(runs[1]);
    backend_free(&b);
}

/* A clean answer is read as before, one call a round and none by id; while the answer holds
 * forged records ours are read by id; clean again, they are not, and the change is said. */
Test(liverun_slurm_forged, only_an_answer_holding_forged_records_costs_calls_by_id)
{
    char *a = fixture_read("slurm/scontrol-job-22.05-forged-ours-12.txt");
    standins_put(dir, "answer", a);
    put_fixture("byid-12", "slurm/scontrol-job-22.05-forged-ours-12.txt");
    Backend b = backend_new(10, &said);
    void *run = start(&b, "solo");
    steps_until_granted(&b, &run, (const char *[]){"n1:0+1"}, 1);
    rounds(&b, &run, 1, 3);
    char *byid = standins_recorded(dir, "byid-calls");
    cr_assert_str_eq(byid, "", "a clean answer: one call a round");
    free(byid);
    put_fixture("answer", "slurm/scontrol-job-22.05-forged-ours.txt");
    rounds(&b, &run, 1, 3);
    byid = standins_recorded(dir, "byid-calls");
    cr_assert_eq(count(byid, "12\n"), 3, "one a round: %s", byid);
    free(byid);
    standins_put(dir, "answer", a);
    rounds(&b, &run, 1, 3);
    byid = standins_recorded(dir, "byid-calls");
    cr_assert_eq(count(byid, "12\n"), 3, "none once clean: %s", byid);
    cr_assert(strstr(log_text, "holds no forged record any more"), "%s", log_text);
    cr_assert(LIVERUN_SLURM.running(run));
    free(byid), free(a);
    LIVERUN_SLURM.free(run);
    backend_free(&b);
}

/* A job of ours Slurm no longer lists answers "Invalid job id specified" by id: the job is
 * gone (its run ends), not the controller away; the other run goes on. */
Test(liverun_slurm_forged, a_job_of_ours_slurm_no_longer_lists_is_gone_by_id)
{
    put_fixture("answer", "slurm/scontrol-job-22.05-forged-ours.txt");
    put_fixture("byid-12", "slurm/scontrol-job-22.05-forged-ours-12.txt");
    Backend b = backend_new(10, &said);
    void *runs[] = {start(&b, "solo"), start(&b, "third")};
    steps_until_granted(&b, runs, (const char *[]){"n1:0+1", ""}, 2);
    for (int i = 0; i < 800 && LIVERUN_SLURM.running(runs[1]); i++)
        rounds(&b, runs, 2, 1);
    cr_assert(LIVERUN_SLURM.running(runs[0]), "%s", log_text);
    cr_assert_not(LIVERUN_SLURM.running(runs[1]), "%s", log_text);
    cr_assert(strstr(LIVERUN_SLURM.status(runs[1]), "gone from the controller"), "%s",
              LIVERUN_SLURM.status(runs[1]));
    cr_assert_null(strstr(log_text, "did not answer"), "%s", log_text);
    LIVERUN_SLURM.free(runs[0]), LIVERUN_SLURM.free(runs[1]);
    backend_free(&b);
}

/* Captured: nobody's job 5, renamed, forges a record 998 "HetJobId=6 ... JobState=FAILED"
 * of an id Slurm does not list, and the answer reads clean. The old backend took it as a
 * component of our job 6, listed first: our running job ended as failed. */
Test(liverun_slurm_forged, a_forged_component_of_an_unlisted_id_never_fails_our_job)
{
    standins_put(dir, "first-id", "6\n");
    put_fixture("answer", "slurm/scontrol-job-22.05-forged-het.txt");
    Backend b = backend_new(10, &said);
    void *run = start(&b, "solo");
    rounds(&b, &run, 1, 3);
    cr_assert(LIVERUN_SLURM.running(run), "%s: %s", LIVERUN_SLURM.status(run), log_text);
    cr_assert_str_eq(LIVERUN_SLURM.granted(run), "n1:0+1", "%s", log_text);
    LIVERUN_SLURM.free(run);
    backend_free(&b);
}
