/* What a Slurm step's lines say of why it failed (launch_slurm.c reads them): Slurm's own
 * end of the step (time limit, node failure, a controller away), the task srun names as
 * failed and that task's last words, by its srun --label (or, with no label, by the order of
 * the lines), and every node's rank fan-out notice; put together into the trial's reason
 * once the step is over. srun names a failed task by its node and its number within its
 * component; the label numbers it within the whole step: each task's node mark joins the
 * two (srunwords.h). */
#include "remote/launch/srunwords.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "core/base/termsafe.h"
#include "core/base/utf8.h"
#include "remote/launch/rankcause.h"
#include "remote/launch/rankfan.h"

/* One task's last words: its last standard-error line that is neither Slurm's nor a shell's
 * word of a signal. */
typedef struct {
    long task;
    char said[160];
    char node[64]; /* its node mark's, "" before */
} TaskSaid;

struct SrunWords {
    char slurm_reason[256];
    char unresolved[80];  /* the address srun could not resolve ("::1"), "" for none */
    TaskSaid *said;       /* each task's last words, by its label (task_words) */
    size_t n_said, cap_said;
    long failed_task;     /* the first task srun said failed; -1 before */
    char failed_word[160]; /* srun's word of it: "n2: task 1: Exited with exit code 3" */
    int labeled;          /* a task's standard error came with its label */
    int marked;           /* a task's node mark came: srun's failed task goes by its node */
    /* Without a label to go by (an srun that gave none): the failed task's words by order */
    char task_said[160];  /* the failed task's last words (task_words) */
    long task_said_task;  /* whose they were, when labeled */
    int task_failed;      /* srun has said a task failed */
    int task_said_final;  /* task_said is the first line after that: later ones are others' */
    int slurm_after_task; /* a plain CANCELLED: srun ends a step whose task failed */
    /* Every node's fan-out notice of its first failed rank, in arrival order ("; " between):
     * the inner launcher keeps the first only, and which node's comes first is a race. */
    char notices[512];
};

SrunWords *srunwords_new(void)
{
    SrunWords *r = calloc(1, sizeof *r);
    if (!r)
        abort();
    r->failed_task = r->task_said_task = -1;
    return r;
}

void srunwords_free(SrunWords *r)
{
    if (!r)
        return;
    free(r->said);
    free(r);
}

/* "slurmstepd: error: *** STEP 4.2 ON n1 CANCELLED AT 2026-... DUE TO TIME LIMIT ***" and
 * srun's own "Node failure" lines: Slurm ended the step, and says why. */
