#include <criterion/criterion.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/wait.h>

#include "core/base/clock.h"
#include "core/sched/catalogue.h"
#include "remote/live/jobctl.h"
#include "remote/live/liverun.h"
#include "remote/live/schedlive.h"
#include "tests/support/fixtures.h"
#include "tests/support/livestandin.h"
#include "tests/support/ssh_hermetic.h"


Test(schedlive, node_sizes_from_the_inventory)
{
    Error e;
    SchedNodeGroup *g;
    size_t n;
    Cluster *c = standin_cluster(4, 4);
    cr_assert_eq(schedlive_node_groups(c, 0, &g, &n, &e), 0, "%s", e.msg);
    cr_assert_eq(n, 2, "two machine types are two groups, found %zu", n);
    cr_assert_eq(g[0].gpus_per_node, 4);
    cr_assert_eq(g[1].gpus_per_node, 4);
    free(g);
    cluster_free(c);
    c = standin_cluster(4, 2); /* mixed sizes are the machines' own, not an error */
    cr_assert_eq(schedlive_node_groups(c, 0, &g, &n, &e), 0, "%s", e.msg);
    cr_assert_eq(n, 2);
    cr_assert_eq(g[0].gpus_per_node, 4);
    cr_assert_eq(g[1].gpus_per_node, 2);
    cr_assert_str_eq(g[1].type, "b");
    free(g);
    cr_assert_eq(schedlive_node_groups(c, 8, &g, &n, &e), 0, "%s", e.msg);
    cr_assert(g[0].gpus_per_node == 8 && g[1].gpus_per_node == 8, "the override sizes all");
    free(g);
    cluster_free(c);
    c = standin_cluster(0, 0);
    cr_assert_eq(schedlive_node_groups(c, 0, &g, &n, &e), -1);
    cr_assert(strstr(e.msg, "no GPU") != NULL, "%s", e.msg);
    cluster_free(c);
}

Test(schedlive, checkpoint_name_from_the_template)
{
    char ck[64];
    cr_assert_eq(schedlive_template_checkpoint("w --job --checkpoint a.ckpt --resume {resume}", ck,
                                               sizeof ck),
                 0);
    cr_assert_str_eq(ck, "a.ckpt");
    cr_assert_eq(schedlive_template_checkpoint("w --checkpoint=/x/b.ckpt", ck, sizeof ck), 0);
    cr_assert_str_eq(ck, "/x/b.ckpt");
    cr_assert_eq(schedlive_template_checkpoint("w --resume {resume}", ck, sizeof ck), -1);
    cr_assert_eq(schedlive_template_checkpoint("w --checkpoint {resume}", ck, sizeof ck), -1);
}

/* Each job runs in its own folder: only a relative name is a checkpoint per job. An absolute
 * one was taken, and every job of the workload resumed from one file (regression); an empty
 * --checkpoint-file or a $VAR one was never found, and every resize started afresh. */
Test(schedlive, checkpoint_name_must_be_per_job)
{
    static const struct {
        const char *command, *flag, *why;
    } bad[] = {
        {"w --checkpoint /x/b.ckpt --resume {resume}", NULL, "inv.json: field 'job_command'"},
        {"w --checkpoint ~/b.ckpt", NULL, "inv.json: field 'job_command'"},
        {"w --checkpoint $HOME/b.ckpt", NULL, "inv.json: field 'job_command'"},
        {"w --resume {resume}", "", "--checkpoint-file"},
        {"w --resume {resume}", "/shared/ck.pt", "--checkpoint-file"},
        {"w --resume {resume}", "ck`id`.pt", "--checkpoint-file"},
        /* quoted or escaped in the template: the shell took the quotes off for the job, but
         * {resume} passed them on, and the resumed job looked for another file (regression) */
        {"w --checkpoint \"ck.pt\" --resume {resume}", NULL, "inv.json: field 'job_command'"},
        {"w --checkpoint 'ck.pt' --resume {resume}", NULL, "inv.json: field 'job_command'"},
        {"w --checkpoint ck\\ 1.pt", NULL, "inv.json: field 'job_command'"},
        /* out of the job's folder through "..": one file for every job, as an absolute one
         * (regression) */
        {"w --checkpoint ../ck.pt", NULL, "inv.json: field 'job_command'"},
        {"w --resume {resume}", "sub/../../ck.pt", "--checkpoint-file"},
        {"w --resume {resume}", "..", "--checkpoint-file"},
    };
    for (size_t i = 0; i < sizeof bad / sizeof bad[0]; i++) {
        SchedLiveOptions o = {.checkpoint = bad[i].flag};
        char ck[64];
        Error e = {0};
        cr_assert_eq(schedlive_check_command(bad[i].command, "inv.json", &o, ck, sizeof ck, &e),
                     -1, "%s", bad[i].command);
        cr_assert_eq(e.kind, ERROR_INPUT);
        cr_assert(strncmp(e.msg, bad[i].why, strlen(bad[i].why)) == 0, "%s", e.msg);
        cr_assert(strstr(e.msg, "expected a file name relative to the job's folder") != NULL,
                  "%s", e.msg);
    }
    SchedLiveOptions o = {0};
    char ck[64];
    Error e = {0};
    cr_assert_eq(schedlive_check_command("w --checkpoint sub/a.ckpt", "inv.json", &o, ck,
                                         sizeof ck, &e),
                 0, "%s", e.msg);
    cr_assert_str_eq(ck, "sub/a.ckpt");
    cr_assert_eq(schedlive_check_command("w --checkpoint ..a/b..ckpt", "inv.json", &o, ck,
                                         sizeof ck, &e),
                 0, "%s", e.msg); /* ".." inside a name leaves nothing */
    o.checkpoint = "b.ckpt";
    cr_assert_eq(schedlive_check_command("w", "inv.json", &o, ck, sizeof ck, &e), 0, "%s", e.msg);
    cr_assert_str_eq(ck, "b.ckpt");
}

