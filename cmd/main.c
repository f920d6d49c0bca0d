/* tunedeck's entry point: dispatches to a subcommand, or opens the console. */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "cmd/commands.h"
#include "cmd/paths.h"
#include "core/base/exitcode.h"
#include "core/base/secret.h"

#define TUNEDECK_VERSION "0.1.0"

/* One line per subcommand; a new command is a new cmd_<name>.c and a line here. */
const Command COMMANDS[] = {
    {"tune", "tune one job's schedule (headless)", cmd_tune},
    {"sim-trial", "the simulator as a protocol v1 trial command", cmd_sim_trial},
    {"console", "the operator console (also: tunedeck with no command)", cmd_console},
    {"schedule", "simulate the cluster scheduler on a workload (headless; --live: on real hosts)", cmd_schedule_or_live},
    {"sessions", "list session journals", cmd_sessions},
    {"hosts", "check reachability, host keys and GPUs of an inventory", cmd_hosts},
    {NULL, NULL, NULL},
};

static void usage(FILE *out)
{
    fprintf(out, "usage: tunedeck [COMMAND] [--help]\n\ncommands:\n");
    for (const Command *c = COMMANDS; c->name; c++)
        fprintf(out, "  %-10s %s\n", c->name, c->summary);
    fprintf(out, "\n  --version  print the version\n  --help     this help\n"
                 "Every command takes --help.\n"
                 "\ndata, themes, examples: %s (TUNEDECK_HOME overrides)\n",
            paths_data_home());
}

/* A result that could not be written (a full disk behind `> result.json`) is a failure,
 * not exit 0 over a truncated file. */
static int stdout_written(int rc)
{
    errno = 0;
    if (fflush(stdout) == 0 && !ferror(stdout))
        return rc;
    fprintf(stderr, "tunedeck: standard output: write failed%s%s\n", errno ? ": " : "",
            errno ? strerror(errno) : "");
    return rc ? rc : EXIT_FAILED;
}

int main(int argc, char **argv)
{
    /* First: every command may come to hold keys or secrets (secret.h). */
    Error err;
    if (secret_no_core_dumps_unless(getenv("TUNEDECK_DUMPABLE"), &err) < 0)
        fprintf(stderr, "tunedeck: %s\n", err.msg);
    paths_resolve();
    if (argc > 1 && strcmp(argv[1], "--version") == 0) {
        printf("tunedeck %s\n", TUNEDECK_VERSION);
        return stdout_written(0);
    }
    if (argc > 1 && (strcmp(argv[1], "--help") == 0 || strcmp(argv[1], "-h") == 0)) {
        usage(stdout);
        return stdout_written(0);
    }
    if (argc > 1 && argv[1][0] != '-') {
        for (const Command *c = COMMANDS; c->name; c++)
            if (strcmp(c->name, argv[1]) == 0)
                return stdout_written(c->run(argc - 1, argv + 1));
        fprintf(stderr, "tunedeck: unknown command '%s' (try --help)\n", argv[1]);
        return EXIT_USAGE;
    }
    for (const Command *c = COMMANDS; c->name; c++)
        if (strcmp(c->name, "console") == 0)
            return c->run(argc, argv);
    usage(stderr);
    return EXIT_USAGE;
}
