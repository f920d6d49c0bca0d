#include <criterion/criterion.h>
#include <dirent.h>
#include <fcntl.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/prctl.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>

#include "remote/ssh/groupstop.h"
#include "tests/support/marked.h"
#include "tests/support/ownkill.h"
#include "tests/support/testmark.h"
#include "tests/support/timeout.h"

/* A child in a process group of its own: it exits at once (a zombie, not reaped until the
 * caller waits for it) or waits until killed. */
static pid_t group_child(int exit_now)
{
    pid_t c = fork();
    cr_assert(c >= 0);
    if (c == 0) {
        setpgid(0, 0);
        if (exit_now)
            _exit(0);
        for (;;)
            pause();
    }
    setpgid(c, c); /* whichever of the two runs first */
    if (exit_now) {
        siginfo_t si;
        cr_assert_eq(waitid(P_PID, (id_t)c, &si, WEXITED | WNOWAIT), 0); /* zombie, kept */
    }
    return c;
}

/* The remote login shell: dash (/bin/sh) or bash. */
static const char *const SHELLS[] = {"sh", "bash"};

/* A pgrep as busybox's (dir/pgrep, dir made): no -g, which it answers with its usage and exit
 * status 1, procps's status for "none matched"; otherwise the host's pgrep. */
static void busybox_like_pgrep(const char *dir)
{
    char path[128];
    snprintf(path, sizeof path, "%s/pgrep", dir);
    FILE *f = fopen(path, "w");
    cr_assert_not_null(f);
    fprintf(f, "#!/bin/sh\ncase \" $* \" in *\" -g\"*) echo 'BusyBox v1.36.1 multi-call binary.' "
               ">&2; echo 'Usage: pgrep [-flanovx] [-s SID|-P PPID|PATTERN]' >&2; exit 1 ;; "
               "esac\nexec /usr/bin/pgrep \"$@\"\n");
    fclose(f);
    cr_assert_eq(chmod(path, 0755), 0);
}

/* The exit status of `live G` run by `shell` as the remote side would; with dir, that dir
 * first in PATH. */
static int live_status_with(const char *shell, pid_t g, const char *dir)
{
    char cmd[256];
    /* the snippet holds single quotes: handed over in a file, not quoted */
    char path[] = "/tmp/test-groupstop-XXXXXX";
    int fd = mkstemp(path);
    cr_assert(fd >= 0);
    FILE *f = fdopen(fd, "w");
    fprintf(f, "%s\nlive %ld\n", GROUPSTOP_LIVE_SH, (long)g);
    fclose(f);
    if (dir)
        snprintf(cmd, sizeof cmd, "PATH=%s:$PATH %s %s", dir, shell, path);
    else
        snprintf(cmd, sizeof cmd, "%s %s", shell, path);
    int st = system(cmd);
    unlink(path);
    cr_assert(WIFEXITED(st), "sh did not exit: %d", st);
    return WEXITSTATUS(st);
}

static int live_status_in(const char *shell, pid_t g)
{
    return live_status_with(shell, g, NULL);
}

/* The same answer from every shell, or -1. */
static int live_status(pid_t g)
{
    int a = live_status_in(SHELLS[0], g), b = live_status_in(SHELLS[1], g);
    return a == b ? a : -1;
}

/* Regression: the stop's loop asked kill -0, which a zombie answers, and waited its 2 s cap
 * on a group that only held a process waiting to be reaped. */
Test(groupstop, a_group_of_only_a_zombie_is_not_live)
{
    pid_t z = group_child(1);
    cr_assert_eq(kill(-z, 0), 0, "the zombie keeps its group in use (what kill -0 sees)");
    cr_assert_eq(live_status(z), 1);
    waitpid(z, NULL, 0);
}

Test(groupstop, a_group_with_a_running_process_is_live)
{
    pid_t c = group_child(0);
    cr_assert_eq(live_status(c), 0);
    kill(c, SIGKILL);
    waitpid(c, NULL, 0);
}

/* Regression: busybox's pgrep has no -g and exits 1 with its usage, procps's status for an
 * empty group: `live` read a running group as gone (a second-channel stop then took a live
 * group for stopped). Now a pgrep that cannot list pgrep's own group (0) is not asked, and
 * every stat is read. Fails on the old code (a running group: 1). */
Test(groupstop, a_busybox_pgrep_without_g_does_not_read_as_an_empty_group)
{
    char dir[] = "/tmp/test-groupstop-pg-XXXXXX";
    cr_assert_not_null(mkdtemp(dir));
    busybox_like_pgrep(dir);
    pid_t r = group_child(0), z = group_child(1);
    int rs[2], zs[2];
    for (size_t i = 0; i < 2; i++) {
        rs[i] = live_status_with(SHELLS[i], r, dir);
        zs[i] = live_status_with(SHELLS[i], z, dir);
    }
    kill(r, SIGKILL);
    waitpid(r, NULL, 0);
    waitpid(z, NULL, 0);
    char rm[96];
    snprintf(rm, sizeof rm, "rm -rf %s", dir);
    cr_assert_eq(system(rm), 0);
    for (size_t i = 0; i < 2; i++) {
        cr_assert_eq(rs[i], 0, "%s: a running group read as gone", SHELLS[i]);
        cr_assert_eq(zs[i], 1, "%s: a group of a zombie read as live", SHELLS[i]);
    }
}

Test(groupstop, a_group_that_is_gone_is_not_live)
{
    pid_t z = group_child(1);
    waitpid(z, NULL, 0);
    cr_assert_eq(live_status(z), 1);
}

/* Regression as well: "kill -TERM -- -G" fails in dash ("Illegal number: -"), and the stop
 * killed nothing where the login shell was /bin/sh. */
Test(groupstop, the_command_stops_a_group_in_dash_and_bash)
{
    for (size_t i = 0; i < sizeof SHELLS / sizeof *SHELLS; i++) {
        pid_t c = group_child(0);
        char *cmd = groupstop_command(c, NULL, 0);
        cr_assert_not_null(cmd);
        char path[] = "/tmp/test-groupstop-XXXXXX";
        int fd = mkstemp(path);
        cr_assert(fd >= 0);
        cr_assert_eq(write(fd, cmd, strlen(cmd)), (ssize_t)strlen(cmd));
        close(fd);
        free(cmd);
        char run[64];
        snprintf(run, sizeof run, "%s %s", SHELLS[i], path);
        int st = system(run);
        unlink(path);
        int cs = 0;
        pid_t w = waitpid(c, &cs, WNOHANG); /* the command ends only once the group is gone */
        if (w == 0)
            kill(c, SIGKILL), waitpid(c, NULL, 0);
        cr_assert(WIFEXITED(st) && WEXITSTATUS(st) == 0, "%s", SHELLS[i]);
        cr_assert_eq(w, c, "%s: the group is still running", SHELLS[i]);
        cr_assert(WIFSIGNALED(cs) && WTERMSIG(cs) == SIGTERM, "%s", SHELLS[i]);
    }
}

/* What /proc/PID/stat says of a process: its state letter (0 once it is gone), its parent and
 * its group. */
static char proc_state(pid_t pid, pid_t *ppid, pid_t *pgrp)
{
    char path[64], buf[512];
    snprintf(path, sizeof path, "/proc/%ld/stat", (long)pid);
    FILE *f = fopen(path, "r");
    if (!f)
        return 0;
    size_t n = fread(buf, 1, sizeof buf - 1, f);
    fclose(f);
    buf[n] = 0;
    char *r = strrchr(buf, ')'); /* the name may hold anything but ends at the last ')' */
    char st = 0;
    long pp = 0, pg = 0;
    if (!r || sscanf(r + 1, " %c %ld %ld", &st, &pp, &pg) != 3)
        return 0;
    if (ppid)
        *ppid = (pid_t)pp;
    if (pgrp)
        *pgrp = (pid_t)pg;
    return st;
}

/* A process's command line, its arguments joined by spaces ("" once it is gone). */
static void proc_cmdline(pid_t pid, char *out, size_t cap)
{
    char path[64];
    snprintf(path, sizeof path, "/proc/%ld/cmdline", (long)pid);
    out[0] = 0;
    FILE *f = fopen(path, "r");
    if (!f)
        return;
    size_t n = fread(out, 1, cap - 1, f);
    fclose(f);
    out[n] = 0;
    for (size_t i = 0; n && i < n - 1; i++)
        if (!out[i])
            out[i] = ' ';
}

/* A process of group g, other than g, whose command line is `want` exactly; 0 if none now. */
static pid_t member_named(pid_t g, const char *want)
{
    DIR *d = opendir("/proc");
    cr_assert_not_null(d);
    pid_t found = 0;
    struct dirent *e;
    while (!found && (e = readdir(d))) {
        pid_t pid = (pid_t)atol(e->d_name), pg = 0;
        char line[8192];
        if (pid <= 0 || pid == g || !proc_state(pid, NULL, &pg) || pg != g)
            continue;
        proc_cmdline(pid, line, sizeof line);
        if (strcmp(line, want) == 0)
            found = pid;
    }
    closedir(d);
    return found;
}

/* The remote side of one command: a "session" process (sshd's, here this process's child)
 * whose child runs `shell -c GUARD command` as the leader of a group of its own (sshd's
 * setsid). This process is the subreaper, as init would be: what is orphaned is reparented
 * to it, and it reaps it. Returns the leader; *session its parent, *guard the guard, found
 * by its child `sleep 1` (so found only once the guard is in its loop). */
