#include <cJSON.h>
#include <criterion/criterion.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "core/journal/journal_trial.h"
#include "core/sim/simcluster.h"
#include "tests/support/fixtures.h"

static SimCluster *sim;
static Schedule *sched;

static void setup(void)
{
    sim = fixture_sim("B:googlenet");
    const Cluster *c = simcluster_cluster(sim);
    sched = schedule_new(c, simcluster_job(sim));
    sched->worker[0] = sched->ps[0] = 1;
    sched->inputs[0] = simcluster_job(sim)->batch;
}

static void teardown(void)
{
    schedule_free(sched);
    simcluster_free(sim);
}

TestSuite(journal_trial, .init = setup, .fini = teardown);

/* The lines of a journal as text, parsed back into a log. */
static void log_of(JournalLog *log, cJSON **events, size_t n)
{
    char text[1 << 16] = "";
    for (size_t i = 0; i < n; i++) {
        char *line = cJSON_PrintUnformatted(events[i]);
        strcat(text, line);
        strcat(text, "\n");
        free(line);
        cJSON_Delete(events[i]);
    }
    Error err;
    cr_assert_eq(journal_parse(text, strlen(text), "j", log, &err), 0);
}

Test(journal_trial, an_outcome_round_trips_with_unknowns_as_null)
{
    Observation *o = observation_new(sched);
    o->status = TRIAL_OK;
    o->time_s = 1.0 / 3.0;
    o->comm_s = -1;
    o->device_time_s[0] = 0.125;
    o->machine_time_s[1] = 2.5;
    o->iterations_seen = 20;
    cJSON *j = journal_finished_json(4, o);
    cr_assert(cJSON_IsNull(cJSON_GetObjectItem(j, "comm_s")));
    char *text = cJSON_PrintUnformatted(j);
    cJSON *back = cJSON_Parse(text);
    Error err;
    Observation *r = journal_finished_parse(back, sched, "j:1", &err);
    cr_assert_not_null(r, "%s", err.msg);
    cr_assert_eq(r->time_s, o->time_s, "times must round-trip exactly");
    cr_assert_eq(r->comm_s, -1);
    cr_assert_eq(r->device_time_s[0], 0.125);
    cr_assert_eq(r->device_time_s[1], -1);
    cr_assert_eq(r->machine_time_s[1], 2.5);
    cr_assert_eq(r->iterations_seen, 20);
    observation_free(r);
    observation_free(o);
    free(text);
    cJSON_Delete(j);
    cJSON_Delete(back);
}

Test(journal_trial, an_outcome_with_the_wrong_device_count_is_refused)
{
    cJSON *j = cJSON_Parse("{\"event\":\"finished\",\"trial\":1,\"status\":\"ok\",\"time_s\":1,"
                           "\"device_time_s\":[1],\"machine_time_s\":[]}");
    Error err;
    cr_assert_null(journal_finished_parse(j, sched, "j:3: finished", &err));
    cr_assert(strstr(err.msg, "j:3: finished: field 'device_time_s': expected"), "%s", err.msg);
    cJSON_Delete(j);
}

/* A finished line as a resume reads it: exact numbers are raw until printed and read back. */
static cJSON *finished_read_back(const Observation *o)
{
    cJSON *line = journal_finished_json(1, o);
    char *text = cJSON_PrintUnformatted(line);
    cJSON *back = cJSON_Parse(text);
    free(text), cJSON_Delete(line);
    return back;
}

/* An ok trial's time of 0 (an edited or damaged line) was read back as measured and became
 * the session's best, "0.000 s per iteration"; protocol v1 refuses it from a trial. */