/* Regression: with --slurm and no --job-command the refusal named only a field 'job_command'
 * of an inventory called "slurm", which the operator never wrote: the flag is named too. */
Test(schedlive, a_missing_job_command_names_the_flag_and_the_field)
{
    SchedLiveOptions o = {0};
    char ck[64];
    Error e = {0};
    cr_assert_eq(schedlive_check_command(NULL, "--slurm", &o, ck, sizeof ck, &e), -1);
    cr_assert_eq(e.kind, ERROR_INPUT);
    cr_assert_str_eq(e.msg, "--slurm: field 'job_command': live mode needs the job command "
                            "template (expected --job-command T, or \"job_command\" in the "
                            "inventory)");
}

/* A workload takes names of 511 bytes, a folder only 255: a longer one failed at mkdir when
 * its job first started, mid-run. Refused before, naming the job and the limit. */
Test(schedlive, a_job_name_longer_than_a_folder_name_is_refused_before_the_run)
{
    char name[300];
    memset(name, 'a', sizeof name - 1);
    name[sizeof name - 1] = 0;
    Error e;
    cr_assert_null(schedlive_job_template("w", "/d", name, &e));
    cr_assert_eq(e.kind, ERROR_INPUT);
    cr_assert(strstr(e.msg, "job 'aaaa") == e.msg, "%s", e.msg);
    cr_assert(strstr(e.msg, "live mode needs a name of at most 255 bytes (it names the job's "
                            "folder), found 299 bytes"),
              "%s", e.msg);
    name[255] = 0;
    char *t = schedlive_job_template("w", "/d", name, &e);
    cr_assert_not_null(t, "255 bytes: %s", e.msg);
    free(t);
}

/* The text sets no mark: each member's wrapping shell exports its own (jobctl_start), and
 * the text passes it on to the job rather than set one mark for every member of the run. */
Test(schedlive, job_template_without_a_mark_passes_the_wrapping_shells_on)
{
    Error e;
    char *t = schedlive_job_template("w", "/d", "j-0", &e);
    cr_assert_not_null(t, "%s", e.msg);
    cr_assert_null(strstr(t, "TUNEDECK_RUN_MARK="), "%s", t);
    cr_assert_not_null(strstr(t, "TUNEDECK_JOB='j-0' && export TUNEDECK_JOB TUNEDECK_RUN_MARK && "),
                       "%s", t);
    free(t);
}

