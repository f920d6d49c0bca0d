/* Themes: a declarative table from semantic roles to colours (after htop's CRT.c), loaded
 * from JSON and degraded to 8 colours or to attributes alone when the terminal has less. */
#include "tui/theme.h"

#include <cJSON.h>
#include <curses.h>
#include <dirent.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "core/base/jfield.h"

static const char *const ROLE_NAMES[ROLE_COUNT] = {
    "normal",    "border",        "title",     "tab",       "tab.active", "status",
    "key",       "dim",           "good",      "bad",       "warn",       "selected",
    "bar.cpu",   "bar.gpu",       "bar.mem",   "bar.share", "bar.pred",   "bar.spread",
    "plot.best", "plot.measured", "plot.pred", "job.0",     "job.1",      "job.2",
    "job.3",     "job.4",         "job.5",     "job.6",     "job.7",
};

const char *theme_role_name(Role r)
{
    return r < ROLE_COUNT ? ROLE_NAMES[r] : "?";
}

void theme_default(Theme *t)
{
    memset(t, 0, sizeof *t);
    snprintf(t->name, sizeof t->name, "default");
    for (int i = 0; i < ROLE_COUNT; i++)
        t->role[i] = (RoleStyle){-1, -1, 0, 0, 0};
    t->role[ROLE_BORDER].fg = 8;
    t->role[ROLE_TITLE] = (RoleStyle){6, -1, 1, 0, 0};
    t->role[ROLE_TAB] = (RoleStyle){7, 8, 0, 0, 0};
    t->role[ROLE_TAB_ACTIVE] = (RoleStyle){0, 6, 1, 0, 0};
    t->role[ROLE_STATUS] = (RoleStyle){7, 236, 0, 0, 0};
    t->role[ROLE_KEY] = (RoleStyle){3, -1, 1, 0, 0};
    t->role[ROLE_DIM].fg = 8;
    t->role[ROLE_GOOD].fg = 2;
    t->role[ROLE_BAD] = (RoleStyle){1, -1, 1, 0, 0};
    t->role[ROLE_WARN].fg = 3;
    t->role[ROLE_SELECTED] = (RoleStyle){-1, -1, 0, 1, 0};
    t->role[ROLE_BAR_CPU].fg = 4;
    t->role[ROLE_BAR_GPU].fg = 2;
    t->role[ROLE_BAR_MEM].fg = 5;
    t->role[ROLE_BAR_SHARE].fg = 6;
    t->role[ROLE_BAR_PRED].fg = 3;
    t->role[ROLE_BAR_SPREAD].fg = 8;
    t->role[ROLE_PLOT_BEST] = (RoleStyle){2, -1, 1, 0, 0};
    t->role[ROLE_PLOT_MEASURED].fg = 4;
    t->role[ROLE_PLOT_PRED].fg = 3;
    static const short JOB_FG[8] = {1, 2, 3, 4, 5, 6, 9, 10};
    for (int j = 0; j < 8; j++)
        t->role[ROLE_JOB0 + j] = (RoleStyle){0, JOB_FG[j], 0, 0, 0};
}

static const char *const COLOR_NAMES[] = {"black", "red",     "green", "yellow",
                                          "blue",  "magenta", "cyan",  "white"};