Test(journal_trial, an_ok_or_pruned_outcome_faster_than_a_microsecond_is_refused)
{
    TrialStatus statuses[] = {TRIAL_OK, TRIAL_PRUNED};
    for (size_t k = 0; k < 2; k++) {
        Observation *o = observation_new(sched);
        o->status = statuses[k];
        o->time_s = 0;
        cJSON *j = finished_read_back(o);
        Error err;
        cr_assert_null(journal_finished_parse(j, sched, "j:9: finished", &err));
        cr_assert(strstr(err.msg, "j:9: finished: field 'time_s': expected a time of at least "
                                  "1e-06 s for a"),
                  "%s", err.msg);
        cJSON_Delete(j);
        o->time_s = 1e-6; /* the least a trial may report is kept */
        j = finished_read_back(o);
        Observation *r = journal_finished_parse(j, sched, "j:9: finished", &err);
        cr_assert_not_null(r, "%s", err.msg);
        observation_free(r), observation_free(o), cJSON_Delete(j);
    }
}

Test(journal_trial, trials_decode_with_running_ones_left_open)
{
    Suggestion sg = {.schedule = sched, .has_prediction = 1, .mean_s = 2, .p10_s = 1, .p90_s = 3};
    Observation *o = observation_new(sched);
    o->status = TRIAL_FAILED;
    snprintf(o->reason, sizeof o->reason, "boom");
    cJSON *ev[] = {journal_suggested_json(1, 0, 0, &sg, 1.5), journal_started_json(1),
                   journal_finished_json(1, o), journal_suggested_json(2, 1, 0, &sg, 0),
                   journal_started_json(2)};
    JournalLog log;
    log_of(&log, ev, 5);
    JournalTrials t;
    Error err;
    cr_assert_eq(journal_trials_decode(&log, simcluster_cluster(sim), "j", &t, &err), 0);
    cr_assert_eq(log.n_problems, 0, "%s", log.n_problems ? log.problems[0] : "");
    cr_assert_eq(t.n, 2);
    cr_assert_eq(t.trials[0].obs->status, TRIAL_FAILED);
    cr_assert_str_eq(t.trials[0].obs->reason, "boom");
    cr_assert_eq(t.trials[0].suggestion.mean_s, 2);
    cr_assert(schedule_equal(t.trials[0].suggestion.schedule, sched));
    cr_assert_eq(t.trials[1].overridden, 1);
    cr_assert_null(t.trials[1].obs);
    cr_assert_eq(t.trials[1].started, 1);
    journal_trials_clear(&t);
    journal_log_clear(&log);
    observation_free(o);
}

Test(journal_trial, events_that_do_not_fit_are_reported_and_skipped)
{
    Suggestion sg = {.schedule = sched};
    Observation *o = observation_new(sched);
    o->status = TRIAL_CANCELLED;
    cJSON *ev[] = {journal_suggested_json(1, 0, 0, &sg, 0), journal_suggested_json(1, 0, 0, &sg, 0),
                   journal_finished_json(1, o), journal_finished_json(1, o),
                   journal_finished_json(9, o)};
    JournalLog log;
    log_of(&log, ev, 5);
    JournalTrials t;
    Error err;
    cr_assert_eq(journal_trials_decode(&log, simcluster_cluster(sim), "j", &t, &err), 0);
    cr_assert_eq(t.n, 1);
    cr_assert_eq(log.n_problems, 3);
    cr_assert(strstr(log.problems[0], "j:2:") && strstr(log.problems[0], "expected trial 2"), "%s",
              log.problems[0]);
    cr_assert(strstr(log.problems[1], "j:4:") && strstr(log.problems[1], "already has"), "%s",
              log.problems[1]);
    cr_assert(strstr(log.problems[2], "j:5:") && strstr(log.problems[2], "never suggested"), "%s",
              log.problems[2]);
    journal_trials_clear(&t);
    journal_log_clear(&log);
    observation_free(o);
}

/* Trial 2's suggested line was damaged (skipped as corrupted): its started and finished
 * lines have no trial, but trial 3's measurement and trial 4's start are kept, numbered
 * next, found by their numbers in the file. Before, every trial after the gap was skipped
 * ("expected trial 2 next") and run again. */