static void note_slurm_end(SrunWords *r, const char *line)
{
    if (r->slurm_reason[0])
        return;
    /* srun: error: slurm_set_addr: Unable to resolve "::1" (before the node's task launch
     * failure, which says only "Can't find an address") */
    const char *unres = strstr(line, "Unable to resolve \"");
    if (strncmp(line, "srun: error: ", 13) == 0 && unres && !r->unresolved[0]) {
        unres += strlen("Unable to resolve \"");
        size_t len = strcspn(unres, "\"");
        if (unres[len] == '"' && len < sizeof r->unresolved)
            termsafe_n(r->unresolved, sizeof r->unresolved, unres, len);
        return;
    }
    const char *stars = strstr(line, "*** ");
    if (stars && (strstr(stars, "CANCELLED") || strstr(stars, "DUE TO"))) {
        const char *end = strstr(stars + 4, " ***");
        int len = end ? (int)(end - stars - 4) : (int)strlen(stars + 4);
        snprintf(r->slurm_reason, sizeof r->slurm_reason, "slurm: %.*s", len, stars + 4);
        r->slurm_after_task = !strstr(stars, "DUE TO");
    } else if (strstr(line, "srun: error: Node failure")) {
        snprintf(r->slurm_reason, sizeof r->slurm_reason, "slurm: %s", line + 6);
    } else if (strstr(line, "srun: error: Unable to create step for job")) {
        /* e.g. "Memory required by task is not available" just after slurmctld restarts,
         * before it has heard that the steps it missed have ended */
        snprintf(r->slurm_reason, sizeof r->slurm_reason, "slurm: %s", line + 13);
    } else if (strncmp(line, "srun: error: Task launch for ", 29) == 0) {
        /* No task started on a node (its address, its credential): srun's last line is a bare
         * "srun: Job step aborted". This one names the node and why; an address srun could
         * not resolve is said with it (an IPv6 NodeAddr without EnableIPv6: docs/slurm.md). */
        char hint[sizeof r->unresolved + 120] = "";
        if (r->unresolved[0])
            snprintf(hint, sizeof hint, " (srun could not resolve the node's address \"%s\"%s)",
                     r->unresolved,
                     strchr(r->unresolved, ':')
                         ? ": an IPv6 NodeAddr needs CommunicationParameters=EnableIPv6"
                         : "");
        /* the hint is what to do: kept whole, srun's words cut before it (at a space) when
         * long node names and addresses leave no room for both */
        const char *what = line + 13;
        size_t room = sizeof r->slurm_reason - strlen("slurm: ") - strlen(hint) - 1;
        size_t len = strlen(what);
        if (len > room) {
            len = room;
            while (len > 0 && what[len] != ' ')
                len--;
            if (len == 0)
                len = utf8_valid_len(what, room);
        }
        snprintf(r->slurm_reason, sizeof r->slurm_reason, "slurm: %.*s%s", (int)len, what, hint);
    } else if (strstr(line, "Unable to contact slurm controller")) {
        /* srun gives up after ~9 s; its later lines ("Check SLURM_JOB_ID...") say less */
        const char *what = strncmp(line, "srun: error: ", 13) == 0 ? line + 13 : line;
        snprintf(r->slurm_reason, sizeof r->slurm_reason,
                 "slurm: the controller did not answer: %s", what);
    }
}

/* A line of Slurm's own, not the task's: srun's, or slurmstepd's, which names its node on
 * clusters that run several slurmd per host ("slurmstepd-n1: error: ..."). */
static int slurm_own_line(const char *line)
{
    if (strncmp(line, "srun: ", 6) == 0 || strncmp(line, "slurmstepd: ", 12) == 0)
        return 1;
    if (strncmp(line, "slurmstepd-", 11) != 0)
        return 0;
    size_t node = strcspn(line + 11, ": \t");
    return node > 0 && strncmp(line + 11 + node, ": ", 2) == 0;
}

/* srun's word that a task failed: "srun: error: n1: task 0: Exited with exit code 3", or a
 * signal's name in place of the exit ("task 1: Segmentation fault", "Out Of Memory"); tasks
 * of one node that ended alike are one line ("n1: tasks 0-1: ...", Slurm 22.05
 * launch_slurm.c _task_finish), whose first is taken. Returns the task's number, -1 for
 * another line. */
static long task_failure_line(const char *line)
{
    if (strncmp(line, "srun: error: ", 13) != 0)
        return -1;
    const char *t = strstr(line, ": task "), *ts = strstr(line, ": tasks ");
    t = t ? t + strlen(": task ") : ts ? ts + strlen(": tasks ") : NULL;
    if (!t || *t < '0' || *t > '9')
        return -1;
    char *end;
    long task = strtol(t, &end, 10);
    return *end == ':' || *end == '-' || *end == ',' ? task : -1;
}

/* A shell's word that a child was ended by a signal: dash's "Terminated" or "Killed" alone,
 * bash's "sh: line 1:  4242 Terminated   sleep 30". A failing task's siblings print it as
 * srun (--kill-on-bad-exit) ends them, often after the failing task's own last line (srun
 * forwards each task's output as it comes): it says nothing of why the trial failed. */
