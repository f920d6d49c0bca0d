/* Parameter-server message codec: byte-by-byte little-endian, so hosts of any byte order
 * and any struct padding agree. */
#include "tools/worker/psmsg.h"

#include <math.h>
#include <string.h>

#include "tools/worker/lebytes.h"

/* Layout: magic u32, version u16, type u16, sender u32, inputs u32, iter u64, offset u64,
 * count u64, compute_s f64, loss f64, 8 bytes reserved (zero). */
void psmsg_encode_header(const PsMsg *m, unsigned char out[PSMSG_HEADER_BYTES])
{
    memset(out, 0, PSMSG_HEADER_BYTES);
    le_put32(out, PSMSG_MAGIC);
    out[4] = PSMSG_VERSION & 0xff;
    out[5] = PSMSG_VERSION >> 8;
    out[6] = (unsigned char)m->type;
    out[7] = 0;
    le_put32(out + 8, m->sender);
    le_put32(out + 12, m->inputs);
    le_put64(out + 16, m->iter);
    le_put64(out + 24, m->offset);
    le_put64(out + 32, m->count);
    le_put64(out + 40, le_double_bits(m->compute_s));
    le_put64(out + 48, le_double_bits(m->loss));
}

int psmsg_decode_header(const unsigned char *buf, size_t len, size_t max_count, PsMsg *m,
                        Error *err)
{
    memset(m, 0, sizeof *m);
    if (len != PSMSG_HEADER_BYTES)
        return error_set(err,
                         "parameter-server message: expected a %d-byte header, found %zu "
                         "bytes",
                         PSMSG_HEADER_BYTES, len);
    uint32_t magic = le_get32(buf);
    if (magic != PSMSG_MAGIC)
        return error_set(err,
                         "parameter-server message: expected magic 0x%08x, found 0x%08x "
                         "(not a tunedeck-worker peer?)",
                         PSMSG_MAGIC, magic);
    unsigned version = (unsigned)buf[4] | (unsigned)buf[5] << 8;
    if (version != PSMSG_VERSION)
        return error_set(err, "parameter-server message: expected version %d, found %u",
                         PSMSG_VERSION, version);
    unsigned type = (unsigned)buf[6] | (unsigned)buf[7] << 8;
    if (type < PSMSG_HELLO || type > PSMSG_STOP)
        return error_set(err,
                         "parameter-server message: field 'type': expected 1 to 4, "
                         "found %u",
                         type);
    m->type = (PsMsgType)type;
    m->sender = le_get32(buf + 8);
    m->inputs = le_get32(buf + 12);
    m->iter = le_get64(buf + 16);
    m->offset = le_get64(buf + 24);
    m->count = le_get64(buf + 32);
    m->compute_s = le_bits_double(le_get64(buf + 40));
    m->loss = le_bits_double(le_get64(buf + 48));
    if (m->count > max_count)
        return error_set(err,
                         "parameter-server message: field 'count': expected at most %zu "
                         "values, found %llu",
                         max_count, (unsigned long long)m->count);
    if (m->offset > UINT64_MAX - m->count)
        return error_set(err, "parameter-server message: field 'offset': %llu overflows",
                         (unsigned long long)m->offset);
    if (!isfinite(m->compute_s) || !isfinite(m->loss))
        return error_set(err, "parameter-server message: expected finite compute_s and loss");
    return 0;
}

static int little_endian(void)
{
    const uint16_t one = 1;
    unsigned char b;
    memcpy(&b, &one, 1);
    return b == 1;
}

/* On little-endian hosts with IEEE doubles the wire form is the memory form: one copy. */
void psmsg_encode_values(const double *v, size_t n, unsigned char *out)
{
    if (n == 0)
        return; /* an empty message may come with no buffer at all */
    if (little_endian()) {
        memcpy(out, v, n * sizeof *v);
        return;
    }
    for (size_t i = 0; i < n; i++)
        le_put64(out + 8 * i, le_double_bits(v[i]));
}

void psmsg_decode_values(const unsigned char *in, size_t n, double *v)
{
    if (n == 0)
        return;
    if (little_endian()) {
        memcpy(v, in, n * sizeof *v);
        return;
    }
    for (size_t i = 0; i < n; i++)
        v[i] = le_bits_double(le_get64(in + 8 * i));
}

const char *psmsg_type_name(PsMsgType t)
{
    switch (t) {
    case PSMSG_HELLO:
        return "hello";
    case PSMSG_PUSH:
        return "push";
    case PSMSG_PARAMS:
        return "params";
    case PSMSG_STOP:
        return "stop";
    }
    return "?";
}
