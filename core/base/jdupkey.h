/* Duplicate keys in a parsed JSON document. cJSON keeps every member of an object and its
 * look-ups return the first, so a block pasted twice and edited in its second copy would be
 * read from the first without a word: every reader of a file or of remote input refuses
 * such a document instead. */
#ifndef TUNEDECK_JDUPKEY_H
#define TUNEDECK_JDUPKEY_H

#include "core/base/error.h"

typedef struct cJSON cJSON;

/* 0 when no object in the tree has a key twice (keys compare byte for byte, as JSON's do:
 * "id" and "ID" differ). Otherwise -1 with the first such object in document order (an
 * object before the objects inside it; in one object, the key whose second copy comes
 * first) in err, as a path from the root and the key:
 *   machines[2].devices[0]: key "id" appears twice; expected each key once per object
 * (no path when it is the root object). The caller prefixes its source (file name, "event
 * line"). Objects of up to 16 keys are compared in pairs, larger ones sorted: O(n log n) in
 * the document's size, so remote input cannot make it quadratic; the path is written only for
 * a refusal. A long path ends in "..." and a long key is cut, both shown terminal-safe, so
 * the key always fits the message. */
int jdupkey_check(const cJSON *root, Error *err);

#endif
