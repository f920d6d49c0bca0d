/* The rank fan-out script run by a real /bin/sh in a process group of its own: each rank
 * gets the torch.distributed variables and the schedule; a failing rank stops the others of
 * its host and its status is the script's. Then the local launcher with per-device ranks. */
#include <criterion/criterion.h>
#include <dirent.h>
#include <fcntl.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>

#include "core/base/readall.h"
#include "remote/launch/launcher.h"
#include "remote/launch/rankfan.h"
#include "tests/support/fixtures.h"
#include "tests/support/timeout.h"

static Cluster *c;
static Schedule *s;
static char dir[] = "/tmp/tunedeck-rankfan.XXXXXX";

static void setup(void)
{
    const char *inv =
        "{\"name\": \"r\", \"machine_types\": {\"t\": {\"bandwidth_gbps\": 10, \"devices\": ["
        "{\"id\": \"cpu\", \"kind\": \"cpu\"}, {\"id\": \"gpu0\", \"kind\": \"gpu\"}]}},"
        "\"machines\": [{\"name\": \"m[0-1]\", \"host\": \"10.0.0.[1-2]\", \"type\": \"t\"}],"
        "\"trial\": {\"ranks\": \"per-device\", \"master_port\": 31000}}";
    c = fixture_cluster_json(inv);
    s = fixture_schedule(c, 10);
    s->trial = 107;
    s->worker[0] = s->ps[0] = s->worker[1] = 1;
    s->inputs[0] = 3; /* m0 cpu */
    s->inputs[1] = 5; /* m0 gpu0 */
    s->inputs[3] = 2; /* m1 gpu0 */
    cr_assert_not_null(mkdtemp(dir));
}

static void teardown(void)
{
    char cmd[128];
    snprintf(cmd, sizeof cmd, "rm -rf '%s'", dir);
    cr_assert_eq(system(cmd), 0);
    memcpy(dir + strlen(dir) - 6, "XXXXXX", 6);
    schedule_free(s);
    cluster_free(c);
}

TestSuite(rankfan, .init = setup, .fini = teardown, .timeout = TEST_TIMEOUT_S);

/* Starts the script as the launchers do (a process group of its own, the schedule on stdin)
 * under the shell `sh`; its stdout goes to dir/stdout, its stderr to dir/stderr. */
static pid_t start_script_under(const char *sh, const char *script, const char *input)
{
    char in_path[128], out_path[128], err_path[128];
    snprintf(in_path, sizeof in_path, "%s/stdin", dir);
    snprintf(out_path, sizeof out_path, "%s/stdout", dir);
    snprintf(err_path, sizeof err_path, "%s/stderr", dir);
    FILE *f = fopen(in_path, "w");
    cr_assert_not_null(f);
    fputs(input, f);
    fclose(f);
    pid_t pid = fork();
    cr_assert(pid >= 0);
    if (pid == 0) {
        setpgid(0, 0);
        int in = open(in_path, O_RDONLY), o = open(out_path, O_WRONLY | O_CREAT | O_TRUNC, 0600);
        int e = open(err_path, O_WRONLY | O_CREAT | O_TRUNC, 0600);
        dup2(in, 0);
        dup2(o, 1);
        dup2(e, 2);
        execl(sh, "sh", "-c", script, (char *)NULL);
        _exit(127);
    }
    setpgid(pid, pid); /* as the child does: a stop sent at once finds the group */
    return pid;
}

/* Waits for a started script; returns its wait status, its stdout in *out (caller frees). */
static int finish_script(pid_t pid, char **out)
{
    char out_path[128];
    snprintf(out_path, sizeof out_path, "%s/stdout", dir);
    int status;
    cr_assert_eq(waitpid(pid, &status, 0), pid);
    size_t len;
    Error err;
    *out = readall_file(out_path, 1 << 20, &len, &err);
    cr_assert_not_null(*out, "%s", err.msg);
    return status;
}

/* Runs the script to its end under the shell `sh` (start_script_under); returns its wait
 * status, its stdout in *out (caller frees); its stderr is left in dir/stderr. */
static int run_script_under(const char *sh, const char *script, const char *input, char **out)
{
    return finish_script(start_script_under(sh, script, input), out);
}

