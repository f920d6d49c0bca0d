#include <criterion/criterion.h>
#include <locale.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "core/base/clock.h"
#include "core/model/cluster.h"
#include "core/sched/catalogue.h"
#include "core/sched/sched.h"
#include "remote/ssh/hostpool.h"
#include "tests/support/ssh_hermetic.h"
#include "tui/draw.h"
#include "tui/simsched.h"

static SimSched *make(void)
{
    SimSchedOptions o;
    simsched_defaults(&o);
    o.tick_ms = 0;
    o.catalogue_dir = TUNEDECK_SOURCE_DIR "/" CATALOGUE_SUBDIR;
    Error err;
    SimSched *s = simsched_new(&o, &err);
    cr_assert_not_null(s, "%s", err.msg);
    return s;
}

Test(simsched, defaults_are_a_64_gpu_cluster_with_arrivals)
{
    SimSched *s = make();
    const SchedState *st = simsched_state(s);
    cr_assert_eq(sched_node_count(st) * sched_gpus_per_node(st), 64);
    cr_assert_eq(sched_job_count(st), 40);
    simsched_free(s);
}

Test(simsched, the_grid_and_job_list_follow_the_scheduler)
{
    SimSched *s = make();
    Error err;
    cr_assert_geq(sched_advance(simsched_state_mut(s), 900, &err), 0, "%s", err.msg);
    ClusterSnapshot snap;
    memset(&snap, 0, sizeof snap);
    simsched_snapshot(s, &snap);
    const SchedState *st = simsched_state(s);
    cr_assert_eq(snap.n_grid, (size_t)sched_node_count(st));
    int held = 0, owners[16];
    for (int n = 0; n < sched_node_count(st); n++) {
        sched_node_gpus(st, n, owners, sched_gpus_per_node(st));
        for (int g = 0; g < sched_gpus_per_node(st); g++) {
            cr_assert_eq(snap.grid[n].gpu_job[g], owners[g]);
            held += owners[g] >= 0;
        }
    }
    cr_assert_gt(held, 0, "jobs hold GPUs after 900 simulated seconds");
    cr_assert_eq(snap.n_jobs, sched_job_count(st));
    int gpus = 0;
    for (size_t j = 0; j < snap.n_jobs; j++) {
        cr_assert_eq(snap.jobs[j].label, simsched_job_label(j));
        gpus += snap.jobs[j].gpus;
    }
    cr_assert_eq(gpus, held, "every held GPU belongs to a listed job");
    free(snap.grid);
    free(snap.jobs);
    simsched_free(s);
}

Test(simsched, events_read_as_text)
{
    SimSched *s = make();
    Error err;
    sched_advance(simsched_state_mut(s), 600, &err);
    const SchedState *st = simsched_state(s);
    cr_assert_gt(sched_event_count(st), 0);
    char text[160];
    simsched_event_text(s, 0, text, sizeof text);
    cr_assert(strstr(text, "s a resnet110-0") && strstr(text, "start "), "%s", text);
    /* a fall back under a ceiling is no decision, and the decision pane says so */
    SchedJobInfo info;
    sched_job_info(st, 0, &info);
    cr_assert_gt(info.gpus, 1, "resnet110-0 runs on more than one GPU");
    size_t n = sched_event_count(st);
    cr_assert_eq(sched_set_ceiling(simsched_state_mut(s), 0, info.gpus - 1, 1, &err), 0, "%s",
                 err.msg);
    simsched_event_text(s, n, text, sizeof text);
    char want[64];
    snprintf(want, sizeof want, "resize %d>1 (ceiling %d)", info.gpus, info.gpus - 1);
    cr_assert(strstr(text, want), "%s", text);
    simsched_free(s);
}

Test(simsched, paused_means_no_deadline_and_no_progress)
{
    SimSched *s = make();
    simsched_set_paused(s, 1);
    cr_assert_eq(simsched_deadline(s), -1);
    Error err;
    double t0 = sched_now(simsched_state(s));
    cr_assert_eq(simsched_tick(s, clock_now_ms() + 100000, &err), 0);
    cr_assert_float_eq(sched_now(simsched_state(s)), t0, 1e-9);
    simsched_set_paused(s, 0);
    cr_assert_geq(simsched_deadline(s), 0);
    simsched_free(s);
}

Test(simsched, labels_are_distinct_for_62_jobs)
{
    for (size_t i = 0; i < 62; i++)
        for (size_t k = i + 1; k < 62; k++)
            cr_assert_neq(simsched_job_label(i), simsched_job_label(k));
    cr_assert_eq(simsched_job_label(1000), '*');
}

