/* The data home, resolved once at start (see datahome.h for the order and why). */
#include "cmd/datahome.h"

#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "core/sched/catalogue.h"

#ifndef TUNEDECK_SOURCE_DIR
#define TUNEDECK_SOURCE_DIR "."
#endif

static char home[PATH_MAX];
static char catalogue[PATH_MAX + 64], themes[PATH_MAX + 16];

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

void datahome_resolve(void)
{
    const char *env = getenv("TUNEDECK_HOME");
    if (env && *env)
        snprintf(home, sizeof home, "%s", env);
    else if (!beside_binary(home))
        snprintf(home, sizeof home, "%s", TUNEDECK_SOURCE_DIR);
    snprintf(catalogue, sizeof catalogue, "%s/%s", home, CATALOGUE_SUBDIR);
    snprintf(themes, sizeof themes, "%s/themes", home);
}

const char *datahome(void)
{
    return home;
}

const char *datahome_catalogue(void)
{
    return catalogue;
}

const char *datahome_themes(void)
{
    return themes;
}
