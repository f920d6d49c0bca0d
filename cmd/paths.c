/* The paths main decides, resolved once at start (see paths.h for the order and why). */
#include "cmd/paths.h"

#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "core/journal/journal.h"
#include "core/sched/catalogue.h"

#ifndef TUNEDECK_SOURCE_DIR
#define TUNEDECK_SOURCE_DIR "."
#endif

static char home[PATH_MAX];
static char catalogue[PATH_MAX + 64], themes[PATH_MAX + 16];
static char sessions[PATH_MAX];
static Error sessions_err; /* why there is no sessions folder, when there is none */

static int is_dir(const char *path)
{
    struct stat st;
    return stat(path, &st) == 0 && S_ISDIR(st.st_mode);
}

/* BINDIR/../share/tunedeck when it holds themes/: the binary is an installed one. */
static int beside_binary(char out[PATH_MAX])
{
    char exe[PATH_MAX];
    ssize_t n = readlink("/proc/self/exe", exe, sizeof exe - 1);
    if (n <= 0)
        return 0;
    exe[n] = '\0';
    char *slash = strrchr(exe, '/');
    if (!slash)
        return 0;
    *slash = '\0';
    char guess[PATH_MAX + 32], theme_dir[PATH_MAX + 48];
    snprintf(guess, sizeof guess, "%s/../share/tunedeck", exe);
    snprintf(theme_dir, sizeof theme_dir, "%s/themes", guess);
    if (!is_dir(theme_dir) || !realpath(guess, out))
        return 0;
    return 1;
}

void paths_resolve(void)
{
    const char *env = getenv("TUNEDECK_HOME");
    if (env && *env)
        snprintf(home, sizeof home, "%s", env);
    else if (!beside_binary(home))
        snprintf(home, sizeof home, "%s", TUNEDECK_SOURCE_DIR);
    /* Exported, so the commands tunedeck starts here (trial commands: the shipped
     * inventories name "$TUNEDECK_HOME/examples/...") find the examples wherever they are
     * installed, not only from the source tree's top folder. */
    setenv("TUNEDECK_HOME", home, 1);
    snprintf(catalogue, sizeof catalogue, "%s/%s", home, CATALOGUE_SUBDIR);
    snprintf(themes, sizeof themes, "%s/themes", home);
    if (journal_dir(getenv("TUNEDECK_STATE_DIR"), getenv("XDG_STATE_HOME"), getenv("HOME"),
                    sessions, sizeof sessions, &sessions_err) < 0)
        sessions[0] = '\0';
}

const char *paths_data_home(void)
{
    return home;
}

const char *paths_catalogue(void)
{
    return catalogue;
}

const char *paths_themes(void)
{
    return themes;
}

const char *paths_sessions(Error *err)
{
    if (sessions[0])
        return sessions;
    if (err)
        *err = sessions_err;
    return NULL;
}
