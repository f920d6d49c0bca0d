/* The keeper of a local trial's process group: the command's end is handed on as its own,
 * tunedeck's end (the lifeline pipe's end of file) stops the group, and whatever is left
 * below the keeper when the trial ends, in its group or adopted from outside it, is stopped
 * before the keeper ends (lifeline.h). */
#include "remote/launch/lifeline.h"

#include <errno.h>
#include <poll.h>
#include <signal.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>
#include <sys/prctl.h>
#include <sys/resource.h>
#include <sys/time.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include "core/base/clock.h"
#include "remote/launch/proctree.h"

static volatile sig_atomic_t got_term;

static void on_term(int sig)
{
    (void)sig;
    got_term = 1;
}

static void on_child(int sig)
{
    (void)sig; /* only wakes ppoll */
}

static void keeper_signals(sigset_t *set)
{
    sigemptyset(set);
    sigaddset(set, SIGTERM);
    sigaddset(set, SIGCHLD);
}

/* The operator's core limit, as lifeline_adopt found it: the command's (lifeline_command). */
static struct rlimit operators_core;
static int core_saved;

void lifeline_adopt(void)
{
    /* No core of the keeper's from before the command's fork on (a keeper crashing or killed
     * in between would dump one): the soft limit only, so the command can have it back. */
    core_saved = getrlimit(RLIMIT_CORE, &operators_core) == 0;
    if (core_saved) {
        struct rlimit soft_none = operators_core;
        soft_none.rlim_cur = 0;
        setrlimit(RLIMIT_CORE, &soft_none);
    }
    sigset_t set;
    keeper_signals(&set);
    sigprocmask(SIG_BLOCK, &set, NULL);
#ifdef PR_SET_CHILD_SUBREAPER
    prctl(PR_SET_CHILD_SUBREAPER, 1);
#endif
}

/* Ends this process the way the command ended, so the launcher reads the same status. */
static void hand_on(int status)
{
    if (WIFSIGNALED(status)) {
        int sig = WTERMSIG(status);
        signal(sig, SIG_DFL);
        sigset_t set;
        sigemptyset(&set);
        sigaddset(&set, sig);
        sigprocmask(SIG_UNBLOCK, &set, NULL);
        raise(sig); /* no core of the keeper's own: RLIMIT_CORE is 0 here */
        _exit(128 + sig);
    }
    _exit(WIFEXITED(status) ? WEXITSTATUS(status) : 1);
}

typedef struct {
    pid_t self, cmd;
    int status, cmd_done;
    /* the note on leftovers, built without stdio (a fork of a process with threads) */
    char note[512];
    size_t note_len;
    int listed;
    /* the leftovers the note's walk found, TERMed once the note is out (no malloc in a fork
     * of a process with threads); more than this many: a walk of its own TERMs them all */
    pid_t found[64];
    int to_reap; /* children KILLed by kill_all's last walk, not yet reaped */
} Keeper;

/* Reaps every child that has ended (adopted ones too: they are the keeper's to reap); 1 while
 * a child is left, 0 when none is. */
static int reap(Keeper *k, int block)
{
    for (;;) {
        int st;
        pid_t w = waitpid(-1, &st, block ? 0 : WNOHANG);
        if (w > 0) {
            if (w == k->cmd) {
                k->status = st;
                k->cmd_done = 1;
            }
            if (block)
                return 1;
            continue;
        }
        if (w == 0)
            return 1;
        if (errno == EINTR)
            continue;
        return 0; /* ECHILD */
    }
}

static void term_outside_group(const ProcInfo *p, void *ud)
{
    const Keeper *k = ud;
    if (p->pgid != k->self) /* the group had its TERM from whoever stops it */
        kill(p->pid, SIGTERM);
}

static void stop_one(const ProcInfo *p, void *ud)
{
    (void)ud;
    kill(p->pid, SIGSTOP);
}

static void kill_one(const ProcInfo *p, void *ud)
{
    Keeper *k = ud;
    kill(p->pid, SIGKILL);
    if (p->ppid == k->self)
        k->to_reap++;
}

