/* The Slurm panel drawn from a snapshot alone (no controller) into a real curses screen. */
#include <criterion/criterion.h>
#include <curses.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "tests/support/fixtures.h"
#include "tests/support/screen.h"
#include "tui/draw.h"
#include "tui/view.h"

static void setup(void)
{
    fixture_screen_open(30, 120);
}

TestSuite(view_slurm, .init = setup, .fini = fixture_screen_close);

Test(view_slurm, shows_each_nodes_state_and_reason_and_why_a_job_waits)
{
    SlurmNodes nodes;
    SlurmQueue queue;
    Error err;
    cr_assert_eq(slurm_nodes_parse(fixture_text("slurm/sinfo-22.05.txt"), "sinfo", &nodes, &err),
                 0);
    cr_assert_eq(slurm_queue_parse(fixture_text("slurm/squeue-22.05.txt"), "squeue", &queue, &err),
                 0);
    SlurmPanel p = {.nodes = &nodes,
                    .queue = &queue,
                    .where = "here",
                    .interval_s = 4,
                    .rounds = 1,
                    .calls = 2};
    slurm_panel_count(&p);
    erase();
    view_slurm_draw(&p, (Rect){0, 0, 120, 12}, (Rect){0, 12, 120, 8}, 0, 0);
    char *text = fixture_screen_text();
    cr_assert(strstr(text, "Slurm nodes: 4 (0 idle, 1 mixed, 1 alloc, 1 drain, 1 down)"), "%s",
              text);
    cr_assert(strstr(text, "controller (here): answering; next look in 4 s"), "%s", text);
    cr_assert(strstr(text, "n4           drain  drained    0/8"), "%s", text);
    cr_assert(strstr(text, "fan|noisy, test"), "the reason whole: %s", text);
    cr_assert(strstr(text, "n2           down   down"), "%s", text);
    cr_assert(strstr(text, "Slurm queue: 3 jobs, 1 pending"), "%s", text);
    cr_assert(strstr(text, "wait-for-it          Resources"), "the pending reason: %s", text);
    free(text);
    slurm_nodes_clear(&nodes);
    slurm_queue_clear(&queue);
}

/* Regression: a queue of one job was titled "Slurm queue: 1 jobs". */
Test(view_slurm, a_queue_of_one_job_says_job)
{
    SlurmQueue queue;
    Error err;
    cr_assert_eq(slurm_queue_parse(fixture_text("slurm/squeue-22.05.txt"), "squeue", &queue, &err),
                 0);
    size_t all = queue.n;
    queue.n = 1; /* the first job alone */
    SlurmPanel p = {.queue = &queue, .where = "here", .rounds = 1};
    slurm_panel_count(&p);
    erase();
    view_slurm_draw(&p, (Rect){0, 0, 120, 12}, (Rect){0, 12, 120, 8}, 0, 0);
    char *text = fixture_screen_text();
    cr_assert(strstr(text, "Slurm queue: 1 job, "), "%s", text);
    free(text);
    queue.n = all;
    slurm_queue_clear(&queue);
}

Test(view_slurm, an_outage_says_how_long_and_keeps_the_last_nodes_seen)
{
    SlurmNodes nodes;
    Error err;
    cr_assert_eq(slurm_nodes_parse(fixture_text("slurm/sinfo-22.05.txt"), "sinfo", &nodes, &err),
                 0);
    SlurmQueue queue = {0};
    SlurmPanel p = {
        .nodes = &nodes, .queue = &queue, .where = "login1", .rounds = 3, .down_since_ms = 1000};
    snprintf(p.last_error, sizeof p.last_error, "sinfo exited with status 1: no controller");
    slurm_panel_count(&p);
    erase();
    view_slurm_draw(&p, (Rect){0, 0, 120, 12}, (Rect){0, 0, 0, 0}, 0, 43000);
    char *text = fixture_screen_text();
    cr_assert(strstr(text, "controller (login1): NOT ANSWERING for 42 s: sinfo"), "%s", text);
    cr_assert(strstr(text, "no controller"), "%s", text);
    /* a watch has no trials: "new trials wait" is said only where trials run */
    cr_assert(!strstr(text, "new trials wait"), "%s", text);
    free(text);
    p.tuning = 1;
    erase();
    view_slurm_draw(&p, (Rect){0, 0, 120, 12}, (Rect){0, 0, 0, 0}, 0, 43000);
    text = fixture_screen_text();
    cr_assert(strstr(text, "NOT ANSWERING for 42 s, new trials wait: sinfo"), "%s", text);
    cr_assert(strstr(text, "as last seen"), "%s", text);
    cr_assert(strstr(text, "n3 "), "%s", text);
    free(text);
    slurm_nodes_clear(&nodes);
}

