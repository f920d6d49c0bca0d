/* The hosts view on a Slurm cluster: each node's state (with Slurm's reason), CPUs, memory
 * and GPUs, the controller's state, and the queue with each pending job's reason. Drawn
 * from a SlurmPanel snapshot only (a benchmark draws it without a controller); the cost is
 * the visible rows, whatever the cluster size (the counts are made once per round). The
 * loop's plumbing to the Slurm desk (remote/slurm/slurm_desk.h) is here too. */
#include <curses.h>
#include <stdio.h>
#include <string.h>

#include "core/base/clock.h"
#include "core/base/plural.h"
#include "tui/app.h"
#include "tui/draw.h"
#include "tui/view.h"

void slurm_panel_count(SlurmPanel *p)
{
    memset(p->counts, 0, sizeof p->counts);
    p->pending = 0;
    for (size_t i = 0; p->nodes && i < p->nodes->n; i++)
        if (p->nodes->v[i].state <= SLURM_NODE_OTHER)
            p->counts[p->nodes->v[i].state]++;
    for (size_t i = 0; p->queue && i < p->queue->n; i++)
        p->pending += strcmp(p->queue->v[i].state, "PENDING") == 0;
}

static Role node_role(SlurmNodeState s)
{
    switch (s) {
    case SLURM_NODE_IDLE:
        return ROLE_GOOD;
    case SLURM_NODE_MIXED:
    case SLURM_NODE_ALLOC:
        return ROLE_NORMAL;
    case SLURM_NODE_DRAIN:
        return ROLE_WARN;
    case SLURM_NODE_DOWN:
        return ROLE_BAD;
    default:
        return ROLE_DIM;
    }
}

/* The controller's line: answering (when the next round is), or how long it has not. */
static void draw_controller(const SlurmPanel *p, int y, int x, int w, int64_t now_ms)
{
    if (p->down_since_ms) {
        /* "new trials wait" only where there are trials (a watch has none) */
        draw_textf(y, x, w, ROLE_BAD, "controller (%s): NOT ANSWERING for %.0f s%s: %s", p->where,
                   (double)(now_ms - p->down_since_ms) / 1000.0,
                   p->tuning ? ", new trials wait" : "", p->last_error);
    } else if (!p->nodes || (!p->nodes->n && !p->rounds)) {
        draw_textf(y, x, w, ROLE_DIM, "controller (%s): asking...", p->where);
    } else {
        draw_textf(y, x, w, ROLE_DIM,
                   "controller (%s): answering; next look in %.0f s (back-off while nothing "
                   "changes), %ld calls so far",
                   p->where, p->interval_s, p->calls);
    }
}

static void draw_nodes(const SlurmPanel *p, Rect box, size_t sel, int64_t now_ms)
{
    char title[200];
    size_t n = p->nodes ? p->nodes->n : 0;
    snprintf(title, sizeof title,
             "Slurm nodes%s%s: %zu (%zu idle, %zu mixed, %zu alloc, %zu drain, %zu down)%s; "
             "d drains, u undrains",
             p->partition[0] ? " in " : "", p->partition, n, p->counts[SLURM_NODE_IDLE],
             p->counts[SLURM_NODE_MIXED], p->counts[SLURM_NODE_ALLOC], p->counts[SLURM_NODE_DRAIN],
             p->counts[SLURM_NODE_DOWN], p->down_since_ms ? " as last seen" : "");
    Rect r = draw_box(box, title, 0);
    if (r.h < 1)
        return;
    draw_controller(p, r.y, r.x, r.w, now_ms);
    if (r.h < 3)
        return;
    draw_textf(r.y + 1, r.x, r.w, ROLE_DIM, "  %-12s %-6s %-10s %-9s %8s %-10s %-14s %s", "node",
               "state", "slurm", "cpus", "mem_mb", "gpus", "partitions", "reason");
    size_t rows = (size_t)(r.h - 2);
    size_t first = sel >= rows ? sel - rows + 1 : 0;
    for (size_t i = first; i < n && i - first < rows; i++) {
        const SlurmNode *node = &p->nodes->v[i];
        int y = r.y + 2 + (int)(i - first);
        int selected = i == sel;
        if (selected)
            draw_fill((Rect){r.x, y, r.w, 1}, ROLE_SELECTED);
        char cpus[24], gpus[48];
        snprintf(cpus, sizeof cpus, "%d/%d", node->cpus_alloc, node->cpus);
        slurm_node_gpus_label(node, gpus, sizeof gpus);
        Role base = selected ? ROLE_SELECTED : ROLE_NORMAL;
        /* every cell cut to its column (draw_fit_cell): a long node name or partition list
         * must not push the next column */
        char c1[96], c2[96], c3[96], c4[96];
        int col = draw_textf(y, r.x, r.w, base, "%s %s ", selected ? ">" : " ",
                             draw_fit_cell(c1, sizeof c1, node->name, 12));
        col +=
            draw_textf(y, r.x + col, r.w - col, selected ? ROLE_SELECTED : node_role(node->state),
                       "%-6s ", slurm_node_state_name(node->state));
        col += draw_textf(y, r.x + col, r.w - col, base, "%s %-9s %8ld %s %s ",
                          draw_fit_cell(c2, sizeof c2, node->state_raw, 10), cpus, node->mem_mb,
                          draw_fit_cell(c3, sizeof c3, gpus, 10),
                          draw_fit_cell(c4, sizeof c4, node->partitions, 14));
        if (node->reason[0])
            draw_text(y, r.x + col, r.w - col, selected ? ROLE_SELECTED : node_role(node->state),
                      node->reason);
    }
}

