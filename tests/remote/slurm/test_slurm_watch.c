#include <criterion/criterion.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "core/base/clock.h"
#include "core/base/evloop.h"
#include "core/base/readall.h"

#include "remote/slurm/slurm_watch.h"
#include "tests/support/ssh_hermetic.h"

/* Without a controller every round fails: the watch backs off all the same, and never
 * asks more often than its minimum interval. */
Test(slurm_watch, backs_off_when_the_controller_does_not_answer)
{
    setenv("PATH", "/nonexistent", 1);
    SlurmCtlOptions o = {.ssh_config = TEST_SSH_CONFIG, .timeout_s = 2};
    Error e;
    SlurmCtl *c = slurm_ctl_new(&o, &e);
    cr_assert_not_null(c);
    SlurmWatch *w = slurm_watch_new(c, NULL, 0.1, 8);
    cr_assert_eq(slurm_watch_poll(w, 1000, &e), -1);
    cr_assert(strstr(e.msg, "squeue"), "the queue is asked first: %s", e.msg);
    cr_assert_float_eq(slurm_watch_interval_s(w), 4, 1e-9, "the minimum is 2 s, doubled");
    cr_assert_eq(slurm_watch_poll(w, 2000, &e), 0, "not due yet");
    cr_assert_eq(slurm_watch_poll(w, 5000, &e), -1);
    cr_assert_float_eq(slurm_watch_interval_s(w), 8, 1e-9);
    cr_assert_eq(slurm_watch_poll(w, 13000, &e), -1);
    cr_assert_float_eq(slurm_watch_interval_s(w), 8, 1e-9, "capped");
    cr_assert_eq(slurm_ctl_calls(c), 3, "one failed call per round");
    slurm_watch_free(w);
    slurm_ctl_free(c);
}

/* A fake squeue prints its file with the mark the watch asked for after each row (the part
 * of -o's format after its last '|'), as Slurm does (slurm_queue.h). */
#define SQUEUE_MARKS                                                                       \
    "m=; while [ $# -gt 0 ]; do [ \"$1\" = -o ] && m=\"${2##*|}\"; shift; done; "      \
    "exec /bin/sed \"s/\\$/|$m/\" "

/* Commands named sinfo and squeue that print the captured Slurm 22.05 output, first on PATH:
 * the watch's round on a caller's loop, from start to parsed state. */
static char *fake_slurm_dir(const char *sinfo_fixture)
{
    static char dir[] = "/tmp/td-slurmwatch.XXXXXX";
    cr_assert_not_null(mkdtemp(dir));
    char path[256];
    const char *names[] = {"sinfo", "squeue"};
    const char *fixtures[] = {sinfo_fixture, "squeue-22.05.txt"};
    for (int i = 0; i < 2; i++) {
        snprintf(path, sizeof path, "%s/%s", dir, names[i]);
        FILE *f = fopen(path, "w");
        cr_assert_not_null(f);
        fprintf(f, "#!/bin/sh\n%s'%s/tests/fixtures/slurm/%s'\n",
                i ? SQUEUE_MARKS : "exec /bin/cat ", TUNEDECK_SOURCE_DIR, fixtures[i]);
        fclose(f);
        chmod(path, 0755);
    }
    return dir;
}

static int round_ended(void *ctx)
{
    return !slurm_watch_busy(ctx) && slurm_watch_rounds(ctx) > 0;
}

static int two_rounds_ended(void *ctx)
{
    return !slurm_watch_busy(ctx) && slurm_watch_rounds(ctx) > 1;
}

static size_t watch_pollfds(void *ctx, struct pollfd *fds, size_t cap, int64_t *deadline_ms)
{
    return slurm_watch_pollfds(ctx, fds, cap, deadline_ms);
}

static void watch_step(void *ctx, const struct pollfd *fds, size_t n, int64_t now_ms)
{
    slurm_watch_step(ctx, fds, n, now_ms);
}

