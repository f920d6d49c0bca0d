/* The live driver and a run's end that is not the job's: a start the fence turned away (its
 * folder held by another run of it), and deaths counted in a row within death_window_s. */
#include <criterion/criterion.h>
#include <fcntl.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/wait.h>
#include <unistd.h>

#include "core/base/clock.h"
#include "remote/live/schedlive.h"
#include "tests/support/fixtures.h"
#include "tests/support/livestandin.h"

/* A backend whose first run finds the job's folder held by another run of it (the fence,
 * schedlive.h: it exits 75 before the job starts), and whose next run trains. */
static int fenced_starts;

static void *fenced_start(void *ctx, const LiveRunSpec *spec, LiveRefusal *refusal, Error *err)
{
    (void)ctx, (void)spec, (void)err, (void)refusal;
    StandinRun *r = standin_run_new(sizeof(StandinRun));
    if (fenced_starts++ == 0)
        snprintf(r->status, sizeof r->status, "exited 75: %s: another run", SCHEDLIVE_FENCE_WORD);
    return r;
}

static void fenced_step(void *run)
{
    StandinRun *r = run;
    if (r->status[0])
        return;
    standin_says_step(&r->p, r->p.seen + 1, NAN);
}

static const LiveRunOps FENCED = {.name = "fenced",
                                  .start = fenced_start,
                                  .signal = standin_signal,
                                  .step = fenced_step,
                                  .rank0_saved = standin_ready,
                                  STANDIN_OPS};

static int has_stepped(const SchedLiveJob *j)
{
    return j->step >= 3;
}

/* A run kept off the job's folder by another run of it is no death and no run: the start is
 * tried again (after SCHEDLIVE_FENCE_RETRY_S) and the job trains, said once each way. */
Test(schedlive, a_start_the_fence_turns_away_is_tried_again_not_counted_as_a_death)
{
    static LiveRig r;
    fenced_starts = 0;
    liverig_open(&r, standin_two_by_two(), &FENCED, 1);
    SchedLiveJob j;
    liverig_run_until(&r, has_stepped, 20000, &j);
    cr_assert_geq(j.step, 3, "%s", r.text);
    cr_assert_eq(fenced_starts, 2, "%s", r.text);
    cr_assert_eq(j.deaths, 0, "%s", r.text);
    cr_assert_eq(j.failed, 0, "%s", r.text);
    cr_assert_eq(j.runs, 1, "the turned-away start is no run: %s", r.text);
    cr_assert(strstr(r.text, "j0: another run of it still holds its folder (one left on a host "
                             "whose connection dropped?): it starts once that run has stopped, "
                             "tried every 5 s\n") &&
                  strstr(r.text, "j0: its folder is free again: the run goes on\n") &&
                  strstr(r.text, "j0: run 1 on "),
              "%s", r.text);
    cr_assert_null(strstr(r.text, "died unexpectedly"), "%s", r.text);
    liverig_close(&r);
}

/* A backend whose every run dies at its first step (a script that raises at once), its last
 * line naming the fence's word in its own message: only exit 75 with that word is the fence
 * (regression: the word alone was taken for it, and the job retried for ever). */
static void *dying_start(void *ctx, const LiveRunSpec *spec, LiveRefusal *refusal, Error *err)
{
    (void)ctx, (void)spec, (void)err, (void)refusal;
    return standin_run_new(sizeof(StandinRun));
}

static void dying_step(void *run)
{
    StandinRun *r = run;
    snprintf(r->status, sizeof r->status, "exited 1: %s: boom", SCHEDLIVE_FENCE_WORD);
}

static const LiveRunOps DYING = {.name = "dying",
                                 .start = dying_start,
                                 .signal = standin_signal,
                                 .step = dying_step,
                                 .rank0_saved = standin_running,
                                 STANDIN_OPS};

/* A job is left failed at its second death in a row, within death_window_s of the first; a
 * death later than that is a first again (it was: the second death of the whole run, a day
 * apart or not). The driver is stepped at chosen times: at t0 run 1 dies and run 2 starts;
 * 60 s later (window 30 s) run 2 dies as a first death again and run 3 starts; 10 ms after,
 * run 3's death is the second in a row. */
