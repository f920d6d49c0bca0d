/* The tune view: surrogate pane, override editor, best-so-far plot, the trial table
 * (tui/view_trials.c) and the log. */
#include <curses.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "tui/app.h"
#include "tui/draw.h"
#include "tui/draw_num.h"
#include "tui/view.h"

/* "cpu 24 gpu0 200": the machine's devices with their inputs. */
static void device_shares(const Schedule *s, size_t m, char *out, size_t cap)
{
    const Cluster *c = s->cluster;
    const MachineType *t = cluster_machine_type(c, m);
    size_t len = 0;
    out[0] = 0;
    for (size_t d = 0; d < t->n_devices && len < cap; d++) {
        int in = s->inputs[c->machines[m].first_device + d];
        if (in > 0) /* idle devices would only crowd the column */
            len += (size_t)snprintf(out + len, cap - len, "%s%s %d", len ? " " : "",
                                    t->devices[d].id, in);
    }
}

static const char *role_of(const Schedule *s, size_t m)
{
    return s->worker[m] && s->ps[m] ? "W+PS" : s->worker[m] ? "W" : s->ps[m] ? "PS" : "-";
}

void view_surrogate_draw(Rect box, const TrialRecord *rec, const Cluster *c, const char *optimizer,
                         int suggesting)
{
    char title[160];
    if (rec)
        snprintf(title, sizeof title, "Surrogate: trial %d%s (%s)", rec->trial,
                 rec->overridden ? " override" : "", optimizer);
    else
        snprintf(title, sizeof title, "Surrogate (%s)", optimizer);
    Rect r = draw_box(box, title, 0);
    if (r.h <= 0)
        return;
    if (!rec) {
        draw_text(r.y, r.x, r.w, ROLE_DIM, suggesting ? "suggesting..." : "no trial yet");
        return;
    }
    const Suggestion *sg = &rec->suggestion;
    const Schedule *s = sg->schedule;
    const Observation *o = rec->obs;
    char m1[16], m2[16], m3[16];
    int col = 0;
    if (sg->has_prediction) {
        draw_seconds(m1, sizeof m1, sg->mean_s);
        draw_seconds(m2, sizeof m2, sg->p10_s);
        draw_seconds(m3, sizeof m3, sg->p90_s);
        col = draw_textf(r.y, r.x, r.w, ROLE_BAR_PRED, "predicted %s s [%s-%s]", m1, m2, m3);
    } else {
        col = draw_textf(r.y, r.x, r.w, ROLE_DIM, "no prediction (%s has no model)", optimizer);
    }
    if (o && o->status == TRIAL_OK) {
        draw_seconds(m1, sizeof m1, o->time_s);
        draw_textf(r.y, r.x + col, r.w - col, ROLE_GOOD, "  measured %s s", m1);
    } else if (o) {
        draw_textf(r.y, r.x + col, r.w - col, ROLE_BAD, "  %s", trial_status_name(o->status));
    } else {
        /* held before its launch (refused hosts, a stop not answered): not running yet */
        draw_text(r.y, r.x + col, r.w - col, rec->launched ? ROLE_WARN : ROLE_DIM,
                  rec->launched ? "  running" : "  waiting");
    }
    /* Bars: predicted compute per machine when the model gives it, else what was measured. */
    int have_pred = sg->has_prediction && sg->machine_mean_s;
    /* Scaled to the whole iteration, so a bar reads as compute's part of the step. */
    double scale = have_pred ? sg->p90_s : o && o->status == TRIAL_OK ? o->time_s : 0;
    for (size_t m = 0; m < c->n_machines; m++) {
        double v = have_pred ? (sg->machine_p90_s ? sg->machine_p90_s[m] : sg->machine_mean_s[m])
                   : o && o->machine_time_s ? o->machine_time_s[m]
                                            : NAN;
        if (isfinite(v) && v > scale)
            scale = v;
    }
    int name_w = 8, role_w = 4, shares_w = 6, val_w = 6;
    for (size_t m = 0; m < c->n_machines; m++) /* long names get a quarter of the pane */
        if ((int)strlen(c->machines[m].name) > name_w)
            name_w = (int)strlen(c->machines[m].name);
    if (name_w > r.w / 4)
        name_w = r.w / 4 > 8 ? r.w / 4 : 8;
    for (size_t m = 0; m < c->n_machines; m++) {
        char sh[96];
        device_shares(s, m, sh, sizeof sh);
        if (s->worker[m] && (int)strlen(sh) > shares_w)
            shares_w = (int)strlen(sh);
    }
    if (shares_w > r.w / 3)
        shares_w = r.w / 3;
    if (r.h >= 2)
        draw_textf(r.y + 1, r.x, r.w, ROLE_DIM, "%-*s %-4s %-*s %s", name_w, "machine", "role", shares_w,
                   "inputs", have_pred ? "compute (p10-p90)" : "measured compute");
    int bar_x = name_w + 1 + role_w + 1 + shares_w + 1;
    int bar_w = r.w - bar_x - val_w - 1;
    /* When the pane is short, its last row says how many machines it could not show. */
    size_t fit = r.h > 2 ? (size_t)(r.h - 2) : 0;
    if (fit < c->n_machines && fit > 0) {
        draw_textf(r.y + r.h - 1, r.x, r.w, ROLE_DIM, "... %zu more machines (taller terminal)",
                   c->n_machines - fit + 1);
        fit--;
    }
    for (size_t m = 0; m < c->n_machines && m < fit; m++) {
        int y = r.y + 2 + (int)m;
        Role rr = s->worker[m] ? ROLE_NORMAL : ROLE_DIM;
        char name[160];
        draw_textf(y, r.x, name_w, rr, "%-*s", name_w,
                   draw_fit_cell(name, sizeof name, c->machines[m].name, name_w));
        draw_textf(y, r.x + name_w + 1, role_w, rr, "%-4s", role_of(s, m));
        char sh[96];
        device_shares(s, m, sh, sizeof sh);
        draw_text(y, r.x + name_w + role_w + 2, shares_w, rr, s->worker[m] ? sh : "");
        if (bar_w < 4 || !s->worker[m])
            continue;
        double mean = have_pred                ? sg->machine_mean_s[m]
                      : o && o->machine_time_s ? o->machine_time_s[m]
                                               : NAN;
        if (!isfinite(mean) || scale <= 0) {
            draw_text(y, r.x + bar_x, bar_w, ROLE_DIM, have_pred ? "no estimate" : "-");
            continue;
        }
        if (have_pred && sg->machine_p10_s && sg->machine_p90_s)
            draw_range_bar(y, r.x + bar_x, bar_w, sg->machine_p10_s[m] / scale, mean / scale,
                           sg->machine_p90_s[m] / scale, ROLE_BAR_PRED, ROLE_BAR_SPREAD);
        else
            draw_bar(y, r.x + bar_x, bar_w, mean / scale, have_pred ? ROLE_BAR_PRED : ROLE_BAR_CPU);
        char v[16];
        draw_seconds_unit(v, sizeof v, mean);
        draw_textf(y, r.x + bar_x + bar_w + 1, val_w, ROLE_NORMAL, "%*s", val_w, v);
    }
}

