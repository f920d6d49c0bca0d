/* What the session and the schedulers say, on the screen: tuner events in the log and the
 * trial table, the session's report and warning lines (drawn at once while the screen is up),
 * the live driver's lines, and the scheduler's new decisions. */
#include "tui/console_events.h"

#include "core/base/clock.h"
#include "tui/frame.h"
#include "tui/view.h"

/* Logs the scheduler's new decisions and refreshes what the cluster view shows. */
void console_sched_changed(App *a)
{
    const SchedState *st = simsched_state(a->ss);
    size_t n = sched_event_count(st);
    for (; a->ss_events_seen < n; a->ss_events_seen++) {
        const SchedEvent *ev = sched_event(st, a->ss_events_seen);
        if (ev->kind != SCHED_EV_RESIZE && ev->kind != SCHED_EV_STOP)
            continue; /* starts and finishes are in the timeline; the log keeps the costly ones */
        char text[160];
        simsched_event_text(a->ss, a->ss_events_seen, text, sizeof text);
        app_log(a, "sched: %s", text);
    }
    simsched_snapshot(a->ss, &a->snap);
    a->dirty = 1;
}

void console_on_tuner_event(void *ud, TunerEvent ev, const TrialRecord *rec)
{
    App *a = ud; /* the session's journal has it on disk already */
    if (ev == TUNER_EVENT_STARTED && a->pace_ms > 0) {
        /* The simulator answers at once: hold the next trial back so a person can watch. */
        tuner_set_paused(a->tuner, 1);
        a->next_trial_ms = clock_now_ms() + a->pace_ms;
    }
    if (ev == TUNER_EVENT_FINISHED) {
        const Observation *o = rec->obs;
        if (o->status == TRIAL_OK) /* an ok trial's reason is a note: a refused line */
            app_log(a, "trial %d%s: %.3f s/iteration%s%s%s", rec->trial,
                    rec->overridden ? " (override)" : "", o->time_s, o->reason[0] ? " (" : "",
                    o->reason, o->reason[0] ? ")" : "");
        else
            app_log(a, "trial %d%s: %s %s", rec->trial, rec->overridden ? " (override)" : "",
                    trial_status_name(o->status), o->reason);
        if (o->status != TRIAL_OK)
            slurm_trial_failed(a, o->reason);
        view_cluster_snapshot(a);
    }
    if (ev == TUNER_EVENT_CONVERGED) {
        app_log(a, "tuning stopped: %s", tuner_converged(a->tuner));
        app_message(a, 0, "tuning stopped: %s (:converge off or :budget N goes on)",
                    tuner_converged(a->tuner));
    }
    if (ev == TUNER_EVENT_DROPPED && rec->dropped_why) /* the log has it from the session */
        app_message(a, 1, "%s", rec->dropped_why);
    if (ev == TUNER_EVENT_QUEUED || ev == TUNER_EVENT_DROPPED || ev == TUNER_EVENT_FINISHED)
        a->queue_pred_stale = 1; /* the queue, or the model that predicts its rows, changed */
    a->table_stale = 1;
    a->dirty = 1;
}

/* Drawn at once: the console's own stops run on its loop (SessionSpec.stops_on_loop), but a
 * Slurm login node's pool is not on it, and a stop there still holds the screen for seconds:
 * it says what it waits for first. */
void console_log_line(void *ud, const char *line)
{
    App *a = ud;
    app_log(a, "%s", line);
    if (a->last_frame_ms) { /* the screen is up */
        frame_draw(a);
        a->last_frame_ms = clock_now_ms();
    }
}

/* A file's misspelt key (the session's on_warning): printed to stderr it would land under
 * the screen, so it goes to the log and the message line, which the frame shows. */
void console_warn_line(void *ud, const char *line)
{
    App *a = ud;
    app_message(a, 1, "%s", line);
    console_log_line(ud, line);
}

/* The live driver's lines (decisions, starts, checkpoints, deaths) go to the log pane. */
void console_live_log(void *ud, const char *line)
{
    app_log(ud, "live: %s", line);
}