static pid_t start_guarded(const char *shell, const char *command, pid_t *session, pid_t *guard)
{
    cr_assert_eq(prctl(PR_SET_CHILD_SUBREAPER, 1), 0);
    char text[4096];
    snprintf(text, sizeof text, "%s%s", GROUPSTOP_GUARD_SH("20"), command);
    int fds[2];
    cr_assert_eq(pipe(fds), 0);
    *session = fork();
    cr_assert(*session >= 0);
    if (*session == 0) {
        /* A test that fails leaves nothing behind: the session dies with it, and the guard
         * then stops the group; nothing of it holds the test's output open. */
        prctl(PR_SET_PDEATHSIG, SIGKILL);
        pid_t c = fork();
        if (c == 0) {
            setpgid(0, 0);
            int null = open("/dev/null", O_RDWR);
            if (null < 0 || dup2(null, 0) < 0 || dup2(null, 1) < 0 || dup2(null, 2) < 0)
                _exit(126);
            execlp(shell, shell, "-c", text, (char *)NULL);
            _exit(127);
        }
        setpgid(c, c);
        long cl = c;
        if (write(fds[1], &cl, sizeof cl) != (ssize_t)sizeof cl)
            _exit(1);
        for (;;)
            pause(); /* the session process, until the test kills it */
    }
    close(fds[1]);
    long c = 0;
    cr_assert_eq(read(fds[0], &c, sizeof c), (ssize_t)sizeof c);
    close(fds[0]);
    pid_t sleeper;
    while (!(sleeper = member_named((pid_t)c, "sleep 1")) || !proc_state(sleeper, guard, NULL))
        usleep(20 * 1000);
    return (pid_t)c;
}

/* The end of a test: what is left of the session and of group g killed, every child reaped.
 * This process is the subreaper: what the KILLed session left is handed to it, so every
 * process of the test is one of its children by then, each KILLed only while unreaped (the
 * session, and group g's leader, may have been reaped by the test already: their numbers may
 * be another's). */
static void end_guarded(void)
{
    ownkill_children();
}

/* The guard: a command whose sshd session process dies (here: its parent, killed) has its
 * group stopped, whichever shell the login runs. Regression: nothing stopped a remote command
 * that did not write when tunedeck died (no pty, no SIGHUP). */
Test(groupstop, the_guard_stops_the_group_once_its_session_parent_is_gone)
{
    for (size_t i = 0; i < sizeof SHELLS / sizeof *SHELLS; i++) {
        pid_t session, guard;
        pid_t c = start_guarded(SHELLS[i], "exec sleep 300", &session, &guard);
        kill(session, SIGKILL);
        waitpid(session, NULL, 0);
        int st = 0;
        cr_assert_eq(waitpid(c, &st, 0), c); /* it ends: nothing else would end it */
        cr_assert(WIFSIGNALED(st) && WTERMSIG(st) == SIGTERM, "%s: status %d", SHELLS[i], st);
        end_guarded();
    }
}

/* Regression: the guard was a subshell of the wrapping shell, so its command line was the
 * wrapping shell's, the trial's command included: `pgrep -f` on a trial's name counted it
 * for up to a second after the trial ended (faults.sh counted 9 on 3 hosts). Its own shell
 * now: `sh -c GUARD tunedeck-guard PGID PPID`, nothing of the command in it. */
Test(groupstop, the_guards_command_line_holds_nothing_of_the_command)
{
    for (size_t i = 0; i < sizeof SHELLS / sizeof *SHELLS; i++) {
        pid_t session, guard;
        pid_t c = start_guarded(SHELLS[i], ": guard-test-mark; exec sleep 300", &session, &guard);
        char line[8192], want[64];
        proc_cmdline(guard, line, sizeof line);
        snprintf(want, sizeof want, " tunedeck-guard %ld %ld", (long)c, (long)session);
        cr_assert_null(strstr(line, "guard-test-mark"), "%s: the guard's command line: %s",
                       SHELLS[i], line);
        cr_assert_not_null(strstr(line, want), "%s: the guard's command line: %s", SHELLS[i], line);
        end_guarded();
    }
}

/* A command killed with its session (its leader dead before the session process): what it
 * left running is the launcher's to stop (the orphan stop before the host's next trial,
 * faults.sh part 2), so the guard ends without a signal. Here the leader is a zombie when the
 * session dies; the guard's exit status says whether it stopped the group (its own KILL ends
 * it then). */
Test(groupstop, the_guard_leaves_a_group_whose_leader_died_with_its_session)
{
    for (size_t i = 0; i < sizeof SHELLS / sizeof *SHELLS; i++) {
        pid_t session, guard;
        pid_t c = start_guarded(SHELLS[i], "sleep 299 & exec sleep 300", &session, &guard);
        pid_t left;
        while (!(left = member_named(c, "sleep 299")))
            usleep(20 * 1000);
        kill(c, SIGKILL); /* running: its parent, the session, paused, has not reaped it */
        while (proc_state(c, NULL, NULL) != 'Z') /* its parent, paused, does not reap it */
            usleep(20 * 1000);
        kill(session, SIGKILL);
        waitpid(session, NULL, 0);
        int st = 0;
        cr_assert_eq(waitpid(guard, &st, 0), guard);
        cr_assert(WIFEXITED(st) && WEXITSTATUS(st) == 0, "%s: the guard ended with status %d",
                  SHELLS[i], st);
        char state = proc_state(left, NULL, NULL);
        cr_assert(state && state != 'Z', "%s: what the command left is stopped (%c)", SHELLS[i],
                  state ? state : '-');
        end_guarded();
    }
}

/* One mark per test: criterion runs them side by side, and each stop takes every process of
 * its mark. */
#define MARK test_mark(0x0)
#define END_MARK test_mark(0x1)
#define GUARD_MARK test_mark(0x2)
#define NONE_MARK test_mark(0x3)
#define KILL_MARK test_mark(0xc)
#define OTHER_MARK test_mark(0xff)

/* The shells a stop's text runs in: dash, bash, where busybox is installed its ash with its own
 * sh, grep, tr, sed and sleep and a pgrep as busybox's (no -g), once as it is (grep -z) and once
 * with a grep that refuses -z and stops at a NUL (an old busybox's: the stop reads each environ
 * through tr); the stops' texts, which sshd hands to the login shell, also where zsh is installed
 * in zsh, a login shell that splits no unquoted `$k` (the text runs itself under sh:
 * groupstop_under_sh). */
enum { N_STOP_SHELLS = 4, N_LOGIN_SHELLS = 5 };

/* Shell i >= 2: busybox's path, its tools linked in dir (a mkdtemp template; i == 3: a grep
 * that refuses -z and stops at a NUL); NULL where busybox is not installed. */
static const char *busybox_tools(size_t i, char *dir)
{
    static const char *const bb[] = {"/usr/bin/busybox", "/bin/busybox"};
    for (size_t b = 0; b < 2; b++) {
        if (access(bb[b], X_OK) != 0)
            continue;
        cr_assert_not_null(mkdtemp(dir));
        busybox_like_pgrep(dir);
        static const char *const tools[] = {"grep", "tr", "sed", "sleep", "cat", "sh"};
        char link[128];
        for (size_t t = i == 3; t < 6; t++) {
            snprintf(link, sizeof link, "%s/%s", dir, tools[t]);
            cr_assert_eq(symlink(bb[b], link), 0);
        }
        if (i == 3) {
            snprintf(link, sizeof link, "%s/grep", dir);
            FILE *g = fopen(link, "w");
            cr_assert_not_null(g);
            fprintf(g, "#!%s sh\ncase \"$1\" in -*z*) exit 2 ;; esac\nexec %s grep \"$@\"\n", bb[b],
                    bb[b]);
            fclose(g);
            cr_assert_eq(chmod(link, 0755), 0);
        }
        return bb[b];
    }
    return NULL;
}

static int shell_line(size_t i, const char *path, char *out, size_t cap)
{
    if (i == 0)
        return snprintf(out, cap, "%s %s", SHELLS[i], path), 1;
    if (i == 1) {
        /* The text runs itself again under `sh` (groupstop_under_sh), found in PATH: bash's
         * case has its own sh, as busybox's has, else it tests dash twice. */
        char dir[] = "/tmp/test-groupstop-bash-XXXXXX", link[64];
        cr_assert_not_null(mkdtemp(dir));
        snprintf(link, sizeof link, "%s/sh", dir);
        cr_assert_eq(symlink("/bin/bash", link), 0);
        return snprintf(out, cap, "PATH=%s:\"$PATH\" bash %s; r=$?; rm -rf %s; exit $r", dir, path,
                        dir),
               1;
    }
    if (i == 4)
        return access("/usr/bin/zsh", X_OK) == 0 || access("/bin/zsh", X_OK) == 0
                   ? (snprintf(out, cap, "zsh %s", path), 1)
                   : 0;
    char dir[] = "/tmp/test-groupstop-bb-XXXXXX";
    const char *bb = busybox_tools(i, dir);
    if (!bb)
        return 0;
    return snprintf(out, cap, "PATH=%s %s sh %s; r=$?; rm -rf %s; exit $r", dir, bb, path, dir), 1;
}

/* Runs `text` in shell i; its stdout in out. 0 when the shell is not there. */
static int run_in(size_t i, const char *text, char *out, size_t cap, int *status)
{
    char path[] = "/tmp/test-groupstop-XXXXXX";
    int fd = mkstemp(path);
    cr_assert(fd >= 0);
    cr_assert_eq(write(fd, text, strlen(text)), (ssize_t)strlen(text));
    close(fd);
    char line[512];
    if (!shell_line(i, path, line, sizeof line)) {
        unlink(path);
        return 0;
    }
    FILE *p = popen(line, "r");
    cr_assert_not_null(p);
    size_t n = fread(out, 1, cap - 1, p);
    out[n] = 0;
    *status = pclose(p);
    unlink(path);
    return 1;
}

/* Regression: a stop signalled the trial's process group only, and a daemon the trial had
 * started with setsid() (a group of its own) ran on after every stop. Now every process
 * marked with the launch's TUNEDECK_RUN_MARK is stopped too, a TERM it ignores answered by
 * the KILL; another launch's mark is left alone. */
