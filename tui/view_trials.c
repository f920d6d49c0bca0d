/* The tune view's trial table: a row per trial (sorted and filtered, tui/trials.c), the
 * selected trial's cut note under it, and the queued overrides at its foot. */
#include <math.h>
#include <stdio.h>

#include "tui/app.h"
#include "tui/draw.h"
#include "tui/draw_num.h"
#include "tui/view.h"

/* A row's columns up to its note, of a trial or a queued override (one format: the queue's
 * rows line up under the trials'). */
static int row_lead(char *out, size_t cap, int trial, const char *status, const char *time,
                    const char *best, const char *pred, const char *err, int workers, int ps,
                    int wps_w)
{
    char wps[32];
    snprintf(wps, sizeof wps, TRIALS_WPS_FORMAT, workers, ps);
    return snprintf(out, cap, "%5d  %-*s %8s  %8s  %8s  %5s  %*s  ", trial, TRIALS_STATUS_W, status,
                    time, best, pred, err, wps_w, wps);
}

/* A trial's row up to its note, and the note: the row cuts a long note (a probe's reason,
 * a failure's message), so the selected trial's shows whole under the table. */
/* The decimals of the time, best and predicted columns: TrialTable.decimals, kept at each
 * build (read from every trial twice a frame, they were a frame's largest cost over a long
 * session). */
/* The W/PS column's width: a table never built (all zero) has its header's. */
static int wps_width(const TrialTable *t)
{
    return t->wps_w > 0 ? t->wps_w : trials_column_width(TRIAL_COL_WORKERS);
}

static int trial_row_lead(const TrialRow *row, int decimals, int wps_w, char *out, size_t cap)
{
    char t[24], b[24], p[24], e[16];
    draw_seconds_fixed(t, sizeof t, row->time_s, decimals);
    draw_seconds_fixed(b, sizeof b, row->best_s, decimals);
    draw_seconds_fixed(p, sizeof p, row->pred_s, decimals);
    draw_percent_signed(e, sizeof e, row->err_pct);
    return row_lead(out, cap, row->rec->trial, row->status, t, b, p, e, row->workers, row->ps,
                    wps_w);
}

/* best: tuner_best, looked up once a frame (it reads every trial; looked up for each row,
 * it was a fifth of a long session's CPU) */
static void trial_note(const TrialRecord *best, const TrialRow *row, char *out, size_t cap)
{
    const Observation *o = row->rec->obs;
    snprintf(out, cap, "%s%s%s", best && row->rec == best ? "best " : "",
             row->rec->overridden ? "override " : "", o && o->reason[0] ? o->reason : "");
}

/* The lines under the table that the selected trial's note takes: 0 where its row shows it
 * whole, else wrapped (DETAIL_INDENT in, at most DETAIL_MAX_LINES, never leaving the table
 * without a row). w: the pane's inside width; rows: the lines under the column heads. */
enum { DETAIL_INDENT = 2, DETAIL_MAX_LINES = 3 };

static int detail_lines(const App *a, int w, int rows)
{
    if (a->sel >= a->table.n_shown || rows < 2)
        return 0;
    const TrialRow *row = &a->table.rows[a->table.order[a->sel]];
    char lead[128], note[300];
    int lead_w = trial_row_lead(row, a->table.decimals, wps_width(&a->table), lead, sizeof lead);
    trial_note(a->tuner ? tuner_best(a->tuner) : NULL, row, note, sizeof note);
    int n = draw_note_lines(note, w - lead_w, w, DETAIL_INDENT, DETAIL_MAX_LINES);
    return n < rows - 1 ? n : rows - 1;
}

/* The lines at the foot of the table that the queued overrides take (the next to run first),
 * under the trials as the trials they will be: at most half of the rows, the rest counted
 * on the last of them. */
static int queue_lines(const App *a, int rows)
{
    size_t n = a->tuner ? tuner_overrides(a->tuner) : 0;
    int most = rows / 2;
    return n == 0 || most < 1 ? 0 : (size_t)most < n ? most : (int)n;
}

int view_trials_rows(const App *a)
{
    if (!a->layout.shown[PANE_TRIALS])
        return 1;
    Rect box = a->layout.rect[PANE_TRIALS];
    int rows = box.h - 3; /* the borders and the column heads */
    rows -= queue_lines(a, rows);
    rows -= detail_lines(a, box.w - 2, rows);
    return rows < 1 ? 1 : rows;
}

/* The queued overrides' rows, from line y: the trial each will run as, "queued", its
 * predicted time as a suggested trial's row shows it (kept in a->queue_pred, asked when it
 * was queued or the model learnt since: never here), its roles. */
static void draw_queue(const App *a, int y, int x, int w, int lines, int decimals)
{
    size_t n = tuner_overrides(a->tuner);
    char dash[24];
    draw_seconds_fixed(dash, sizeof dash, NAN, decimals);
    for (int i = 0; i < lines; i++) {
        char lead[128], more[48] = "", pred[24];
        const Schedule *s = tuner_override_at(a->tuner, (size_t)i);
        if (i == lines - 1 && n > (size_t)lines)
            snprintf(more, sizeof more, " (+%zu more queued)", n - (size_t)lines);
        draw_seconds_fixed(pred, sizeof pred,
                           queuepred_mean_s(&a->queue_pred, tuner_override_id(a->tuner, (size_t)i)),
                           decimals);
        row_lead(lead, sizeof lead, tuner_override_trial(a->tuner, (size_t)i), "queued", dash, dash,
                 pred, "-", schedule_count_workers(s), schedule_count_ps(s), wps_width(&a->table));
        draw_textf(y + i, x, w, ROLE_WARN, "%soverride%s", lead, more);
    }
}