Test(schedlive, only_a_second_death_soon_after_the_first_leaves_a_job_failed)
{
    static LiveRig r;
    liverig_open_with(&r, standin_two_by_two(),
                      &(SchedLiveOptions){.time_scale = 1, .backend = &DYING, .death_window_s = 30});
    SchedLiveJob j;
    int64_t t0 = clock_now_ms();
    for (int i = 0; i < 50 && (schedlive_job(r.l, 0, &j), j.deaths < 1); i++)
        schedlive_step(r.l, NULL, 0, t0 += 20); /* a tick is 10 ms */
    cr_assert_eq(j.deaths, 1, "deaths %d: %s", j.deaths, r.text);
    cr_assert(!j.failed, "%s", r.text);
    schedlive_step(r.l, NULL, 0, t0 += 60000);
    schedlive_job(r.l, 0, &j);
    cr_assert_eq(j.deaths, 2, "%s", r.text);
    cr_assert(!j.failed, "a death 60 s after the last (window 30 s) is a first: %s", r.text);
    cr_assert(strstr(r.text, ": restarting fresh (no checkpoint yet) (its last death was over "
                             "30 s ago: counted as a first)\n"),
              "%s", r.text);
    schedlive_step(r.l, NULL, 0, t0 += 20);
    schedlive_job(r.l, 0, &j);
    cr_assert_eq(j.deaths, 3, "%s", r.text);
    cr_assert(j.failed, "%s", r.text);
    cr_assert(strstr(r.text, ": second death in a row, left stopped\n"), "%s", r.text);
    cr_assert_eq(j.runs, 3, "%s", r.text);
    schedlive_stop_all(r.l);
    for (int i = 0; i < 100 && !schedlive_done(r.l); i++)
        schedlive_step(r.l, NULL, 0, t0 += 20);
    cr_assert(schedlive_done(r.l), "%s", r.text);
    schedlive_free(r.l);
    sched_free(r.s);
    catalogue_free(r.cat);
    cluster_free(r.c);
}

/* Runs the job template of "echo ran" in dir/d (node rank `rank` of a run on `nnodes` hosts)
 * with /bin/sh and PATH=path, while another process holds the lock file `held` in the job's
 * folder (NULL: none); its exit status, its stderr in err_out, whether the job ran in *ran. */
static int run_fenced_in(const char *shell, const char *dir, const char *path, size_t nnodes,
                         size_t rank, const char *held, int *ran, char *err_out, size_t cap)
{
    Error e;
    char folder[256], script[300], errf[300], outf[300], cmd[2000];
    snprintf(folder, sizeof folder, "%s/d", dir);
    char *t = schedlive_job_template("echo ran", folder, "j", &e);
    cr_assert_not_null(t, "%s", e.msg);
    static const int ids[] = {0};
    const JobHost h[] = {{"h1", 1, ids}, {"h2", 1, ids}, {"h3", 1, ids}};
    cr_assert(nnodes <= sizeof h / sizeof *h);
    JobAlloc a = {.gpus = (int)nnodes, .hosts = h, .n_hosts = nnodes, .node_rank = rank,
                  .resume = ""};
    char *c = jobctl_command(t, &a, &e);
    cr_assert_not_null(c, "%s", e.msg);
    snprintf(script, sizeof script, "%s/script", dir);
    snprintf(errf, sizeof errf, "%s/err", dir);
    snprintf(outf, sizeof outf, "%s/out", dir);
    FILE *f = fopen(script, "w");
    cr_assert(f);
    fprintf(f, "%s\n", c);
    fclose(f);
    free(c);
    free(t);
    if (held)
        snprintf(cmd, sizeof cmd,
                 "mkdir -p '%s/j' && flock '%s/j/%s' sh -c \"PATH='%s' %s '%s'\" >'%s' "
                 "2>'%s'",
                 folder, folder, held, path, shell, script, outf, errf);
    else
        snprintf(cmd, sizeof cmd, "PATH='%s' %s '%s' >'%s' 2>'%s'", path, shell, script, outf,
                 errf);
    int st = system(cmd);
    f = fopen(errf, "r");
    cr_assert(f);
    size_t n = fread(err_out, 1, cap - 1, f);
    err_out[n] = 0;
    fclose(f);
    char out[64] = "";
    f = fopen(outf, "r");
    cr_assert(f);
    n = fread(out, 1, sizeof out - 1, f);
    out[n] = 0;
    fclose(f);
    *ran = strcmp(out, "ran\n") == 0;
    return WIFEXITED(st) ? WEXITSTATUS(st) : -1;
}