/* What the last script run wrote on stderr (caller frees). */
static char *script_stderr(void)
{
    char path[128];
    snprintf(path, sizeof path, "%s/stderr", dir);
    size_t len;
    Error err;
    char *text = readall_file(path, 1 << 20, &len, &err);
    cr_assert_not_null(text, "%s", err.msg);
    return text;
}

/* The script for the ranks of `machine` (every rank with all_here) running cmd; caller
 * frees. */
static char *script_for(size_t machine, int all_here, const char *cmd)
{
    Error err;
    char *script = rankfan_script(s, machine, all_here, cmd, &err);
    cr_assert_not_null(script, "%s", err.msg);
    return script;
}

/* Runs script_for(machine, all_here, cmd) to its end under `sh`, `input` on its stdin;
 * returns its wait status, its stdout in *out (caller frees). */
static int run_ranks_under(const char *sh, size_t machine, int all_here, const char *cmd,
                           const char *input, char **out)
{
    char *script = script_for(machine, all_here, cmd);
    int st = run_script_under(sh, script, input, out);
    free(script);
    return st;
}

/* run_ranks_under the remote hosts' usual shell, /bin/sh */
static int run_ranks(size_t machine, int all_here, const char *cmd, const char *input, char **out)
{
    return run_ranks_under("/bin/sh", machine, all_here, cmd, input, out);
}

/* Asserts that `line` (up to its newline, which it cuts) is the fan-out's notice naming
 * `want`; sh names the shell in what fails. */
static void assert_notice(char *line, const char *want, const char *sh)
{
    char who[160];
    line[strcspn(line, "\n")] = 0;
    cr_assert(rankfan_notice(line, who, sizeof who), "%s: '%s'", sh, line);
    cr_assert_str_eq(who, want, "%s", sh);
}

/* Asserts that the process whose pid is in dir/NAME is gone, not merely signalled: init
 * reaped it, or at worst it is a zombie, which kill(0) still finds; a live one would hold its
 * state 'S'. */
static void assert_gone(const char *name)
{
    char path[128];
    snprintf(path, sizeof path, "%s/%s", dir, name);
    size_t len;
    Error err;
    char *pid_text = readall_file(path, 64, &len, &err);
    cr_assert_not_null(pid_text, "%s", err.msg);
    pid_t pid = (pid_t)atol(pid_text);
    cr_assert(pid > 1);
    char stat_path[64], state = 'X';
    snprintf(stat_path, sizeof stat_path, "/proc/%d/stat", (int)pid);
    FILE *f = fopen(stat_path, "r");
    if (f) {
        cr_assert_eq(fscanf(f, "%*d (%*[^)]) %c", &state), 1);
        fclose(f);
    }
    cr_assert(state == 'X' || state == 'Z', "%s (pid %d) is still running (%c)", name, (int)pid,
              state);
    free(pid_text);
}

Test(rankfan, each_rank_gets_its_variables_and_the_schedule)
{
    char *out;
    int st = run_ranks(0, 0,
                       "read -r line; echo \"$RANK/$WORLD_SIZE local $LOCAL_RANK/$LOCAL_WORLD_SIZE "
                       "$MASTER_ADDR:$MASTER_PORT $TUNEDECK_MACHINE $TUNEDECK_DEVICE $line\"",
                       "{\"it's\": 1}\n", &out);
    cr_assert(WIFEXITED(st) && WEXITSTATUS(st) == 0, "status %d: %s", st, out);
    cr_assert(strstr(out, "0/3 local 0/2 10.0.0.1:31007 m0 cpu {\"it's\": 1}\n"), "%s", out);
    cr_assert(strstr(out, "1/3 local 1/2 10.0.0.1:31007 m0 gpu0 {\"it's\": 1}\n"), "%s", out);
    cr_assert(!strstr(out, "2/3"), "m1's rank runs on m1 only: %s", out);
    free(out);
}

Test(rankfan, the_other_host_gets_its_own_rank_and_the_same_master)
{
    char *out;
    int st = run_ranks(1, 0, "echo \"$RANK $MASTER_ADDR $TUNEDECK_MACHINE\"", "{}\n", &out);
    cr_assert(WIFEXITED(st) && WEXITSTATUS(st) == 0);
    cr_assert_str_eq(out, "2 10.0.0.1 m1\n");
    free(out);
}

