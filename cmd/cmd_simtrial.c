/* `tunedeck sim-trial SETTING:NETWORK[:BATCH]`: the simulator as a protocol v1 trial command,
 * so the local launcher can be tested end to end against a real subprocess. */
#include <cJSON.h>
#include <getopt.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "cmd/commands.h"
#include "cmd/flags.h"
#include "core/base/exitcode.h"
#include "core/base/jfield.h"
#include "core/base/readall.h"
#include "core/sim/simcluster.h"

static void usage(FILE *out)
{
    fprintf(out,
            "usage: tunedeck sim-trial SETTING:NETWORK[:BATCH] [--seed N]\n"
            "Reads a protocol v1 schedule object on standard input and answers with the\n"
            "simulated cluster's iteration and done lines on standard output.\n");
    char sims[512];
    snprintf(sims, sizeof sims, "SETTING:NETWORK: %s.", simcluster_settings_help());
    flags_help_wrapped(out, sims, 0, 0);
}

static void print_event(void *ud, const TrialEvent *ev)
{
    (void)ud;
    char *line = protocol_format(ev);
    puts(line);
    free(line);
}

static void fail(const char *msg)
{
    TrialEvent ev = {.kind = EVENT_ERROR, .text = (char *)msg};
    print_event(NULL, &ev);
    fprintf(stderr, "tunedeck sim-trial: %s\n", msg);
}

int cmd_sim_trial(int argc, char **argv)
{
    static const struct option LONG[] = {{"seed", required_argument, 0, 's'},
                                         {"help", no_argument, 0, 'h'},
                                         {0, 0, 0, 0}};
    long seed = 1;
    int c;
    optind = 1;
    opterr = 0;
    while ((c = flags_getopt("sim-trial", argc, argv, LONG, NULL)) != -1) {
        if (c == 'h') {
            usage(stdout);
            return 0;
        }
        if (c == 's' && flags_long("sim-trial", "--seed", optarg, 0, 1L << 62, &seed) == 0)
            continue;
        if (c != 's')
            return EXIT_USAGE; /* flags_getopt said why */
        return EXIT_USAGE;
    }
    if (optind != argc - 1) {
        fprintf(stderr, "tunedeck sim-trial: expected one SETTING:NETWORK[:BATCH], found %d "
                        "arguments (try --help)\n",
                argc - optind);
        return EXIT_USAGE;
    }
    Error err;
    SimCluster *sim = simcluster_new(argv[optind], &err);
    if (!sim) {
        fprintf(stderr, "tunedeck sim-trial: %s\n", err.msg);
        return EXIT_USAGE;
    }
    size_t len = 0;
    char *text = readall_stream(stdin, 16 << 20, &len, &err);
    cJSON *root = text ? jfield_parse_text(text, len, "standard input",
                                           "protocol v1 schedule object", &err)
                       : NULL;
    if (!text)
        error_prefix(&err, "standard input");
    free(text);
    int rc = 0;
    if (!root) {
        fail(err.msg);
        rc = EXIT_BAD_INPUT; /* the schedule on standard input */
    } else {
        Schedule *s = schedule_from_json(root, simcluster_cluster(sim), "standard input", &err);
        if (!s) {
            fail(err.msg);
            rc = EXIT_BAD_INPUT;
        } else if (schedule_validate(s, &err) < 0) {
            /* A schedule no launcher would send (inputs that miss the batch, a worker-less
             * one) is bad input, as tunedeck-worker says it; the simulated run was a
             * failed trial, exit 1, said on standard output only. */
            error_prefix(&err, "standard input");
            fail(err.msg);
            rc = EXIT_BAD_INPUT;
            schedule_free(s);
        } else {
            rc = simcluster_run(sim, s, (uint64_t)seed, print_event, NULL) < 0 ? EXIT_FAILED : EXIT_OK;
            schedule_free(s);
        }
        cJSON_Delete(root);
    }
    fflush(stdout);
    simcluster_free(sim);
    return rc;
}
