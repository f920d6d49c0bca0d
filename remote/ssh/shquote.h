/* Shell quoting for remote command lines: every argument single-quoted, so no byte of a
 * file, a trial's output or an operator's text is ever interpreted by the remote shell. */
#ifndef TUNEDECK_SHQUOTE_H
#define TUNEDECK_SHQUOTE_H

#include <stddef.h>

#include "core/base/error.h"

/* Appends 'arg' single-quoted (a ' inside becomes '\'') to a growing malloc'd string
 * *buf of length *len. Returns -1 when memory runs out. */
int shquote_append(char **buf, size_t *len, const char *arg);
/* Appends raw text (a fixed part of a command we wrote ourselves, never input). */
int shquote_append_raw(char **buf, size_t *len, const char *text);
/* The same for the first n bytes of text (a slice of a template). */
int shquote_append_raw_n(char **buf, size_t *len, const char *text, size_t n);
/* The quoted form of one argument; caller frees. */
char *shquote(const char *arg);
/* Joins argv quoted word by word, separated by spaces; caller frees. */
char *shquote_argv(const char *const *argv, size_t n);

/* A host name or address we are willing to connect to: letters, digits, '-', '.', '_' and
 * ':' (IPv6) only, or an IPv6 address in brackets ("[fd00::1]", brackets around the whole
 * host only), 1-253 bytes, not starting with '-'. */
int host_name_valid(const char *host, Error *err);

enum { USER_NAME_MAX = 256 }; /* as long as AD's; the inventory's user fields hold it */

/* A remote user name we are willing to log in as (empty: none set): at most 256 bytes, no
 * blank, control byte, quote or any of ;&<>|(){}*?[%, not starting with '-', '~' or '#',
 * not ending in '\', a '$' only last. libssh hands it to the shell unquoted wherever an ssh
 * config's `Match exec` says %r, as OpenSSH did before 9.6 (shquote.c says why each). */
int user_name_valid(const char *user, Error *err);

#endif
