/* JSON text for a terminal (core/base/jsonprint.h). */
#include "core/base/jsonprint.h"

#include <cJSON.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "core/base/termsafe.h"
#include "core/base/utf8.h"

/* What stands for the character at s (n bytes left, its length in *len): the \uXXXX escape
 * of a code point a terminal would act on, or of U+FFFD for bytes that are not UTF-8 (cJSON
 * passes a string's bytes on as they were given, and text that is not UTF-8 is no JSON: RFC
 * 8259 §8.1, and strict readers refuse the whole output); 0 when it is kept as it is. cJSON's
 * text holds bytes above 0x7F only inside strings, so no replacement touches its syntax: a
 * maximal subpart never takes an ASCII byte. */
static int escaped(const char *s, size_t n, size_t *len)
{
    int cp;
    *len = utf8_next(s, n, &cp);
    if (cp == UTF8_INVALID)
        return UTF8_REPLACEMENT;
    return cp == 0x7F || (cp >= 0x80 && cp <= 0x9F) || termsafe_reorders((unsigned)cp) ? cp : 0;
}

char *jsonprint_escape(char *text)
{
    if (!text)
        return NULL;
    size_t size = strlen(text), extra = 0, len;
    for (size_t i = 0; i < size; i += len)
        if ((unsigned char)text[i] < 0x7F)
            len = 1;
        else if (escaped(text + i, size - i, &len))
            extra += 6 - len; /* an escape is 6 bytes, what it stands for at most 3 */
    if (!extra)
        return text;
    char *out = malloc(size + extra + 1), *o = out;
    if (!out) {
        free(text);
        return NULL;
    }
    for (size_t i = 0; i < size; i += len) {
        int cp = (unsigned char)text[i] < 0x7F ? (len = 1, 0) : escaped(text + i, size - i, &len);
        if (cp) {
            o += snprintf(o, 7, "\\u%04X", (unsigned)cp);
        } else {
            memcpy(o, text + i, len);
            o += len;
        }
    }
    *o = 0;
    free(text);
    return out;
}

char *jsonprint_text(const cJSON *item, int indent)
{
    return jsonprint_escape(indent ? cJSON_Print(item) : cJSON_PrintUnformatted(item));
}