static int read_color(const cJSON *v, const char *ctx, const char *key, short *out, Error *err)
{
    const cJSON *c = cJSON_GetObjectItemCaseSensitive(v, key);
    if (!c)
        return 0;
    if (cJSON_IsNumber(c) && c->valuedouble >= -1 && c->valuedouble <= 255) {
        *out = (short)c->valuedouble;
        return 0;
    }
    if (cJSON_IsString(c)) {
        if (strcmp(c->valuestring, "default") == 0) {
            *out = -1;
            return 0;
        }
        for (int i = 0; i < 8; i++) {
            char bright[32];
            snprintf(bright, sizeof bright, "bright-%s", COLOR_NAMES[i]);
            if (strcmp(c->valuestring, COLOR_NAMES[i]) == 0 ||
                strcmp(c->valuestring, bright) == 0) {
                *out = (short)(i + (c->valuestring[0] == 'b' && c->valuestring[1] == 'r' ? 8 : 0));
                return 0;
            }
        }
    }
    /* what was found, by value where it is one: "found a number" would not say which */
    char found[96];
    if (cJSON_IsNumber(c))
        snprintf(found, sizeof found, "%g", c->valuedouble);
    else if (cJSON_IsString(c))
        snprintf(found, sizeof found, "'%.80s'", c->valuestring);
    else
        snprintf(found, sizeof found, "%s", jfield_type_name(c));
    return error_set(err,
                     "%s: field '%s': expected a colour name (black..white, "
                     "bright-NAME, default) or a number 0-255, found %s",
                     ctx, key, found);
}

int theme_load(const char *dir, const char *name, Theme *t, Error *err)
{
    theme_default(t);
    char path[1024], base[64];
    /* A name with a '/' is a file of the operator's own (the .json is optional); any other
     * name is one of ours in dir. */
    size_t nl = strlen(name);
    int has_ext = nl > 5 && strcmp(name + nl - 5, ".json") == 0;
    if (strchr(name, '/'))
        snprintf(path, sizeof path, "%s%s", name, has_ext ? "" : ".json");
    else
        snprintf(path, sizeof path, "%s/%s.json", dir, name);
    const char *slash = strrchr(name, '/');
    snprintf(base, sizeof base, "%.*s", (int)(strlen(slash ? slash + 1 : name) - (has_ext ? 5 : 0)),
             slash ? slash + 1 : name);
    cJSON *root = jfield_parse_file(path, err);
    if (!root)
        return -1;
    Theme loaded;
    theme_default(&loaded);
    snprintf(loaded.name, sizeof loaded.name, "%s", base);
    const cJSON *roles = jfield_object(root, path, "roles", 1, err);
    int rc = roles ? 0 : -1;
    for (const cJSON *r = roles ? roles->child : NULL; r && rc == 0; r = r->next) {
        int idx = -1;
        for (int i = 0; i < ROLE_COUNT; i++)
            if (strcmp(ROLE_NAMES[i], r->string) == 0)
                idx = i;
        char ctx[1200];
        snprintf(ctx, sizeof ctx, "%s: roles.%s", path, r->string);
        if (idx < 0) {
            rc = error_set(err,
                           "%s: unknown role (expected one of normal, border, title, "
                           "bar.cpu, plot.best, job.0 ... see themes/default.json)",
                           ctx);
            break;
        }
        if (!cJSON_IsObject(r)) {
            rc = error_set(err, "%s: expected an object, found %s", ctx, jfield_type_name(r));
            break;
        }
        RoleStyle *s = &loaded.role[idx];
        int b = s->bold, rv = s->reverse, ul = s->underline;
        if (read_color(r, ctx, "fg", &s->fg, err) < 0 ||
            read_color(r, ctx, "bg", &s->bg, err) < 0 ||
            jfield_bool(r, ctx, "bold", 0, &b, err) < 0 ||
            jfield_bool(r, ctx, "reverse", 0, &rv, err) < 0 ||
            jfield_bool(r, ctx, "underline", 0, &ul, err) < 0) {
            rc = -1;
            break;
        }
        s->bold = (unsigned char)b;
        s->reverse = (unsigned char)rv;
        s->underline = (unsigned char)ul;
    }
    cJSON_Delete(root);
    if (rc == 0)
        *t = loaded;
    return rc;
}

static unsigned long attrs[ROLE_COUNT];