Rect view_editor_rows(Rect box)
{
    Rect r = {box.x + 1, box.y + 1, box.w - 2, box.h - 2};
    if (r.w <= 0 || r.h <= 0)
        return (Rect){0, 0, 0, 0};
    int head = (r.h >= 12 ? 2 : 1) + (r.h >= 10 ? 3 : 1), footer = r.h >= 8 ? 1 : 0;
    int h = r.h - head - footer;
    return (Rect){r.x, r.y + head, r.w, h > 0 ? h : 0};
}

static void draw_editor(const App *a, Rect box)
{
    const Editor *e = a->editor;
    char title[96];
    snprintf(title, sizeof title, "Override editor  step %d", e->step);
    Rect r = draw_box(box, title, 1);
    if (r.h <= 0)
        return;
    char m1[16], m2[16], m3[16];
    /* Fixed heights for the prediction and the verdict, so rows stay where the mouse
     * expects them (view_editor_rows). */
    int pred_h = r.h >= 12 ? 2 : 1, verdict_h = r.h >= 10 ? 3 : 1;
    int y = r.y;
    if (a->pred_ok && a->pred.has_prediction) {
        draw_seconds(m1, sizeof m1, a->pred.mean_s);
        draw_seconds(m2, sizeof m2, a->pred.p10_s);
        draw_seconds(m3, sizeof m3, a->pred.p90_s);
        draw_textf(y, r.x, r.w, ROLE_BAR_PRED, "predicted %s s [%s-%s] if run", m1, m2, m3);
    } else {
        char why[300];
        snprintf(why, sizeof why, "no prediction: %s", a->pred_why);
        draw_wrapped(y, r.x, r.w, pred_h, ROLE_DIM, why);
    }
    y += pred_h;
    if (y < r.y + r.h) {
        if (a->edit_valid) {
            draw_text(y, r.x, r.w, ROLE_GOOD, "valid: Enter launches it");
        } else {
            /* The whole reason: an operator must see why, not half of it. */
            char why[600];
            snprintf(why, sizeof why, "cannot launch: %s", a->edit_err.msg);
            draw_wrapped(y, r.x, r.w, verdict_h, ROLE_BAD, why);
        }
    }
    Rect list = view_editor_rows(box);
    y = list.y;
    int rows = list.h;
    int footer = r.h >= 8 ? 1 : 0;
    if (rows <= 0)
        return;
    size_t first = e->cursor >= (size_t)rows ? e->cursor - (size_t)rows + 1 : 0;
    const Schedule *s = e->s;
    int batch = s->job.batch > 0 ? s->job.batch : 1;
    /* the machines' column: 10, or the longest name up to a third of the pane, so that
     * every [W] lines up */
    int name_w = 10;
    for (size_t m = 0; m < a->cluster->n_machines; m++) {
        int nw = draw_width(a->cluster->machines[m].name);
        name_w = nw > name_w ? nw : name_w;
    }
    if (name_w > r.w / 3)
        name_w = r.w / 3 > 10 ? r.w / 3 : 10;
    for (size_t i = first; i < e->n_rows && (int)(i - first) < rows; i++, y++) {
        EditorRow row = e->rows[i];
        int sel = i == e->cursor;
        Role base = sel ? ROLE_SELECTED : ROLE_NORMAL;
        if (sel)
            draw_fill((Rect){r.x, y, r.w, 1}, ROLE_SELECTED);
        if (row.device < 0) {
            size_t m = row.machine;
            char name[160];
            draw_textf(y, r.x, r.w, base, "%s %s %s %s  %d inputs", sel ? ">" : " ",
                       draw_fit_cell(name, sizeof name, a->cluster->machines[m].name, name_w),
                       s->worker[m] ? "[W]" : "[ ]",
                       s->ps[m] ? "[PS]" : "[  ]", schedule_machine_inputs(s, m));
            continue;
        }
        size_t mm;
        const DeviceSpec *d = cluster_device(a->cluster, (size_t)row.device, &mm);
        int in = s->inputs[row.device];
        int col = draw_textf(y, r.x, r.w, base, "%s   %-6s %5d %5.1f%% ", sel ? ">" : " ", d->id,
                             in, 100.0 * in / batch);
        int bw = r.w - col - 16;
        if (bw > 3) {
            draw_bar(y, r.x + col, bw, (double)in / batch,
                     d->kind == DEVICE_GPU ? ROLE_BAR_GPU : ROLE_BAR_CPU);
            col += bw + 1;
        }
        if (a->pred_ok && a->pred.device_mean_s && in > 0 &&
            isfinite(a->pred.device_mean_s[row.device])) {
            draw_seconds(m1, sizeof m1, a->pred.device_mean_s[row.device]);
            col += draw_textf(y, r.x + col, r.w - col, base, "%6ss ", m1);
        }
        if ((long)i == e->mark)
            draw_text(y, r.x + col, r.w - col, ROLE_WARN, "source");
    }
    if (footer)
        draw_text(r.y + r.h - 1, r.x, r.w, ROLE_KEY,
                  "+/- move  m source  w worker  p PS  [ ] step  Enter launch  Esc discard");
}

