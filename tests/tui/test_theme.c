#include <criterion/criterion.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "tui/theme.h"

static char dir[] = "/tmp/tunedeck-theme-XXXXXX";

static void write_theme(const char *name, const char *text)
{
    char path[256];
    snprintf(path, sizeof path, "%s/%s.json", dir, name);
    FILE *f = fopen(path, "w");
    fputs(text, f);
    fclose(f);
}

static void setup(void)
{
    cr_assert_not_null(mkdtemp(dir));
}

static void teardown(void)
{
    char cmd[300];
    snprintf(cmd, sizeof cmd, "rm -rf '%s'", dir);
    cr_assert_eq(system(cmd), 0);
}

TestSuite(theme, .init = setup, .fini = teardown);

static const char *const SHIPPED[] = {"default",       "solarized-dark", "light",
                                      "high-contrast", "monochrome",     "okabe-ito"};
#define N_SHIPPED (sizeof SHIPPED / sizeof SHIPPED[0])

/* The shipped theme SHIPPED[i], from this source tree's themes/. */
static void load_shipped(size_t i, Theme *t)
{
    char themes[1024];
    Error err;
    snprintf(themes, sizeof themes, "%s/themes", TUNEDECK_SOURCE_DIR);
    cr_assert_eq(theme_load(themes, SHIPPED[i], t, &err), 0, "%s: %s", SHIPPED[i], err.msg);
}

Test(theme, every_shipped_theme_loads)
{
    for (size_t i = 0; i < N_SHIPPED; i++) {
        Theme t;
        load_shipped(i, &t);
        cr_assert_str_eq(t.name, SHIPPED[i]);
    }
}

Test(theme, roles_and_colours_are_read)
{
    write_theme("t",
                "{\"roles\": {\"bar.gpu\": {\"fg\": \"bright-red\", \"bg\": 17, \"bold\": true}}}");
    Theme t;
    Error err;
    cr_assert_eq(theme_load(dir, "t", &t, &err), 0, "%s", err.msg);
    cr_assert_eq(t.role[ROLE_BAR_GPU].fg, 9);
    cr_assert_eq(t.role[ROLE_BAR_GPU].bg, 17);
    cr_assert(t.role[ROLE_BAR_GPU].bold);
}

Test(theme, an_unknown_role_is_reported_and_the_default_kept)
{
    write_theme("bad", "{\"roles\": {\"bar.nope\": {\"fg\": \"red\"}}}");
    Theme t, def;
    Error err;
    theme_default(&def);
    cr_assert_eq(theme_load(dir, "bad", &t, &err), -1);
    cr_assert(strstr(err.msg, "bar.nope"), "%s", err.msg);
    cr_assert_str_eq(t.name, "default");
    cr_assert_eq(t.role[ROLE_BAR_GPU].fg, def.role[ROLE_BAR_GPU].fg);
}

Test(theme, a_role_twice_is_refused_and_the_default_kept)
{
    write_theme("twice", "{\"roles\": {\"title\": {\"fg\": \"red\"}, \"title\": {\"fg\": "
                         "\"blue\"}}}");
    Theme t;
    Error err;
    cr_assert_eq(theme_load(dir, "twice", &t, &err), -1);
    cr_assert(strstr(err.msg, "twice.json: roles: key \"title\" appears twice"), "%s", err.msg);
    cr_assert_str_eq(t.name, "default");
}

Test(theme, a_bad_colour_names_the_field)
{
    write_theme("bad", "{\"roles\": {\"title\": {\"fg\": \"chartreuse\"}}}");
    Theme t;
    Error err;
    cr_assert_eq(theme_load(dir, "bad", &t, &err), -1);
    cr_assert(strstr(err.msg, "roles.title") && strstr(err.msg, "'fg'"), "%s", err.msg);
}

Test(theme, a_missing_or_broken_file_falls_back)
{
    Theme t;
    Error err;
    cr_assert_eq(theme_load(dir, "absent", &t, &err), -1);
    write_theme("broken", "{\"roles\": ");
    cr_assert_eq(theme_load(dir, "broken", &t, &err), -1);
    cr_assert_str_eq(t.name, "default");
}

Test(theme, a_path_is_read_as_given_not_under_themes)
{
    write_theme("mine", "{\"roles\": {\"bar.gpu\": {\"fg\": \"bright-red\"}}}");
    char path[300];
    Theme t;
    Error err = {0};
    snprintf(path, sizeof path, "%s/mine.json", dir);
    cr_assert_eq(theme_load("/no/such/themes", path, &t, &err), 0, "%s", err.msg);
    cr_assert_str_eq(t.name, "mine");
    cr_assert_eq(t.role[ROLE_BAR_GPU].fg, 9);
    snprintf(path, sizeof path, "%s/mine", dir); /* the .json may be left out */
    cr_assert_eq(theme_load("/no/such/themes", path, &t, &err), 0, "%s", err.msg);
    snprintf(path, sizeof path, "%s/absent.json", dir);
    cr_assert_eq(theme_load("/no/such/themes", path, &t, &err), -1);
    cr_assert(strstr(err.msg, path) && !strstr(err.msg, "//"), "%s", err.msg);
}

