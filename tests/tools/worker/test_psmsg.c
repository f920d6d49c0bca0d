#include <criterion/criterion.h>
#include <math.h>
#include <string.h>

#include "tools/worker/psmsg.h"

Test(psmsg, header_and_values_round_trip)
{
    PsMsg m = {.type = PSMSG_PUSH,
               .sender = 7,
               .inputs = 123,
               .iter = 1ULL << 40,
               .offset = 99,
               .count = 3,
               .compute_s = 0.125,
               .loss = -2.5e-3};
    unsigned char buf[PSMSG_HEADER_BYTES];
    psmsg_encode_header(&m, buf);
    PsMsg back;
    Error e;
    cr_assert_eq(psmsg_decode_header(buf, sizeof buf, 3, &back, &e), 0, "%s", e.msg);
    cr_assert_eq(back.type, PSMSG_PUSH);
    cr_assert_eq(back.sender, 7);
    cr_assert_eq(back.inputs, 123);
    cr_assert_eq(back.iter, 1ULL << 40);
    cr_assert_eq(back.offset, 99);
    cr_assert_eq(back.count, 3);
    cr_assert_eq(back.compute_s, 0.125);
    cr_assert_eq(back.loss, -2.5e-3);
    double v[3] = {1.0 / 3, -0.0, 1e-300}, w[3];
    unsigned char payload[24];
    psmsg_encode_values(v, 3, payload);
    psmsg_decode_values(payload, 3, w);
    cr_assert(memcmp(v, w, sizeof v) == 0);
    cr_assert_eq(payload[0], 0x55); /* little-endian: the low byte of 1/3 comes first */
}

static void expect_reject(unsigned char *buf, size_t len, size_t max, const char *frag)
{
    PsMsg m;
    Error e;
    cr_assert_eq(psmsg_decode_header(buf, len, max, &m, &e), -1, "accepted (%s)", frag);
    cr_assert(strstr(e.msg, frag), "message '%s' lacks '%s'", e.msg, frag);
}

Test(psmsg, bad_headers_are_refused_with_the_reason)
{
    PsMsg m = {.type = PSMSG_PARAMS, .count = 10};
    unsigned char buf[PSMSG_HEADER_BYTES], bad[PSMSG_HEADER_BYTES];
    psmsg_encode_header(&m, buf);
    expect_reject(buf, 10, 100, "header");
    memcpy(bad, buf, sizeof bad);
    bad[0] ^= 0xff;
    expect_reject(bad, sizeof bad, 100, "magic");
    memcpy(bad, buf, sizeof bad);
    bad[4] = 9;
    expect_reject(bad, sizeof bad, 100, "version");
    memcpy(bad, buf, sizeof bad);
    bad[6] = 0;
    expect_reject(bad, sizeof bad, 100, "type");
    memcpy(bad, buf, sizeof bad);
    bad[6] = 5;
    expect_reject(bad, sizeof bad, 100, "type");
    expect_reject(buf, sizeof buf, 9, "count");
    m.compute_s = NAN;
    psmsg_encode_header(&m, bad);
    expect_reject(bad, sizeof bad, 100, "finite");
}
