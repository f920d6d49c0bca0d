#include <criterion/criterion.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "core/model/protocol.h"

Test(protocol, parses_an_iteration_with_part_measurements)
{
    TrialEvent ev;
    Error err;
    const char *line =
        "{\"event\": \"iteration\", \"iter\": 3, \"time_s\": 4.41, \"comm_s\": 1.02, "
        "\"machines\": [{\"name\": \"g2-0\", \"compute_s\": 3.2, \"devices\": ["
        "{\"id\": \"gpu0\", \"inputs\": 200, \"time_s\": 3.1}, {\"id\": \"cpu\", \"inputs\": 24, "
        "\"time_s\": 2.9}]}]}";
    cr_assert_eq(protocol_parse_line(line, &ev, &err), 0, "%s", err.msg);
    cr_assert_eq(ev.kind, EVENT_ITERATION);
    cr_assert_eq(ev.iter, 3);
    cr_assert_float_eq(ev.time_s, 4.41, 1e-12);
    cr_assert_float_eq(ev.comm_s, 1.02, 1e-12);
    cr_assert_eq(ev.n_machines, 1);
    cr_assert_str_eq(ev.machines[0].name, "g2-0");
    cr_assert_eq(ev.machines[0].n_devices, 2);
    cr_assert_eq(ev.machines[0].devices[0].inputs, 200);
    cr_assert_float_eq(ev.machines[0].devices[1].time_s, 2.9, 1e-12);
    char *again = protocol_format(&ev);
    TrialEvent ev2;
    cr_assert_eq(protocol_parse_line(again, &ev2, &err), 0, "%s", err.msg);
    char *twice = protocol_format(&ev2);
    cr_assert_str_eq(again, twice, "format(parse(format(x))) is stable");
    free(again);
    free(twice);
    trial_event_clear(&ev);
    trial_event_clear(&ev2);
}

Test(protocol, parses_done_error_progress)
{
    TrialEvent ev;
    Error err;
    cr_assert_eq(protocol_parse_line("{\"event\": \"done\", \"time_s\": 4.38}", &ev, &err), 0);
    cr_assert_eq(ev.kind, EVENT_DONE);
    cr_assert_float_eq(ev.time_s, 4.38, 1e-12);
    trial_event_clear(&ev);
    cr_assert_eq(protocol_parse_line("{\"event\": \"done\"}", &ev, &err), 0);
    cr_assert(ev.time_s < 0, "absent time is negative");
    trial_event_clear(&ev);
    cr_assert_eq(protocol_parse_line("{\"event\":\"error\",\"message\":\"out of GPU memory\"}",
                                     &ev, &err),
                 0);
    cr_assert_eq(ev.kind, EVENT_ERROR);
    cr_assert_str_eq(ev.text, "out of GPU memory");
    trial_event_clear(&ev);
    cr_assert_eq(protocol_parse_line("{\"event\": \"progress\", \"step\": 1200, \"epoch\": 12.5, "
                                     "\"loss\": 0.83, \"examples_per_s\": 1152}",
                                     &ev, &err),
                 0, "%s", err.msg);
    cr_assert_eq(ev.kind, EVENT_PROGRESS);
    cr_assert_eq(ev.step, 1200);
    cr_assert_float_eq(ev.epoch, 12.5, 1e-12);
    cr_assert_float_eq(ev.loss, 0.83, 1e-12);
    char *s = protocol_format(&ev);
    cr_assert(strstr(s, "\"examples_per_s\":1152"), "%s", s);
    free(s);
    trial_event_clear(&ev);
}

Test(protocol, non_json_lines_are_log_text)
{
    const char *lines[] = {"Epoch 1/10", "", "[1, 2, 3]", "{not json", "  42", "\"quoted\""};
    for (size_t i = 0; i < sizeof lines / sizeof *lines; i++) {
        TrialEvent ev;
        Error err;
        cr_assert_eq(protocol_parse_line(lines[i], &ev, &err), 0);
        cr_assert_eq(ev.kind, EVENT_LOG, "'%s' is log text", lines[i]);
        cr_assert_str_eq(ev.text, lines[i]);
        trial_event_clear(&ev);
    }
}

static void rejects(const char *line, const char *needle)
{
    TrialEvent ev;
    Error err = {0};
    cr_assert_eq(protocol_parse_line(line, &ev, &err), -1, "expected rejection of %s", line);
    cr_assert(strstr(err.msg, needle), "'%s' lacks '%s'", err.msg, needle);
}