Test(journal_trial, trials_after_a_lost_suggestion_are_kept)
{
    Suggestion sg = {.schedule = sched};
    Observation *o = observation_new(sched);
    o->status = TRIAL_OK;
    o->time_s = 3.5;
    cJSON *ev[] = {journal_suggested_json(1, 0, 0, &sg, 0),
                   journal_finished_json(1, o),
                   journal_started_json(2),
                   journal_finished_json(2, o),
                   journal_suggested_json(3, 0, 0, &sg, 0),
                   journal_started_json(3),
                   journal_finished_json(3, o),
                   journal_suggested_json(4, 0, 0, &sg, 0),
                   journal_started_json(4)};
    JournalLog log;
    log_of(&log, ev, 9);
    JournalTrials t;
    Error err;
    cr_assert_eq(journal_trials_count(&log, simcluster_cluster(sim)), 3,
                 "the budget check counts what is replayed");
    cr_assert_eq(journal_trials_decode(&log, simcluster_cluster(sim), "j", &t, &err), 0);
    cr_assert_eq(t.n, 3);
    cr_assert_eq(t.trials[1].trial, 2);
    cr_assert_eq(t.trials[1].journal_trial, 3);
    cr_assert_not_null(t.trials[1].obs, "trial 3's measurement was lost");
    cr_assert_float_eq(t.trials[1].obs->time_s, 3.5, 1e-12);
    cr_assert_eq(t.trials[2].journal_trial, 4);
    cr_assert(t.trials[2].started && !t.trials[2].obs);
    cr_assert_eq(log.n_problems, 3);
    cr_assert(strstr(log.problems[0], "j:3:") && strstr(log.problems[0], "never suggested"), "%s",
              log.problems[0]);
    cr_assert(strstr(log.problems[2], "j:5:") && strstr(log.problems[2], "kept as trial 2"), "%s",
              log.problems[2]);
    journal_trials_clear(&t);
    journal_log_clear(&log);
    observation_free(o);
}

/* The count a resume checks its budget against follows the decoder's numbering: a gap is
 * kept, a repeated, stray or unnumbered suggestion is not (before, it counted only the
 * unbroken run 1, 2, ... and undercounted after a gap). */
Test(journal_trial, the_count_of_trials_follows_the_decoders_numbering)
{
    Suggestion sg = {.schedule = sched};
    cJSON *unnumbered = journal_suggested_json(9, 0, 0, &sg, 0);
    cJSON_DeleteItemFromObject(unnumbered, "trial");
    cJSON *ev[] = {journal_suggested_json(1, 0, 0, &sg, 0),
                   journal_suggested_json(1, 0, 0, &sg, 0),
                   journal_suggested_json(4, 0, 0, &sg, 0),
                   journal_suggested_json(2, 0, 0, &sg, 0),
                   unnumbered,
                   journal_suggested_json(5, 0, 0, &sg, 0),
                   journal_started_json(7)};
    JournalLog log;
    log_of(&log, ev, 7);
    cr_assert_eq(journal_trials_count(&log, simcluster_cluster(sim)), 3);
    JournalTrials t;
    Error err;
    cr_assert_eq(journal_trials_decode(&log, simcluster_cluster(sim), "j", &t, &err), 0);
    cr_assert_eq(t.n, journal_trials_count(&log, simcluster_cluster(sim)));
    cr_assert_eq(t.trials[2].journal_trial, 5);
    journal_trials_clear(&t);
    journal_log_clear(&log);
}

/* A suggested line whose schedule the decoder refuses (a damaged or edited line). */
static cJSON *refused_suggestion(int trial, const Suggestion *sg)
{
    cJSON *j = journal_suggested_json(trial, 0, 0, sg, 0);
    cJSON_ReplaceItemInObjectCaseSensitive(j, "schedule", cJSON_CreateNumber(5));
    return j;
}

/* Regression: the count a resume's budget starts from went by the numbers alone, a refused
 * line included. Out of order (trial 4's line, refused, before trials 2 and 3's, as a crash
 * between writes can leave them) it made 2 and 3 strays: 2 counted where the decoder keeps 3,
 * and a budget of 2 started the session past its end. In order, the refused trial 2 was
 * counted where the decoder keeps 2 of 3: the resume ran one trial past its budget. */
