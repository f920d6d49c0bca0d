/* Host list expansion in the pdsh/ClusterShell bracket syntax, with precise errors.
 * The pattern is read into segments first, the number and total size of the names are
 * checked against the bounds, and only then is each name built, once: a short pattern can
 * never make it spend minutes or gigabytes (found by tests/fuzz/fuzz_hostrange.c). */
#include "core/model/hostrange.h"

#include <arpa/inet.h>
#include <ctype.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

typedef struct {
    char **items; /* a literal is one item; a bracket group one item per number */
    size_t n;
    size_t bytes; /* summed length of the items */
} Segment;

static void segments_free(Segment *segs, size_t n)
{
    for (size_t i = 0; i < n; i++)
        hostrange_free(segs[i].items, segs[i].n);
    free(segs);
}

static int parse_number(const char *s, size_t len, long *value, const char *pattern, Error *err)
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

static int push(Segment *g, const char *text, size_t len, const char *pattern, Error *err)
{
    char *copy = strndup(text, len);
    if (copy && (g->n & (g->n - 1)) == 0) { /* capacity doubles at each power of two */
        char **grown = realloc(g->items, (g->n ? 2 * g->n : 1) * sizeof *grown);
        if (grown)
            g->items = grown;
        else
            free(copy), copy = NULL;
    }
    if (!copy)
        return error_no_memory(err, "host range '%s'", pattern);
    g->items[g->n++] = copy;
    g->bytes += len;
    return 0;
}

/* The advice every misplaced IPv6 bracket gets: what is accepted, and where a port goes. */
#define IPV6_WHOLE                                                                                 \
    "an IPv6 address in brackets must be the whole host, as in [fd00::1] (or bare, fd00::1; "      \
    "a port goes in the machine's 'port' field, a user in its 'user' field)"

/* "[fd00::1]", the whole pattern: an IPv6 address in brackets, as ssh_config and URLs write
 * one, is one host, the address itself, without them: OpenSSH's ssh cannot resolve
 * "[::1]", and MASTER_ADDR and the hand-stop advice take the bare form, which the inventory
 * accepted already (libssh strips the brackets; its known_hosts key is "[::1]:port" either
 * way). 1 with the address in addr, 0 when the pattern is not one (a bracket group without
 * ':' is a range), -1 when it is meant as one but is not an address. */
static int ipv6_whole(const char *pattern, size_t plen, const char *shown, char *addr, size_t cap,
                      Error *err)
{
    if (plen < 2 || pattern[0] != '[')
        return 0;
    const char *close = memchr(pattern, ']', plen);
    size_t blen = close ? (size_t)(close - pattern - 1) : plen - 1;
    if (!memchr(pattern + 1, ':', blen))
        return 0;
    if (!close || close != pattern + plen - 1)
        return 0; /* parse_segments refuses it, with the advice */
    const char *zone = memchr(pattern + 1, '%', blen);
    if (zone)
        return error_set(err,
                         "host range '%s': a zone index ('%.*s') is not accepted: give a "
                         "global or unique-local address, or a host name",
                         shown, (int)(close - zone), zone);
    struct in6_addr a;
    if (blen < cap) {
        memcpy(addr, pattern + 1, blen);
        addr[blen] = 0;
    }
    if (blen >= cap || inet_pton(AF_INET6, addr, &a) != 1)
        return error_set(err,
                         "host range '%s': expected an IPv6 address in the brackets, as in "
                         "[fd00::1]",
                         shown);
    return 1;
}

/* Expands one bracket body "01-16,20" into its strings (at most `room` of them). */
static int expand_group(const char *body, size_t len, const char *pattern, size_t room,
                        Segment *out, Error *err)
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
            return -1;
        hi = lo;
        if (dash && parse_number(dash + 1, item_len - lo_len - 1, &hi, pattern, err) < 0)
            return -1;
        if (hi < lo)
            return error_set(err, "host range '%s': range %ld-%ld runs backwards", pattern, lo, hi);
        if ((size_t)(hi - lo + 1) > room - out->n)
            return error_set(err, "host range '%s': expected at most %d hosts", pattern,
                             HOSTRANGE_MAX);
        int width = (lo_len > 1 && item[0] == '0') ? (int)lo_len : 0;
        for (long v = lo; v <= hi; v++) {
            char buf[32];
            int n = snprintf(buf, sizeof buf, "%0*ld", width, v);
            if (push(out, buf, (size_t)n, pattern, err) < 0)
                return -1;
        }
        start = end + 1;
    }
    return 0;
}

/* Splits the pattern into literal and bracket segments, keeping the name count within
 * HOSTRANGE_MAX as it goes. */