Test(schedlive, job_template_runs_in_the_jobs_folder_quoted)
{
    Error e;
    char *t = schedlive_job_template("w --gpus {gpus}", "/d ir", "j-0", &e);
    cr_assert_not_null(t, "%s", e.msg);
    /* the folder private whatever the remote umask, and the hostfile renamed into place so
     * that a symlink planted there is never written through (regression), its name removed
     * first so that a symlink to a folder does not take the file in (regression) */
    cr_assert_str_eq(t, "td_term=; trap 'td_term=1' TERM; (umask 077 && mkdir -p '/d ir/j-0') && "
                        "chmod 700 '/d ir/j-0' && cd '/d ir/j-0' && "
                        "lf=.tunedeck-run-{node_rank}.lock && if [ -f \"$lf\" ] && "
                        "[ ! -h \"$lf\" ]; then :; elif [ -e \"$lf\" ] || [ -h \"$lf\" ]; "
                        "then echo \"tunedeck: $lf in the job's folder is not a plain file "
                        "(a rank's lock is one): not opened; remove it\" >&2; exit 2; fi && "
                        "if (: >>\"$lf\") 2>/dev/null && command exec 9>>\"$lf\"; then :; "
                        "else echo \"tunedeck: cannot open $lf to take its lock\" >&2; "
                        "exit 2; fi && if flock -n 9; then :; "
                        "else fr=$?; if [ $fr = 1 ]; then echo "
                        "'tunedeck-folder-busy: another run of this job still holds its folder' "
                        ">&2; exit 75; fi; echo \"tunedeck: flock -n failed (status $fr): the "
                        "job's fence needs util-linux's flock on this host\" >&2; exit $fr; fi && "
                        "if [ {node_rank} = 0 ]; then for lf in .tunedeck-run-*.lock; do "
                        "case $lf in .tunedeck-run-.lock|.tunedeck-run-*[!0-9]*.lock) continue;; "
                        "esac; lr=0; while [ $lr -lt {nnodes} ] && "
                        "[ \"$lf\" != .tunedeck-run-$lr.lock ]; do lr=$((lr+1)); done; "
                        "[ $lr = {nnodes} ] || continue; "
                        "if [ -f \"$lf\" ] && [ ! -h \"$lf\" ]; then :; "
                        "elif [ -e \"$lf\" ] || [ -h \"$lf\" ]; then echo \"tunedeck: $lf in "
                        "the job's folder is not a plain file (a rank's lock is one): not "
                        "opened; remove it\" >&2; exit 2; else continue; fi; "
                        "fr=open; if flock -n 8; then fr=0; else fr=$?; fi 8>>\"$lf\"; "
                        "[ $fr = 0 ] && continue; if [ $fr = 1 ]; then echo "
                        "'tunedeck-folder-busy: another run of this job still holds its folder' "
                        ">&2; exit 75; fi; if [ $fr = open ]; then echo \"tunedeck: cannot open "
                        "$lf to try its lock\" >&2; exit 2; fi; "
                        "echo \"tunedeck: flock -n on $lf failed (status $fr)\" "
                        ">&2; exit $fr; done; fi && "
                        "TUNEDECK_JOB='j-0' && export TUNEDECK_JOB TUNEDECK_RUN_MARK && "
                        "CUDA_VISIBLE_DEVICES={gpu_ids} && export CUDA_VISIBLE_DEVICES && "
                        "hf=$(mktemp tunedeck-hostfile.XXXXXX) && "
                        "printf '%s\\n' {hostfile_text} > \"$hf\" && "
                        "if [ -L tunedeck-hostfile ] || [ ! -f tunedeck-hostfile ]; then "
                        "rm -f tunedeck-hostfile; fi && "
                        "mv -f \"$hf\" tunedeck-hostfile && if [ -n \"$td_term\" ]; then "
                        "echo 'tunedeck: asked to stop before the job started: not started' "
                        ">&2; exit 143; fi && w --gpus {gpus}");
    /* the placeholders still fill (and nothing else looks like one): the job sees only
     * its own GPUs, and its hostfile names every host with its slots */
    static const int ids[] = {2, 3};
    const JobHost h[] = {{"h1", 2, ids}};
    JobAlloc a = {.gpus = 2, .hosts = h, .n_hosts = 1, .resume = ""};
    char *cmd = jobctl_command(t, &a, &e);
    cr_assert_not_null(cmd, "%s", e.msg);
    cr_assert(strstr(cmd, "w --gpus '2'") != NULL, "%s", cmd);
    cr_assert(strstr(cmd, "CUDA_VISIBLE_DEVICES='2,3' && export") != NULL, "%s", cmd);
    cr_assert(strstr(cmd, "printf '%s\\n' 'h1:2' > \"$hf\" && if [ -L tunedeck-hostfile ] || "
                         "[ ! -f tunedeck-hostfile ]; then rm -f tunedeck-hostfile; fi && "
                         "mv -f \"$hf\" tunedeck-hostfile") !=
                  NULL,
              "%s", cmd);
    free(cmd);
    free(t);
    /* regression: a job folder starting with '-' reached mkdir and cd as their options */
    char *dash = schedlive_job_template("w", "-m777", "j", &e);
    cr_assert_not_null(dash, "%s", e.msg);
    cr_assert(strstr(dash, "mkdir -p './-m777/j') && chmod 700 './-m777/j' && cd './-m777/j' && "),
              "%s", dash);
    free(dash);
    cr_assert_null(schedlive_job_template("w", "d", "../x", &e));
    cr_assert(strstr(e.msg, "'../x'") != NULL, "%s", e.msg);
    cr_assert_null(schedlive_job_template("w", "d", "a;b", &e));
    cr_assert_null(schedlive_job_template("w", "d{gpus}", "a", &e));
    cr_assert(strstr(e.msg, "d{gpus}") != NULL, "%s", e.msg);
    /* regression: a folder past the path buffer was cut short, naming another folder that
     * the job ran and resumed in */
    char long_dir[5000];
    memset(long_dir, 'd', sizeof long_dir - 1);
    long_dir[sizeof long_dir - 1] = 0;
    cr_assert_null(schedlive_job_template("w", long_dir, "j7", &e));
    cr_assert(strstr(e.msg, "job 'j7': its folder ddd") && strstr(e.msg, "is longer than 4095"),
              "%s", e.msg);
}

