/* Fuzzes the session journal reader (core/journal/journal.c), the trials rebuilt from it
 * (core/journal/journal_trial.c) and the overrides left queued (journal_override.c, on the
 * rule of journal_override_tally.c, which counts the trials as journal_trial.c does) against
 * setting B: any bytes give a log and a list of problems;
 * and the skim (core/journal/journal_skim.c): a line it vouches for is one the whole parse
 * takes, with the same event and fields. */
#include <cJSON.h>
#include <stdlib.h>
#include <string.h>

#include "core/journal/journal_override.h"
#include "core/journal/journal_override_tally.h"
#include "core/journal/journal_skim.h"
#include "core/journal/journal_trial.h"
#include "tests/fuzz/fuzz_common.h"

static void check_skim(const char *line, size_t len)
{
    static const char *const KEYS[] = {"trial",   "status", "time_s",   "budget",
                                       "stopped", "reason", "schedule", "device_time_s"};
    enum { N_KEYS = sizeof KEYS / sizeof KEYS[0] };
    cJSON *mini, *whole;
    Error err;
    if (!journal_skim_line(line, len, KEYS, N_KEYS, &mini))
        return;
    if (journal_parse_line(line, len, &whole, &err) < 0)
        abort(); /* vouched for a line the parse refuses */
    for (size_t k = 0; k < N_KEYS; k++) {
        const cJSON *a = cJSON_GetObjectItemCaseSensitive(mini, KEYS[k]);
        const cJSON *b = cJSON_GetObjectItemCaseSensitive(whole, KEYS[k]);
        if ((a == NULL) != (b == NULL) || (a && (a->type & 0xff) != (b->type & 0xff)) ||
            (a && cJSON_IsNumber(a) && memcmp(&a->valuedouble, &b->valuedouble, 8) != 0) ||
            (a && cJSON_IsString(a) && strcmp(a->valuestring, b->valuestring) != 0))
            abort();
        if (a && (cJSON_IsObject(a) || cJSON_IsArray(a))) { /* parsed alone */
            char *pa = cJSON_PrintUnformatted(a), *pb = cJSON_PrintUnformatted(b);
            if (!pa || !pb || strcmp(pa, pb) != 0)
                abort();
            free(pa);
            free(pb);
        }
    }
    if (strcmp(cJSON_GetObjectItemCaseSensitive(mini, "event")->valuestring,
               cJSON_GetObjectItemCaseSensitive(whole, "event")->valuestring) != 0)
        abort();
    cJSON_Delete(mini);
    cJSON_Delete(whole);
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    for (size_t at = 0; at < size;) {
        const char *nl = memchr(data + at, '\n', size - at);
        size_t len = nl ? (size_t)(nl - (const char *)data) - at : size - at;
        check_skim((const char *)data + at, len);
        at += len + 1;
    }
    JournalLog log;
    Error err;
    if (journal_parse((const char *)data, size, "fuzz.jsonl", &log, &err) < 0)
        abort(); /* only memory can fail it */
    if (log.valid_bytes < 0 || (size_t)log.valid_bytes > size)
        abort();
    JournalTrials t;
    journal_trials_decode(&log, simcluster_cluster(fuzz_sim()), "fuzz.jsonl", &t, &err);
    for (size_t i = 0; i < t.n; i++) {
        if (t.trials[i].trial != (int)i + 1 || !t.trials[i].suggestion.schedule)
            abort();
        if (t.trials[i].obs) {
            cJSON *j = journal_finished_json(t.trials[i].trial, t.trials[i].obs);
            cJSON_Delete(j);
        }
    }
    /* the override queue a resume restores: every one waiting has its schedule and an id the
     * journal used, once; the unstarted lead; only an unstarted one's trial is marked fresh */
    JournalOverrides o;
    if (journal_overrides_decode(&log, simcluster_cluster(fuzz_sim()), "fuzz.jsonl", &o, &err) < 0)
        abort();
    for (size_t i = 0; i < o.n; i++) {
        const JournalOverride *w = &o.waiting[i];
        if (!w->schedule || w->id < 1 || w->id > o.last_id || o.last_id > JOURNAL_OVERRIDE_ID_MAX ||
            (w->fresh && !w->unstarted) || (i && w->unstarted && !o.waiting[i - 1].unstarted))
            abort();
        for (size_t k = 0; k < i; k++)
            if (o.waiting[k].id == w->id)
                abort();
    }
    /* the trials the tally counts for `tunedeck sessions`, on the cluster, are the ones the
     * resume decodes and the ones a resume's budget counts; and it queues the overrides the
     * resume restores */
    JournalOverrideTally tally;
    memset(&tally, 0, sizeof tally);
    tally.cluster = simcluster_cluster(fuzz_sim());
    for (size_t i = 0; i < log.n; i++)
        journal_override_tally_take(&tally, log.events[i], "", &err);
    journal_override_tally_end(&tally);
    if (!tally.failed &&
        (tally.trials != t.n || journal_trials_count(&log, tally.cluster) != t.n || tally.n != o.n))
        abort();
    journal_override_tally_clear(&tally);
    journal_trials_clear(&t);
    journal_overrides_clear(&o);
    journal_log_clear(&log);
    return 0;
}
