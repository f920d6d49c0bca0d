/* The help overlay's line breaking: rows end between a list's items, a group that fits a row
 * stays on one, and the rows are as even as their count allows (a list's last item is no
 * lone word under full rows); a sentence too wide for a row fills each row it breaks. */
#include "tui/helpwrap.h"

#include <limits.h>
#include <string.h>

/* What follows a piece of the text: the end of a group ("; " or the text's end), of an item
 * (", "), or of a word inside an item too wide for a row. */
typedef enum { AFTER_WORD, AFTER_ITEM, AFTER_GROUP } After;

typedef struct {
    int start, end; /* bytes [start, end) of the text, no spaces at either end */
    After after;
    int group; /* index of its group */
} Atom;

/* Enough for any help text: one atom a byte of a 1024-byte text. */
enum { MAX_ATOMS = 1024 };

/* Appends the item [start, end) as one atom, or, wider than `fits` (its row's room), as its
 * words (a word wider than room in pieces of room); returns the atom count. */
static int add_item(const char *t, int start, int end, After after, int group, int fits,
                    int room, Atom *a, int n)
{
    if (end - start <= fits) {
        if (n < MAX_ATOMS)
            a[n++] = (Atom){start, end, after, group};
        return n;
    }
    for (int s = start; s < end && n < MAX_ATOMS;) {
        int e = s;
        while (e < end && t[e] != ' ' && e - s < room)
            e++;
        int last = e >= end;
        a[n++] = (Atom){s, e, last ? after : AFTER_WORD, group};
        s = e;
        while (s < end && t[s] == ' ')
            s++;
    }
    return n;
}

/* The text's atoms: items split at ", " and "; " (the separator's mark ends the item). The
 * first item, leading spaces and all, is measured against the first row's room. */
static int atomize(const char *t, int first_room, int room, Atom *a)
{
    int len = (int)strlen(t), n = 0, group = 0;
    for (int s = 0; s < len;) {
        int e = s;
        while (e < len && !((t[e] == ',' || t[e] == ';') && t[e + 1] == ' '))
            e++;
        After after = e >= len || t[e] == ';' ? AFTER_GROUP : AFTER_ITEM;
        int end = e < len ? e + 1 : len;
        while (end > s && t[end - 1] == ' ')
            end--;
        if (end > s)
            n = add_item(t, s, end, after, group, s == 0 ? first_room : room, room, a, n);
        if (after == AFTER_GROUP)
            group++;
        s = end < len ? end + 1 : len;
        while (s < len && t[s] == ' ')
            s++;
    }
    return n;
}

int help_wrap(const char *text, int first_room, int room, HelpWrapRow *rows, int max)
{
    static Atom a[MAX_ATOMS];
    static int group_w[MAX_ATOMS], count[MAX_ATOMS + 1], next[MAX_ATOMS + 1];
    static long long blank[MAX_ATOMS + 1];
    if (room < 1)
        room = 1;
    if (first_room < room)
        first_room = room;
    int n = atomize(text, first_room, room, a);
    if (n == 0) {
        if (max > 0)
            rows[0] = (HelpWrapRow){0, 0};
        return 1;
    }
    /* A group's width, to know whether it fits a row (the first from the text's start,
     * leading spaces and all, in the first row's room). */
    for (int i = 0, g0 = 0; i < n; i++) {
        if (i == 0 || a[i].group != a[i - 1].group)
            g0 = i;
        for (int k = g0; k <= i; k++)
            group_w[k] = a[i].end - (g0 == 0 ? 0 : a[g0].start);
    }
    /* From the end: the best rows for the atoms from i on, a row starting at atom i. */
    count[n] = 0;
    blank[n] = 0;
    for (int i = n - 1; i >= 0; i--) {
        int room_i = i == 0 ? first_room : room, from = i == 0 ? 0 : a[i].start;
        count[i] = INT_MAX;
        for (int j = i; j < n; j++) {
            int w = a[j].end - from;
            if (w > room_i && j > i)
                break;
            int fits = group_w[j] <= (a[j].group == a[0].group ? first_room : room);
            if (j < n - 1 && a[j].after != AFTER_GROUP && fits)
                continue; /* inside a group that fits a row */
            if (a[j].after == AFTER_WORD && j + 1 < n && a[j + 1].end - from <= room_i)
                continue; /* inside an item its row fills as far as it goes, as prose does */
            if (count[j + 1] == INT_MAX)
                continue;
            long long left = w > room_i ? 0 : room_i - w;
            int c = 1 + count[j + 1];
            long long b = left * left + blank[j + 1];
            if (c < count[i] || (c == count[i] && b < blank[i]))
                count[i] = c, blank[i] = b, next[i] = j + 1;
        }
        if (count[i] == INT_MAX) { /* a row starting inside a group no layout breaks */
            count[i] = 1 + count[i + 1];
            blank[i] = 0;
            next[i] = i + 1;
        }
    }
    int made = 0;
    for (int i = 0; i < n && made < HELP_WRAP_MAX_ROWS; i = next[i], made++) {
        int from = i == 0 ? 0 : a[i].start;
        if (made < max)
            rows[made] = (HelpWrapRow){from, a[next[i] - 1].end - from};
    }
    return made;
}