/* The same with /bin/sh, the shell the job's command runs under (jobctl.c's `sh -c`). */
static int run_fenced(const char *dir, const char *path, size_t nnodes, size_t rank,
                      const char *held, int *ran, char *err_out, size_t cap)
{
    return run_fenced_in("/bin/sh", dir, path, nnodes, rank, held, ran, err_out, cap);
}

static int run_template(const char *dir, const char *path, char *err_out, size_t cap)
{
    int ran;
    return run_fenced(dir, path, 1, 0, NULL, &ran, err_out, cap);
}

/* Regression: `if ! flock -n 9` read a host without flock (127) as a folder another run
 * holds, so the job was tried every 5 s for ever under a wrong reason. Only flock's 1 is
 * the fence; a held lock still is. */
Test(schedlive, the_fence_is_only_a_held_lock_not_a_missing_flock)
{
    char dir[] = "/tmp/td-fence.XXXXXX", bin[64], err[1024], cmd[512];
    cr_assert(mkdtemp(dir));
    snprintf(bin, sizeof bin, "%s/bin", dir);
    snprintf(cmd, sizeof cmd,
             "mkdir '%s' && for c in mkdir chmod mktemp rm mv; do ln -s \"$(command -v $c)\" "
             "'%s'/$c || exit 1; done",
             bin, bin);
    cr_assert_eq(system(cmd), 0);
    int rc = run_template(dir, bin, err, sizeof err);
    cr_assert_eq(rc, 127, "%s", err);
    cr_assert(strstr(err, "flock -n failed (status 127)") && !strstr(err, SCHEDLIVE_FENCE_WORD),
              "%s", err);
    /* with flock, the start gets through; with the lock held elsewhere, it is the fence */
    snprintf(cmd, sizeof cmd, "ln -s \"$(command -v flock)\" '%s/flock'", bin);
    cr_assert_eq(system(cmd), 0);
    cr_assert_eq(run_template(dir, bin, err, sizeof err), 0, "%s", err);
    int ran;
    cr_assert_eq(run_fenced(dir, bin, 1, 0, ".tunedeck-run-0.lock", &ran, err, sizeof err), 75,
                 "%s", err);
    cr_assert(strstr(err, SCHEDLIVE_FENCE_WORD) && !ran, "%s", err);
    snprintf(cmd, sizeof cmd, "rm -rf '%s'", dir);
    cr_assert_eq(system(cmd), 0);
}

/* Regression: the lock was per node rank, so when a job shrank (2 hosts -> 1) an old run's
 * rank 1, left running on a host whose sshd died, was fenced from nothing: the new run's
 * rank 0 took its own lock and both wrote the checkpoint. A held lock of a rank beyond the
 * new run's is the fence too, with the same word and status; only on the new run's rank 0
 * (the test is a try of the lock, which two ranks of one run must not make at once). */
