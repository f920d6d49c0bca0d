/* Reads srun --label lines back per task; see srunlabel.h. */
#include <stdlib.h>
#include <string.h>

#include "remote/launch/srunlabel.h"

/* More tasks than any step has: a longer number is a task's own text, not srun's label. */
enum { LABEL_DIGITS = 7 };

long srunlabel_parse(const char *line, const char **text)
{
    *text = line;
    const char *p = line;
    while (*p == ' ')
        p++;
    size_t digits = strspn(p, "0123456789");
    if (digits == 0 || digits > LABEL_DIGITS || p[digits] != ':')
        return -1;
    /* "N: text"; an empty line is "N: ", or "N:" where a reader trimmed the space */
    if (p[digits + 1] != ' ' && p[digits + 1] != '\0')
        return -1;
    long task = strtol(p, NULL, 10);
    *text = p + digits + 1 + (p[digits + 1] == ' ');
    return task;
}

typedef struct {
    int stream;
    long task;
    char *data;
    size_t len;
} Piece;

struct SrunLines {
    size_t max_line;
    Piece *pieces; /* the tasks with a line under way: few, and none most of the time */
    size_t n, cap;
    char *out; /* the last joined line given out */
};

SrunLines *srunlines_new(size_t max_line)
{
    SrunLines *l = calloc(1, sizeof *l);
    if (l)
        l->max_line = max_line;
    return l;
}

void srunlines_free(SrunLines *l)
{
    if (!l)
        return;
    for (size_t i = 0; i < l->n; i++)
        free(l->pieces[i].data);
    free(l->pieces);
    free(l->out);
    free(l);
}

static Piece *find(SrunLines *l, int stream, long task)
{
    for (size_t i = 0; i < l->n; i++)
        if (l->pieces[i].stream == stream && l->pieces[i].task == task)
            return &l->pieces[i];
    return NULL;
}

/* Appends text to the task's line under way, starting one; NULL when out of memory. */
static Piece *extend(SrunLines *l, int stream, long task, const char *text, size_t len)
{
    Piece *p = find(l, stream, task);
    if (!p) {
        if (l->n == l->cap) {
            size_t cap = l->cap ? l->cap * 2 : 4;
            Piece *grown = realloc(l->pieces, cap * sizeof *grown);
            if (!grown)
                return NULL;
            l->pieces = grown;
            l->cap = cap;
        }
        p = &l->pieces[l->n++];
        *p = (Piece){stream, task, NULL, 0};
    }
    char *grown = realloc(p->data, p->len + len + 1);
    if (!grown)
        return NULL;
    p->data = grown;
    memcpy(p->data + p->len, text, len);
    p->len += len;
    p->data[p->len] = '\0';
    return p;
}

int srunlines_push(SrunLines *l, int stream, const char *line, long *task, const char **text)
{
    free(l->out);
    l->out = NULL;
    *task = srunlabel_parse(line, text);
    if (*task < 0)
        return 1;
    size_t len = strlen(*text);
    Piece *p = find(l, stream, *task);
    if (!p && len != SRUNLABEL_PIECE)
        return 1; /* the common case: a whole line in one message */
    if (!(p = extend(l, stream, *task, *text, len)))
        return 1; /* out of memory: this piece alone */
    if (len == SRUNLABEL_PIECE && p->len < l->max_line)
        return 0; /* a piece: slurmstepd cut the line here, its rest follows */
    /* the line's rest (or the bound reached): the line is whole; its slot is reused */
    l->out = p->data;
    *text = l->out;
    *p = l->pieces[--l->n];
    return 1;
}
