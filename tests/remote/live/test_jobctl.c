#include <criterion/criterion.h>
#include <netinet/in.h>
#include <math.h>
#include <signal.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <unistd.h>

#include "core/base/clock.h"
#include "remote/launch/orphans.h"
#include "remote/live/jobctl.h"
#include "remote/ssh/groupstop.h"
#include "remote/ssh/rexec.h"
#include "tests/support/ssh_hermetic.h"

/* A line of text with no NUL, as the channel hands it with its length. */
#define WORDS(w, line) jobctl_words_stderr((w), (line), strlen(line))

/* A run's progress before its first line says "not given" as JobProgress documents it,
 * not a loss of 0 (a loss may be 0 or negative: only NAN says none). */
Test(jobctl, progress_before_any_line_gives_nothing)
{
    JobProgress p = jobctl_progress_none();
    cr_assert(isnan(p.loss));
    cr_assert_eq(p.epoch, -1);
    cr_assert_eq(p.examples_per_s, -1);
    cr_assert_eq(p.seen, 0);
    cr_assert_eq(p.refused, 0);
    cr_assert_str_eq(p.first_refused, "");
}

/* Regression: a live job's refused line (a NaN loss) was dropped without a word. */
Test(jobctl, the_first_refused_line_is_kept_terminal_safe_and_the_rest_counted)
{
    JobProgress p = jobctl_progress_none();
    jobctl_progress_refused(&p, "progress: field 'loss': found NaN \x1b[2J(training diverged?)");
    jobctl_progress_refused(&p, "a later one");
    cr_assert_eq(p.refused, 2);
    cr_assert(strstr(p.first_refused, "found NaN") && !strchr(p.first_refused, '\x1b'), "%s",
              p.first_refused);
    cr_assert(strstr(p.first_refused, "(training diverged?)"), "%s", p.first_refused);
}

Test(jobctl, placeholders_are_filled_quoted)
{
    static const int ids[] = {0, 1};
    const JobHost hosts[] = {{"g2-0", 2, ids}, {"g2-1", 2, ids}};
    JobAlloc a = {.gpus = 4, .hosts = hosts, .n_hosts = 2, .resume = "/ck/step 10"};
    Error e;
    char *c = jobctl_command("train --gpus {gpus} --hosts {hosts} --resume {resume}", &a, &e);
    cr_assert_not_null(c, "%s", e.msg);
    cr_assert_str_eq(c, "train --gpus '4' --hosts 'g2-0,g2-1' --resume '/ck/step 10'");
    free(c);
}

Test(jobctl, hostile_resume_path_stays_one_argument)
{
    JobAlloc a = {.gpus = 1, .resume = "'; $(touch /tmp/x)"};
    Error e;
    char *c = jobctl_command("run {resume}", &a, &e);
    cr_assert_str_eq(c, "run ''\\''; $(touch /tmp/x)'");
    free(c);
}

Test(jobctl, empty_resume_is_an_empty_argument)
{
    JobAlloc a = {.gpus = 1, .resume = ""};
    Error e;
    char *c = jobctl_command("run {resume} {gpus}", &a, &e);
    cr_assert_str_eq(c, "run '' '1'");
    free(c);
}

Test(jobctl, unknown_placeholder_is_refused)
{
    JobAlloc a = {.gpus = 1};
    Error e;
    cr_assert_null(jobctl_command("run {nodes}", &a, &e));
    cr_assert(strstr(e.msg, "{nodes}") && strstr(e.msg, "{gpus}"), "%s", e.msg);
}

Test(jobctl, template_without_placeholders_is_unchanged)
{
    JobAlloc a = {.gpus = 1};
    Error e;
    char *c = jobctl_command("python train.py", &a, &e);
    cr_assert_str_eq(c, "python train.py");
    free(c);
}

/* Regression: literal text between placeholders was cut at 4095 bytes. */
Test(jobctl, long_literal_text_is_kept_whole)
{
    size_t n = 10000;
    char *t = malloc(n + 16);
    memset(t, 'x', n);
    strcpy(t + n, " {gpus}");
    JobAlloc a = {.gpus = 2};
    Error e;
    char *c = jobctl_command(t, &a, &e);
    cr_assert_not_null(c, "%s", e.msg);
    cr_assert_eq(strlen(c), n + 4, "length %zu", strlen(c));
    cr_assert_str_eq(c + n, " '2'");
    free(c);
    free(t);
}

