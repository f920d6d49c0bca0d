/* JSON text for a terminal: what tunedeck prints as JSON (--json, event lines, a benchmark's
 * --out) is cJSON's text with every code point a terminal would act on escaped as \uXXXX.
 * cJSON escapes only what JSON requires (below U+0020, '"', '\\'), so a name or a trial's
 * words holding a C1 control (U+0080..U+009F: U+009B is CSI on some terminals), DEL, or a
 * bidirectional control or line separator (those termsafe.h shows as <U+XXXX>) reached the
 * terminal of `tunedeck ... --json`, of `jq` without -r, of `cat`. Escaped, a JSON parser
 * reads the very same string back (DESIGN §5: all output is JSON; nothing changes for it).
 * cJSON also passes on bytes that are not UTF-8 (a host's name, a remote's error, a trial's
 * line, a Slurm job's name), which made the whole output no JSON (RFC 8259 §8.1): each
 * ill-formed stretch becomes \uFFFD, one per maximal subpart (core/base/utf8.h). */
#ifndef TUNEDECK_JSONPRINT_H
#define TUNEDECK_JSONPRINT_H

#include <stddef.h>

typedef struct cJSON cJSON;

/* `item` as JSON text (indented when `indent`, else on one line), owned by the caller (free);
 * NULL: out of memory. */
char *jsonprint_text(const cJSON *item, int indent);

/* Escapes, in cJSON's text `text` (owned, consumed), the code points above and replaces the
 * bytes that are not UTF-8; returns the new text (owned) or NULL when memory ran out (text
 * freed). */
char *jsonprint_escape(char *text);

#endif
