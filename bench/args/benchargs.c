/* The tail of every benchmark's option parsing (benchargs.h). */
#include "bench/args/benchargs.h"

#include <stdio.h>

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