Test(jobctl, long_unknown_placeholder_is_named_whole)
{
    JobAlloc a = {.gpus = 1};
    Error e;
    cr_assert_null(jobctl_command("run {a_placeholder_name_longer_than_thirty_two_bytes}", &a, &e));
    cr_assert(strstr(e.msg, "{a_placeholder_name_longer_than_thirty_two_bytes}"), "%s", e.msg);
}

/* A two-host allocation, 2 GPUs on the first (indices 1 and 3), 1 on the second (index 0). */
static const int first_ids[] = {1, 3}, second_ids[] = {0};
static const JobHost two_hosts[] = {{"10.0.0.1", 2, first_ids}, {"node b", 1, second_ids}};

Test(jobctl, rendezvous_placeholders_describe_this_host)
{
    JobAlloc a = {.gpus = 3, .hosts = two_hosts, .n_hosts = 2, .node_rank = 1,
                  .master_port = 29517, .resume = ""};
    Error e;
    char *c = jobctl_command("run {master_addr}:{master_port} n={nnodes} r={node_rank} "
                             "g={gpus_per_host} ids={gpu_ids} f={hostfile}",
                             &a, &e);
    cr_assert_not_null(c, "%s", e.msg);
    cr_assert_str_eq(c, "run '10.0.0.1':'29517' n='2' r='1' g='1' ids='0' f='tunedeck-hostfile'");
    free(c);
    a.node_rank = 0;
    c = jobctl_command("{gpus_per_host} {gpu_ids}", &a, &e);
    cr_assert_str_eq(c, "'2' '1,3'");
    free(c);
}

Test(jobctl, hostfile_text_is_one_quoted_word_of_host_slots_lines)
{
    JobAlloc a = {.gpus = 3, .hosts = two_hosts, .n_hosts = 2};
    Error e;
    char *c = jobctl_command("printf '%s\\n' {hostfile_text}", &a, &e);
    cr_assert_str_eq(c, "printf '%s\\n' '10.0.0.1:2\nnode b:1'");
    free(c);
}

Test(jobctl, host_slots_are_the_hostfile_lines_joined_by_commas)
{
    JobAlloc a = {.gpus = 3, .hosts = two_hosts, .n_hosts = 2};
    Error e;
    char *c = jobctl_command("horovodrun -np {gpus} -H {host_slots}", &a, &e);
    cr_assert_str_eq(c, "horovodrun -np '3' -H '10.0.0.1:2,node b:1'");
    free(c);
}

Test(jobctl, hosts_are_addresses_quoted_as_one_word)
{
    JobAlloc a = {.gpus = 3, .hosts = two_hosts, .n_hosts = 2};
    Error e;
    char *c = jobctl_command("mpirun -H {hosts}", &a, &e);
    cr_assert_str_eq(c, "mpirun -H '10.0.0.1,node b'");
    free(c);
}

/* The first line a run printed stays its first (where it started), however many come in one
 * read; step, loss and the rest are the latest. */
Test(jobctl, progress_keeps_the_first_line_and_the_latest)
{
    JobProgress p = jobctl_progress_none();
    cr_assert(isnan(p.first_loss));
    TrialEvent a = {
        .kind = EVENT_PROGRESS, .step = 30822, .epoch = 30.1, .loss = 0.4, .examples_per_s = 900};
    TrialEvent b = {
        .kind = EVENT_PROGRESS, .step = 31062, .epoch = 30.3, .loss = 0.12, .examples_per_s = 6e4};
    jobctl_progress_note(&p, &a);
    jobctl_progress_note(&p, &b);
    cr_assert_eq(p.seen, 2);
    cr_assert_eq(p.first_step, 30822);
    cr_assert_float_eq(p.first_loss, 0.4, 1e-12);
    cr_assert_eq(p.step, 31062);
    cr_assert_float_eq(p.loss, 0.12, 1e-12);
    cr_assert_float_eq(p.epoch, 30.3, 1e-12);
    cr_assert_float_eq(p.examples_per_s, 6e4, 1e-9);
}

/* Regression: a job whose last stderr output had no newline (`ValueError: x`) had the wrapping
 * shell's note glued to it on one line; that line was not taken for the note, became the job's
 * last words, and a leftover's "Terminated" after it then replaced them. The text before the
 * note is the job's own; what follows is the leftovers'. Fails on the old code ("Terminated"). */
