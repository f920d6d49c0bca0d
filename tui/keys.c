/* The key table and the help overlay drawn from it. */
#include "tui/keys.h"

#include <stdio.h>
#include <string.h>

#include "tui/draw.h"

const KeyHelp HELP_KEYS[] = {
    {"global", "1 2 3, Tab", "tune, cluster, hosts view (Tab: next, Shift-Tab: back)"},
    {"global", "? F1", "this help (Up/Down scroll it when long; other keys close it)"},
    {"global", ":",
     "command: budget N, unqueue N, converge on|off, pause, resume, quit[!], plot STYLE, sort "
     "COLUMN, filter TEXT, theme NAME;"},
    /* The Slurm part (its commands ask y/n first, as their prompt ends) is one row at 80
     * columns, where a row hung under the first holds 45: "(asks)" made it two. After the
     * drains, its row at 80 begins there; a row of its own would cost 100x30 its last row. */
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

/* Where a row of at most room columns ends in text t (longer than room): after the last
 * "; " of its second half, else the last ", " there, else at its last space (else at room).
 * A list (`:`'s commands) then breaks between its items, not inside "filter TEXT" (its rows
 * were cut by hand for 100 columns and wrapped again, raggedly, at 80), and a sentence
 * between its clauses. */
static int help_cut(const char *t, int room)
{
    const char *seps[] = {"; ", ", ", " "};
    for (size_t k = 0; k < sizeof seps / sizeof seps[0]; k++) {
        size_t n = strlen(seps[k]);
        int floor = n > 1 ? room / 2 : 1;
        for (int cut = room - (int)n + 1; cut >= floor; cut--)
            if (strncmp(t + cut, seps[k], n) == 0)
                return n > 1 ? cut + 1 : cut;
    }
    return room;
}

/* Every entry's rows at an inner width of w columns: what it does is wrapped (help_cut)
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
        int head = beside, indent = 0;
        do {
            int room = text_w - indent;
            int len = (int)strlen(t), cut = len > room ? help_cut(t, room) : len;
            if (n < HELP_MAX_ROWS)
                rows[n++] = (HelpRow){i, head, t, cut, indent};
            head = 0;
            indent = HELP_HANG;
            t += cut;
            while (*t == ' ')
                t++;
        } while (*t);
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
