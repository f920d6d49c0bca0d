/* Every path tunedeck decides — where its data lives, where session journals go — decided
 * once by main from the environment and passed down to the commands, the console, the
 * catalogue and the journal (nothing below cmd/ reads the environment for a path). */
#ifndef TUNEDECK_PATHS_H
#define TUNEDECK_PATHS_H

#include "core/base/error.h"

/* Resolves them all; called once by main. The data home, in order: $TUNEDECK_HOME;
 * PREFIX/share/tunedeck beside an installed binary (found from /proc/self/exe, so a DESTDIR
 * tree works where it lies); the source tree the binary was built from. It is exported as
 * TUNEDECK_HOME for the commands tunedeck starts (the example inventories' trial commands).
 * The sessions folder: journal_dir over $TUNEDECK_STATE_DIR, $XDG_STATE_HOME and $HOME. */
void paths_resolve(void);

/* The folder holding data/, themes/ and examples/. */
const char *paths_data_home(void);

/* The Pollux job catalogue under it (data/pollux-osdi21), and the console's themes. */
const char *paths_catalogue(void);
const char *paths_themes(void);

/* The session journals' folder; NULL with err when the environment names none. */
const char *paths_sessions(Error *err);

#endif
