/* The console's options' defaults (console_options.h). */
#include "tui/console_options.h"

#include <string.h>

void console_defaults(ConsoleOptions *o)
{
    memset(o, 0, sizeof *o);
    o->spec.budget = 60;
    o->spec.seed = 1;
    o->spec.trial_timeout_s = 600;
    o->spec.keep_hosts = SESSION_KEEP_USED; /* the hosts view shows every host in use */
    o->spec.async_suggest = 1;              /* the screen stays live while the model thinks */
    o->pace_ms = -1;
    o->plot = NULL;  /* the config file's, else braille */
    o->theme = NULL; /* the config file's, else default */
    o->spec.optimizer = optimizer_find("bespoke") ? "bespoke" : "random";
    o->policy = "doubling";
    o->sched_jobs = 40;
    o->sched_speed = 60;
}
