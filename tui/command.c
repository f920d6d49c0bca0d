/* The `:` command line: tuning (budget, unqueue, converge, pause, plot, sort, filter, theme)
 * and scheduler overrides (pin, pause/resume a job, drain a node, policy), each explained
 * when it is refused. */
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "core/base/clock.h"
#include "core/base/decimal.h"
#include "core/base/plural.h"
#include "tui/command.h"
#include "tui/theme.h"

/* What an argument was, after "found": quoted, or "nothing" where none was typed (":budget"
 * alone said "found ''", which reads as a quote lost). FOUND(arg) keeps its text in a buffer
 * that lives as long as the call's statement. */
static const char *found_text(char *buf, size_t cap, const char *arg)
{
    if (!arg || !arg[0])
        return "nothing";
    snprintf(buf, cap, "'%s'", arg);
    return buf;
}
#define FOUND(arg) found_text((char[160]){0}, 160, (arg))

/* "n1, n2, n3, n4" (every node, when they fit in cap), else "node00 ... node15, 16 in all":
 * what a refused node name is told it could have been. */
static void node_list(const char *(*name)(const void *, int), const void *from, int n, char *out,
                      size_t cap)
{
    size_t used = 0;
    out[0] = 0;
    for (int i = 0; i < n && used < cap; i++)
        used += (size_t)snprintf(out + used, cap - used, "%s%s", i ? ", " : "", name(from, i));
    if (used >= cap && n > 1)
        snprintf(out, cap, "%s ... %s, %d in all", name(from, 0), name(from, n - 1), n);
}

static const char *sched_name(const void *st, int i)
{
    return sched_node_name(st, i);
}

static const char *slurm_name(const void *ns, int i)
{
    return ((const SlurmNodes *)ns)->v[i].name;
}

enum { NODE_LIST_CAP = 64 }; /* with its message, two rows at 80 columns */

/* On a Slurm cluster `drain NODE [REASON]`, `undrain NODE` (and `resume NODE` when no
 * scheduler job has that name) are Slurm's own: no new job or step starts on a drained node
 * and those running finish, as the scheduler's drain places nothing new there. Asked
 * first; y runs scontrol update (tui/view_slurm.c). */
static int slurm_node_command(App *a, const char *word, const char *arg)
{
    char node[64] = "", reason[96] = "";
    sscanf(arg, "%63s %95[^\n]", node, reason);
    const SlurmNodes *ns = a->slurm_panel.nodes;
    if (!node[0]) {
        app_message(a, 1, ":%s: expected a Slurm node name (e.g. %s), found nothing", word,
                    ns && ns->n ? ns->v[0].name : "n1");
        return -1;
    }
    if (!slurm_desk_has_node(a->slurm, node)) {
        char known[NODE_LIST_CAP];
        if (!ns || !ns->n) {
            app_message(a, 1, ":%s: Slurm has not listed its nodes yet: try again in a moment",
                        word);
            return -1;
        }
        node_list(slurm_name, ns, (int)ns->n, known, sizeof known);
        app_message(a, 1, ":%s: '%s' is not a node of this cluster (its nodes: %s)", word, node,
                    known);
        return -1;
    }
    if (word[0] != 'd' && reason[0]) {
        app_message(a, 1, ":%s: expected a node name only, found %s", word, FOUND(arg));
        return -1;
    }
    if (slurm_desk_updating(a->slurm)) {
        app_message(a, 1, ":%s: a node update is still running; wait for its answer", word);
        return -1;
    }
    /* Slurm resumes a node drained, down or failed: one it lists in use or idle since our
     * last update has nothing to undo (scontrol would refuse it after the question) */
    const SlurmNode *listed = word[0] == 'd' ? NULL : slurm_desk_listed_node(a->slurm, node);
    if (listed && (listed->state == SLURM_NODE_IDLE || listed->state == SLURM_NODE_MIXED ||
                   listed->state == SLURM_NODE_ALLOC)) {
        app_message(a, 1, ":%s: %s is not drained or down in Slurm (it lists it %s; nothing done)",
                    word, node, listed->state_raw);
        return -1;
    }
    a->confirm_drain = 1;
    a->drain_on = word[0] == 'd';
    snprintf(a->drain_node, sizeof a->drain_node, "%s", node);
    snprintf(a->drain_reason, sizeof a->drain_reason, "%s", reason);
    return 0;
}

static int is_sched_job(App *a, const char *arg)
{
    char name[64] = "";
    sscanf(arg, "%63s", name);
    return a->ss && sched_job_find(simsched_state_mut(a->ss), name) >= 0;
}

/* `drain` of a node the operator drained, `undrain` of one not drained or drained by the
 * backend alone (its lift is not the operator's to give): said, and nothing done, rather
 * than "applied". */
