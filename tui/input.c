/* Input dispatch: global keys, the trial table, the override editor, the prompt, the mouse
 * and the `:` commands. Every key here is listed in tui/keys.c. */
#include "tui/input.h"

#include <curses.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "core/base/clock.h"
#include "tui/keys.h"

enum { KEY_CTRL_L = 12, KEY_ESC = 27, KEY_DEL = 127 };

void input_refresh_prediction(App *a)
{
    Editor *e = a->editor;
    a->edit_valid = editor_check(e, &a->edit_err) == 0;
    suggestion_clear(&a->pred);
    memset(&a->pred, 0, sizeof a->pred);
    Error err;
    if (tuner_predict(a->tuner, e->s, &a->pred, &err) == 0) {
        a->pred_ok = 1;
        a->pred_why[0] = 0;
        if (!a->pred.has_prediction)
            snprintf(a->pred_why, sizeof a->pred_why, "%s has no model",
                     tuner_optimizer_name(a->tuner));
    } else {
        a->pred_ok = 0;
        suggestion_clear(&a->pred);
        memset(&a->pred, 0, sizeof a->pred);
        snprintf(a->pred_why, sizeof a->pred_why, "%s", err.msg);
        if (strstr(err.msg, "busy")) {
            a->dirty = 1;
            return; /* stays stale: the loop asks again in 50 ms */
        }
    }
    a->pred_version = e->version;
    a->pred_stale = 0;
    a->dirty = 1;
}

static void open_editor(App *a)
{
    const TrialRecord *rec = NULL;
    if (a->sel < a->table.n_shown)
        rec = a->table.rows[a->table.order[a->sel]].rec;
    if (!rec)
        rec = view_tune_current(a);
    if (!rec) {
        app_message(a, 1, "no schedule to edit yet: wait for the first suggestion");
        return;
    }
    editor_free(a->editor);
    a->editor = editor_new(rec->suggestion.schedule);
    a->pred_stale = 1;
    a->view = VIEW_TUNE;
    app_message(a, 0,
                "editing trial %d's schedule: + - move inputs, m source, w/p roles, "
                "Enter launch, Esc discard",
                rec->trial);
}

static void close_editor(App *a)
{
    editor_free(a->editor);
    a->editor = NULL;
    suggestion_clear(&a->pred);
    memset(&a->pred, 0, sizeof a->pred);
    a->dirty = 1;
}

static void launch_edit(App *a)
{
    Error err;
    if (editor_check(a->editor, &err) < 0) {
        app_message(a, 1, "not launched: %s", err.msg);
        return;
    }
    if (tuner_override(a->tuner, a->editor->s, &err) < 0) {
        app_message(a, 1, "not launched: %s", err.msg);
        return;
    }
    size_t n = tuner_n_trials(a->tuner);
    if ((int)n >= tuner_budget(a->tuner))
        tuner_set_budget(a->tuner, (int)n + 1);
    a->next_trial_ms = clock_now_ms(); /* no pacing wait for the operator's own trial */
    app_log(a, "override queued as trial %zu", n + 1);
    app_message(a, 0, "override launches as trial %zu%s", n + 1,
                a->user_paused ? " (paused: Space resumes)" : "");
    close_editor(a);
}

static void editor_key(App *a, int ch)
{
    Editor *e = a->editor;
    unsigned before = e->version;
    switch (ch) {
    case KEY_UP:
    case 'k':
        editor_cursor_move(e, -1);
        break;
    case KEY_DOWN:
    case 'j':
        editor_cursor_move(e, 1);
        break;
    case KEY_PPAGE:
        editor_cursor_move(e, -10);
        break;
    case KEY_NPAGE:
        editor_cursor_move(e, 10);
        break;
    case '+':
    case '=':
    case KEY_RIGHT:
    case 'l':
        if (editor_adjust(e, 1) == 0)
            app_message(a, 1,
                        e->rows[e->cursor].device < 0 ? "select a device row to move inputs"
                                                      : "the source device has no input left");
        break;
    case '-':
    case KEY_LEFT:
    case 'h':
        if (editor_adjust(e, -1) == 0)
            app_message(a, 1,
                        e->rows[e->cursor].device < 0 ? "select a device row to move inputs"
                                                      : "this device has no input to give");
        break;
    case 'm':
        if (editor_toggle_mark(e) < 0)
            app_message(a, 1, "the source must be a device row");
        break;
    case 'w':
        editor_toggle_worker(e);
        break;
    case 'p':
        editor_toggle_ps(e);
        break;
    case '[':
        editor_cycle_step(e, -1);
        break;
    case ']':
        editor_cycle_step(e, 1);
        break;
    case '\r':
    case '\n':
    case KEY_ENTER:
        launch_edit(a);
        return;
    case KEY_ESC:
    case 'd':
        close_editor(a);
        app_message(a, 0, "edit discarded");
        return;
    default:
        return;
    }
    if (e->version != before)
        a->pred_stale = 1;
    a->dirty = 1;
}