Test(schedlive, the_fence_holds_against_an_old_runs_rank_beyond_the_new_runs_hosts)
{
    char dir[] = "/tmp/td-fence.XXXXXX", err[1024], cmd[300];
    cr_assert(mkdtemp(dir));
    const char *path = getenv("PATH");
    int ran = 1;
    cr_assert_eq(run_fenced(dir, path, 1, 0, ".tunedeck-run-1.lock", &ran, err, sizeof err), 75,
                 "%s", err);
    cr_assert(strstr(err, SCHEDLIVE_FENCE_WORD ": another run of this job still holds its "
                          "folder") && !ran,
              "%s", err);
    ran = 1;
    cr_assert_eq(run_fenced(dir, path, 2, 0, ".tunedeck-run-2.lock", &ran, err, sizeof err), 75,
                 "%s", err);
    cr_assert(strstr(err, SCHEDLIVE_FENCE_WORD) && !ran, "%s", err);
    /* the lock of its own rank 0 is still the fence against a run as large as the old one */
    ran = 1;
    cr_assert_eq(run_fenced(dir, path, 2, 0, ".tunedeck-run-0.lock", &ran, err, sizeof err), 75,
                 "%s", err);
    cr_assert(!ran, "%s", err);
    snprintf(cmd, sizeof cmd, "rm -rf '%s'", dir);
    cr_assert_eq(system(cmd), 0);
}

/* What must not fence a run: a lock file no process holds (every run leaves its files), one
 * whose name is not a rank's (.tunedeck-run-<digits>.lock), and its own ranks' locks (held by
 * its other hosts as it starts); a rank other than 0 tries no other rank's lock. A rank's
 * file the try cannot open fails the run (a death, not the fence), naming the file. */
Test(schedlive, only_a_held_lock_of_a_rank_beyond_the_run_fences_it)
{
    char dir[] = "/tmp/td-fence.XXXXXX", err[1024], cmd[300];
    cr_assert(mkdtemp(dir));
    const char *path = getenv("PATH");
    snprintf(cmd, sizeof cmd,
             "mkdir -p '%s/d/j' && : >'%s/d/j/.tunedeck-run-1.lock' && "
             ": >'%s/d/j/.tunedeck-run-7.lock'",
             dir, dir, dir);
    cr_assert_eq(system(cmd), 0);
    int ran = 0;
    cr_assert_eq(run_fenced(dir, path, 1, 0, NULL, &ran, err, sizeof err), 0, "%s", err);
    cr_assert(ran && !err[0], "%s", err);
    static const char *const not_ranks[] = {".tunedeck-run-1x.lock", ".tunedeck-run-.lock",
                                            ".tunedeck-run-1.lock.old", ".tunedeck-run-*.lock"};
    for (size_t i = 0; i < sizeof not_ranks / sizeof *not_ranks; i++) {
        ran = 0;
        cr_assert_eq(run_fenced(dir, path, 1, 0, not_ranks[i], &ran, err, sizeof err), 0,
                     "%s held: %s", not_ranks[i], err);
        cr_assert(ran, "%s held: %s", not_ranks[i], err);
    }
    ran = 0;
    cr_assert_eq(run_fenced(dir, path, 2, 0, ".tunedeck-run-1.lock", &ran, err, sizeof err), 0,
                 "%s", err);
    cr_assert(ran, "%s", err);
    ran = 0;
    cr_assert_eq(run_fenced(dir, path, 2, 1, ".tunedeck-run-0.lock", &ran, err, sizeof err), 0,
                 "%s", err);
    cr_assert(ran, "%s", err);
    ran = 0;
    cr_assert_eq(run_fenced(dir, path, 2, 1, ".tunedeck-run-2.lock", &ran, err, sizeof err), 0,
                 "%s", err);
    cr_assert(ran, "%s", err);
    /* a rank's name that is no plain file (a folder) is no fence either: the run fails,
     * naming it (the_fence_opens_only_a_plain_file has the others) */
    snprintf(cmd, sizeof cmd, "mkdir '%s/d/j/.tunedeck-run-3.lock'", dir);
    cr_assert_eq(system(cmd), 0);
    ran = 1;
    cr_assert_eq(run_fenced(dir, path, 1, 0, NULL, &ran, err, sizeof err), 2, "%s", err);
    cr_assert(!ran && strstr(err, "tunedeck: .tunedeck-run-3.lock in the job's folder is not a "
                                  "plain file") &&
                  !strstr(err, SCHEDLIVE_FENCE_WORD),
              "%s", err);
    snprintf(cmd, sizeof cmd, "rm -rf '%s'", dir);
    cr_assert_eq(system(cmd), 0);
}