Test(slurm_watch, a_round_on_the_callers_loop_reads_nodes_and_queue)
{
    char *dir = fake_slurm_dir("sinfo-22.05.txt");
    setenv("PATH", dir, 1);
    SlurmCtlOptions o = {.ssh_config = TEST_SSH_CONFIG, .timeout_s = 10};
    Error e;
    SlurmCtl *c = slurm_ctl_new(&o, &e);
    SlurmWatch *w = slurm_watch_new(c, NULL, 2, 8);
    cr_assert_eq(slurm_watch_take(w, &e), -2, "no round has ended yet");
    evloop_run_source(watch_pollfds, watch_step, w, round_ended, w, clock_now_ms() + 10000);
    cr_assert_eq(slurm_watch_take(w, &e), 1, "%s", e.msg);
    cr_assert_eq(slurm_watch_take(w, &e), -2, "said once");
    cr_assert_eq(slurm_watch_nodes(w)->n, 4);
    cr_assert_eq(slurm_watch_queue(w)->n, 3);
    cr_assert_eq(slurm_watch_queue(w)->v[0].reason[0], 'R');
    cr_assert_eq(slurm_ctl_calls(c), 2, "one sinfo and one squeue");
    cr_assert_eq(slurm_watch_down_since_ms(w), 0);
    cr_assert_float_eq(slurm_watch_interval_s(w), 2, 1e-9, "a change: the shortest wait");
    slurm_watch_free(w);
    slurm_ctl_free(c);
    char path[300];
    snprintf(path, sizeof path, "%s/sinfo", dir);
    unlink(path);
    snprintf(path, sizeof path, "%s/squeue", dir);
    unlink(path);
    rmdir(dir);
}

Test(slurm_watch, a_round_that_fails_on_the_loop_keeps_the_state_and_says_when_it_began)
{
    setenv("PATH", "/nonexistent", 1);
    SlurmCtlOptions o = {.ssh_config = TEST_SSH_CONFIG, .timeout_s = 2};
    Error e;
    SlurmCtl *c = slurm_ctl_new(&o, &e);
    SlurmWatch *w = slurm_watch_new(c, NULL, 2, 8);
    evloop_run_source(watch_pollfds, watch_step, w, round_ended, w, clock_now_ms() + 10000);
    cr_assert_eq(slurm_watch_take(w, &e), -1);
    cr_assert(strstr(e.msg, "squeue"), "%s", e.msg);
    cr_assert_gt(slurm_watch_down_since_ms(w), 0);
    cr_assert_eq(slurm_ctl_calls(c), 1, "sinfo is not asked after squeue failed");
    cr_assert_float_eq(slurm_watch_interval_s(w), 4, 1e-9, "backed off");
    slurm_watch_free(w);
    slurm_ctl_free(c);
}

/* ---- which rounds ask for the node table ----
 * Commands named sinfo and squeue first on PATH: sinfo prints DIR/nodes.txt, squeue prints
 * DIR/queue.txt, or says what Slurm 22.05 says without a controller while DIR/down exists.
 * The rounds run through slurm_watch_poll at the times the test gives, so which rounds ask
 * for the node table depends on the rule alone, never on this machine's speed. */
typedef struct {
    char dir[64];
    SlurmCtl *ctl;
    SlurmWatch *w;
} Fake;

static void fake_write(const Fake *f, const char *name, const char *text)
{
    char path[128];
    snprintf(path, sizeof path, "%s/%s", f->dir, name);
    FILE *o = fopen(path, "w");
    cr_assert_not_null(o);
    fputs(text, o);
    fclose(o);
}

static void fake_copy_fixture(const Fake *f, const char *name, const char *fixture)
{
    char path[512];
    snprintf(path, sizeof path, "%s/tests/fixtures/slurm/%s", TUNEDECK_SOURCE_DIR, fixture);
    Error e;
    char *text = readall_file(path, 0, NULL, &e);
    cr_assert_not_null(text, "%s", e.msg);
    fake_write(f, name, text);
    free(text);
}

