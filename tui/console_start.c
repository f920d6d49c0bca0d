/* The console's start: its state with the settings file and the plot style read, then the
 * first frame's setup and the log's opening lines (the session, a resume's queued overrides,
 * the Slurm watch, the live scheduler). */
#include "tui/console_start.h"

#include <stdlib.h>

#include "core/base/plural.h"
#include "tui/console_events.h"
#include "tui/console_stops.h"
#include "tui/draw.h"
#include "tui/restored_note.h"
#include "tui/theme.h"
#include "tui/view.h"

/* The settings file and the plot style; NULL with err on a bad --plot. cerr, *config_bad:
 * what was wrong with the settings file (said once the screen is up). */
App *console_app_new(const ConsoleOptions *o, Error *cerr, int *config_bad, Error *err)
{
    App *a = calloc(1, sizeof *a);
    if (!a) {
        error_set(err, "out of memory");
        return NULL;
    }
    a->follow = 1;
    a->themes_dir = o->themes_dir;
    a->sort = TRIAL_COL_NUMBER;
    *config_bad = 0;
    if (config_path(a->config_file, sizeof a->config_file))
        *config_bad = a->config_bad = config_load(a->config_file, &a->config, cerr) < 0;
    else
        config_defaults(&a->config);
    const char *plot = o->plot ? o->plot : a->config.plot[0] ? a->config.plot : "braille";
    a->plot_style = plot_style_find(plot);
    if (!a->plot_style && !o->plot) {
        a->plot_style = plot_style_find("braille");
        *config_bad = a->config_bad = 1;
        error_set(cerr, "%s: plot: expected braille, block or ascii, found '%s'", a->config_file,
                  plot);
    }
    if (!a->plot_style) {
        free(a);
        error_set(err, "--plot: unknown style '%s': expected braille, block or ascii", o->plot);
        return NULL;
    }
    /* A --theme that does not load is refused as a bad --plot is: the console drew the
     * default's colours under a message the operator may never read. (The config file's
     * theme is not: said on screen, as any other settings' error.) */
    Theme t;
    Error terr;
    if (o->theme && theme_load(o->themes_dir, o->theme, &t, &terr) < 0) {
        char names[256];
        theme_names(o->themes_dir, names, sizeof names);
        free(a);
        error_set(err, "--theme '%s': %s (expected a theme name: %s, or a file's path)", o->theme,
                  terr.msg, names);
        return NULL;
    }
    return a;
}

/* The first frame's setup: glyphs, theme, and the log's opening lines. */
void console_app_start(App *a, const ConsoleOptions *o, int config_bad, const Error *cerr)
{
    draw_init(o->ascii); /* without Unicode the plot is drawn in ascii (plot_style_shown) */
    app_set_theme(a, o->theme ? o->theme : a->config.theme[0] ? a->config.theme : "default");
    if (config_bad)
        app_message(a, 1, "settings ignored: %s", cerr->msg);
    if (a->journal_note[0])
        app_log(a, "%s", a->journal_note);
    console_stop_interrupted(a, o->session); /* before the first trial */
    view_cluster_snapshot(a);
    if (a->ss)
        console_sched_changed(a);
    if (a->tuner)
        app_log(a, "session: %s on %s, optimizer %s, budget %d", a->job->name,
                a->sim ? simcluster_spec(a->sim) : a->cluster->name, tuner_optimizer_name(a->tuner),
                tuner_budget(a->tuner));
    size_t queued = a->tuner ? tuner_overrides(a->tuner) : 0;
    if (queued) { /* a resume's: the journal kept the queue */
        char note[512];
        restored_note_format(note, sizeof note, queued, tuner_override_trial(a->tuner, 0),
                             tuner_budget(a->tuner), a->config.keys[ACT_DROP]);
        app_log(a, "%s", note);
    }
    if (a->slurm)
        app_log(a,
                "slurm: watching %s%s%s through the controller (%s); the hosts view (3) "
                "shows the nodes and the queue",
                a->cluster->name, a->slurm_panel.partition[0] ? ", partition " : "",
                a->slurm_panel.partition, a->slurm_panel.where);
    if (a->ss && simsched_live(a->ss))
        app_log(a, "live scheduler: %s on %s (%zu machine%s), policy %s, time x%g", o->workload,
                a->cluster->name, a->cluster->n_machines,
                plural_s((long long)a->cluster->n_machines), o->policy, o->sched_speed);
    a->queue_pred_stale = 1; /* a resume's queue is restored without an event */
    a->dirty = 1;
}
