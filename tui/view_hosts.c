/* The hosts view: every host's connection state, handshake latency, host-key status with
 * its fingerprint, and last error; and accepting an unknown host key, which is an explicit
 * operator action after seeing the fingerprint. */
#include <curses.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "core/base/clock.h"
#include "remote/live/hostdesk.h"
#include "tui/app.h"
#include "tui/draw.h"
#include "tui/view.h"

static Role state_role(HostState s)
{
    return s == HOST_READY ? ROLE_GOOD : s == HOST_DOWN ? ROLE_BAD : ROLE_WARN;
}

static Role key_role(HostKeyStatus k)
{
    return k == HOSTKEY_OK || k == HOSTKEY_ACCEPTED ? ROLE_GOOD
           : k == HOSTKEY_UNCHECKED                 ? ROLE_DIM
                                                    : ROLE_BAD;
}

/* Where the hosts table's rows are inside its box r (below the column heads): `per` screen
 * rows a host, from host `first` on, the selected one kept in sight. Shared by the drawing
 * and the mouse. */
static void host_rows(const App *a, Rect r, size_t *per, size_t *first)
{
    size_t n = a->cluster->n_machines;
    *per = 1;
    /* Up to three rows per host when there is room: the fingerprint and the last error are
     * what an operator must read whole. */
    if (a->pool)
        *per = r.h - 1 >= 3 * (int)n ? 3 : r.h - 1 >= 2 * (int)n ? 2 : 1;
    size_t rows = r.h > 1 ? (size_t)(r.h - 1) / *per : 0;
    *first = rows && a->host_sel >= rows ? a->host_sel - rows + 1 : 0;
}

