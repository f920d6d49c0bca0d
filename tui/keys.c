/* The key table and the help overlay drawn from it. */
#include "tui/keys.h"

#include <stdio.h>

#include "tui/draw.h"

const KeyHelp HELP_KEYS[] = {
    {"global", "1 2 3, Tab", "tune, cluster, hosts view (Tab: next)"},
    {"global", "? F1", "this help (any key closes it)"},
    {"global", ":", "command: budget N, converge on|off, pause, resume, quit,"},
    {"global", "", "  plot STYLE, sort COLUMN, filter TEXT, theme NAME; scheduler:"},
    {"global", "", "  pin JOB N, pause/resume JOB, (un)drain NODE, policy NAME;"},
    {"global", "", "  on Slurm: drain NODE [REASON], undrain NODE (scontrol, asks)"},
    {"global", "/ F3", "filter the trial table (Enter keeps, Esc clears)"},
    {"global", "Space", "pause / resume tuning and the simulated scheduler"},
    {"global", "q F10", "quit (asks while a trial runs)"},
    {"global", "Ctrl-L", "redraw the screen"},
    {"trials", "Up Down j k", "select a trial"},
    {"trials", "PgUp PgDn g G", "page, first, last"},
    {"trials", "s F6 / r", "next sort column / reverse the order"},
    {"trials", "e Enter", "edit the selected trial's schedule as an override"},
    {"cl/hosts", "Up Down j k", "scroll the hosts / select a host (on Slurm: a node)"},
    {"hosts", "a / c, d / u", "accept unknown host key / reconnect; Slurm: drain / undrain"},
    {"editor", "Up Down j k", "select a machine or device"},
    {"editor", "+ - Right Left l h", "add / remove inputs on the device"},
    {"editor", "m", "mark the device as the source: +/- then move inputs"},
    {"editor", "w / p", "toggle worker / parameter server on the machine"},
    {"editor", "[ ]", "step: 1, 8, 32, 128 inputs"},
    {"editor", "Enter", "launch as the next trial (only when valid)"},
    {"editor", "Esc", "discard the edit"},
    {"mouse", "click, wheel", "select a row or a tab; scroll"},
    {"mouse", "click again", "editor: on the selected device, left +, right - inputs"},
    {"config", "config.json", "\"keys\": {\"quit\": \"x\"} rebinds an action (README)"},
};
const size_t HELP_KEYS_COUNT = sizeof HELP_KEYS / sizeof HELP_KEYS[0];

void keys_draw_help(int cols, int rows)
{
    Rect r = layout_overlay(cols, rows, 92, (int)HELP_KEYS_COUNT + 2);
    if (r.w < 4 || r.h < 3)
        return;
    draw_fill(r, ROLE_NORMAL);
    Rect in = draw_box(r, "Keys (any key closes)", 1);
    for (size_t i = 0; i < HELP_KEYS_COUNT && (int)i < in.h; i++) {
        const KeyHelp *k = &HELP_KEYS[i];
        int col = draw_textf(in.y + (int)i, in.x, in.w, ROLE_DIM, "%-8s",
                             i == 0 || HELP_KEYS[i - 1].context != k->context ? k->context : "");
        col += draw_textf(in.y + (int)i, in.x + col, in.w - col, ROLE_KEY, "%-19s", k->keys);
        draw_text(in.y + (int)i, in.x + col, in.w - col, ROLE_NORMAL, k->what);
    }
}