/* Slurm's grant "n1:0+1,n3:2" marks those GPUs of those hosts, by name; a host the grid does
 * not have, an index past the host's GPUs and a host without indices mark nothing. */
Test(simsched, mark_where_marks_the_granted_gpus_by_host_name)
{
    HostLoad grid[3];
    memset(grid, 0, sizeof grid);
    const char *names[] = {"n1", "n10", "n3"};
    for (int i = 0; i < 3; i++) {
        snprintf(grid[i].name, sizeof grid[i].name, "%s", names[i]);
        grid[i].n_gpus = 4;
        for (int g = 0; g < 4; g++)
            grid[i].gpu_job[g] = -1;
    }
    cr_assert_eq(simsched_mark_where(grid, 3, "n1:0+1,n3:2", 5), 3);
    cr_assert_eq(grid[0].gpu_job[0], 5);
    cr_assert_eq(grid[0].gpu_job[1], 5);
    cr_assert_eq(grid[0].gpu_job[2], -1);
    cr_assert_eq(grid[1].gpu_job[0], -1, "n1 is not a prefix match of n10");
    cr_assert_eq(grid[2].gpu_job[2], 5);
    cr_assert_eq(simsched_mark_where(grid, 3, "n10:3,n9:0,n3:7,n1", SNAP_GPU_FOREIGN), 1);
    cr_assert_eq(grid[1].gpu_job[3], SNAP_GPU_FOREIGN);
    cr_assert_eq(simsched_mark_where(grid, 3, "", 1), 0);
}

/* `tunedeck --cluster F --workload W --gpus-per-node G` (as `schedule --live` takes it): the
 * example inventory's CPU-only machines are refused without it, pointing at the flag, and
 * count G GPUs each with it. Nothing connects: the pool is never stepped. */
static SimSched *live_on_loopback(int gpus_per_node, Cluster **c, HostPool **p, Error *err)
{
    *c = cluster_load(TUNEDECK_SOURCE_DIR "/examples/loopback-cluster.json", err);
    cr_assert_not_null(*c, "%s", err->msg);
    HostPoolOptions po = {.ssh_config = TEST_SSH_CONFIG};
    *p = hostpool_new(&po, err);
    cr_assert_not_null(*p, "%s", err->msg);
    cr_assert_eq(hostpool_add_cluster(*p, *c, err), 0, "%s", err->msg);
    SimSchedLiveOptions o = {.cluster = *c,
                             .pool = *p,
                             .workload = TUNEDECK_SOURCE_DIR "/tests/fixtures/schedlive-workload.csv",
                             .policy = "doubling",
                             .time_scale = 1,
                             .gpus_per_node = gpus_per_node,
                             .seed = 1,
                             .catalogue_dir = TUNEDECK_SOURCE_DIR "/" CATALOGUE_SUBDIR};
    return simsched_new_live(&o, err);
}

Test(simsched, live_gpus_per_node_sizes_cpu_only_machines)
{
    Cluster *c;
    HostPool *p;
    Error err;
    cr_assert_null(live_on_loopback(0, &c, &p, &err));
    cr_assert(strstr(err.msg, "machine 'loop-0' (type 'loop.big') has no GPU device") &&
                  strstr(err.msg, "--gpus-per-node"),
              "%s", err.msg);
    hostpool_free(p);
    cluster_free(c);

    SimSched *s = live_on_loopback(2, &c, &p, &err);
    cr_assert_not_null(s, "%s", err.msg);
    const SchedState *st = simsched_state(s);
    cr_assert_eq(sched_node_count(st), 3);
    for (int n = 0; n < 3; n++)
        cr_assert_eq(sched_node_gpu_count(st, n), 2, "node %d", n);
    simsched_free(s);
    hostpool_free(p);
    cluster_free(c);
}

/* Live, the driver moves the state on every poll of the console, and the screen reads it
 * once a tick, not at each poll: a snapshot of every job and a redraw at every poll was the
 * console's whole CPU with a 3,000-job workload (a redraw 30 times a second while nothing
 * changed). The deadline says when the next reading is due, paused or not (Space pauses
 * tuning, never the live jobs), and a tick before it reads nothing. */
