/* Shared command-line pieces of the scheduler commands (see schedule_cli.h). */
#include "cmd/schedule_cli.h"

#include <sys/stat.h>

#include "core/base/exitcode.h"
#include "core/sched/sched.h"

void schedule_usage(FILE *out, const char *text)
{
    fputs(text, out);
    fprintf(out, "policies: %s\n", sched_policy_names_joined());
}

int schedule_fail(const char *cmd, const char *msg)
{
    fprintf(stderr, "tunedeck %s: %s\n", cmd, msg);
    return EXIT_USAGE;
}

int schedule_fail_error(const char *cmd, const Error *err)
{
    schedule_fail(cmd, err->msg);
    return exitcode_for(err, EXIT_USAGE);
}

int schedule_events_over_input(const char *events, const char *const *inputs)
{
    struct stat se, si;
    if (!events || stat(events, &se) != 0)
        return 0;
    for (; *inputs; inputs++)
        if (stat(*inputs, &si) == 0 && se.st_dev == si.st_dev && se.st_ino == si.st_ino)
            return 1;
    return 0;
}
