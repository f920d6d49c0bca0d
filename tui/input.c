/* Input dispatch: the open question, the prompt, the override editor, then the key table;
 * the mouse goes to the tab bar or the view. What each key does lives in tui/app.c and the
 * views; every key here is listed in tui/keys.c for the help. */
#include "tui/input.h"

#include <curses.h>
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <wctype.h>

#include "tui/command.h"
#include "tui/keys.h"
#include "tui/view.h"

enum { KEY_CTRL_L = 12, KEY_ESC = 27, KEY_DEL = 127 };

/* Esc or Ctrl-C in a prompt: the line is dropped; the filter's, which applied as typed,
 * with it. */
static void prompt_cancel(App *a)
{
    if (a->prompt == '/') {
        a->filter[0] = 0;
        a->table_stale = 1;
    }
    a->prompt = 0;
    a->dirty = 1;
}

/* The prompt of `/` (filter) and `:` (command) owns every key until Enter or Esc. */
static void prompt_key(App *a, wint_t ch, int is_key)
{
    size_t len = strlen(a->input);
    /* what the line holds: a filter applies as typed, so the `/` line is no longer than the
     * filter it becomes (it was cut there unsaid); a command is no longer than command_run
     * reads */
    size_t cap = a->prompt == '/' ? sizeof a->filter : sizeof a->input;
    a->input_full = 0;
    if (!is_key && (ch == '\r' || ch == '\n')) {
        int p = a->prompt;
        a->prompt = 0;
        if (p == ':') {
            a->message[0] = 0; /* the command's own message, if any, replaces the last */
            command_run(a, a->input);
        }
    } else if (!is_key && ch == KEY_ESC) {
        prompt_cancel(a);
    } else if ((is_key && ch == KEY_BACKSPACE) || (!is_key && (ch == KEY_DEL || ch == 8))) {
        /* a whole character goes: its UTF-8 continuation bytes with its first one */
        while (len && ((unsigned char)a->input[len - 1] & 0xC0) == 0x80)
            len--;
        if (len)
            len--;
        a->input[len] = 0;
    } else if (!is_key && ch >= 32 && ch < 127) {
        if (len + 1 < cap) {
            a->input[len] = (char)ch;
            a->input[len + 1] = 0;
        } else {
            a->input_full = 1; /* dropped: said (it was dropped without a word) */
        }
    } else if (!is_key && ch >= 0xA0 && iswprint(ch)) {
        /* A name in another script (a workload's job, a trial's note) can be typed: the
         * character in the locale's encoding, whole or not at all. */
        char mb[MB_LEN_MAX];
        mbstate_t st = {0};
        size_t n = wcrtomb(mb, (wchar_t)ch, &st);
        if (n != (size_t)-1 && len + n < cap) {
            memcpy(a->input + len, mb, n);
            a->input[len + n] = 0;
        } else if (n != (size_t)-1) {
            a->input_full = 1;
        }
    }
    if (a->prompt == '/') {
        snprintf(a->filter, sizeof a->filter, "%s", a->input);
        a->table_stale = 1;
    }
    a->dirty = 1;
}

/* A press on the tab bar switches views; anywhere else the view that shows decides. */
static void mouse(App *a)
{
    MEVENT ev;
    if (getmouse(&ev) != OK)
        return;
    /* Releases are asked for only so that a press is reported at once (not held back to
     * become a click); they do nothing themselves. */
    if (!(ev.bstate & (BUTTON1_PRESSED | BUTTON3_PRESSED | BUTTON4_PRESSED | BUTTON5_PRESSED)))
        return;
    int wheel = (ev.bstate & (BUTTON4_PRESSED | BUTTON5_PRESSED)) != 0;
    if (ev.y == 0 && !wheel) {
        int x = 0;
        for (int v = 0; v < VIEW_COUNT; v++) {
            int w = 4 + (int)strlen(view_get((ViewId)v)->name);
            if (ev.x >= x && ev.x < x + w)
                a->view = (ViewId)v;
            x += w;
        }
        a->dirty = 1;
        return;
    }
    const View *v = view_get(a->view);
    if (v->mouse)
        v->mouse(a, &ev);
}

