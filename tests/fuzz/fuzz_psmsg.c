/* Fuzzes parameter-server wire message headers (tools/worker/psmsg.c): what the PS and workers read
 * off TCP from each other. An accepted header re-encodes to the same bytes' meaning. */
#include "tools/worker/psmsg.h"
#include "tests/fuzz/fuzz_common.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    if (size < PSMSG_HEADER_BYTES)
        return 0;
    PsMsg m;
    Error err;
    if (psmsg_decode_header(data, PSMSG_HEADER_BYTES, 1 << 20, &m, &err) == 0) {
        unsigned char again[PSMSG_HEADER_BYTES];
        psmsg_encode_header(&m, again);
        PsMsg m2;
        if (psmsg_decode_header(again, sizeof again, 1 << 20, &m2, &err) < 0 ||
            m2.type != m.type || m2.count != m.count || m2.iter != m.iter)
            abort();
        psmsg_type_name(m.type);
        size_t n = (size - PSMSG_HEADER_BYTES) / 8;
        if (n > m.count)
            n = (size_t)m.count;
        double *v = malloc((n ? n : 1) * sizeof *v);
        psmsg_decode_values(data + PSMSG_HEADER_BYTES, n, v);
        free(v);
    } else if (!err.msg[0]) {
        abort();
    }
    return 0;
}