Test(groupstop, the_stop_kills_a_marked_setsid_daemon_and_no_other)
{
    for (size_t i = 0; i < N_LOGIN_SHELLS; i++) {
        pid_t c = marked_daemon(MARK, 0); /* the wrapping shell: exec'd with the mark */
        pid_t d = marked_daemon(MARK, 1), o = marked_daemon(OTHER_MARK, 0);
        char *cmd = groupstop_command(c, MARK, 0);
        cr_assert_not_null(cmd);
        char out[4096];
        int st = 0;
        int ran = run_in(i, cmd, out, sizeof out, &st);
        free(cmd);
        int cs = ended_status(c), ds = ran ? ended_status(d) : -1;
        pid_t ow = waitpid(o, NULL, WNOHANG);
        ownkill_child(c, SIGKILL), ownkill_child(d, SIGKILL), ownkill_child(o, SIGKILL);
        while (waitpid(-1, NULL, WNOHANG) > 0)
            ;
        if (!ran)
            continue; /* no busybox (or zsh) here */
        cr_assert(WIFEXITED(st) && WEXITSTATUS(st) == 0, "shell %zu: status %d", i, st);
        cr_assert(cs != -1 && WIFSIGNALED(cs) && WTERMSIG(cs) == SIGTERM, "shell %zu", i);
        cr_assert(ds != -1, "shell %zu: the marked daemon runs on after the stop", i);
        cr_assert(WIFSIGNALED(ds) && WTERMSIG(ds) == SIGKILL, "shell %zu: status %d", i, ds);
        cr_assert_eq(ow, 0, "shell %zu: another launch's process was stopped", i);
    }
}

/* The KILL a live job's stop sends at stop_timeout_s (jobctl_signal, whose use of it
 * test_jobctl.c holds) reaches the group and every process marked with the run's mark (a setsid
 * daemon of the job that ignores TERM, whose wrapping shell's own stop never comes once the
 * group's KILL ended it), and none of another mark. */
Test(groupstop, the_kill_reaches_the_group_and_its_marked_daemon_and_no_other)
{
    for (size_t i = 0; i < N_LOGIN_SHELLS; i++) {
        pid_t c = marked_daemon(KILL_MARK, 0); /* the wrapping shell: exec'd with the mark */
        pid_t d = marked_daemon(KILL_MARK, 1), o = marked_daemon(OTHER_MARK, 0);
        char *cmd = groupstop_kill_command(c, KILL_MARK);
        cr_assert_not_null(cmd);
        char out[4096];
        int st = 0;
        int ran = run_in(i, cmd, out, sizeof out, &st);
        free(cmd);
        int cs = ended_status(c), ds = ran ? ended_status(d) : -1;
        pid_t ow = waitpid(o, NULL, WNOHANG);
        ownkill_child(c, SIGKILL), ownkill_child(d, SIGKILL), ownkill_child(o, SIGKILL);
        while (waitpid(-1, NULL, WNOHANG) > 0)
            ;
        if (!ran)
            continue; /* no busybox (or zsh) here */
        cr_assert(WIFEXITED(st) && WEXITSTATUS(st) == 0, "shell %zu: status %d", i, st);
        cr_assert(cs != -1 && WIFSIGNALED(cs) && WTERMSIG(cs) == SIGKILL, "shell %zu", i);
        cr_assert(ds != -1, "shell %zu: the marked daemon runs on after the KILL", i);
        cr_assert(WIFSIGNALED(ds) && WTERMSIG(ds) == SIGKILL, "shell %zu: status %d", i, ds);
        cr_assert_eq(ow, 0, "shell %zu: another run's process was killed", i);
    }
}

/* A process joining group g (whose leader may be a zombie the caller keeps), pausing. */
static pid_t joins_group(pid_t g)
{
    pid_t c = fork();
    cr_assert(c >= 0);
    if (c == 0) {
        if (setpgid(0, g) < 0)
            _exit(126);
        for (;;)
            pause();
    }
    setpgid(c, g); /* whichever of the two runs first */
    return c;
}

/* Regression: the KILL looked for the marked processes once, before anything was sent: one
 * that forked a setsid child in between left that child marked and running. Now the marked
 * ones outside the group are KILLed first, then the group (whose KILL ends the wrapping shell:
 * the next run may start), then the marked ones are looked for once more. */
Test(groupstop, the_kill_sends_the_marked_ones_theirs_first_and_looks_again_after_the_group)
{
    char *cmd = groupstop_kill_command(4242, KILL_MARK);
    cr_assert_not_null(cmd);
    char look[128];
    snprintf(look, sizeof look, "marked %s;", KILL_MARK);
    const char *first = strstr(cmd, look);
    const char *outside = strstr(cmd, "kill -KILL $ko ");
    const char *group = strstr(cmd, "kill -KILL -4242 ");
    cr_assert(first && outside && group, "%s", cmd);
    cr_assert(first < outside && outside < group, "%s", cmd);
    snprintf(look, sizeof look, "marked %s && kill -KILL $k", KILL_MARK);
    cr_assert_not_null(strstr(group, look), "%s", cmd);
    free(cmd);
}

/* With no mark (or one that is not 32 hex digits) the KILL is the group's alone, and nothing
 * tells whether the group is still the run's: it is sent, as before. */
Test(groupstop, the_kill_without_a_mark_is_the_groups_alone)
{
    static const char *const none[] = {NULL, "", "not-a-mark"};
    for (size_t n = 0; n < 3; n++) {
        char *cmd = groupstop_kill_command(4242, none[n]);
        cr_assert_not_null(cmd);
        cr_assert_not_null(strstr(cmd, "marked -; og=; { [ - = - ] || ours $g $k; } && og=1;"),
                           "%s", cmd);
        cr_assert_not_null(strstr(cmd, "[ -n \"$og\" ] && kill -KILL -4242 "), "%s", cmd);
        free(cmd);
    }
}

/* Regression (pidaudit): the KILL of a live job's stop (stop_timeout_s after its TERM) went to
 * group pgid whatever held that number by then. A job that ended on its TERM leaves its number
 * free, and a process that takes it and leads a group of its own (every command sshd starts)
 * was KILLed. Now the group is KILLed only while a process of the run's mark is in it, or pid
 * pgid is a zombie or absent; the run's marked daemon still is. Fails on the old code (the
 * group that took the number is KILLed). */
Test(groupstop, the_kill_spares_a_group_that_took_the_number)
{
    for (size_t i = 0; i < N_LOGIN_SHELLS; i++) {
        pid_t other = group_child(0); /* pid g taken again: alive, unmarked, leading its group */
        pid_t d = marked_daemon(KILL_MARK, 1);
        char *cmd = groupstop_kill_command(other, KILL_MARK);
        cr_assert_not_null(cmd);
        char out[4096];
        int st = 0;
        int ran = run_in(i, cmd, out, sizeof out, &st);
        free(cmd);
        int ds = ran ? ended_status(d) : -1;
        pid_t ow = waitpid(other, NULL, WNOHANG);
        if (ow == 0)
            kill(other, SIGKILL);
        if (ds == -1)
            kill(d, SIGKILL);
        while (waitpid(-1, NULL, WNOHANG) > 0)
            ;
        if (!ran)
            continue;
        cr_assert_eq(ow, 0, "shell %zu: the group that took the number was KILLed", i);
        cr_assert(ds != -1 && WIFSIGNALED(ds) && WTERMSIG(ds) == SIGKILL,
                  "shell %zu: the marked daemon: status %d", i, ds);
    }
}

/* A job that ended on its TERM, its wrapping shell a zombie its sshd has not reaped yet: pid g
 * is not another's, and what is left of the group (a child that ignored the TERM, unmarked) is
 * the run's: the KILL reaches it. */
Test(groupstop, the_kill_reaches_what_is_left_of_a_group_whose_leader_is_a_zombie)
{
    for (size_t i = 0; i < N_LOGIN_SHELLS; i++) {
        pid_t z = group_child(1);
        pid_t c = joins_group(z);
        char *cmd = groupstop_kill_command(z, KILL_MARK);
        cr_assert_not_null(cmd);
        char out[4096];
        int st = 0;
        int ran = run_in(i, cmd, out, sizeof out, &st);
        free(cmd);
        int cs = ran ? ended_status(c) : -1;
        if (cs == -1)
            kill(c, SIGKILL);
        waitpid(z, NULL, 0);
        while (waitpid(-1, NULL, WNOHANG) > 0)
            ;
        if (!ran)
            continue;
        cr_assert(cs != -1 && WIFSIGNALED(cs) && WTERMSIG(cs) == SIGKILL, "shell %zu: %d", i, cs);
    }
}

/* Regression (pidaudit): a live job's TERM (a resize, a stop: jobctl_signal) went to group
 * pgid as a plain `kill -TERM -PGID`, which a run that had just ended (its channel not yet seen
 * done) leaves free for another's group. It now goes only while the run's mark is in the group:
 * the wrapping shell that carries it gets it, a group that took the number does not. Fails on
 * the old code (a plain kill: the other group is TERMed). */
Test(groupstop, a_signal_goes_to_the_runs_group_and_spares_one_that_took_the_number)
{
    for (size_t i = 0; i < N_LOGIN_SHELLS; i++) {
        pid_t c = marked_daemon(KILL_MARK, 0), other = group_child(0);
        char *to_c = groupstop_signal_command(c, KILL_MARK, "TERM");
        char *to_other = groupstop_signal_command(other, KILL_MARK, "TERM");
        cr_assert(to_c && to_other);
        char out[4096];
        int st_c = 0, st_other = 0;
        int ran = run_in(i, to_c, out, sizeof out, &st_c) &&
                  run_in(i, to_other, out, sizeof out, &st_other);
        free(to_c), free(to_other);
        int cs = ran ? ended_status(c) : -1;
        pid_t ow = waitpid(other, NULL, WNOHANG);
        if (cs == -1)
            kill(c, SIGKILL);
        if (ow == 0)
            kill(other, SIGKILL);
        while (waitpid(-1, NULL, WNOHANG) > 0)
            ;
        if (!ran)
            continue;
        cr_assert(cs != -1 && WIFSIGNALED(cs) && WTERMSIG(cs) == SIGTERM, "shell %zu: %d", i, cs);
        cr_assert(WIFEXITED(st_c) && WEXITSTATUS(st_c) == 0, "shell %zu: %d", i, st_c);
        cr_assert_eq(ow, 0, "shell %zu: the group that took the number was signalled", i);
        cr_assert(WIFEXITED(st_other) && WEXITSTATUS(st_other) != 0, "shell %zu", i);
    }
}