/* Regression: rank 0's try opened every rank's name with `8>>"$lf"`, whatever it was. A
 * symlink was followed: one to a missing file created it wherever it pointed, one to the
 * run's own lock (held by its fd 9) turned the run away for ever; a FIFO blocked the open,
 * the run hung before its job. And under bash as sh (RHEL's, SUSE's) a failed open is status
 * 1, read as flock's "held": a folder of that name was the fence for ever, not a failed run.
 * Each now fails the run (exit 2) naming the file, opened never, under dash and bash alike. */
Test(schedlive, the_fence_opens_only_a_plain_file_and_no_failed_open_reads_as_held)
{
    const char *shells[] = {"/bin/sh", "/bin/bash --posix"};
    size_t n_shells = access("/bin/bash", X_OK) == 0 ? 2 : 1;
    for (size_t s = 0; s < n_shells; s++) {
        char dir[] = "/tmp/td-fence.XXXXXX", err[1024], cmd[600], j[300], elsewhere[300];
        cr_assert(mkdtemp(dir));
        snprintf(j, sizeof j, "%s/d/j", dir);
        snprintf(elsewhere, sizeof elsewhere, "%s/elsewhere", dir);
        const char *path = getenv("PATH");
        static const char *const setups[] = {
            "mkdir '%s/.tunedeck-run-3.lock'",
            "ln -s '%s/../../elsewhere' '%s/.tunedeck-run-4.lock'",
            "ln -s .tunedeck-run-0.lock '%s/.tunedeck-run-5.lock'",
            "mkfifo '%s/.tunedeck-run-6.lock'",
        };
        for (size_t i = 0; i < sizeof setups / sizeof *setups; i++) {
            snprintf(cmd, sizeof cmd, "rm -rf '%s' && mkdir -p '%s'", j, j);
            cr_assert_eq(system(cmd), 0);
            char setup[600];
            snprintf(setup, sizeof setup, setups[i], j, j);
            cr_assert_eq(system(setup), 0, "%s", setup);
            /* a reader holds the FIFO open, so an open of it for writing returns (the old
             * try then ran the job) instead of hanging the test */
            int fifo = -1;
            if (i == 3) {
                char fp[400];
                snprintf(fp, sizeof fp, "%s/.tunedeck-run-6.lock", j);
                fifo = open(fp, O_RDWR);
                cr_assert(fifo >= 0);
            }
            int ran = 1;
            int rc = run_fenced_in(shells[s], dir, path, 1, 0, NULL, &ran, err, sizeof err);
            if (fifo >= 0)
                close(fifo);
            cr_assert(rc == 2 && !ran && strstr(err, "in the job's folder is not a plain file") &&
                          !strstr(err, SCHEDLIVE_FENCE_WORD),
                      "%s, %s: exit %d: %s", shells[s], setup, rc, err);
            cr_assert_neq(access(elsewhere, F_OK), 0, "%s: the symlink's target was created",
                          shells[s]);
        }
        /* a plain file the try cannot open is a failed run too, not the fence (root opens
         * any, so only checked as another user) */
        if (geteuid() != 0) {
            snprintf(cmd, sizeof cmd,
                     "rm -rf '%s' && mkdir -p '%s' && : >'%s/.tunedeck-run-3.lock' && "
                     "chmod 0 '%s/.tunedeck-run-3.lock'",
                     j, j, j, j);
            cr_assert_eq(system(cmd), 0);
            int ran = 1;
            int rc = run_fenced_in(shells[s], dir, path, 1, 0, NULL, &ran, err, sizeof err);
            cr_assert(rc == 2 && !ran && strstr(err, "tunedeck: cannot open .tunedeck-run-3.lock") &&
                          !strstr(err, SCHEDLIVE_FENCE_WORD),
                      "%s: exit %d: %s", shells[s], rc, err);
        }
        snprintf(cmd, sizeof cmd, "rm -rf '%s'", dir);
        cr_assert_eq(system(cmd), 0);
    }
}