Test(rankfan, a_rank_killed_by_a_signal_is_named_with_it)
{
    /* the OOM killer's SIGKILL reads as status 137 alone; the notice names the signal */
    char *out;
    int st = run_ranks(1, 0, "cat > /dev/null; kill -KILL $$", "{}\n", &out);
    cr_assert(WIFEXITED(st) && WEXITSTATUS(st) == 137, "status %d: %s", st, out);
    assert_notice(out, "rank 2 (m1 gpu0) exited with status 137 (SIGKILL)", "/bin/sh");
    /* the shell that waited for the rank says "Killed", and its stderr is the trial's: the
     * trial's log and its failure's last line would hold it */
    char *said = script_stderr();
    cr_assert_str_empty(said, "the script said on stderr: %s", said);
    free(said);
    free(out);
}

/* The head of a command for two ranks: rank 1 fails (status 9) once rank 0 has held the script
 * (SIGSTOP; its pid in $fan); rank 0 goes on with the rest. Both find the script's folder
 * from their standard input ($d/in). */
#define RANK1_FAILS_HELD                                                                           \
    "d=$(dirname \"$(readlink /proc/$$/fd/0)\"); "                                                 \
    "if [ \"$RANK\" = 1 ]; then while [ ! -e \"$d/held\" ]; do sleep 0.01; done; exit 9; fi; "     \
    "fan=$(ps -o ppid= -p $PPID | tr -d ' '); kill -STOP \"$fan\"; : > \"$d/held\"; "

Test(rankfan, a_stop_after_a_rank_failed_still_names_that_rank)
{
    /* Regression: a host whose rank was killed could be stopped (another host's rank lost it
     * and ended first) before this script's next look at its ranks: the TERM's trap left
     * without a word, and the trial's reason named only the peer. Here rank 0 holds the
     * script (SIGSTOP), lets rank 1 fail, sends the group a TERM, and lets the script go on:
     * the TERM comes first, and says rank 1's failure. */
    const char *cmd =
        RANK1_FAILS_HELD "until grep -qx 1 \"$d/ended\" 2> /dev/null; do sleep 0.01; done; "
                         "trap '' TERM; kill -TERM 0; kill -CONT \"$fan\"";
    char *out;
    int st = run_ranks(0, 0, cmd, "{}\n", &out);
    cr_assert(WIFEXITED(st) && WEXITSTATUS(st) == 143, "status %d: %s", st, out);
    assert_notice(out, "rank 1 (m0 gpu0) exited with status 9", "/bin/sh");
    free(out);
}

/* Regression (seen once in pytorch.sh): a stop's TERM reached the group as a rank ended by
 * itself, before its subshell wrote its status; the subshell died of the TERM, the script's
 * trap found no failed rank, and the host's part ended without its notice. Here rank 1
 * stops its subshell (SIGSTOP) and exits 9; rank 0 waits until rank 1 is gone, sends the
 * group a TERM (which a stopped process dies of at once, unless it has a handler) and lets
 * the subshell go on. The trap must wait for rank 1's status and name it. Under `sh`
 * (dash here: as the remote hosts run it) and bash, where there is one. */
static void a_stop_as_a_rank_ends_names_it_under(const char *sh)
{
    if (access(sh, X_OK) != 0)
        return;
    const char *cmd =
        "d=$(dirname \"$(readlink /proc/$$/fd/0)\"); "
        "if [ \"$RANK\" = 1 ]; then echo $PPID > \"$d/sub.1\"; kill -STOP $PPID; exit 9; fi; "
        "until [ -s \"$d/sub.1\" ] && [ -s \"$d/pid.1\" ]; do sleep 0.01; done; "
        "p=$(cat \"$d/pid.1\"); "
        "while [ -e /proc/$p ] && [ \"$(cut -d' ' -f3 /proc/$p/stat 2> /dev/null)\" != Z ]; "
        "do sleep 0.01; done; "
        "trap '' TERM; kill -TERM 0; kill -CONT \"$(cat \"$d/sub.1\")\"";
    char *out;
    int st = run_ranks_under(sh, 0, 0, cmd, "{}\n", &out);
    cr_assert(WIFEXITED(st) && WEXITSTATUS(st) == 143, "%s: status %d: %s", sh, st, out);
    assert_notice(out, "rank 1 (m0 gpu0) exited with status 9", sh);
    free(out);
}