/* A command that ended by itself and left a daemon: the stop of what it left names it, as
 * the local keeper's note does, and stops it. The wrapping shell (the group's leader) has
 * ended, a zombie its parent has not reaped yet: its number is not another's, and the group's
 * leftover, unmarked, is stopped, not named. */
Test(groupstop, the_stop_after_the_end_names_what_the_command_left)
{
    for (size_t i = 0; i < N_LOGIN_SHELLS; i++) {
        pid_t z = group_child(1);
        pid_t c = joins_group(z);
        pid_t d = marked_daemon(END_MARK, 0);
        char *cmd = groupstop_command(z, END_MARK, 1);
        char out[4096], want[512];
        int st = 0;
        int ran = run_in(i, cmd, out, sizeof out, &st);
        free(cmd);
        int cs = ended_status(c), ds = ran ? ended_status(d) : -1;
        ownkill_child(c, SIGKILL), ownkill_child(d, SIGKILL);
        waitpid(z, NULL, 0);
        while (waitpid(-1, NULL, WNOHANG) > 0)
            ;
        if (!ran)
            continue;
        snprintf(want, sizeof want,
                 GROUPSTOP_NOTE "the trial's command ended and left processes running (%ld sleep "
                                "(outside the trial's process group)); stopping them: TERM, KILL "
                                "after 2000 ms\n",
                 (long)d);
        cr_assert_str_eq(out, want, "shell %zu: %s", i, out);
        cr_assert(cs != -1 && ds != -1, "shell %zu: something runs on", i);
        cr_assert(WIFSIGNALED(ds) && WTERMSIG(ds) == SIGTERM, "shell %zu: status %d", i, ds);
    }
}

/* After the command's end, pid g may be another's: the wrapping shell and its group ended, and
 * a process that took the number leads a group of its own (as every command sshd starts does).
 * That group is not signalled (it was, TERM then KILL: another trial's, or another suite's,
 * process group); the launch's marked daemon still is. */
Test(groupstop, the_stop_after_the_end_spares_a_group_that_took_the_number)
{
    for (size_t i = 0; i < N_LOGIN_SHELLS; i++) {
        pid_t other = group_child(0); /* pid g taken again: alive, unmarked, leading its group */
        pid_t d = marked_daemon(END_MARK, 0);
        char *cmd = groupstop_command(other, END_MARK, 1);
        char out[4096];
        int st = 0;
        int ran = run_in(i, cmd, out, sizeof out, &st);
        free(cmd);
        int ds = ran ? ended_status(d) : -1;
        pid_t ow = waitpid(other, NULL, WNOHANG);
        ownkill_child(other, SIGKILL), ownkill_child(d, SIGKILL);
        while (waitpid(-1, NULL, WNOHANG) > 0)
            ;
        if (!ran)
            continue;
        cr_assert_eq(ow, 0, "shell %zu: the group that took the number was stopped", i);
        cr_assert(ds != -1 && WIFSIGNALED(ds) && WTERMSIG(ds) == SIGTERM,
                  "shell %zu: the marked daemon: status %d", i, ds);
    }
}

/* Nothing marked left: no note, and the stop is over at once. */
Test(groupstop, the_stop_after_the_end_says_nothing_when_nothing_was_left)
{
    for (size_t i = 0; i < N_LOGIN_SHELLS; i++) {
        pid_t z = group_child(1);
        waitpid(z, NULL, 0);
        char *cmd = groupstop_command(z, NONE_MARK, 1);
        char out[4096];
        int st = 0;
        int ran = run_in(i, cmd, out, sizeof out, &st);
        free(cmd);
        if (ran)
            cr_assert_str_eq(out, "", "shell %zu", i);
    }
}

/* A mark that is not one is no mark: only the group is stopped. */
Test(groupstop, a_mark_that_is_not_32_hex_digits_marks_nothing)
{
    char *cmd = groupstop_command(77, "0123; rm -rf /", 1);
    cr_assert_not_null(cmd);
    cr_assert_null(strstr(cmd, "rm -rf"));
    cr_assert_not_null(strstr(cmd, "g=77 m=-;"));
    free(cmd);
}

/* Marks the one check (groupstop_mark_ok) must take: GROUPSTOP_MARK_CHARS lowercase hex
 * digits, the lowest and highest digits included. */
static const char *const GOOD_MARKS[] = {
    "0123456789abcdef0123456789abcdef",
    "00000000000000000000000000000000",
    "ffffffffffffffffffffffffffffffff",
};
/* And what it must refuse: the wrong length either way, a digit in upper case, a character
 * that is no hex digit, anything around the digits (a blank, a newline, shell text). */
static const char *const BAD_MARKS[] = {
    "",
    "-",
    "0123456789abcdef0123456789abcde",
    "0123456789abcdef0123456789abcdef0",
    "0123456789ABCDEF0123456789ABCDEF",
    "0123456789abcdef0123456789abcdeF",
    "0123456789abcdef0123456789abcdeg",
    " 0123456789abcdef0123456789abcdef",
    "0123456789abcdef0123456789abcdef\n",
    "0123456789abcdef 123456789abcdef",
    "0123456789abcdef0123456789ab;x -1",
    "0123456789abcdef0123456789abcdef; kill -9 -1",
};

Test(groupstop, a_mark_is_exactly_32_lowercase_hex_digits_and_null_is_none)
{
    cr_assert_eq(GROUPSTOP_MARK_CHARS, 32);
    for (size_t i = 0; i < sizeof GOOD_MARKS / sizeof *GOOD_MARKS; i++) {
        cr_assert_eq(strlen(GOOD_MARKS[i]), GROUPSTOP_MARK_CHARS);
        cr_assert(groupstop_mark_ok(GOOD_MARKS[i]), "%s", GOOD_MARKS[i]);
    }
    for (size_t i = 0; i < sizeof BAD_MARKS / sizeof *BAD_MARKS; i++)
        cr_assert_not(groupstop_mark_ok(BAD_MARKS[i]), "'%s'", BAD_MARKS[i]);
    cr_assert_not(groupstop_mark_ok(NULL));
}

/* The stops put a mark into their text exactly where the check takes it, "-" (no process's)
 * for any other: one rule for the stop, the KILL and the orphan stop alike. */
Test(groupstop, the_stops_name_a_mark_exactly_where_the_check_takes_it)
{
    const char *all[sizeof GOOD_MARKS / sizeof *GOOD_MARKS + sizeof BAD_MARKS / sizeof *BAD_MARKS];
    size_t n = 0;
    for (size_t i = 0; i < sizeof GOOD_MARKS / sizeof *GOOD_MARKS; i++)
        all[n++] = GOOD_MARKS[i];
    for (size_t i = 0; i < sizeof BAD_MARKS / sizeof *BAD_MARKS; i++)
        all[n++] = BAD_MARKS[i];
    for (size_t i = 0; i < n; i++) {
        const char *named = groupstop_mark_ok(all[i]) ? all[i] : "-";
        char stop_want[96], kill_want[96];
        snprintf(stop_want, sizeof stop_want, "g=77 m=%s;", named);
        snprintf(kill_want, sizeof kill_want, "marked %s && kill -KILL $k", named);
        for (int ended = 0; ended < 2; ended++) {
            char *cmd = groupstop_command(77, all[i], ended);
            cr_assert_not_null(cmd);
            cr_assert_not_null(strstr(cmd, stop_want), "'%s' ended %d", all[i], ended);
            free(cmd);
        }
        char *cmd = groupstop_kill_command(77, all[i]);
        cr_assert_not_null(cmd);
        cr_assert_not_null(strstr(cmd, kill_want), "'%s'", all[i]);
        free(cmd);
    }
    char *cmd = groupstop_command(77, NULL, 0);
    cr_assert_not_null(strstr(cmd, "g=77 m=-;"));
    free(cmd);
}

/* Regression: the guard stopped the group of a command whose session died, and a daemon the
 * command had started with setsid() ran on. It reads the mark from the command's environment
 * when it stops, and a daemon that ignores TERM gets the KILL. */
Test(groupstop, the_guard_stops_a_marked_setsid_daemon_of_the_command)
{
    for (size_t i = 0; i < sizeof SHELLS / sizeof *SHELLS; i++) {
        char dir[] = "/tmp/test-groupstop-d-XXXXXX";
        cr_assert_not_null(mkdtemp(dir));
        char command[512], file[64];
        snprintf(file, sizeof file, "%s/pid", dir);
        snprintf(command, sizeof command,
                 "TUNEDECK_RUN_MARK=%s; export TUNEDECK_RUN_MARK; "
                 "setsid sh -c 'trap \"\" TERM; echo $$ > %s.new; mv %s.new %s; exec sleep 302' "
                 "& exec sleep 300",
                 GUARD_MARK, file, file, file);
        pid_t session, guard;
        pid_t c = start_guarded(SHELLS[i], command, &session, &guard);
        long d = 0;
        for (int n = 0; n < 1000 && !d; n++) {
            FILE *f = fopen(file, "r");
            if (!f || fscanf(f, "%ld", &d) != 1)
                usleep(10 * 1000);
            if (f)
                fclose(f);
        }
        cr_assert_gt(d, 0, "%s: the daemon never started", SHELLS[i]);
        pid_t dg = 0;
        while (proc_state((pid_t)d, NULL, &dg) && dg != (pid_t)d) /* its setsid done */
            usleep(10 * 1000);
        kill(session, SIGKILL);
        waitpid(session, NULL, 0);
        int cs = ended_status(c), ds = ended_status((pid_t)d);
        end_guarded(); /* d, handed to this process once its shell ended: KILLed while unreaped */
        unlink(file);
        rmdir(dir);
        cr_assert(cs != -1 && WIFSIGNALED(cs) && WTERMSIG(cs) == SIGTERM, "%s", SHELLS[i]);
        cr_assert(ds != -1, "%s: the daemon runs on after the guard's stop", SHELLS[i]);
        cr_assert(WIFSIGNALED(ds) && WTERMSIG(ds) == SIGKILL, "%s: status %d", SHELLS[i], ds);
    }
}