Test(protocol, rejects_bad_events_with_the_field)
{
    rejects("{\"time_s\": 1}", "field 'event'");
    rejects("{\"event\": \"teleport\"}", "found \"teleport\"");
    rejects("{\"event\": \"iteration\", \"time_s\": 1}", "field 'iter'");
    rejects("{\"event\": \"iteration\", \"iter\": 1}", "field 'time_s'");
    rejects("{\"event\": \"iteration\", \"iter\": 1, \"time_s\": -2}", "field 'time_s'");
    rejects("{\"event\": \"iteration\", \"iter\": 1, \"time_s\": 1, \"machines\": 5}",
            "field 'machines'");
    rejects("{\"event\": \"iteration\", \"iter\": 1, \"time_s\": 1, \"machines\": [{\"name\": "
            "\"a\", \"devices\": [{\"id\": \"cpu\"}]}]}",
            "field 'time_s'");
    rejects("{\"event\": \"done\", \"time_s\": \"fast\"}", "found a string");
    rejects("{\"event\": \"error\"}", "field 'message'");
    rejects("{\"event\": \"progress\", \"loss\": 1}", "field 'step'");
}

/* A machine's name or a device's id that is not UTF-8 names nothing in the schedule, and
 * printed back (jsonprint's \uFFFD, three bytes each) it outgrew its field: the fuzzer's "what
 * we print, we must read" found a name of 100 0xFF bytes. Refused, naming the field. */
Test(protocol, a_name_or_id_that_is_not_utf8_is_refused)
{
    rejects("{\"event\": \"iteration\", \"iter\": 1, \"time_s\": 1, \"machines\": [{\"name\": "
            "\"c4\xff" "x\"}]}",
            "machines[0]: field 'name': expected UTF-8 text, found a byte that is not UTF-8 at byte 3");
    rejects("{\"event\": \"iteration\", \"iter\": 1, \"time_s\": 1, \"machines\": [{\"name\": "
            "\"a\", \"devices\": [{\"id\": \"gpu\xe2\x82\", \"time_s\": 1}]}]}",
            "machines[0].devices[0]: field 'id': expected UTF-8 text");
    TrialEvent ev;
    Error err;
    cr_assert_eq(protocol_parse_line("{\"event\": \"iteration\", \"iter\": 1, \"time_s\": 1, "
                                     "\"machines\": [{\"name\": \"\xe7\xaf\x80\xe7\x82\xb9\"}]}",
                                     &ev, &err),
                 0, "%s", err.msg);
    trial_event_clear(&ev);
}

/* Regression: cJSON read the first copy of a key, so {"event":"done","time_s":1,"time_s":9}
 * was a done of 1 s; which copy the trial meant cannot be known: the line is refused. */
Test(protocol, a_key_twice_is_a_bad_protocol_line_naming_the_path)
{
    rejects("{\"event\": \"done\", \"time_s\": 1, \"time_s\": 9}",
            "event line: key \"time_s\" appears twice; expected each key once per object");
    rejects("{\"event\": \"iteration\", \"iter\": 1, \"time_s\": 1, \"machines\": [{\"name\": "
            "\"a\", \"devices\": [{\"id\": \"cpu\", \"time_s\": 1}, {\"id\": \"gpu0\", "
            "\"time_s\": 1, \"id\": \"gpu1\"}]}]}",
            "event line: machines[0].devices[1]: key \"id\" appears twice");
    /* the line with Python's NaN takes the other way through the parser: checked too */
    rejects("{\"event\": \"progress\", \"step\": 1, \"loss\": NaN, \"step\": 2}",
            "event line: key \"step\" appears twice");
    /* a key in two objects, or in two cases, is no duplicate */
    TrialEvent ev;
    Error err = {0};
    cr_assert_eq(protocol_parse_line("{\"event\": \"iteration\", \"iter\": 1, \"time_s\": 2, "
                                     "\"Time_s\": 3, \"machines\": [{\"name\": \"a\", "
                                     "\"devices\": [{\"id\": \"cpu\", \"time_s\": 1}]}]}",
                                     &ev, &err),
                 0, "%s", err.msg);
    cr_assert_float_eq(ev.time_s, 2, 1e-12);
    trial_event_clear(&ev);
}