Test(theme, names_are_the_folders_json_files_sorted)
{
    char names[256];
    write_theme("zeta", "{}");
    write_theme("alpha", "{}");
    theme_names(dir, names, sizeof names);
    cr_assert_str_eq(names, "alpha, zeta");
    char themes[1024];
    snprintf(themes, sizeof themes, "%s/themes", TUNEDECK_SOURCE_DIR);
    theme_names(themes, names, sizeof names);
    cr_assert_str_eq(names, "default, high-contrast, light, monochrome, okabe-ito, solarized-dark");
    theme_names("/nonexistent-theme-dir", names, sizeof names);
    cr_assert_str_eq(names, "");
}

/* In 8 colours (TERM=xterm, screen, linux) the default theme's tab bar, white on grey 8,
 * became white on white: every tab but the active one, and the session's state, vanished. */
Test(theme, no_role_of_a_shipped_theme_loses_its_text_in_8_or_16_colours)
{
    for (size_t i = 0; i < N_SHIPPED; i++) {
        Theme t;
        load_shipped(i, &t);
        for (int colors = 8; colors <= 256; colors *= 2)
            for (int r = 0; r < ROLE_COUNT; r++) {
                const RoleStyle *s = &t.role[r];
                short fg, bg;
                theme_fit_pair(s->fg, s->bg, colors, &fg, &bg);
                cr_assert(s->fg == s->bg || fg < 0 || fg != bg, "%s %s in %d colours: %d on %d",
                          SHIPPED[i], theme_role_name((Role)r), colors, fg, bg);
            }
    }
    short fg, bg;
    theme_fit_pair(7, 8, 8, &fg, &bg);
    cr_assert(fg == 0 && bg == 7, "white on grey in 8 colours: %d on %d", fg, bg);
    theme_fit_pair(7, 8, 256, &fg, &bg);
    cr_assert(fg == 7 && bg == 8, "kept in 256 colours: %d on %d", fg, bg);
}

/* In 8 colours jobs 6 and 7 of the default theme (bright red, bright green) became jobs 0
 * and 1 (red, green): two jobs of one cluster view in one colour. */
Test(theme, every_job_colour_of_a_shipped_theme_stays_apart_in_8_colours)
{
    for (size_t i = 0; i < N_SHIPPED; i++) {
        Theme t;
        load_shipped(i, &t);
        for (int colors = 8; colors <= 256; colors *= 2) {
            short fg[8], bg[8];
            int rev[8];
            for (int j = 0; j < 8; j++) {
                const RoleStyle *s = &t.role[ROLE_JOB0 + j];
                theme_fit_pair(s->fg, s->bg, colors, &fg[j], &bg[j]);
                rev[j] = s->reverse ^ theme_job_repeats(&t, colors, j);
            }
            for (int j = 0; j < 8; j++)
                for (int k = 0; k < j; k++)
                    cr_assert(fg[j] != fg[k] || bg[j] != bg[k] || rev[j] != rev[k],
                              "%s in %d colours: job %d looks like job %d", SHIPPED[i], colors, j,
                              k);
        }
    }
    Theme d;
    theme_default(&d);
    cr_assert(!theme_job_repeats(&d, 256, 6) && theme_job_repeats(&d, 8, 6));
}

/* "expected ... a number 0-255, found a number" did not say which number was wrong. */
Test(theme, a_bad_colour_is_named_by_its_value)
{
    Theme t;
    Error err;
    write_theme("big", "{\"roles\": {\"tab\": {\"fg\": \"white\", \"bg\": 300}}}");
    cr_assert_eq(theme_load(dir, "big", &t, &err), -1);
    cr_assert(strstr(err.msg, "roles.tab: field 'bg': expected a colour name") != NULL, "%s",
              err.msg);
    cr_assert(strstr(err.msg, "found 300") != NULL, "%s", err.msg);
    write_theme("name", "{\"roles\": {\"tab\": {\"fg\": \"grey\"}}}");
    cr_assert_eq(theme_load(dir, "name", &t, &err), -1);
    cr_assert(strstr(err.msg, "found 'grey'") != NULL, "%s", err.msg);
    write_theme("list", "{\"roles\": {\"tab\": {\"fg\": [1]}}}");
    cr_assert_eq(theme_load(dir, "list", &t, &err), -1);
    cr_assert(strstr(err.msg, "found an array") != NULL, "%s", err.msg);
}