Test(journal_trial, the_count_of_trials_is_the_decoders_with_a_refused_line_out_of_order)
{
    Suggestion sg = {.schedule = sched};
    Observation *o = observation_new(sched);
    o->status = TRIAL_OK;
    o->time_s = 2.5;
    cJSON *out_of_order[] = {journal_suggested_json(1, 0, 0, &sg, 0),
                             journal_finished_json(1, o),
                             refused_suggestion(4, &sg),
                             journal_suggested_json(2, 0, 0, &sg, 0),
                             journal_finished_json(2, o),
                             journal_suggested_json(3, 0, 0, &sg, 0),
                             journal_started_json(3)};
    cJSON *in_order[] = {journal_suggested_json(1, 0, 0, &sg, 0), refused_suggestion(2, &sg),
                         journal_suggested_json(3, 0, 0, &sg, 0)};
    struct {
        cJSON **ev;
        size_t n, kept;
    } cases[] = {{out_of_order, 7, 3}, {in_order, 3, 2}};
    for (size_t k = 0; k < 2; k++) {
        JournalLog log;
        log_of(&log, cases[k].ev, cases[k].n);
        JournalTrials t;
        Error err;
        cr_assert_eq(journal_trials_decode(&log, simcluster_cluster(sim), "j", &t, &err), 0);
        cr_assert_eq(t.n, cases[k].kept, "case %zu: the decoder keeps %zu", k, t.n);
        cr_assert_eq(journal_trials_count(&log, simcluster_cluster(sim)), t.n,
                     "case %zu: counted %zu, kept %zu", k,
                     journal_trials_count(&log, simcluster_cluster(sim)), t.n);
        journal_trials_clear(&t);
        journal_log_clear(&log);
    }
    observation_free(o);
}

/* The one reading of a finished line that `tunedeck sessions` shares: what
 * journal_finished_parse refuses (a time under a microsecond, a per-device array of the wrong
 * length or with a value that is no time), journal_finished_kept refuses in the same words;
 * what it takes, the same status and time. */
Test(journal_trial, a_finished_line_is_kept_by_both_readings_alike)
{
    const Cluster *c = simcluster_cluster(sim);
    Observation *o = observation_new(sched);
    o->status = TRIAL_OK;
    o->time_s = 0.5;
    for (int k = 0; k < 6; k++) {
        cJSON *j = finished_read_back(o);
        cJSON *d = cJSON_GetObjectItemCaseSensitive(j, "device_time_s");
        cJSON *m = cJSON_GetObjectItemCaseSensitive(j, "machine_time_s");
        if (k == 0)
            cJSON_ReplaceItemInObjectCaseSensitive(j, "time_s", cJSON_CreateNumber(5e-7));
        if (k == 1) {
            cJSON_ReplaceItemInObjectCaseSensitive(j, "status", cJSON_CreateString("pruned"));
            cJSON_ReplaceItemInObjectCaseSensitive(j, "time_s", cJSON_CreateNumber(0));
        }
        if (k == 2)
            cJSON_DeleteItemFromArray(d, 0);
        if (k == 3)
            cJSON_ReplaceItemInArray(d, 0, cJSON_CreateNumber(-1));
        if (k == 4)
            cJSON_ReplaceItemInArray(m, 0, cJSON_CreateString("x"));
        Error e1, e2;
        TrialStatus status;
        double t;
        Observation *r = journal_finished_parse(j, sched, "j:4: finished", &e1);
        int kept = journal_finished_kept(j, c, "j:4: finished", &status, &t, &e2);
        if (k < 5) {
            cr_assert_null(r, "case %d", k);
            cr_assert_eq(kept, -1, "case %d", k);
            cr_assert_str_eq(e1.msg, e2.msg);
        } else {
            cr_assert_not_null(r, "%s", e1.msg);
            cr_assert_eq(kept, 0, "%s", e2.msg);
            cr_assert(status == r->status && t == r->time_s);
        }
        observation_free(r);
        cJSON_Delete(j);
    }
    observation_free(o);
}

