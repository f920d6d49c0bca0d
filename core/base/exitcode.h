/* The exit status of every tunedeck command and helper program: one meaning each, stated in
 * tunedeck(1) under EXIT STATUS and checked by tests/integration/cli.sh. Only main-level code
 * (cmd/, tools/) returns them; core never exits. */
#ifndef TUNEDECK_EXITCODE_H
#define TUNEDECK_EXITCODE_H

#include "core/base/error.h"

enum {
    EXIT_OK = 0,
    EXIT_FAILED = 1,    /* the work ran and failed: no trial succeeded, a job failed */
    EXIT_USAGE = 2,     /* unknown command or option, bad option value, options that clash */
    EXIT_BAD_INPUT = 3, /* an input file (inventory, job, workload, journal, schedule) bad */
    EXIT_REMOTE = 4,    /* a host unreachable, refusing the login or its host key */
    /* Interrupted: 128 + the signal (130 SIGINT, 143 SIGTERM), as the shell reports a
     * process a signal ended; a command that catches the signal exits so itself. */
    EXIT_SIGNAL_BASE = 128,
};

/* The status for a failure err describes; `otherwise` when its kind says nothing. */
static inline int exitcode_for(const Error *err, int otherwise)
{
    return err->kind == ERROR_INPUT    ? EXIT_BAD_INPUT
           : err->kind == ERROR_REMOTE ? EXIT_REMOTE
                                       : otherwise;
}

#endif