/* A job whose host refuses: the start is reported as a death, restarted once, then the job
 * is left failed; the driver still ends cleanly. */
Test(schedlive, placement_text_with_indices_or_counts_cut_at_a_whole_host)
{
    const char *names[] = {"h1", "h2"};
    int slots[] = {2, 1}, ids[] = {0, 3, 1};
    char out[64];
    schedlive_where_text(names, slots, ids, 2, out, sizeof out);
    cr_assert_str_eq(out, "h1:0+3,h2:1");
    schedlive_where_text(names, slots, NULL, 2, out, sizeof out);
    cr_assert_str_eq(out, "h1:2,h2:1");
    schedlive_where_text(names, slots, ids, 2, out, 9);
    cr_assert_str_eq(out, "h1:0+3");
    schedlive_where_text(names, slots, ids, 2, out, 3);
    cr_assert_str_eq(out, "");
}

/* The doubling policy on 2 nodes of 2 GPUs with one job, j0 (cifar10 on 2 GPUs, at once). */
Test(schedlive, a_job_that_cannot_run_is_restarted_once_then_failed)
{
    Error e;
    Cluster *c = standin_cluster(2, 2);
    c->ssh.port = 1; /* nothing listens: connection refused */
    c->ssh.connect_timeout_s = 2;
    snprintf(c->job_command, sizeof c->job_command, "w --gpus {gpus} --checkpoint c.ckpt");
    Catalogue *cat = fixture_catalogue();
    SchedState *s = fixture_doubling_with_j0(cat);
    HostPoolOptions po = {.ssh_config = TEST_SSH_CONFIG};
    HostPool *p = hostpool_new(&po, &e);
    cr_assert_not_null(p, "%s", e.msg);
    cr_assert_eq(hostpool_add_cluster(p, c, &e), 0, "%s", e.msg);
    static char log[8192];
    FixtureLog fl = {.text = log, .cap = sizeof log};
    /* the job folders vouched for, as schedule --live's check does for the hosts it reached:
     * these never answer, and a host not checked would take no job */
    static const unsigned char checked[2] = {1, 1};
    SchedLiveOptions o = {.time_scale = 100,
                          .tick_s = 0.05,
                          .log = fixture_log_line,
                          .userdata = &fl,
                          .folders_checked = checked};
    SchedLive *l = schedlive_new(s, c, p, &o, &e);
    cr_assert_not_null(l, "%s", e.msg);
    SchedLiveJob j;
    int64_t until = clock_now_ms() + 10000;
    do {
        struct pollfd fds[16];
        int64_t dl = 0;
        size_t n = schedlive_pollfds(l, fds, 16, &dl);
        int64_t left = dl - clock_now_ms();
        int rc = poll(fds, n, left < 0 ? 0 : (int)left);
        schedlive_step(l, fds, rc > 0 ? n : 0, clock_now_ms());
        schedlive_job(l, 0, &j);
    } while (!j.failed && clock_now_ms() < until);
    cr_assert(j.failed, "%s", log);
    cr_assert(strstr(log, "decision t=0s: start j0") != NULL, "%s", log);
    cr_assert(strstr(log, "j0: died unexpectedly") != NULL, "%s", log);
    cr_assert(strstr(log, "second death in a row, left stopped") != NULL, "%s", log);
    cr_assert_eq(j.runs, 2);
    cr_assert_eq(j.deaths, 2);
    cr_assert_eq(j.step, -1);
    cr_assert(!j.running);
    schedlive_stop_all(l);
    schedlive_step(l, NULL, 0, clock_now_ms());
    cr_assert(schedlive_done(l), "%s", log);
    schedlive_free(l);
    hostpool_free(p);
    sched_free(s);
    catalogue_free(cat);
    cluster_free(c);
}