Test(jobctl, a_note_glued_to_the_jobs_last_output_still_ends_its_words)
{
    JobWords w = {0};
    WORDS(&w, "Traceback (most recent call last):");
    WORDS(&w, "ValueError: x" GROUPSTOP_LEFT_NOTE "123 python); " GROUPSTOP_STOPPING);
    cr_assert_str_eq(w.text, "ValueError: x");
    WORDS(&w, "Terminated");
    WORDS(&w, GROUPSTOP_ENDED);
    cr_assert_str_eq(w.text, "ValueError: x");
}

/* Regression: the end line undid the note (left_noted reset), so a stray the note named that
 * printed after the end line (its "Terminated" on the KILL's way) became the job's last words
 * again; launch_ssh.c never undid it. A run's words start afresh at its restart (jobctl_restart
 * zeroes them), not at the end line. Fails on the old code ("Terminated"). */
Test(jobctl, a_stray_that_prints_after_the_end_line_is_not_the_jobs_last_word)
{
    JobWords w = {0};
    WORDS(&w, "ValueError: bad shape");
    WORDS(&w, GROUPSTOP_LEFT_NOTE "123 python); " GROUPSTOP_STOPPING);
    WORDS(&w, GROUPSTOP_ENDED);
    WORDS(&w, "Terminated");
    cr_assert_str_eq(w.text, "ValueError: bad shape");
}

/* Regression: what a job left printed after the wrapping shell's note on it (a TERMed
 * leftover's "Terminated") replaced the job's own last words: a failure read `exited 1:
 * Terminated`. Lines between the note and the end line are the leftovers'; the job's own last
 * line, and a later run's words, still count. Fails when the note does not end the job's words
 * (checked: the old filter, moved here, kept "Terminated"). */
Test(jobctl, what_the_job_left_prints_after_the_note_is_not_its_last_word)
{
    JobWords w = {0};
    WORDS(&w, "Traceback (most recent call last):");
    WORDS(&w, "ValueError: bad shape");
    WORDS(&w, GROUPSTOP_LEFT_NOTE "123 python); " GROUPSTOP_STOPPING);
    WORDS(&w, "Terminated");
    WORDS(&w, "loader: shutting down" GROUPSTOP_ENDED);
    cr_assert_str_eq(w.text, "ValueError: bad shape");
    JobWords own = {0};
    WORDS(&own, "first");
    WORDS(&own, "no newline at its end" GROUPSTOP_ENDED);
    cr_assert_str_eq(own.text, "no newline at its end");
    WORDS(&own, "after the end line");
    cr_assert_str_eq(own.text, "after the end line");
}

/* A live job's stderr line is read with the length the channel gave, as a trial's is
 * (groupstop_own_part): a NUL the job printed before the wrapping shell's end line ends its
 * words, and the end line is still found at the line's tail. (Not a regression test: the
 * words stop at the NUL either way, and the note is not looked for past a NUL; the length
 * makes the two readers of that stderr one reading.) */
Test(jobctl, a_nul_before_the_end_line_ends_the_jobs_words)
{
    JobWords e = {0};
    WORDS(&e, "Traceback (most recent call last):");
    static const char end[] = "bad\0byte" GROUPSTOP_ENDED;
    jobctl_words_stderr(&e, end, sizeof end - 1);
    cr_assert_str_eq(e.text, "bad");
}

#define RUN_MARK "0123456789abcdef0123456789abcdef"

/* Regression: nothing held jobctl_signal's SIGKILL to groupstop_kill_command: a `kill -KILL
 * -PGID` put back (the group alone: the wrapping shell dies, a setsid daemon of the job that
 * ignores TERM runs on) passed every test. */
Test(jobctl, a_kill_of_a_marked_run_is_groupstops_kill_and_reaches_its_mark)
{
    Error err;
    char *text = jobctl_signal_text(SIGKILL, 4242, RUN_MARK, &err);
    char *want = groupstop_kill_command(4242, RUN_MARK);
    cr_assert_not_null(text, "%s", err.msg);
    cr_assert_not_null(want);
    cr_assert_str_eq(text, want);
    cr_assert_not_null(strstr(text, "marked " RUN_MARK));
    free(text);
    free(want);
}

/* A TERM of a marked run is groupstop's signal, sent only while the group is still the run's
 * (test_groupstop.c runs it); an unmarked run's signals go to the group as they are. */
