/* A real curses screen for the view tests: xterm-256color in UTF-8 with the default theme,
 * written to a temporary file, and read back as text. One at a time. */
#ifndef TUNEDECK_TEST_SCREEN_H
#define TUNEDECK_TEST_SCREEN_H

/* Makes a rows x cols screen the current one, asserted. */
void fixture_screen_open(int rows, int cols);

/* Ends it and closes its files. */
void fixture_screen_close(void);

/* The whole screen as UTF-8 text, one line per row; the caller frees it. */
char *fixture_screen_text(void);

#endif