/* Regression: a rank's own lock was opened with `exec 9>>` whatever its name held, while rank
 * 0's tries of other ranks' locks refused anything but a plain file. A symlink was followed
 * (one to a missing file created it wherever it pointed, and the lock taken was that file's),
 * a FIFO blocked the open for ever before the job, a folder ended dash with its own words
 * (bash: status 1). Each now fails the run, exit 2, naming the file, unopened, as rank 0's
 * tries do: on rank 0 of one host and on rank 1 of two, under dash and bash alike. */
Test(schedlive, a_ranks_own_lock_is_opened_only_as_a_plain_file)
{
    const char *shells[] = {"/bin/sh", "/bin/bash --posix"};
    size_t n_shells = access("/bin/bash", X_OK) == 0 ? 2 : 1;
    static const struct {
        size_t nnodes, rank;
    } runs[] = {{1, 0}, {2, 1}};
    static const char *const setups[] = {
        "mkdir '%s/%s'",
        "ln -s ../../elsewhere '%s/%s'",
        ": >'%s/../../theirs' && ln -s ../../theirs '%s/%s'",
        "mkfifo '%s/%s'",
    };
    for (size_t s = 0; s < n_shells; s++)
        for (size_t r = 0; r < sizeof runs / sizeof *runs; r++)
            for (size_t i = 0; i < sizeof setups / sizeof *setups; i++) {
                char dir[] = "/tmp/td-fence.XXXXXX", err[1024], cmd[900], j[300], lock[64];
                char elsewhere[300], setup[800];
                cr_assert(mkdtemp(dir));
                snprintf(j, sizeof j, "%s/d/j", dir);
                snprintf(elsewhere, sizeof elsewhere, "%s/elsewhere", dir);
                snprintf(lock, sizeof lock, ".tunedeck-run-%zu.lock", runs[r].rank);
                snprintf(cmd, sizeof cmd, "mkdir -p '%s'", j);
                cr_assert_eq(system(cmd), 0);
                if (i == 2)
                    snprintf(setup, sizeof setup, setups[i], j, j, lock);
                else
                    snprintf(setup, sizeof setup, setups[i], j, lock);
                cr_assert_eq(system(setup), 0, "%s", setup);
                /* a reader holds the FIFO open, so the old open for writing returned (and
                 * the job ran) instead of hanging the test */
                int fifo = -1;
                if (i == 3) {
                    char fp[400];
                    snprintf(fp, sizeof fp, "%s/%s", j, lock);
                    fifo = open(fp, O_RDWR);
                    cr_assert(fifo >= 0);
                }
                int ran = 1;
                int rc = run_fenced_in(shells[s], dir, getenv("PATH"), runs[r].nnodes, runs[r].rank,
                                       NULL, &ran, err, sizeof err);
                if (fifo >= 0)
                    close(fifo);
                char want[200];
                snprintf(want, sizeof want,
                         "tunedeck: %s in the job's folder is not a plain file (a rank's lock "
                         "is one): not opened; remove it",
                         lock);
                cr_assert(rc == 2 && !ran && strstr(err, want) &&
                              !strstr(err, SCHEDLIVE_FENCE_WORD),
                          "%s, rank %zu of %zu, %s: exit %d: %s", shells[s], runs[r].rank,
                          runs[r].nnodes, setup, rc, err);
                cr_assert_neq(access(elsewhere, F_OK), 0, "%s: the symlink's target was created",
                              shells[s]);
                snprintf(cmd, sizeof cmd, "rm -rf '%s'", dir);
                cr_assert_eq(system(cmd), 0);
            }
}

/* A rank's own lock file it cannot open fails the run in tunedeck's words, exit 2 (dash
 * ended with its own, bash went on with status 1), never as the fence; and a plain file
 * left by an earlier run, or none, is taken as before. Root opens any file, so the refusal
 * is only checked as another user. */