/* A backend whose runs hand the driver two progress lines per step, as the Slurm backend does
 * when it reads a job's file after a late wake-up: the run's first line, then one a progress
 * interval later. Its first run dies after them with its checkpoint at the last line's step,
 * and a run given {resume} starts from that checkpoint. */
typedef struct {
    StandinRun base;
    long next; /* the step of its next line */
    int steps, resumed;
} TwoLineRun;

enum { TWO_LINE_GAP = 240 };
static long two_line_checkpoint = -1; /* the step the last dead run saved */
static int two_line_ignores_resume;    /* a job (or template) that drops {resume} */

static void *two_line_start(void *ctx, const LiveRunSpec *spec, LiveRefusal *refusal, Error *err)
{
    (void)ctx, (void)refusal;
    (void)err;
    TwoLineRun *r = standin_run_new(sizeof *r);
    r->resumed = spec->alloc->resume[0] != 0;
    r->next = r->resumed && !two_line_ignores_resume ? two_line_checkpoint + 1 : 1;
    return r;
}

/* First step: its two lines; second: a first run dies, its checkpoint at the last one. */
static void two_line_step(void *run)
{
    TwoLineRun *r = run;
    if (r->base.status[0])
        return;
    if (++r->steps == 1) {
        for (int i = 0; i < 2; i++, r->next += TWO_LINE_GAP)
            standin_says_step(&r->base.p, r->next, i ? 0.25 : 0.5);
    } else if (r->steps == 2 && !r->resumed) {
        two_line_checkpoint = r->base.p.step;
        snprintf(r->base.status, sizeof r->base.status, "exited 1");
    }
}

static int two_line_saved(const void *run)
{
    return !((const TwoLineRun *)run)->resumed;
}

static const LiveRunOps TWO_LINES = {.name = "two-lines",
                                     .start = two_line_start,
                                     .signal = standin_signal,
                                     .step = two_line_step,
                                     .rank0_saved = two_line_saved,
                                     STANDIN_OPS};

static int has_resumed(const SchedLiveJob *j)
{
    return j->resumed_step >= 0;
}

/* Regression: the driver said a run's first step (and a resumed run's "resumed at step") from
 * the latest line of the step that brought its first ones, so a Slurm run whose first read
 * held two lines "resumed at" its checkpoint's step + 1 + one progress interval, and the
 * slurm_live suite's resume == stopped + 1 failed under load. */
Test(schedlive, a_runs_first_step_is_its_first_line_when_one_read_brings_several)
{
    static LiveRig r;
    liverig_open(&r, standin_two_by_two(), &TWO_LINES, 1);
    SchedLiveJob j;
    liverig_run_until(&r, has_resumed, 5000, &j);
    cr_assert(strstr(r.text, "j0: run 1 on m0 (2 GPUs) first step 1, loss 0.5000\n"), "%s", r.text);
    cr_assert(strstr(r.text, "j0: died unexpectedly after step 241 (its last progress line; "
                             "exited 1): restarting from its checkpoint"),
              "%s", r.text);
    cr_assert(strstr(r.text, "j0: run 2 on m0 (2 GPUs) resumed at step 242 (checkpoint at step "
                             "241), loss 0.5000\n"),
              "%s", r.text);
    cr_assert_eq(j.resumed_step, 242);
    cr_assert_eq(j.step, 242 + TWO_LINE_GAP, "the latest line is still the job's step");
    liverig_close(&r);
}

/* The walkthrough's finding: a job_command without {resume} (or a job that ignores it)
 * started afresh at each resize while the log said "resumed at step 1 (checkpoint at step
 * 492)" and nothing more; the driver now says the run did not resume and what it expected. */