/* Brings a 256-colour index down to what the terminal has. */
static short fit(short c, int colors)
{
    if (c < 0 || c < colors)
        return c;
    if (c == 8)
        return 7; /* grey: plain white reads better than black on a dark terminal */
    if (c < 16)
        return (short)(c - 8);
    if (c >= 232)
        return c >= 244 ? 7 : 0; /* grey ramp */
    int v = c - 16, r = v / 36, g = (v / 6) % 6, b = v % 6;
    return (short)((r >= 3 ? 1 : 0) | (g >= 3 ? 2 : 0) | (b >= 3 ? 4 : 0));
}

void theme_fit_pair(short fg, short bg, int colors, short *fg_out, short *bg_out)
{
    *fg_out = fit(fg, colors);
    *bg_out = fit(bg, colors);
    if (fg != bg && *fg_out >= 0 && *fg_out == *bg_out) {
        short b = *bg_out;
        int light = b == 7 || b == 3 || b == 6 || b == 2;
        *fg_out = light ? 0 : 7;
    }
}

int theme_job_repeats(const Theme *t, int colors, int job)
{
    short fg, bg;
    const RoleStyle *s = &t->role[ROLE_JOB0 + job];
    theme_fit_pair(s->fg, s->bg, colors, &fg, &bg);
    for (int k = 0; k < job; k++) {
        const RoleStyle *o = &t->role[ROLE_JOB0 + k];
        short ofg, obg;
        theme_fit_pair(o->fg, o->bg, colors, &ofg, &obg);
        if (ofg == fg && obg == bg && o->reverse == s->reverse)
            return 1;
    }
    return 0;
}

void theme_apply(const Theme *t, int colors)
{
    for (int i = 0; i < ROLE_COUNT; i++) {
        const RoleStyle *s = &t->role[i];
        unsigned long a = A_NORMAL;
        if (s->bold)
            a |= A_BOLD;
        if (s->reverse)
            a |= A_REVERSE;
        if (s->underline)
            a |= A_UNDERLINE;
        if (colors >= 8 && i + 1 < COLOR_PAIRS) {
            short fg, bg;
            theme_fit_pair(s->fg, s->bg, colors, &fg, &bg);
            init_pair((short)(i + 1), fg, bg);
            a |= COLOR_PAIR(i + 1);
            if (i >= ROLE_JOB0 && i <= ROLE_JOB7 && theme_job_repeats(t, colors, i - ROLE_JOB0))
                a ^= A_REVERSE; /* its bright colour became an earlier job's: keep them apart */
        } else if (colors < 8) {
            /* Monochrome: roles that only differ by colour get an attribute instead. */
            if (i == ROLE_TAB_ACTIVE || (i >= ROLE_JOB0 && i <= ROLE_JOB7))
                a |= A_REVERSE;
            if (i == ROLE_STATUS)
                a |= A_REVERSE;
            if (i == ROLE_DIM || i == ROLE_BORDER)
                a |= A_DIM;
        }
        attrs[i] = a;
    }
}

unsigned long theme_attr(Role r)
{
    return r < ROLE_COUNT ? attrs[r] : 0;
}

static int by_name(const void *x, const void *y)
{
    return strcmp((const char *)x, (const char *)y);
}

void theme_names(const char *dir, char *out, size_t cap)
{
    size_t len = 0;
    out[0] = 0;
    DIR *d = opendir(dir);
    if (!d)
        return;
    /* Sorted, so that the list reads the same everywhere. */
    char names[64][64];
    size_t n = 0;
    for (struct dirent *e; (e = readdir(d)) && n < 64;) {
        size_t l = strlen(e->d_name);
        if (l > 5 && l - 5 < sizeof names[0] && strcmp(e->d_name + l - 5, ".json") == 0)
            snprintf(names[n++], sizeof names[0], "%.*s", (int)(l - 5), e->d_name);
    }
    closedir(d);
    qsort(names, n, sizeof names[0], by_name);
    for (size_t i = 0; i < n && len + 1 < cap; i++)
        len += (size_t)snprintf(out + len, cap - len, "%s%s", i ? ", " : "", names[i]);
}
