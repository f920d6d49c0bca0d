/* A growing list of owned strings (core/base/strlist.h). */
#include "core/base/strlist.h"

#include <stdlib.h>
#include <string.h>

int strlist_add(StrList *l, const char *s)
{
    if (l->n == l->cap) {
        size_t nc = l->cap ? l->cap * 2 : 8;
        char **grown = realloc(l->v, nc * sizeof *grown);
        if (!grown)
            return -1;
        l->v = grown;
        l->cap = nc;
    }
    if (!(l->v[l->n] = strdup(s)))
        return -1;
    l->n++;
    return 0;
}

int strlist_has(const StrList *l, const char *s)
{
    for (size_t i = 0; i < l->n; i++)
        if (strcmp(l->v[i], s) == 0)
            return 1;
    return 0;
}

void strlist_remove(StrList *l, const char *s)
{
    size_t kept = 0;
    for (size_t i = 0; i < l->n; i++) {
        if (strcmp(l->v[i], s) == 0)
            free(l->v[i]);
        else
            l->v[kept++] = l->v[i];
    }
    l->n = kept;
}

void strlist_free(StrList *l)
{
    for (size_t i = 0; i < l->n; i++)
        free(l->v[i]);
    free(l->v);
    l->v = NULL;
    l->n = l->cap = 0;
}
