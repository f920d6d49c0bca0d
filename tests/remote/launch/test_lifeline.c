/* The keeper's stop of what a command left: how many /proc walks it takes, counted by a
 * --wrap of proctree_walk (the Makefile's UNIT_WRAP; each walk reads the stat of every
 * process on the machine). */
#include <criterion/criterion.h>
#include <fcntl.h>
#include <signal.h>
#include <stdio.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/wait.h>
#include <unistd.h>

#include "remote/launch/lifeline.h"
#include "remote/launch/proctree.h"
#include "tests/support/timeout.h"

enum { LEFTOVERS = 3 };

/* When not NULL, each walk adds one here: a shared mapping, since the keeper is a fork. */
static unsigned long *walk_count;

/* When not NULL and above 0, the pid of a leftover that blocks TERM and answers it once it
 * sees it pending: a walk that TERMed it waits until it has answered and ended (TERM pending
 * until it ends, so the look cannot miss it), as a slow keeper would. */
static volatile pid_t *replier;

/* 1 while pid has SIGTERM pending (ShdPnd) and has not ended. */
static int term_pending(pid_t pid)
{
    char path[64], line[256];
    snprintf(path, sizeof path, "/proc/%ld/status", (long)pid);
    FILE *f = fopen(path, "r");
    if (!f)
        return 0;
    int pending = 0, zombie = 0;
    while (fgets(line, sizeof line, f)) {
        unsigned long long mask;
        if (strncmp(line, "State:", 6) == 0 && strchr(line, 'Z'))
            zombie = 1;
        if (sscanf(line, "ShdPnd: %llx", &mask) == 1 && (mask >> (SIGTERM - 1)) & 1)
            pending = 1;
    }
    fclose(f);
    return pending && !zombie;
}

int __real_proctree_walk(pid_t self, int below, void (*visit)(const ProcInfo *p, void *ud),
                         void *ud);
int __wrap_proctree_walk(pid_t self, int below, void (*visit)(const ProcInfo *p, void *ud),
                         void *ud)
{
    if (walk_count)
        (*walk_count)++;
    int r = __real_proctree_walk(self, below, visit, ud);
    while (replier && *replier > 0 && term_pending(*replier))
        usleep(1000);
    return r;
}

/* Regression: the leftovers were walked twice (once named, once TERMed), and the KILL walked
 * /proc again for each child it reaped: 2 + 2 + (LEFTOVERS + 1) walks here. Now one walk
 * names them (their TERMs follow the note), one stops them, one KILLs them and counts the
 * children to reap. */
Test(lifeline, a_commands_leftovers_are_stopped_in_three_walks_however_many_they_are)
{
    unsigned long *walks =
        mmap(NULL, sizeof *walks, PROT_READ | PROT_WRITE, MAP_SHARED | MAP_ANONYMOUS, -1, 0);
    cr_assert_neq(walks, MAP_FAILED);
    *walks = 0;
    int life[2];
    cr_assert_eq(pipe(life), 0);
    pid_t keeper = fork();
    cr_assert_geq(keeper, 0);
    if (keeper == 0) {
        close(life[1]); /* the test holds the write end: the lifeline stays open */
        walk_count = walks;
        lifeline_adopt();
        pid_t cmd = fork();
        if (cmd == 0) {
            for (int i = 0; i < LEFTOVERS; i++)
                if (fork() == 0) {
                    signal(SIGTERM, SIG_IGN);
                    for (;;)
                        pause();
                }
            _exit(0);
        }
        lifeline_keep(cmd, life[0], -1, 0);
    }
    close(life[0]);
    int st;
    cr_assert_eq(waitpid(keeper, &st, 0), keeper);
    close(life[1]);
    cr_assert(WIFEXITED(st) && WEXITSTATUS(st) == 0, "the command's exit 0 handed on: %#x", st);
    cr_assert_eq(*walks, 3, "%lu walks of /proc", *walks);
}

/* Regression: the keeper TERMed the leftovers in the walk that named them and wrote its note
 * after it, so a leftover's own answer to the TERM could come first in the trial's log. The
 * note is written first now, then the TERMs; here the answer is made to come as soon as it can
 * (the walk that TERMed waits for it). */