void view_trials_clamp_scroll(App *a)
{
    int rows = view_trials_rows(a);
    if (a->sel < a->scroll)
        a->scroll = a->sel;
    if (a->sel >= a->scroll + (size_t)rows)
        a->scroll = a->sel - (size_t)rows + 1;
    /* No empty rows below the last trial while earlier ones are scrolled away. */
    if (a->scroll + (size_t)rows > a->table.n_shown)
        a->scroll = a->table.n_shown > (size_t)rows ? a->table.n_shown - (size_t)rows : 0;
}

void view_trials_draw(const App *a, Rect box)
{
    char title[160];
    const TrialRecord *best = tuner_best(a->tuner);
    int len = snprintf(title, sizeof title, "Trials %zu/%d", tuner_n_trials(a->tuner),
                       tuner_budget(a->tuner));
    if (a->table.n_shown != a->table.n || a->filter[0])
        len += snprintf(title + len, sizeof title - (size_t)len, "  filter '%s': %zu shown",
                        a->filter, a->table.n_shown);
    if (best) {
        char v[24];
        draw_seconds(v, sizeof v, best->obs->time_s);
        len += snprintf(title + len, sizeof title - (size_t)len, "  best #%d %s s", best->trial, v);
    }
    /* the rows inside the borders, under the column heads: the trials' page, then the
     * selected trial's note and the queued overrides under it */
    int queued = queue_lines(a, box.h - 3);
    int detail = detail_lines(a, box.w - 2, box.h - 3 - queued);
    int rows = box.h - 3 - queued - detail;
    /* A table longer than its page says which rows show, as the job list does: sorted or
     * paged, rows above or below are otherwise not known to be there. */
    if (rows > 0 && a->table.n_shown > (size_t)rows) {
        size_t last = a->scroll + (size_t)rows;
        snprintf(title + len, sizeof title - (size_t)len, "  rows %zu-%zu of %zu", a->scroll + 1,
                 last < a->table.n_shown ? last : a->table.n_shown, a->table.n_shown);
    }
    Rect r = draw_box(box, title, !a->editor);
    if (r.h < 1)
        return;
    int col = 0;
    for (int c = 0; c < TRIAL_COL_COUNT; c++) {
        char h[32];
        /* the headers :sort takes (trials.c): one table for both */
        int cw =
            c == TRIAL_COL_WORKERS ? wps_width(&a->table) : trials_column_width((TrialColumn)c);
        snprintf(h, sizeof h, "%*s%s ", cw, trials_column_header((TrialColumn)c),
                 (int)a->sort == c ? (a->sort_desc ? "v" : "^") : " ");
        col += draw_text(r.y, r.x + col, r.w - col, (int)a->sort == c ? ROLE_TITLE : ROLE_DIM, h);
    }
    draw_text(r.y, r.x + col, r.w - col, ROLE_DIM, "note");
    /* the queued rows' predictions share the columns: they join the fit, or an override
     * predicted at 1500 s beside trials of 8 ms printed 1500.0000, a column too wide */
    double queued_s[OVERRIDEQUEUE_MAX];
    for (size_t i = 0; i < a->queue_pred.n; i++)
        queued_s[i] = a->queue_pred.v[i].mean_s;
    int decimals = trials_decimals_with(&a->table, queued_s, a->queue_pred.n);
    for (int i = 0; i < rows && a->scroll + (size_t)i < a->table.n_shown; i++) {
        size_t idx = a->scroll + (size_t)i;
        const TrialRow *row = &a->table.rows[a->table.order[idx]];
        int y = r.y + 1 + i;
        int sel = idx == a->sel;
        if (sel)
            draw_fill((Rect){r.x, y, r.w, 1}, ROLE_SELECTED);
        Role st = !row->rec->obs                      ? ROLE_WARN
                  : row->rec->obs->status == TRIAL_OK ? ROLE_NORMAL
                  : row->rec->obs->status == TRIAL_PRUNED ? ROLE_DIM /* stopped by design */
                                                      : ROLE_BAD;
        if (sel)
            st = ROLE_SELECTED;
        char lead[128], note[300];
        trial_row_lead(row, decimals, wps_width(&a->table), lead, sizeof lead);
        trial_note(best, row, note, sizeof note);
        draw_textf(y, r.x, r.w, st, "%s%s", lead, note);
    }
    if (detail > 0) {
        /* under the table, as the cluster view puts a job's long note under its row */
        const TrialRow *row = &a->table.rows[a->table.order[a->sel]];
        char note[300];
        trial_note(best, row, note, sizeof note);
        draw_note_below(r.y + 1 + rows, r.x, r.w, DETAIL_INDENT, detail, ROLE_DIM, note);
    }
    if (queued > 0)
        draw_queue(a, r.y + 1 + rows + detail, r.x, r.w, queued, decimals);
    if (a->table.n_shown == 0)
        draw_text(r.y + 1, r.x, r.w, ROLE_DIM,
                  a->table.n ? "no trial matches the filter (/ to change it)" : "no trial yet");
}
