/* A strict JSON checker over one journal line that allocates nothing: it answers "certainly
 * valid" only inside a subset of what cJSON and the duplicate-key check accept, and "not
 * sure" elsewhere, so that a reader of hundreds of journals (`tunedeck sessions`) parses
 * whole only the lines it cannot vouch for. */
#include "core/journal/journal_skim.h"

#include <string.h>

enum {
    SKIM_MAX_DEPTH = 64,   /* cJSON allows 1000; the journal nests a few levels */
    SKIM_MAX_KEYS = 64,    /* per object: pairs compared for a key twice */
    SKIM_MAX_NUMBER = 60,  /* cJSON reads at most 63 characters of a number */
    SKIM_MAX_WANTED = 24
};

typedef enum { V_STRING, V_ESCAPED, V_NUMBER, V_TRUE, V_FALSE, V_NULL, V_CONTAINER } ValueKind;

typedef struct {
    const char *start;
    size_t len; /* a string's without its quotes */
    ValueKind kind;
} Span;

typedef struct {
    const char *p, *end;
    const char *const *keys;
    size_t n_keys;
    Span wanted[SKIM_MAX_WANTED]; /* keys[i]'s value at the top level; len 0, start NULL: none */
    Span event;
} Skim;

static void blanks(Skim *s)
{
    while (s->p < s->end && (*s->p == ' ' || *s->p == '\t' || *s->p == '\r' || *s->p == '\n'))
        s->p++;
}

/* A string at s->p: 1 with its span (without quotes), *escaped when it holds an escape. A \u
 * escape (cJSON refuses some: a lone surrogate) and a control byte are "not sure". */
static int string(Skim *s, Span *out, int *escaped)
{
    if (s->p >= s->end || *s->p != '"')
        return 0;
    const char *start = ++s->p;
    *escaped = 0;
    while (s->p < s->end) {
        unsigned char c = (unsigned char)*s->p;
        if (c == '"') {
            out->start = start;
            out->len = (size_t)(s->p - start);
            s->p++;
            return 1;
        }
        if (c < 0x20)
            return 0;
        if (c == '\\') {
            if (s->p + 1 >= s->end || !strchr("\"\\/bfnrt", s->p[1]) || s->p[1] == 0)
                return 0;
            *escaped = 1;
            s->p += 2;
            continue;
        }
        s->p++;
    }
    return 0;
}

static int digits(Skim *s)
{
    const char *from = s->p;
    while (s->p < s->end && *s->p >= '0' && *s->p <= '9')
        s->p++;
    return s->p > from;
}

/* RFC 8259's number: cJSON reads the same characters and strtod takes them all. */
static int number(Skim *s)
{
    const char *from = s->p;
    if (s->p < s->end && *s->p == '-')
        s->p++;
    if (s->p < s->end && *s->p == '0')
        s->p++;
    else if (!digits(s))
        return 0;
    if (s->p < s->end && *s->p == '.') {
        s->p++;
        if (!digits(s))
            return 0;
    }
    if (s->p < s->end && (*s->p == 'e' || *s->p == 'E')) {
        s->p++;
        if (s->p < s->end && (*s->p == '+' || *s->p == '-'))
            s->p++;
        if (!digits(s))
            return 0;
    }
    return s->p - from <= SKIM_MAX_NUMBER;
}

static int literal(Skim *s, const char *word)
{
    size_t n = strlen(word);
    if ((size_t)(s->end - s->p) < n || memcmp(s->p, word, n) != 0)
        return 0;
    s->p += n;
    return 1;
}

static int value(Skim *s, int depth, Span *out);

static int object(Skim *s, int depth)
{
    Span keys[SKIM_MAX_KEYS];
    size_t n = 0;
    s->p++; /* '{' */
    blanks(s);
    if (s->p < s->end && *s->p == '}') {
        s->p++;
        return 1;
    }
    for (;;) {
        Span key, v;
        int escaped;
        blanks(s);
        if (!string(s, &key, &escaped) || escaped || n == SKIM_MAX_KEYS)
            return 0;
        for (size_t i = 0; i < n; i++) /* a key twice: the line is damaged, said by the parse */
            if (keys[i].len == key.len && memcmp(keys[i].start, key.start, key.len) == 0)
                return 0;
        keys[n++] = key;
        blanks(s);
        if (s->p >= s->end || *s->p != ':')
            return 0;
        s->p++;
        blanks(s);
        if (!value(s, depth + 1, &v))
            return 0;
        if (depth == 0) {
            if (key.len == 5 && memcmp(key.start, "event", 5) == 0)
                s->event = v;
            for (size_t i = 0; i < s->n_keys; i++)
                if (strlen(s->keys[i]) == key.len && memcmp(s->keys[i], key.start, key.len) == 0)
                    s->wanted[i] = v;
        }
        blanks(s);
        if (s->p < s->end && *s->p == ',') {
            s->p++;
            continue;
        }
        if (s->p < s->end && *s->p == '}') {
            s->p++;
            return 1;
        }
        return 0;
    }
}