Test(schedlive, a_ranks_own_lock_it_cannot_open_fails_the_run_in_our_words)
{
    const char *shells[] = {"/bin/sh", "/bin/bash --posix"};
    size_t n_shells = access("/bin/bash", X_OK) == 0 ? 2 : 1;
    for (size_t s = 0; s < n_shells; s++) {
        char dir[] = "/tmp/td-fence.XXXXXX", err[1024], cmd[600];
        cr_assert(mkdtemp(dir));
        int ran = 0;
        cr_assert_eq(
            run_fenced_in(shells[s], dir, getenv("PATH"), 1, 0, NULL, &ran, err, sizeof err), 0,
            "%s: no lock file yet: %s", shells[s], err);
        cr_assert(ran, "%s: %s", shells[s], err);
        ran = 0; /* the file that run left, a plain one */
        cr_assert_eq(
            run_fenced_in(shells[s], dir, getenv("PATH"), 1, 0, NULL, &ran, err, sizeof err), 0,
            "%s: a lock file left before: %s", shells[s], err);
        cr_assert(ran, "%s: %s", shells[s], err);
        if (geteuid() != 0) {
            snprintf(cmd, sizeof cmd, "chmod 0 '%s/d/j/.tunedeck-run-0.lock'", dir);
            cr_assert_eq(system(cmd), 0);
            ran = 1;
            int rc =
                run_fenced_in(shells[s], dir, getenv("PATH"), 1, 0, NULL, &ran, err, sizeof err);
            cr_assert(rc == 2 && !ran &&
                          strstr(err, "tunedeck: cannot open .tunedeck-run-0.lock to take its "
                                      "lock") &&
                          !strstr(err, SCHEDLIVE_FENCE_WORD),
                      "%s: exit %d: %s", shells[s], rc, err);
        }
        snprintf(cmd, sizeof cmd, "rm -rf '%s'", dir);
        cr_assert_eq(system(cmd), 0);
    }
}

/* A backend whose first run reports steps 1..5 and dies (rank 0 saved: a checkpoint at 5),
 * and whose later runs die at once, before any progress line (a job that cannot resume). */
static int resume_dying_starts;

static void *resume_dying_start(void *ctx, const LiveRunSpec *spec, LiveRefusal *refusal,
                                Error *err)
{
    (void)ctx, (void)spec, (void)err, (void)refusal;
    StandinRun *r = standin_run_new(sizeof(StandinRun));
    if (resume_dying_starts++ > 0)
        snprintf(r->status, sizeof r->status, "exited 1: ValueError: cannot resume");
    return r;
}

static void resume_dying_step(void *run)
{
    StandinRun *r = run;
    if (r->status[0])
        return;
    if (r->p.seen == 5) {
        snprintf(r->status, sizeof r->status, "exited 1");
        return;
    }
    standin_says_step(&r->p, r->p.seen + 1, NAN);
}

static const LiveRunOps RESUME_DYING = {.name = "resume-dying",
                                        .start = resume_dying_start,
                                        .signal = standin_signal,
                                        .step = resume_dying_step,
                                        .rank0_saved = standin_ready,
                                        STANDIN_OPS};

static int has_failed(const SchedLiveJob *j)
{
    return j->failed;
}

/* Regression: a run that died before its own first progress line was said to have died
 * "after step 5 (its last progress line; ...)", the step of the run before it: the log read
 * as if the run that could not resume had trained to step 5. Where a run stood is its own
 * lines' (docs/scheduler-live.md's "before its first progress line" case). */
Test(schedlive, a_run_that_dies_before_its_own_first_line_says_so_not_the_last_runs_step)
{
    static LiveRig r;
    resume_dying_starts = 0;
    liverig_open(&r, standin_two_by_two(), &RESUME_DYING, 1);
    SchedLiveJob j;
    liverig_run_until(&r, has_failed, 20000, &j);
    cr_assert(j.failed, "%s", r.text);
    cr_assert(strstr(r.text, "j0: died unexpectedly after step 5 (its last progress line; "
                             "exited 1): restarting from its checkpoint\n"),
              "%s", r.text);
    cr_assert(strstr(r.text, "j0: died unexpectedly before its first progress line (exited 1: "
                             "ValueError: cannot resume): second death in a row, left stopped\n"),
              "%s", r.text);
    cr_assert_null(strstr(r.text, "j0: died unexpectedly after step 5 (its last progress line; "
                                  "exited 1: ValueError"),
                   "%s", r.text);
    liverig_close(&r);
}

