#include <criterion/criterion.h>
#include <dirent.h>
#include <signal.h>
#include <stdio.h>
#include <sys/stat.h>
#include <stdlib.h>
#include <string.h>
#include <sys/wait.h>
#include <unistd.h>

#include <cJSON.h>

#include "remote/launch/orphans.h"
#include "remote/ssh/groupstop.h"
#include "tests/support/marked.h"
#include "tests/support/ownkill.h"
#include "tests/support/sshd_fixture.h"
#include "tests/support/testmark.h"
#include "tests/support/timeout.h"

static void parse(const char *text, JournalLog *log)
{
    Error err;
    cr_assert_eq(journal_parse(text, strlen(text), "j", log, &err), 0, "%s", err.msg);
}

Test(orphans, the_event_round_trips_through_collect)
{
    char mark[GROUPSTOP_MARK_CHARS + 1];
    Error err;
    cr_assert_eq(orphans_mark_new(mark, &err), 0, "%s", err.msg);
    cr_assert(groupstop_mark_ok(mark), "%s", mark);
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
    char a[GROUPSTOP_MARK_CHARS + 1], b[GROUPSTOP_MARK_CHARS + 1];
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

/* Regression: a finished trial's group that a stop left running (its host down at the end of
 * the session, or the kill refused) was never taken again: a resume took only the groups of
 * trials without an outcome and ignored the stop lines. Now the last stop line of a group
 * decides: "not stopped" takes it, "stopped" or "gone" leaves it; a stop line whose group's
 * own line was lost names it all the same. */
Test(orphans, a_finished_trials_group_whose_last_stop_said_not_stopped_is_taken)
{
#define MA "0123456789abcdef0123456789abcdef"
#define MB "fedcba9876543210fedcba9876543210"
    const char *text =
        "{\"event\":\"remote_process\",\"trial\":1,\"machine\":\"h1\",\"pgid\":100,\"mark\":\"" MA
        "\"}\n"
        "{\"event\":\"remote_process\",\"trial\":1,\"machine\":\"h2\",\"pgid\":101,\"mark\":\"" MB
        "\"}\n"
        "{\"event\":\"finished\",\"trial\":1,\"status\":\"unreachable\"}\n"
        "{\"event\":\"remote_process\",\"trial\":2,\"machine\":\"h1\",\"pgid\":200}\n"
        "{\"event\":\"finished\",\"trial\":2,\"status\":\"ok\"}\n"
        "{\"event\":\"remote_process\",\"trial\":3,\"machine\":\"h1\",\"pgid\":300}\n"
        "{\"event\":\"finished\",\"trial\":3,\"status\":\"ok\"}\n"
        "{\"event\":\"remote_process_stop\",\"trial\":1,\"machine\":\"h2\",\"pgid\":101,\"mark\":"
        "\"" MB "\","
        "\"result\":\"not stopped: ssh failed: connection refused\"}\n"
        /* the same group id on h2 under another mark is another group: it says nothing of 101 */
        "{\"event\":\"remote_process_stop\",\"trial\":1,\"machine\":\"h2\",\"pgid\":101,\"mark\":"
        "\"" MA "\","
        "\"result\":\"stopped\"}\n"
        "{\"event\":\"remote_process_stop\",\"trial\":2,\"machine\":\"h1\",\"pgid\":200,"
        "\"result\":\"not stopped: kill not permitted\"}\n"
        "{\"event\":\"remote_process_stop\",\"trial\":2,\"machine\":\"h1\",\"pgid\":200,"
        "\"result\":\"stopped\"}\n"
        "{\"event\":\"remote_process_stop\",\"trial\":3,\"machine\":\"h1\",\"pgid\":300,"
        "\"result\":\"gone\"}\n"
        "{\"event\":\"finished\",\"trial\":4,\"status\":\"failed\"}\n"
        "{\"event\":\"remote_process_stop\",\"trial\":4,\"machine\":\"h3\",\"pgid\":400,\"mark\":"
        "\"" MA "\","
        "\"result\":\"not stopped: no answer within 15 s\"}\n"
        "{\"event\":\"remote_process\",\"trial\":5,\"machine\":\"h1\",\"pgid\":500}\n";
    JournalLog log;
    OrphanList l;
    Error err;
    parse(text, &log);
    cr_assert_eq(orphans_collect(&log, &l, &err), 0);
    cr_assert_eq(l.n, 3, "took %zu", l.n);
    cr_assert_eq(l.items[0].trial, 1);
    cr_assert_str_eq(l.items[0].machine, "h2");
    cr_assert_eq(l.items[0].pgid, 101);
    cr_assert_str_eq(l.items[0].mark, MB);
    cr_assert(l.items[0].finished);
    cr_assert_eq(l.items[1].trial, 4);
    cr_assert_str_eq(l.items[1].machine, "h3");
    cr_assert_eq(l.items[1].pgid, 400);
    cr_assert_str_eq(l.items[1].mark, MA);
    cr_assert(l.items[1].finished);
    cr_assert_eq(l.items[2].trial, 5);
    cr_assert_eq(l.items[2].pgid, 500);
    cr_assert_not(l.items[2].finished);
    orphans_clear(&l);
    journal_log_clear(&log);
#undef MA
#undef MB
}

/* A trial's outcome ends only the groups journaled before it: one named after it (as after a
 * resume that shifted the numbers) may still run (faults.sh 1c). */
Test(orphans, a_group_journaled_after_its_trials_outcome_is_still_taken)
{
    const char *text =
        "{\"event\":\"remote_process\",\"trial\":6,\"machine\":\"h1\",\"pgid\":600}\n"
        "{\"event\":\"finished\",\"trial\":6,\"status\":\"ok\"}\n"
        "{\"event\":\"remote_process\",\"trial\":6,\"machine\":\"h1\",\"pgid\":601}\n";
    JournalLog log;
    OrphanList l;
    Error err;
    parse(text, &log);
    cr_assert_eq(orphans_collect(&log, &l, &err), 0);
    cr_assert_eq(l.n, 1, "took %zu", l.n);
    cr_assert_eq(l.items[0].pgid, 601);
    cr_assert_not(l.items[0].finished);
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

/* The host's answer to the stop of l's groups on h1, run by `shell` as the login would. */
static void stop_answer(const char *shell, const OrphanList *l, char *out, size_t cap)
{
    char *cmd = orphans_stop_command(l, "h1");
    cr_assert_not_null(cmd);
    char path[] = "/tmp/test-orphans-XXXXXX", line[256];
    int fd = mkstemp(path);
    cr_assert(fd >= 0);
    cr_assert_eq(write(fd, cmd, strlen(cmd)), (ssize_t)strlen(cmd));
    close(fd);
    free(cmd);
    /* The stop runs itself again under `sh` (groupstop_under_sh), found in PATH: bash's case
     * has an sh of its own, else it tests dash twice. */
    char dir[] = "/tmp/test-orphans-bash-XXXXXX", link[64];
    if (strcmp(shell, "bash") == 0) {
        cr_assert_not_null(mkdtemp(dir));
        snprintf(link, sizeof link, "%s/sh", dir);
        cr_assert_eq(symlink("/bin/bash", link), 0);
        snprintf(line, sizeof line, "PATH=%s:\"$PATH\" %s %s; r=$?; rm -rf %s; exit $r", dir, shell,
                 path, dir);
    } else
        snprintf(line, sizeof line, "%s %s", shell, path);
    FILE *p = popen(line, "r");
    cr_assert_not_null(p);
    size_t n = fread(out, 1, cap - 1, p);
    out[n] = 0;
    pclose(p);
    unlink(path);
}

/* Regression: a resume's stop signalled the trial's process group only, and said "gone" when
 * nothing of the group was left, though a daemon the trial had started with setsid() (a group
 * of its own) still ran with the launch's mark. Now the marked processes are stopped with the
 * group, a TERM they ignore answered by the KILL; another launch's are left alone. */
Test(orphans, the_stop_reaches_a_marked_daemon_of_a_group_that_is_gone)
{
    /* zsh, where installed: a login shell that splits no unquoted `$k` (regression: the stop
     * ran in it as given, and the daemon ran on; it now runs itself under sh) */
    static const char *const shells[] = {"sh", "bash", "zsh"};
    for (size_t i = 0; i < 3; i++) {
        if (i == 2 && access("/usr/bin/zsh", X_OK) != 0 && access("/bin/zsh", X_OK) != 0)
            continue;
        const char *mark = i == 2 ? test_mark(0xd01) : i ? test_mark(0xb01) : test_mark(0xa01);
        pid_t gone = fork();
        cr_assert(gone >= 0);
        if (gone == 0)
            _exit(0);
        waitpid(gone, NULL, 0); /* its group, the trial's, holds nothing now */
        pid_t d = marked_daemon(mark, 1);
        pid_t o = marked_daemon(test_mark(0xc01), 0);
        OrphanList l = {0};
        cr_assert_eq(orphans_add(&l, 3, "h1", gone, mark), 0);
        char out[256], want[64];
        stop_answer(shells[i], &l, out, sizeof out);
        orphans_clear(&l);
        int ds = ended_status(d);
        pid_t ow = waitpid(o, NULL, WNOHANG);
        ownkill_child(d, SIGKILL), ownkill_child(o, SIGKILL);
        while (waitpid(-1, NULL, WNOHANG) > 0)
            ;
        snprintf(want, sizeof want, "%ld stopped\n", (long)gone);
        cr_assert_str_eq(out, want, "%s", shells[i]);
        cr_assert(ds != -1, "%s: the marked daemon runs on after the stop", shells[i]);
        cr_assert(WIFSIGNALED(ds) && WTERMSIG(ds) == SIGKILL, "%s: status %d", shells[i], ds);
        cr_assert_eq(ow, 0, "%s: another launch's process was stopped", shells[i]);
    }
}

/* Regression (pidaudit): the stop KILLed group g 2 s after its TERM whenever the group still
 * held a live process (`live g`), though its TERM may have ended the launch's group and its
 * number gone to another's (every command sshd starts leads one). Here group g's leader is a
 * live process that carries no mark and ignores TERM, and the one marked process of the group
 * ends at the TERM: from then on the group is not the launch's (no process of the mark in it,
 * pid g no zombie), as one that took the number, and it is neither waited on nor KILLed.
 * Fails on the old code (the leader is KILLed). */
Test(orphans, the_kill_spares_a_group_that_is_no_longer_the_launchs)
{
    const char *mark = test_mark(0xe01);
    pid_t g = fork();
    cr_assert(g >= 0);
    if (g == 0) {
        setpgid(0, 0);
        signal(SIGTERM, SIG_IGN);
        for (;;)
            pause();
    }
    setpgid(g, g); /* whichever of the two runs first */
    pid_t m = marked_member(mark, g);
    OrphanList l = {0};
    cr_assert_eq(orphans_add(&l, 3, "h1", g, mark), 0);
    char out[256], want[64];
    stop_answer("sh", &l, out, sizeof out);
    orphans_clear(&l);
    int ms = ended_status(m);
    pid_t gw = waitpid(g, NULL, WNOHANG);
    if (gw == 0)
        kill(g, SIGKILL);
    if (ms == -1)
        kill(m, SIGKILL);
    while (waitpid(-1, NULL, WNOHANG) > 0)
        ;
    snprintf(want, sizeof want, "%ld stopped\n", (long)g);
    cr_assert_str_eq(out, want);
    cr_assert(ms != -1 && WIFSIGNALED(ms) && WTERMSIG(ms) == SIGTERM, "status %d", ms);
    cr_assert_eq(gw, 0, "the group no longer the launch's was KILLed");
}

/* Nothing of the group and nothing marked: "gone", as before. */
Test(orphans, a_group_that_left_nothing_marked_is_gone)
{
    pid_t gone = fork();
    cr_assert(gone >= 0);
    if (gone == 0)
        _exit(0);
    waitpid(gone, NULL, 0);
    OrphanList l = {0};
    cr_assert_eq(orphans_add(&l, 3, "h1", gone, test_mark(0xd01)), 0);
    char out[256], want[64];
    stop_answer("sh", &l, out, sizeof out);
    orphans_clear(&l);
    snprintf(want, sizeof want, "%ld gone\n", (long)gone);
    cr_assert_str_eq(out, want);
}

/* A process (sleep) leading a group of its own whose environment holds only `entry`: a
 * trial's command as the orphan stop meets it. The caller reaps it. */
static pid_t group_with(const char *entry)
{
    pid_t c = fork();
    cr_assert(c >= 0);
    if (c == 0) {
        setpgid(0, 0);
        char *envp[] = {(char *)entry, NULL};
        execle("/bin/sleep", "sleep", "300", (char *)NULL, envp);
        _exit(127);
    }
    setpgid(c, c);
    char path[64], name[32];
    snprintf(path, sizeof path, "/proc/%ld/comm", (long)c);
    for (;;) { /* its environment is the exec's once it is sleep */
        FILE *f = fopen(path, "r");
        int got = f && fgets(name, sizeof name, f);
        if (f)
            fclose(f);
        if (got && strcmp(name, "sleep\n") == 0)
            return c;
        usleep(10 * 1000);
    }
}

/* Whether a group is the launch's is read off `marked`'s one look (before: a tr | grep of
 * each member's environ beside it): a group whose process carries the mark is stopped, one
 * whose process carries another's is gone to this stop and left running. */
Test(orphans, a_group_is_the_launchs_when_a_process_of_it_carries_the_mark)
{
    static const char *const shells[] = {"sh", "bash"};
    for (size_t i = 0; i < 2; i++) {
        const char *mark = i ? test_mark(0xb02) : test_mark(0xa02);
        char entry[64], other_entry[64];
        snprintf(entry, sizeof entry, "TUNEDECK_RUN_MARK=%s", mark);
        snprintf(other_entry, sizeof other_entry, "TUNEDECK_RUN_MARK=%s", test_mark(0xc02));
        pid_t ours = group_with(entry);
        pid_t other = group_with(other_entry);
        OrphanList l = {0};
        cr_assert_eq(orphans_add(&l, 3, "h1", ours, mark), 0);
        cr_assert_eq(orphans_add(&l, 3, "h1", other, mark), 0);
        char out[256], want[96];
        stop_answer(shells[i], &l, out, sizeof out);
        orphans_clear(&l);
        int os = ended_status(ours);
        pid_t ow = waitpid(other, NULL, WNOHANG);
        ownkill_child(ours, SIGKILL), ownkill_child(other, SIGKILL);
        while (waitpid(-1, NULL, WNOHANG) > 0)
            ;
        snprintf(want, sizeof want, "%ld stopped\n%ld gone\n", (long)ours, (long)other);
        cr_assert_str_eq(out, want, "%s", shells[i]);
        cr_assert(os != -1 && WIFSIGNALED(os) && WTERMSIG(os) == SIGTERM, "%s", shells[i]);
        cr_assert_eq(ow, 0, "%s: another launch's group was stopped", shells[i]);
    }
}

/* A group journaled before marks is the launch's by TUNEDECK_TRIAL, the entry whole: trial 3
 * is not trial 31, also where grep has no -z and `carrying` matches text inside the environ
 * (a grep that refuses -z: it reads each one it lists again, whole). */
Test(orphans, a_group_journaled_without_a_mark_is_taken_by_its_whole_trial_number)
{
    char dir[] = "/tmp/test-orphans-g-XXXXXX", grep[64], shell[128];
    cr_assert_not_null(mkdtemp(dir));
    snprintf(grep, sizeof grep, "%s/grep", dir);
    FILE *g = fopen(grep, "w");
    cr_assert_not_null(g);
    fprintf(g, "#!/bin/sh\ncase \"$1\" in -*z*) exit 2 ;; esac\nexec /bin/grep \"$@\"\n");
    fclose(g);
    cr_assert_eq(chmod(grep, 0755), 0);
    const char *shells[] = {"sh", "bash", shell};
    snprintf(shell, sizeof shell, "PATH=%s:/usr/bin:/bin sh", dir);
    for (size_t i = 0; i < 3; i++) {
        pid_t three = group_with("TUNEDECK_TRIAL=3"), other = group_with("TUNEDECK_TRIAL=31");
        OrphanList l = {0};
        cr_assert_eq(orphans_add(&l, 3, "h1", three, NULL), 0);
        cr_assert_eq(orphans_add(&l, 3, "h1", other, NULL), 0);
        char out[256], want[96];
        stop_answer(shells[i], &l, out, sizeof out);
        orphans_clear(&l);
        int ts = ended_status(three);
        pid_t ow = waitpid(other, NULL, WNOHANG);
        ownkill_child(three, SIGKILL), ownkill_child(other, SIGKILL);
        while (waitpid(-1, NULL, WNOHANG) > 0)
            ;
        snprintf(want, sizeof want, "%ld stopped\n%ld gone\n", (long)three, (long)other);
        cr_assert_str_eq(out, want, "%s", shells[i]);
        cr_assert(ts != -1 && WIFSIGNALED(ts) && WTERMSIG(ts) == SIGTERM, "%s", shells[i]);
        cr_assert_eq(ow, 0, "%s: trial 31's group was stopped", shells[i]);
    }
    unlink(grep);
    rmdir(dir);
}

/* Regression: a sweep's stop asked a second time (orphans_stop_retry_when_back: the first ask
 * ended in an SSH failure) took every line of that second ask over the first's, so a group the
 * first ask had stopped, and said so before its connection dropped, read "gone" once the
 * second found nothing of it: the stop's count, report and journal lost that it was stopped.
 * Here the first ask says "A stopped", then, while it waits out the 2 s before its KILL of B (a
 * marked daemon that ignores TERM), its connection is cut (the sshd process that serves it
 * KILLed); the pool connects again and the second ask finds nothing of A. */
static Sshd retry_sshd;
static pid_t retry_daemons[2];

static void retry_fini(void)
{
    for (int i = 0; i < 2; i++)
        if (ownkill_child(retry_daemons[i], SIGKILL) == 0) /* a test that reaped it sent none */
            waitpid(retry_daemons[i], NULL, 0);
    sshd_fixture_stop(&retry_sshd);
}

/* The sshd processes that serve a connection of d's: the listener's children. */
static int cut_connections(const Sshd *d)
{
    int n = 0;
    DIR *proc = opendir("/proc");
    cr_assert_not_null(proc);
    for (struct dirent *e; (e = readdir(proc));) {
        char path[300], line[512];
        snprintf(path, sizeof path, "/proc/%s/stat", e->d_name);
        FILE *f = fopen(path, "r");
        int got = f && fgets(line, sizeof line, f);
        if (f)
            fclose(f);
        char *tail = got ? strrchr(line, ')') : NULL;
        long pid = atol(e->d_name), ppid = 0;
        if (tail && sscanf(tail, ") %*c %ld", &ppid) == 1 && ppid == (long)d->pid && pid > 0 &&
            kill((pid_t)pid, SIGKILL) == 0)
            n++;
    }
    closedir(proc);
    return n;
}

static int first_line_came(void *ctx)
{
    return ((const OrphanList *)ctx)->items[0].result[0] != 0;
}

Test(orphans, a_second_ask_that_finds_nothing_keeps_the_first_asks_stopped,
     .timeout = TEST_TIMEOUT_S, .fini = retry_fini)
{
    retry_daemons[0] = marked_daemon(test_mark(0xe01), 0);
    retry_daemons[1] = marked_daemon(test_mark(0xe02), 1);
    sshd_fixture_start(&retry_sshd, "");
    HostPool *pool = sshd_fixture_pool(&retry_sshd, "h1");
    OrphanList l = {0};
    cr_assert_eq(orphans_add(&l, 1, "h1", (long)retry_daemons[0], test_mark(0xe01)), 0);
    cr_assert_eq(orphans_add(&l, 1, "h1", (long)retry_daemons[1], test_mark(0xe02)), 0);
    OrphanStop *st = orphans_stop_begin(pool, &l, 15);
    cr_assert_not_null(st);
    orphans_stop_retry_when_back(st);
    hostpool_run_until(pool, first_line_came, &l, orphans_stop_deadline(st));
    cr_assert_str_eq(l.items[0].result, "stopped");
    /* B's TERM is ignored: the first ask is in its 2 s before the KILL, no line of B's yet */
    cr_assert_str_eq(l.items[1].result, "", "the first ask ended before its connection was cut");
    cr_assert_gt(cut_connections(&retry_sshd), 0);
    orphans_stop_wait(st);
    int stopped = orphans_stop_end(st);
    cr_assert(l.items[0].answered, "no second ask answered (%s)", l.items[0].result);
    cr_assert_str_eq(l.items[0].result, "stopped");
    cr_assert(strcmp(l.items[1].result, "stopped") == 0 || strcmp(l.items[1].result, "gone") == 0,
              "%s", l.items[1].result);
    cr_assert_eq(stopped, 1 + (strcmp(l.items[1].result, "stopped") == 0));
    for (int i = 0; i < 2; i++) {
        cr_assert_neq(ended_status(retry_daemons[i]), -1, "daemon %d runs on", i);
        retry_daemons[i] = 0;
    }
    orphans_clear(&l);
    hostpool_free(pool);
}
