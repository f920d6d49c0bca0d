/* Fuzzes theme files (tui/theme.c): a bad theme is refused with a reason and leaves the
 * default theme in place; a good one sets colours within 0-255 or the terminal default. */
#include <stdio.h>
#include <unistd.h>

#include "tests/fuzz/fuzz_common.h"
#include "tui/theme.h"

static char dir[64];

static void remove_dir(void)
{
    char path[128];
    snprintf(path, sizeof path, "%s/fuzz.json", dir);
    unlink(path);
    rmdir(dir);
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    if (!dir[0]) {
        snprintf(dir, sizeof dir, "/tmp/td-fuzz-theme.XXXXXX");
        if (!mkdtemp(dir))
            abort();
        atexit(remove_dir);
    }
    char path[128];
    snprintf(path, sizeof path, "%s/fuzz.json", dir);
    FILE *f = fopen(path, "wb");
    if (!f || fwrite(data, 1, size, f) != size || fclose(f) != 0)
        abort();
    Theme t, dflt;
    Error err;
    theme_default(&dflt);
    if (theme_load(dir, "fuzz", &t, &err) == 0) {
        for (int r = 0; r < ROLE_COUNT; r++)
            if (t.role[r].fg < -1 || t.role[r].fg > 255 || t.role[r].bg < -1 || t.role[r].bg > 255)
                abort();
    } else if (!err.msg[0] || memcmp(&t.role, &dflt.role, sizeof t.role) != 0) {
        abort(); /* a refused theme must leave the default */
    }
    return 0;
}
