/* Where a scheduler benchmark finds Pollux's measurements: the data folder of $TUNEDECK_HOME
 * when it is set (an installed tree), else of this source tree; and the catalogue read from it.
 * The folder's path is handed back because benchmarks read its workloads afterwards. */
#ifndef TUNEDECK_BENCHDATA_H
#define TUNEDECK_BENCHDATA_H

#include <stddef.h>

#include "core/sched/catalogue.h"

/* Writes the folder's path to dir (size bytes) and returns its catalogue; NULL after printing
 * "WHO: WHY" when the catalogue cannot be read. */
Catalogue *benchdata_catalogue(const char *who, char *dir, size_t size);

#endif