Test(lifeline, the_note_on_leftovers_comes_before_their_answer_to_the_term)
{
    volatile pid_t *shared =
        mmap(NULL, sizeof *shared, PROT_READ | PROT_WRITE, MAP_SHARED | MAP_ANONYMOUS, -1, 0);
    cr_assert_neq((void *)shared, MAP_FAILED);
    *shared = 0;
    int life[2], out[2], ready[2];
    cr_assert_eq(pipe(life), 0);
    cr_assert_eq(pipe(out), 0);
    cr_assert_eq(pipe(ready), 0);
    pid_t keeper = fork();
    cr_assert_geq(keeper, 0);
    if (keeper == 0) {
        close(life[1]);
        close(out[0]);
        replier = shared;
        lifeline_adopt();
        pid_t cmd = fork();
        if (cmd == 0) {
            if (fork() == 0) {
                sigset_t term;
                sigemptyset(&term);
                sigaddset(&term, SIGTERM);
                sigprocmask(SIG_BLOCK, &term, NULL);
                *shared = getpid();
                (void)!write(ready[1], "r", 1);
                for (;;) {
                    sigset_t p;
                    sigpending(&p);
                    if (sigismember(&p, SIGTERM)) {
                        (void)!write(out[1], "termed\n", 7);
                        _exit(0);
                    }
                    usleep(1000);
                }
            }
            char c;
            close(ready[1]);
            _exit(read(ready[0], &c, 1) == 1 ? 0 : 1); /* ends once the leftover is set */
        }
        close(ready[1]);
        close(ready[0]);
        lifeline_keep(cmd, life[0], out[1], 10000);
    }
    close(life[0]);
    close(out[1]);
    close(ready[1]);
    close(ready[0]);
    char buf[1024];
    size_t n = 0;
    ssize_t r;
    while (n + 1 < sizeof buf && (r = read(out[0], buf + n, sizeof buf - 1 - n)) > 0)
        n += (size_t)r;
    buf[n] = 0;
    close(out[0]);
    int st;
    cr_assert_eq(waitpid(keeper, &st, 0), keeper);
    close(life[1]);
    cr_assert(strncmp(buf, LIFELINE_NOTE, strlen(LIFELINE_NOTE)) == 0, "the log: %s", buf);
    cr_assert_not_null(strstr(buf, " ms\ntermed\n"), "the log: %s", buf);
}

/* Regression: the note went out with a plain write between the walk and the TERMs: where
 * tunedeck did not drain the trial's stderr (a full pipe) the keeper blocked there for good,
 * its leftovers never TERMed, while the pids it had listed could be reused. Now the write gives
 * up after a short while and the TERMs go out. Fails on the old code (the keeper never ends:
 * the test's timeout). */
Test(lifeline, a_full_stderr_pipe_does_not_keep_the_leftovers_from_their_term,
     .timeout = TEST_TIMEOUT_S)
{
    int life[2], out[2];
    cr_assert_eq(pipe(life), 0);
    cr_assert_eq(pipe(out), 0);
    /* filled here, then blocking again, as the keeper gets it */
    int fl = fcntl(out[1], F_GETFL);
    cr_assert_eq(fcntl(out[1], F_SETFL, fl | O_NONBLOCK), 0);
    char fill[4096] = {0};
    while (write(out[1], fill, sizeof fill) > 0)
        ;
    cr_assert_eq(fcntl(out[1], F_SETFL, fl), 0);
    pid_t keeper = fork();
    cr_assert_geq(keeper, 0);
    if (keeper == 0) {
        close(life[1]);
        close(out[0]);
        lifeline_adopt();
        pid_t cmd = fork();
        if (cmd == 0) {
            if (fork() == 0)
                for (;;)
                    pause();
            _exit(0);
        }
        lifeline_keep(cmd, life[0], out[1], 10000);
    }
    close(life[0]);
    close(out[1]);
    int st;
    cr_assert_eq(waitpid(keeper, &st, 0), keeper);
    close(life[1]);
    close(out[0]);
    cr_assert(WIFEXITED(st) && WEXITSTATUS(st) == 0, "the command's exit 0 handed on: %#x", st);
}