static void fake_start(Fake *f)
{
    snprintf(f->dir, sizeof f->dir, "/tmp/td-slurmrule.XXXXXX");
    cr_assert_not_null(mkdtemp(f->dir));
    char script[512];
    snprintf(script, sizeof script, "#!/bin/sh\nexec /bin/cat '%s/nodes.txt'\n", f->dir);
    fake_write(f, "sinfo", script);
    snprintf(script, sizeof script,
             "#!/bin/sh\nif [ -e '%s/down' ]; then\n"
             "  echo 'squeue: error: slurm_load_jobs error: Unable to contact slurm controller "
             "(connect failure)' >&2\n  exit 1\nfi\n" SQUEUE_MARKS "'%s/queue.txt'\n",
             f->dir, f->dir);
    fake_write(f, "squeue", script);
    char path[128];
    snprintf(path, sizeof path, "%s/sinfo", f->dir);
    chmod(path, 0755);
    snprintf(path, sizeof path, "%s/squeue", f->dir);
    chmod(path, 0755);
    fake_copy_fixture(f, "nodes.txt", "sinfo-22.05.txt");
    fake_copy_fixture(f, "queue.txt", "squeue-22.05.txt");
    setenv("PATH", f->dir, 1);
    SlurmCtlOptions o = {.ssh_config = TEST_SSH_CONFIG, .timeout_s = 10};
    Error e;
    f->ctl = slurm_ctl_new(&o, &e);
    cr_assert_not_null(f->ctl);
    f->w = slurm_watch_new(f->ctl, NULL, 2, 16);
    cr_assert_not_null(f->w);
}

static void fake_stop(Fake *f)
{
    slurm_watch_free(f->w);
    slurm_ctl_free(f->ctl);
    const char *names[] = {"sinfo", "squeue", "nodes.txt", "queue.txt", "down"};
    char path[128];
    for (size_t i = 0; i < sizeof names / sizeof *names; i++) {
        snprintf(path, sizeof path, "%s/%s", f->dir, names[i]);
        unlink(path);
    }
    rmdir(f->dir);
}

/* One round at now_ms (it must be due); returns the round's result. */
static int round_at(Fake *f, int64_t now_ms)
{
    Error e;
    cr_assert_geq(now_ms, slurm_watch_due_ms(f->w), "the test asked before the round was due");
    return slurm_watch_poll(f->w, now_ms, &e);
}

/* The captured queue with the pending job's reason changed: the queue moves, no node does. */
static const char *QUEUE_PRIORITY = "2|root|PENDING|1|gres:gpu:v100:4||Priority|wait-for-it\n"
                                    "1|root|RUNNING|1|gres:gpu:v100:4|n3|None|train|resnet\n"
                                    "3|root|RUNNING|2|gres:gpu:1|n[1-2]|None|small\n";

Test(slurm_watch_rule, a_busy_queue_reads_the_node_table_on_the_first_round_then_every_fifth)
{
    Fake f;
    fake_start(&f);
    long tables[11];
    int64_t now = 1000;
    for (int i = 0; i < 11; i++) {
        /* a pending reason that flips every round: a change each time, rounds 2 s apart */
        if (i % 2)
            fake_write(&f, "queue.txt", QUEUE_PRIORITY);
        else
            fake_copy_fixture(&f, "queue.txt", "squeue-22.05.txt");
        cr_assert_eq(round_at(&f, now), 1, "round %d: the queue changed", i + 1);
        cr_assert_float_eq(slurm_watch_interval_s(f.w), 2, 1e-9);
        tables[i] = slurm_watch_node_tables(f.w);
        now = slurm_watch_due_ms(f.w);
    }
    long want[11] = {1, 1, 1, 1, 1, 2, 2, 2, 2, 2, 3}; /* rounds 1, 6, 11: 0, 10, 20 s */
    for (int i = 0; i < 11; i++)
        cr_assert_eq(tables[i], want[i], "round %d: %ld node tables, expected %ld", i + 1,
                     tables[i], want[i]);
    cr_assert_eq(slurm_ctl_calls(f.ctl), 11 + 3, "a squeue every round, a sinfo in three");
    cr_assert_eq(slurm_watch_nodes(f.w)->n, 4, "the node table is kept between its reads");
    fake_stop(&f);
}

