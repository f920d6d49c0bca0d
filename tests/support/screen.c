/* The view tests' curses screen (screen.h). */
#include "tests/support/screen.h"

#include <criterion/criterion.h>
#include <curses.h>
#include <locale.h>
#include <stdio.h>
#include <stdlib.h>
#include <wchar.h>

#include "tui/draw.h"
#include "tui/theme.h"

static SCREEN *scr;
static FILE *out, *in;

void fixture_screen_open(int rows, int cols)
{
    setlocale(LC_ALL, "C.UTF-8");
    out = tmpfile();
    in = fopen("/dev/null", "r");
    scr = newterm("xterm-256color", out, in);
    cr_assert_not_null(scr);
    resizeterm(rows, cols);
    Theme t;
    theme_default(&t);
    theme_apply(&t, 0);
    draw_init(0);
}

void fixture_screen_close(void)
{
    endwin();
    delscreen(scr);
    fclose(out);
    fclose(in);
}

char *fixture_screen_text(void)
{
    size_t cap = (size_t)LINES * (COLS * 4 + 2) + 1, len = 0;
    char *text = calloc(cap, 1);
    wchar_t row[512];
    for (int y = 0; y < LINES; y++) {
        mvinnwstr(y, 0, row, COLS);
        size_t n = wcstombs(text + len, row, cap - len - 2);
        if (n != (size_t)-1)
            len += n;
        text[len++] = '\n';
    }
    return text;
}
