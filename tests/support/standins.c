/* Stand-in commands on PATH for the unit tests (tests/support/standins.h). */
#include "tests/support/standins.h"

#include <criterion/criterion.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>

#include "core/base/readall.h"

void standins_install(char *dir, const char *const (*table)[2], size_t n)
{
    cr_assert_not_null(mkdtemp(dir));
    char path[512];
    for (size_t i = 0; i < n; i++) {
        snprintf(path, sizeof path, "%s/%s", dir, table[i][0]);
        FILE *f = fopen(path, "w");
        cr_assert_not_null(f, "%s", path);
        fprintf(f, "#!/bin/sh\nD='%s'\n%s", dir, table[i][1]);
        fclose(f);
        cr_assert_eq(chmod(path, 0755), 0);
    }
    const char *old = getenv("PATH");
    char *now = NULL;
    cr_assert_geq(asprintf(&now, "%s:%s", dir, old ? old : "/usr/bin:/bin"), 0);
    setenv("PATH", now, 1);
    free(now);
}

void standins_remove(char *dir)
{
    char cmd[600];
    snprintf(cmd, sizeof cmd, "rm -rf '%s'", dir);
    cr_assert_eq(system(cmd), 0);
    memcpy(dir + strlen(dir) - 6, "XXXXXX", 6);
}

void standins_put(const char *dir, const char *name, const char *text)
{
    char path[512];
    snprintf(path, sizeof path, "%s/%s", dir, name);
    FILE *f = fopen(path, "w");
    cr_assert_not_null(f, "%s", path);
    fputs(text, f);
    fclose(f);
}

char *standins_recorded(const char *dir, const char *name)
{
    char path[512];
    snprintf(path, sizeof path, "%s/%s", dir, name);
    Error err;
    char *text = readall_file(path, 1 << 20, NULL, &err);
    return text ? text : strdup("");
}