Test(simsched, live_mode_is_read_once_a_tick_not_at_every_poll)
{
    Cluster *c;
    HostPool *p;
    Error err;
    SimSched *s = live_on_loopback(2, &c, &p, &err);
    cr_assert_not_null(s, "%s", err.msg);
    int64_t due = simsched_deadline(s);
    cr_assert_geq(due, 0, "live: a deadline for the screen's next reading");
    cr_assert_eq(simsched_tick(s, due - 1, &err), 0, "not due yet: nothing to read");
    cr_assert_eq(simsched_deadline(s), due);
    cr_assert_eq(simsched_tick(s, due, &err), 1, "due: the screen reads the state");
    int64_t next = simsched_deadline(s);
    cr_assert_gt(next, due, "the next reading is a tick later");
    cr_assert_eq(simsched_tick(s, due, &err), 0, "a second poll at the same moment reads nothing");
    simsched_set_paused(s, 1);
    cr_assert_eq(simsched_deadline(s), next, "the live jobs run on through a pause");
    cr_assert_eq(simsched_tick(s, next, &err), 1);
    simsched_free(s);
    hostpool_free(p);
    cluster_free(c);
}

/* The simulated scheduler's tick says whether it advanced: the console redraws after one
 * that did, not after one that was not due. */
Test(simsched, a_tick_says_whether_it_advanced)
{
    SimSched *s = make();
    Error err;
    int64_t due = simsched_deadline(s);
    cr_assert_eq(simsched_tick(s, due - 1, &err), 0);
    double t0 = sched_now(simsched_state(s));
    cr_assert_eq(simsched_tick(s, due + 1000, &err), 1);
    cr_assert_gt(sched_now(simsched_state(s)), t0);
    simsched_free(s);
}

/* The job list's "rsz" counts a job's resizes and stops (every re-allocation after a start,
 * as `schedule --json`'s resizes_per_job and `schedule --live`'s "resz" count them), not its
 * start: a job that had only started showed 1, one resized once 2. */
Test(simsched, the_job_list_counts_resizes_not_starts)
{
    SimSched *s = make();
    Error err;
    cr_assert_geq(sched_advance(simsched_state_mut(s), 1800, &err), 0, "%s", err.msg);
    ClusterSnapshot snap;
    memset(&snap, 0, sizeof snap);
    simsched_snapshot(s, &snap);
    const SchedState *st = simsched_state(s);
    int started = 0;
    for (size_t j = 0; j < snap.n_jobs; j++) {
        int resizes = 0, starts = 0;
        for (size_t i = 0; i < sched_event_count(st); i++) {
            const SchedEvent *e = sched_event(st, i);
            if (e->job != (int)j)
                continue;
            resizes += e->kind == SCHED_EV_RESIZE || e->kind == SCHED_EV_STOP;
            starts += e->kind == SCHED_EV_START;
        }
        started += starts > 0;
        cr_assert_eq(snap.jobs[j].resizes, resizes, "job %zu: %d resizes and stops, %d starts",
                     j, resizes, starts);
    }
    cr_assert_gt(started, 0);
    free(snap.grid);
    free(snap.jobs);
    simsched_free(s);
}

/* The job list's title gives the average completion time once a job has completed; before,
 * there is none to give (it said "avg JCT 0s", which reads as a measurement). */
Test(simsched, no_average_jct_before_a_job_is_done)
{
    SimSched *s = make();
    Error err;
    cr_assert_geq(sched_advance(simsched_state_mut(s), 300, &err), 0, "%s", err.msg);
    ClusterSnapshot snap;
    memset(&snap, 0, sizeof snap);
    simsched_snapshot(s, &snap);
    SchedSummary sum;
    sched_summary(simsched_state(s), &sum);
    cr_assert_eq(sum.done, 0);
    cr_assert_str_eq(snap.jobs_source, "0/40 done");
    free(snap.grid);
    free(snap.jobs);
    simsched_free(s);
}

/* Regression: a live job's failure was cut at 64 bytes inside its reason, with nothing to
 * say so: "FAILED (ssh to loop-0 failed: connect to 127.0.0.1 port 22: Con; resize 2>4, ...". */
