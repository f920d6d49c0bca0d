/* The override queue's journal lines: written, read back, and the overrides left waiting found
 * from them (what a resume queues again); a line that does not fit is said, the rest kept. */
#include <cJSON.h>
#include <criterion/criterion.h>
#include <malloc.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "core/journal/journal_override.h"
#include "core/journal/journal_trial.h"
#include "core/sim/simcluster.h"
#include "tests/support/fixtures.h"
#include "tests/support/low_memory.h"

static SimCluster *sim;
static Schedule *a, *b;

static void setup(void)
{
    sim = fixture_sim("B:googlenet");
    a = schedule_new(simcluster_cluster(sim), simcluster_job(sim));
    a->worker[0] = a->ps[0] = 1;
    a->inputs[0] = simcluster_job(sim)->batch;
    b = schedule_copy(a);
    b->worker[1] = 1;
    b->inputs[0] -= 8;
    b->inputs[simcluster_cluster(sim)->machines[1].first_device] = 8;
}

static void teardown(void)
{
    schedule_free(a);
    schedule_free(b);
    simcluster_free(sim);
}

TestSuite(journal_override, .init = setup, .fini = teardown);

/* Appends the event's line to text (taking the event). */
static void add(char *text, size_t cap, cJSON *ev)
{
    char *line = cJSON_PrintUnformatted(ev);
    cr_assert(strlen(text) + strlen(line) + 2 < cap);
    strcat(text, line);
    strcat(text, "\n");
    free(line);
    cJSON_Delete(ev);
}

static cJSON *suggested(int trial, int override, const Schedule *s)
{
    Suggestion sg;
    memset(&sg, 0, sizeof sg);
    sg.schedule = (Schedule *)s;
    return journal_suggested_json(trial, override > 0, override, &sg, 0);
}

Test(journal_override, the_ones_neither_run_nor_dropped_wait_in_the_order_queued)
{
    static char text[1 << 17];
    text[0] = 0;
    add(text, sizeof text, journal_override_queued_json(1, a));
    add(text, sizeof text, journal_override_queued_json(2, b));
    add(text, sizeof text, journal_override_queued_json(3, a));
    add(text, sizeof text, journal_override_queued_json(4, b));
    add(text, sizeof text, suggested(1, 1, a)); /* ran (or began to): not queued again */
    add(text, sizeof text, journal_started_json(1));
    add(text, sizeof text, journal_override_dropped_json(3));
    add(text, sizeof text, suggested(2, 0, a)); /* the optimizer's own */
    JournalLog log;
    Error err;
    cr_assert_eq(journal_parse(text, strlen(text), "j.jsonl", &log, &err), 0, "%s", err.msg);
    JournalOverrides o;
    cr_assert_eq(journal_overrides_decode(&log, simcluster_cluster(sim), "j.jsonl", &o, &err), 0);
    cr_assert_eq(log.n_problems, 0, "%s", log.n_problems ? log.problems[0] : "");
    cr_assert_eq(o.n, 2);
    cr_assert_eq(o.waiting[0].id, 2);
    cr_assert_eq(o.waiting[1].id, 4);
    cr_assert(schedule_equal(o.waiting[0].schedule, b));
    cr_assert_eq(o.last_id, 4);
    journal_overrides_clear(&o);
    journal_log_clear(&log);
}