/* A 1,024-node partition: the rows that fit, the selected one kept in sight. */
Test(view_slurm, a_long_partition_draws_the_rows_that_fit_around_the_selection)
{
    SlurmNodes nodes = {calloc(1024, sizeof(SlurmNode)), 1024};
    for (size_t i = 0; i < nodes.n; i++) {
        snprintf(nodes.v[i].name, sizeof nodes.v[i].name, "node%04zu", i);
        nodes.v[i].cpus = 64;
        nodes.v[i].gpus = 8;
        nodes.v[i].state = i % 7 == 0 ? SLURM_NODE_ALLOC : SLURM_NODE_IDLE;
        snprintf(nodes.v[i].state_raw, sizeof nodes.v[i].state_raw, "%s",
                 slurm_node_state_name(nodes.v[i].state));
    }
    SlurmQueue queue = {0};
    SlurmPanel p = {.nodes = &nodes, .queue = &queue, .where = "here", .rounds = 1};
    slurm_panel_count(&p);
    cr_assert_eq(p.counts[SLURM_NODE_ALLOC], 147);
    erase();
    view_slurm_draw(&p, (Rect){0, 0, 120, 20}, (Rect){0, 20, 120, 8}, 1000, 0);
    char *text = fixture_screen_text();
    cr_assert(strstr(text, "Slurm nodes: 1024 (877 idle, 0 mixed, 147 alloc"), "%s", text);
    cr_assert(strstr(text, "> node1000"), "the selection is in sight: %s", text);
    cr_assert(strstr(text, "node0985") && !strstr(text, "node0984"), "16 rows fit: %s", text);
    cr_assert(!strstr(text, "node1001"), "%s", text);
    free(text);
    free(nodes.v);
}

/* The column where text ends in the screen line that holds it (terminal columns). */
static int column_of(const char *text, const char *needle)
{
    const char *at = strstr(text, needle);
    cr_assert_not_null(at, "'%s' is not on the screen:\n%s", needle, text);
    const char *line = at;
    while (line > text && line[-1] != '\n')
        line--;
    char prefix[1024];
    snprintf(prefix, sizeof prefix, "%.*s", (int)(at - line), line);
    return draw_width(prefix);
}

/* Other users' jobs: a user name longer than its 10 columns and a job name longer than its
 * 20 (one in Japanese) pushed the nodelist, or why the job waits, out of its column. */
Test(view_slurm, long_and_wide_names_keep_the_queue_columns)
{
    SlurmQueue queue;
    Error err;
    cr_assert_eq(slurm_queue_parse("7|a-very-long-user-name|PENDING|1|gres:gpu:1||Priority|"
                                   "imagenet-resnet152-mixed-precision-large-batch\n"
                                   "8|bob|RUNNING|1|gres:gpu:1|n3|None|"
                                   "\xe7\x94\xbb\xe5\x83\x8f\xe8\xaa\x8d\xe8\xad\x98\xe3\x81"
                                   "\xae\xe5\xad\xa6\xe7\xbf\x92\xe3\x82\xb8\xe3\x83\xa7\xe3"
                                   "\x83\x96\xe5\x90\x8d\xe5\x89\x8d\xe9\x95\xb7\xe3\x81\x84\n",
                                   "squeue", &queue, &err),
                 0, "%s", err.msg);
    SlurmPanel p = {.queue = &queue, .where = "here", .interval_s = 4, .rounds = 1, .calls = 1};
    slurm_panel_count(&p);
    erase();
    view_slurm_draw(&p, (Rect){0, 0, 0, 0}, (Rect){0, 0, 120, 8}, 0, 0);
    char *text = fixture_screen_text();
    int head = column_of(text, "nodelist, or why it waits");
    cr_assert_eq(column_of(text, "Priority"), head, "%s", text);
    cr_assert_eq(column_of(text, " n3") + 1, head, "%s", text);
    cr_assert(strstr(text, "a-ve\xe2\x80\xa6-name") != NULL, "the user cut around an ellipsis: %s",
              text);
    free(text);
    slurm_queue_clear(&queue);
}