Test(schedlive, a_run_that_starts_before_its_checkpoint_is_said_not_to_have_resumed)
{
    static LiveRig r;
    two_line_ignores_resume = 1;
    liverig_open(&r, standin_two_by_two(), &TWO_LINES, 1);
    SchedLiveJob j;
    liverig_run_until(&r, has_resumed, 5000, &j);
    two_line_ignores_resume = 0;
    cr_assert(strstr(r.text, "j0: run 2 on m0 (2 GPUs) resumed at step 1 (checkpoint at step "
                             "241)"),
              "%s", r.text);
    cr_assert(strstr(r.text, "j0: run 2 did not resume: its first step 1 is not after its "
                             "checkpoint's step 241 (expected {resume} in job_command"),
              "%s", r.text);
    liverig_close(&r);
}

/* ... and one that resumes says nothing more. */
Test(schedlive, a_run_that_resumes_is_not_warned_about)
{
    static LiveRig r;
    liverig_open(&r, standin_two_by_two(), &TWO_LINES, 1);
    SchedLiveJob j;
    liverig_run_until(&r, has_resumed, 5000, &j);
    cr_assert(strstr(r.text, "resumed at step 242"), "%s", r.text);
    cr_assert(!strstr(r.text, "did not resume"), "%s", r.text);
    liverig_close(&r);
}

/* A backend whose runs print no progress line: stopped, they exit 0 (a job asked to stop
 * while it still imports its framework). */
static void *silent_start(void *ctx, const LiveRunSpec *spec, LiveRefusal *refusal, Error *err)
{
    (void)ctx, (void)refusal;
    (void)spec;
    (void)err;
    return standin_run_new(sizeof(StandinRun));
}

static void silent_step(void *run)
{
    (void)run;
}

static const LiveRunOps SILENT = {.name = "silent",
                                  .start = silent_start,
                                  .signal = standin_signal,
                                  .step = silent_step,
                                  .rank0_saved = standin_ready,
                                  STANDIN_OPS};

static int is_running(const SchedLiveJob *j)
{
    return j->running;
}

/* Regression: a job that had printed no progress line yet was "checkpoint and stop at step
 * -1" in the log, and its epoch and examples/s were 0 (schedule --live's status lines showed
 * "step -1 epoch 0.00 ... 0 ex/s") instead of unknown. */
Test(schedlive, a_job_without_progress_lines_has_no_step_epoch_or_rate)
{
    static LiveRig r;
    liverig_open(&r, standin_two_by_two(), &SILENT, 1);
    SchedLiveJob j;
    liverig_run_until(&r, is_running, 5000, &j);
    cr_assert(j.running, "%s", r.text);
    cr_assert_eq(j.step, -1);
    cr_assert(j.epoch < 0 && j.examples_per_s < 0, "epoch %g, %g examples/s before any line",
              j.epoch, j.examples_per_s);
    liverig_close(&r);
    cr_assert(strstr(r.text, "j0: end of the run: checkpoint and stop before its first progress "
                             "line\n"),
              "%s", r.text);
    cr_assert(strstr(r.text, "j0: stopped before its first progress line, checkpoint written\n"),
              "%s", r.text);
    cr_assert_null(strstr(r.text, "step -1"), "%s", r.text);
}

/* A backend whose run hands the driver BURST_LINES progress lines in its first step, losses
 * on the curve 1/(0.002 k + 1) + 0.1, then prints nothing more. */
enum { BURST_LINES = 8 };

static double burst_slope = 0.002; /* θ0 of the burst's curve */

static void burst_step(void *run)
{
    StandinRun *r = run;
    if (r->p.seen || r->status[0])
        return;
    for (int i = 1; i <= BURST_LINES; i++) {
        long step = 100L * i;
        standin_says_step(&r->p, step, 1 / (burst_slope * (double)step + 1) + 0.1);
    }
}

static const LiveRunOps BURST = {.name = "burst",
                                 .start = silent_start,
                                 .signal = standin_signal,
                                 .step = burst_step,
                                 .rank0_saved = standin_ready,
                                 STANDIN_OPS};

static int at_the_bursts_last_step(const SchedLiveJob *j)
{
    return j->step >= 100L * BURST_LINES;
}

/* Regression: --loss-progress took only the latest line of each driver step, so the lines a
 * Slurm job's output file brings at once (a late read) were lost to the job's loss curve but
 * one: 8 lines made 1 point, and no curve (it needs 5). */
