/* Name lookup over plugin tables whose entries begin with their name. */
#include "core/base/registry.h"

#include <stdio.h>
#include <string.h>

static const char *name_of(const void *entry)
{
    return *(const char *const *)entry;
}

const void *registry_find(const Registry *r, const char *name)
{
    if (!name)
        return NULL;
    for (const void *const *e = r->entries; *e; e++)
        if (strcmp(name_of(*e), name) == 0)
            return *e;
    for (const RegistryAlias *a = r->aliases; a && a->alias; a++)
        if (strcmp(a->alias, name) == 0)
            return registry_find(&(Registry){r->entries, NULL}, a->name);
    return NULL;
}

size_t registry_count(const Registry *r)
{
    size_t n = 0;
    while (r->entries[n])
        n++;
    return n;
}

const char *registry_name(const Registry *r, size_t i)
{
    return i < registry_count(r) ? name_of(r->entries[i]) : NULL;
}

/* Appends to buf at *len; stops quietly when full (buf stays terminated). */
static void append(char *buf, size_t cap, size_t *len, const char *a, const char *b)
{
    if (*len >= cap)
        return;
    int k = snprintf(buf + *len, cap - *len, "%s%s", a, b);
    if (k > 0)
        *len += (size_t)k;
}

char *registry_names(const Registry *r, char *buf, size_t cap)
{
    if (!cap)
        return buf;
    buf[0] = '\0';
    size_t len = 0;
    for (const void *const *e = r->entries; *e; e++)
        append(buf, cap, &len, e == r->entries ? "" : ", ", name_of(*e));
    /* An alias is accepted, so a list of what is expected names it too. */
    int listed = 0;
    for (const RegistryAlias *a = r->aliases; a && a->alias; a++) {
        if (!registry_find(&(Registry){r->entries, NULL}, a->name))
            continue;
        append(buf, cap, &len, listed++ ? ", " : " (also: ", a->alias);
    }
    if (listed)
        append(buf, cap, &len, ")", "");
    return buf;
}
