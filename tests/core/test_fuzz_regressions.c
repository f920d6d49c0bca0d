/* Inputs the fuzzers (tests/fuzz/) found crashing or misbehaving, each kept as a fixture in
 * tests/fixtures/fuzz/ and checked here by the behaviour that was wrong. */
#include <cJSON.h>
#include <criterion/criterion.h>
#include <stdio.h>
#include <string.h>

#include "core/jfield.h"
#include "core/schedule.h"
#include "core/simcluster.h"

static cJSON *fixture(const char *name)
{
    char path[1024];
    snprintf(path, sizeof path, "%s/tests/fixtures/fuzz/%s", TUNEDECK_SOURCE_DIR, name);
    Error err;
    cJSON *j = jfield_parse_file(path, &err);
    cr_assert_not_null(j, "%s", err.msg);
    return j;
}

/* fuzz_schedule: top-level "warmup" >= "iterations" was accepted, so the schedule written
 * back could not be read again (its job refused it) and a trial would measure nothing. */
Test(fuzz_regressions, schedule_with_warmup_covering_every_iteration_is_refused)
{
    Error err;
    SimCluster *sim = simcluster_new("B:googlenet", &err);
    cJSON *j = fixture("schedule-warmup-covers-iterations.json");
    Schedule *s = schedule_from_json(j, simcluster_cluster(sim), "stdin", &err);
    cr_assert_null(s, "accepted a warm-up as long as the trial");
    cr_assert(strstr(err.msg, "stdin: field 'warmup': expected fewer warm-up iterations than "
                              "the 10 iterations, found 10"),
              "%s", err.msg);
    cJSON_Delete(j);
    simcluster_free(sim);
}
