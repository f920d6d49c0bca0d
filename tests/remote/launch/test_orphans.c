#include <criterion/criterion.h>
#include <string.h>

#include <cJSON.h>

#include "remote/launch/orphans.h"

static void parse(const char *text, JournalLog *log)
{
    Error err;
    cr_assert_eq(journal_parse(text, strlen(text), "j", log, &err), 0, "%s", err.msg);
}

Test(orphans, the_event_round_trips_through_collect)
{
    cJSON *ev = orphans_proc_json(3, "h1", 4242);
    char *line = cJSON_PrintUnformatted(ev);
    char text[512];
    snprintf(text, sizeof text, "{\"event\":\"session\"}\n%s\n", line);
    cr_assert_str_eq(line,
                     "{\"event\":\"remote_process\",\"trial\":3,\"machine\":\"h1\",\"pgid\":4242}");
    free(line);
    cJSON_Delete(ev);
    JournalLog log;
    OrphanList l;
    Error err;
    parse(text, &log);
    cr_assert_eq(orphans_collect(&log, &l, &err), 0);
    cr_assert_eq(l.n, 1);
    cr_assert_eq(l.items[0].trial, 3);
    cr_assert_eq(l.items[0].pgid, 4242);
    cr_assert_str_eq(l.items[0].machine, "h1");
    orphans_clear(&l);
    journal_log_clear(&log);
}

Test(orphans, only_trials_without_an_outcome_are_orphans)
{
    const char *text =
        "{\"event\":\"remote_process\",\"trial\":1,\"machine\":\"h1\",\"pgid\":100}\n"
        "{\"event\":\"remote_process\",\"trial\":1,\"machine\":\"h2\",\"pgid\":101}\n"
        "{\"event\":\"finished\",\"trial\":1,\"status\":\"ok\"}\n"
        "{\"event\":\"remote_process\",\"trial\":2,\"machine\":\"h1\",\"pgid\":200}\n"
        "{\"event\":\"remote_process\",\"trial\":2,\"machine\":\"h2\",\"pgid\":201}\n";
    JournalLog log;
    OrphanList l;
    Error err;
    parse(text, &log);
    cr_assert_eq(orphans_collect(&log, &l, &err), 0);
    cr_assert_eq(l.n, 2);
    cr_assert_eq(l.items[0].pgid, 200);
    cr_assert_eq(l.items[1].pgid, 201);
    cr_assert_str_eq(l.items[1].machine, "h2");
    orphans_clear(&l);
    journal_log_clear(&log);
}

Test(orphans, a_group_id_that_would_mean_everything_is_never_taken)
{
    /* kill -- -1 is every process the user has; 0 is the caller's own group. */
    const char *text =
        "{\"event\":\"remote_process\",\"trial\":1,\"machine\":\"h1\",\"pgid\":1}\n"
        "{\"event\":\"remote_process\",\"trial\":1,\"machine\":\"h1\",\"pgid\":0}\n"
        "{\"event\":\"remote_process\",\"trial\":1,\"machine\":\"h1\",\"pgid\":-5}\n"
        "{\"event\":\"remote_process\",\"trial\":1,\"machine\":\"h1\",\"pgid\":\"7; rm -rf /\"}\n"
        "{\"event\":\"remote_process\",\"trial\":1,\"machine\":7,\"pgid\":70}\n"
        "{\"event\":\"remote_process\",\"trial\":0,\"machine\":\"h1\",\"pgid\":71}\n"
        "{\"event\":\"remote_process\",\"machine\":\"h1\",\"pgid\":72}\n";
    JournalLog log;
    OrphanList l;
    Error err;
    parse(text, &log);
    cr_assert_eq(orphans_collect(&log, &l, &err), 0);
    cr_assert_eq(l.n, 0, "took %zu", l.n);
    orphans_clear(&l);
    journal_log_clear(&log);
}