Test(rankfan, a_stop_as_a_rank_ends_still_names_that_rank)
{
    a_stop_as_a_rank_ends_names_it_under("/bin/sh");
    a_stop_as_a_rank_ends_names_it_under("/bin/bash");
}

/* Regression: a stop's TERM to the group (as the launchers stop a trial) found the script in
 * its own `sleep 0.1` between two looks at its ranks, and dash said "Terminated" of that
 * sleep on the script's stderr, which is the trial's: the trial's log and the last line of
 * its error held it. Rank 0 holds that sleep (SIGSTOP) and tells the test, which stops the
 * group: its TERM, then a CONT, so that the held sleep meets the TERM (a stopped process keeps
 * it pending). The stop is still a stop: each rank ends of it, and the script exits 143
 * without naming a rank. Under `sh` (dash) and bash, where there is one. */
static void a_stop_in_the_scripts_sleep_is_quiet_under(const char *sh)
{
    if (access(sh, X_OK) != 0)
        return;
    char cmd[768], held[128];
    snprintf(held, sizeof held, "%s/held", dir);
    unlink(held);
    snprintf(cmd, sizeof cmd,
             "echo $$ > %s/rank.$RANK; "
             "if [ \"$RANK\" = 0 ]; then fan=$(ps -o ppid= -p $PPID | tr -d ' '); "
             "until p=$(ps -o pid=,comm= --ppid \"$fan\" | awk '$2 == \"sleep\" {print $1}') "
             "&& [ -n \"$p\" ] && kill -STOP $p 2> /dev/null; do sleep 0.01; done; : > %s; fi; "
             "exec sleep 60",
             dir, held);
    char *script = script_for(0, 0, cmd);
    pid_t pid = start_script_under(sh, script, "{}\n");
    while (access(held, F_OK) != 0)
        usleep(10 * 1000);
    cr_assert_eq(kill(-pid, SIGTERM), 0);
    cr_assert_eq(kill(-pid, SIGCONT), 0);
    char *out;
    int st = finish_script(pid, &out);
    cr_assert(WIFEXITED(st) && WEXITSTATUS(st) == 143, "%s: status %d: %s", sh, st, out);
    cr_assert_str_empty(out, "%s: a stop is no rank's failure: %s", sh, out);
    char *said = script_stderr();
    cr_assert_null(strstr(said, "Terminated"), "%s: the script said on stderr: %s", sh, said);
    cr_assert_str_empty(said, "%s: the script said on stderr: %s", sh, said);
    assert_gone("rank.0");
    assert_gone("rank.1");
    free(said);
    free(out);
    free(script);
}

Test(rankfan, a_stop_in_the_scripts_own_sleep_says_nothing)
{
    a_stop_in_the_scripts_sleep_is_quiet_under("/bin/sh");
    a_stop_in_the_scripts_sleep_is_quiet_under("/bin/bash");
}

/* How many processes of group `pgid` are left that are not zombies (an orphan KILLed just now
 * may wait a moment for init to reap it); then KILLs them, so that a failing test leaves
 * nothing running. Only those in this test's session: the group's leader is reaped by now, and
 * once the group is empty its number may lead another suite's new group (pid_max 32768). */
static int group_left_killed(pid_t pgid)
{
    int left = 0;
    DIR *proc = opendir("/proc");
    cr_assert_not_null(proc);
    for (struct dirent *e; (e = readdir(proc));) {
        char path[300], line[512], state;
        int pid, pgrp, sid;
        if (e->d_name[0] < '1' || e->d_name[0] > '9')
            continue;
        snprintf(path, sizeof path, "/proc/%s/stat", e->d_name);
        FILE *f = fopen(path, "r");
        if (!f)
            continue;
        int got = fgets(line, sizeof line, f) != NULL;
        fclose(f);
        char *tail = got ? strrchr(line, ')') : NULL;
        if (!tail || sscanf(tail, ") %c %*d %d %d", &state, &pgrp, &sid) != 3 ||
            pgrp != (int)pgid || sid != (int)getsid(0) || state == 'Z' || state == 'X')
            continue;
        pid = atoi(e->d_name);
        kill(pid, SIGKILL);
        left++;
    }
    closedir(proc);
    return left;
}

/* Writes dir/NAME, a rank's script: it says its pid in dir/rank.$RANK once its TERM handler
 * is set, then runs a minute unless `on_term` ends it. Run as `sh dir/NAME`, it is a child of
 * the rank's `sh -c`: dash forks even that last command, and the `sh -c` dies of a TERM at
 * once while this goes on. */
