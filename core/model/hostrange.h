/* pdsh/ClusterShell-style host lists: "node[01-16,20]" expands to node01..node16, node20,
 * keeping zero padding; several bracket groups multiply out. An IPv6 address in brackets,
 * the whole pattern ("[fd00::1]"), is one host: the address, without them. */
#ifndef TUNEDECK_HOSTRANGE_H
#define TUNEDECK_HOSTRANGE_H

#include <stddef.h>

#include "core/base/error.h"

#define HOSTRANGE_MAX 100000
#define HOSTRANGE_MAX_BYTES (32 << 20) /* summed length of the names of one pattern */

/* On success *out is a malloc'd array of malloc'd names (free with hostrange_free). */
int hostrange_expand(const char *pattern, char ***out, size_t *n, Error *err);
void hostrange_free(char **names, size_t n);
/* Whether pattern[0..len) expands to name, without expanding it (no bound on its size):
 * 1 or 0; -1 with err when the pattern is not one. */
int hostrange_contains(const char *pattern, size_t len, const char *name, Error *err);

#endif
