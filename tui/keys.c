/* The key table and the help overlay drawn from it. */
#include "tui/keys.h"

#include <stdio.h>
#include <string.h>

#include "tui/draw.h"
#include "tui/helpwrap.h"

const KeyHelp HELP_KEYS[] = {
    {"global", "1 2 3, Tab", "tune, cluster, hosts view (Tab: next, Shift-Tab: back)"},
    {"global", "? F1", "this help (Up/Down scroll it when long; other keys close it)"},
    {"global", ":",
     "command: budget N, unqueue N, converge on|off, pause, resume, quit[!], plot STYLE, sort "
     "COLUMN, filter TEXT, theme NAME;"},
    /* The Slurm part (its commands ask y/n first, as their prompt ends) is a group that fits
     * one row from 80 columns (45 there under the first row): help_wrap keeps it whole, on
     * a row of its own below 95 columns and after the drains from there (a row of its own
     * would cost 100x30 its last row). "(asks)" made it two rows at 80. */
    {"global", "",
     "  scheduler: pin JOB GPUS, pause/resume JOB, policy NAME, (un)drain NODE; Slurm y/n: "
     "drain NODE [REASON], undrain NODE"},
    {"global", "/ F3", "filter the trial table (Enter keeps, Esc or Ctrl-C clears)"},
    {"global", "Space", "pause / resume tuning and the simulated scheduler"},
    {"global", "q F10 Ctrl-C", "quit (q asks if a trial runs; Ctrl-C, no prompt: exit 130)"},
    {"global", "L / Ctrl-L", "the log, each line whole (Up/Down scroll) / redraw the screen"},
    {"trials", "Up Down j k", "select a trial"},
    {"trials", "PgUp PgDn g G", "page, first (also Home), last (End)"},
    {"trials", "s F6 / r", "next sort column / reverse the order"},
    {"trials", "e Enter / X", "edit the selected trial as an override / drop the last queued"},
    {"cluster", "Up Down j k", "scroll the per-host loads; PgUp PgDn g G: the job list"},
    {"hosts", "Up Down j k", "select a host (Slurm: a node); PgUp PgDn g G: page, ends"},
    {"hosts", "a / c, d / u", "accept unknown host key / reconnect; Slurm: drain / undrain"},
    {"editor", "Up Down j k", "select a machine or device (PgUp PgDn: by 10)"},
    {"editor", "+ - Right Left l h", "add / remove inputs on the device"},
    {"editor", "m", "mark the device as the source: +/- then move inputs"},
    {"editor", "w / p, [ ]", "worker / parameter server role; step 1, 8, 32, 128 inputs"},
    {"editor", "Enter", "launch as the next trial (only when valid)"},
    {"editor", "Esc d", "discard the edit"},
    {"mouse", "click, wheel", "select a row or a tab; scroll"},
    {"mouse", "click again", "editor: on the selected device, left +, right - inputs"},
    {"config", "config.json", "\"keys\": {\"quit\": \"x\"} rebinds an action (README)"},
};
const size_t HELP_KEYS_COUNT = sizeof HELP_KEYS / sizeof HELP_KEYS[0];

/* One row of the overlay: entry `key`'s context and keys when `head`, and a piece of what it
 * does (NULL: none on this row), `indent` columns in: a piece wrapped from the row above
 * hangs 2 columns in, so it does not read as an entry of its own. */
typedef struct {
    size_t key;
    int head;
    const char *piece;
    int len;
    int indent;
} HelpRow;

enum { HELP_HANG = 2 };

/* 94: at 100 columns its text is as wide as it was before the padding (92 wide, none) */
enum { HELP_BOX_W = 94, HELP_PAD = 1 };

enum { HELP_KEY_COLS = 8 + 19, HELP_MIN_TEXT = 20, HELP_MAX_ROWS = 512 };

/* Every entry's rows at an inner width of w columns: what it does is wrapped (help_wrap)
 * beside its keys, or, narrower than that, under them. Returns the number of rows. */
