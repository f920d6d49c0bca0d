/* The session's Slurm allocation across a release that fails (the login node, here the
 * controller, not answering its scancel) and the resume that releases it; Slurm's commands
 * stood in (tests/support/standins.h), run here as for an inventory without a login node. */
#include <criterion/criterion.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "remote/session/session.h"
#include "tests/support/standins.h"
#include "tests/support/timeout.h"

#define TINY_JOB TUNEDECK_SOURCE_DIR "/examples/tiny-job.json"

static char sdir[] = "/tmp/tunedeck-session-alloc.XXXXXX";

/* salloc grants job N from $D/next; scancel records its arguments, and fails as a
 * controller that does not answer while $D/down exists, else names the job under -v. */
static const char *const TABLE[][2] = {
    {"sinfo", "echo 'n1|4|2000|gpu:t4:2|idle|t4|t4|0/4/0/4|n1|none'\n"
              "echo 'n2|4|2000|gpu:t4:2|idle|t4|t4|0/4/0/4|n2|none'\n"},
    {"salloc", "echo \"$*\" >> \"$D/sallocs\"\n"
               "n=$(cat \"$D/next\"); echo $((n + 1)) > \"$D/next\"\n"
               "echo \"salloc: Granted job allocation $n\" >&2\n"},
    {"scancel", "echo \"$*\" >> \"$D/calls\"\n"
                "if [ -e \"$D/down\" ]; then\n"
                "  echo 'slurm_load_jobs error: Unable to contact slurm controller (connect "
                "failure)' >&2; exit 1\nfi\n"
                "for a; do last=$a; done\n"
                "[ \"$1\" = -v ] && echo \"scancel: Terminating job $last\" >&2\nexit 0\n"},
};

static void say(void *ud, const char *line)
{
    char *said = ud;
    snprintf(said + strlen(said), 4096 - strlen(said), "%s\n", line);
}

static Session *open_one(const char *dir, const char *inv, const char *resume, char *said)
{
    Session *s = session_new(1, dir);
    SessionSpec spec = {.cluster = inv,
                        .job = TINY_JOB,
                        .launcher = "slurm",
                        .optimizer = "random",
                        .seed = 1,
                        .budget = 2,
                        .trial_timeout_s = 60,
                        .on_report = say,
                        .report_userdata = said};
    Error err;
    if (resume)
        cr_assert_eq(session_resume(s, resume, &spec, 0, &err), 0, "%s", err.msg);
    spec.on_report = say;
    spec.report_userdata = said;
    cr_assert_eq(session_open(s, &spec, &err), 0, "%s", err.msg);
    return s;
}

/* The walk on the harness: the login node's sshd stopped, Ctrl-C during the wait for it; the
 * allocation held its nodes until its time limit, said nowhere, and nothing kept its id. */
Test(session_alloc, a_release_that_fails_is_said_kept_and_done_by_the_resume,
     .timeout = TEST_TIMEOUT_S)
{
    unsetenv("SLURM_JOB_ID");
    standins_install(sdir, TABLE, sizeof TABLE / sizeof *TABLE);
    standins_put(sdir, "next", "77\n");
    char dir[4096], inv[4096], said[4096] = "", name[64], line[256];
    snprintf(dir, sizeof dir, "%s/sessions", sdir);
    snprintf(inv, sizeof inv, "%s/inv.json", sdir);
    standins_put(sdir, "inv.json",
                 "{\"name\": \"t\", \"backend\": \"slurm\", \"partition\": \"t4\", "
                 "\"trial\": {\"command\": \"true\"}}\n");
    snprintf(name, sizeof name, "tunedeck-tune-%ld", (long)getpid());
    Error err;

    Session *a = open_one(dir, inv, NULL, said);
    cr_assert_eq(session_journal_begin(a, &err), 0, "%s", err.msg);
    char path[4096];
    snprintf(path, sizeof path, "%s", tune_journal_path(a->journal));

    /* A second resume while the session runs is refused before it opens anything: its
     * allocation, in use, is no leftover (the refusal itself: a_running_session_...). */
    Session *b = session_new(1, dir);
    SessionSpec bs = {.budget = 2};
    cr_assert_eq(session_resume(b, path, &bs, 0, &err), -1, "the journal is the running session's");
    session_free(b);
    char *calls = standins_recorded(sdir, "calls");
    cr_assert_str_eq(calls, "", "nothing is cancelled");
    free(calls);

    standins_put(sdir, "down", "");
    session_close(a);
    const char *left = session_alloc_left(a);
    cr_assert_not_null(left, "the failed release is said");
    snprintf(line, sizeof line,
             "the session's allocation, Slurm job 77 (%s), was not released: ", name);
    cr_assert(strstr(left, line), "%s", left);
    cr_assert(strstr(left, "Unable to contact slurm controller"), "%s", left);
    cr_assert(strstr(left, "release it with `scancel 77` (or `tunedeck tune --resume "), "%s",
              left);
    session_free(a);

    unlink(strcat(strcpy(line, sdir), "/down"));
    Session *c = open_one(dir, inv, path, said);
    snprintf(line, sizeof line,
             "the allocation an earlier run of this session left, Slurm job 77 (%s), is "
             "released (scancel on here)\n",
             name);
    cr_assert(strstr(said, line), "%s", said);
    cr_assert_eq(session_journal_begin(c, &err), 0, "%s", err.msg);
    session_free(c); /* releases 78 */
    calls = standins_recorded(sdir, "calls");
    snprintf(line, sizeof line, "77\n-v --me --name=%s 77\n78\n", name);
    cr_assert_str_eq(calls, line);
    free(calls);

    /* the journal: each allocation and its release, so a later resume cancels nothing */
    FILE *f = fopen(path, "r");
    cr_assert_not_null(f);
    char text[65536];
    size_t n = fread(text, 1, sizeof text - 1, f);
    text[n] = 0;
    fclose(f);
    cr_assert(strstr(text, "{\"event\":\"slurm_allocation\",\"job\":\"77\""), "%s", text);
    cr_assert(strstr(text, "{\"event\":\"slurm_allocation_released\",\"job\":\"77\","
                           "\"result\":\"released\""),
              "%s", text);
    cr_assert(strstr(text, "{\"event\":\"slurm_allocation_released\",\"job\":\"78\","
                           "\"result\":\"released\""),
              "%s", text);
    standins_remove(sdir);
}