Test(journal_override, a_line_that_does_not_fit_is_said_with_its_line_and_the_rest_kept)
{
    static char text[1 << 17];
    text[0] = 0;
    add(text, sizeof text, journal_override_queued_json(1, a));
    strcat(text, "{\"event\":\"override_queued\",\"override\":2,\"wall_s\":1}\n");
    strcat(text, "{\"event\":\"override_dropped\",\"override\":-5,\"wall_s\":1}\n");
    cJSON *bad = journal_override_queued_json(4, a);
    cJSON_ReplaceItemInObject(bad, "schedule", cJSON_CreateString("lost"));
    add(text, sizeof text, bad);
    strcat(text, "{\"event\":\"override_queued\",\"override\":5e9,\"wall_s\":1}\n");
    JournalLog log;
    Error err;
    cr_assert_eq(journal_parse(text, strlen(text), "j.jsonl", &log, &err), 0, "%s", err.msg);
    JournalOverrides o;
    cr_assert_eq(journal_overrides_decode(&log, simcluster_cluster(sim), "j.jsonl", &o, &err), 0);
    cr_assert_eq(o.n, 1, "the good one kept");
    cr_assert_eq(o.waiting[0].id, 1);
    cr_assert_eq(log.n_problems, 4);
    const char *want[] = {"j.jsonl:2: override_queued: field 'schedule'",
                          "j.jsonl:3: override_dropped: field 'override'",
                          "j.jsonl:4: override_queued: field 'schedule'",
                          "j.jsonl:5: override_queued: field 'override'"};
    for (size_t i = 0; i < 4; i++) {
        cr_assert(strstr(log.problems[i], want[i]), "%s", log.problems[i]);
        cr_assert(strstr(log.problems[i], "(override not restored)"), "%s", log.problems[i]);
    }
    cr_assert_eq(o.last_id, 4, "an id read is taken, even where its schedule is not");
    journal_overrides_clear(&o);
    journal_log_clear(&log);
}

/* Ids only grow: a queued line whose id is not above every id before it is a repeat (a line
 * written twice) or a stray, and queuing it again would run that override twice on --resume. */
Test(journal_override, a_queued_line_whose_id_does_not_grow_is_said_and_not_queued_again)
{
    static char text[1 << 17];
    text[0] = 0;
    add(text, sizeof text, journal_override_queued_json(1, a));
    add(text, sizeof text, journal_override_queued_json(2, b));
    add(text, sizeof text, journal_override_queued_json(2, b)); /* repeated */
    add(text, sizeof text, suggested(1, 1, a));
    add(text, sizeof text, journal_started_json(1));
    add(text, sizeof text, journal_override_queued_json(1, a)); /* stray: 1 ran already */
    JournalLog log;
    Error err;
    cr_assert_eq(journal_parse(text, strlen(text), "j.jsonl", &log, &err), 0, "%s", err.msg);
    JournalOverrides o;
    cr_assert_eq(journal_overrides_decode(&log, simcluster_cluster(sim), "j.jsonl", &o, &err), 0);
    cr_assert_eq(o.n, 1, "override 2 waits once; 1 ran and is not queued again");
    cr_assert_eq(o.waiting[0].id, 2);
    cr_assert(schedule_equal(o.waiting[0].schedule, b));
    cr_assert_eq(o.last_id, 2);
    cr_assert_eq(log.n_problems, 2);
    cr_assert(strstr(log.problems[0], "j.jsonl:3: override_queued: expected an id above 2 (a "
                                      "repeated or stray line; override not restored)"),
              "%s", log.problems[0]);
    cr_assert(strstr(log.problems[1], "j.jsonl:6: override_queued: expected an id above 2"), "%s",
              log.problems[1]);
    journal_overrides_clear(&o);
    journal_log_clear(&log);
}

/* A trial's line with a malformed override field: the trial ran, which override it took is
 * unknown, so the queue is left as it is and the message says that (not "override not
 * restored", which speaks of a queued line). */
Test(journal_override, a_trial_line_with_a_malformed_override_field_takes_none_from_the_queue)
{
    static char text[1 << 17];
    text[0] = 0;
    add(text, sizeof text, journal_override_queued_json(1, a));
    cJSON *bad = suggested(1, 1, a);
    cJSON_ReplaceItemInObject(bad, "override", cJSON_CreateString("one"));
    add(text, sizeof text, bad);
    JournalLog log;
    Error err;
    cr_assert_eq(journal_parse(text, strlen(text), "j.jsonl", &log, &err), 0, "%s", err.msg);
    JournalOverrides o;
    cr_assert_eq(journal_overrides_decode(&log, simcluster_cluster(sim), "j.jsonl", &o, &err), 0);
    cr_assert_eq(o.n, 1);
    cr_assert_eq(o.waiting[0].id, 1);
    cr_assert_eq(log.n_problems, 1);
    cr_assert(strstr(log.problems[0], "j.jsonl:2: suggested: field 'override'"), "%s",
              log.problems[0]);
    cr_assert(strstr(log.problems[0], "(which override this trial ran is unknown: none is taken "
                                      "from the queue)"),
              "%s", log.problems[0]);
    cr_assert_null(strstr(log.problems[0], "override not restored"), "%s", log.problems[0]);
    journal_overrides_clear(&o);
    journal_log_clear(&log);
}