/* A backend whose runs of j0 die at their first step (exit 1) and whose other runs train. */
static void *j0_dies_start(void *ctx, const LiveRunSpec *spec, LiveRefusal *refusal, Error *err)
{
    (void)ctx, (void)err, (void)refusal;
    StandinRun *r = standin_run_new(sizeof(StandinRun));
    if (strcmp(spec->name, "j0") == 0)
        snprintf(r->status, sizeof r->status, "exited 1: boom");
    return r;
}

static const LiveRunOps J0_DIES = {.name = "j0-dies",
                                   .start = j0_dies_start,
                                   .signal = standin_signal,
                                   .step = fenced_step,
                                   .rank0_saved = standin_running,
                                   STANDIN_OPS};

/* Regression: a job left failed at its second death kept its GPUs in the model, and the
 * next decision, which grew it (doubling), cleared `failed` and started it again
 * (schedlive_enact.c), against docs/scheduler-live.md ("left stopped"). Now its GPUs go back
 * at once, no decision places it again, and j1, arriving later, runs. Stepped at chosen
 * times: ten decisions (interval 60 s at ×1) after the failure. */
Test(schedlive, a_job_left_failed_gives_its_gpus_back_and_is_never_started_again)
{
    Error e;
    Catalogue *cat = fixture_catalogue();
    SchedState *s = fixture_doubling_with_j0(cat);
    /* j1 arrives at 300 s: until then the doubling policy would grow j0 at each decision */
    cr_assert_eq(sched_submit(s, &(SchedJobSpec){"j1", "cifar10", 300.0, 1, 128}, &e), 0, "%s",
                 e.msg);
    Cluster *c = standin_two_by_two();
    char text[16384] = "";
    FixtureLog log = {.text = text, .cap = sizeof text};
    SchedLive *l = schedlive_new(s, c, NULL,
                                 &(SchedLiveOptions){.time_scale = 1,
                                                     .backend = &J0_DIES,
                                                     .tick_s = 0.01,
                                                     .log = fixture_log_line,
                                                     .userdata = &log},
                                 &e);
    cr_assert_not_null(l, "%s", e.msg);
    SchedLiveJob j0, j1;
    int64_t t = clock_now_ms();
    for (int i = 0; i < 50 && (schedlive_job(l, 0, &j0), !j0.failed); i++)
        schedlive_step(l, NULL, 0, t += 20);
    cr_assert(j0.failed, "%s", text);
    cr_assert_eq(j0.runs, 2, "%s", text);
    SchedJobInfo info;
    cr_assert_eq(sched_job_info(s, 0, &info), 0);
    cr_assert_eq(info.gpus, 0, "the failed job's GPUs are back in the model: %s", text);
    cr_assert_eq(info.state, SCHED_JOB_FAILED, "%s", text);
    cr_assert(strstr(text, "j0: failed: its "), "%s", text);
    size_t said = strlen(text);
    for (int d = 0; d < 10; d++)
        for (int i = 0; i < 10; i++)
            schedlive_step(l, NULL, 0, t += 6000);
    schedlive_job(l, 0, &j0);
    schedlive_job(l, 1, &j1);
    cr_assert(j0.failed, "%s", text);
    cr_assert_eq(j0.runs, 2, "a failed job is never started again: %s", text + said);
    cr_assert_null(strstr(text + said, "j0: started"), "%s", text + said);
    cr_assert_eq(sched_job_info(s, 0, &info), 0);
    cr_assert_eq(info.gpus, 0, "no decision placed it again: %s", text + said);
    cr_assert(j1.running && j1.deaths == 0, "%s", text);
    fixture_sched_capacity(s);
    cr_assert(!schedlive_done(l), "j1 still runs: %s", text);
    schedlive_stop_all(l);
    for (int i = 0; i < 100 && !schedlive_done(l); i++)
        schedlive_step(l, NULL, 0, t += 20);
    cr_assert(schedlive_done(l), "%s", text);
    schedlive_free(l);
    sched_free(s);
    catalogue_free(cat);
    cluster_free(c);
}
