/* The keeper's stop of what a command left: how many /proc walks it takes, counted by a
 * --wrap of proctree_walk (the Makefile's UNIT_WRAP; each walk reads the stat of every
 * process on the machine). */
#include <criterion/criterion.h>
#include <signal.h>
#include <sys/mman.h>
#include <sys/wait.h>
#include <unistd.h>

#include "remote/launch/lifeline.h"
#include "remote/launch/proctree.h"

enum { LEFTOVERS = 3 };

/* When not NULL, each walk adds one here: a shared mapping, since the keeper is a fork. */
static unsigned long *walk_count;

int __real_proctree_walk(pid_t self, int below, void (*visit)(const ProcInfo *p, void *ud),
                         void *ud);
int __wrap_proctree_walk(pid_t self, int below, void (*visit)(const ProcInfo *p, void *ud),
                         void *ud)
{
    if (walk_count)
        (*walk_count)++;
    return __real_proctree_walk(self, below, visit, ud);
}

/* Regression: the leftovers were walked twice (once named, once TERMed), and the KILL walked
 * /proc again for each child it reaped: 2 + 2 + (LEFTOVERS + 1) walks here. Now one walk
 * TERMs and names them, one stops them, one KILLs them and counts the children to reap. */
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
