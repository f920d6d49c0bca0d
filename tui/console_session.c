/* Opening and closing the console's session: the tuning session (remote/session), then what
 * only the console adds (the Slurm desk, the live scheduler on the inventory's hosts or on
 * Slurm, the simulated scheduler beside the simulator), and the journal once the screen is
 * ours. */
#include "tui/console_session.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "remote/live/liverun_slurm.h"
#include "remote/live/schedlive.h"
#include "remote/slurm/slurm_inventory.h"
#include "tui/console_events.h"
#include "tui/term.h"

/* The Slurm watch's back-off cap: a quiet cluster is asked every 16 s at most, a change
 * shows within that, and a controller back from an outage is seen within it. */
enum { SLURM_WATCH_MAX_S = 16 };

/* A Slurm cluster: the desk watches it on the console's loop (the nodes' partition is the
 * inventory's). */
static int open_slurm_desk(App *a, const Session *s, Error *err)
{
    SlurmTarget t;
    memset(&t, 0, sizeof t);
    if (s->cluster->extra && slurm_target_from_json(s->cluster->extra, "--cluster", &t, err) < 0)
        return -1;
    if (s->spec.slurm_partition)
        snprintf(t.partition, sizeof t.partition, "%s", s->spec.slurm_partition);
    if (!(a->slurm = slurm_desk_new(s->slurm, t.partition, SLURM_WATCH_MAX_S)))
        return error_set(err, "out of memory");
    SlurmPanel *p = &a->slurm_panel;
    snprintf(p->where, sizeof p->where, "%s", slurm_ctl_where(s->slurm));
    snprintf(p->partition, sizeof p->partition, "%s", t.partition);
    p->tuning = s->tuner != NULL;
    return 0;
}

/* --workload on Slurm: the live jobs are batch jobs submitted from this machine (a login
 * node in the inventory is refused, as for `schedule --live`), with the inventory's
 * job_command; the backend polls while idle too, so other users' jobs show in the grid. */
static int open_live_slurm(App *a, const Session *s, Error *err)
{
    const char *source = s->spec.cluster ? s->spec.cluster : "--slurm";
    SlurmTarget t;
    memset(&t, 0, sizeof t);
    if (s->cluster->extra && slurm_target_from_json(s->cluster->extra, source, &t, err) < 0)
        return -1;
    if (t.login[0])
        return error_set(err,
                         "%s: live mode on Slurm runs sbatch and reads each job's output file "
                         "on this machine: run tunedeck on the login node %s",
                         source, t.login);
    if (!s->cluster->job_command[0])
        return error_set(err,
                         "%s: expected a \"job_command\" for the live jobs: give "
                         "--job-command TEMPLATE, or --cluster an inventory with \"backend\": "
                         "\"slurm\" and \"job_command\" (docs/slurm.md)",
                         source);
    if (liveslurm_check(s->cluster->job_command, s->cluster->job_launch_per_host,
                        s->cluster->n_machines, err) < 0)
        return error_prefix(err, "%s", source);
    if (s->spec.slurm_partition)
        snprintf(t.partition, sizeof t.partition, "%s", s->spec.slurm_partition);
    LiveSlurmOptions so = {.ctl = s->slurm,
                           .partition = t.partition,
                           .poll_idle = 1,
                           .log = console_live_log,
                           .userdata = a};
    liveslurm_options_intervals(&so, &t.every);
    return (a->live_slurm = liveslurm_new(&so, err)) ? 0 : -1;
}

/* The session closes after the screen (console_run): the wait for a login node that is down,
 * before the allocation's release, is said where the operator still sees it. */
static void say_closing(void *ud, const char *line)
{
    (void)ud;
    fprintf(stderr, "tunedeck: %s\n", line);
}

/* Ctrl-C (or a TERM, a HUP) once the screen is gone ends that wait: the terminal is back in
 * its own mode, so the key is a signal again, and the console's handlers still note it. */
static int closing_interrupted(void *ud)
{
    (void)ud;
    TermSignals got = term_take_signals();
    return got.ints || got.quit;
}

/* The session (remote/session), then what only the console adds: the live scheduler on the
 * inventory's hosts, or the simulated one beside the simulator. */
