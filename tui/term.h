/* The terminal: curses setup and teardown, and signals turned into bytes on a pipe so the
 * console's one poll() loop sees them. The terminal is restored on every exit path. */
#ifndef TUNEDECK_TERM_H
#define TUNEDECK_TERM_H

#include "core/base/error.h"

typedef enum {
    TERM_SIG_NONE = 0,
    TERM_SIG_WINCH,
    TERM_SIG_STOP, /* SIGTSTP: the loop suspends (term_suspend) */
    TERM_SIG_CONT,
    TERM_SIG_QUIT, /* SIGTERM, SIGHUP */
    TERM_SIG_INT   /* SIGINT: the loop decides (a prompt cancels, else a quit) */
} TermSignal;

/* Saves the terminal state, installs the signal handlers (including crash signals, which
 * restore the terminal and re-raise), and starts curses in wide-character mode. */
int term_open(Error *err);
/* Ends curses and restores the terminal; safe to call twice. */
void term_close(void);
/* The read end of the signal pipe, for poll(). */
int term_signal_fd(void);
/* What the signal pipe held since the last drain, each kind kept: two signals that come
 * between two turns of the loop (Ctrl-C then Ctrl-Z, two Ctrl-C) are both acted on. */
typedef struct {
    int quit;  /* SIGTERM or SIGHUP came (term_quit_signal says which first) */
    int ints;  /* how many SIGINTs: the first may only cancel an open prompt */
    int stop;  /* SIGTSTP */
    int cont;  /* SIGCONT */
    int winch; /* SIGWINCH */
} TermSignals;
/* Drains the signal pipe. */
TermSignals term_take_signals(void);
/* The signal that asked the console to quit (SIGTERM, SIGHUP: the first of them), 0 while
 * none has. SIGINT is not among them: whether a Ctrl-C quits depends on what the screen
 * shows (an open prompt takes it), which only the loop knows (TERM_SIG_INT). */
int term_quit_signal(void);
/* 1 once a SIGHUP came, whether or not it was the first quit signal. */
int term_hung_up(void);
/* Applies the current window size to curses (after SIGWINCH). */
void term_resize(void);
/* SIGTSTP: restores the terminal, stops the process, and takes the screen back on resume. */
void term_suspend(void);
/* Whether the terminal shows colours (and how many). 0 when NO_COLOR is set. */
int term_colors(void);

#endif
