/* JSON text for a terminal (core/base/jsonprint.h). */
#include "core/base/jsonprint.h"

#include <cJSON.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "core/base/termsafe.h"

/* The code point a terminal would act on at s (its UTF-8 length in *len), or 0. cJSON's text
 * holds bytes above 0x7F only inside strings, as they were given: a well-formed sequence there
 * is escaped to the same code point; anything else is left as it is. */
static unsigned acted_on(const unsigned char *s, size_t *len)
{
    unsigned cp;
    if (s[0] == 0x7F) {
        *len = 1;
        return 0x7F;
    }
    if ((s[0] & 0xE0) == 0xC0 && s[0] >= 0xC2 && (s[1] & 0xC0) == 0x80) {
        cp = (unsigned)(s[0] & 0x1F) << 6 | (s[1] & 0x3F);
        *len = 2;
    } else if ((s[0] & 0xF0) == 0xE0 && (s[1] & 0xC0) == 0x80 && (s[2] & 0xC0) == 0x80) {
        cp = (unsigned)(s[0] & 0x0F) << 12 | (unsigned)(s[1] & 0x3F) << 6 | (s[2] & 0x3F);
        *len = 3;
        if (cp < 0x800)
            return 0; /* overlong: not a code point */
    } else {
        return 0;
    }
    return (cp >= 0x80 && cp <= 0x9F) || termsafe_reorders(cp) ? cp : 0;
}

char *jsonprint_escape(char *text)
{
    if (!text)
        return NULL;
    size_t n = 0, extra = 0, len;
    for (const unsigned char *s = (const unsigned char *)text; *s; s += n) {
        n = 1;
        if (*s >= 0x7F && acted_on(s, &len)) {
            extra += 6 - len;
            n = len;
        }
    }
    if (!extra)
        return text;
    size_t size = strlen(text) + extra + 1;
    char *out = malloc(size), *o = out;
    if (!out) {
        free(text);
        return NULL;
    }
    for (const unsigned char *s = (const unsigned char *)text; *s;) {
        unsigned cp = *s >= 0x7F ? acted_on(s, &len) : 0;
        if (cp) {
            o += snprintf(o, 7, "\\u%04X", cp);
            s += len;
        } else {
            *o++ = (char)*s++;
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