/* The trial's wrapping shell (groupstop_trial_sh) in shell i, started as the login shell sshd
 * starts would exec it: a session and group of its own, TUNEDECK_RUN_MARK=mark and the command
 * in its environment, stdin /dev/null. Its stdout and stderr, together, in out; its wait status
 * in *status. With term_at_up, it gets a stop's URG and its group a TERM once "up" was said
 * (groupstop_command's order); with term_at_up 2, only the group's TERM (a live job's resize or
 * stop: jobctl_signal). It runs as `tunedeck-trial`, or as run_as where that is set. 0 when the
 * shell is not there. */
static const char *run_as;
/* The wrapping shell's text run_trial runs, where not groupstop_trial_sh (a stand-in clock). */
static const char *trial_text;
#define TRIAL_MARK test_mark(0x4)
#define TRIAL_NONE_MARK test_mark(0x5)
#define TRIAL_TERM_MARK test_mark(0x6)
#define TRIAL_KILL0_MARK test_mark(0x7)
#define TRIAL_UNMARKED_MARK test_mark(0x8)
#define TRIAL_JOB_MARK test_mark(0x9)
#define TRIAL_GUARDED_MARK test_mark(0xa)
#define TRIAL_CKPT_MARK test_mark(0xb)
#define TRIAL_CLOCK_MARK test_mark(0xd)
static int run_trial(size_t i, const char *command, const char *mark, int term_at_up, char *out,
                     size_t cap, int *status)
{
    char dir[] = "/tmp/test-groupstop-tb-XXXXXX";
    const char *bb = i < 2 ? NULL : busybox_tools(i, dir);
    if (i >= 2 && !bb)
        return 0;
    char path[] = "/tmp/test-groupstop-t-XXXXXX";
    int fd = mkstemp(path);
    cr_assert(fd >= 0);
    const char *text = trial_text ? trial_text : groupstop_trial_sh;
    size_t len = strlen(text);
    cr_assert_eq(write(fd, text, len), (ssize_t)len);
    close(fd);
    int p[2];
    cr_assert_eq(pipe(p), 0);
    pid_t c = fork();
    cr_assert(c >= 0);
    if (c == 0) {
        setsid();
        int null = open("/dev/null", O_RDONLY);
        if (null < 0 || dup2(null, 0) < 0 || dup2(p[1], 1) < 0 || dup2(p[1], 2) < 0)
            _exit(126);
        close(p[0]), close(p[1]), close(null);
        setenv("TUNEDECK_RUN_MARK", mark, 1);
        setenv(GROUPSTOP_CMD_VAR, command, 1);
        if (bb) {
            char pathvar[128];
            snprintf(pathvar, sizeof pathvar, "%s:/usr/bin:/bin", dir);
            setenv("PATH", pathvar, 1);
            if (run_as)
                execl(bb, "busybox", "sh", "-c", text, run_as, (char *)NULL);
            execl(bb, "busybox", "sh", path, (char *)NULL);
        } else {
            if (run_as)
                execlp(SHELLS[i], SHELLS[i], "-c", text, run_as, (char *)NULL);
            execlp(SHELLS[i], SHELLS[i], path, (char *)NULL);
        }
        _exit(127);
    }
    close(p[1]);
    size_t n = 0;
    int termed = 0;
    ssize_t r;
    out[0] = 0;
    while (n + 1 < cap && (r = read(p[0], out + n, cap - 1 - n)) > 0) {
        n += (size_t)r;
        out[n] = 0;
        if (term_at_up && !termed && strstr(out, "up\n")) /* as a stop does: URG, then TERM */
            termed = (term_at_up == 2 || kill(c, SIGURG) == 0) && kill(-c, SIGTERM) == 0;
    }
    close(p[0]);
    cr_assert_eq(waitpid(c, status, 0), c);
    unlink(path);
    if (bb) {
        char rm[96];
        snprintf(rm, sizeof rm, "rm -rf %s", dir);
        cr_assert_eq(system(rm), 0);
    }
    return 1;
}

/* Until pid has ended (gone, or a zombie that init reaps): 10 s at most; 0 if it runs on. */
static int gone_within_10s(pid_t pid)
{
    for (int n = 0; n < 1000; n++) {
        char state = proc_state(pid, NULL, NULL);
        if (!state || state == 'Z')
            return 1;
        usleep(10 * 1000);
    }
    return 0;
}

/* Regression (exec-channel count): what a trial's command left was stopped by a second SSH
 * exec per host, which the trial waited for. Now the trial's own wrapping shell stops it once
 * the command has ended: a marked daemon outside the group (TERM ignored: KILLed) and a child
 * left in the group, named in the note on its stderr as the local keeper names them; then it
 * says it is done, and ends with the command's status. Another launch's process is left. */
Test(groupstop, the_trial_shell_stops_what_its_command_left_and_names_it, .timeout = TEST_TIMEOUT_S)
{
    for (size_t i = 0; i < N_STOP_SHELLS; i++) {
        char file[] = "/tmp/test-groupstop-tp-XXXXXX";
        int fd = mkstemp(file);
        cr_assert(fd >= 0);
        close(fd);
        pid_t d = marked_daemon(TRIAL_MARK, 1), o = marked_daemon(OTHER_MARK, 0);
        char command[256], out[4096], name[128];
        snprintf(command, sizeof command, "sleep 301 & echo $! > %s; echo out; exit 3", file);
        int st = 0;
        int ran = run_trial(i, command, TRIAL_MARK, 0, out, sizeof out, &st);
        int ds = ran ? ended_status(d) : -1;
        pid_t ow = waitpid(o, NULL, WNOHANG);
        long left = 0;
        FILE *f = fopen(file, "r");
        if (f && fscanf(f, "%ld", &left) != 1)
            left = 0;
        if (f)
            fclose(f);
        unlink(file);
        int left_gone = left > 0 && gone_within_10s((pid_t)left);
        ownkill_child(d, SIGKILL), ownkill_child(o, SIGKILL);
        if (left > 0)
            ownkill_named((pid_t)left, "sleep 301", SIGKILL);
        while (waitpid(-1, NULL, WNOHANG) > 0)
            ;
        if (!ran)
            continue; /* no busybox (or zsh) here */
        cr_assert(WIFEXITED(st) && WEXITSTATUS(st) == 3, "shell %zu: status %d: %s", i, st, out);
        cr_assert(strncmp(out,
                          "out\n" GROUPSTOP_NOTE "the trial's command ended and left "
                          "processes running (",
                          strlen("out\n" GROUPSTOP_NOTE) + 50) == 0,
                  "shell %zu: %s", i, out);
        snprintf(name, sizeof name, "%ld sleep (outside the trial's process group)", (long)d);
        cr_assert_not_null(strstr(out, name), "shell %zu: %s", i, out);
        snprintf(name, sizeof name, "%ld sleep", left);
        cr_assert_not_null(strstr(out, name), "shell %zu: the group's leftover: %s", i, out);
        cr_assert_not_null(
            strstr(out, "); stopping them: TERM, KILL after 2000 ms\n" GROUPSTOP_ENDED "\n"),
            "shell %zu: %s", i, out);
        cr_assert(ds != -1 && WIFSIGNALED(ds) && WTERMSIG(ds) == SIGKILL, "shell %zu: %d", i, ds);
        cr_assert(left_gone, "shell %zu: the group's leftover runs on", i);
        cr_assert_eq(ow, 0, "shell %zu: another launch's process was stopped", i);
    }
}

/* Nothing left: no note, and it ends as its command did: an exit status, a signal (raised
 * again, no "Killed" of the shell's in the log), a status above 128 that is no signal's (it
 * must not stop itself with SIGSTOP); the command has no descriptor of the shell's. The shell
 * carries the mark: it must never find itself (it would have named and KILLed itself). */
Test(groupstop, the_trial_shell_that_left_nothing_says_so_and_ends_as_its_command_did,
     .timeout = TEST_TIMEOUT_S)
{
    static const struct {
        const char *command;
        int sig, status;
    } cases[] = {
        {"exit 0", 0, 0},
        {"echo said >&2; kill -USR1 $$", SIGUSR1, 0},
        {"kill -KILL $$", SIGKILL, 0},
        {"exit 147", 0, 147},
        {"[ -e /proc/$$/fd/3 ] && echo fd3; exit 0", 0, 0},
    };
    for (size_t i = 0; i < N_STOP_SHELLS; i++)
        for (size_t c = 0; c < sizeof cases / sizeof *cases; c++) {
            char out[4096];
            int st = 0;
            if (!run_trial(i, cases[c].command, TRIAL_NONE_MARK, 0, out, sizeof out, &st))
                continue;
            const char *want =
                cases[c].sig == SIGUSR1 ? "said\n" GROUPSTOP_ENDED "\n" : GROUPSTOP_ENDED "\n";
            cr_assert_str_eq(out, want, "shell %zu, %s: %s", i, cases[c].command, out);
            if (cases[c].sig)
                cr_assert(WIFSIGNALED(st) && WTERMSIG(st) == cases[c].sig && !WCOREDUMP(st),
                          "shell %zu, %s: status %d", i, cases[c].command, st);
            else
                cr_assert(WIFEXITED(st) && WEXITSTATUS(st) == cases[c].status,
                          "shell %zu, %s: status %d", i, cases[c].command, st);
        }
}