Test(jobctl, a_term_and_an_unmarked_kill_go_to_the_group_alone)
{
    Error err;
    char *term = jobctl_signal_text(SIGTERM, 4242, RUN_MARK, &err);
    char *want = groupstop_signal_command(4242, RUN_MARK, "TERM");
    char *kill_none = jobctl_signal_text(SIGKILL, 4242, "", &err);
    char *kill_null = jobctl_signal_text(SIGKILL, 4242, NULL, &err);
    cr_assert_not_null(want);
    cr_assert_str_eq(term, want);
    cr_assert_not_null(strstr(term, "ours 4242 $k && kill -TERM -4242"), "%s", term);
    free(want);
    cr_assert_str_eq(kill_none, "kill -KILL -4242");
    cr_assert_str_eq(kill_null, "kill -KILL -4242");
    free(term);
    free(kill_none);
    free(kill_null);
    cr_assert_null(jobctl_signal_text(12345, 4242, RUN_MARK, &err));
    cr_assert_not_null(strstr(err.msg, "unknown signal 12345"), "%s", err.msg);
}

/* Regression: nothing held that the run's mark is exported after the guard started (whose
 * environment must carry none: `marked` would find it, and the orphan stop take the guard for
 * the run's), nor that it is exported at all. */
Test(jobctl, the_launch_exports_the_mark_after_the_guard_and_none_without_one)
{
    char *text = jobctl_launch_text("python train.py", RUN_MARK);
    cr_assert_not_null(text);
    const char *guard = strstr(text, "export " GROUPSTOP_GUARD_VAR);
    const char *mark = strstr(text, " TUNEDECK_RUN_MARK='" RUN_MARK "'; export TUNEDECK_RUN_MARK;");
    cr_assert_not_null(guard, "%s", text);
    cr_assert_not_null(mark, "%s", text);
    cr_assert_gt(mark, guard, "%s", text);
    cr_assert_null(strstr(strstr(text, RUN_MARK) + 1, RUN_MARK), "the mark is given once: %s",
                   text);
    cr_assert_not_null(strstr(text, "exec sh -c "), "%s", text);
    free(text);
    for (int n = 0; n < 2; n++) {
        text = jobctl_launch_text("python train.py", n ? "" : NULL);
        cr_assert_not_null(text);
        cr_assert_null(strstr(text, "export TUNEDECK_RUN_MARK"), "%s", text);
        free(text);
    }
}

/* A mark that is not 32 lowercase hex digits is refused before anything starts (no pool is
 * touched: none is given). */
Test(jobctl, a_bad_mark_is_refused_at_the_start)
{
    static const char *const bad[] = {"0123456789ABCDEF0123456789ABCDEF", "0123", RUN_MARK "0",
                                      "0123456789abcdef0123456789abcde'"};
    const JobHost h = {.addr = "h1", .gpus = 1, .gpu_ids = (const int[]){0}};
    const JobAlloc a = {.gpus = 1, .hosts = &h, .n_hosts = 1, .resume = ""};
    for (size_t i = 0; i < sizeof bad / sizeof *bad; i++) {
        Error err = {0};
        cr_assert_null(jobctl_start(NULL, 0, "train {gpus}", &a, bad[i], &err));
        cr_assert_not_null(strstr(err.msg, "expected 32 lowercase hex digits"), "%s", err.msg);
    }
}

/* A restart waits for the old run and the signal sent to it, then relaunches unless the old run
 * may still hold the host. Regression: a run ended by our own delivered KILL counted as one that
 * may linger (its channel ends signalled), so a restart after the documented KILL was always
 * refused; jobctl_step now hands lingers_on as false for it. */
Test(jobctl, relaunch_waits_for_the_run_and_its_signal_then_refuses_only_a_lingering_run)
{
    cr_assert_eq(jobctl_relaunch_due(0, 1, 1, 0), 0);
    cr_assert_eq(jobctl_relaunch_due(1, 0, 1, 0), 0);
    cr_assert_eq(jobctl_relaunch_due(1, 1, 0, 0), 0);
    cr_assert_eq(jobctl_relaunch_due(1, 0, 1, 1), 0, "a running run is waited for, not refused");
    cr_assert_eq(jobctl_relaunch_due(1, 1, 1, 0), 1);
    cr_assert_eq(jobctl_relaunch_due(1, 1, 1, 1), -1);
}