/* cJSON alone prints 15 digits when they are within an epsilon: 1 ulp off. */
Test(journal_trial, times_round_trip_bit_for_bit)
{
    Observation *o = observation_new(sched);
    o->status = TRIAL_OK;
    o->time_s = 5.304874556585086;
    o->comm_s = nextafter(0.1, 1.0);
    for (size_t i = 0; i < simcluster_cluster(sim)->n_devices; i++)
        o->device_time_s[i] = nextafter(1.0 / (double)(i + 3), 0.0);
    cJSON *j = journal_finished_json(1, o);
    char *text = cJSON_PrintUnformatted(j);
    cJSON *back = cJSON_Parse(text);
    Error err;
    Observation *r = journal_finished_parse(back, sched, "j", &err);
    cr_assert_not_null(r, "%s", err.msg);
    cr_assert(r->time_s == o->time_s && r->comm_s == o->comm_s);
    for (size_t i = 0; i < simcluster_cluster(sim)->n_devices; i++)
        cr_assert(r->device_time_s[i] == o->device_time_s[i], "device %zu", i);
    observation_free(r);
    observation_free(o);
    cJSON_Delete(back);
    cJSON_Delete(j);
    free(text);
}

/* A line with a key twice is damaged like a line cut in half (tunedeck writes none): skipped
 * and reported with its line, its path and its key; the measured trials around it are kept.
 * Before, cJSON read trial 2's schedule from the first copy of the key without a word. */
Test(journal_trial, a_line_with_a_key_twice_is_skipped_and_the_measured_trials_kept)
{
    Suggestion sg = {.schedule = sched};
    Observation *o = observation_new(sched);
    o->status = TRIAL_OK;
    o->time_s = 3.5;
    cJSON *ev[] = {journal_suggested_json(1, 0, 0, &sg, 0), journal_finished_json(1, o),
                   journal_suggested_json(2, 0, 0, &sg, 0), journal_finished_json(2, o),
                   journal_suggested_json(3, 0, 0, &sg, 0), journal_finished_json(3, o)};
    char text[1 << 16] = "";
    for (size_t i = 0; i < 6; i++) {
        char *line = cJSON_PrintUnformatted(ev[i]);
        if (i == 2) { /* trial 2's first device given its inputs twice */
            char *at = strstr(line, "\"inputs\":");
            cr_assert_not_null(at, "%s", line);
            strncat(text, line, (size_t)(at - line));
            strcat(text, "\"inputs\":0,");
            strcat(text, at);
        } else {
            strcat(text, line);
        }
        strcat(text, "\n");
        free(line);
        cJSON_Delete(ev[i]);
    }
    JournalLog log;
    Error err;
    cr_assert_eq(journal_parse(text, strlen(text), "j", &log, &err), 0);
    cr_assert_eq(log.n, 5);
    cr_assert_eq(log.n_problems, 1);
    cr_assert(strstr(log.problems[0], "j:3: corrupted line skipped: schedule.machines[0]."
                                      "devices[0]: key \"inputs\" appears twice; expected each "
                                      "key once per object"),
              "%s", log.problems[0]);
    cr_assert_eq(log.valid_bytes, (long)strlen(text), "the damaged line stays in the file");
    JournalTrials t;
    cr_assert_eq(journal_trials_decode(&log, simcluster_cluster(sim), "j", &t, &err), 0);
    cr_assert_eq(t.n, 2);
    cr_assert_eq(t.trials[0].journal_trial, 1);
    cr_assert_eq(t.trials[1].journal_trial, 3);
    cr_assert_not_null(t.trials[0].obs);
    cr_assert_not_null(t.trials[1].obs, "trial 3's measurement was lost");
    cr_assert_float_eq(t.trials[1].obs->time_s, 3.5, 1e-12);
    journal_trials_clear(&t);
    journal_log_clear(&log);
    observation_free(o);
}