int console_open_session(App *a, const ConsoleOptions *o, Error *err)
{
    const SessionSpec *spec = &o->spec;
    if (o->workload && !spec->cluster && !spec->slurm)
        return error_set(err, "--workload: expected a --cluster FILE (or --slurm) with it (the "
                              "live scheduler runs the workload on the inventory's hosts)");
    Session *s = o->session;
    SessionSpec with_screen = *spec;
    with_screen.on_event = console_on_tuner_event;
    with_screen.userdata = a;
    with_screen.on_report = console_log_line;
    with_screen.on_warning = console_warn_line;
    with_screen.report_userdata = a;
    with_screen.stops_on_loop = 1; /* keys and redraws go on while a host takes its seconds */
    with_screen.holds_refused = 1; /* a refused host's key can be accepted here (a) */
    with_screen.on_close_report = say_closing;
    with_screen.close_interrupted = closing_interrupted;
    if (o->workload && spec->keep_hosts)
        with_screen.keep_hosts = SESSION_KEEP_ALL; /* the live scheduler runs on them */
    /* A Slurm cluster alone is watched (its nodes, queue and drains); any other wants work. */
    if (spec->cluster && !spec->job && !o->workload && !spec->slurm &&
        !slurm_inventory_is_slurm_file(spec->cluster))
        return error_set(err, "--cluster: expected a --job FILE (tuning) or a --workload "
                              "FILE (the live scheduler) with it");
    /* --job-command is known now: checked before the controller is asked for its nodes, as
     * schedule --live does, Slurm's refusals first (an inventory's job_command is checked
     * before the live jobs' first start) */
    if (o->workload && spec->job_command) {
        SchedLiveOptions early = {.job_command_flag = 1, .checkpoint = o->checkpoint_file};
        char ck[512];
        if (liveslurm_check(spec->job_command, 0, 0, err) < 0) {
            error_prefix(err, "--slurm");
            return error_mark(err, ERROR_INPUT);
        }
        if (schedlive_check_command(spec->job_command, "--slurm", &early, ck, sizeof ck, err) < 0)
            return -1;
    }
    if (session_open(s, &with_screen, err) < 0)
        return -1;
    if (s->slurm && open_slurm_desk(a, s, err) < 0)
        return -1;
    a->sim = s->sim;
    a->cluster = s->cluster;
    a->job = s->job;
    a->pool = s->pool;
    a->tuner = s->tuner;
    a->refused_hold = session_refused_hold(s);
    snprintf(a->launcher, sizeof a->launcher, "%s", s->launcher);
    if (o->workload && s->slurm && open_live_slurm(a, s, err) < 0)
        return error_prefix(err, "--workload");
    if (o->workload) {
        SimSchedLiveOptions lo = {.cluster = a->cluster,
                                  .slurm = a->live_slurm,
                                  .pool = a->pool,
                                  .workload = o->workload,
                                  .inventory = s->spec.cluster,
                                  .job_command_flag = s->spec.job_command != NULL,
                                  .checkpoint = o->checkpoint_file,
                                  .policy = o->policy,
                                  .time_scale = o->sched_speed,
                                  .job_dir = o->job_dir,
                                  .gpus_per_node = o->gpus_per_node,
                                  .seed = (uint64_t)spec->seed,
                                  .catalogue_dir = o->catalogue_dir,
                                  .log = console_live_log,
                                  .userdata = a};
        a->ss = simsched_new_live(&lo, err);
        /* an error that names a flag (--job-command, --checkpoint-file) or the inventory is
         * that one's, not the workload's */
        const char *inv = s->spec.cluster;
        if (!a->ss)
            return strncmp(err->msg, "--", 2) == 0 ||
                           (inv && strncmp(err->msg, inv, strlen(inv)) == 0)
                       ? -1
                       : error_prefix(err, "--workload");
    }
    if (!a->tuner) {
        /* the live scheduler only, or Slurm watched: open on the view that shows it, not
         * on the tune view's "no tuning in this session" */
        a->view = a->ss ? VIEW_CLUSTER : VIEW_HOSTS;
        return 0;
    }
    a->pace_ms = o->pace_ms >= 0 ? o->pace_ms : a->sim ? 600 : 0;
    if (a->sim && !o->no_sched) {
        SimSchedOptions so;
        simsched_defaults(&so);
        so.policy = o->policy;
        so.jobs = o->sched_jobs;
        so.speed = o->sched_speed;
        so.seed = (uint64_t)spec->seed;
        so.catalogue_dir = o->catalogue_dir;
        a->ss = simsched_new(&so, err);
        if (!a->ss)
            return error_prefix(err, "the simulated scheduler (--policy, --sched-jobs)");
    }
    return 0;
}

void console_close_session(App *a, Session *s)
{
    editor_free(a->editor);
    suggestion_clear(&a->pred);
    simsched_free(a->ss); /* the live driver too, before the pool it uses */
    a->ss = NULL;
    liveslurm_free(a->live_slurm); /* after the driver, before the session's controller */
    a->live_slurm = NULL;
    hostdesk_free(a->desk); /* the pool stays the session's */
    a->desk = NULL;
    slurm_desk_free(a->slurm); /* before the session frees its controller */
    a->slurm = NULL;
    session_close(s); /* the tuner before the pool its runs use */
    a->tuner = NULL;
    a->pool = NULL;
    a->refused_hold = NULL;
    trials_free(&a->table);
    free(a->snap.hosts);
    free(a->snap.jobs);
    free(a->snap.grid);
}

/* The journal begins once the screen is ours (a console that never ran leaves none); a
 * resumed session's trials are in the tuner after it. Returns -1 only when it had to. */
int console_begin_journal(App *a, const ConsoleOptions *o, Error *err)
{
    Session *s = o->session;
    if (!s->with_journal || !a->tuner)
        return 0;
    tune_journal_set_quiet(s->journal, 1); /* a failed write is shown as a stopped session */
    Error jerr;
    if (session_journal_begin(s, &jerr) == 0) {
        a->table_stale = 1;
        a->journal = s->journal;
        return 0;
    }
    if (o->journal_required)
        return error_set(err, "--resume: %s", jerr.msg);
    snprintf(a->journal_note, sizeof a->journal_note, "no session journal: %s", jerr.msg);
    return 0;
}
