/* A growing list of owned strings (ids, names said once): added one at a time, looked up,
 * freed together. Its zero value is an empty list. */
#ifndef TUNEDECK_STRLIST_H
#define TUNEDECK_STRLIST_H

#include <stddef.h>

typedef struct {
    char **v;
    size_t n, cap;
} StrList;

/* Appends a copy of s; -1 when out of memory (the list is left as it was). */
int strlist_add(StrList *l, const char *s);
/* 1 when s is in the list (whole strings compared, not prefixes). */
int strlist_has(const StrList *l, const char *s);
/* Takes s out of the list (every copy of it); the others keep their order. */
void strlist_remove(StrList *l, const char *s);
/* Frees every string and the list, and leaves it empty (ready for reuse). */
void strlist_free(StrList *l);

#endif
