/* Parameter-server wire messages: a fixed 64-byte little-endian header followed by `count`
 * IEEE-754 doubles. Pure encoding and checking; the sockets live in remote/psnet. */
#ifndef TUNEDECK_PSMSG_H
#define TUNEDECK_PSMSG_H

#include <stddef.h>
#include <stdint.h>

#include "core/base/error.h"

enum { PSMSG_HEADER_BYTES = 64, PSMSG_VERSION = 1 };
#define PSMSG_MAGIC 0x53504454u /* "TDPS" on the wire */

typedef enum {
    PSMSG_HELLO = 1,  /* reserved: a worker's rank now comes in the handshake (psauth.h) */
    PSMSG_PUSH = 2,   /* worker -> PS: gradient sum of the shard, its inputs, compute, loss */
    PSMSG_PARAMS = 3, /* PS -> worker: the shard's parameters after iteration `iter` */
    PSMSG_STOP = 4    /* PS -> worker: training is over (job mode), carries the last params */
} PsMsgType;

typedef struct {
    PsMsgType type;
    uint32_t sender; /* worker rank or PS shard index */
    uint32_t inputs; /* PUSH: examples behind the gradient; PARAMS: the whole batch */
    uint64_t iter;
    uint64_t offset;  /* first parameter of the payload in the flat vector */
    uint64_t count;   /* doubles that follow */
    double compute_s; /* PUSH: the worker's compute; PARAMS: the slowest worker's */
    double loss;      /* PUSH: summed loss; PARAMS: mean loss over the batch */
} PsMsg;

void psmsg_encode_header(const PsMsg *m, unsigned char out[PSMSG_HEADER_BYTES]);
/* Checks magic, version, type and that count <= max_count; len must be the header size. */
int psmsg_decode_header(const unsigned char *buf, size_t len, size_t max_count, PsMsg *m,
                        Error *err);
void psmsg_encode_values(const double *v, size_t n, unsigned char *out);
void psmsg_decode_values(const unsigned char *in, size_t n, double *v);
const char *psmsg_type_name(PsMsgType t);

#endif
