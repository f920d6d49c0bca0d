/* A skim of one journal line: whether it is certainly a line journal_parse_line takes, and
 * the few top-level fields a reader asked for, without building its whole tree. */
#ifndef TUNEDECK_JOURNAL_SKIM_H
#define TUNEDECK_JOURNAL_SKIM_H

#include <cJSON.h>
#include <stddef.h>

/* 1 with *out a new object holding the line's "event" and those of keys[0..n_keys) it has at
 * the top level, with the values journal_parse_line would give them, when the line is
 * strict JSON (RFC 8259) that cJSON parses, with no key twice in any object and a string
 * "event": then journal_parse_line takes it. 0 when not sure: the line is parsed whole
 * (anything outside the plain subset the journal writes: a \u escape, a control byte, a
 * leading blank, an escaped key, deep nesting, a long number, many keys in one object), or
 * memory ran out. A value asked for that is an object, an array or an escaped string is
 * parsed alone, by cJSON, from its own characters. At most 24 keys. */
int journal_skim_line(const char *line, size_t len, const char *const *keys, size_t n_keys,
                      cJSON **out);

#endif
