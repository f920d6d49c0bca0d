/* Where a scheduler benchmark finds Pollux's measurements (benchdata.h). */
#include "bench/args/benchdata.h"

#include <stdio.h>
#include <stdlib.h>

#include "core/base/error.h"

Catalogue *benchdata_catalogue(const char *who, char *dir, size_t size)
{
    const char *home = getenv("TUNEDECK_HOME");
    snprintf(dir, size, "%s/" CATALOGUE_SUBDIR, home && *home ? home : TUNEDECK_SOURCE_DIR);
    Error e;
    Catalogue *cat = catalogue_load(dir, &e);
    if (!cat)
        fprintf(stderr, "%s: %s\n", who, e.msg);
    return cat;
}