static void write_rank_script(const char *name, const char *on_term)
{
    char path[160];
    snprintf(path, sizeof path, "%s/%s", dir, name);
    FILE *f = fopen(path, "w");
    cr_assert_not_null(f);
    fprintf(f,
            "exec 2> /dev/null\n"
            "trap '%s' TERM\n"
            "echo $$ > %s/rank.$RANK\n"
            "i=0; while [ $i -lt 600 ]; do sleep 0.1; i=$((i + 1)); done\n",
            on_term, dir);
    fclose(f);
}

/* Waits until rank `rank` has said its pid. */
static void wait_rank_up(int rank)
{
    char path[160];
    snprintf(path, sizeof path, "%s/rank.%d", dir, rank);
    struct stat st;
    while (stat(path, &st) != 0 || st.st_size == 0)
        usleep(10 * 1000);
}

static int dir_has(const char *name)
{
    char path[160];
    snprintf(path, sizeof path, "%s/%s", dir, name);
    return access(path, F_OK) == 0;
}

/* Regression: a rank's pid file named its `sh -c`, which dash forks the command from and
 * which a stop's TERM ends at once: the fan-out saw every rank gone and ended, and a rank
 * that handles TERM and goes on (rank 0 here: a script that notes the TERM and runs on) was
 * left running after its host's part had ended. Now the fan-out waits for every process the
 * ranks started, KILLs what is left after its wait, and ends only then; a rank that ends
 * some time after the TERM (rank 1: its handler sleeps, notes it is done, exits 0) is waited
 * for and not KILLed. Stopped as a trial is: a TERM to the group. Under `sh` (dash, as the
 * remote hosts run it) and bash, where there is one. */
static void a_stop_waits_for_the_ranks_processes_under(const char *sh)
{
    if (access(sh, X_OK) != 0)
        return;
    char on_term[160], cmd[512];
    snprintf(on_term, sizeof on_term, ": > %s/termed.$RANK", dir);
    write_rank_script("linger.sh", on_term);
    snprintf(on_term, sizeof on_term, "sleep 0.2; : > %s/done.$RANK; exit 0", dir);
    write_rank_script("ends.sh", on_term);
    snprintf(cmd, sizeof cmd, "if [ \"$RANK\" = 0 ]; then sh %s/linger.sh; else sh %s/ends.sh; fi",
             dir, dir);
    char rm[256];
    snprintf(rm, sizeof rm, "rm -f %s/rank.* %s/termed.* %s/done.*", dir, dir, dir);
    cr_assert_eq(system(rm), 0);
    char *script = script_for(0, 0, cmd);
    pid_t pid = start_script_under(sh, script, "{}\n");
    wait_rank_up(0);
    wait_rank_up(1);
    cr_assert_eq(kill(-pid, SIGTERM), 0);
    char *out;
    int st = finish_script(pid, &out);
    int left = group_left_killed(pid);
    cr_assert(WIFEXITED(st) && WEXITSTATUS(st) == 143, "%s: status %d: %s", sh, st, out);
    cr_assert_str_empty(out, "%s: a stop is no rank's failure: %s", sh, out);
    cr_assert(dir_has("termed.0"), "%s: rank 0 had no TERM", sh);
    cr_assert_eq(left, 0, "%s: %d processes of the ranks outlived the fan-out", sh, left);
    assert_gone("rank.0");
    cr_assert(dir_has("done.1"), "%s: the fan-out ended before rank 1 ended by itself", sh);
    free(out);
    free(script);
}

Test(rankfan, a_stop_waits_for_every_process_of_the_ranks_then_kills)
{
    a_stop_waits_for_the_ranks_processes_under("/bin/sh");
    a_stop_waits_for_the_ranks_processes_under("/bin/bash");
}

/* The same after a rank's failure: rank 1 fails once rank 0 (a script that handles TERM and
 * runs on) is up; the fan-out's TERM leaves rank 0 running, so it is KILLed after the wait,
 * before the fan-out ends, and the host's status is still rank 1's (a KILL of the group, the
 * fan-out's own included, made it 137). */