static int signal_report(const char *line)
{
    static const char *const words[] = {"Terminated", "Killed"};
    for (size_t i = 0; i < sizeof words / sizeof *words; i++) {
        size_t wl = strlen(words[i]);
        if (strcmp(line, words[i]) == 0)
            return 1;
        for (const char *w = strstr(line, words[i]); w; w = strstr(w + 1, words[i])) {
            const char *p = w; /* "PID<spaces>WORD<space or end>" */
            while (p > line && p[-1] == ' ')
                p--;
            if (p == w || p == line || p[-1] < '0' || p[-1] > '9' || (w[wl] && w[wl] != ' '))
                continue;
            return 1;
        }
    }
    return 0;
}

static TaskSaid *task_said_of(const SrunWords *r, long task)
{
    for (size_t i = 0; i < r->n_said; i++)
        if (r->said[i].task == task)
            return &r->said[i];
    return NULL;
}

/* The task's entry, made when it has none yet; NULL out of memory. */
static TaskSaid *task_entry(SrunWords *r, long task)
{
    TaskSaid *t = task_said_of(r, task);
    if (t)
        return t;
    if (r->n_said == r->cap_said) {
        size_t cap = r->cap_said ? r->cap_said * 2 : 8;
        TaskSaid *grown = realloc(r->said, cap * sizeof *grown);
        if (!grown)
            return NULL;
        r->said = grown;
        r->cap_said = cap;
    }
    t = &r->said[r->n_said++];
    *t = (TaskSaid){.task = task};
    return t;
}

int srunwords_node(SrunWords *r, long task, const char *line)
{
    size_t mark = strlen(SRUNWORDS_NODE_MARK);
    if (strncmp(line, SRUNWORDS_NODE_MARK, mark) != 0)
        return 0;
    const char *node = line + mark;
    size_t len = strcspn(node, " \t\r");
    if (!len || node[len] || len >= sizeof r->said->node)
        return 0; /* not a node name: the task's own line */
    TaskSaid *t = task >= 0 ? task_entry(r, task) : NULL;
    if (!t || t->node[0])
        return 1;
    memcpy(t->node, node, len + 1);
    r->marked = 1;
    return 2;
}

const char *srunwords_node_of(const SrunWords *r, long task)
{
    const TaskSaid *t = task_said_of(r, task);
    return t && t->node[0] ? t->node : NULL;
}

/* The task whose mark named `node`; -1 when none did. */
static long task_on(const SrunWords *r, const char *node, size_t len)
{
    for (size_t i = 0; i < r->n_said; i++)
        if (strlen(r->said[i].node) == len && strncmp(r->said[i].node, node, len) == 0)
            return r->said[i].task;
    return -1;
}

/* Each task's last words, by the label srun put on its line (a task's line is the task's,
 * whenever it comes); and, for output with no label, the failed task's words by order: srun
 * says a task failed ("task 0: Exited with exit code 3") as its exit arrives, and forwards
 * output as it comes, so the failed task's last line often comes after that word, and the
 * tasks srun then stops speak after it too. There the first task line after srun's word is
 * taken, else the last before it. A shell's "Terminated" is never the cause. */
static void task_words(SrunWords *r, long task, const char *line)
{
    r->labeled |= task >= 0;
    if (slurm_own_line(line)) {
        long failed = task < 0 ? task_failure_line(line) : -1;
        if (failed >= 0 && r->failed_task < 0) {
            r->failed_task = failed;
            snprintf(r->failed_word, sizeof r->failed_word, "%s", line + 13);
        }
        r->task_failed |= failed >= 0;
        return;
    }
    if (task >= 0 && !signal_report(line)) {
        TaskSaid *t = task_entry(r, task);
        if (t)
            snprintf(t->said, sizeof t->said, "%s", line);
    }
    if (r->task_said_final || (r->task_said[0] && signal_report(line)))
        return;
    snprintf(r->task_said, sizeof r->task_said, "%s", line);
    r->task_said_task = task;
    r->task_said_final = r->task_failed;
}