static void draw_plot(const App *a, Rect box)
{
    size_t n = tuner_n_trials(a->tuner);
    Rect r = draw_box(box, "Best-so-far (s/iteration)", 0);
    if (r.h < 2 || r.w < 12)
        return;
    double *best = malloc((n ? n : 1) * sizeof *best);
    double *meas = malloc((n ? n : 1) * sizeof *meas);
    double *pred = malloc((n ? n : 1) * sizeof *pred);
    double b = INFINITY;
    int any_pred = 0;
    for (size_t i = 0; i < n; i++) {
        const TrialRecord *t = tuner_trial(a->tuner, i);
        int ok = t->obs && t->obs->status == TRIAL_OK;
        meas[i] = ok ? t->obs->time_s : NAN;
        if (ok && t->obs->time_s < b)
            b = t->obs->time_s;
        best[i] = isfinite(b) ? b : NAN;
        pred[i] = t->suggestion.has_prediction ? t->suggestion.mean_s : NAN;
        any_pred |= t->suggestion.has_prediction;
    }
    PlotSeries ser[3] = {{meas, n, 1, 0}, {pred, n, 2, 0}, {best, n, 3, 1}};
    double lo, hi;
    int legend = r.h >= 5;
    int axis_w = 7;
    Rect area = {r.x + axis_w, r.y, r.w - axis_w, r.h - 1 - legend};
    /* Scale to the best-so-far and the predictions: one bad trial or one prior-bound
     * prediction must not squash the curve an operator watches; points beyond the range are
     * counted instead. */
    int have_range = plot_time_range(best, pred, n, &lo, &hi);
    size_t above = have_range ? plot_trials_above(meas, pred, n, hi) : 0;
    if (!have_range || area.h < 1) {
        draw_text(r.y, r.x, r.w, ROLE_DIM, "waiting for the first measured trial");
    } else {
        PlotGrid *g = plot_grid_new(area.w, area.h);
        plot_render(g, plot_style_shown(a->plot_style, draw_unicode()), n > 1 ? (double)(n - 1) : 1.0, lo, hi, ser, 3);
        static const Role SER_ROLE[4] = {ROLE_NORMAL, ROLE_PLOT_MEASURED, ROLE_PLOT_PRED,
                                         ROLE_PLOT_BEST};
        for (int y = 0; y < g->h; y++)
            for (int x = 0; x < g->w; x++) {
                size_t k = (size_t)y * g->w + x;
                if (g->series[k])
                    draw_wchar(area.y + y, area.x + x, g->cell[k], SER_ROLE[g->series[k]]);
            }
        plot_grid_free(g);
        char v[16];
        draw_seconds(v, sizeof v, hi);
        draw_textf(area.y, r.x, axis_w - 1, ROLE_DIM, "%6s", v);
        draw_seconds(v, sizeof v, lo);
        draw_textf(area.y + area.h - 1, r.x, axis_w - 1, ROLE_DIM, "%6s", v);
        draw_textf(r.y + area.h, area.x, area.w, ROLE_DIM, "1%*zu", area.w - 1 > 0 ? area.w - 1 : 1,
                   n);
        if (legend) {
            int col = 0;
            /* predictions alone draw the plot before any trial is measured (failed ones,
             * a probe): no best yet, said so, not "best - s" */
            draw_seconds(v, sizeof v, b);
            if (isfinite(b))
                col +=
                    draw_textf(r.y + r.h - 1, r.x + col, r.w - col, ROLE_PLOT_BEST, "best %s s", v);
            else
                col += draw_text(r.y + r.h - 1, r.x + col, r.w - col, ROLE_DIM, "best: none yet");
            col += draw_text(r.y + r.h - 1, r.x + col, r.w - col, ROLE_PLOT_MEASURED, "  measured");
            col +=
                draw_text(r.y + r.h - 1, r.x + col, r.w - col, any_pred ? ROLE_PLOT_PRED : ROLE_DIM,
                          any_pred ? "  predicted" : "  pred: none");
            if (above)
                draw_textf(r.y + r.h - 1, r.x + col, r.w - col, ROLE_DIM, "  %zu above", above);
        }
    }
    free(best);
    free(meas);
    free(pred);
}