/* KILLs everything below the keeper and reaps it. All are stopped first, then KILLed: KILLed
 * one by one in /proc's order, by pid, a shell's foreground child whose pid is below the
 * shell's (pids wrap) went first, and the shell, still running while the walk went on, wrote
 * "Killed" on the trial's stderr: a line in the trial's log that the trial never wrote (cli.sh's
 * "summary json TERM" saw it once under load). A stopped process runs none of its own code,
 * and a KILL still ends it.
 * The children the KILL walk saw are certain to end, so the keeper waits for that many. A
 * killed process's children become the keeper's (it is their subreaper), and a process born
 * while a walk went on may have been missed by it: so while a child is left once those are
 * reaped, it walks again. It ends when the keeper has no child left: nothing it started can be
 * running then. One walk more for each such round, not for each child (a walk a child before,
 * each of them reading the stat of every process on the machine). */
static void kill_all(Keeper *k)
{
    if (proctree_walk(k->self, 1, stop_one, k) < 0)
        kill(0, SIGKILL); /* no /proc to walk: the group, the keeper with it, as before */
    do {
        k->to_reap = 0;
        proctree_walk(k->self, 1, kill_one, k);
        while (k->to_reap-- > 0 && reap(k, 1))
            ;
    } while (reap(k, 0));
}

static void note_add(Keeper *k, const char *s)
{
    size_t n = strlen(s);
    if (n > sizeof k->note - 1 - k->note_len)
        n = sizeof k->note - 1 - k->note_len;
    memcpy(k->note + k->note_len, s, n);
    k->note_len += n;
}

static void note_add_num(Keeper *k, unsigned long v)
{
    char out[24];
    out[proctree_decimal(out, v)] = 0;
    note_add(k, out);
}

/* One walk names a leftover and keeps its pid for the TERM: the note lists what is TERMed. */
static void list_leftover(const ProcInfo *p, void *ud)
{
    Keeper *k = ud;
    if ((size_t)k->listed < sizeof k->found / sizeof *k->found)
        k->found[k->listed] = p->pid;
    if (k->listed++ == 4) {
        note_add(k, ", ...");
        return;
    }
    if (k->listed > 4)
        return;
    note_add(k, k->listed > 1 ? ", " : "");
    note_add_num(k, (unsigned long)p->pid);
    note_add(k, " ");
    note_add(k, p->comm);
    if (p->pgid != k->self)
        note_add(k, " (outside the trial's process group)");
}

static void term_one(const ProcInfo *p, void *ud)
{
    (void)ud;
    kill(p->pid, SIGTERM);
}

static void on_alarm(int sig)
{
    (void)sig;
}

/* Writes the note, blocked 500 ms at most: where tunedeck does not drain the trial's stderr (a
 * full pipe) the keeper must not wait between its walk and its TERMs, while the pids it listed
 * may end and be taken by others. An interval timer with no SA_RESTART makes a blocked write
 * return (what it wrote, or EINTR); its repeat catches a first tick that came before the write
 * began. Never O_NONBLOCK: the pipe's description is shared with the leftovers, whose writes
 * would then fail. A note cut short or lost is the price; the TERMs are what counts. */
static void write_bounded(int fd, const char *b, size_t n)
{
    struct sigaction sa = {.sa_handler = on_alarm}, old;
    sigemptyset(&sa.sa_mask);
    sigaction(SIGALRM, &sa, &old);
    sigset_t alarm_only, prev;
    sigemptyset(&alarm_only);
    sigaddset(&alarm_only, SIGALRM);
    sigprocmask(SIG_UNBLOCK, &alarm_only, &prev);
    struct itimerval t = {.it_value = {0, 500 * 1000}, .it_interval = {0, 100 * 1000}}, off = {0};
    setitimer(ITIMER_REAL, &t, NULL);
    (void)!write(fd, b, n);
    setitimer(ITIMER_REAL, &off, NULL);
    sigprocmask(SIG_SETMASK, &prev, NULL);
    sigaction(SIGALRM, &old, NULL);
}

/* The command ended by itself and left processes running: the trial is over, so they are
 * stopped, and the trial's log says which. The note is written before the TERMs (it names what
 * its walk saw), so a line a leftover writes on its TERM comes after it in the log. A process
 * born after the walk has its KILL with the rest after the grace. */
