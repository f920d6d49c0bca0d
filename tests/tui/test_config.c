#include <criterion/criterion.h>
#include <dirent.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "tui/config.h"

static char dir[] = "/tmp/tunedeck-config-XXXXXX";
static char path[256];

static void setup(void)
{
    cr_assert_not_null(mkdtemp(dir));
    snprintf(path, sizeof path, "%s/sub/tunedeck/config.json", dir);
}

static void teardown(void)
{
    char cmd[300];
    snprintf(cmd, sizeof cmd, "rm -rf '%s'", dir);
    cr_assert_eq(system(cmd), 0);
}

static void write_file(const char *text)
{
    char sub[300];
    snprintf(sub, sizeof sub, "%s/sub", dir);
    mkdir(sub, 0700);
    snprintf(sub, sizeof sub, "%s/sub/tunedeck", dir);
    mkdir(sub, 0700);
    FILE *f = fopen(path, "w");
    fputs(text, f);
    fclose(f);
}

TestSuite(config, .init = setup, .fini = teardown);

Test(config, a_missing_file_is_the_defaults)
{
    ConsoleConfig c;
    Error err;
    cr_assert_eq(config_load(path, &c, &err), 0);
    cr_assert_eq(c.keys[ACT_QUIT], 'q');
    cr_assert_eq(c.theme[0], 0);
    cr_assert_eq(config_action_of(&c, '?'), ACT_HELP);
    cr_assert_eq(config_action_of(&c, 'z'), -1);
}

/* A theme file's path as long as the `:` line takes (127 bytes less ":theme ") was saved cut
 * at 63 bytes: the next start loaded another path. */
Test(config, a_theme_path_as_long_as_the_command_line_takes_is_saved_whole)
{
    ConsoleConfig c, back;
    Error err;
    config_defaults(&c);
    char theme[120];
    memset(theme, 'd', sizeof theme - 1);
    theme[0] = '/';
    theme[sizeof theme - 1] = 0;
    snprintf(c.theme, sizeof c.theme, "%s", theme);
    cr_assert_eq(config_save(path, &c, &err), 0, "%s", err.msg);
    cr_assert_eq(config_load(path, &back, &err), 0, "%s", err.msg);
    cr_assert_str_eq(back.theme, theme);
}

Test(config, save_creates_folders_and_round_trips)
{
    ConsoleConfig c, back;
    Error err;
    config_defaults(&c);
    snprintf(c.theme, sizeof c.theme, "light");
    snprintf(c.plot, sizeof c.plot, "block");
    c.keys[ACT_QUIT] = 'x';
    cr_assert_eq(config_save(path, &c, &err), 0, "%s", err.msg);
    cr_assert_eq(config_load(path, &back, &err), 0, "%s", err.msg);
    cr_assert_str_eq(back.theme, "light");
    cr_assert_str_eq(back.plot, "block");
    cr_assert_eq(config_action_of(&back, 'x'), ACT_QUIT);
    cr_assert_eq(config_action_of(&back, 'q'), -1);
    char folder[300];
    snprintf(folder, sizeof folder, "%s/sub/tunedeck", dir);
    DIR *d = opendir(folder);
    cr_assert_not_null(d);
    int entries = 0;
    for (struct dirent *e; (e = readdir(d));)
        entries += e->d_name[0] != '.';
    closedir(d);
    cr_assert_eq(entries, 1, "no temporary file is left behind beside config.json");
}

/* Regression: the settings were written through "config.json.tmp.<pid>", opened without
 * O_EXCL, so a link planted at that name made the save write through it (truncating the
 * file it points to). */