void view_log_draw(const App *a, Rect box)
{
    Rect r = draw_box(box, "Log", 0);
    if (r.h <= 0)
        return;
    size_t n = a->log_n < APP_LOG_LINES ? a->log_n : APP_LOG_LINES;
    size_t show = n < (size_t)r.h ? n : (size_t)r.h;
    for (size_t i = 0; i < show; i++) {
        size_t k = (a->log_n - show + i) % APP_LOG_LINES;
        draw_text(r.y + (int)i, r.x, r.w, ROLE_NORMAL, a->log[k]);
    }
}

static void tune_draw(const App *a)
{
    const Layout *l = &a->layout;
    if (!a->tuner) { /* --workload: the live scheduler only; or Slurm watched */
        /* Across the screen, wrapped: the panes it would sit in are not drawn (it was cut
         * to the surrogate pane's width, half the screen, with the rest blank). Where to
         * look instead: watching Slurm has no scheduler for 2 to show. */
        Rect r = l->rect[PANE_SURROGATE];
        draw_wrapped(r.y + 1, 1, l->cols - 2, 3, ROLE_DIM,
                     a->ss ? "no tuning in this session (--job FILE tunes); 2 shows the live "
                             "scheduler"
                           : "no tuning in this session (--job FILE tunes); 3 shows Slurm's "
                             "nodes and queue");
        if (l->shown[PANE_LOG])
            view_log_draw(a, l->rect[PANE_LOG]);
        return;
    }
    if (l->shown[PANE_SURROGATE])
        view_surrogate_draw(l->rect[PANE_SURROGATE], app_current_trial(a), a->cluster,
                            tuner_optimizer_name(a->tuner), tuner_running(a->tuner));
    if (l->shown[PANE_EDITOR] && a->editor)
        draw_editor(a, l->rect[PANE_EDITOR]);
    if (l->shown[PANE_PLOT])
        draw_plot(a, l->rect[PANE_PLOT]);
    if (l->shown[PANE_TRIALS])
        view_trials_draw(a, l->rect[PANE_TRIALS]);
    if (l->shown[PANE_LOG])
        view_log_draw(a, l->rect[PANE_LOG]);
}

