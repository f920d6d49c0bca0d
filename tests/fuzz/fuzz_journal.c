/* Fuzzes the session journal reader (core/journal/journal.c) and the trials rebuilt from it
 * (core/journal/journal_trial.c) against setting B: any bytes give a log and a list of problems. */
#include <cJSON.h>

#include "core/journal/journal_trial.h"
#include "tests/fuzz/fuzz_common.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
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
    journal_trials_clear(&t);
    journal_log_clear(&log);
    return 0;
}
