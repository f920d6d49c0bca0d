/* The tail of every benchmark's option parsing (benchargs.h). */
#include "bench/args/benchargs.h"

#include <stdio.h>
#include <string.h>

#include "core/base/error.h"
#include "core/base/jsonfile.h"

int benchargs_no_operands(const char *who, int argc, char **argv, int first, const char *hint)
{
    if (first >= argc)
        return 0;
    fprintf(stderr, "%s: unexpected argument '%s'%s\n", who, argv[first], hint);
    return -1;
}

int benchargs_out_writable(const char *who, const char *out)
{
    Error err;
    if (!out || jsonfile_check_writable(out, &err) >= 0)
        return 0;
    fprintf(stderr, "%s: --out %s\n", who, err.msg);
    return -1;
}

int benchargs_out_quick(const char *who, int argc, char **argv, const char **out, int *quick)
{
    *out = NULL;
    *quick = 0;
    for (int i = 1; i < argc; i++) {
        if (strcmp(argv[i], "--out") == 0 && i + 1 < argc)
            *out = argv[++i];
        else if (strcmp(argv[i], "--quick") == 0)
            *quick = 1;
        else {
            fprintf(stderr, "usage: %s [--out FILE.json] [--quick]\n", who);
            return -1;
        }
    }
    return benchargs_out_writable(who, *out);
}
