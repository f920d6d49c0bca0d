/* The old, whole reading of a journal (journalwhole.h). */
#include "bench/args/journalwhole.h"

int journalwhole_read(const char *path, JournalLog *out, const char *const *keys, size_t n_keys,
                      JournalEach each, void *ud, Error *err)
{
    (void)keys, (void)n_keys;
    int rc = journal_load(path, out, err);
    for (size_t i = 0; rc == 0 && i < out->n; i++)
        each(ud, out->events[i], out->lines[i]);
    return rc;
}
