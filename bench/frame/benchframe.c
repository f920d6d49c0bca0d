/* The frame benchmarks' off-screen terminal and bare refresh (benchframe.h). */
#include "bench/frame/benchframe.h"

#include <locale.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>

#include "core/base/clock.h"
#include "tui/draw.h"
#include "tui/layout.h"
#include "tui/theme.h"
#include "tui/view.h"

int benchframe_open(BenchScreen *bs, int rows, int cols, const char *who)
{
    bs->out = tmpfile();
    bs->in = fopen("/dev/null", "r");
    setenv("LC_ALL", "C.UTF-8", 1);
    setlocale(LC_ALL, "");
    bs->screen = bs->out && bs->in ? newterm("xterm-256color", bs->out, bs->in) : NULL;
    if (!bs->screen) {
        fprintf(stderr, "bench %s: newterm failed\n", who);
        if (bs->out)
            fclose(bs->out);
        if (bs->in)
            fclose(bs->in);
        return -1;
    }
    resizeterm(rows, cols);
    start_color();
    use_default_colors();
    Theme th;
    theme_default(&th);
    theme_apply(&th, 256);
    draw_init(0);
    return 0;
}

void benchframe_close(BenchScreen *bs)
{
    endwin();
    delscreen(bs->screen);
    fclose(bs->in);
    fclose(bs->out);
}

long benchframe_bytes(BenchScreen *bs)
{
    fflush(bs->out);
    struct stat st;
    return fstat(fileno(bs->out), &st) == 0 ? (long)st.st_size : 0;
}

double benchframe_bare(BenchScreen *bs, int k, long *bytes)
{
    long b0 = bytes ? benchframe_bytes(bs) : 0;
    double t0 = benchframe_now_ms();
    erase();
    for (int y = 0; y < LINES; y++)
        mvhline(y, 0, (chtype)('a' + (y + k) % 26), COLS);
    clearok(curscr, TRUE);
    wnoutrefresh(stdscr);
    doupdate();
    double dt = benchframe_now_ms() - t0;
    if (bytes)
        *bytes += benchframe_bytes(bs) - b0;
    return dt;
}

double benchframe_cluster(BenchScreen *bs, const ClusterSnapshot *s, int full, long *bytes)
{
    long b0 = benchframe_bytes(bs);
    double t0 = benchframe_now_ms();
    erase();
    Layout l;
    layout_compute(COLS, LINES, VIEW_CLUSTER, 0, &l);
    view_cluster_draw(s, &l, 0, 0);
    if (full)
        clearok(curscr, TRUE);
    wnoutrefresh(stdscr);
    doupdate();
    double dt = benchframe_now_ms() - t0;
    *bytes += benchframe_bytes(bs) - b0;
    return dt;
}

double benchframe_now_ms(void)
{
    return clock_now_s() * 1000.0;
}

int benchframe_args(int argc, char **argv, const char *who, const char **out)
{
    *out = NULL;
    for (int i = 1; i < argc; i++) {
        if (strcmp(argv[i], "--help") == 0) {
            printf("usage: %s [--out FILE.json]\n", who);
            return 1;
        }
        if (strcmp(argv[i], "--out") == 0 && i + 1 < argc) {
            *out = argv[++i];
            continue;
        }
        fprintf(stderr, "%s: %s%s%s: expected only --out FILE.json\n", who,
                strcmp(argv[i], "--out") == 0 ? "" : "unexpected argument '", argv[i],
                strcmp(argv[i], "--out") == 0 ? " without its FILE" : "'");
        return -1;
    }
    return 0;
}