static JournalOverrides decode(const char *text, JournalLog *log)
{
    Error err;
    cr_assert_eq(journal_parse(text, strlen(text), "j.jsonl", log, &err), 0, "%s", err.msg);
    JournalOverrides o;
    cr_assert_eq(journal_overrides_decode(log, simcluster_cluster(sim), "j.jsonl", &o, &err), 0);
    cr_assert_eq(log->n_problems, 0, "%s", log->n_problems ? log->problems[0] : "");
    return o;
}

/* Regression: an override whose trial was suggested and never started (the console died
 * between the two lines) was taken from the queue by its suggested line; the resume marked
 * the trial interrupted and the operator's override was lost. It waits again, at the head,
 * once: the interrupted outcome a resume gives the trial does not take it, a second resume
 * finds it waiting still, and the trial that runs it at last does take it. */
Test(journal_override, an_override_whose_trial_never_started_waits_again_at_the_head)
{
    static char text[1 << 17];
    text[0] = 0;
    add(text, sizeof text, journal_override_queued_json(1, a));
    add(text, sizeof text, journal_override_queued_json(2, b));
    add(text, sizeof text, suggested(1, 1, a)); /* killed here */
    JournalLog log;
    JournalOverrides o = decode(text, &log);
    cr_assert_eq(o.n, 2, "the override of the trial never started is queued again");
    cr_assert_eq(o.waiting[0].id, 1);
    cr_assert(o.waiting[0].unstarted);
    cr_assert(schedule_equal(o.waiting[0].schedule, a));
    cr_assert_eq(o.waiting[1].id, 2);
    cr_assert_not(o.waiting[1].unstarted);
    journal_overrides_clear(&o);
    journal_log_clear(&log);

    /* the resume's lines: the trial interrupted; then killed again before it ran the queue */
    Observation *gone = observation_new(a);
    gone->status = TRIAL_INTERRUPTED;
    add(text, sizeof text, journal_finished_json(1, gone));
    observation_free(gone);
    o = decode(text, &log);
    cr_assert_eq(o.n, 2, "an interrupted outcome is no start: it still waits, once");
    cr_assert_eq(o.waiting[0].id, 1);
    journal_overrides_clear(&o);
    journal_log_clear(&log);

    /* the next resume runs it as trial 2 */
    add(text, sizeof text, suggested(2, 1, a));
    add(text, sizeof text, journal_started_json(2));
    o = decode(text, &log);
    cr_assert_eq(o.n, 1, "run at last: taken");
    cr_assert_eq(o.waiting[0].id, 2);
    journal_overrides_clear(&o);
    journal_log_clear(&log);
}

/* A trial with an outcome of its own ran, its started line lost or not: its override is not
 * queued again (it would run twice). */
Test(journal_override, a_trial_with_an_outcome_of_its_own_took_its_override)
{
    static char text[1 << 17];
    text[0] = 0;
    add(text, sizeof text, journal_override_queued_json(1, a));
    add(text, sizeof text, suggested(1, 1, a));
    Observation *ran = observation_new(a);
    ran->status = TRIAL_FAILED;
    add(text, sizeof text, journal_finished_json(1, ran));
    observation_free(ran);
    JournalLog log;
    JournalOverrides o = decode(text, &log);
    cr_assert_eq(o.n, 0);
    journal_overrides_clear(&o);
    journal_log_clear(&log);
}