static void select_trial(App *a, long delta)
{
    if (a->table.n_shown == 0)
        return;
    long s = (long)a->sel + delta;
    if (s < 0)
        s = 0;
    if (s >= (long)a->table.n_shown)
        s = (long)a->table.n_shown - 1;
    a->sel = (size_t)s;
    a->follow = a->sel + 1 == a->table.n_shown && a->sort == TRIAL_COL_NUMBER && !a->sort_desc;
    a->dirty = 1;
}

static void clamp_scroll(App *a)
{
    app_clamp_scroll(a);
}

static void prompt_key(App *a, wint_t ch, int is_key)
{
    size_t len = strlen(a->input);
    if (!is_key && (ch == '\r' || ch == '\n')) {
        int p = a->prompt;
        a->prompt = 0;
        if (p == ':') {
            a->message[0] = 0; /* the command's own message, if any, replaces the last */
            input_command(a, a->input);
        }
    } else if (!is_key && ch == KEY_ESC) {
        if (a->prompt == '/') {
            a->filter[0] = 0;
            a->table_stale = 1;
        }
        a->prompt = 0;
    } else if ((is_key && ch == KEY_BACKSPACE) || (!is_key && (ch == KEY_DEL || ch == 8))) {
        if (len)
            a->input[len - 1] = 0;
    } else if (!is_key && ch >= 32 && ch < 127 && len + 1 < sizeof a->input) {
        a->input[len] = (char)ch;
        a->input[len + 1] = 0;
    }
    if (a->prompt == '/') {
        snprintf(a->filter, sizeof a->filter, "%s", a->input);
        a->table_stale = 1;
    }
    a->dirty = 1;
}

static void mouse(App *a)
{
    MEVENT ev;
    if (getmouse(&ev) != OK)
        return;
    /* Releases are asked for only so that a press is reported at once (not held back to
     * become a click); they do nothing themselves. */
    if (!(ev.bstate & (BUTTON1_PRESSED | BUTTON3_PRESSED | BUTTON4_PRESSED | BUTTON5_PRESSED)))
        return;
    int wheel_up = ev.bstate & BUTTON4_PRESSED, wheel_down = ev.bstate & BUTTON5_PRESSED;
    if (ev.y == 0 && !wheel_up && !wheel_down) {
        int x = 0;
        for (int v = 0; v < VIEW_COUNT; v++) {
            int w = 4 + (int)strlen(layout_view_name((ViewId)v));
            if (ev.x >= x && ev.x < x + w)
                a->view = (ViewId)v;
            x += w;
        }
        a->dirty = 1;
        return;
    }
    const Layout *l = &a->layout;
    if (a->editor && l->shown[PANE_EDITOR] && rect_contains(l->rect[PANE_EDITOR], ev.x, ev.y)) {
        Editor *e = a->editor;
        Rect list = view_editor_rows(l->rect[PANE_EDITOR]);
        if (wheel_up || wheel_down) {
            editor_cursor_move(e, wheel_up ? -1 : 1);
        } else if (rect_contains(list, ev.x, ev.y)) {
            /* A click selects a row; a click on the selected device row moves inputs like
             * `+` (left button) or `-` (right button). */
            size_t first = e->cursor >= (size_t)list.h ? e->cursor - (size_t)list.h + 1 : 0;
            size_t row = first + (size_t)(ev.y - list.y);
            int right = (ev.bstate & (BUTTON3_PRESSED | BUTTON3_CLICKED)) != 0;
            if (row == e->cursor && e->rows[row].device >= 0)
                editor_key(a, right ? '-' : '+');
            else if (row < e->n_rows)
                editor_cursor_set(e, row);
        }
        a->dirty = 1;
        return;
    }
    if (a->view == VIEW_TUNE && l->shown[PANE_TRIALS] &&
        rect_contains(l->rect[PANE_TRIALS], ev.x, ev.y)) {
        if (wheel_up || wheel_down) {
            select_trial(a, wheel_up ? -3 : 3);
        } else {
            long row = ev.y - (l->rect[PANE_TRIALS].y + 2);
            if (row >= 0 && a->scroll + (size_t)row < a->table.n_shown) {
                a->sel = a->scroll + (size_t)row;
                a->follow = 0;
            }
        }
        a->dirty = 1;
        return;
    }
    if (a->view == VIEW_CLUSTER && (wheel_up || wheel_down)) {
        if (wheel_up && a->loads_scroll)
            a->loads_scroll--;
        else if (wheel_down && a->loads_scroll + 1 < a->snap.n_hosts)
            a->loads_scroll++;
        a->dirty = 1;
    }
}