static char *read_all(const char *path)
{
    FILE *f = fopen(path, "r");
    cr_assert_not_null(f, "%s", path);
    static char text[65536];
    size_t n = fread(text, 1, sizeof text - 1, f);
    text[n] = 0;
    fclose(f);
    return strdup(text);
}

/* `tune --resume ID` of a session still running: refused before anything reaches the cluster
 * (its own salloc took, or waited for, the partition's nodes for nothing, and only then did
 * the journal's lock refuse it), naming the journal and the process that holds it; the
 * journal is left as it was. Here that process is this one, through another descriptor. */
Test(session_alloc, a_running_session_is_refused_before_its_resume_runs_salloc,
     .timeout = TEST_TIMEOUT_S)
{
    unsetenv("SLURM_JOB_ID");
    standins_install(sdir, TABLE, sizeof TABLE / sizeof *TABLE);
    standins_put(sdir, "next", "77\n");
    char dir[4096], inv[4096], said[4096] = "", want[8192];
    snprintf(dir, sizeof dir, "%s/sessions", sdir);
    snprintf(inv, sizeof inv, "%s/inv.json", sdir);
    standins_put(sdir, "inv.json",
                 "{\"name\": \"t\", \"backend\": \"slurm\", \"partition\": \"t4\", "
                 "\"trial\": {\"command\": \"true\"}}\n");
    Error err;
    Session *a = open_one(dir, inv, NULL, said);
    cr_assert_eq(session_journal_begin(a, &err), 0, "%s", err.msg);
    char *sallocs = standins_recorded(sdir, "sallocs");
    cr_assert_eq(strchr(sallocs, '\n'), strrchr(sallocs, '\n'), "one salloc: %s", sallocs);
    free(sallocs);
    char id[JOURNAL_ID_MAX];
    snprintf(id, sizeof id, "%s", tune_journal_id(a->journal));
    char *before = read_all(tune_journal_path(a->journal));

    /* as cmd_tune goes on: resume, then open (the salloc) when the resume let it */
    Session *b = session_new(1, dir);
    SessionSpec spec = {.budget = 2, .on_report = say, .report_userdata = said};
    int rc = session_resume(b, id, &spec, 0, &err);
    Error open_err;
    if (rc == 0 && session_open(b, &spec, &open_err) == 0)
        session_journal_begin(b, &open_err);
    sallocs = standins_recorded(sdir, "sallocs");
    cr_assert_eq(strchr(sallocs, '\n'), strrchr(sallocs, '\n'),
                 "the refused resume ran no salloc: %s", sallocs);
    free(sallocs);
    cr_assert_eq(rc, -1, "the resume of a running session is refused at once");
    snprintf(want, sizeof want, "session %s is still running (journal %s is locked by pid %ld)", id,
             tune_journal_path(a->journal), (long)getpid());
    cr_assert_str_eq(err.msg, want);
    cr_assert(tune_journal_running(b->journal));
    session_free(b);
    char *after = read_all(tune_journal_path(a->journal));
    cr_assert_str_eq(after, before, "nothing is written to the running session's journal");
    free(after);
    free(before);
    char *calls = standins_recorded(sdir, "calls");
    cr_assert_str_eq(calls, "", "nothing is cancelled");
    free(calls);
    session_free(a);
    standins_remove(sdir);
}

/* A Slurm inventory's nodes are reached through Slurm only: an SSH launcher, asked for with
 * --launcher or the inventory's trial.launch, is refused before any allocation (per-host
 * tried ssh to each node's NodeAddr, and every trial failed "unreachable"). */
Test(session_alloc, an_ssh_launcher_on_a_slurm_inventory_is_refused, .timeout = TEST_TIMEOUT_S)
{
    unsetenv("SLURM_JOB_ID");
    standins_install(sdir, TABLE, sizeof TABLE / sizeof *TABLE);
    standins_put(sdir, "next", "77\n");
    char dir[4096], inv[4096];
    snprintf(dir, sizeof dir, "%s/sessions", sdir);
    snprintf(inv, sizeof inv, "%s/inv.json", sdir);
    standins_put(sdir, "inv.json",
                 "{\"name\": \"t\", \"backend\": \"slurm\", \"partition\": \"t4\", "
                 "\"trial\": {\"command\": \"true\"}}\n");
    const char *launchers[] = {"per-host", "single"};
    for (int i = 0; i < 2; i++) {
        Session *s = session_new(1, dir);
        SessionSpec spec = {.cluster = inv,
                            .job = TINY_JOB,
                            .launcher = launchers[i],
                            .optimizer = "random",
                            .budget = 1};
        Error err;
        cr_assert_eq(session_open(s, &spec, &err), -1, "--launcher %s", launchers[i]);
        cr_assert(strstr(err.msg, "is a Slurm inventory, whose nodes are reached through Slurm "
                                  "only"),
                  "%s", err.msg);
        session_free(s);
    }
    char *sallocs = standins_recorded(sdir, "sallocs");
    cr_assert_str_eq(sallocs, "", "no allocation asked");
    free(sallocs);
    standins_remove(sdir);
}