static void draw_queue(const SlurmPanel *p, Rect box)
{
    char title[160];
    size_t n = p->queue ? p->queue->n : 0;
    snprintf(title, sizeof title, "Slurm queue: %zu job%s, %zu pending", n, plural_s((long long)n),
             p->pending);
    Rect r = draw_box(box, title, 0);
    if (r.h < 1)
        return;
    if (!n) {
        draw_text(r.y, r.x, r.w, ROLE_DIM, "no job");
        return;
    }
    draw_textf(r.y, r.x, r.w, ROLE_DIM, "%-10s %-10s %-9s %5s %-16s %-20s %s", "job", "user",
               "state", "nodes", "gres", "name", "nodelist, or why it waits");
    for (size_t i = 0; i < n && (int)i + 1 < r.h; i++) {
        const SlurmQueueJob *j = &p->queue->v[i];
        int pending = strcmp(j->state, "PENDING") == 0;
        int y = r.y + 1 + (int)i;
        /* other users' job names and user names are of any length and script: each is cut
         * to its column, so that the nodelist, or why a job waits, stays in its own */
        char c1[96], c2[96], c3[96], c4[96], c5[96];
        int col = draw_textf(y, r.x, r.w, pending ? ROLE_WARN : ROLE_NORMAL, "%s %s %s %5d %s ",
                             draw_fit_cell(c1, sizeof c1, j->id, 10),
                             draw_fit_cell(c2, sizeof c2, j->user, 10),
                             draw_fit_cell(c3, sizeof c3, j->state, 9), j->nodes,
                             draw_fit_cell(c4, sizeof c4, j->gres, 16));
        draw_textf(y, r.x + col, r.w - col, pending ? ROLE_WARN : ROLE_NORMAL, "%s %s",
                   draw_fit_cell(c5, sizeof c5, j->name, 20), pending ? j->reason : j->nodelist);
    }
}

void view_slurm_draw(const SlurmPanel *p, Rect nodes_box, Rect queue_box, size_t sel,
                     int64_t now_ms)
{
    if (nodes_box.w > 0)
        draw_nodes(p, nodes_box, sel, now_ms);
    if (queue_box.w > 0)
        draw_queue(p, queue_box);
}

void slurm_view_draw(const App *a)
{
    const Layout *l = &a->layout;
    Rect none = {0, 0, 0, 0};
    view_slurm_draw(&a->slurm_panel, l->shown[PANE_HOSTS] ? l->rect[PANE_HOSTS] : none,
                    l->shown[PANE_QUEUE] ? l->rect[PANE_QUEUE] : none, a->host_sel, clock_now_ms());
}

/* ---- the loop's plumbing: everything that talks to the controller is the desk's ---- */

size_t slurm_pollfds(App *a, struct pollfd *fds, size_t cap, int64_t *deadline_ms)
{
    if (!a->slurm)
        return 0;
    /* The panel counts the outage's seconds: once a second while it lasts. */
    if (slurm_desk_down_since_ms(a->slurm)) {
        int64_t tick = clock_now_ms() + 1000;
        if (*deadline_ms < 0 || tick < *deadline_ms)
            *deadline_ms = tick;
    }
    return slurm_desk_pollfds(a->slurm, fds, cap, deadline_ms);
}

/* Just after slurmctld starts again the nodes are "unknown" until their slurmd registers,
 * and a step asked then fails: the session's nodes must be known again first. */
static int session_nodes_unknown(const App *a)
{
    const SlurmNodes *ns = a->slurm_panel.nodes;
    for (size_t i = 0; ns && i < ns->n; i++) {
        if (strncmp(ns->v[i].state_raw, "unknown", 7) != 0)
            continue;
        for (size_t m = 0; m < a->cluster->n_machines; m++)
            if (strcmp(a->cluster->machines[m].name, ns->v[i].name) == 0)
                return 1;
    }
    return 0;
}

