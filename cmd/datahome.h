/* Where tunedeck's data, themes and examples live: decided once by main, passed down to
 * the commands, the console and the catalogue (nothing below cmd/ reads the environment
 * for it). */
#ifndef TUNEDECK_DATAHOME_H
#define TUNEDECK_DATAHOME_H

/* Resolves the data home, in order: $TUNEDECK_HOME; PREFIX/share/tunedeck beside an
 * installed binary (found from /proc/self/exe, so a DESTDIR tree works where it lies);
 * the source tree the binary was built from. Called once by main. */
void datahome_resolve(void);

/* The folder holding data/, themes/ and examples/ (datahome_resolve must have run). */
const char *datahome(void);

/* The Pollux job catalogue under it (data/pollux-osdi21), and the console's themes. */
const char *datahome_catalogue(void);
const char *datahome_themes(void);

#endif