static int help_rows(int w, HelpRow *rows)
{
    int beside = w - HELP_KEY_COLS >= HELP_MIN_TEXT;
    int text_w = beside ? w - HELP_KEY_COLS : w - 2;
    if (text_w < 8)
        text_w = 8;
    int n = 0;
    for (size_t i = 0; i < HELP_KEYS_COUNT && n < HELP_MAX_ROWS; i++) {
        const char *t = HELP_KEYS[i].what;
        int first = i == 0 || HELP_KEYS[i - 1].context != HELP_KEYS[i].context;
        if (!beside && (first || HELP_KEYS[i].keys[0])) /* a continued text needs no head */
            rows[n++] = (HelpRow){i, 1, NULL, 0, 0};
        static HelpWrapRow wrapped[HELP_WRAP_MAX_ROWS];
        int m = help_wrap(t, text_w, text_w - HELP_HANG, wrapped, HELP_WRAP_MAX_ROWS);
        for (int k = 0; k < m && n < HELP_MAX_ROWS; k++)
            rows[n++] = (HelpRow){i, beside && k == 0, t + wrapped[k].start, wrapped[k].len,
                                  k == 0 ? 0 : HELP_HANG};
    }
    return n;
}

int keys_help_fits(int cols, int rows)
{
    static HelpRow list[HELP_MAX_ROWS];
    Rect r = layout_overlay(cols, rows, HELP_BOX_W, HELP_MAX_ROWS);
    int n = help_rows(r.w - 2 - 2 * HELP_PAD, list);
    r = layout_overlay(cols, rows, HELP_BOX_W, n + 2);
    return r.h - 2 >= n;
}

int keys_draw_help(int cols, int rows, int top, const char *rebound)
{
    static HelpRow list[HELP_MAX_ROWS];
    Rect r = layout_overlay(cols, rows, HELP_BOX_W, HELP_MAX_ROWS);
    int n = help_rows(r.w - 2 - 2 * HELP_PAD, list);
    r = layout_overlay(cols, rows, HELP_BOX_W, n + 2);
    if (r.w < 4 || r.h < 3)
        return 0;
    int shown = r.h - 2;
    if (top > n - shown)
        top = n - shown;
    if (top < 0)
        top = 0;
    draw_fill_around(r, cols, rows);
    char title[160];
    int moved = rebound && rebound[0];
    if (shown >= n)
        snprintf(title, sizeof title, "Keys (any key closes)%s%s", moved ? "; rebound: " : "",
                 moved ? rebound : "");
    else
        snprintf(title, sizeof title, "Keys %d-%d/%d (Up/Down scroll)%s%s", top + 1, top + shown,
                 n, moved ? "; rebound: " : "", moved ? rebound : "");
    Rect in = draw_box(r, title, 1);
    in.x += HELP_PAD; /* a blank column inside each border: full rows touched the right one */
    in.w -= 2 * HELP_PAD;
    int beside = in.w - HELP_KEY_COLS >= HELP_MIN_TEXT;
    for (int y = 0; y < in.h && top + y < n; y++) {
        const HelpRow *row = &list[top + y];
        const KeyHelp *k = &HELP_KEYS[row->key];
        int col = 0;
        if (row->head) {
            int first = row->key == 0 || HELP_KEYS[row->key - 1].context != k->context;
            col = draw_textf(in.y + y, in.x, in.w, ROLE_DIM, "%-8s", first ? k->context : "");
            col += draw_textf(in.y + y, in.x + col, in.w - col, ROLE_KEY, "%-19s", k->keys);
        } else {
            col = beside ? HELP_KEY_COLS : 2;
        }
        col += row->indent;
        if (row->piece)
            draw_textf(in.y + y, in.x + col, in.w - col, ROLE_NORMAL, "%.*s", row->len, row->piece);
    }
    return top;
}