void srunwords_stderr(SrunWords *r, long task, const char *line)
{
    note_slurm_end(r, line);
    task_words(r, task, line);
}

/* A node's rank fan-out saying which of its ranks failed first (rankfan.h): kept, once,
 * whichever task said it, for the reason (add_notices). */
void srunwords_stdout(SrunWords *r, const char *line)
{
    char who[160];
    if (!rankfan_notice(line, who, sizeof who) || strstr(r->notices, who))
        return;
    size_t len = strlen(r->notices);
    if (len + strlen(who) + 3 < sizeof r->notices)
        snprintf(r->notices + len, sizeof r->notices - len, "%s%s", len ? "; " : "", who);
}

/* srun's own last line ("task 0: Exited with exit code 3", "Force Terminated StepId=3.4")
 * says less than the task's: the last line of the task srun named as failed is added (none
 * when that task said nothing: another's words would be taken for the cause), unless the
 * trial said why in an error event (then another rank's last word, "Connection reset by
 * peer", says nothing more). Where srun named no task, or gave no labels, the words are
 * taken by order (task_words). */
static void add_task_said(const SrunWords *r, Observation *o)
{
    /* srun's word names the node and the task's number within its component: the node's
     * mark gives its label (its number in the step); without marks, the two are one */
    const char *node_end = strstr(r->failed_word, ": task");
    long failed_task = r->failed_task;
    if (failed_task >= 0 && r->marked)
        failed_task =
            node_end ? task_on(r, r->failed_word, (size_t)(node_end - r->failed_word)) : -1;
    const TaskSaid *failed = failed_task >= 0 ? task_said_of(r, failed_task) : NULL;
    if (failed && !failed->said[0])
        failed = NULL;
    long task = failed ? failed->task : r->task_said_task;
    const char *said = failed ? failed->said : r->task_said;
    if (!failed && r->failed_task >= 0 && r->labeled)
        return; /* labeled output, and the failed task's holds nothing (or is unknown) */
    if (!said[0] || strstr(o->reason, said) || strstr(o->reason, "error event"))
        return;
    size_t len = strlen(o->reason);
    /* The reason's srun line is srun's last, often of a task it stopped after the failure
     * ("task 0: Exited with exit code 143"): how the task whose words these are failed is
     * said with them. */
    if (failed && !strstr(o->reason, r->failed_word)) {
        /* "n2: task 1: Exited with exit code 3" as "task 1 (n2, exit code 3)" */
        const char *what = NULL;
        if (node_end)
            what = strchr(node_end + 2, ':');
        if (what && what[1] == ' ') {
            what += 2;
            if (strncmp(what, "Exited with ", 12) == 0)
                what += 12;
            snprintf(o->reason + len, sizeof o->reason - len, "; task %ld (%.*s, %s) said: %s",
                     task, (int)(node_end - r->failed_word), r->failed_word, what, said);
            return;
        }
    }
    if (failed && failed->task != r->failed_task && node_end)
        /* srun's line in the reason numbers it otherwise ("n3: task 0"): its node says
         * which it is */
        snprintf(o->reason + len, sizeof o->reason - len, "; task %ld (%.*s) said: %s", task,
                 (int)(node_end - r->failed_word), r->failed_word, said);
    else if (task >= 0)
        snprintf(o->reason + len, sizeof o->reason - len, "; task %ld said: %s", task, said);
    else
        snprintf(o->reason + len, sizeof o->reason - len, "; the task said: %s", said);
}

/* The notice of the rank the trial's error event names ("error event: rank 3 on n3: ..."), as
 * an offset into notices and its length, when rankcause_first puts it before the first; 0
 * when it does not (a lost peer's event: a rank killed without a word has none, and a peer's
 * notice must not go before its). */
