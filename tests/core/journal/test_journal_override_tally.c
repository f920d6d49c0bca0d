/* journal_overrides_decode (what a resume queues) is the line-by-line tally (what `tunedeck
 * sessions` counts) less the overrides whose schedule it refuses, on random journals of
 * queued, dropped, suggested, started and finished lines, damaged ones among them: the tally's
 * event index finds each one's queued line. */
#include <cJSON.h>
#include <criterion/criterion.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "core/journal/journal_override.h"
#include "core/journal/journal_override_tally.h"
#include "core/journal/journal_trial.h"
#include "core/sim/simcluster.h"
#include "tests/support/fixtures.h"

static SimCluster *sim;
static Schedule *a;

static void setup(void)
{
    sim = fixture_sim("B:googlenet");
    a = schedule_new(simcluster_cluster(sim), simcluster_job(sim));
    a->worker[0] = a->ps[0] = 1;
    a->inputs[0] = simcluster_job(sim)->batch;
}

static void teardown(void)
{
    schedule_free(a);
    simcluster_free(sim);
}

TestSuite(journal_override_tally, .init = setup, .fini = teardown);

static void add(char *text, size_t cap, cJSON *ev)
{
    char *line = cJSON_PrintUnformatted(ev);
    cr_assert(strlen(text) + strlen(line) + 2 < cap);
    strcat(text, line);
    strcat(text, "\n");
    free(line);
    cJSON_Delete(ev);
}

static cJSON *suggested(int trial, int override)
{
    Suggestion sg;
    memset(&sg, 0, sizeof sg);
    sg.schedule = a;
    return journal_suggested_json(trial, override > 0, override, &sg, 0);
}

static cJSON *finished(int trial, TrialStatus status)
{
    Observation *o = observation_new(a);
    o->status = status;
    o->time_s = 0.5;
    cJSON *j = journal_finished_json(trial, o);
    observation_free(o);
    return j;
}

/* A session's lines in a random order of what a console does, with a stray line now and then:
 * a queued id repeated, an override field malformed, a trial's lines lost. */
static void random_journal(unsigned *seed, char *text, size_t cap)
{
    text[0] = 0;
    int next_id = 1, trial = 0, queued[64], nq = 0;
    for (int step = 0, steps = 4 + rand_r(seed) % 30; step < steps; step++) {
        int r = rand_r(seed) % 100;
        if (r < 25 && nq < 64) {
            int id = rand_r(seed) % 10 == 0 && next_id > 1 ? next_id - 1 : next_id++;
            cJSON *j = journal_override_queued_json(id, a);
            if (rand_r(seed) % 8 == 0)
                cJSON_DeleteItemFromObject(j, "schedule"); /* refused by the decode */
            add(text, cap, j);
            queued[nq++] = id;
        } else if (r < 32 && nq) {
            add(text, cap, journal_override_dropped_json(queued[rand_r(seed) % nq]));
        } else if (r < 37) {
            cJSON *j = suggested(++trial, nq ? queued[0] : 0);
            cJSON_DeleteItemFromObject(j, "override");
            cJSON_AddStringToObject(j, "override", "x");
            add(text, cap, j);
        } else {
            int id = nq && rand_r(seed) % 2 ? queued[rand_r(seed) % nq] : 0;
            add(text, cap, suggested(++trial, id));
            /* its lines kept: 0 none (killed before it started, or lost), 1 started, 2 and
             * an outcome, 3 and interrupted, 4 an outcome alone (started lost), 5 the
             * interrupted a resume gives a trial that never started */
            int fate = rand_r(seed) % 6;
            /* the console queues and drops while a trial is suggested and starting */
            while (rand_r(seed) % 3 == 0) {
                if (rand_r(seed) % 2 && nq < 64) {
                    add(text, cap, journal_override_queued_json(next_id, a));
                    queued[nq++] = next_id++;
                } else if (nq)
                    add(text, cap, journal_override_dropped_json(queued[rand_r(seed) % nq]));
            }
            if (fate >= 1 && fate <= 3)
                add(text, cap, journal_started_json(trial));
            if (fate == 2 || fate == 4)
                add(text, cap, finished(trial, TRIAL_OK));
            if (fate == 3 || fate == 5)
                add(text, cap, finished(trial, TRIAL_INTERRUPTED));
        }
    }
}

Test(journal_override_tally, agrees_with_the_resumes_decode)
{
    static char text[1 << 18];
    unsigned seed = 7;
    int unstarted_seen = 0, refused_seen = 0;
    for (int k = 0; k < 3000; k++) {
        random_journal(&seed, text, sizeof text);
        JournalLog log;
        Error err;
        cr_assert_eq(journal_parse(text, strlen(text), "j.jsonl", &log, &err), 0, "%s", err.msg);
        JournalOverrides o;
        cr_assert_eq(journal_overrides_decode(&log, simcluster_cluster(sim), "j", &o, &err), 0);
        JournalOverrideTally t;
        memset(&t, 0, sizeof t);
        for (size_t i = 0; i < log.n; i++) {
            Error e;
            journal_override_tally_take(&t, log.events[i], "", &e);
        }
        journal_override_tally_end(&t);
        /* the decode's queue is the tally's, less the overrides whose queued line (found by
         * the tally's event index) has a schedule the decode refuses */
        cr_assert_eq(t.last_id, o.last_id, "journal %d:\n%s", k, text);
        size_t unstarted = 0, kept = 0, t_unstarted = 0;
        for (size_t i = 0; i < t.n; i++) {
            const cJSON *line = log.events[t.waiting[i].event];
            cr_assert_eq(cJSON_GetObjectItemCaseSensitive(line, "override")->valueint,
                         t.waiting[i].id, "journal %d:\n%s", k, text);
            if (!cJSON_GetObjectItemCaseSensitive(line, "schedule"))
                continue;
            t_unstarted += i < t.unstarted;
            cr_assert_lt(kept, o.n, "journal %d:\n%s", k, text);
            const JournalOverride *w = &o.waiting[kept++];
            cr_assert_eq(t.waiting[i].id, w->id, "journal %d, %zu:\n%s", k, i, text);
            cr_assert_eq(i < t.unstarted, w->unstarted != 0, "journal %d:\n%s", k, text);
            unstarted += w->unstarted != 0;
            if (w->unstarted) {
                cr_assert_eq(kept - 1, unstarted - 1, "the unstarted lead the queue");
                cr_assert_eq(t.waiting[i].trial, w->trial, "journal %d:\n%s", k, text);
            }
        }
        cr_assert_eq(kept, o.n, "journal %d:\n%s", k, text);
        refused_seen += kept < t.n;
        cr_assert_eq(t_unstarted, unstarted, "journal %d:\n%s", k, text);
        unstarted_seen += unstarted > 0;
        journal_override_tally_clear(&t);
        journal_overrides_clear(&o);
        journal_log_clear(&log);
    }
    cr_assert_gt(unstarted_seen, 100, "the journals reach the case");
    cr_assert_gt(refused_seen, 100, "and the refused schedule");
}