Test(schedlive, every_progress_line_of_one_read_is_a_point_of_the_loss_curve)
{
    static LiveRig r;
    Cluster *c = standin_cluster(2, 2);
    snprintf(c->job_command, sizeof c->job_command, "w --gpus {gpus} --checkpoint c.ckpt");
    liverig_open_with(&r, c,
                      &(SchedLiveOptions){.time_scale = 1,
                                          .backend = &BURST,
                                          .loss_progress = 1,
                                          .loss_tol = 0.05});
    SchedLiveJob j;
    liverig_run_until(&r, at_the_bursts_last_step, 5000, &j);
    cr_assert_eq(j.step, 100L * BURST_LINES, "%s", r.text);
    cr_assert(strstr(r.text, "j0: loss curve 1/(0.002 k + 1) + 0.1 from ") != NULL, "%s", r.text);
    cr_assert(j.loss_fraction > 0, "%g", j.loss_fraction);
    liverig_close(&r);
}

/* The walkthrough's item: a curve first fitted after the job had passed its end was logged
 * "100% done at step 800 of ~95", which reads as a miscount; it now says the end is behind. */
Test(schedlive, a_curve_known_after_its_end_says_the_end_is_behind_the_job)
{
    static LiveRig r;
    Cluster *c = standin_cluster(2, 2);
    snprintf(c->job_command, sizeof c->job_command, "w --gpus {gpus} --checkpoint c.ckpt");
    burst_slope = 0.2; /* within 5% of the way to 0.1 at step 95 */
    liverig_open_with(&r, c,
                      &(SchedLiveOptions){.time_scale = 1,
                                          .backend = &BURST,
                                          .loss_progress = 1,
                                          .loss_tol = 0.05});
    SchedLiveJob j;
    liverig_run_until(&r, at_the_bursts_last_step, 5000, &j);
    burst_slope = 0.002;
    cr_assert(strstr(r.text, "% done at step 500 (the curve reached its end at step ~95)\n") !=
                  NULL,
              "%s", r.text);
    cr_assert(!strstr(r.text, " of ~95"), "%s", r.text);
    liverig_close(&r);
}

/* Regression: a host the operator drained (:drain) that then went down over SSH and came back
 * was undrained by the backend's "usable again", and jobs were placed on it. The backend's
 * word undoes only the drain it caused. */
Test(schedlive, a_node_the_operator_drained_stays_drained_when_it_comes_back)
{
    static LiveRig r;
    memset(standin_node, 0, sizeof standin_node);
    standin_looks = 1;
    liverig_open(&r, standin_two_by_two(), &STANDIN_WATCHED, 1);
    schedlive_step(r.l, NULL, 0, clock_now_ms());
    Error e;
    cr_assert_eq(sched_drain_node(r.s, 1, 1, &e), 0, "%s", e.msg); /* the operator's :drain m1 */
    standin_node_says(&r, 1, 1, "down over SSH (test)");
    cr_assert(sched_node_drained(r.s, 1));
    standin_node_says(&r, 1, 0, "it answers over SSH again");
    cr_assert(sched_node_drained(r.s, 1), "%s", r.text);
    cr_assert(strstr(r.text, "m1 answers again (it answers over SSH again): it stays drained, as "
                             "the operator drained it (:undrain m1 to use it)\n"),
              "%s", r.text);
    /* regression: the operator's :drain of a node that is down already was undone when it
     * came back (the drain was taken for the backend's) */
    standin_node_says(&r, 1, 1, "down over SSH (test)");
    cr_assert_eq(sched_drain_node(r.s, 1, 0, &e), 0, "%s", e.msg); /* :undrain m1 */
    cr_assert(sched_node_drained(r.s, 1), "down: still drained by the backend");
    cr_assert_eq(sched_drain_node(r.s, 1, 1, &e), 0, "%s", e.msg); /* :drain m1, down */
    standin_node_says(&r, 1, 0, "it answers over SSH again");
    cr_assert(sched_node_drained(r.s, 1), "%s", r.text);
    cr_assert_eq(sched_drain_node(r.s, 1, 0, &e), 0, "%s", e.msg); /* :undrain m1, up */
    cr_assert_not(sched_node_drained(r.s, 1), "%s", r.text);
    /* one the backend alone drained is the scheduler's again once it answers */
    standin_node_says(&r, 0, 1, "down over SSH (test)");
    cr_assert(sched_node_drained(r.s, 0), "%s", r.text);
    standin_node_says(&r, 0, 0, "it answers over SSH again");
    cr_assert_not(sched_node_drained(r.s, 0), "%s", r.text);
    cr_assert(strstr(r.text, "m0 is usable again (it answers over SSH again)\n"), "%s", r.text);
    liverig_close(&r);
}