/* A stop (URG to the shell, TERM to the group) while the command runs: the shell waits for the
 * command, which has its own TERM (a checkpoint; its stderr quiet: a shell says "Terminated" of its
 * sleep), ends with its status, and leaves the stop to the stop that sent it: no note, no "ended",
 * a marked process untouched. */
Test(groupstop, a_term_to_the_trial_shell_waits_for_its_command_and_skips_its_own_stop,
     .timeout = TEST_TIMEOUT_S)
{
    for (size_t i = 0; i < N_STOP_SHELLS; i++) {
        pid_t d = marked_daemon(TRIAL_TERM_MARK, 0);
        char out[4096];
        int st = 0;
        int ran = run_trial(i,
                            "trap 'echo termed; exit 5' TERM; exec 2>/dev/null; echo up; "
                            "while :; do sleep 0.1; done",
                            TRIAL_TERM_MARK, 1, out, sizeof out, &st);
        pid_t dw = waitpid(d, NULL, WNOHANG);
        ownkill_child(d, SIGKILL);
        while (waitpid(-1, NULL, WNOHANG) > 0)
            ;
        if (!ran)
            continue;
        cr_assert_str_eq(out, "up\ntermed\n", "shell %zu: %s", i, out);
        cr_assert(WIFEXITED(st) && WEXITSTATUS(st) == 5, "shell %zu: status %d", i, st);
        cr_assert_eq(dw, 0, "shell %zu: the marked process was stopped", i);
    }
}

/* The pid a command wrote in file (0 if none). */
static long pid_in(const char *file)
{
    long pid = 0;
    FILE *f = fopen(file, "r");
    if (f && fscanf(f, "%ld", &pid) != 1)
        pid = 0;
    if (f)
        fclose(f);
    return pid;
}

/* Regression: the wrapping shell TERMed the other processes of its group but neither waited
 * for them nor KILLed them, and only marked ones were named: a process the command left in
 * the group that emptied its environment (no mark) and ignores TERM outlived the trial. Now
 * it is named, waited for, and KILLed after the grace, as marked ones are. */
Test(groupstop, the_trial_shell_kills_an_unmarked_group_member_that_ignores_term,
     .timeout = TEST_TIMEOUT_S)
{
    for (size_t i = 0; i < N_STOP_SHELLS; i++) {
        char file[] = "/tmp/test-groupstop-tu-XXXXXX";
        int fd = mkstemp(file);
        cr_assert(fd >= 0);
        close(fd);
        char command[256], out[4096], name[64];
        snprintf(command, sizeof command,
                 "env -i sh -c 'trap \"\" TERM; echo $$ > %s; exec sleep 304' >/dev/null 2>&1 & "
                 "while [ ! -s %s ]; do sleep 0.01; done; sleep 0.1; exit 0",
                 file, file);
        int st = 0;
        int ran = run_trial(i, command, TRIAL_UNMARKED_MARK, 0, out, sizeof out, &st);
        long left = pid_in(file);
        unlink(file);
        int left_gone = left > 0 && gone_within_10s((pid_t)left);
        if (left > 0)
            ownkill_named((pid_t)left, "sleep 304", SIGKILL);
        while (waitpid(-1, NULL, WNOHANG) > 0)
            ;
        if (!ran)
            continue;
        cr_assert(WIFEXITED(st) && WEXITSTATUS(st) == 0, "shell %zu: status %d: %s", i, st, out);
        snprintf(name, sizeof name, "(%ld sleep); stopping them", left);
        cr_assert_not_null(strstr(out, name), "shell %zu: %s", i, out);
        cr_assert_not_null(strstr(out, "\n" GROUPSTOP_ENDED "\n"), "shell %zu: %s", i, out);
        cr_assert(left_gone, "shell %zu: the unmarked leftover runs on: %s", i, out);
    }
}

/* Regression (CI risk: a live job's 20 s wait ran 27 s on a loaded host): the wait before the
 * KILL counted passes of its loop (20 for a trial), not time, and each pass also runs `marked`
 * and `members`, which on a loaded host or one with thousands of processes cost as much as the
 * pass's `sleep 0.1` or far more. Here each `sleep` of the wrapping shell takes 0.3 s and logs a
 * line: with a deadline of 2 s the KILL comes after 8 or so (10 at most: tenths read coarse),
 * where the old loop slept 20 times (checked: fails on the old code with 20). dash and bash only:
 * their PATH is this process's (busybox's is its tools' folder; its loop runs in the other tests). */
Test(groupstop, the_trial_shells_wait_before_the_kill_is_time_not_passes,
     .timeout = TEST_TIMEOUT_S)
{
    char dir[] = "/tmp/test-groupstop-sl-XXXXXX";
    cr_assert_not_null(mkdtemp(dir));
    char fake[128], log[128], path[4096];
    snprintf(fake, sizeof fake, "%s/sleep", dir);
    snprintf(log, sizeof log, "%s/log", dir);
    FILE *f = fopen(fake, "w");
    cr_assert_not_null(f);
    fprintf(f, "#!/bin/sh\necho x >> %s\nexec /bin/sleep 0.3\n", log);
    fclose(f);
    cr_assert_eq(chmod(fake, 0755), 0);
    const char *old = getenv("PATH");
    snprintf(path, sizeof path, "%s:%s", dir, old ? old : "/usr/bin:/bin");
    cr_assert_eq(setenv("PATH", path, 1), 0);
    for (size_t i = 0; i < 2; i++) {
        char file[] = "/tmp/test-groupstop-tw-XXXXXX";
        int fd = mkstemp(file);
        cr_assert(fd >= 0);
        close(fd);
        unlink(log);
        char command[384], out[4096];
        snprintf(command, sizeof command,
                 "env -i /bin/sh -c 'trap \"\" TERM; echo $$ > %s; exec /bin/sleep 306' "
                 ">/dev/null 2>&1 & while [ ! -s %s ]; do /bin/sleep 0.01; done; exit 0",
                 file, file);
        int st = 0;
        int ran = run_trial(i, command, TRIAL_UNMARKED_MARK, 0, out, sizeof out, &st);
        long left = pid_in(file);
        unlink(file);
        int left_gone = left > 0 && gone_within_10s((pid_t)left);
        if (left > 0)
            ownkill_named((pid_t)left, "/bin/sleep 306", SIGKILL);
        while (waitpid(-1, NULL, WNOHANG) > 0)
            ;
        if (!ran)
            continue;
        int sleeps = 0;
        FILE *l = fopen(log, "r");
        for (int c; l && (c = fgetc(l)) != EOF;)
            sleeps += c == '\n';
        if (l)
            fclose(l);
        cr_assert(left_gone, "shell %zu: the leftover runs on: %s", i, out);
        cr_assert_not_null(strstr(out, "\n" GROUPSTOP_ENDED "\n"), "shell %zu: %s", i, out);
        cr_assert(sleeps >= 1 && sleeps <= 10, "shell %zu: %d passes before the KILL", i, sleeps);
    }
    unlink(log);
    unlink(fake);
    rmdir(dir);
}

/* The wait before the KILL where the wrapping shell had a TERM: a live job's 20 s (the live
 * scheduler's stop_timeout_s, GROUPSTOP_JOB_WAIT_S, for its checkpoint), a trial's 2 s, by the
 * host's clock, with no 20 s in the test: the shipped text is run with its /proc/uptime put in
 * a file, and a stand-in `sleep` (the loop's) moves that clock 2 s at each call. A leftover in
 * the group that ignores TERM is KILLed once the clock reached the deadline: after 10 sleeps
 * as a job, 1 as a trial, then the one sleep after the KILL. dash and bash only (busybox's
 * PATH is its tools' folder). */
Test(groupstop, a_had_terms_wait_is_20_s_of_the_clock_for_a_job_and_2_s_for_a_trial,
     .timeout = TEST_TIMEOUT_S)
{
    char dir[] = "/tmp/test-groupstop-ck-XXXXXX";
    cr_assert_not_null(mkdtemp(dir));
    char fake[128], clock[128], path[4096];
    snprintf(fake, sizeof fake, "%s/sleep", dir);
    snprintf(clock, sizeof clock, "%s/uptime", dir);
    FILE *f = fopen(fake, "w");
    cr_assert_not_null(f);
    /* uptime as the kernel prints it: whole seconds, two decimals, then idle time */
    fprintf(f,
            "#!/bin/sh\nread -r u _ < %s\nu=${u%%.*}\necho \"$((u + 2)).00 1.00\" > %s\n"
            "exec /bin/sleep 0.01\n",
            clock, clock);
    fclose(f);
    cr_assert_eq(chmod(fake, 0755), 0);
    const char *old = getenv("PATH");
    snprintf(path, sizeof path, "%s:%s", dir, old ? old : "/usr/bin:/bin");
    cr_assert_eq(setenv("PATH", path, 1), 0);
    /* the shipped text, its one /proc/uptime the file */
    const char *at = strstr(groupstop_trial_sh, "/proc/uptime");
    cr_assert(at && !strstr(at + 1, "/proc/uptime"));
    size_t text_cap = strlen(groupstop_trial_sh) + sizeof clock;
    char *text = malloc(text_cap);
    cr_assert_not_null(text);
    snprintf(text, text_cap, "%.*s%s%s", (int)(at - groupstop_trial_sh), groupstop_trial_sh, clock,
             at + strlen("/proc/uptime"));
    trial_text = text;
    static const struct {
        const char *as;
        long sleeps;
        const char *note;
    } runs[] = {
        {GROUPSTOP_JOB_NAME, GROUPSTOP_JOB_WAIT_S / 2 + 1,
         GROUPSTOP_HAD_TERM GROUPSTOP_JOB_TICKS "00 ms"},
        {NULL, 2, GROUPSTOP_HAD_TERM "2000 ms"},
    };
    for (size_t r = 0; r < 2; r++) {
        run_as = runs[r].as;
        for (size_t i = 0; i < 2; i++) {
            f = fopen(clock, "w");
            cr_assert_not_null(f);
            fprintf(f, "1000.00 1.00\n");
            fclose(f);
            char file[] = "/tmp/test-groupstop-ckl-XXXXXX";
            int fd = mkstemp(file);
            cr_assert(fd >= 0);
            close(fd);
            char command[384], out[4096];
            snprintf(command, sizeof command,
                     "env -i /bin/sh -c 'trap \"\" TERM; echo $$ > %s; exec /bin/sleep 307' "
                     ">/dev/null 2>&1 & while [ ! -s %s ]; do /bin/sleep 0.01; done; echo up; "
                     "exec /bin/sleep 300",
                     file, file);
            int st = 0;
            int ran = run_trial(i, command, TRIAL_CLOCK_MARK, 2, out, sizeof out, &st);
            long left = pid_in(file);
            unlink(file);
            int left_gone = left > 0 && gone_within_10s((pid_t)left);
            if (left > 0)
                ownkill_named((pid_t)left, "/bin/sleep 307", SIGKILL);
            while (waitpid(-1, NULL, WNOHANG) > 0)
                ;
            if (!ran)
                continue;
            long now = 0;
            f = fopen(clock, "r");
            cr_assert(f && fscanf(f, "%ld", &now) == 1);
            fclose(f);
            const char *as = runs[r].as ? runs[r].as : "tunedeck-trial";
            cr_assert(left_gone, "%s in shell %zu: the leftover runs on: %s", as, i, out);
            cr_assert_not_null(strstr(out, runs[r].note), "%s in shell %zu: %s", as, i, out);
            cr_assert_eq((now - 1000) / 2, runs[r].sleeps, "%s in shell %zu: %ld sleeps of 2 s: %s",
                         as, i, (now - 1000) / 2, out);
        }
    }
    run_as = NULL;
    trial_text = NULL;
    free(text);
    unlink(clock);
    unlink(fake);
    rmdir(dir);
}

