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
    char mark[ORPHAN_MARK_CHARS + 1];
    Error err;
    cr_assert_eq(orphans_mark_new(mark, &err), 0, "%s", err.msg);
    cr_assert(orphans_mark_ok(mark), "%s", mark);
    cJSON *ev = orphans_proc_json(3, "h1", 4242, mark);
    char *line = cJSON_PrintUnformatted(ev);
    char text[512], want[256];
    snprintf(text, sizeof text, "{\"event\":\"session\"}\n%s\n", line);
    snprintf(want, sizeof want,
             "{\"event\":\"remote_process\",\"trial\":3,\"machine\":\"h1\",\"pgid\":4242,"
             "\"mark\":\"%s\"}",
             mark);
    cr_assert_str_eq(line, want);
    free(line);
    cJSON_Delete(ev);
    JournalLog log;
    OrphanList l;
    parse(text, &log);
    cr_assert_eq(orphans_collect(&log, &l, &err), 0);
    cr_assert_eq(l.n, 1);
    cr_assert_eq(l.items[0].trial, 3);
    cr_assert_eq(l.items[0].pgid, 4242);
    cr_assert_str_eq(l.items[0].machine, "h1");
    cr_assert_str_eq(l.items[0].mark, mark);
    orphans_clear(&l);
    journal_log_clear(&log);
}

/* Two launches never share a mark; a journal's mark that is not 32 lowercase hex digits is
 * no way to know a group (and would reach a shell command): its event is left out, while
 * one with no mark at all (a journal from before marks) is kept, matched by trial number. */
Test(orphans, marks_are_fresh_and_a_bad_one_leaves_its_event_out)
{
    char a[ORPHAN_MARK_CHARS + 1], b[ORPHAN_MARK_CHARS + 1];
    Error err;
    cr_assert_eq(orphans_mark_new(a, &err), 0);
    cr_assert_eq(orphans_mark_new(b, &err), 0);
    cr_assert_str_neq(a, b);
    const char *text =
        "{\"event\":\"remote_process\",\"trial\":1,\"machine\":\"h1\",\"pgid\":100,"
        "\"mark\":\"0123456789abcdef0123456789abcdef\"}\n"
        "{\"event\":\"remote_process\",\"trial\":1,\"machine\":\"h1\",\"pgid\":101}\n"
        "{\"event\":\"remote_process\",\"trial\":1,\"machine\":\"h1\",\"pgid\":102,"
        "\"mark\":\"0123456789ABCDEF0123456789ABCDEF\"}\n"
        "{\"event\":\"remote_process\",\"trial\":1,\"machine\":\"h1\",\"pgid\":103,"
        "\"mark\":\"x; kill -9 -1; 0123456789abcdef0123456789abcd\"}\n"
        "{\"event\":\"remote_process\",\"trial\":1,\"machine\":\"h1\",\"pgid\":104,"
        "\"mark\":\"0123456789abcdef0123456789abcde\"}\n"
        "{\"event\":\"remote_process\",\"trial\":1,\"machine\":\"h1\",\"pgid\":105,"
        "\"mark\":7}\n";
    JournalLog log;
    OrphanList l;
    parse(text, &log);
    cr_assert_eq(orphans_collect(&log, &l, &err), 0);
    cr_assert_eq(l.n, 2, "took %zu", l.n);
    cr_assert_eq(l.items[0].pgid, 100);
    cr_assert_str_eq(l.items[0].mark, "0123456789abcdef0123456789abcdef");
    cr_assert_eq(l.items[1].pgid, 101);
    cr_assert_str_eq(l.items[1].mark, "");
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

Test(orphans, take_moves_only_earlier_trials_groups_on_that_machine)
{
    OrphanList from = {0}, to = {0};
    cr_assert_eq(orphans_add(&from, 1, "h2", 100, NULL), 0);
    cr_assert_eq(orphans_add(&from, 1, "h1", 101, NULL), 0);
    cr_assert_eq(orphans_add(&from, 2, "h2", 102, NULL), 0);
    cr_assert_eq(orphans_add(&from, 3, "h2", 103, NULL), 0); /* the trial itself: not a leftover */
    cr_assert_eq(orphans_take(&from, 3, "h2", &to), 0);
    cr_assert_eq(to.n, 2);
    cr_assert(to.items[0].pgid == 100 && to.items[1].pgid == 102);
    cr_assert_eq(from.n, 2);
    cr_assert(from.items[0].pgid == 101 && from.items[1].pgid == 103);
    cr_assert_eq(orphans_take(&from, 3, "h3", &to), 0); /* none there: nothing moves */
    cr_assert(to.n == 2 && from.n == 2);
    orphans_clear(&from);
    orphans_clear(&to);
}

Test(orphans, only_a_group_its_host_answered_for_and_that_was_not_stopped_still_runs)
{
    Orphan o = {.trial = 1, .machine = "h2", .pgid = 100, .answered = 1};
    snprintf(o.result, sizeof o.result, "stopped");
    cr_assert_not(orphans_still_running(&o));
    snprintf(o.result, sizeof o.result, "gone");
    cr_assert_not(orphans_still_running(&o));
    snprintf(o.result, sizeof o.result, "not stopped: the stop command failed");
    cr_assert(orphans_still_running(&o));
    o.answered = 0; /* no answer: undecided, tried again later */
    snprintf(o.result, sizeof o.result, "not stopped: no answer within 15 s");
    cr_assert_not(orphans_still_running(&o));
}
