/* The shell text of one part of an SSH trial: its process group said, the guard put, the
 * trial's variables exported, the wrapping shell exec'd (launch_ssh_command.h). */
#include <stdio.h>
#include <stdlib.h>

#include "remote/launch/launch_ssh_command.h"
#include "remote/ssh/groupstop.h"
#include "remote/ssh/shquote.h"

char *launch_ssh_command_build(const char *command, const char *machine, int trial,
                               const char *mark)
{
    char trial_text[32];
    snprintf(trial_text, sizeof trial_text, "%d", trial);
    char *b = NULL;
    size_t len = 0;
    if (shquote_append_raw(&b, &len,
                           "printf '" LAUNCH_SSH_PGID_MARK "%s\\n' \"$$\" >&2; " GROUPSTOP_GUARD_SH(
                               "20") "TUNEDECK_MACHINE=") < 0 ||
        shquote_append(&b, &len, machine) < 0 ||
        shquote_append_raw(&b, &len, " TUNEDECK_TRIAL=") < 0 ||
        shquote_append(&b, &len, trial_text) < 0 ||
        shquote_append_raw(&b, &len, " TUNEDECK_RUN_MARK=") < 0 ||
        shquote_append(&b, &len, mark) < 0 ||
        shquote_append_raw(&b, &len, " " GROUPSTOP_CMD_VAR "=") < 0 ||
        shquote_append(&b, &len, command) < 0 ||
        shquote_append_raw(&b, &len,
                           "; export TUNEDECK_MACHINE TUNEDECK_TRIAL "
                           "TUNEDECK_RUN_MARK " GROUPSTOP_CMD_VAR "; exec sh -c ") < 0 ||
        shquote_append(&b, &len, groupstop_trial_sh) < 0 ||
        shquote_append_raw(&b, &len, " tunedeck-trial") < 0) {
        free(b);
        return NULL;
    }
    return b;
}
