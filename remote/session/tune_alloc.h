/* The Slurm allocation a session made, in its journal: a `slurm_allocation` line once it is
 * granted, a `slurm_allocation_released` line once its scancel went through. A session that
 * ended while the login node was down (Ctrl-C during the wait for it, the budget spent right
 * after an outage) could not release it; the journal keeps its id and name, and the next
 * resume of the session releases it, before its own salloc (the left allocation holds the
 * very nodes, whole, that the resume asks for). */
#ifndef TUNEDECK_TUNE_ALLOC_H
#define TUNEDECK_TUNE_ALLOC_H

#include <stddef.h>

#include <cJSON.h>

#include "core/journal/journal.h"

enum { TUNE_ALLOC_LEFT_MAX = 8 };

typedef struct {
    char job[32];    /* Slurm's job id */
    char name[48];   /* its --job-name: tunedeck-tune-PID */
    char where[256]; /* the login node it was made through, or "here" */
} TuneAllocLeft;

/* The lines (the caller appends them; NULL when out of memory). result: "released" (cancelled
 * now) or "gone" (Slurm no longer had it: ended by its limit, or by hand). */
cJSON *tune_alloc_json(const char *job, const char *name, const char *where);
cJSON *tune_alloc_released_json(const char *job, const char *result);

/* Pure: the allocations the journal has granted and never released, oldest first (at most
 * cap). A line whose job is not a Slurm job id, or whose name is not one tunedeck gives
 * (tunedeck-tune-DIGITS), is none: a resume cancels nothing on a damaged or edited line's
 * word. Returns how many. */
size_t tune_alloc_left(const JournalLog *log, TuneAllocLeft *out, size_t cap);

/* Pure: the event kinds above (readers that judge a session by its last line, `ended`, pass
 * over them: the release comes after it). */
int tune_alloc_event(const char *kind);

#endif
