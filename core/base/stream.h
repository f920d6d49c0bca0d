/* Which output stream of a remote or local process a line came from. Shared by the SSH
 * transport (remote/ssh) and the launchers above it, so it lives below both. */
#ifndef TUNEDECK_STREAM_H
#define TUNEDECK_STREAM_H

typedef enum { STREAM_STDOUT, STREAM_STDERR } StreamKind;

#endif