static int parse_segments(const char *pattern, const char *shown, Segment **out, size_t *n_out,
                          size_t *count, Error *err)
{
    Segment *segs = NULL;
    size_t n = 0;
    *count = 1;
    const char *p = pattern;
    while (*p) {
        Segment *grown = realloc(segs, (n + 1) * sizeof *grown);
        if (!grown) {
            segments_free(segs, n);
            return error_no_memory(err, "host range '%s'", shown);
        }
        segs = grown;
        Segment *s = &segs[n++];
        memset(s, 0, sizeof *s);
        int rc = 0;
        if (*p == ']') {
            rc = error_set(err, "host range '%s': ']' without '['", shown);
        } else if (*p == '[') {
            const char *close = strchr(p, ']');
            const char *nested = strchr(p + 1, '[');
            if (!close || (nested && nested < close)) {
                rc = error_set(err, "host range '%s': '[' without its ']'", shown);
            } else if (memchr(p + 1, ':', (size_t)(close - p - 1))) {
                rc = error_set(err, "host range '%s': " IPV6_WHOLE, shown);
            } else {
                rc = expand_group(p + 1, (size_t)(close - p - 1), shown, HOSTRANGE_MAX / *count, s,
                                  err);
                p = close + 1;
            }
        } else {
            size_t len = strcspn(p, "[]");
            rc = push(s, p, len, shown, err);
            p += len;
        }
        if (rc < 0) {
            segments_free(segs, n);
            return -1;
        }
        *count *= s->n; /* expand_group kept it within HOSTRANGE_MAX */
    }
    *out = segs;
    *n_out = n;
    return 0;
}