static void hosts_draw(const App *a)
{
    const Layout *l = &a->layout;
    if (l->shown[PANE_LOG])
        view_log_draw(a, l->rect[PANE_LOG]);
    if (a->slurm) {
        slurm_view_draw(a); /* Slurm's nodes are reached through Slurm, not SSH */
        return;
    }
    if (!l->shown[PANE_HOSTS])
        return;
    const Cluster *c = a->cluster;
    char title[160];
    snprintf(title, sizeof title, "Hosts: %zu, %s", c->n_machines,
             a->pool  ? "SSH (a accepts an unknown host key, c reconnects)"
             : a->sim ? "simulated, no SSH"
                      : "not connected: this session's trials run here");
    Rect r = draw_box(l->rect[PANE_HOSTS], title, 0);
    if (r.h < 1)
        return;
    /* The name and host columns grow to the longest (10 and 18 at least) as far as the rest
     * of the row (state, latency, drops, key: 40 columns) leaves room; longer ones are cut
     * in the middle. */
    int name_w = 10, host_w = 18;
    for (size_t m = 0; m < c->n_machines; m++) {
        int nl = (int)strlen(c->machines[m].name), hl = (int)strlen(c->machines[m].host);
        name_w = nl > name_w ? nl : name_w;
        host_w = hl > host_w ? hl : host_w;
    }
    int room = r.w - 4 - 40;
    if (name_w + host_w > room) {
        int share = room * 2 / 5;
        name_w = name_w < share ? name_w : share > 10 ? share : 10;
        host_w = room - name_w > 18 ? room - name_w : 18;
    }
    if (name_w > 120)
        name_w = 120;
    if (host_w > 120)
        host_w = 120;
    draw_textf(r.y, r.x, r.w, ROLE_DIM, "  %-*s %-*s %-11s %8s %5s  %s", name_w, "machine",
               host_w, "host", "state", "latency", "drops", "host key");
    size_t per, first;
    host_rows(a, r, &per, &first);
    int y = r.y + 1;
    for (size_t m = first; m < c->n_machines && y + (int)per - 1 < r.y + r.h; m++) {
        int sel = m == a->host_sel;
        if (sel)
            draw_fill((Rect){r.x, y, r.w, 1}, ROLE_SELECTED);
        if (!a->pool) {
            char name[160], host[160];
            draw_textf(y++, r.x, r.w, sel ? ROLE_SELECTED : ROLE_DIM,
                       "%s %-*s %-*s %-11s %8s %5s  %s", sel ? ">" : " ", name_w,
                       draw_fit_cell(name, sizeof name, c->machines[m].name, name_w), host_w,
                       draw_fit_cell(host, sizeof host, c->machines[m].host, host_w),
                       a->sim ? "simulated" : "-", "-",
                       "-", "n/a");
            continue;
        }
        HostInfo h;
        hostpool_info(a->pool, m, &h);
        char lat[16] = "-";
        if (h.handshake_ms >= 0)
            snprintf(lat, sizeof lat, "%.0fms", h.handshake_ms);
        char name[160], host[160];
        int col = draw_textf(y, r.x, r.w, sel ? ROLE_SELECTED : ROLE_NORMAL, "%s %-*s %-*s ",
                             sel ? ">" : " ", name_w,
                             draw_fit_cell(name, sizeof name, h.name, name_w), host_w,
                             draw_fit_cell(host, sizeof host, h.host, host_w));
        col += draw_textf(y, r.x + col, r.w - col, sel ? ROLE_SELECTED : state_role(h.state),
                          "%-11s ", hostpool_state_name(h.state));
        col += draw_textf(y, r.x + col, r.w - col, sel ? ROLE_SELECTED : ROLE_NORMAL, "%8s %5d  ",
                          lat, h.drops);
        col += draw_textf(y, r.x + col, r.w - col, sel ? ROLE_SELECTED : key_role(h.key), "%s",
                          hostpool_key_name(h.key));
        if (per == 1 && h.fingerprint[0])
            draw_textf(y, r.x + col, r.w - col, sel ? ROLE_SELECTED : ROLE_DIM, " %s",
                       h.fingerprint);
        y++;
        if (per >= 2) {
            if (h.fingerprint[0])
                draw_textf(y, r.x + 4, r.w - 4, ROLE_DIM, "key %s", h.fingerprint);
            y++;
        }
        if (per >= 3) {
            if (h.last_error[0])
                draw_wrapped(y, r.x + 4, r.w - 4, 1, ROLE_BAD, h.last_error);
            else if (h.warning[0])
                draw_wrapped(y, r.x + 4, r.w - 4, 1, ROLE_WARN, h.warning);
            else if (h.state == HOST_DOWN && h.retry_at_ms > 0)
                draw_textf(y, r.x + 4, r.w - 4, ROLE_DIM, "retry in %.1f s",
                           (double)(h.retry_at_ms - clock_now_ms()) / 1000.0);
            y++;
        }
    }
    if (a->confirm_accept) {
        Rect o = layout_overlay(a->layout.cols, a->layout.rows, 86, 7);
        draw_fill_around(o, a->layout.cols, a->layout.rows);
        Rect in = draw_box(o, "Accept an unknown host key?", 1);
        in.x++; /* a blank column inside each border, as the help has */
        in.w -= 2;
        if (in.h >= 4 && in.w > 0) {
            draw_textf(in.y, in.x, in.w, ROLE_NORMAL, "host %s (%s) offers the key",
                       c->machines[a->accept_host].name, a->accept_where);
            draw_text(in.y + 1, in.x + 2, in.w - 2, ROLE_KEY, a->accept_fp);
            draw_text(in.y + 2, in.x, in.w, ROLE_NORMAL,
                      "Compare it with the host's own (ssh-keygen -lf /etc/ssh/ssh_host_*.pub).");
            draw_text(in.y + 3, in.x, in.w, ROLE_WARN,
                      "y adds it to known_hosts and reconnects; any other key cancels.");
        }
    }
}

/* The loop's plumbing: everything that touches the network is the host desk's. */
static HostDesk *desk(App *a)
{
    if (!a->desk && a->pool)
        a->desk = hostdesk_new(a->pool);
    return a->desk;
}

size_t hosts_pollfds(App *a, struct pollfd *fds, size_t cap, int64_t *deadline_ms)
{
    if (!desk(a))
        return 0;
    return hostdesk_pollfds(a->desk, a->ss ? simsched_live(a->ss) : NULL, fds, cap, deadline_ms);
}

void hosts_step(App *a, const struct pollfd *fds, size_t n, int64_t now_ms)
{
    if (!desk(a))
        return;
    hostdesk_step(a->desk, a->ss ? simsched_live(a->ss) : NULL, fds, n, now_ms);
    char msg[512];
    int bad;
    if (hostdesk_take_outcome(a->desk, msg, sizeof msg, &bad)) {
        app_message(a, bad, "%s", msg);
        app_log(a, "%s", msg);
    }
    if (hostdesk_changed(a->desk))
        a->dirty = 1;
}

/* a and c where this session reaches no host over SSH: said, rather than nothing at all. */
static void no_ssh(App *a, const char *what)
{
    app_message(a, 1, "%s: no SSH in this session (%s)", what,
                a->sim     ? "the hosts are simulated"
                : a->slurm ? "Slurm's nodes are reached through Slurm"
                           : "its trials run here");
}

