/* Plugin tables chosen by name (optimizers, launchers, policies): lookup, aliases and the
 * list of names for help and error messages, written once. */
#ifndef TUNEDECK_REGISTRY_H
#define TUNEDECK_REGISTRY_H

#include <stddef.h>

/* Another name for an entry: the seed's "precompute" for the policy "doubling". */
typedef struct {
    const char *alias;
    const char *name;
} RegistryAlias;

/* entries: NULL-terminated; each points to a struct whose first member is
 * `const char *name` (C11 6.7.2.1: a struct pointer converts to its first member's). */
typedef struct {
    const void *const *entries;
    const RegistryAlias *aliases; /* may be NULL; else ends with {NULL, NULL} */
} Registry;

/* The entry called `name` (or by one of its aliases), NULL when none or name is NULL. */
const void *registry_find(const Registry *r, const char *name);

size_t registry_count(const Registry *r);
/* The i-th name in table order, NULL past the end. */
const char *registry_name(const Registry *r, size_t i);

/* Writes the names in table order joined by ", ", then " (also: ALIAS, ...)" for the aliases
 * that name an entry, into buf (cap bytes, always terminated, cut when short); returns buf. */
char *registry_names(const Registry *r, char *buf, size_t cap);

#endif
