/* Every key the console answers, as one table: the help overlay lists it, so the help can
 * never forget a key. */
#ifndef TUNEDECK_KEYS_H
#define TUNEDECK_KEYS_H

#include <stddef.h>

typedef struct {
    const char *context; /* "global", "trials", "editor", "prompt" */
    const char *keys;
    const char *what;
} KeyHelp;

extern const KeyHelp HELP_KEYS[];
extern const size_t HELP_KEYS_COUNT;

/* Draws the help overlay centred on the screen, wrapped to its width, from its row `top` on
 * (a screen too short for all of it scrolls); returns the top row it drew, clamped. `rebound`
 * (NULL or "": none) names the keys config.json moved, "x quit, h help": the table lists the
 * defaults, so its title says which of them no longer hold. */
int keys_draw_help(int cols, int rows, int top, const char *rebound);
/* Whether the whole help shows on a cols × rows screen (then any key closes it). */
int keys_help_fits(int cols, int rows);

#endif