/* A pool of one host on a port that refuses (nobody listens there once closed). */
static HostPool *refusing_pool(void)
{
    int fd = socket(AF_INET, SOCK_STREAM, 0);
    struct sockaddr_in sa = {.sin_family = AF_INET, .sin_addr.s_addr = htonl(INADDR_LOOPBACK)};
    cr_assert_eq(bind(fd, (struct sockaddr *)&sa, sizeof sa), 0);
    socklen_t len = sizeof sa;
    getsockname(fd, (struct sockaddr *)&sa, &len);
    close(fd);
    HostPoolOptions o = {.ssh_config = TEST_SSH_CONFIG};
    Error e;
    HostPool *p = hostpool_new(&o, &e);
    cr_assert_not_null(p, "%s", e.msg);
    HostConf c = {.port = ntohs(sa.sin_port), .connect_timeout_s = 5};
    strcpy(c.name, "gone");
    strcpy(c.host, "127.0.0.1");
    strcpy(c.known_hosts, "/dev/null");
    cr_assert_eq(hostpool_add(p, &c, &e), 0, "%s", e.msg);
    return p;
}

/* Regression: the first launch replaced the caller's mark with a fresh one, so the mark
 * jobgroup_start made (and kept to stop the run's leftovers by) was never exported. */
Test(jobctl, the_first_run_carries_the_callers_mark)
{
    HostPool *p = refusing_pool();
    char mark[GROUPSTOP_MARK_CHARS + 1];
    Error e;
    cr_assert_eq(orphans_mark_new(mark, &e), 0, "%s", e.msg);
    JobAlloc a = {.gpus = 1, .resume = ""};
    JobRun *j = jobctl_start(p, 0, "true", &a, mark, &e);
    cr_assert_not_null(j, "%s", e.msg);
    cr_assert_str_eq(jobctl_mark(j), mark);
    jobctl_free(j);
    hostpool_free(p);
}

/* A run whose connection failed may still run for all we know: its restart is refused at once
 * and every time, with nothing left pending and its status said once. Regression: the refusal
 * came only at the next step, each later restart was refused again by nesting the status in a
 * new "not restarted: ... (not restarted: ...", and none returned an error. */
Test(jobctl, a_run_that_may_linger_is_refused_a_restart_at_once_every_time)
{
    HostPool *p = refusing_pool();
    Error e;
    JobAlloc a = {.gpus = 1, .resume = ""};
    JobRun *j = jobctl_start(p, 0, "true", &a, "", &e);
    cr_assert_not_null(j, "%s", e.msg);
    hostpool_connect(p, 0, 0);
    hostpool_run_until_settled(p, clock_now_ms() + 10000);
    for (int i = 0; i < 100 && jobctl_running(j); i++) {
        hostpool_run_until_settled(p, clock_now_ms() + 100);
        jobctl_step(j);
    }
    jobctl_step(j);
    cr_assert(!jobctl_running(j) && jobctl_may_linger(j), "%s", jobctl_status(j));
    char was[300];
    snprintf(was, sizeof was, "%s", jobctl_status(j));
    for (int i = 0; i < 2; i++) {
        cr_assert_eq(jobctl_restart(j, &a, &e), -1, "restart %d", i);
        cr_assert(strstr(e.msg, "not restarted") && strstr(e.msg, "may still run"), "%s", e.msg);
        jobctl_step(j);
        cr_assert_eq(jobctl_restarts(j), 0);
        cr_assert(!strstr(jobctl_status(j), "(not restarted"), "%s", jobctl_status(j));
    }
    jobctl_free(j);
    hostpool_free(p);
}

/* An IPv6 host's line was "::1:2": the host ::1 with 2 slots, or ::1:2 with none said. Its
 * address goes in brackets (tunedeck_trial.host_ranks reads that form); IPv4 and names stay
 * bare, and so does {master_addr} (torch's env:// takes only the bare form). */
Test(jobctl, an_ipv6_host_is_bracketed_in_the_hostfile_lines)
{
    static const int ids[] = {0, 1, 0};
    static const JobHost v6[] = {{.addr = "::1", .gpus = 2, .gpu_ids = ids},
                                 {.addr = "fd00::2", .gpus = 1, .gpu_ids = ids},
                                 {.addr = "10.0.0.3", .gpus = 1, .gpu_ids = ids}};
    JobAlloc a = {.gpus = 4, .hosts = v6, .n_hosts = 3};
    Error e;
    char *c = jobctl_command("printf '%s\\n' {hostfile_text} m={master_addr} h={hosts}", &a, &e);
    cr_assert_not_null(c, "%s", e.msg);
    cr_assert_str_eq(c, "printf '%s\\n' '[::1]:2\n[fd00::2]:1\n10.0.0.3:1' m='::1' "
                        "h='::1,fd00::2,10.0.0.3'");
    free(c);
}