static void tune_key(App *a, ViewAction action)
{
    long all = (long)a->table.n_shown;
    if (action == VIEW_ACT_UP || action == VIEW_ACT_DOWN)
        app_select_trial(a, action == VIEW_ACT_UP ? -1 : 1);
    else if (action == VIEW_ACT_PAGE_UP || action == VIEW_ACT_PAGE_DOWN)
        app_select_trial(a, action == VIEW_ACT_PAGE_UP ? -10 : 10);
    else if (action == VIEW_ACT_FIRST || action == VIEW_ACT_LAST)
        app_select_trial(a, action == VIEW_ACT_FIRST ? -all : all);
    else if (action == VIEW_ACT_OPEN)
        app_open_editor(a);
}

/* The editor's rows: a click selects one, a click on the selected device row moves inputs
 * like `+` (left button) or `-` (right button); the trial table: a click selects a trial;
 * the wheel scrolls either. */
static void tune_mouse(App *a, const MEVENT *ev)
{
    const Layout *l = &a->layout;
    int wheel_up = ev->bstate & BUTTON4_PRESSED, wheel_down = ev->bstate & BUTTON5_PRESSED;
    if (a->editor && l->shown[PANE_EDITOR] && rect_contains(l->rect[PANE_EDITOR], ev->x, ev->y)) {
        Editor *e = a->editor;
        Rect list = view_editor_rows(l->rect[PANE_EDITOR]);
        if (wheel_up || wheel_down) {
            editor_cursor_move(e, wheel_up ? -1 : 1);
        } else if (rect_contains(list, ev->x, ev->y)) {
            size_t first = e->cursor >= (size_t)list.h ? e->cursor - (size_t)list.h + 1 : 0;
            size_t row = first + (size_t)(ev->y - list.y);
            int right = (ev->bstate & (BUTTON3_PRESSED | BUTTON3_CLICKED)) != 0;
            if (row == e->cursor && e->rows[row].device >= 0)
                app_editor_key(a, right ? '-' : '+');
            else if (row < e->n_rows)
                editor_cursor_set(e, row);
        }
        a->dirty = 1;
        return;
    }
    if (l->shown[PANE_TRIALS] && rect_contains(l->rect[PANE_TRIALS], ev->x, ev->y)) {
        if (wheel_up || wheel_down) {
            app_select_trial(a, wheel_up ? -3 : 3);
        } else {
            long row = ev->y - (l->rect[PANE_TRIALS].y + 2);
            if (row >= 0 && row < view_trials_rows(a) && a->scroll + (size_t)row < a->table.n_shown) {
                a->sel = a->scroll + (size_t)row;
                a->follow = 0;
            }
        }
        a->dirty = 1;
    }
}

const View VIEW_TUNE_TABLE = {"Tune", tune_draw, tune_key, tune_mouse};
