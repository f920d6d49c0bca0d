/* A job's shared secret: 32 bytes from the kernel's random source (getrandom), carried as 64
 * lowercase hex digits. tunedeck makes one per trial and puts it in the schedule a trial
 * reads on standard input; the parameter-server handshake (tools/worker/psauth.h) proves
 * holding it without sending it. */
#ifndef TUNEDECK_SECRET_H
#define TUNEDECK_SECRET_H

#include <stddef.h>

#include "core/base/error.h"

enum { SECRET_BYTES = 32, SECRET_HEX_CHARS = 2 * SECRET_BYTES };

/* Fills out with n bytes from getrandom (/dev/urandom where the call is missing). */
int secret_random(unsigned char *out, size_t n, Error *err);
/* out gets SECRET_HEX_CHARS lowercase hex digits and a NUL. */
void secret_to_hex(const unsigned char in[SECRET_BYTES], char out[SECRET_HEX_CHARS + 1]);
/* A fresh secret as hex (the two above together). */
int secret_new_hex(char out[SECRET_HEX_CHARS + 1], Error *err);
/* Exactly SECRET_HEX_CHARS hex digits (either case) into SECRET_BYTES bytes; -1 otherwise,
 * and the message never repeats the text (it is a secret, or a mistyped one). */
int secret_from_hex(const char *hex, unsigned char out[SECRET_BYTES], Error *err);
/* free() that first wipes the whole block (malloc_usable_size), for an allocator hook such
 * as cJSON_InitHooks' free_fn in a process whose parsed JSON holds a secret: it reaches
 * blocks a caller never sees, such as those a parse that fails part-way frees. p may be
 * NULL. */
void secret_wipe_free(void *p);
/* Keeps the process from writing a core file (and from being traced by its own user) for
 * as long as it runs: a crash would put the secret it holds in a file anyone with the user's
 * rights reads later. Children it forks inherit this. */
int secret_no_core_dumps(Error *err);
/* The same for tunedeck and tunedeck-rexec from their start, since any of their commands
 * may come to hold the private keys libssh loads from IdentityFile, trials' secrets and
 * session keys (ssh-agent does so: OpenSSH's platform_disable_tracing), unless `dumpable`
 * (TUNEDECK_DUMPABLE's value, NULL when unset) is "1", the way to get a core or attach a
 * debugger. A fork keeps it (the local keeper holds a copy of that memory); a program
 * exec'd (a trial, ssh, Slurm's commands) starts dumpable again, as the kernel makes every
 * exec that changes no credentials. 1 when made not dumpable, 0 when left on request, -1
 * (err) when prctl failed. */
int secret_no_core_dumps_unless(const char *dumpable, Error *err);
/* Equal in constant time: how long it takes does not depend on where a and b differ. */
int secret_equal(const unsigned char *a, const unsigned char *b, size_t n);

#endif