Test(slurm_watch_rule, a_quiet_queue_backs_off_and_reads_the_nodes_once_they_are_10_s_old)
{
    Fake f;
    fake_start(&f);
    int64_t at[4];
    long tables[4];
    int64_t now = 1000;
    int result[4];
    for (int i = 0; i < 4; i++) {
        if (i == 3) /* a node went down meanwhile, with no job on it: the queue says nothing */
            fake_copy_fixture(&f, "nodes.txt", "sinfo-22.05-busy.txt");
        at[i] = now;
        result[i] = round_at(&f, now);
        tables[i] = slurm_watch_node_tables(f.w);
        now = slurm_watch_due_ms(f.w);
    }
    /* 2, 4 then 8 s apart: 1, 3, 7, 15 s; the fourth round's table is 14 s old */
    cr_assert_eq(at[3] - at[0], 14000);
    cr_assert_eq(tables[0], 1);
    cr_assert_eq(tables[2], 1, "6 s old: not asked");
    cr_assert_eq(tables[3], 2, "14 s old: asked");
    cr_assert_eq(result[3], 1, "the nodes changed: shown");
    cr_assert_float_eq(slurm_watch_interval_s(f.w), 16, 1e-9,
                       "the back-off follows the queue: still doubling (to its cap)");
    fake_stop(&f);
}

Test(slurm_watch_rule, the_operators_drain_is_read_at_the_next_round)
{
    Fake f;
    fake_start(&f);
    cr_assert_eq(round_at(&f, 1000), 1);
    cr_assert_eq(round_at(&f, 3000), 0, "nothing changed");
    cr_assert_eq(slurm_watch_node_tables(f.w), 1, "a queue-only round");
    /* the operator's scontrol update went through (slurm_desk pokes the watch then) */
    fake_copy_fixture(&f, "nodes.txt", "sinfo-22.05-busy.txt");
    slurm_watch_poke(f.w, 4000);
    cr_assert_eq(slurm_watch_due_ms(f.w), 5000, "2 s after the last round, not the back-off's 7 s");
    cr_assert_eq(round_at(&f, 5000), 1, "the nodes changed");
    cr_assert_eq(slurm_watch_node_tables(f.w), 2, "asked though the table was 4 s old");
    cr_assert_str_eq(slurm_watch_nodes(f.w)->v[3].state_raw, "idle");
    cr_assert_eq(round_at(&f, slurm_watch_due_ms(f.w)), 0);
    cr_assert_eq(slurm_watch_node_tables(f.w), 2, "once: the next round is the queue's alone");
    fake_stop(&f);
}

Test(slurm_watch_rule, the_first_round_after_an_outage_reads_the_node_table)
{
    Fake f;
    fake_start(&f);
    Error e;
    cr_assert_eq(round_at(&f, 1000), 1);
    fake_write(&f, "down", "");
    cr_assert_eq(slurm_watch_poll(f.w, 3000, &e), -1);
    cr_assert(strstr(e.msg, "Unable to contact slurm controller"), "%s", e.msg);
    cr_assert_eq(slurm_ctl_calls(f.ctl), 2 + 1, "no sinfo after squeue failed");
    cr_assert_eq(slurm_watch_down_since_ms(f.w), 3000);
    cr_assert_eq(slurm_watch_nodes(f.w)->n, 4, "the last nodes seen are kept");
    char path[128];
    snprintf(path, sizeof path, "%s/down", f.dir);
    unlink(path);
    int64_t back = slurm_watch_due_ms(f.w);
    cr_assert_lt(back - 1000, 10000, "the table is younger than 10 s");
    cr_assert_eq(round_at(&f, back), 1, "back: a change");
    cr_assert_eq(slurm_watch_node_tables(f.w), 2, "asked at once after the outage");
    cr_assert_eq(slurm_watch_down_since_ms(f.w), 0);
    fake_stop(&f);
}