Test(config, a_link_planted_at_the_old_temporary_name_is_not_followed)
{
    write_file("{}");
    char victim[300], planted[400];
    snprintf(victim, sizeof victim, "%s/victim", dir);
    FILE *f = fopen(victim, "w");
    fputs("precious\n", f);
    fclose(f);
    snprintf(planted, sizeof planted, "%s.tmp.%d", path, (int)getpid());
    cr_assert_eq(symlink(victim, planted), 0);
    ConsoleConfig c, back;
    Error err;
    config_defaults(&c);
    snprintf(c.theme, sizeof c.theme, "light");
    cr_assert_eq(config_save(path, &c, &err), 0, "%s", err.msg);
    char text[64] = "";
    f = fopen(victim, "r");
    cr_assert_not_null(fgets(text, sizeof text, f));
    fclose(f);
    cr_assert_str_eq(text, "precious\n", "the file the link points to is untouched");
    struct stat st;
    cr_assert_eq(lstat(path, &st), 0);
    cr_assert(S_ISREG(st.st_mode), "config.json is a regular file, not the planted link");
    cr_assert_eq(st.st_mode & 0777, 0600);
    cr_assert_eq(config_load(path, &back, &err), 0, "%s", err.msg);
    cr_assert_str_eq(back.theme, "light");
    cr_assert_eq(lstat(planted, &st), 0, "the planted link is left alone");
    cr_assert(S_ISLNK(st.st_mode));
}

Test(config, rebinding_a_key_is_read)
{
    write_file("{\"keys\": {\"help\": \"h\", \"view-hosts\": \"H\"}}");
    ConsoleConfig c;
    Error err;
    cr_assert_eq(config_load(path, &c, &err), 0, "%s", err.msg);
    cr_assert_eq(config_action_of(&c, 'h'), ACT_HELP);
    cr_assert_eq(config_action_of(&c, 'H'), ACT_VIEW_HOSTS);
    cr_assert_eq(config_action_of(&c, 'q'), ACT_QUIT);
}

Test(config, an_unknown_action_is_refused_and_the_defaults_kept)
{
    write_file("{\"keys\": {\"explode\": \"x\"}}");
    ConsoleConfig c;
    Error err;
    cr_assert_eq(config_load(path, &c, &err), -1);
    cr_assert(strstr(err.msg, "unknown action 'explode'"), "%s", err.msg);
    cr_assert_eq(c.keys[ACT_QUIT], 'q');
}

Test(config, a_key_bound_twice_is_refused)
{
    write_file("{\"keys\": {\"help\": \"q\"}}");
    ConsoleConfig c;
    Error err;
    cr_assert_eq(config_load(path, &c, &err), -1);
    cr_assert(strstr(err.msg, "bound to both"), "%s", err.msg);
}

Test(config, a_long_key_and_bad_json_are_refused)
{
    write_file("{\"keys\": {\"help\": \"F1\"}}");
    ConsoleConfig c;
    Error err;
    cr_assert_eq(config_load(path, &c, &err), -1);
    cr_assert(strstr(err.msg, "keys.help: expected one printable character"), "%s", err.msg);
    /* regression: an empty key said "found " and nothing after it */
    write_file("{\"keys\": {\"help\": \"\"}}");
    cr_assert_eq(config_load(path, &c, &err), -1);
    cr_assert(strstr(err.msg, "keys.help: expected one printable character, found nothing"), "%s",
              err.msg);
    write_file("{\"theme\": 3}");
    cr_assert_eq(config_load(path, &c, &err), -1);
    cr_assert(strstr(err.msg, "theme"), "%s", err.msg);
    write_file("not json");
    cr_assert_eq(config_load(path, &c, &err), -1);
}

/* An unknown key was ignored (a misspelt "them" left the theme as it was, with nothing said)
 * and the next save (`:theme`, `:plot`) wrote the file again without it: refused at load, the
 * file is said and never written over (the console's rule for a file it refuses). */
Test(config, an_unknown_key_is_refused_not_ignored_then_dropped)
{
    write_file("{\"them\": \"light\", \"plot\": \"ascii\"}");
    ConsoleConfig c;
    Error err;
    cr_assert_eq(config_load(path, &c, &err), -1);
    cr_assert(strstr(err.msg, "config.json: field 'them': unknown; expected theme, plot or keys"),
              "%s", err.msg);
}
