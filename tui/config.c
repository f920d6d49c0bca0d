/* Reading and atomically writing the console's config.json. */
#include "tui/config.h"

#include <cJSON.h>
#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "core/base/dirsync.h"
#include "core/base/jfield.h"

static const char *const ACTION_NAMES[ACT_COUNT] = {
    "quit", "help",    "filter",    "command",      "pause",      "edit",
    "sort", "reverse", "view-tune", "view-cluster", "view-hosts", "drop",
};
static const char DEFAULT_KEYS[ACT_COUNT] = {'q', '?', '/', ':', ' ', 'e',
                                             's', 'r', '1', '2', '3', 'X'};

void config_defaults(ConsoleConfig *c)
{
    memset(c, 0, sizeof *c);
    memcpy(c->keys, DEFAULT_KEYS, sizeof c->keys);
}

const char *config_action_name(KeyAction a)
{
    return a < ACT_COUNT ? ACTION_NAMES[a] : "?";
}

const char *config_path(char *buf, size_t cap)
{
    const char *xdg = getenv("XDG_CONFIG_HOME"), *home = getenv("HOME");
    if (xdg && xdg[0])
        snprintf(buf, cap, "%s/tunedeck/config.json", xdg);
    else if (home && home[0])
        snprintf(buf, cap, "%s/.config/tunedeck/config.json", home);
    else
        return NULL;
    return buf;
}

int config_load(const char *path, ConsoleConfig *c, Error *err)
{
    config_defaults(c);
    if (access(path, F_OK) != 0)
        return 0;
    cJSON *root = jfield_parse_file(path, err);
    if (!root)
        return -1;
    ConsoleConfig n;
    config_defaults(&n);
    int rc = 0;
    /* Every key is read or refused: one ignored ("them": a misspelt theme, or a newer
     * tunedeck's setting) was also dropped by the next save, which writes only these. */
    static const char *const known[] = {"theme", "plot", "keys", NULL};
    if (!cJSON_IsObject(root))
        rc = error_set(err, "%s: expected a JSON object, found %s", path, jfield_type_name(root));
    else if (jfield_only(root, path, known, err) < 0)
        rc = -1;
    if (rc == 0 && (jfield_string(root, path, "theme", 0, n.theme, sizeof n.theme, err) < 0 ||
                    jfield_string(root, path, "plot", 0, n.plot, sizeof n.plot, err) < 0))
        rc = -1;
    Error e2 = {0};
    const cJSON *keys = rc == 0 ? jfield_object(root, path, "keys", 0, &e2) : NULL;
    if (rc == 0 && !keys && e2.msg[0]) {
        *err = e2;
        rc = -1;
    }
    for (const cJSON *k = keys ? keys->child : NULL; k && rc == 0; k = k->next) {
        int a = -1;
        for (int i = 0; i < ACT_COUNT; i++)
            if (strcmp(ACTION_NAMES[i], k->string) == 0)
                a = i;
        if (a < 0) {
            rc = error_set(err,
                           "%s: keys: unknown action '%s' (expected quit, help, filter, "
                           "command, pause, edit, sort, reverse, view-tune, view-cluster, "
                           "view-hosts or drop)",
                           path, k->string);
        } else if (!cJSON_IsString(k) || strlen(k->valuestring) != 1 || k->valuestring[0] < 32 ||
                   k->valuestring[0] > 126) {
            rc = error_set(err, "%s: keys.%s: expected one printable character, found %s", path,
                           k->string,
                           !cJSON_IsString(k)  ? jfield_type_name(k)
                           : k->valuestring[0] ? k->valuestring
                                               : "nothing" /* "", which said "found " */);
        } else {
            n.keys[a] = k->valuestring[0];
        }
    }
    for (int i = 0; rc == 0 && i < ACT_COUNT; i++)
        for (int j = i + 1; rc == 0 && j < ACT_COUNT; j++)
            if (n.keys[i] == n.keys[j])
                rc = error_set(err, "%s: keys: '%c' is bound to both %s and %s", path, n.keys[i],
                               ACTION_NAMES[i], ACTION_NAMES[j]);
    cJSON_Delete(root);
    if (rc == 0)
        *c = n;
    return rc;
}

static int mkdirs(char *dir)
{
    for (char *p = dir + 1; *p; p++)
        if (*p == '/') {
            *p = 0;
            if (mkdir(dir, 0700) < 0 && errno != EEXIST)
                return -1;
            *p = '/';
        }
    return mkdir(dir, 0700) < 0 && errno != EEXIST ? -1 : 0;
}

int config_save(const char *path, const ConsoleConfig *c, Error *err)
{
    char dir[1024];
    snprintf(dir, sizeof dir, "%s", path);
    char *slash = strrchr(dir, '/');
    if (slash && slash != dir) {
        *slash = 0;
        if (mkdirs(dir) < 0)
            return error_set(err, "%s: cannot create the folder: %s", dir, strerror(errno));
    }
    cJSON *root = cJSON_CreateObject();
    if (c->theme[0])
        cJSON_AddStringToObject(root, "theme", c->theme);
    if (c->plot[0])
        cJSON_AddStringToObject(root, "plot", c->plot);
    cJSON *keys = cJSON_AddObjectToObject(root, "keys");
    for (int i = 0; i < ACT_COUNT; i++) {
        char k[2] = {c->keys[i], 0};
        cJSON_AddStringToObject(keys, ACTION_NAMES[i], k);
    }
    char *text = cJSON_Print(root);
    cJSON_Delete(root);
    /* A name no one can guess, made by us alone (mkostemp: O_CREAT | O_EXCL, 0600): the
     * folder is the user's, but a predictable name opened without O_EXCL would follow a link
     * planted there (or a file left writable) and write the settings through it. */
    char tmp[1100];
    snprintf(tmp, sizeof tmp, "%s.tmp.XXXXXX", path);
    int fd = mkostemp(tmp, O_CLOEXEC);
    int rc = 0;
    if (fd < 0) {
        rc = error_set(err, "%s: cannot write: %s", tmp, strerror(errno));
    } else {
        size_t len = strlen(text), off = 0;
        while (off < len) {
            ssize_t w = write(fd, text + off, len - off);
            if (w < 0 && errno == EINTR)
                continue;
            if (w <= 0)
                break;
            off += (size_t)w;
        }
        /* The new file is whole on disk before it replaces the old one. */
        if (off < len || write(fd, "\n", 1) != 1 || fsync(fd) < 0)
            rc = error_set(err, "%s: cannot write: %s", tmp, strerror(errno));
        close(fd);
        if (rc == 0 && rename(tmp, path) < 0)
            rc = error_set(err, "%s: cannot replace: %s", path, strerror(errno));
        else if (rc == 0 && dirsync_parent(path) < 0) /* the new name, durable too */
            rc = error_set(err, "%s: cannot sync the folder that holds it: %s", path,
                           strerror(errno));
        if (rc < 0)
            unlink(tmp);
    }
    free(text);
    return rc;
}

int config_action_of(const ConsoleConfig *c, int key)
{
    for (int i = 0; i < ACT_COUNT; i++)
        if (c->keys[i] == key)
            return i;
    return -1;
}

char config_default_key(KeyAction a)
{
    return a < ACT_COUNT ? DEFAULT_KEYS[a] : 0;
}