/* Regression: a TERM from the command's own `kill 0` (its group, the wrapping shell with it)
 * made the shell skip its stop as if a stop had sent it, and a marked daemon the command left
 * waited for the launcher's stop over a second exec channel. A TERM without a stop's URG now
 * leaves the shell's own stop to run: the daemon is named and KILLed, the shell says it is done
 * and ends by the command's TERM. */
Test(groupstop, a_commands_own_kill_0_still_gets_the_trial_shells_own_stop,
     .timeout = TEST_TIMEOUT_S)
{
    for (size_t i = 0; i < N_STOP_SHELLS; i++) {
        pid_t d = marked_daemon(TRIAL_KILL0_MARK, 1);
        char out[4096], name[96];
        int st = 0;
        int ran = run_trial(i, "exec 2>/dev/null; sleep 305 & kill 0; wait", TRIAL_KILL0_MARK, 0,
                            out, sizeof out, &st);
        int ds = ran ? ended_status(d) : -1;
        ownkill_child(d, SIGKILL);
        while (waitpid(-1, NULL, WNOHANG) > 0)
            ;
        if (!ran)
            continue;
        snprintf(name, sizeof name, "%ld sleep (outside the trial's process group)", (long)d);
        cr_assert_not_null(strstr(out, name), "shell %zu: %s", i, out);
        cr_assert_not_null(strstr(out, "\n" GROUPSTOP_ENDED "\n"), "shell %zu: %s", i, out);
        cr_assert(WIFSIGNALED(st) && WTERMSIG(st) == SIGTERM, "shell %zu: status %d", i, st);
        cr_assert(ds != -1 && WIFSIGNALED(ds) && WTERMSIG(ds) == SIGKILL, "shell %zu: %d", i, ds);
    }
}

/* Regression (a live job's checkpoint KILLed after 2 s): a resize or stop TERMs the job's group
 * with no stop's URG (jobctl_signal) and gives the job stop_timeout_s (20 s) to checkpoint. The
 * job's top shell ended at once while its child still checkpointed (`bash run.sh` with python
 * as a child, `cmd & wait`), and the wrapping shell, seeing its command end, TERMed the group
 * again and KILLed the child 2 s later: its checkpoint never finished. Now a TERM the wrapping
 * shell had itself is the group's: it sends none again and waits for the checkpoint (a job's
 * 20 s) before any KILL. Fails on the old code: "ckpt-start" twice, no "ckpt-done". */
Test(groupstop, a_jobs_checkpointing_child_outlives_its_top_shell_and_is_not_termed_again,
     .timeout = TEST_TIMEOUT_S)
{
    run_as = GROUPSTOP_JOB_NAME;
    for (size_t i = 0; i < N_STOP_SHELLS; i++) {
        char out[4096];
        int st = 0;
        int ran = run_trial(i,
                            "trap 'exit 0' TERM; sh -c 'trap \"echo ckpt-start; sleep 3; "
                            "echo ckpt-done; exit 0\" TERM; echo up; exec 2>/dev/null; "
                            "while :; do sleep 0.1; done' & wait",
                            TRIAL_CKPT_MARK, 2, out, sizeof out, &st);
        while (waitpid(-1, NULL, WNOHANG) > 0)
            ;
        if (!ran)
            continue;
        /* the note may come before or after the child's first line */
        const char *start = strstr(out, "\nckpt-start\n");
        cr_assert_not_null(start, "shell %zu: %s", i, out);
        cr_assert_null(strstr(start + 1, "\nckpt-start\n"), "shell %zu: TERMed again: %s", i, out);
        cr_assert_not_null(strstr(start, "\nckpt-done\n"), "shell %zu: %s", i, out);
        cr_assert_not_null(strstr(out, GROUPSTOP_HAD_TERM), "shell %zu: %s", i, out);
        cr_assert(WIFEXITED(st) && WEXITSTATUS(st) == 0, "shell %zu: status %d: %s", i, st, out);
    }
}

/* A live job's run (jobctl.c) is the wrapping shell as GROUPSTOP_JOB_NAME: a status above 128
 * is handed on as a status (a signalled channel is a run whose end was not seen), as the plain
 * `sh -c` it replaced did; as tunedeck-trial it is raised. */
Test(groupstop, the_wrapping_shell_as_a_job_hands_on_a_status_above_128_as_is)
{
    for (size_t i = 0; i < sizeof SHELLS / sizeof *SHELLS; i++)
        for (int job = 0; job < 2; job++) {
            pid_t c = fork();
            cr_assert(c >= 0);
            if (c == 0) {
                setsid();
                int null = open("/dev/null", O_RDWR);
                if (null < 0 || dup2(null, 0) < 0 || dup2(null, 1) < 0 || dup2(null, 2) < 0)
                    _exit(126);
                setenv("TUNEDECK_RUN_MARK", TRIAL_JOB_MARK, 1);
                setenv(GROUPSTOP_CMD_VAR, "exit 137", 1);
                execlp(SHELLS[i], SHELLS[i], "-c", groupstop_trial_sh,
                       job ? GROUPSTOP_JOB_NAME : "tunedeck-trial", (char *)NULL);
                _exit(127);
            }
            int st = 0;
            cr_assert_eq(waitpid(c, &st, 0), c);
            if (job)
                cr_assert(WIFEXITED(st) && WEXITSTATUS(st) == 137, "%s: status %d", SHELLS[i], st);
            else
                cr_assert(WIFSIGNALED(st) && WTERMSIG(st) == SIGKILL, "%s: status %d", SHELLS[i],
                          st);
        }
}

/* The guard (of the trial's group, no mark, in `sleep 1`) is no leftover of the command's: the
 * login shell hands its pid to the wrapping shell (GROUPSTOP_GUARD_VAR), which neither names
 * nor waits for it. Without that, every trial's log named "sh" and "sleep" as left running. */
Test(groupstop, the_trial_shell_does_not_take_its_guard_for_a_leftover, .timeout = TEST_TIMEOUT_S)
{
    char path[] = "/tmp/test-groupstop-g-XXXXXX";
    int fd = mkstemp(path);
    cr_assert(fd >= 0);
    size_t len = strlen(groupstop_trial_sh);
    cr_assert_eq(write(fd, groupstop_trial_sh, len), (ssize_t)len);
    close(fd);
    for (size_t i = 0; i < sizeof SHELLS / sizeof *SHELLS; i++) {
        char login[4096];
        /* as launch_ssh.c's login: the guard, then the mark exported, then the wrapping shell;
         * the guard is in its loop (`sleep 1`) by the time the command has ended */
        snprintf(login, sizeof login,
                 "%sTUNEDECK_RUN_MARK=%s; export TUNEDECK_RUN_MARK; sleep 0.2; "
                 "exec %s -c \"$(cat %s)\" tunedeck-trial",
                 GROUPSTOP_GUARD_SH("20"), TRIAL_GUARDED_MARK, SHELLS[i], path);
        int p[2];
        cr_assert_eq(pipe(p), 0);
        pid_t c = fork();
        cr_assert(c >= 0);
        if (c == 0) {
            setsid();
            int null = open("/dev/null", O_RDONLY);
            if (null < 0 || dup2(null, 0) < 0 || dup2(p[1], 1) < 0 || dup2(p[1], 2) < 0)
                _exit(126);
            close(p[0]), close(p[1]), close(null);
            setenv(GROUPSTOP_CMD_VAR, "exit 0", 1); /* the mark after the guard, as launch_ssh.c */
            execlp(SHELLS[i], SHELLS[i], "-c", login, (char *)NULL);
            _exit(127);
        }
        close(p[1]);
        char out[4096];
        size_t n = 0;
        ssize_t r;
        while (n + 1 < sizeof out && (r = read(p[0], out + n, sizeof out - 1 - n)) > 0)
            n += (size_t)r;
        out[n] = 0;
        close(p[0]);
        int st = 0;
        cr_assert_eq(waitpid(c, &st, 0), c);
        /* The guard is not signalled: it ends by itself within a second, once it reads pid c
         * gone (reaped above), and a KILL to group c after that would reach whatever took the
         * number. */
        cr_assert_str_eq(out, GROUPSTOP_ENDED "\n", "%s: %s", SHELLS[i], out);
        cr_assert(WIFEXITED(st) && WEXITSTATUS(st) == 0, "%s: status %d", SHELLS[i], st);
    }
    unlink(path);
}

