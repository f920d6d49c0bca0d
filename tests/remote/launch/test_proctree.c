/* The processes below a keeper, read from /proc: children alone, or everything below. */
#include <criterion/criterion.h>
#include <signal.h>
#include <string.h>
#include <sys/prctl.h>
#include <sys/wait.h>
#include <unistd.h>

#include "remote/launch/proctree.h"

typedef struct {
    pid_t seen[16];
    int n;
} Seen;

static void note(const ProcInfo *p, void *ud)
{
    Seen *s = ud;
    if (s->n < 16)
        s->seen[s->n++] = p->pid;
}

static int has(const Seen *s, pid_t pid)
{
    for (int i = 0; i < s->n; i++)
        if (s->seen[i] == pid)
            return 1;
    return 0;
}

/* A child of the test, and a grandchild under it that says its pid through a pipe. */
Test(proctree, children_alone_or_everything_below)
{
    int p[2];
    cr_assert_eq(pipe(p), 0);
    pid_t child = fork();
    cr_assert_geq(child, 0);
    if (child == 0) {
        pid_t grand = fork();
        if (grand == 0) {
            for (;;)
                pause();
        }
        (void)!write(p[1], &grand, sizeof grand);
        for (;;)
            pause();
    }
    pid_t grand = 0;
    cr_assert_eq(read(p[0], &grand, sizeof grand), (ssize_t)sizeof grand);
    Seen kids = {0}, below = {0};
    proctree_walk(getpid(), 0, note, &kids);
    proctree_walk(getpid(), 1, note, &below);
    kill(grand, SIGKILL);
    kill(child, SIGKILL);
    waitpid(child, NULL, 0);
    close(p[0]);
    close(p[1]);
    cr_assert(has(&kids, child));
    cr_assert_not(has(&kids, grand), "a grandchild is not a child");
    cr_assert(has(&below, child));
    cr_assert(has(&below, grand), "the grandchild is below");
}

/* The kernel's name may hold spaces and parentheses: the fields after it still parse. */
Test(proctree, a_name_with_parentheses_and_spaces_still_gives_parent_and_group)
{
    pid_t child = fork();
    cr_assert_geq(child, 0);
    if (child == 0) {
        prctl(PR_SET_NAME, "a) b (c");
        setpgid(0, 0);
        for (;;)
            pause();
    }
    setpgid(child, child);
    ProcInfo info;
    int rc = -1;
    for (int i = 0; i < 200; i++) { /* until the child has renamed itself */
        rc = proctree_info(child, &info);
        if (rc == 0 && strcmp(info.comm, "a) b (c") == 0)
            break;
        usleep(10000);
    }
    kill(child, SIGKILL);
    waitpid(child, NULL, 0);
    cr_assert_eq(rc, 0);
    cr_assert_str_eq(info.comm, "a) b (c");
    cr_assert_eq(info.pid, child);
    cr_assert_eq(info.ppid, getpid());
    cr_assert_eq(info.pgid, child);
    cr_assert_eq(proctree_info(child, &info), -1, "a reaped process is gone");
}