static void a_failure_kills_what_outlives_its_term_under(const char *sh)
{
    if (access(sh, X_OK) != 0)
        return;
    char on_term[160], cmd[512];
    snprintf(on_term, sizeof on_term, ": > %s/termed.$RANK", dir);
    write_rank_script("linger.sh", on_term);
    snprintf(cmd, sizeof cmd,
             "if [ \"$RANK\" = 0 ]; then sh %s/linger.sh; "
             "else while [ ! -s %s/rank.0 ]; do sleep 0.01; done; exit 3; fi",
             dir, dir);
    char rm[256];
    snprintf(rm, sizeof rm, "rm -f %s/rank.* %s/termed.*", dir, dir);
    cr_assert_eq(system(rm), 0);
    char *script = script_for(0, 0, cmd);
    pid_t pid = start_script_under(sh, script, "{}\n");
    char *out;
    int st = finish_script(pid, &out);
    int left = group_left_killed(pid);
    cr_assert(WIFEXITED(st) && WEXITSTATUS(st) == 3, "%s: status %d: %s", sh, st, out);
    assert_notice(out, "rank 1 (m0 gpu0) exited with status 3", sh);
    cr_assert(dir_has("termed.0"), "%s: rank 0 had no TERM", sh);
    cr_assert_eq(left, 0, "%s: %d processes of the ranks outlived the fan-out", sh, left);
    assert_gone("rank.0");
    free(out);
    free(script);
}

Test(rankfan, a_failure_kills_a_rank_that_outlives_its_term_before_the_end)
{
    a_failure_kills_what_outlives_its_term_under("/bin/sh");
    a_failure_kills_what_outlives_its_term_under("/bin/bash");
}

/* Regression: a rank that crashes mid-step takes its peers down a moment later ("Connection
 * closed by peer"), and one look of the script could find both ended: it named the lower
 * slot, a peer (rank 0, status 4), not the rank that failed first (rank 1, status 9). Here
 * rank 0 holds the script (SIGSTOP), waits for rank 1 to end, ends itself, and lets the
 * script go on: its first look finds both. */
Test(rankfan, the_rank_that_ended_first_is_named_not_the_lowest)
{
    const char *cmd =
        RANK1_FAILS_HELD "while [ ! -s \"$d/rc.1\" ]; do sleep 0.01; done; sleep 0.2; "
                         "(sleep 0.3; kill -CONT \"$fan\") & exit 4";
    char *out;
    int st = run_ranks(0, 0, cmd, "{}\n", &out);
    cr_assert(WIFEXITED(st) && WEXITSTATUS(st) == 9, "status %d: %s", st, out);
    assert_notice(out, "rank 1 (m0 gpu0) exited with status 9", "/bin/sh");
    free(out);
}

Test(rankfan, a_failing_rank_stops_the_others_and_its_status_is_the_hosts)
{
    char cmd[512];
    /* rank 0 would sleep for a minute; rank 1 fails after rank 0 has started its sleep */
    snprintf(cmd, sizeof cmd,
             "if [ \"$RANK\" = 1 ]; then while [ ! -s %s/sleeper ]; do sleep 0.05; done; "
             "exit 3; fi; sleep 60 & echo $! > %s/sleeper; wait",
             dir, dir);
    char *out;
    int st = run_ranks(0, 0, cmd, "{}\n", &out);
    cr_assert(WIFEXITED(st) && WEXITSTATUS(st) == 3, "status %d: %s", st, out);
    cr_assert(strstr(out, "tunedeck: rank 1 (m0 gpu0) exited with status 3"), "%s", out);
    /* the launchers read that line back to name the rank in the trial's reason */
    assert_notice(strstr(out, "tunedeck: rank 1"), "rank 1 (m0 gpu0) exited with status 3",
                  "/bin/sh");
    char who[160];
    cr_assert_not(rankfan_notice("tunedeck: rank 1 is slow", who, sizeof who));
    /* the other rank's sleep: its parent (rank 0's shell) is gone too */
    assert_gone("sleeper");
    free(out);
}

Test(rankfan, all_here_runs_every_rank_with_a_loopback_master)
{
    char *out;
    int st = run_ranks(0, 1, "echo \"$RANK $MASTER_ADDR\"", "{}\n", &out);
    cr_assert(WIFEXITED(st) && WEXITSTATUS(st) == 0);
    cr_assert(strstr(out, "0 127.0.0.1\n") && strstr(out, "1 127.0.0.1\n") &&
                  strstr(out, "2 127.0.0.1\n"),
              "%s", out);
    free(out);
}