Test(protocol, a_zero_or_subnormal_time_is_refused)
{
    TrialEvent ev;
    Error err = {0};
    const char *bad[] = {"{\"event\": \"done\", \"time_s\": 0}",
                         "{\"event\": \"done\", \"time_s\": 4.9e-324}",
                         "{\"event\": \"iteration\", \"iter\": 1, \"time_s\": 1e-300}",
                         "{\"event\": \"iteration\", \"iter\": 1, \"time_s\": -1}"};
    for (size_t i = 0; i < sizeof bad / sizeof *bad; i++) {
        cr_assert_eq(protocol_parse_line(bad[i], &ev, &err), -1, "accepted %s", bad[i]);
        cr_assert(strstr(err.msg, "field 'time_s': expected a number in [1e-06,"), "%s", err.msg);
    }
    cr_assert_eq(protocol_parse_line("{\"event\": \"done\", \"time_s\": 0.0005}", &ev, &err), 0,
                 "%s", err.msg);
}

Test(protocol, a_number_too_large_says_so)
{
    TrialEvent ev;
    Error err = {0};
    cr_assert_eq(protocol_parse_line("{\"event\": \"done\", \"time_s\": 1e999}", &ev, &err), -1);
    cr_assert(strstr(err.msg, "found one too large to represent"), "%s", err.msg);
    cr_assert_eq(protocol_parse_line("{\"event\": \"iteration\", \"iter\": 1e999, \"time_s\": 1}",
                                     &ev, &err),
                 -1);
    cr_assert(strstr(err.msg, "field 'iter': expected an integer in [0, 100000000], found one too "
                              "large to represent"),
              "%s", err.msg);
}

/* A loss may be negative (a negative log-likelihood of a continuous distribution, an ELBO):
 * -3.2 is a loss, not "none"; a line without "loss" has none, told apart by NAN, not a sign. */
Test(protocol, a_negative_loss_is_a_loss_and_an_absent_one_is_nan)
{
    TrialEvent ev;
    Error err = {0};
    cr_assert_eq(protocol_parse_line("{\"event\": \"progress\", \"step\": 7, \"loss\": -3.2}", &ev,
                                     &err),
                 0, "%s", err.msg);
    cr_assert_float_eq(ev.loss, -3.2, 1e-12);
    char *s = protocol_format(&ev);
    cr_assert(strstr(s, "\"loss\":-3.2"), "%s", s);
    free(s);
    trial_event_clear(&ev);
    cr_assert_eq(protocol_parse_line("{\"event\": \"progress\", \"step\": 7, \"loss\": -1}", &ev,
                                     &err),
                 0, "%s", err.msg);
    cr_assert_float_eq(ev.loss, -1, 1e-12);
    s = protocol_format(&ev);
    cr_assert(strstr(s, "\"loss\":-1"), "%s", s);
    free(s);
    trial_event_clear(&ev);
    cr_assert_eq(protocol_parse_line("{\"event\": \"progress\", \"step\": 7}", &ev, &err), 0, "%s",
                 err.msg);
    cr_assert(isnan(ev.loss));
    s = protocol_format(&ev);
    cr_assert(!strstr(s, "loss"), "%s", s);
    free(s);
    trial_event_clear(&ev);
    rejects("{\"event\": \"progress\", \"step\": 7, \"loss\": 1e999}", "field 'loss'");
    rejects("{\"event\": \"progress\", \"step\": 7, \"loss\": -1e999}", "field 'loss'");
    rejects("{\"event\": \"progress\", \"step\": 7, \"loss\": \"nan\"}", "field 'loss'");
}

/* Regression: Python's json.dumps({"loss": float("nan")}) writes a bare NaN, and such a line
 * was taken as log text, so a diverging run's loss went unseen. These are the lines
 * tunedeck_trial.progress writes (tests/tools/python). */
Test(protocol, pythons_nan_and_infinity_are_a_protocol_line_refused_by_field)
{
    rejects("{\"event\": \"progress\", \"step\": 7, \"loss\": NaN}",
            "progress: field 'loss': expected a number in [-1e+300, 1e+300], found NaN "
            "(training diverged?)");
    rejects("{\"event\": \"progress\", \"step\": 7, \"loss\": Infinity}",
            "found one too large to represent (Infinity) (training diverged?)");
    rejects("{\"event\": \"progress\", \"step\": 7, \"loss\": -Infinity}",
            "found one too large to represent (-Infinity) (training diverged?)");
    rejects("{\"event\": \"iteration\", \"iter\": 1, \"time_s\": NaN}", "field 'time_s'");
    rejects("{\"event\": \"iteration\", \"iter\": 1, \"time_s\": 1, \"machines\": [{\"name\": "
            "\"a\", \"devices\": [{\"id\": \"gpu0\", \"time_s\": NaN}]}]}",
            "machines[0].devices[0]: field 'time_s': expected a number in [0, 1e+09], found NaN");
    rejects("{\"event\": \"done\", \"time_s\": NaN}", "done: field 'time_s'");
}