Test(slurm_watch_rule, a_job_that_starts_running_reads_the_node_table_one_that_ends_does_not)
{
    Fake f;
    fake_start(&f);
    cr_assert_eq(round_at(&f, 1000), 1);
    /* job 2 starts on n4 */
    fake_write(&f, "queue.txt",
               "2|root|RUNNING|1|gres:gpu:v100:4|n4|None|wait-for-it\n"
               "1|root|RUNNING|1|gres:gpu:v100:4|n3|None|train|resnet\n"
               "3|root|RUNNING|2|gres:gpu:1|n[1-2]|None|small\n");
    cr_assert_eq(round_at(&f, 3000), 1);
    cr_assert_eq(slurm_watch_node_tables(f.w), 2, "a start: asked at once");
    /* job 3 ends */
    fake_write(&f, "queue.txt",
               "2|root|RUNNING|1|gres:gpu:v100:4|n4|None|wait-for-it\n"
               "1|root|RUNNING|1|gres:gpu:v100:4|n3|None|train|resnet\n");
    cr_assert_eq(round_at(&f, 5000), 1);
    cr_assert_eq(slurm_watch_queue(f.w)->n, 2);
    cr_assert_eq(slurm_watch_node_tables(f.w), 2, "an end waits for the table's age");
    fake_stop(&f);
}

/* On the caller's loop the same rule: the second round, 2 s after the first, asks the queue
 * alone. */
Test(slurm_watch_rule, the_loops_second_round_asks_the_queue_alone)
{
    Fake f;
    fake_start(&f);
    evloop_run_source(watch_pollfds, watch_step, f.w, round_ended, f.w, clock_now_ms() + 10000);
    Error e;
    cr_assert_eq(slurm_watch_take(f.w, &e), 1, "%s", e.msg);
    cr_assert_eq(slurm_ctl_calls(f.ctl), 2);
    evloop_run_source(watch_pollfds, watch_step, f.w, two_rounds_ended, f.w,
                      clock_now_ms() + 10000);
    cr_assert_eq(slurm_watch_take(f.w, &e), 0, "nothing changed");
    cr_assert_eq(slurm_ctl_calls(f.ctl), 3, "one squeue");
    cr_assert_eq(slurm_watch_node_tables(f.w), 1);
    fake_stop(&f);
}

/* Another user's job names holding newlines and a row of their own (captured from Slurm
 * 22.05, fixtures README): a fake squeue prints what Slurm printed for the format asked,
 * with the watch's own mark (whatever follows %j) where Slurm put the captured one. The
 * watch without a mark read job 3's name as a row: a job 2 of root's, COMPLETED. */
Test(slurm_watch, a_job_name_with_newlines_forges_no_row)
{
    char dir[] = "/tmp/td-slurmforge.XXXXXX";
    cr_assert_not_null(mkdtemp(dir));
    const char *fx = TUNEDECK_SOURCE_DIR "/tests/fixtures/slurm";
    char path[300];
    snprintf(path, sizeof path, "%s/sinfo", dir);
    FILE *f = fopen(path, "w");
    cr_assert_not_null(f);
    fprintf(f, "#!/bin/sh\nexec /bin/cat '%s/sinfo-22.05.txt'\n", fx);
    fclose(f);
    chmod(path, 0755);
    snprintf(path, sizeof path, "%s/squeue", dir);
    f = fopen(path, "w");
    cr_assert_not_null(f);
    fprintf(f,
            "#!/bin/sh\nm=; while [ $# -gt 0 ]; do [ \"$1\" = -o ] && m=\"$2\"; shift; done\n"
            "case \"$m\" in *'%%j') exec /bin/cat '%s/squeue-22.05-forged.txt' ;; esac\n"
            "exec /bin/sed \"s/0123456789abcdef/${m##*|}/\" '%s/squeue-22.05-forged-marked.txt'\n",
            fx, fx);
    fclose(f);
    chmod(path, 0755);
    setenv("PATH", dir, 1);
    SlurmCtlOptions o = {.ssh_config = TEST_SSH_CONFIG, .timeout_s = 10};
    Error e;
    SlurmCtl *c = slurm_ctl_new(&o, &e);
    SlurmWatch *w = slurm_watch_new(c, NULL, 2, 8);
    evloop_run_source(watch_pollfds, watch_step, w, round_ended, w, clock_now_ms() + 10000);
    cr_assert_eq(slurm_watch_take(w, &e), 1, "%s", e.msg);
    const SlurmQueue *q = slurm_watch_queue(w);
    for (size_t i = 0; i < q->n; i++)
        cr_assert(strcmp(q->v[i].state, "COMPLETED") != 0, "a forged row: job %s of %s, %s",
                  q->v[i].id, q->v[i].user, q->v[i].state);
    cr_assert_eq(q->n, 3, "jobs 3, 1 and 2");
    cr_assert_str_eq(q->v[2].id, "2");
    cr_assert_str_eq(q->v[2].state, "RUNNING");
    slurm_watch_free(w);
    slurm_ctl_free(c);
    unlink(path);
    snprintf(path, sizeof path, "%s/sinfo", dir);
    unlink(path);
    rmdir(dir);
}