/* a: the prompt shows the key the host offered, exactly as the pool saw it. */
static void hosts_accept_selected(App *a)
{
    if (!desk(a)) {
        no_ssh(a, "a: no host key to accept");
        return;
    }
    Error err;
    if (hostdesk_offered(a->desk, a->host_sel, a->accept_fp, sizeof a->accept_fp, &err) < 0) {
        app_message(a, 1, "%s", err.msg);
        return;
    }
    /* The address and port the key was offered on, which are what known_hosts will trust:
     * an ssh config's HostName or Port may differ from the inventory's host. */
    HostInfo i;
    hostpool_info(a->pool, a->host_sel, &i);
    snprintf(a->accept_where, sizeof a->accept_where, "%s port %d", i.target, i.port);
    a->confirm_accept = 1;
    a->accept_host = (long)a->host_sel;
    a->dirty = 1;
}

/* y: that key, and no other, may be added. */
void hosts_accept_confirmed(App *a)
{
    Error err;
    const char *name = a->cluster->machines[a->accept_host].name;
    if (!desk(a) || hostdesk_accept(a->desk, (size_t)a->accept_host, a->accept_fp, &err) < 0) {
        app_message(a, 1, "%s: cannot accept the key: %s", name, a->desk ? err.msg : "no SSH");
        return;
    }
    app_message(a, 0, "%s: connecting to accept %s ...", name, a->accept_fp);
}

static void hosts_key(App *a, ViewAction action)
{
    size_t n = a->slurm && a->slurm_panel.nodes ? a->slurm_panel.nodes->n : a->cluster->n_machines;
    switch (action) {
    case VIEW_ACT_PAGE_UP:
        a->host_sel = a->host_sel > 10 ? a->host_sel - 10 : 0;
        break;
    case VIEW_ACT_PAGE_DOWN:
        a->host_sel = a->host_sel + 10 < n ? a->host_sel + 10 : n ? n - 1 : 0;
        break;
    case VIEW_ACT_FIRST:
        a->host_sel = 0;
        break;
    case VIEW_ACT_LAST:
        a->host_sel = n ? n - 1 : 0;
        break;
    case VIEW_ACT_UP:
        if (a->host_sel)
            a->host_sel--;
        break;
    case VIEW_ACT_DOWN:
        if (a->host_sel + 1 < n)
            a->host_sel++;
        break;
    case VIEW_ACT_ACCEPT:
        hosts_accept_selected(a);
        break;
    case VIEW_ACT_DRAIN:
    case VIEW_ACT_UNDRAIN:
        if (a->slurm)
            slurm_offer_drain(a, action == VIEW_ACT_DRAIN);
        else
            app_message(a, 1,
                        "%c: drains a Slurm node, and this cluster is not Slurm "
                        "(:drain NODE takes a node from the scheduler)",
                        action == VIEW_ACT_DRAIN ? 'd' : 'u');
        break;
    case VIEW_ACT_RECONNECT:
        if (!desk(a))
            no_ssh(a, "c: nothing to reconnect");
        else if (hostdesk_reconnect(a->desk, a->host_sel) == 0)
            app_message(a, 0, "reconnecting");
        break;
    default:
        break;
    }
}

/* The wheel moves the selection; a click selects the host (or Slurm node) under it. */
static void hosts_mouse(App *a, const MEVENT *ev)
{
    if (ev->bstate & (BUTTON4_PRESSED | BUTTON5_PRESSED)) {
        hosts_key(a, ev->bstate & BUTTON4_PRESSED ? VIEW_ACT_UP : VIEW_ACT_DOWN);
    } else if (!a->slurm && a->layout.shown[PANE_HOSTS] && (ev->bstate & BUTTON1_PRESSED)) {
        Rect box = a->layout.rect[PANE_HOSTS];
        Rect r = {box.x + 1, box.y + 1, box.w - 2, box.h - 2};
        size_t per, first;
        host_rows(a, r, &per, &first);
        if (rect_contains(r, ev->x, ev->y) && ev->y > r.y) {
            size_t m = first + (size_t)(ev->y - r.y - 1) / per;
            if (m < a->cluster->n_machines)
                a->host_sel = m;
        }
    }
    a->dirty = 1;
}

const View VIEW_HOSTS_TABLE = {"Hosts", hosts_draw, hosts_key, hosts_mouse};