Test(protocol, nan_words_inside_strings_or_elsewhere_are_left_alone)
{
    TrialEvent ev;
    Error err = {0};
    /* An unknown field may be NaN, as it may be 1e999: fields are read by name. */
    cr_assert_eq(protocol_parse_line("{\"event\": \"progress\", \"step\": 7, \"loss\": 0.5, "
                                     "\"grad_norm\": NaN, \"note\": \"NaN, Infinity\"}",
                                     &ev, &err),
                 0, "%s", err.msg);
    cr_assert_eq(ev.kind, EVENT_PROGRESS);
    cr_assert_float_eq(ev.loss, 0.5, 1e-12);
    trial_event_clear(&ev);
    /* Only where a value starts, and only the three words: the rest stays log text. */
    const char *logs[] = {"{loss: NaN}", "{\"loss\": NaNx}", "{\"loss\": nan}",
                          "{\"loss\": \"x\" NaN}", "{\"event\": \"progress\", \"step\": 1, NaN}",
                          "{\"message\": \"a \\\" NaN\"", "{\"loss\": +Infinity}",
                          "{\"event\": \"done\", \"time_s\": 1, NaN: 2}"};
    for (size_t i = 0; i < sizeof logs / sizeof *logs; i++) {
        cr_assert_eq(protocol_parse_line(logs[i], &ev, &err), 0, "%s: %s", logs[i], err.msg);
        cr_assert_eq(ev.kind, EVENT_LOG, "%s", logs[i]);
        cr_assert_str_eq(ev.text, logs[i]);
        trial_event_clear(&ev);
    }
    /* An error event's message that merely says NaN is kept as it is. */
    cr_assert_eq(protocol_parse_line("{\"event\": \"error\", \"message\": \"loss NaN\", \"x\": NaN}",
                                     &ev, &err),
                 0, "%s", err.msg);
    cr_assert_eq(ev.kind, EVENT_ERROR);
    cr_assert_str_eq(ev.text, "loss NaN");
    trial_event_clear(&ev);
}

/* Text after the object was ignored: `{"event": "done", "time_s": 2} {"time_s": 9}` (two lines
 * run together, or a stray write) was read as a done of 2 s. It is a protocol error now;
 * trailing white space (a CR of a CRLF line too) is still nothing. */
Test(protocol, text_after_the_object_is_a_protocol_error_not_ignored)
{
    TrialEvent ev;
    Error err;
    const char *bad[] = {"{\"event\": \"done\", \"time_s\": 2} garbage",
                         "{\"event\": \"done\", \"time_s\": 2}{\"event\": \"done\", \"time_s\": 9}",
                         "{\"event\": \"progress\", \"step\": 1, \"loss\": NaN} x"};
    for (size_t i = 0; i < sizeof bad / sizeof *bad; i++) {
        cr_assert_eq(protocol_parse_line(bad[i], &ev, &err), -1, "%s", bad[i]);
        cr_assert(strstr(err.msg, "event line: expected one JSON object, found more text after it"),
                  "%s", err.msg);
    }
    cr_assert_eq(protocol_parse_line("{\"event\": \"done\", \"time_s\": 2} \t\r", &ev, &err), 0,
                 "%s", err.msg);
    cr_assert_eq(ev.kind, EVENT_DONE);
    cr_assert_float_eq(ev.time_s, 2, 0);
    trial_event_clear(&ev);
}

/* An error event's message became the trial's reason as the trial sent it: a byte that is not
 * UTF-8 made `tune --json` output no strict JSON reader takes, an escape reached terminals. */
Test(protocol, an_error_message_is_kept_as_safe_utf8_text)
{
    TrialEvent ev;
    Error err;
    cr_assert_eq(protocol_parse_line("{\"event\": \"error\", \"message\": \"oom \xff on \\u001b[2J"
                                     "g\xc3\xa9\"}",
                                     &ev, &err),
                 0, "%s", err.msg);
    cr_assert_eq(ev.kind, EVENT_ERROR);
    cr_assert_str_eq(ev.text, "oom \\xFF on ^[[2Jg\xc3\xa9");
    trial_event_clear(&ev);
}

/* An error message over 1023 characters (torch's load_state_dict lists every missing key) was
 * refused as too long: the line became a bad line, so a trial that said it failed and exited
 * 0 was ok, its note "first bad line: error: field 'message'...". It is the error, whole. */