static int notice_of_error(const SrunWords *r, const char *reason, size_t *at, size_t *len)
{
    const char *ev = strstr(reason, "error event: ");
    if (!ev)
        return 0;
    char copy[sizeof r->notices];
    const char *list[sizeof r->notices / 2];
    size_t off[sizeof r->notices / 2], n = 0;
    memcpy(copy, r->notices, sizeof copy);
    for (char *p = copy; *p && n < sizeof list / sizeof *list;) {
        size_t l = strcspn(p, ";");
        list[n] = p;
        off[n++] = (size_t)(p - copy);
        p += l;
        if (*p) {
            *p++ = '\0';
            p += strspn(p, " ");
        }
    }
    size_t i = rankcause_first(NULL, list, n, ev + strlen("error event: "));
    if (i == 0)
        return 0;
    *at = off[i];
    *len = strlen(list[i]);
    return 1;
}

/* The inner launcher names the first fan-out notice it read ("the command exited: rank 0
 * (n1 gpu0) exited with status 1"; on the login node "the command failed on LOGIN: ..."); a
 * rank on another node that died without a word (SIGKILL, a segfault) is often the cause, its
 * notice later: every other node's is said after the first ("...; rank 2 (n2 gpu0) exited
 * with status 137 (SIGKILL)"), as over SSH. Which node's notice srun forwards first is a race
 * (each node's output comes its own way): the notice of the rank whose error event is the
 * trial's (a cause, not a peer's lost connection: observation.c) goes first, so the reason
 * names the rank that crashed, not a peer on another node that lost it and ended sooner. */
static void add_notices(const SrunWords *r, Observation *o)
{
    size_t first = strcspn(r->notices, ";");
    if (!r->notices[first])
        return; /* one notice or none: the inner launcher's reason has it */
    char head[160];
    snprintf(head, sizeof head, "%.*s", (int)first, r->notices);
    char *at = strstr(o->reason, head); /* "exited: ..." here, "failed on LOGIN: ..." there */
    if (!at)
        return;
    char all[sizeof r->notices];
    size_t cause, cause_len;
    if (notice_of_error(r, o->reason, &cause, &cause_len)) {
        /* the cause's notice, then the others in the order they came */
        size_t rest = cause + cause_len;
        rest += strspn(r->notices + rest, "; ");
        snprintf(all, sizeof all, "%.*s; %.*s%s%s", (int)cause_len, r->notices + cause,
                 (int)(cause >= 2 ? cause - 2 : 0), r->notices, r->notices[rest] ? "; " : "",
                 r->notices + rest);
    } else {
        snprintf(all, sizeof all, "%s", r->notices);
    }
    size_t len = strlen(all);
    if (strlen(o->reason) - first + len >= sizeof o->reason)
        return;
    memmove(at + len, at + first, strlen(at + first) + 1);
    memcpy(at, all, len);
}

void srunwords_explain(const SrunWords *r, Observation *o)
{
    if (o->status == TRIAL_FAILED)
        add_notices(r, o);
    if (r->slurm_reason[0]) {
        /* When a task failed on its own (a crashing rank), srun cancels the step's other
         * tasks: the task's words are the cause and come first, whichever line arrived
         * first. A step Slurm ended for its own reason (time limit, node failure) is said in
         * Slurm's words. */
        int own = r->slurm_after_task && o->status == TRIAL_FAILED && o->reason[0] &&
                  strncmp(o->reason, "the command was killed", 22) != 0;
        if (own) {
            add_task_said(r, o);
            size_t used = strlen(o->reason);
            if (used + 4 < sizeof o->reason)
                snprintf(o->reason + used, sizeof o->reason - used, " (%s)", r->slurm_reason);
        } else {
            o->status = TRIAL_FAILED;
            snprintf(o->reason, sizeof o->reason, "%s", r->slurm_reason);
        }
    } else if (o->status == TRIAL_FAILED) {
        add_task_said(r, o);
    }
}