static int node_unchanged(App *a, const SchedState *st, int node, const char *word)
{
    const char *name = sched_node_name(st, node);
    int ours = sched_node_drained_by(st, node, SCHED_DRAIN_OPERATOR);
    if (word[0] == 'd' && ours)
        app_message(a, 1, ":drain: %s is already drained (nothing done)", name);
    else if (word[0] == 'u' && !sched_node_drained(st, node))
        app_message(a, 1, ":undrain: %s is not drained (nothing done)", name);
    else if (word[0] == 'u' && !ours)
        app_message(a, 1,
                    ":undrain: %s is out for the cluster's reason (host down or unusable, "
                    "Slurm's drain), not by :drain: used again when that ends (nothing done)",
                    name);
    else
        return 0;
    return 1;
}

/* An override of a job that will never run again, `pause` of a paused job, `resume` of one
 * not paused: said, and nothing done. */
static int job_unchanged(App *a, const SchedJobInfo *j, const char *word)
{
    if (j->state == SCHED_JOB_DONE || j->state == SCHED_JOB_FAILED)
        app_message(a, 1, ":%s: %s is %s: it runs no more (nothing done)", word, j->name,
                    j->state == SCHED_JOB_DONE ? "done" : "failed");
    else if (strcmp(word, "pause") == 0 && j->paused)
        app_message(a, 1, ":pause: %s is already paused (nothing done)", j->name);
    else if (strcmp(word, "resume") == 0 && !j->paused)
        app_message(a, 1, ":resume: %s is not paused (nothing done)", j->name);
    else
        return 0;
    return 1;
}

/* `pin` at the count the job is pinned at already, or `pin JOB 0` of a job not pinned: said,
 * and nothing done, rather than "applied" (a second `pin` to check it took said so too). */
static int pin_unchanged(App *a, const SchedJobInfo *j, int gpus)
{
    if (gpus > 0 && j->pinned_gpus == gpus)
        app_message(a, 1, ":pin: %s is already pinned at %d GPU%s (nothing done)", j->name, gpus,
                    plural_s(gpus));
    else if (gpus == 0 && j->pinned_gpus == 0)
        app_message(a, 1, ":pin: %s is not pinned (nothing done)", j->name);
    else
        return 0;
    return 1;
}

/* Scheduler overrides: `pause JOB`, `resume JOB`, `pin JOB GPUS`, `drain NODE`, `undrain NODE`;
 * applied at the next decision (the scheduler's rule) and logged. */
static int sched_command(App *a, const char *word, const char *arg)
{
    if (!a->ss) {
        app_message(a, 1, ":%s: no cluster scheduler runs in this session", word);
        return -1;
    }
    SchedState *st = simsched_state_mut(a->ss);
    char name[64] = "", count[32] = "", more[2] = "";
    int got = sscanf(arg, "%63s %31s %1s", name, count, more);
    Error err;
    int rc;
    double due_s = -1; /* a job's arrival, when it has not arrived yet */
    /* A word too many is refused, not dropped: "drain node01 now" must not read as done
     * as typed, and a reason is Slurm's alone (slurm_node_command). */
    int pin = strcmp(word, "pin") == 0;
    if (pin && got > 2) {
        app_message(a, 1, ":pin: expected JOB GPUS (0 unpins), found %s", FOUND(arg));
        return -1;
    }
    if (!pin && got > 1) {
        app_message(a, 1, ":%s: expected one name, found %s", word, FOUND(arg));
        return -1;
    }
    if (strcmp(word, "drain") == 0 || strcmp(word, "undrain") == 0) {
        int node = -1;
        for (int i = 0; i < sched_node_count(st); i++)
            if (strcmp(sched_node_name(st, i), name) == 0)
                node = i;
        if (node < 0 && !name[0]) {
            app_message(a, 1, ":%s: expected a node name (e.g. %s), found nothing", word,
                        sched_node_name(st, 0));
            return -1;
        }
        if (node < 0) {
            char known[NODE_LIST_CAP];
            node_list(sched_name, st, sched_node_count(st), known, sizeof known);
            app_message(a, 1, ":%s: '%s' is not a node of this cluster (its nodes: %s)", word, name,
                        known);
            return -1;
        }
        if (node_unchanged(a, st, node, word))
            return -1;
        rc = sched_drain_node(st, node, word[0] == 'd', &err);
    } else {
        int job = got >= 1 ? sched_job_find(st, name) : -1;
        if (job < 0) {
            app_message(a, 1, ":%s: expected a job name from the job list, found %s", word,
                        FOUND(name));
            return -1;
        }
        SchedJobInfo info;
        sched_job_info(st, (size_t)job, &info);
        if (job_unchanged(a, &info, word))
            return -1;
        due_s = info.state == SCHED_JOB_FUTURE ? info.submit_s : -1;
        if (strcmp(word, "pin") == 0) {
            long n;
            if (got != 2 || decimal_long(count, 0, INT_MAX, &n) < 0) {
                app_message(a, 1, ":pin: expected JOB GPUS (0 unpins), found %s", FOUND(arg));
                return -1;
            }
            if (pin_unchanged(a, &info, (int)n))
                return -1;
            rc = sched_pin(st, (size_t)job, (int)n, &err);
        } else {
            rc = sched_pause(st, (size_t)job, word[0] == 'p', &err);
        }
    }
    if (rc < 0) {
        app_message(a, 1, ":%s: %s", word, err.msg);
        return -1;
    }
    if (due_s >= 0) { /* kept on the job: the decisions see it once it arrives */
        app_log(a, "override: %s %s (from its arrival at t=%.0fs)", word, arg, due_s);
        app_message(a, 0,
                    "%s %s: %s has not arrived yet (due at t=%.0fs): applied from its "
                    "arrival",
                    word, arg, name, due_s);
        return 0;
    }
    app_log(a, "override: %s %s (at the next decision)", word, arg);
    app_message(a, 0, "%s %s: applied at the next scheduling decision", word, arg);
    return 0;
}