Test(simsched, a_live_jobs_failure_is_in_its_note_whole_or_cut_with_an_ellipsis)
{
    SchedLiveJob lj = {.failed = 1,
                       .step = -1,
                       .loss = NAN,
                       .status = "ssh to loop-0 failed: connect to 127.0.0.1 port 22: "
                                 "Connection refused"};
    char note[128];
    simsched_live_note(&lj, "resize 2>4, restart 27s left", note, sizeof note);
    cr_assert_str_eq(note, "FAILED (ssh to loop-0 failed: connect to 127.0.0.1 port 22: "
                           "Connection refused); resize 2>4, restart 27s left");
    char small[40];
    simsched_live_note(&lj, "resize 2>4, restart 27s left", small, sizeof small);
    cr_assert_eq(strlen(small), sizeof small - 1, "%s", small);
    cr_assert_str_eq(small + strlen(small) - 3, "...", "a cut note ends in ...: %s", small);
    simsched_live_note(&lj, "", note, sizeof note);
    cr_assert_str_eq(note, "FAILED (ssh to loop-0 failed: connect to 127.0.0.1 port 22: "
                           "Connection refused)");
    SchedLiveJob run = {.running = 1, .step = 41, .loss = 0.25, .gpu_ids = "h1:0,1"};
    simsched_live_note(&run, "", note, sizeof note);
    cr_assert_str_eq(note, "run h1:0,1 step 41 loss 0.2500");
    SchedLiveJob idle = {.step = -1, .loss = NAN};
    simsched_live_note(&idle, "starting on 2, 27s left", note, sizeof note);
    cr_assert_str_eq(note, "starting on 2, 27s left", "no real process: the model's note alone");
    /* the cluster refused the job more GPUs: its ceiling, where the operator looks */
    SchedLiveJob capped = {.running = 1, .step = 374, .loss = NAN, .gpu_ids = "n1:0+1",
                           .ceiling_gpus = 3};
    simsched_live_note(&capped, "", note, sizeof note);
    cr_assert_str_eq(note, "run n1:0+1 step 374 ceiling 3 GPUs");
    /* with the time until its lift, and the nodes where the limit counts them */
    capped.ceiling_left_s = 249.2;
    capped.ceiling_nodes = 1;
    simsched_live_note(&capped, "", note, sizeof note);
    cr_assert_str_eq(note, "run n1:0+1 step 374 ceiling 3 GPUs on 1 node, retry in 4m10s");
    capped.ceiling_left_s = 3600;
    capped.ceiling_nodes = 0;
    simsched_live_note(&capped, "", note, sizeof note);
    cr_assert_str_eq(note, "run n1:0+1 step 374 ceiling 3 GPUs, retry in 1h00m");
    /* regression: the minutes of the hour rounded up alone said "1h60m" */
    capped.ceiling_left_s = 7170;
    simsched_live_note(&capped, "", note, sizeof note);
    cr_assert_str_eq(note, "run n1:0+1 step 374 ceiling 3 GPUs, retry in 2h00m");
    capped.ceiling_left_s = 3661;
    simsched_live_note(&capped, "", note, sizeof note);
    cr_assert_str_eq(note, "run n1:0+1 step 374 ceiling 3 GPUs, retry in 1h02m");
}

/* A workload's job named in Japanese (3 bytes, 2 columns a character): its decisions were
 * padded to 12 bytes, so "start N GPUs" sat columns left of an ASCII-named job's. */
Test(simsched, a_decision_lines_up_whatever_script_its_job_is_named_in)
{
    setlocale(LC_ALL, "C.UTF-8");
    SimSchedOptions o;
    simsched_defaults(&o);
    o.tick_ms = 0;
    o.jobs = 1; /* one arrival (at 0 s), then the workload's two */
    o.catalogue_dir = TUNEDECK_SOURCE_DIR "/" CATALOGUE_SUBDIR;
    Error err;
    SimSched *s = simsched_new(&o, &err);
    cr_assert_not_null(s, "%s", err.msg);
    char path[] = "/tmp/tunedeck-simsched-XXXXXX";
    int fd = mkstemp(path);
    cr_assert_geq(fd, 0);
    FILE *f = fdopen(fd, "w");
    fputs("name,time,application,num_replicas,batch_size\n"
          "\xe7\x94\xbb\xe5\x83\x8f-1,60,cifar10,1,128\nplain-1,60,cifar10,1,128\n",
          f);
    fclose(f);
    SchedState *st = simsched_state_mut(s);
    cr_assert_eq(sched_load_workload(st, path, &err), 0, "%s", err.msg);
    unlink(path);
    cr_assert_geq(sched_advance(st, 600, &err), 0, "%s", err.msg);
    int cjk = -1, plain = -1;
    for (size_t i = 0; i < sched_event_count(st); i++) {
        char text[160];
        simsched_event_text(s, i, text, sizeof text);
        const char *start = strstr(text, " start ");
        if (!start)
            continue;
        char head[160];
        snprintf(head, sizeof head, "%.*s", (int)(start - text), text);
        if (strstr(text, "\xe7\x94\xbb"))
            cjk = draw_width(head);
        else if (strstr(text, "plain-1"))
            plain = draw_width(head);
    }
    cr_assert(cjk > 0 && plain > 0, "both jobs started (%d, %d)", cjk, plain);
    cr_assert_eq(cjk, plain);
    simsched_free(s);
}