/* The mark is on squeue's command line, which any user of the login node can read in ps
 * while it runs. Read there in one round and put into a job's name (`scontrol update
 * JobName=`), a mark kept for the whole watch let that name end its own row and forge the
 * next (a job 7 of root's holding 2 GPUs of n1): the fake squeue's first round saves the mark
 * it was given, and its second round prints the name holding that mark. */
Test(slurm_watch, a_mark_seen_in_ps_forges_no_row_in_a_later_round)
{
    char dir[] = "/tmp/td-slurmmark.XXXXXX";
    cr_assert_not_null(mkdtemp(dir));
    char path[300], sinfo[300], seen[300];
    snprintf(sinfo, sizeof sinfo, "%s/sinfo", dir);
    FILE *f = fopen(sinfo, "w");
    cr_assert_not_null(f);
    fprintf(f, "#!/bin/sh\nexec /bin/cat '%s/tests/fixtures/slurm/sinfo-22.05.txt'\n",
            TUNEDECK_SOURCE_DIR);
    fclose(f);
    chmod(sinfo, 0755);
    snprintf(seen, sizeof seen, "%s/seen", dir);
    snprintf(path, sizeof path, "%s/squeue", dir);
    f = fopen(path, "w");
    cr_assert_not_null(f);
    fprintf(f,
            "#!/bin/sh\nm=; while [ $# -gt 0 ]; do [ \"$1\" = -o ] && m=\"${2##*|}\"; shift; done\n"
            "if [ ! -e '%s' ]; then printf %%s \"$m\" > '%s'\n"
            "  printf '2|root|RUNNING|1|N/A|n1|None|tunedeck-live-1.00abcd-r1|%%s\\n' \"$m\"\n"
            "  exit 0\nfi\nold=$(/bin/cat '%s')\n"
            "printf '3|nobody|PENDING|1|N/A||JobHeldUser|x|%%s\\n' \"$old\"\n"
            "printf '7|root|RUNNING|1|gres:gpu:2|n1|None|phantom|%%s\\n' \"$m\"\n"
            "printf '2|root|RUNNING|1|N/A|n1|None|tunedeck-live-1.00abcd-r1|%%s\\n' \"$m\"\n",
            seen, seen, seen);
    fclose(f);
    chmod(path, 0755);
    setenv("PATH", dir, 1);
    SlurmCtlOptions o = {.ssh_config = TEST_SSH_CONFIG, .timeout_s = 10};
    Error e;
    SlurmCtl *c = slurm_ctl_new(&o, &e);
    SlurmWatch *w = slurm_watch_new(c, NULL, 2, 8);
    cr_assert_geq(slurm_watch_poll(w, 1000, &e), 0, "%s", e.msg);
    cr_assert_eq(slurm_watch_queue(w)->n, 1);
    cr_assert_geq(slurm_watch_poll(w, 100000, &e), 0, "%s", e.msg);
    const SlurmQueue *q = slurm_watch_queue(w);
    for (size_t i = 0; i < q->n; i++)
        cr_assert(strcmp(q->v[i].id, "7") != 0, "a forged row: job %s of %s, %s on %s",
                  q->v[i].id, q->v[i].user, q->v[i].state, q->v[i].nodelist);
    cr_assert_eq(q->n, 2, "job 3, whose name holds the old mark, and job 2");
    cr_assert_str_eq(q->v[0].id, "3");
    cr_assert(strstr(q->v[0].name, "phantom") != NULL, "%s", q->v[0].name);
    slurm_watch_free(w);
    slurm_ctl_free(c);
    unlink(path);
    unlink(sinfo);
    unlink(seen);
    rmdir(dir);
}