Test(rankfan, a_machine_without_ranks_is_refused)
{
    s->inputs[3] = 0;
    s->inputs[1] = 7;
    Error err;
    cr_assert_null(rankfan_script(s, 1, 0, "true", &err));
    cr_assert(strstr(err.msg, "machine 'm1' has no rank"), "%s", err.msg);
}

Test(rankfan, the_master_port_moves_with_the_trial)
{
    cr_assert_eq(rankfan_master_port(c, 0), 31000);
    cr_assert_eq(rankfan_master_port(c, 199), 31099);
    c->trial.master_port = 0;
    cr_assert_eq(rankfan_master_port(c, 3), 29503);
}

/* The local launcher with per-device ranks: every rank of the schedule runs here and
 * reports its own device; the machine's time is its slowest rank's. */
Test(rankfan, the_local_launcher_runs_one_process_per_rank)
{
    s->job.iterations = 1;
    s->job.warmup = 0;
    /* each rank: its device takes 0.1 s per rank number + 0.1 */
    const char *cmd =
        "t=$(( RANK + 1 )); echo \"{\\\"event\\\": \\\"iteration\\\", \\\"iter\\\": 1, "
        "\\\"time_s\\\": 0.$t, \\\"machines\\\": [{\\\"name\\\": \\\"$TUNEDECK_MACHINE\\\", "
        "\\\"compute_s\\\": 0.$t, \\\"devices\\\": [{\\\"id\\\": \\\"$TUNEDECK_DEVICE\\\", "
        "\\\"time_s\\\": 0.$t}]}]}\"";
    LaunchConfig cfg = {.command = cmd, .timeout_s = 20};
    Error err;
    Observation *o = launcher_run_blocking(launcher_find("local"), &cfg, s, &err);
    cr_assert_not_null(o, "%s", err.msg);
    cr_assert_eq(o->status, TRIAL_OK, "%s", o->reason);
    cr_assert_float_eq(o->device_time_s[0], 0.1, 1e-9); /* rank 0: m0 cpu */
    cr_assert_float_eq(o->device_time_s[1], 0.2, 1e-9); /* rank 1: m0 gpu0 */
    cr_assert_float_eq(o->device_time_s[3], 0.3, 1e-9); /* rank 2: m1 gpu0 */
    cr_assert_float_eq(o->machine_time_s[0], 0.2, 1e-9, "m0: its slowest rank");
    cr_assert_float_eq(o->time_s, 0.3, 1e-9);
    observation_free(o);
}

Test(rankfan, a_failing_rank_fails_the_local_trial_with_its_error)
{
    const char *cmd = "if [ \"$RANK\" = 2 ]; then echo '{\"event\": \"error\", \"message\": "
                      "\"rank 2 out of memory\"}'; exit 4; fi; sleep 30";
    LaunchConfig cfg = {.command = cmd, .timeout_s = 20};
    Error err;
    Observation *o = launcher_run_blocking(launcher_find("local"), &cfg, s, &err);
    cr_assert_not_null(o, "%s", err.msg);
    cr_assert_eq(o->status, TRIAL_FAILED);
    cr_assert(strstr(o->reason, "status 4") && strstr(o->reason, "rank 2 out of memory"), "%s",
              o->reason);
    observation_free(o);
}

/* A ranked trial runs the user's command, not tunedeck-worker's parameter servers: its input
 * carries no ps_secret (the fan-out writes that input to a file under $TMPDIR); the same
 * schedule with one command per host gets one. */
Test(rankfan, a_ranked_trials_input_has_no_secret_and_a_per_host_trials_has_one)
{
    size_t len = 0;
    Error err;
    char *in = launcher_trial_input(s, &len, &err);
    cr_assert_not_null(in, "%s", err.msg);
    cr_assert_null(strstr(in, "ps_secret"), "%s", in);
    cr_assert_not_null(strstr(in, "\"trial\":107"), "%s", in);
    launcher_input_free(in, len);
    snprintf(c->trial.ranks, sizeof c->trial.ranks, "per-host");
    in = launcher_trial_input(s, &len, &err);
    cr_assert_not_null(in, "%s", err.msg);
    cr_assert_not_null(strstr(in, "\"ps_secret\":\""), "%s", in);
    launcher_input_free(in, len);
}
