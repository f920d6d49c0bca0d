/* The console's settings file, $XDG_CONFIG_HOME/tunedeck/config.json (else
 * ~/.config/tunedeck/config.json): theme, plot style and key bindings. Read at start, written
 * atomically (temporary file, fsync, rename) when the operator changes a setting. */
#ifndef TUNEDECK_CONFIG_H
#define TUNEDECK_CONFIG_H

#include <stddef.h>

#include "core/base/error.h"

/* Actions whose key can be rebound, and their default keys. */
typedef enum {
    ACT_QUIT,
    ACT_HELP,
    ACT_FILTER,
    ACT_COMMAND,
    ACT_PAUSE,
    ACT_EDIT,
    ACT_SORT,
    ACT_REVERSE,
    ACT_VIEW_TUNE,
    ACT_VIEW_CLUSTER,
    ACT_VIEW_HOSTS,
    ACT_DROP, /* the override queued last taken out of the queue */
    ACT_COUNT
} KeyAction;

typedef struct {
    /* empty: not set. As long as the `:` line (App.input) less ":theme ": a path :theme
     * took was saved cut at 63 bytes, and the next start loaded another file. */
    char theme[128];
    char plot[16];
    char keys[ACT_COUNT]; /* the key of each action */
} ConsoleConfig;

void config_defaults(ConsoleConfig *c);
const char *config_action_name(KeyAction a);
/* The path to use; returns NULL when neither XDG_CONFIG_HOME nor HOME is set. */
const char *config_path(char *buf, size_t cap);
/* A missing file is the defaults (returns 0). A bad file: defaults, -1 and why. */
int config_load(const char *path, ConsoleConfig *c, Error *err);
int config_save(const char *path, const ConsoleConfig *c, Error *err);
/* The built-in key of an action. */
char config_default_key(KeyAction a);
/* The action a key press means under this configuration, or -1. */
int config_action_of(const ConsoleConfig *c, int key);

#endif