static void key(App *a, wint_t ch, int is_key)
{
    if (a->help) {
        a->help = 0;
        a->dirty = 1;
        return;
    }
    if (a->confirm_accept) {
        a->confirm_accept = 0;
        if (!is_key && (ch == 'y' || ch == 'Y'))
            hosts_accept_confirmed(a);
        else
            app_message(a, 0, "host key not accepted");
        a->dirty = 1;
        return;
    }
    if (a->confirm_quit) {
        a->confirm_quit = 0;
        if (!is_key && (ch == 'y' || ch == 'Y' || (int)ch == a->config.keys[ACT_QUIT]))
            a->quit = 1;
        a->dirty = 1;
        return;
    }
    if (a->prompt) {
        prompt_key(a, ch, is_key);
        return;
    }
    if (is_key && ch == KEY_MOUSE) {
        mouse(a);
        return;
    }
    if (is_key && ch == KEY_RESIZE) {
        a->dirty = 1;
        return;
    }
    a->message[0] = 0;
    a->dirty = 1;
    if (a->editor && a->view == VIEW_TUNE) {
        int c = is_key ? (int)ch : (int)ch;
        if (!(!is_key && (ch == '?' || ch == '\t' || ch == ':' || (ch >= '1' && ch <= '3'))) &&
            !(is_key && (ch == KEY_F(1) || ch == KEY_F(10)))) {
            editor_key(a, c);
            return;
        }
    }
    if (!is_key && ch < 128) {
        /* Rebound keys (config.json "keys"): a bound key acts as the action's built-in key;
         * a built-in key whose action moved elsewhere does nothing. */
        int act = config_action_of(&a->config, (int)ch);
        if (act >= 0) {
            ch = (wint_t)config_default_key((KeyAction)act);
        } else {
            for (int i = 0; i < ACT_COUNT; i++)
                if ((int)ch == config_default_key((KeyAction)i))
                    return;
        }
    }
    if (is_key) {
        switch (ch) {
        case KEY_F(1):
            a->help = 1;
            break;
        case KEY_F(3):
            a->prompt = '/';
            snprintf(a->input, sizeof a->input, "%s", a->filter);
            break;
        case KEY_F(6):
            a->sort = (a->sort + 1) % TRIAL_COL_COUNT;
            a->table_stale = 1;
            break;
        case KEY_F(10):
            goto quit;
        case KEY_BTAB:
            a->view = (a->view + VIEW_COUNT - 1) % VIEW_COUNT;
            break;
        case KEY_UP:
            goto up;
        case KEY_DOWN:
            goto down;
        case KEY_PPAGE:
            select_trial(a, -10);
            break;
        case KEY_NPAGE:
            select_trial(a, 10);
            break;
        case KEY_HOME:
            select_trial(a, -(long)a->table.n_shown);
            break;
        case KEY_END:
            select_trial(a, (long)a->table.n_shown);
            break;
        case KEY_ENTER:
            open_editor(a);
            break;
        default:
            break;
        }
        clamp_scroll(a);
        return;
    }
    switch (ch) {
    case '1':
    case '2':
    case '3':
        a->view = (ViewId)(ch - '1');
        break;
    case '\t':
        a->view = (a->view + 1) % VIEW_COUNT;
        break;
    case '?':
        a->help = 1;
        break;
    case '/':
        a->prompt = '/';
        snprintf(a->input, sizeof a->input, "%s", a->filter);
        break;
    case ':':
        a->prompt = ':';
        a->input[0] = 0;
        break;
    case ' ':
        app_set_pause(a, !a->user_paused);
        break;
    case KEY_CTRL_L:
        clearok(curscr, TRUE);
        break;
    case 's':
        a->sort = (a->sort + 1) % TRIAL_COL_COUNT;
        a->table_stale = 1;
        break;
    case 'r':
        a->sort_desc = !a->sort_desc;
        a->table_stale = 1;
        break;
    case 'g':
        select_trial(a, -(long)a->table.n_shown);
        break;
    case 'G':
        select_trial(a, (long)a->table.n_shown);
        break;
    case 'e':
    case '\r':
    case '\n':
        if (a->view == VIEW_TUNE)
            open_editor(a);
        break;
    case 'a':
        if (a->view == VIEW_HOSTS)
            hosts_accept_selected(a);
        break;
    case 'c':
        if (a->view == VIEW_HOSTS && a->pool && a->host_sel < hostpool_size(a->pool)) {
            hostpool_connect(a->pool, a->host_sel, 1);
            app_message(a, 0, "reconnecting");
        }
        break;
    case 'k':
    up:
        if (a->view == VIEW_HOSTS) {
            if (a->host_sel)
                a->host_sel--;
        } else if (a->view == VIEW_CLUSTER) {
            if (a->loads_scroll)
                a->loads_scroll--;
        } else
            select_trial(a, -1);
        break;
    case 'j':
    down:
        if (a->view == VIEW_HOSTS) {
            if (a->host_sel + 1 < a->cluster->n_machines)
                a->host_sel++;
        } else if (a->view == VIEW_CLUSTER) {
            if (a->loads_scroll + 1 < a->snap.n_hosts)
                a->loads_scroll++;
        } else
            select_trial(a, 1);
        break;
    case 'q':
    quit:
        if ((a->tuner && (tuner_running(a->tuner) ||
                          (!tuner_done(a->tuner) && !a->user_paused))) ||
            (a->ss && simsched_live(a->ss)))
            a->confirm_quit = 1;
        else
            a->quit = 1;
        break;
    default:
        break;
    }
    clamp_scroll(a);
}

void input_handle(App *a)
{
    wint_t ch;
    int rc;
    while ((rc = get_wch(&ch)) != ERR && !a->quit)
        key(a, ch, rc == KEY_CODE_YES);
}
