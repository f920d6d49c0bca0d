/* Terminal setup, teardown and signal plumbing (self-pipe) for the console's poll loop. */
#include "tui/term.h"

#include <curses.h>
#include <errno.h>
#include <fcntl.h>
#include <locale.h>
#include <signal.h>
#include <stdlib.h>
#include <string.h>
#include <sys/ioctl.h>
#include <term.h>
#include <termios.h>
#include <unistd.h>

static int sig_pipe[2] = {-1, -1};
static struct termios saved_tio;
static int saved_tio_ok;
static volatile sig_atomic_t curses_on;
static volatile sig_atomic_t quit_signo; /* the first SIGTERM or SIGHUP */
static volatile sig_atomic_t hung_up;    /* a SIGHUP came, first or not */
static int colors;

/* What a crash handler may write: leave the alternate screen, show the cursor, stop mouse
 * reporting, reset attributes. Plain bytes; no curses call is async-signal-safe. */
static const char RESET_SEQ[] = "\033[?1000l\033[?1002l\033[?1006l\033[0m\033[?25h\033[?1049l\r\n";

static void on_signal(int sig)
{
    int saved = errno;
    char byte = sig == SIGWINCH  ? TERM_SIG_WINCH
                : sig == SIGTSTP ? TERM_SIG_STOP
                : sig == SIGCONT ? TERM_SIG_CONT
                : sig == SIGINT  ? TERM_SIG_INT
                                 : TERM_SIG_QUIT;
    if (byte == TERM_SIG_QUIT && !quit_signo)
        quit_signo = sig; /* the exit status says which (cmd/cmd_console.c) */
    if (sig == SIGHUP)
        hung_up = 1;
    if (sig_pipe[1] >= 0) {
        ssize_t rc = write(sig_pipe[1], &byte, 1);
        (void)rc; /* a full pipe already holds a wake-up */
    }
    errno = saved;
}

static void on_crash(int sig)
{
    if (curses_on) {
        ssize_t rc = write(STDOUT_FILENO, RESET_SEQ, sizeof RESET_SEQ - 1);
        (void)rc;
        if (saved_tio_ok)
            tcsetattr(STDIN_FILENO, TCSANOW, &saved_tio);
    }
    signal(sig, SIG_DFL);
    raise(sig);
}

static void install(int sig, void (*fn)(int), int flags)
{
    struct sigaction sa;
    memset(&sa, 0, sizeof sa);
    sa.sa_handler = fn;
    sa.sa_flags = flags;
    sigemptyset(&sa.sa_mask);
    sigaction(sig, &sa, NULL);
}

static void on_exit_restore(void)
{
    term_close();
}

/* The terminal type must be known and able to place the cursor: initscr() would exit on an
 * unknown one with its own words, and on TERM=dumb it draws a screen no one can read. */
static int check_terminal_type(Error *err)
{
    const char *term = getenv("TERM");
    int found = 0;
    if (!term || !term[0])
        return error_set(err, "TERM is not set: the console needs to know the terminal "
                              "(e.g. TERM=xterm-256color; for scripts, use `tunedeck tune`)");
    if (setupterm(NULL, STDOUT_FILENO, &found) != OK)
        return error_set(err,
                         found == 0 ? "TERM='%s': no such terminal type in this machine's terminfo "
                                      "(try TERM=xterm-256color, or install ncurses-term)"
                                    : "TERM='%s': cannot read the terminfo database",
                         term);
    const char *cup = tigetstr("cup");
    int usable = cup && cup != (char *)-1 && !tigetflag("hc");
    del_curterm(cur_term);
    if (!usable)
        return error_set(err, "TERM='%s' cannot place the cursor, which the console needs "
                              "(use a terminal such as TERM=xterm-256color; for scripts, "
                              "`tunedeck tune`)", term);
    return 0;
}