/* A reason cut by snprintf inside a character (a trial's note in a non-ASCII language, say)
 * went into the journal as it was: the line was not UTF-8. It is written safe. */
Test(journal_trial, a_reason_cut_inside_a_character_is_written_as_utf8)
{
    Observation *o = observation_new(sched);
    o->status = TRIAL_FAILED;
    snprintf(o->reason, sizeof o->reason, "bad: caf\xc3");
    cJSON *j = journal_finished_json(1, o);
    const char *r = cJSON_GetStringValue(cJSON_GetObjectItem(j, "reason"));
    cr_assert_str_eq(r, "bad: caf\\xC3");
    cJSON_Delete(j);
    observation_free(o);
}

/* The machines a suggestion was made leaving out (hosts refused for good) come back by name,
 * so that a resume re-makes it leaving them out; none written, none read (older journals). */
Test(journal_trial, a_suggestions_left_out_machines_round_trip_by_name)
{
    const Cluster *c = simcluster_cluster(sim);
    Suggestion sg = {.schedule = sched};
    unsigned char *out = calloc(c->n_machines, 1), *none = calloc(c->n_machines, 1);
    cr_assert(out && none && c->n_machines > 2);
    out[2] = 1;
    cJSON *with = journal_suggested_json(1, 0, 0, &sg, 0);
    journal_suggested_add_left_out(with, c, out);
    const cJSON *names = cJSON_GetObjectItem(with, "left_out");
    cr_assert_eq(cJSON_GetArraySize(names), 1);
    cr_assert_str_eq(cJSON_GetArrayItem(names, 0)->valuestring, c->machines[2].name);
    cJSON *without = journal_suggested_json(2, 0, 0, &sg, 0);
    journal_suggested_add_left_out(without, c, none);
    cr_assert_null(cJSON_GetObjectItem(without, "left_out"));
    JournalLog log;
    cJSON *ev[] = {with, without};
    log_of(&log, ev, 2);
    JournalTrials t;
    Error err;
    cr_assert_eq(journal_trials_decode(&log, c, "j", &t, &err), 0, "%s", err.msg);
    cr_assert_eq(t.n, 2);
    cr_assert_not_null(t.trials[0].left_out);
    cr_assert_eq(memcmp(t.trials[0].left_out, out, c->n_machines), 0);
    cr_assert_null(t.trials[1].left_out);
    journal_trials_clear(&t);
    journal_log_clear(&log);
    free(out);
    free(none);
}

/* A left_out naming a machine the cluster does not have: the line is one the resume skips,
 * said with its field (a resume telling the optimizer another set would re-make another
 * suggestion). */
Test(journal_trial, a_left_out_machine_the_cluster_does_not_have_is_refused)
{
    const Cluster *c = simcluster_cluster(sim);
    Suggestion sg = {.schedule = sched};
    cJSON *j = journal_suggested_json(1, 0, 0, &sg, 0);
    cJSON *names = cJSON_AddArrayToObject(j, "left_out");
    cJSON_AddItemToArray(names, cJSON_CreateString("nosuchhost"));
    JournalTrial jt;
    Error err;
    cr_assert_eq(journal_suggested_read(j, c, "j:1: suggested", 0, &jt, &err), -1);
    cr_assert(strstr(err.msg, "field 'left_out': entry 0: expected a machine of cluster"), "%s",
              err.msg);
    cr_assert(strstr(err.msg, "'nosuchhost'"), "%s", err.msg);
    cJSON_ReplaceItemInObjectCaseSensitive(j, "left_out", cJSON_CreateString("x"));
    cr_assert_eq(journal_suggested_read(j, c, "j:1: suggested", 0, &jt, &err), -1);
    cr_assert(strstr(err.msg, "field 'left_out': expected an array"), "%s", err.msg);
    cJSON_Delete(j);
}

