/* The Slurm panel drawn from a snapshot alone (no controller) into a real curses screen. */
#include <criterion/criterion.h>
#include <curses.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "tests/support/fixtures.h"
#include "tests/support/screen.h"
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