int command_run(App *a, const char *line)
{
    /* arg holds a whole input line: one cut short would drop a word typed past its end
     * (":budget 60", 90 spaces, "x" was read as ":budget 60"), where such a word is refused. */
    char word[32] = "", arg[128] = "";
    _Static_assert(sizeof arg >= sizeof a->input, "arg holds a whole input line");
    if (strlen(line) >= sizeof arg) {
        app_message(a, 1, "command too long: expected at most %zu characters, found %zu",
                    sizeof arg - 1, strlen(line));
        return -1;
    }
    sscanf(line, " %31s %127[^\n]", word, arg);
    for (size_t n = strlen(arg); n > 0 && arg[n - 1] == ' '; n--)
        arg[n - 1] = 0;
    if (!word[0])
        return 0;
    if (strcmp(word, "budget") == 0) {
        long n;
        if (decimal_long(arg, 1, 100000, &n) < 0) {
            app_message(a, 1, ":budget: expected a number of trials 1-100000, found %s",
                        FOUND(arg));
            return -1;
        }
        if (!a->tuner) {
            app_message(a, 1, ":budget: no tuning in this session (--job FILE tunes)");
            return -1;
        }
        size_t done = tuner_n_trials(a->tuner);
        if ((size_t)n < done) {
            app_message(a, 1,
                        ":budget %ld: the session already has %zu trial%s; expected %zu or more", n,
                        done, plural_s((long long)done), done);
            return -1;
        }
        tuner_set_budget(a->tuner, (int)n);
        a->next_trial_ms = clock_now_ms();
        app_log(a, "budget set to %ld trial%s", n, plural_s(n));
        /* said where the operator looks, as every other command's outcome is, with the
         * queued overrides a budget this short leaves without a trial */
        size_t queued = tuner_overrides(a->tuner), past = 0;
        for (size_t i = 0; i < queued; i++)
            past += tuner_override_trial(a->tuner, i) > n;
        int last = queued ? tuner_override_trial(a->tuner, queued - 1) : 0;
        if (past && queued == 1)
            app_message(a, 0,
                        "budget set to %ld trial%s (%zu run so far): the queued override waits "
                        "past it (:budget %d runs it)",
                        n, plural_s(n), done, last);
        else if (past)
            app_message(a, 0,
                        "budget set to %ld trial%s (%zu run so far): %zu of the %zu queued "
                        "overrides wait%s past it (:budget %d runs %s)",
                        n, plural_s(n), done, past, queued, past == 1 ? "s" : "", last,
                        plural_of((long long)past, "it", "them"));
        else
            app_message(a, 0, "budget set to %ld trial%s (%zu run so far)", n, plural_s(n), done);
    } else if (strcmp(word, "unqueue") == 0) {
        long n;
        if (decimal_long(arg, 1, INT_MAX, &n) < 0) {
            app_message(a, 1,
                        ":unqueue: expected the trial number of a queued override (its row in "
                        "the trial table), found %s",
                        FOUND(arg));
            return -1;
        }
        if (!a->tuner) {
            app_message(a, 1, ":unqueue: no tuning in this session (--job FILE tunes)");
            return -1;
        }
        if (app_unqueue_override(a, n) < 0)
            return -1;
    } else if (strcmp(word, "converge") == 0) {
        int on = strcmp(arg, "on") == 0;
        if (!on && strcmp(arg, "off") != 0) {
            app_message(a, 1, ":converge: expected on or off, found %s", FOUND(arg));
            return -1;
        }
        if (!a->tuner) {
            app_message(a, 1, ":converge: no tuning in this session (--job FILE tunes)");
            return -1;
        }
        tuner_set_stop_when_converged(a->tuner, on);
        a->next_trial_ms = clock_now_ms();
        app_log(a, "stop when converged: %s", on ? "on" : "off");
        app_message(a, 0,
                    "stop when converged: %s (%d suggestions in a row that could gain no more "
                    "than the model's error, expecting < %g%% gain)",
                    on ? "on" : "off", TUNER_CONVERGED_STREAK, 100 * TUNER_CONVERGED_EI_FRACTION);
    } else if ((strcmp(word, "pause") == 0 || strcmp(word, "resume") == 0) && !arg[0]) {
        int pause = word[0] == 'p';
        /* one that would change nothing is refused saying so, as :pause JOB's is: it logged
         * "resumed" again while tuning ran */
        if (app_pausable(a) && a->user_paused == pause) {
            app_message(a, 1, ":%s: %s (nothing done)", word,
                        pause ? "already paused" : "not paused");
            return -1;
        }
        app_ask_pause(a, pause);
    } else if (a->slurm && (strcmp(word, "drain") == 0 || strcmp(word, "undrain") == 0 ||
                            (strcmp(word, "resume") == 0 && !is_sched_job(a, arg)))) {
        return slurm_node_command(a, word, arg);
    } else if (strcmp(word, "pause") == 0 || strcmp(word, "resume") == 0 ||
               strcmp(word, "pin") == 0 || strcmp(word, "drain") == 0 ||
               strcmp(word, "undrain") == 0) {
        return sched_command(a, word, arg);
    } else if (strcmp(word, "plot") == 0) {
        const PlotStyle *s = plot_style_find(arg);
        if (!s) {
            app_message(a, 1, ":plot: expected braille, block or ascii, found %s", FOUND(arg));
            return -1;
        }
        a->plot_style = s;
        snprintf(a->config.plot, sizeof a->config.plot, "%s", s->name);
        app_save_config(a);
    } else if (strcmp(word, "sort") == 0) {
        int found = trials_column_find(arg);
        if (found < 0) {
            app_message(a, 1,
                        ":sort: expected trial, status, time, best, predicted, error or "
                        "workers (or a column's header: time_s, err%%, W/PS...), found %s",
                        FOUND(arg));
            return -1;
        }
        a->sort = (TrialColumn)found;
        a->table_stale = 1;
    } else if (strcmp(word, "filter") == 0) {
        snprintf(a->filter, sizeof a->filter, "%s", arg);
        a->table_stale = 1;
    } else if (strcmp(word, "theme") == 0 && !arg[0]) {
        char names[256];
        theme_names(app_themes_dir(a), names, sizeof names);
        app_message(a, 1, ":theme: expected a theme name (%s) or a file's path", names);
        return -1;
    } else if (strcmp(word, "theme") == 0) {
        if (app_set_theme(a, arg) < 0)
            return -1;
        snprintf(a->config.theme, sizeof a->config.theme, "%s", arg);
        if (app_save_config(a) == 0)
            app_message(a, 0, "theme %s (saved in %s)", arg, a->config_file);
    } else if (strcmp(word, "policy") == 0) {
        if (!a->ss) {
            app_message(a, 1, ":policy: no cluster scheduler runs in this session");
            return -1;
        }
        Error err;
        SchedState *st = simsched_state_mut(a->ss);
        char was[32];
        snprintf(was, sizeof was, "%s", sched_policy_name(st));
        if (sched_set_policy(st, arg, &err) < 0) {
            app_message(a, 1, ":policy: %s", err.msg);
            return -1;
        }
        app_log(a, "override: policy %s -> %s (at the next decision)", was, arg);
        app_message(a, 0, "policy %s: applied at the next scheduling decision", arg);
    } else if (strcmp(word, "quit") == 0 || strcmp(word, "q") == 0 || strcmp(word, "quit!") == 0 ||
               strcmp(word, "q!") == 0) {
        if (arg[0]) {
            app_message(a, 1, ":%s: expected nothing after it, found %s", word, FOUND(arg));
            return -1;
        }
        /* As q does: a typed :quit must not drop a running trial unasked; vi's forced form
         * quits at once, the operator having said so. */
        if (word[strlen(word) - 1] == '!')
            a->quit = 1;
        else
            app_ask_quit(a);
    } else {
        app_message(a, 1,
                    "unknown command '%s': expected budget, unqueue, converge, pause, resume, "
                    "pin, drain, undrain, plot, sort, filter, theme, policy or quit (? help)",
                    word);
        return -1;
    }
    a->dirty = 1;
    return 0;
}