static void stop_leftovers(Keeper *k, int note_fd, int grace_ms)
{
    note_add(k, LIFELINE_NOTE "the trial's command ended and left processes running (");
    proctree_walk(k->self, 1, list_leftover, k);
    note_add(k, "); stopping them: TERM, KILL after ");
    note_add_num(k, (unsigned long)grace_ms);
    note_add(k, " ms\n");
    if (note_fd >= 0 && k->listed > 0)
        write_bounded(note_fd, k->note, k->note_len);
    size_t cap = sizeof k->found / sizeof *k->found;
    if ((size_t)k->listed > cap) {
        proctree_walk(k->self, 1, term_one, k);
        return;
    }
    for (int i = 0; i < k->listed; i++)
        kill(k->found[i], SIGTERM);
}

void lifeline_command(void)
{
    if (core_saved)
        setrlimit(RLIMIT_CORE, &operators_core);
}

void lifeline_keep(pid_t cmd, int lifeline_fd, int note_fd, int grace_ms)
{
    /* The keeper never dumps a core of its own (the command's is the command's business):
     * its soft limit is 0 since lifeline_adopt; the hard one too from here, after the
     * command was forked, so nothing of the keeper's can raise it again. */
    struct rlimit none = {0, 0};
    setrlimit(RLIMIT_CORE, &none);
    /* The group's TERM (a cancel, a timeout, Ctrl-C's stop) is the command's to answer; the
     * keeper passes it on to what left the group, and outlives them all to hand the
     * command's end on. */
    signal(SIGINT, SIG_IGN);
    signal(SIGHUP, SIG_IGN);
    signal(SIGPIPE, SIG_IGN);
    sigset_t mine, during;
    keeper_signals(&mine);
    sigprocmask(SIG_BLOCK, &mine, &during);
    sigdelset(&during, SIGTERM);
    sigdelset(&during, SIGCHLD);
    struct sigaction sa = {.sa_handler = on_term};
    sigemptyset(&sa.sa_mask);
    sigaction(SIGTERM, &sa, NULL);
    sa.sa_handler = on_child;
    sigaction(SIGCHLD, &sa, NULL);
    Keeper k = {.self = getpid(), .cmd = cmd};
    int lifeline_open = 1;
    int stopping = 0;     /* the group had its TERM: tunedeck's stop, or the keeper's own */
    int64_t kill_at = -1; /* when everything below is KILLed */
    for (;;) {
        if (!reap(&k, 0))
            k.cmd_done ? hand_on(k.status) : _exit(1); /* nothing below: nothing to keep */
        if (!stopping && got_term) {
            /* tunedeck's stop: the KILL stays its call (the lifeline closed after the TERM),
             * or follows the command's end below */
            stopping = 1;
            proctree_walk(k.self, 1, term_outside_group, &k);
        }
        if (kill_at < 0 && k.cmd_done) {
            if (!stopping) /* TERMed already when stopping */
                stop_leftovers(&k, note_fd, grace_ms);
            kill_at = clock_now_ms() + grace_ms;
        }
        if (kill_at >= 0 && clock_now_ms() >= kill_at) {
            kill_all(&k);
            k.cmd_done ? hand_on(k.status) : _exit(1);
        }
        struct pollfd pf = {.fd = lifeline_fd, .events = POLLIN};
        struct timespec ts, *tmo = NULL;
        if (kill_at >= 0) {
            int64_t left = kill_at - clock_now_ms();
            left = left > 0 ? left : 0;
            ts.tv_sec = left / 1000;
            ts.tv_nsec = (left % 1000) * 1000000;
            tmo = &ts;
        }
        int n = ppoll(lifeline_open ? &pf : NULL, lifeline_open ? 1 : 0, tmo, &during);
        /* Nobody writes to the lifeline: readable (end of file) means tunedeck is gone, or,
         * after its TERM, that it wants the KILL now. */
        if (n > 0 && lifeline_open && pf.revents) {
            lifeline_open = 0;
            if (!stopping) {
                stopping = 1;
                kill(0, SIGTERM); /* the keeper's own TERM only sets got_term */
                proctree_walk(k.self, 1, term_outside_group, &k);
                kill_at = clock_now_ms() + grace_ms;
            } else {
                kill_at = clock_now_ms();
            }
        }
    }
}