/* A trial lost unreachable names the machines it did not reach (`unreachable`), read back by
 * name, so that a resume checks only those hosts again; none named, none written (a journal
 * without the field: every host of the trial, as before). */
Test(journal_trial, a_lost_trials_unreachable_machines_round_trip_by_name)
{
    const Cluster *c = simcluster_cluster(sim);
    Observation *o = observation_new(sched);
    o->status = TRIAL_UNREACHABLE;
    cr_assert_eq(observation_mark_unreachable(o, 1), 0);
    cJSON *j = journal_finished_json(1, o);
    const cJSON *names = cJSON_GetObjectItem(j, "unreachable");
    cr_assert_eq(cJSON_GetArraySize(names), 1);
    cr_assert_str_eq(cJSON_GetArrayItem(names, 0)->valuestring, c->machines[1].name);
    Error err;
    Observation *back = journal_finished_parse(j, sched, "j:2: finished", &err);
    cr_assert_not_null(back, "%s", err.msg);
    cr_assert_not_null(back->unreachable);
    for (size_t m = 0; m < c->n_machines; m++)
        cr_assert_eq(back->unreachable[m], m == 1, "machine %zu", m);
    Observation *copy = observation_copy(back);
    cr_assert(copy && copy->unreachable && copy->unreachable[1]);
    observation_free(copy);
    observation_free(back);
    cJSON_Delete(j);
    free(o->unreachable);
    o->unreachable = NULL;
    j = journal_finished_json(1, o);
    cr_assert_null(cJSON_GetObjectItem(j, "unreachable"));
    back = journal_finished_parse(j, sched, "j:2: finished", &err);
    cr_assert_not_null(back, "%s", err.msg);
    cr_assert_null(back->unreachable);
    observation_free(back);
    cJSON_Delete(j);
    observation_free(o);
}

/* An `unreachable` that is not the cluster's machines' names: the line is one the resume skips
 * (its trial marked interrupted, whose every host is checked), said with its line, its field,
 * its entry and what was expected, by both readings alike (`tunedeck sessions`'s too). */
Test(journal_trial, an_unreachable_machine_the_cluster_does_not_have_is_refused)
{
    const Cluster *c = simcluster_cluster(sim);
    Observation *o = observation_new(sched);
    o->status = TRIAL_UNREACHABLE;
    cJSON *j = journal_finished_json(1, o);
    cJSON *names = cJSON_AddArrayToObject(j, "unreachable");
    cJSON_AddItemToArray(names, cJSON_CreateString(c->machines[0].name));
    cJSON_AddItemToArray(names, cJSON_CreateString("nosuchhost"));
    Error err;
    TrialStatus st;
    double time_s;
    cr_assert_null(journal_finished_parse(j, sched, "j:7: finished", &err));
    cr_assert(strstr(err.msg, "j:7: finished: field 'unreachable': entry 1: expected a machine "
                              "of cluster"),
              "%s", err.msg);
    cr_assert(strstr(err.msg, "found 'nosuchhost'"), "%s", err.msg);
    cr_assert_eq(journal_finished_kept(j, c, "j:7: finished", &st, &time_s, &err), -1);
    cr_assert(strstr(err.msg, "field 'unreachable': entry 1"), "%s", err.msg);
    cJSON_ReplaceItemInArray(names, 1, cJSON_CreateNumber(3));
    cr_assert_null(journal_finished_parse(j, sched, "j:7: finished", &err));
    cr_assert(strstr(err.msg, "field 'unreachable': entry 1: expected a machine's name, found "
                              "a number"),
              "%s", err.msg);
    cr_assert_eq(journal_finished_kept(j, NULL, "j:7: finished", &st, &time_s, &err), -1);
    cJSON_ReplaceItemInObjectCaseSensitive(j, "unreachable", cJSON_CreateString("h1"));
    cr_assert_null(journal_finished_parse(j, sched, "j:7: finished", &err));
    cr_assert(strstr(err.msg, "field 'unreachable': expected an array"), "%s", err.msg);
    cJSON_Delete(j);
    observation_free(o);
}
