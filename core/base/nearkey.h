/* Keys a reader does not use that are one slip from one it does ("synch" for "sync"): such
 * a key is not an error (job files pass unknown fields through to trials), but it leaves the
 * key meant at its default without a word, so every reader of such a file says it the same
 * way (nearkey_warning). */
#ifndef TUNEDECK_NEARKEY_H
#define TUNEDECK_NEARKEY_H

#include <stddef.h>

typedef struct cJSON cJSON;

/* The first member of obj whose name is not one of known (NULL-ended) but is within edit
 * distance 2 of one (1 for known keys of four bytes or fewer: two edits of "mops" reach
 * "mode"), that one in *meant; NULL when none is (obj NULL or not an object: none). */
const char *nearkey_find(const cJSON *obj, const char *const *known, const char **meant);

/* The warning for nearkey_find's key, into out: "SOURCE: key 'KEY' is not one tunedeck
 * reads; did you mean 'MEANT'?" (KEY made terminal-safe: a key is the file's text). Returns
 * 1 when written, 0 when obj has no such key (out ""). */
int nearkey_warning(const cJSON *obj, const char *const *known, const char *source, char *out,
                    size_t cap);

#endif