/* Regression: a run that died with its node in the one driver step where the node went down
 * and a decision moved the job off it: the decision (enacted first, the run already ended)
 * asked for the start elsewhere, then the run's end on the unusable node cleared that ask,
 * and the job never ran again while the model counted it running. The clock is the test's:
 * the step crosses the model's next decision (60 s at time scale 1). */
Test(schedlive, a_run_that_dies_with_its_node_starts_where_that_steps_decision_places_it)
{
    static LiveRig r;
    memset(standin_node, 0, sizeof standin_node);
    standin_looks = 1;
    standin_last_run = NULL;
    liverig_open(&r, standin_two_by_two(), &STANDIN_WATCHED, 1);
    int64_t t = clock_now_ms();
    SchedLiveJob j;
    for (int i = 0; i < 20 && !(schedlive_job(r.l, 0, &j), j.running); i++)
        schedlive_step(r.l, NULL, 0, ++t);
    cr_assert(j.running && standin_last_run, "%s", r.text);
    int node = strcmp(j.host, "m0") == 0 ? 0 : 1;
    cr_assert_eq(j.gpus, 2, "%s", r.text); /* the other node has room for it */
    StandinRun *first = standin_last_run;
    standin_node[node].unusable = 1;
    snprintf(standin_node[node].why, sizeof standin_node[node].why, "down over SSH (test)");
    standin_looks++;
    snprintf(first->status, sizeof first->status, "exited 255");
    t += 61 * 1000;
    schedlive_step(r.l, NULL, 0, t);
    for (int i = 0; i < 5; i++)
        schedlive_step(r.l, NULL, 0, ++t);
    schedlive_job(r.l, 0, &j);
    cr_assert(strstr(r.text, "decision t=60s"), "the step crossed a decision: %s", r.text);
    cr_assert(j.running && j.runs == 2, "j0 started again: %s", r.text);
    cr_assert_str_neq(j.host, node == 0 ? "m0" : "m1", "%s", r.text);
    liverig_close(&r);
}

/* A backend that can check every job's folder before the run, and finds j0's writable. */
static char folders_checked[256];
static int folder_starts;

static int bad_folder_check(void *ctx, const char *job_dir, const char *const *names, size_t n,
                            Error *err)
{
    (void)ctx;
    snprintf(folders_checked, sizeof folders_checked, "%s: %zu %s", job_dir, n, n ? names[0] : "");
    error_set(err, "job %s: its folder %s/%s is world-writable (mode 0777)", names[0], job_dir,
              names[0]);
    return error_mark(err, ERROR_INPUT);
}

static void *counted_start(void *ctx, const LiveRunSpec *spec, LiveRefusal *refusal, Error *err)
{
    (void)ctx, (void)spec, (void)err, (void)refusal;
    folder_starts++;
    return standin_run_new(sizeof(StandinRun));
}

static const LiveRunOps BAD_FOLDER = {.name = "bad-folder",
                                      .start = counted_start,
                                      .signal = standin_signal,
                                      .check_folders = bad_folder_check,
                                      STANDIN_OPS};

/* Regression: a job folder others could write was found only as each job started, each
 * job failed in turn and the run went on to --duration: the backend's check of every folder
 * now refuses the driver (exit 3) before any start. */
Test(schedlive, a_folder_the_backend_refuses_before_the_run_refuses_the_driver)
{
    Error e;
    Catalogue *cat = fixture_catalogue();
    SchedState *s = fixture_doubling_with_j0(cat);
    Cluster *c = standin_two_by_two();
    SchedLiveOptions o = {.backend = &BAD_FOLDER, .job_dir = "/x/jobs"};
    folder_starts = 0;
    SchedLive *l = schedlive_new(s, c, NULL, &o, &e);
    cr_assert_null(l, "the driver was made");
    cr_assert_str_eq(folders_checked, "/x/jobs: 1 j0", "every job's folder, under --job-dir");
    cr_assert_eq(e.kind, ERROR_INPUT, "bad input: exit 3");
    cr_assert(strstr(e.msg, "job j0: its folder /x/jobs/j0 is world-writable"), "%s", e.msg);
    char ck[512];
    cr_assert_eq(schedlive_check(s, c, &o, ck, sizeof ck, &e), -1, "the check before any host");
    cr_assert_eq(folder_starts, 0);
    sched_free(s);
    catalogue_free(cat);
    cluster_free(c);
}
