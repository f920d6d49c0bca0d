/* Which standard stream of a process a line of output came from. */
#ifndef TUNEDECK_STREAM_H
#define TUNEDECK_STREAM_H

typedef enum { STREAM_STDOUT, STREAM_STDERR } StreamKind;

#endif