Test(protocol, a_long_error_message_is_the_error_not_a_bad_line)
{
    char line[8192], msg[4001];
    memset(msg, 'k', sizeof msg - 1);
    msg[sizeof msg - 1] = 0;
    snprintf(line, sizeof line, "{\"event\": \"error\", \"message\": \"%s\"}", msg);
    TrialEvent ev;
    Error err;
    cr_assert_eq(protocol_parse_line(line, &ev, &err), 0, "%s", err.msg);
    cr_assert_eq(ev.kind, EVENT_ERROR);
    cr_assert_str_eq(ev.text, msg);
    trial_event_clear(&ev);
    cr_assert_eq(protocol_parse_line("{\"event\": \"error\", \"message\": 3}", &ev, &err), -1);
    cr_assert(strstr(err.msg, "error: field 'message': expected a string, found a number"), "%s",
              err.msg);
    cr_assert_eq(protocol_parse_line("{\"event\": \"error\"}", &ev, &err), -1);
    cr_assert(strstr(err.msg, "error: field 'message' is missing"), "%s", err.msg);
}

/* A fractional step ("step": 1.5) was taken as step 1 with nothing said. */
Test(protocol, a_fractional_progress_step_is_refused)
{
    TrialEvent ev;
    Error err;
    cr_assert_eq(protocol_parse_line("{\"event\": \"progress\", \"step\": 1.5}", &ev, &err), -1);
    cr_assert(strstr(err.msg, "progress: field 'step': expected an integer, found 1.5"), "%s",
              err.msg);
    cr_assert_eq(protocol_parse_line("{\"event\": \"progress\", \"step\": 2.0}", &ev, &err), 0,
                 "%s", err.msg);
    cr_assert_eq(ev.step, 2);
    trial_event_clear(&ev);
}

/* A NUL byte ended the C string there: `{"event":"done","time_s":2}` NUL `garbage` was read as
 * the done event, the rest dropped unseen. */
Test(protocol, a_line_with_a_nul_byte_is_refused_naming_its_position)
{
    static const char line[] = "{\"event\":\"done\",\"time_s\":2}\0{\"x\":1}";
    TrialEvent ev;
    Error err;
    cr_assert_eq(protocol_parse_line_n(line, sizeof line - 1, &ev, &err), -1);
    cr_assert_str_eq(err.msg, "event line: expected JSON text, found a NUL byte at byte 28");
    /* log text with one is log text, read up to it */
    static const char log[] = "loss went down\0 more";
    cr_assert_eq(protocol_parse_line_n(log, sizeof log - 1, &ev, &err), 0);
    cr_assert_eq(ev.kind, EVENT_LOG);
    cr_assert_str_eq(ev.text, "loss went down");
    trial_event_clear(&ev);
    /* without a NUL, the same as protocol_parse_line */
    cr_assert_eq(protocol_parse_line_n(line, strlen(line), &ev, &err), 0, "%s", err.msg);
    cr_assert_eq(ev.kind, EVENT_DONE);
    trial_event_clear(&ev);
}

/* Regression: a trial killed while writing `{"event": "done", "time_s": 3.2` left a line that
 * was log text, so its objective became the mean iteration time with nothing said. A line
 * that opens as an event and ends before its object closes is a protocol error; one merely
 * malformed, or that does not open as an event, stays log text. */
Test(protocol, an_event_line_cut_short_is_refused_not_log_text)
{
    const char *cut[] = {
        "{\"event\": \"done\", \"time_s\": 3.2",
        "  {\"event\": \"iteration\", \"iter\": 2, \"machines\": [{\"name\": \"a\"",
        "{\"event\": \"error\", \"message\": \"out of mem",
        "{ \"event\": \"progress\", \"step\": 3, \"loss\": NaN"};
    for (size_t i = 0; i < sizeof cut / sizeof *cut; i++) {
        char want[96];
        snprintf(want, sizeof want,
                 "event line: expected one JSON object, found one cut short after %zu bytes",
                 strlen(cut[i]));
        rejects(cut[i], want);
    }
    const char *logs[] = {"{\"event\": \"done\", \"time_s\": 1,}", "{\"note\": \"cut",
                          "{\"event\": \"done\" \"time_s\": 1}", "{\"eve"};
    for (size_t i = 0; i < sizeof logs / sizeof *logs; i++) {
        TrialEvent ev;
        Error err;
        cr_assert_eq(protocol_parse_line(logs[i], &ev, &err), 0, "%s: %s", logs[i], err.msg);
        cr_assert_eq(ev.kind, EVENT_LOG, "'%s' is log text", logs[i]);
        trial_event_clear(&ev);
    }
}