static int array(Skim *s, int depth)
{
    s->p++; /* '[' */
    blanks(s);
    if (s->p < s->end && *s->p == ']') {
        s->p++;
        return 1;
    }
    for (;;) {
        Span v;
        blanks(s);
        if (!value(s, depth + 1, &v))
            return 0;
        blanks(s);
        if (s->p < s->end && *s->p == ',') {
            s->p++;
            continue;
        }
        if (s->p < s->end && *s->p == ']') {
            s->p++;
            return 1;
        }
        return 0;
    }
}

static int value(Skim *s, int depth, Span *out)
{
    if (s->p >= s->end || depth > SKIM_MAX_DEPTH)
        return 0;
    const char *start = s->p;
    int escaped = 0, ok;
    switch (*s->p) {
    case '{':
        out->kind = V_CONTAINER;
        ok = object(s, depth);
        break;
    case '[':
        out->kind = V_CONTAINER;
        ok = array(s, depth);
        break;
    case '"':
        ok = string(s, out, &escaped);
        out->kind = escaped ? V_ESCAPED : V_STRING;
        return ok;
    case 't':
        out->kind = V_TRUE;
        ok = literal(s, "true");
        break;
    case 'f':
        out->kind = V_FALSE;
        ok = literal(s, "false");
        break;
    case 'n':
        out->kind = V_NULL;
        ok = literal(s, "null");
        break;
    default:
        out->kind = V_NUMBER;
        ok = number(s);
    }
    out->start = start;
    out->len = (size_t)(s->p - start);
    return ok;
}

/* The value as cJSON holds it; NULL when memory ran out. An object, an array or an escaped
 * string is cJSON's own reading of its characters, which the skim found strict (no \u
 * escape, no key twice): the tree the whole line's parse has there. */
static cJSON *made(const Span *v)
{
    switch (v->kind) {
    case V_CONTAINER:
        return cJSON_ParseWithLength(v->start, v->len);
    case V_ESCAPED: /* the span is inside the quotes */
        return cJSON_ParseWithLength(v->start - 1, v->len + 2);
    case V_STRING: {
        cJSON *c = cJSON_CreateString("");
        char *text = c ? cJSON_malloc(v->len + 1) : NULL;
        if (!text) {
            cJSON_Delete(c);
            return NULL;
        }
        memcpy(text, v->start, v->len);
        text[v->len] = 0;
        cJSON_free(c->valuestring);
        c->valuestring = text;
        return c;
    }
    case V_NUMBER: /* cJSON's own reading of the same characters: the same double */
        return cJSON_ParseWithLength(v->start, v->len);
    case V_TRUE:
        return cJSON_CreateTrue();
    case V_FALSE:
        return cJSON_CreateFalse();
    case V_NULL:
        return cJSON_CreateNull();
    }
    return NULL;
}

int journal_skim_line(const char *line, size_t len, const char *const *keys, size_t n_keys,
                      cJSON **out)
{
    *out = NULL;
    if (n_keys > SKIM_MAX_WANTED || len == 0 || line[0] != '{')
        return 0;
    Skim s = {.p = line, .end = line + len, .keys = keys, .n_keys = n_keys};
    Span top;
    if (!value(&s, 0, &top))
        return 0;
    while (s.p < s.end && (*s.p == ' ' || *s.p == '\t' || *s.p == '\r'))
        s.p++;
    if (s.p != s.end || !s.event.start || s.event.kind != V_STRING)
        return 0;
    cJSON *o = cJSON_CreateObject();
    cJSON *ev = o ? made(&s.event) : NULL;
    if (!ev || !cJSON_AddItemToObject(o, "event", ev)) {
        cJSON_Delete(ev);
        cJSON_Delete(o);
        return 0;
    }
    for (size_t i = 0; i < n_keys; i++) {
        if (!s.wanted[i].start)
            continue;
        cJSON *v = made(&s.wanted[i]);
        if (!v || !cJSON_AddItemToObject(o, keys[i], v)) {
            cJSON_Delete(v);
            cJSON_Delete(o);
            return 0;
        }
    }
    *out = o;
    return 1;
}
