/* Semantic colour roles and the theme that maps them to terminal colours. Drawing code
 * names roles only (ROLE_BAR_GPU), never a colour. Themes are JSON files (themes/NAME.json)
 * mapping role names ("bar.gpu") to {"fg", "bg", "bold", "reverse", "underline"}. */
#ifndef TUNEDECK_THEME_H
#define TUNEDECK_THEME_H

#include <stddef.h>

#include "core/base/error.h"

typedef enum {
    ROLE_NORMAL,
    ROLE_BORDER,
    ROLE_TITLE,
    ROLE_TAB,
    ROLE_TAB_ACTIVE,
    ROLE_STATUS,
    ROLE_KEY, /* a key name in hints and help */
    ROLE_DIM,
    ROLE_GOOD,
    ROLE_BAD,
    ROLE_WARN,
    ROLE_SELECTED,
    ROLE_BAR_CPU,
    ROLE_BAR_GPU,
    ROLE_BAR_MEM,
    ROLE_BAR_SHARE,
    ROLE_BAR_PRED,   /* predicted mean */
    ROLE_BAR_SPREAD, /* p10-p90 spread */
    ROLE_PLOT_BEST,
    ROLE_PLOT_MEASURED,
    ROLE_PLOT_PRED,
    ROLE_JOB0,
    ROLE_JOB1,
    ROLE_JOB2,
    ROLE_JOB3,
    ROLE_JOB4,
    ROLE_JOB5,
    ROLE_JOB6,
    ROLE_JOB7,
    ROLE_COUNT
} Role;

typedef struct {
    short fg, bg; /* 0-255, or -1 for the terminal default */
    unsigned char bold, reverse, underline;
} RoleStyle;

typedef struct {
    char name[64];
    RoleStyle role[ROLE_COUNT];
} Theme;

const char *theme_role_name(Role r);
/* The built-in default theme (also what a bad theme file falls back to). */
void theme_default(Theme *t);
/* Loads themes/<name>.json from `dir`; on any error *t holds the default and err says why. */
int theme_load(const char *dir, const char *name, Theme *t, Error *err);
/* The names of the themes in dir ("default, light, ..."), sorted, in out (empty: none). */
void theme_names(const char *dir, char *out, size_t cap);

/* A role's colours brought down to a terminal of `colors` colours (8: the basic ones):
 * each to its nearest, and when two colours that differ become one (the default theme's
 * tab bar, white on grey, is white on white in 8), the foreground becomes black on a light
 * background (white, yellow, cyan, green) and white on a dark one, so no text vanishes. */
void theme_fit_pair(short fg, short bg, int colors, short *fg_out, short *bg_out);
/* Whether job colour `job` (0-7), brought down to `colors` colours, is an earlier job's
 * (in 8 colours the default theme's bright red and green of jobs 6 and 7 are jobs 0 and 1's
 * red and green); theme_apply shows such a job reversed, so the cluster view keeps every
 * job of a screen apart by colour, not by its letter alone. */
int theme_job_repeats(const Theme *t, int colors, int job);
/* Curses side: registers colour pairs for `colors` colours (0 = monochrome: attributes
 * only) and returns the attribute for a role. */
void theme_apply(const Theme *t, int colors);
unsigned long theme_attr(Role r);

#endif