int term_open(Error *err)
{
    if (!isatty(STDIN_FILENO) || !isatty(STDOUT_FILENO))
        return error_set(err, "the console needs a terminal on standard input and output "
                              "(for scripts, use `tunedeck tune`)");
    if (sig_pipe[0] < 0) {
        if (pipe(sig_pipe) < 0)
            return error_set(err, "pipe: %s", strerror(errno));
        for (int i = 0; i < 2; i++) {
            fcntl(sig_pipe[i], F_SETFL, O_NONBLOCK);
            fcntl(sig_pipe[i], F_SETFD, FD_CLOEXEC);
        }
    }
    if (check_terminal_type(err) < 0)
        return -1;
    saved_tio_ok = tcgetattr(STDIN_FILENO, &saved_tio) == 0;
    setlocale(LC_ALL, "");
    install(SIGWINCH, on_signal, SA_RESTART);
    install(SIGTSTP, on_signal, SA_RESTART);
    install(SIGCONT, on_signal, SA_RESTART);
    install(SIGTERM, on_signal, SA_RESTART);
    install(SIGHUP, on_signal, SA_RESTART);
    install(SIGINT, on_signal, SA_RESTART);
    install(SIGPIPE, SIG_IGN, 0);
    static const int CRASH[] = {SIGSEGV, SIGBUS, SIGFPE, SIGILL, SIGABRT};
    for (size_t i = 0; i < sizeof CRASH / sizeof CRASH[0]; i++)
        install(CRASH[i], on_crash, SA_RESETHAND);
    atexit(on_exit_restore);
    set_escdelay(25);
    if (!initscr())
        return error_set(err, "cannot start curses on TERM='%s'",
                         getenv("TERM") ? getenv("TERM") : "");
    curses_on = 1;
    cbreak();
    noecho();
    nonl();
    keypad(stdscr, TRUE);
    /* Home and End as tmux, screen and the Linux console send them, whatever TERM says
     * (TERM=xterm-256color inside tmux is common; its terminfo knows only \EOH and \EOF). */
    static const struct {
        const char *seq;
        int key;
    } MORE_KEYS[] = {{"\033[1~", KEY_HOME}, {"\033[7~", KEY_HOME}, {"\033[H", KEY_HOME},
                     {"\033[4~", KEY_END},  {"\033[8~", KEY_END},  {"\033[F", KEY_END}};
    for (size_t i = 0; i < sizeof MORE_KEYS / sizeof MORE_KEYS[0]; i++)
        if (key_defined(MORE_KEYS[i].seq) == 0)
            define_key(MORE_KEYS[i].seq, MORE_KEYS[i].key);
    nodelay(stdscr, TRUE);
    curs_set(0);
    mousemask(BUTTON1_PRESSED | BUTTON1_RELEASED | BUTTON3_PRESSED | BUTTON3_RELEASED |
                  BUTTON4_PRESSED | BUTTON5_PRESSED,
              NULL);
    mouseinterval(0);
    colors = 0;
    const char *nc = getenv("NO_COLOR");
    if (has_colors() && !(nc && nc[0])) {
        start_color();
        use_default_colors();
        colors = COLORS;
    }
    return 0;
}

void term_close(void)
{
    if (!curses_on)
        return;
    curses_on = 0;
    mousemask(0, NULL);
    curs_set(1);
    endwin();
    if (saved_tio_ok)
        tcsetattr(STDIN_FILENO, TCSANOW, &saved_tio);
}

int term_signal_fd(void)
{
    return sig_pipe[0];
}

TermSignals term_take_signals(void)
{
    char buf[64];
    TermSignals got = {0};
    ssize_t n;
    while ((n = read(sig_pipe[0], buf, sizeof buf)) > 0)
        for (ssize_t i = 0; i < n; i++) {
            got.winch |= buf[i] == TERM_SIG_WINCH;
            got.quit |= buf[i] == TERM_SIG_QUIT;
            got.stop |= buf[i] == TERM_SIG_STOP;
            got.cont |= buf[i] == TERM_SIG_CONT;
            got.ints += buf[i] == TERM_SIG_INT;
        }
    return got;
}

int term_quit_signal(void)
{
    return quit_signo;
}

int term_hung_up(void)
{
    return hung_up;
}

void term_resize(void)
{
    struct winsize ws;
    if (ioctl(STDOUT_FILENO, TIOCGWINSZ, &ws) == 0 && ws.ws_row > 0 && ws.ws_col > 0)
        resizeterm(ws.ws_row, ws.ws_col);
    clearok(curscr, TRUE);
}

void term_suspend(void)
{
    term_close();
    install(SIGTSTP, SIG_DFL, 0);
    raise(SIGTSTP);
    /* resumed */
    install(SIGTSTP, on_signal, SA_RESTART);
    refresh();
    curses_on = 1;
    curs_set(0);
    mousemask(BUTTON1_PRESSED | BUTTON1_RELEASED | BUTTON3_PRESSED | BUTTON3_RELEASED |
                  BUTTON4_PRESSED | BUTTON5_PRESSED,
              NULL);
    term_resize();
}

int term_colors(void)
{
    return colors;
}
