/* Which private key files may be used. ssh does not use a private key file that its group or
 * others may read ("UNPROTECTED PRIVATE KEY FILE"): someone else may hold it too, and a
 * login with it proves nothing. libssh 0.10 checks no mode and tries ~/.ssh/id_* by itself,
 * so tunedeck checks each file before libssh may read it. */
#ifndef TUNEDECK_IDENTITIES_H
#define TUNEDECK_IDENTITIES_H

#include <stddef.h>

/* The files libssh 0.10 tries by itself, in its order, in the folder it takes as ~/.ssh. */
extern const char *const IDENTITY_DEFAULT_NAMES[];
enum { IDENTITY_N_DEFAULTS = 4 };

/* The mode of `path` when it is yours and its group or others may read or write it (mode &
 * 077), else 0: missing, private, or someone else's (ssh's own rule). */
unsigned identity_too_open(const char *path);

/* What `path` is when it exists and is something libssh's read would block on or get
 * nothing from (a FIFO, a socket, a device other than /dev/null), as words for a message;
 * NULL when it is missing, a regular file, a folder or /dev/null. A FIFO named as a key or
 * an included ssh config blocked the open, and with it the whole event loop, forever. */
const char *file_would_block(const char *path);

/* The folder libssh takes as ~/.ssh (its %d): the home of the password database's entry for
 * this user, else $HOME, then "/.ssh". */
void identity_ssh_dir(char *out, size_t cap);

#endif
