/* Host list expansion in the pdsh/ClusterShell bracket syntax, with precise errors. */
#include "core/hostrange.h"

#include <ctype.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

typedef struct {
    char **items;
    size_t n;
} List;

static void list_free(List *l)
{
    hostrange_free(l->items, l->n);
    l->items = NULL;
    l->n = 0;
}

/* Every current item gets each suffix appended: the cartesian product. */
static int list_product(List *l, char **suffixes, size_t n_suffixes, Error *err,
                        const char *pattern)
{
    if (l->n * n_suffixes > HOSTRANGE_MAX)
        return error_set(err, "host range '%s': expected at most %d hosts", pattern,
                         HOSTRANGE_MAX);
    size_t total = l->n * n_suffixes;
    char **next = calloc(total > 0 ? total : 1, sizeof *next);
    if (!next)
        return error_set(err, "host range '%s': out of memory", pattern);
    size_t k = 0;
    for (size_t i = 0; i < l->n; i++) {
        for (size_t j = 0; j < n_suffixes; j++) {
            size_t a = strlen(l->items[i]), b = strlen(suffixes[j]);
            next[k] = malloc(a + b + 1);
            if (!next[k]) {
                hostrange_free(next, k);
                return error_set(err, "host range '%s': out of memory", pattern);
            }
            memcpy(next[k], l->items[i], a);
            memcpy(next[k] + a, suffixes[j], b + 1);
            k++;
        }
    }
    hostrange_free(l->items, l->n);
    l->items = next;
    l->n = k;
    return 0;
}

static int parse_number(const char *s, size_t len, long *value, const char *pattern,
                        Error *err)
{
    if (len == 0 || len > 9)
        return error_set(err, "host range '%s': expected a number of 1 to 9 digits in brackets",
                         pattern);
    long v = 0;
    for (size_t i = 0; i < len; i++) {
        if (!isdigit((unsigned char)s[i]))
            return error_set(err, "host range '%s': expected digits in brackets, found '%c'",
                             pattern, s[i]);
        v = v * 10 + (s[i] - '0');
    }
    *value = v;
    return 0;
}

/* Expands one bracket body "01-16,20" into its strings. */
static int expand_group(const char *body, size_t len, const char *pattern, List *out,
                        Error *err)
{
    if (len == 0)
        return error_set(err, "host range '%s': empty brackets: expected numbers like [1-4,7]",
                         pattern);
    size_t start = 0;
    while (start <= len) {
        size_t end = start;
        while (end < len && body[end] != ',')
            end++;
        const char *item = body + start;
        size_t item_len = end - start;
        const char *dash = memchr(item, '-', item_len);
        long lo, hi;
        size_t lo_len = dash ? (size_t)(dash - item) : item_len;
        if (parse_number(item, lo_len, &lo, pattern, err) < 0)
            goto fail;
        hi = lo;
        if (dash && parse_number(dash + 1, item_len - lo_len - 1, &hi, pattern, err) < 0)
            goto fail;
        if (hi < lo) {
            error_set(err, "host range '%s': range %ld-%ld runs backwards", pattern, lo, hi);
            goto fail;
        }
        if ((size_t)(hi - lo + 1) + out->n > HOSTRANGE_MAX) {
            error_set(err, "host range '%s': expected at most %d hosts", pattern,
                      HOSTRANGE_MAX);
            goto fail;
        }
        int width = (lo_len > 1 && item[0] == '0') ? (int)lo_len : 0;
        char **grown = realloc(out->items, (out->n + (size_t)(hi - lo + 1)) * sizeof *grown);
        if (!grown) {
            error_set(err, "host range '%s': out of memory", pattern);
            goto fail;
        }
        out->items = grown;
        for (long v = lo; v <= hi; v++) {
            char buf[32];
            snprintf(buf, sizeof buf, "%0*ld", width, v);
            out->items[out->n++] = strdup(buf);
        }
        start = end + 1;
    }
    return 0;
fail:
    list_free(out);
    return -1;
}

int hostrange_expand(const char *pattern, char ***out, size_t *n, Error *err)
{
    *out = NULL;
    *n = 0;
    if (!pattern || !*pattern)
        return error_set(err, "host range: expected a host name or pattern, found an empty string");
    List l = {calloc(1, sizeof(char *)), 1};
    if (!l.items)
        return error_set(err, "host range '%s': out of memory", pattern);
    l.items[0] = strdup("");
    const char *p = pattern;
    while (*p) {
        if (*p == ']') {
            list_free(&l);
            return error_set(err, "host range '%s': ']' without '['", pattern);
        }
        if (*p == '[') {
            const char *close = strchr(p, ']');
            const char *nested = strchr(p + 1, '[');
            if (!close || (nested && nested < close)) {
                list_free(&l);
                return error_set(err, "host range '%s': '[' without its ']'", pattern);
            }
            List group = {NULL, 0};
            if (expand_group(p + 1, (size_t)(close - p - 1), pattern, &group, err) < 0 ||
                list_product(&l, group.items, group.n, err, pattern) < 0) {
                list_free(&group);
                list_free(&l);
                return -1;
            }
            list_free(&group);
            p = close + 1;
            continue;
        }
        size_t len = strcspn(p, "[]");
        char *text = strndup(p, len);
        int rc = list_product(&l, &text, 1, err, pattern);
        free(text);
        if (rc < 0) {
            list_free(&l);
            return -1;
        }
        p += len;
    }
    *out = l.items;
    *n = l.n;
    return 0;
}

void hostrange_free(char **names, size_t n)
{
    if (!names)
        return;
    for (size_t i = 0; i < n; i++)
        free(names[i]);
    free(names);
}