/* Trials through Slurm wait while its controller does not answer: a new srun would fail
 * after ~9 s, each one a lost trial. Running steps go on (slurmd runs them). */
static void hold_trials(App *a, int down)
{
    if (!a->tuner || strcmp(a->launcher, "slurm") != 0 || down == a->slurm_hold)
        return;
    a->slurm_hold = down;
    tuner_set_paused(a->tuner, app_trials_held(a));
    if (down)
        app_log(a, "slurm: no new trial starts until the controller answers (running steps "
                   "go on; every measured trial is kept)");
    else
        app_log(a, "slurm: trials go on");
}

void slurm_step(App *a, const struct pollfd *fds, size_t n, int64_t now_ms)
{
    if (!a->slurm)
        return;
    slurm_desk_step(a->slurm, fds, n, now_ms);
    if (slurm_desk_down_since_ms(a->slurm))
        a->dirty = 1; /* the seconds count */
    if (!slurm_desk_changed(a->slurm))
        return;
    const SlurmWatch *w = slurm_desk_watch(a->slurm);
    SlurmPanel *p = &a->slurm_panel;
    p->nodes = slurm_watch_nodes(w);
    p->queue = slurm_watch_queue(w);
    p->interval_s = slurm_watch_interval_s(w);
    p->rounds = slurm_watch_rounds(w);
    p->calls = slurm_ctl_calls(slurm_desk_ctl(a->slurm));
    p->down_since_ms = slurm_desk_down_since_ms(a->slurm);
    snprintf(p->last_error, sizeof p->last_error, "%s", slurm_desk_last_error(a->slurm));
    slurm_panel_count(p);
    if (a->host_sel >= p->nodes->n && p->nodes->n)
        a->host_sel = p->nodes->n - 1;
    char msg[512];
    int bad;
    if (slurm_desk_take_outcome(a->slurm, msg, sizeof msg, &bad)) {
        app_message(a, bad, "%s", msg);
        app_log(a, "%s", msg);
        if (!bad && a->live_slurm) /* a drain done: the live scheduler reads it now */
            liveslurm_look_at_nodes(a->live_slurm);
    }
    /* Back from an outage: one more round, and the session's nodes known, before trials go
     * on (slurmctld reconciles the steps it missed as the nodes report in). */
    if (p->down_since_ms || !a->slurm_hold)
        a->slurm_back_round = 0;
    else if (!a->slurm_back_round)
        a->slurm_back_round = p->rounds;
    int unknown = a->slurm_hold && session_nodes_unknown(a);
    /* The watch reads the node table every 10 s unless asked: while the trials wait for
     * these nodes to be known, every round reads it. */
    if (unknown && !p->down_since_ms)
        slurm_desk_poke(a->slurm, now_ms);
    hold_trials(a, p->down_since_ms != 0 ||
                       (a->slurm_hold && (unknown || p->rounds <= a->slurm_back_round)));
    a->dirty = 1;
}

void slurm_trial_failed(App *a, const char *reason)
{
    if (!a->slurm || !strstr(reason, "the controller did not answer"))
        return;
    /* srun could not reach slurmctld: say so now rather than after the watch's ~9 s round,
     * so the next trial does not start into the same outage */
    hold_trials(a, 1);
    slurm_desk_poke(a->slurm, clock_now_ms());
}

/* d, u on the hosts view: the command line, filled in for the selected node (a reason may be
 * typed after a drain's; Enter asks, y runs it). */
void slurm_offer_drain(App *a, int drain)
{
    const SlurmNodes *ns = a->slurm_panel.nodes;
    if (!a->slurm || !ns || a->host_sel >= ns->n)
        return;
    a->prompt = ':';
    snprintf(a->input, sizeof a->input, "%s %s%s", drain ? "drain" : "undrain",
             ns->v[a->host_sel].name, drain ? " " : "");
    a->dirty = 1;
}

/* The operator said y to the question `:drain NODE` asked. */
void slurm_drain_confirmed(App *a)
{
    Error err;
    if (!a->slurm ||
        slurm_desk_update_node(a->slurm, a->drain_node, a->drain_on, a->drain_reason, &err) < 0) {
        app_message(a, 1, "slurm: %s %s: %s", a->drain_on ? "drain" : "undrain", a->drain_node,
                    a->slurm ? err.msg : "not a Slurm cluster");
        return;
    }
    app_message(a, 0, "slurm: %s %s: asking the controller...", a->drain_on ? "drain" : "undrain",
                a->drain_node);
    app_log(a, "slurm: %s %s asked (scontrol update)", a->drain_on ? "drain" : "undrain",
            a->drain_node);
}