/* ---- the key table (after htop's Action table): one row per key, each an action ---- */

static void show_help(App *a)
{
    a->help = 1;
    a->help_top = 0;
}

/* Rows a key scrolls the help by; 0 for a key that closes it. */
static int help_scroll(wint_t ch, int is_key)
{
    if (is_key)
        return ch == KEY_UP      ? -1
               : ch == KEY_DOWN  ? 1
               : ch == KEY_PPAGE ? -10
               : ch == KEY_NPAGE ? 10
                                 : 0;
    return ch == 'k' ? -1 : ch == 'j' ? 1 : 0;
}

static void show_log(App *a)
{
    a->log_view = 1;
    a->log_back = 0;
    a->dirty = 1;
}

static void open_filter(App *a)
{
    a->prompt = '/';
    a->input_full = 0;
    snprintf(a->input, sizeof a->input, "%s", a->filter);
}

static void open_command(App *a)
{
    a->prompt = ':';
    a->input_full = 0;
    a->input[0] = 0;
}

static void next_sort(App *a)
{
    a->sort = (a->sort + 1) % TRIAL_COL_COUNT;
    a->table_stale = 1;
}

static void reverse_sort(App *a)
{
    a->sort_desc = !a->sort_desc;
    a->table_stale = 1;
}

static void toggle_pause(App *a)
{
    app_ask_pause(a, !a->user_paused);
}

static void repaint(App *a)
{
    (void)a;
    clearok(curscr, TRUE);
}

static void show_view_1(App *a)
{
    a->view = VIEW_TUNE;
}

static void show_view_2(App *a)
{
    a->view = VIEW_CLUSTER;
}

static void show_view_3(App *a)
{
    a->view = VIEW_HOSTS;
}

static void next_view(App *a)
{
    a->view = (a->view + 1) % VIEW_COUNT;
}

static void previous_view(App *a)
{
    a->view = (a->view + VIEW_COUNT - 1) % VIEW_COUNT;
}

typedef struct {
    int key; /* a character, or with is_key a curses KEY_* code */
    int is_key;
    void (*run)(App *a); /* NULL: the view's action */
    ViewAction action;   /* what the view that shows does (when run is NULL) */
} Binding;

static const Binding BINDINGS[] = {
    {KEY_F(1), 1, show_help, 0},
    {'?', 0, show_help, 0},
    {'L', 0, show_log, 0},
    {KEY_F(3), 1, open_filter, 0},
    {'/', 0, open_filter, 0},
    {':', 0, open_command, 0},
    {KEY_F(6), 1, next_sort, 0},
    {'s', 0, next_sort, 0},
    {'r', 0, reverse_sort, 0},
    {KEY_F(10), 1, app_ask_quit, 0},
    {'q', 0, app_ask_quit, 0},
    {'1', 0, show_view_1, 0},
    {'2', 0, show_view_2, 0},
    {'3', 0, show_view_3, 0},
    {'\t', 0, next_view, 0},
    {KEY_BTAB, 1, previous_view, 0},
    {' ', 0, toggle_pause, 0},
    {'X', 0, app_drop_override, 0},
    {KEY_CTRL_L, 0, repaint, 0},
    {KEY_PPAGE, 1, NULL, VIEW_ACT_PAGE_UP},
    {KEY_NPAGE, 1, NULL, VIEW_ACT_PAGE_DOWN},
    {KEY_HOME, 1, NULL, VIEW_ACT_FIRST},
    {'g', 0, NULL, VIEW_ACT_FIRST},
    {KEY_END, 1, NULL, VIEW_ACT_LAST},
    {'G', 0, NULL, VIEW_ACT_LAST},
    {KEY_ENTER, 1, app_open_editor, 0}, /* the keypad's Enter opens it from any view */
    {KEY_UP, 1, NULL, VIEW_ACT_UP},
    {'k', 0, NULL, VIEW_ACT_UP},
    {KEY_DOWN, 1, NULL, VIEW_ACT_DOWN},
    {'j', 0, NULL, VIEW_ACT_DOWN},
    {'e', 0, NULL, VIEW_ACT_OPEN},
    {'\r', 0, NULL, VIEW_ACT_OPEN},
    {'\n', 0, NULL, VIEW_ACT_OPEN},
    {'a', 0, NULL, VIEW_ACT_ACCEPT},
    {'c', 0, NULL, VIEW_ACT_RECONNECT},
    {'d', 0, NULL, VIEW_ACT_DRAIN},
    {'u', 0, NULL, VIEW_ACT_UNDRAIN},
};