/* The resume's budget rule, as `tunedeck sessions` and the resume use it. */
Test(journal_override, the_resume_budget_gives_each_unstarted_override_its_trial)
{
    /* 4 trials, overrides 1 (unstarted, its trial 4 newly interrupted) and 2 queued */
    cr_assert_eq(journal_resume_budget(5, 4, 2, 1, 1, 0), 6);
    cr_assert_eq(journal_resume_budget(4, 4, 2, 1, 1, 0), 5, "override 2 left out by :budget");
    /* a second resume: trial 4 already marked; a :budget of 4 since */
    cr_assert_eq(journal_resume_budget(6, 4, 2, 1, 0, 0), 6);
    cr_assert_eq(journal_resume_budget(4, 4, 2, 1, 0, 0), 5);
    /* --budget: raised for the unstarted one only */
    cr_assert_eq(journal_resume_budget(4, 4, 3, 1, 1, 1), 5);
    cr_assert_eq(journal_resume_budget(9, 4, 3, 1, 1, 1), 9);
    /* no unstarted override: the budget stands */
    cr_assert_eq(journal_resume_budget(4, 4, 2, 0, 0, 0), 4);
}

/* A dropped override's schedule is freed as its line is read, not held to the end of the
 * journal: a long console session queues and drops many, and each schedule held (a few
 * hundred bytes on a one-machine cluster, more on a large one) was kept for nothing. With
 * the heap neither trimmed nor bypassed by mmap, its growth over the decode is the most it
 * held at once: 16000 overrides queued and dropped, then one queued, grew it by about 4 MB
 * when each schedule was held, and by almost nothing now. */
Test(journal_override, a_dropped_overrides_schedule_is_freed_when_it_is_dropped)
{
    if (!low_memory_supported()) /* AddressSanitizer's allocator: mallinfo2 says nothing */
        return;
    enum { MANY = 16000 };
    Cluster *c = fixture_cluster_json(
        "{\"name\": \"r\", \"machine_types\": {\"t\": {\"bandwidth_gbps\": 10, \"devices\": ["
        "{\"id\": \"cpu\", \"kind\": \"cpu\"}]}},"
        "\"machines\": [{\"name\": \"m0\", \"host\": \"192.0.2.1\", \"type\": \"t\"}]}");
    Schedule *one = fixture_schedule(c, 8);
    one->worker[0] = one->ps[0] = 1;
    one->inputs[0] = 8;
    cJSON *queued = journal_override_queued_json(1, one);
    char *line = cJSON_PrintUnformatted(queued);
    cJSON_Delete(queued);
    const char *rest = strstr(line, ",\"wall_s\""); /* the line after its id */
    cr_assert_not_null(rest);
    size_t cap = (size_t)MANY * (strlen(line) + 80), len = 0;
    char *text = malloc(cap);
    cr_assert_not_null(text);
    for (int id = 1; id <= MANY + 1; id++) {
        len += (size_t)snprintf(text + len, cap - len,
                                "{\"event\":\"override_queued\",\"override\":%d%s\n", id, rest);
        if (id <= MANY)
            len += (size_t)snprintf(text + len, cap - len,
                                    "{\"event\":\"override_dropped\",\"override\":%d}\n", id);
        cr_assert_lt(len, cap);
    }
    free(line);
    JournalLog log;
    Error err;
    cr_assert_eq(journal_parse(text, len, "j.jsonl", &log, &err), 0, "%s", err.msg);
    free(text);
    cr_assert_eq(mallopt(M_MMAP_THRESHOLD, 1 << 30), 1);
    cr_assert_eq(mallopt(M_TRIM_THRESHOLD, 1 << 30), 1);
    size_t before = mallinfo2().arena;
    JournalOverrides o;
    cr_assert_eq(journal_overrides_decode(&log, c, "j.jsonl", &o, &err), 0, "%s", err.msg);
    size_t grown = mallinfo2().arena - before;
    cr_assert_eq(log.n_problems, 0, "%s", log.n_problems ? log.problems[0] : "");
    cr_assert_eq(o.n, 1);
    cr_assert_eq(o.waiting[0].id, MANY + 1);
    cr_assert(schedule_equal(o.waiting[0].schedule, one));
    cr_assert_lt(grown, 512 * 1024, "the decode held %zu bytes at once", grown);
    journal_overrides_clear(&o);
    journal_log_clear(&log);
    schedule_free(one);
    cluster_free(c);
}
