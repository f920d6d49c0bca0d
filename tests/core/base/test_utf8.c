/* UTF-8 read one character at a time: well-formed sequences give their code point, and each
 * ill-formed class is cut into maximal subparts as The Unicode Standard §3.9 (Table 3-8)
 * shows, one U+FFFD each. */
#include <criterion/criterion.h>
#include <stdio.h>
#include <string.h>

#include "core/base/utf8.h"

/* The text read through: each code point as U+XXXX, each maximal subpart as FFFD/N (its
 * bytes), space-separated. */
static const char *read_all(const char *s, size_t n)
{
    static char out[512];
    size_t at = 0, o = 0;
    out[0] = 0;
    while (at < n) {
        int cp;
        size_t len = utf8_next(s + at, n - at, &cp);
        cr_assert(len >= 1 && len <= 4 && len <= n - at);
        if (cp == UTF8_INVALID)
            o += (size_t)snprintf(out + o, sizeof out - o, "%sFFFD/%zu", o ? " " : "", len);
        else
            o += (size_t)snprintf(out + o, sizeof out - o, "%sU+%04X", o ? " " : "", cp);
        at += len;
    }
    return out;
}

#define READS(bytes, want) cr_assert_str_eq(read_all(bytes, sizeof bytes - 1), want)

Test(utf8, well_formed_sequences_give_their_code_points)
{
    READS("a\x7f", "U+0061 U+007F");
    READS("\xc2\x80\xdf\xbf", "U+0080 U+07FF");
    READS("\xe0\xa0\x80\xed\x9f\xbf\xee\x80\x80\xef\xbf\xbf", "U+0800 U+D7FF U+E000 U+FFFF");
    READS("\xf0\x90\x80\x80\xf4\x8f\xbf\xbf", "U+10000 U+10FFFF");
}

Test(utf8, a_nul_is_a_character)
{
    READS("\0a", "U+0000 U+0061");
}

Test(utf8, lone_continuation_bytes_are_one_replacement_each)
{
    READS("\x80\xbf\x80", "FFFD/1 FFFD/1 FFFD/1");
}

Test(utf8, bytes_that_never_start_a_sequence_are_one_replacement_each)
{
    READS("\xc0\xc1\xf5\xf8\xfc\xfe\xff", "FFFD/1 FFFD/1 FFFD/1 FFFD/1 FFFD/1 FFFD/1 FFFD/1");
}

Test(utf8, overlong_forms_are_one_replacement_per_byte)
{
    READS("\xc0\xaf", "FFFD/1 FFFD/1");                       /* '/' in 2 bytes */
    READS("\xe0\x80\xaf", "FFFD/1 FFFD/1 FFFD/1");            /* in 3 */
    READS("\xf0\x80\x80\xaf", "FFFD/1 FFFD/1 FFFD/1 FFFD/1"); /* in 4 */
    READS("\xe0\x9f\xbf", "FFFD/1 FFFD/1 FFFD/1");            /* U+07FF in 3 */
}

Test(utf8, encoded_surrogates_are_one_replacement_per_byte)
{
    READS("\xed\xa0\x80", "FFFD/1 FFFD/1 FFFD/1");                                  /* U+D800 */
    READS("\xed\xbf\xbf", "FFFD/1 FFFD/1 FFFD/1");                                  /* U+DFFF */
    READS("\xed\xa0\xbd\xed\xb8\x80", "FFFD/1 FFFD/1 FFFD/1 FFFD/1 FFFD/1 FFFD/1"); /* a pair */
}

Test(utf8, code_points_past_u10ffff_are_one_replacement_per_byte)
{
    READS("\xf4\x90\x80\x80", "FFFD/1 FFFD/1 FFFD/1 FFFD/1");
    READS("\xf7\xbf\xbf\xbf", "FFFD/1 FFFD/1 FFFD/1 FFFD/1");
}

Test(utf8, a_truncated_sequence_is_one_replacement)
{
    READS("\xc3"
          "a",
          "FFFD/1 U+0061");
    READS("\xe2\x82"
          "a",
          "FFFD/2 U+0061");
    READS("\xf0\x9f\x98"
          "a",
          "FFFD/3 U+0061");
    READS("\xf0\x9f"
          "\xe2\x82\xac",
          "FFFD/2 U+20AC");
    READS("\xe2\x82\xe2\x82", "FFFD/2 FFFD/2");
}

Test(utf8, a_sequence_cut_by_the_end_of_the_text_is_one_replacement)
{
    READS("\xf0\x9f\x98", "FFFD/3");
    cr_assert_str_eq(read_all("\xe2\x82\xac", 2), "FFFD/2"); /* n stops it, not the bytes */
}

/* The Unicode Standard 15.0, Table 3-8: "61 F1 80 80 E1 80 C2 62 80 63 80 BF 64" reads as
 * a, FFFD, FFFD, FFFD, b, FFFD, c, FFFD, FFFD, d. */
Test(utf8, the_standards_own_example)
{
    READS("\x61\xf1\x80\x80\xe1\x80\xc2\x62\x80\x63\x80\xbf\x64",
          "U+0061 FFFD/3 FFFD/2 FFFD/1 U+0062 FFFD/1 U+0063 FFFD/1 FFFD/1 U+0064");
}

Test(utf8, the_valid_length_stops_at_the_first_ill_formed_byte)
{
    cr_assert_eq(utf8_valid_len("caf\xc3\xa9", 5), 5);
    cr_assert_eq(utf8_valid_len("caf\xc3\xa9\xff"
                                "x",
                                7),
                 5);
    cr_assert_eq(utf8_valid_len("ab\xe2\x82", 4), 2);
    cr_assert_eq(utf8_valid_len("", 0), 0);
}