static void run_binding(App *a, wint_t ch, int is_key)
{
    for (size_t i = 0; i < sizeof BINDINGS / sizeof BINDINGS[0]; i++) {
        const Binding *b = &BINDINGS[i];
        if (b->key != (int)ch || b->is_key != is_key)
            continue;
        const View *v = view_get(a->view);
        if (b->run)
            b->run(a);
        else if (v->key)
            v->key(a, b->action);
        return;
    }
}

/* Keys the editor lets through to the table: help, views, the command prompt, quit (q as
 * F10: the editor takes no text, and the help lists q as global). */
static int passes_the_editor(const App *a, wint_t ch, int is_key)
{
    if (is_key)
        return ch == KEY_F(1) || ch == KEY_F(10);
    return ch == '?' || ch == '\t' || ch == ':' || (ch >= '1' && ch <= '3') ||
           (int)ch == a->config.keys[ACT_QUIT];
}

/* One key: the open question or prompt takes it first, then the override editor, then the
 * key table (rebound keys from config.json act as the action's built-in key). */
static void key(App *a, wint_t ch, int is_key)
{
    /* A resize is no answer: it leaves the help, a question and a prompt open. */
    if (is_key && ch == KEY_RESIZE) {
        a->dirty = 1;
        return;
    }
    if (a->help) {
        /* Keys scroll a help taller than the screen; when it all shows, any key closes it,
         * as its title says. */
        int step = keys_help_fits(COLS, LINES) ? 0 : help_scroll(ch, is_key);
        if (step)
            a->help_top = a->help_top + step > 0 ? a->help_top + step : 0;
        else
            a->help = 0;
        a->dirty = 1;
        return;
    }
    if (a->log_view) {
        /* Up shows older lines, as in the pane; any other key closes it. */
        int step = help_scroll(ch, is_key);
        if (step < 0)
            a->log_back += (size_t)-step;
        else if (step > 0)
            a->log_back = a->log_back > (size_t)step ? a->log_back - (size_t)step : 0;
        else
            a->log_view = 0;
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
    if (a->confirm_drain) {
        a->confirm_drain = 0;
        if (!is_key && (ch == 'y' || ch == 'Y'))
            slurm_drain_confirmed(a);
        else
            app_message(a, 0, "%s %s: not asked", a->drain_on ? "drain" : "undrain",
                        a->drain_node);
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
    a->message[0] = 0;
    a->dirty = 1;
    if (a->editor && a->view == VIEW_TUNE && !passes_the_editor(a, ch, is_key)) {
        app_editor_key(a, (int)ch);
        return;
    }
    if (!is_key && ch < 128) {
        /* A bound key acts as the action's built-in key; a built-in key whose action moved
         * elsewhere does nothing. */
        int act = config_action_of(&a->config, (int)ch);
        if (act >= 0) {
            ch = (wint_t)config_default_key((KeyAction)act);
        } else {
            for (int i = 0; i < ACT_COUNT; i++)
                if ((int)ch == config_default_key((KeyAction)i))
                    return;
        }
    }
    run_binding(a, ch, is_key);
    view_trials_clamp_scroll(a);
}

/* The terminal is in cbreak mode, so Ctrl-C is a signal, not a key: it comes here from the
 * signal pipe, on the loop, where the prompt's state can be read (the handler only writes a
 * byte). */
int input_interrupt(App *a)
{
    if (!a->prompt)
        return 0;
    prompt_cancel(a);
    return 1;
}

void input_handle(App *a)
{
    wint_t ch;
    int rc;
    while ((rc = get_wch(&ch)) != ERR && !a->quit)
        key(a, ch, rc == KEY_CODE_YES);
}