/* Regression: the stop after the command's end sent its URG to pid g too, which by then is no
 * wrapping shell (it has ended) and may be another process's pid. Only a stop of a running
 * command says it is one, before its TERM. Fails on the old code (an URG in both). */
Test(groupstop, only_a_stop_of_a_running_command_sends_the_urg)
{
    char *running = groupstop_command(4242, MARK, 0), *ended = groupstop_command(4242, MARK, 1);
    cr_assert_not_null(running);
    cr_assert_not_null(ended);
    const char *urg = strstr(running, "kill -URG $g"), *term = strstr(running, "kill -TERM -$g");
    cr_assert(urg && term && urg < term, "%s", running);
    cr_assert_null(strstr(ended, "-URG"), "%s", ended);
    free(running);
    free(ended);
}

/* Where groupstop_own_part finds the wrapping shell's note in a line read first: its offset,
 * or -1 for none. */
static long note_at(const char *line)
{
    int noted = 0, ended = 0;
    long own = groupstop_own_part(line, strlen(line), &noted, &ended);
    return noted ? (own < 0 ? 0 : own) : -1;
}

/* The note is found where the command's last output, with no newline, comes before it on its
 * line (both readers of the wrapping shell's stderr ask this: launch_ssh.c, jobctl.c). */
Test(groupstop, the_left_note_is_found_after_output_with_no_newline)
{
    const char *line = "ValueError: x" GROUPSTOP_LEFT_NOTE "12 python); " GROUPSTOP_STOPPING;
    cr_assert_eq(note_at(line), (long)strlen("ValueError: x"));
    cr_assert_eq(note_at(GROUPSTOP_LEFT_NOTE "12 python); " GROUPSTOP_STOPPING), 0);
    cr_assert_eq(note_at("tunedeck: a command's own line"), -1);
}

/* The wrapping shell's clock (tk, in groupstop_trial_sh) on uptimes the kernel prints and on a
 * whole part with leading zeros, which only a stand-in /proc writes: `$((08))` is an octal
 * error that would end the shell before its stop. Run as the shipped text, its /proc/uptime
 * put in a file, in each shell the trial may find. */
Test(groupstop, the_trial_shells_clock_reads_uptime_in_tenths_and_base_10)
{
    static const struct {
        const char *uptime, *want;
    } cases[] = {
        {"12345.67 890.12", "123456"}, {"08.09 1.00", "80"}, {"000.50 1.00", "5"},
        {"0.07 0.00", "0"},            {"123 4", "none"},   {"x.5 1", "none"},
    };
    const char *start = strstr(groupstop_trial_sh, "tk() {");
    cr_assert_not_null(start);
    const char *end = strstr(start, "+$uf)); }");
    cr_assert_not_null(end);
    end += strlen("+$uf)); }");
    char dir[] = "/tmp/test-groupstop-tk-XXXXXX";
    cr_assert_not_null(mkdtemp(dir));
    char file[96], script[128];
    snprintf(file, sizeof file, "%s/uptime", dir);
    snprintf(script, sizeof script, "%s/tk.sh", dir);
    /* the function with its /proc/uptime read from the file */
    char def[1024];
    size_t n = 0;
    for (const char *p = start; p < end && n + 96 < sizeof def;) {
        if (strncmp(p, "/proc/uptime", 12) == 0) {
            n += (size_t)snprintf(def + n, sizeof def - n, "%s", file);
            p += 12;
        } else
            def[n++] = *p++;
    }
    def[n] = '\0';
    cr_assert(strstr(def, file) && !strstr(def, "/proc/uptime"));
    static const char *const shells[] = {"sh", "bash", "busybox sh"};
    for (size_t c = 0; c < sizeof cases / sizeof *cases; c++) {
        FILE *f = fopen(file, "w");
        cr_assert_not_null(f);
        fprintf(f, "%s\n", cases[c].uptime);
        fclose(f);
        f = fopen(script, "w");
        cr_assert_not_null(f);
        fprintf(f, "%s; if tk; then echo \"$t\"; else echo none; fi\n", def);
        fclose(f);
        for (size_t s = 0; s < sizeof shells / sizeof *shells; s++) {
            char cmd[256], out[64] = "";
            snprintf(cmd, sizeof cmd, "command -v %.7s >/dev/null && %s %s 2>&1", shells[s],
                     shells[s], script);
            FILE *p = popen(cmd, "r");
            cr_assert_not_null(p);
            size_t got = fread(out, 1, sizeof out - 1, p);
            out[got] = '\0';
            int st = pclose(p);
            if (WIFEXITED(st) && WEXITSTATUS(st) != 0 && !got)
                continue; /* no such shell here */
            out[strcspn(out, "\n")] = '\0';
            cr_assert_str_eq(out, cases[c].want, "%s, uptime '%s'", shells[s], cases[c].uptime);
        }
    }
    unlink(file), unlink(script), rmdir(dir);
}

/* Only the wrapping shell's note counts: it is the tail of its line, the stop's own words to
 * the end. The note's words in the command's own output (a grep of old logs) are not it. */
Test(groupstop, only_the_note_as_its_lines_tail_is_the_wrapping_shells)
{
    const char *grep =
        "logs/a.log:" GROUPSTOP_LEFT_NOTE "12 python); " GROUPSTOP_STOPPING " (old)";
    cr_assert_eq(note_at(grep), -1);
    cr_assert_eq(note_at("logs/a.log:" GROUPSTOP_LEFT_NOTE "12 python"), -1);
    cr_assert_eq(note_at(GROUPSTOP_LEFT_NOTE "12 a); b); " GROUPSTOP_HAD_TERM "20000 ms"), 0);
    cr_assert_eq(note_at(GROUPSTOP_LEFT_NOTE "12 x); " GROUPSTOP_HAD_TERM " ms"), -1);
    const char *twice =
        "x " GROUPSTOP_LEFT_NOTE "1 y " GROUPSTOP_LEFT_NOTE "2 z); " GROUPSTOP_STOPPING;
    cr_assert_eq(note_at(twice),
                 strstr(strstr(twice, GROUPSTOP_LEFT_NOTE) + 1, GROUPSTOP_LEFT_NOTE) - twice,
                 "the last one");
}

/* The command's own part of its wrapping shell's stderr, as both of its readers take it: a
 * trial's last words (launch_ssh.c) and a live job's (jobctl_words_stderr). */
#define OWN(line, noted, ended) groupstop_own_part(line, strlen(line), noted, ended)

Test(groupstop, a_commands_own_line_is_its_own_whole_an_empty_one_too)
{
    int noted = 0, ended = 1;
    cr_assert_eq(OWN("Traceback (most recent call last):", &noted, &ended), 34);
    cr_assert(!noted && !ended);
    cr_assert_eq(OWN("", &noted, &ended), 0, "an empty line the command printed is its own");
    const char *grep = "logs/a.log:" GROUPSTOP_LEFT_NOTE "12 python); " GROUPSTOP_STOPPING " (old)";
    cr_assert_eq(OWN(grep, &noted, &ended), (long)strlen(grep), "the note's words are not it");
    cr_assert(!noted);
}

Test(groupstop, the_end_line_is_not_the_commands_but_what_comes_before_it_on_its_line_is)
{
    int noted = 0, ended = 0;
    cr_assert_eq(OWN(GROUPSTOP_ENDED, &noted, &ended), -1);
    cr_assert(ended && !noted);
    cr_assert_eq(OWN("ValueError: x" GROUPSTOP_ENDED, &noted, &ended), 13);
    cr_assert(ended);
    cr_assert_eq(OWN("tunedeck-ended, or so it says", &noted, &ended), 29);
    cr_assert(!ended, "only as the line's tail");
}

Test(groupstop, the_note_and_every_line_after_it_are_not_the_commands)
{
    int noted = 0, ended = 0;
    cr_assert_eq(
        OWN("ValueError: x" GROUPSTOP_LEFT_NOTE "12 python); " GROUPSTOP_STOPPING, &noted, &ended),
        13, "its last line with no newline, before the note");
    cr_assert(noted && !ended);
    cr_assert_eq(OWN("Terminated", &noted, &ended), -1, "a leftover's word");
    cr_assert_eq(OWN("loader: shutting down" GROUPSTOP_ENDED, &noted, &ended), -1);
    cr_assert(ended);
    cr_assert_eq(
        OWN("x" GROUPSTOP_LEFT_NOTE "3 y); " GROUPSTOP_HAD_TERM "20000 ms", &noted, &ended), -1,
        "a second note: the first counted");
    int fresh = 0;
    cr_assert_eq(OWN(GROUPSTOP_LEFT_NOTE "12 python); " GROUPSTOP_STOPPING, &fresh, &ended), -1,
                 "a note alone holds nothing of the command's");
    cr_assert(fresh);
}

/* A line is read as the launcher gets it, with its length: a NUL the command printed ends its
 * text for the note, but the end line is still found at the line's end. */
Test(groupstop, a_nul_in_a_line_ends_its_text_but_not_its_end_line)
{
    static const char line[] = "bad\0byte" GROUPSTOP_ENDED;
    int noted = 0, ended = 0;
    cr_assert_eq(groupstop_own_part(line, sizeof line - 1, &noted, &ended), 8);
    cr_assert(ended && !noted);
    static const char note[] = "x\0y" GROUPSTOP_LEFT_NOTE "1 z); " GROUPSTOP_STOPPING;
    cr_assert_eq(groupstop_own_part(note, sizeof note - 1, &noted, &ended), (long)sizeof note - 1,
                 "the note after a NUL is not looked for, as a string's look never saw it");
    cr_assert(!noted && !ended);
}
