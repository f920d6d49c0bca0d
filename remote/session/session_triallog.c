/* The session's trial log (core/journal/triallog.h): the launchers' lines kept per trial, each
 * trial's end, what the console asks of it, and its write error said once. */
#include <stdio.h>
#include <time.h>

#include "remote/session/session.h"
#include "remote/session/session_priv.h"

/* The trial log could not be written: said once, where the session says its other notes. */
static void say_log_error(Session *s)
{
    const char *why = s->trial_log ? triallog_error(s->trial_log) : NULL;
    if (!why || s->log_error_said)
        return;
    s->log_error_said = 1;
    if (s->spec.on_report) {
        char line[ERROR_MSG_MAX + 64];
        snprintf(line, sizeof line, "trial log: %s (the trials' own output is not kept)", why);
        s->spec.on_report(s->spec.report_userdata, line);
    }
}

void session_trial_log_end(Session *s, int trial, const char *outcome)
{
    if (!s->trial_log)
        return;
    triallog_end(s->trial_log, trial, outcome, time(NULL));
    say_log_error(s);
}

void session_trial_log_line(void *userdata, const char *machine, StreamKind stream,
                            const char *line)
{
    Session *s = userdata;
    if (!s->trial_log)
        return;
    triallog_line(s->trial_log, s->log_trial, machine,
                  stream == STREAM_STDERR ? "stderr" : "stdout", line, time(NULL));
    say_log_error(s);
}

const char *session_trial_log(const Session *s)
{
    return s->trial_log && triallog_written(s->trial_log) ? triallog_path(s->trial_log) : NULL;
}

size_t session_trial_log_lines(const Session *s, int trial)
{
    if (!s->trial_log || !s->tuner)
        return 0;
    return triallog_count(s->trial_log, tuner_outside_number(s->tuner, trial));
}

const char *session_trial_log_error(const Session *s)
{
    return s->trial_log ? triallog_error(s->trial_log) : NULL;
}

int session_trial_log_left_out(const Session *s, int trial)
{
    if (!s->trial_log || !s->tuner)
        return 0;
    return triallog_left_out(s->trial_log, tuner_outside_number(s->tuner, trial));
}