int hostrange_expand(const char *pattern, char ***out, size_t *n, Error *err)
{
    *out = NULL;
    *n = 0;
    if (!pattern || !*pattern)
        return error_set(err, "host range: expected a host name or pattern, found an empty string");
    /* Messages quote the pattern's start only, so that the reason always fits. */
    char shown[72];
    if (strlen(pattern) < sizeof shown)
        snprintf(shown, sizeof shown, "%s", pattern);
    else
        snprintf(shown, sizeof shown, "%.60s...", pattern);
    char addr[INET6_ADDRSTRLEN + 16];
    int v6 = ipv6_whole(pattern, strlen(pattern), shown, addr, sizeof addr, err);
    if (v6 < 0)
        return -1;
    if (v6) {
        if (!(*out = calloc(1, sizeof **out)) || !((*out)[0] = strdup(addr))) {
            free(*out);
            *out = NULL;
            return error_no_memory(err, "host range '%s'", shown);
        }
        *n = 1;
        return 0;
    }
    Segment *segs = NULL;
    size_t n_segs = 0, count = 0;
    if (parse_segments(pattern, shown, &segs, &n_segs, &count, err) < 0)
        return -1;
    /* Every item of segment i appears in count / n_i names: the total size, before building. */
    double bytes = 0;
    for (size_t i = 0; i < n_segs; i++)
        bytes += (double)segs[i].bytes * (double)(count / segs[i].n) + (i == 0 ? count : 0);
    if (bytes > HOSTRANGE_MAX_BYTES) {
        segments_free(segs, n_segs);
        return error_set(err,
                         "host range '%s': expected at most %d bytes of host names, found %.0f",
                         shown, HOSTRANGE_MAX_BYTES, bytes);
    }
    char **names = calloc(count, sizeof *names);
    size_t *pick = calloc(n_segs ? n_segs : 1, sizeof *pick);
    if (!names || !pick) {
        free(names);
        free(pick);
        segments_free(segs, n_segs);
        return error_no_memory(err, "host range '%s'", shown);
    }
    /* Odometer over the groups, the last one turning fastest: r[1-2]n[1-2] gives r1n1, r1n2,
     * r2n1, r2n2. */
    for (size_t k = 0; k < count; k++) {
        size_t len = 0;
        for (size_t i = 0; i < n_segs; i++)
            len += strlen(segs[i].items[pick[i]]);
        char *name = malloc(len + 1);
        if (!name) {
            hostrange_free(names, k);
            free(pick);
            segments_free(segs, n_segs);
            return error_no_memory(err, "host range '%s'", shown);
        }
        size_t at = 0;
        for (size_t i = 0; i < n_segs; i++) {
            size_t l = strlen(segs[i].items[pick[i]]);
            memcpy(name + at, segs[i].items[pick[i]], l);
            at += l;
        }
        name[at] = 0;
        names[k] = name;
        for (size_t i = n_segs; i-- > 0;) {
            if (++pick[i] < segs[i].n)
                break;
            pick[i] = 0;
        }
    }
    free(pick);
    segments_free(segs, n_segs);
    *out = names;
    *n = count;
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

/* Whether the digits name[0..len) are a number of the bracket body "01-16,20", written as
 * expansion writes it (zero padding as the range's low end has it); -1 on a bad body. */
static int group_has(const char *body, size_t blen, const char *digits, size_t len,
                     const char *pattern, Error *err)
{
    long v = 0;
    for (size_t i = 0; i < len; i++)
        v = v * 10 + (digits[i] - '0');
    size_t plain = 1;
    for (long x = v; x >= 10; x /= 10)
        plain++;
    int found = 0;
    for (size_t start = 0; start <= blen;) {
        size_t end = start;
        while (end < blen && body[end] != ',')
            end++;
        const char *item = body + start;
        size_t item_len = end - start;
        const char *dash = memchr(item, '-', item_len);
        size_t lo_len = dash ? (size_t)(dash - item) : item_len;
        long lo, hi;
        if (parse_number(item, lo_len, &lo, pattern, err) < 0)
            return -1;
        hi = lo;
        if (dash && parse_number(dash + 1, item_len - lo_len - 1, &hi, pattern, err) < 0)
            return -1;
        if (hi < lo) /* as expansion refuses it, so a list is never read as holding nothing */
            return error_set(err, "host range '%s': range %ld-%ld runs backwards", pattern, lo, hi);
        size_t width = (lo_len > 1 && item[0] == '0') ? lo_len : 0;
        found |= v >= lo && v <= hi && len == (plain > width ? plain : width);
        start = end + 1;
    }
    return found;
}

int hostrange_contains(const char *pattern, size_t plen, const char *name, Error *err)
{
    char shown[72];
    snprintf(shown, sizeof shown, "%.*s%s", (int)(plen < 60 ? plen : 60), pattern,
             plen < 60 ? "" : "...");
    if (!plen)
        return error_set(err, "host range: expected a host name or pattern, found an empty string");
    char addr[INET6_ADDRSTRLEN + 16];
    int v6 = ipv6_whole(pattern, plen, shown, addr, sizeof addr, err);
    if (v6)
        return v6 < 0 ? -1 : strcmp(addr, name) == 0;
    size_t nlen = strlen(name);
    /* at[k]: the name's first k bytes match the pattern read so far; a bracket group may
     * match 1 to 9 digits, so several k may hold at once (no backtracking: linear) */
    unsigned char *at = calloc(nlen + 1, 1), *next = calloc(nlen + 1, 1);
    if (!at || !next) {
        free(at), free(next);
        return error_no_memory(err, "host range '%s'", shown);
    }
    at[0] = 1;
    int rc = 0;
    for (size_t p = 0; p < plen && rc == 0;) {
        memset(next, 0, nlen + 1);
        if (pattern[p] == ']') {
            rc = error_set(err, "host range '%s': ']' without '['", shown);
        } else if (pattern[p] == '[') {
            const char *close = memchr(pattern + p, ']', plen - p);
            const char *nested = memchr(pattern + p + 1, '[', plen - p - 1);
            if (!close || (nested && nested < close)) {
                rc = error_set(err, "host range '%s': '[' without its ']'", shown);
                break;
            }
            const char *body = pattern + p + 1;
            size_t blen = (size_t)(close - body);
            if (memchr(body, ':', blen)) {
                rc = error_set(err, "host range '%s': " IPV6_WHOLE, shown);
                break;
            }
            if (!blen) {
                rc = error_set(
                    err, "host range '%s': empty brackets: expected numbers like [1-4,7]", shown);
                break;
            }
            if (group_has(body, blen, "0", 1, shown, err) < 0) /* a bad body is an error */
                rc = -1;
            for (size_t k = 0; k < nlen && rc == 0; k++)
                for (size_t l = 1;
                     at[k] && l <= 9 && k + l <= nlen && isdigit((unsigned char)name[k + l - 1]);
                     l++)
                    if (group_has(body, blen, name + k, l, shown, err) > 0)
                        next[k + l] = 1;
            p = (size_t)(close - pattern) + 1;
        } else {
            size_t len = 0;
            while (p + len < plen && pattern[p + len] != '[' && pattern[p + len] != ']')
                len++;
            for (size_t k = 0; k + len <= nlen; k++)
                if (at[k] && memcmp(name + k, pattern + p, len) == 0)
                    next[k + len] = 1;
            p += len;
        }
        unsigned char *t = at;
        at = next, next = t;
    }
    int found = rc < 0 ? -1 : at[nlen];
    free(at), free(next);
    return found;
}
