#include <criterion/criterion.h>
#include <string.h>

#include "core/base/error.h"
#include "core/base/termsafe.h"

static const char *safe(const char *in)
{
    static char out[256];
    termsafe(out, sizeof out, in);
    return out;
}

Test(termsafe, printable_ascii_and_utf8_are_kept)
{
    cr_assert_str_eq(safe("h1: exit 0 [ok] ~ $x"), "h1: exit 0 [ok] ~ $x");
    cr_assert_str_eq(safe("µs → done ✓ 日本"), "µs → done ✓ 日本");
}

Test(termsafe, c0_controls_del_and_escape_become_caret_notation)
{
    cr_assert_str_eq(safe("ok\rfailed"), "ok^Mfailed");
    cr_assert_str_eq(safe("\x1b[2J\x1b]0;title\x07"), "^[[2J^[]0;title^G");
    cr_assert_str_eq(safe("a\bb\tc\nd\x7f"), "a^Hb^Ic^Jd^?");
}

Test(termsafe, c1_controls_and_invalid_utf8_are_shown_not_sent)
{
    /* U+009B is CSI in 8-bit terminals; U+0085 NEL moves to the next line. */
    cr_assert_str_eq(safe("x\xc2\x9b" "31my"), "x<U+009B>31my");
    cr_assert_str_eq(safe("\xc2\x85"), "<U+0085>");
    /* a raw C1 byte, an overlong '/', a surrogate, a truncated sequence */
    cr_assert_str_eq(safe("a\x9b" "b"), "a\\x9Bb");
    cr_assert_str_eq(safe("\xc0\xaf"), "\\xC0\\xAF");
    cr_assert_str_eq(safe("\xed\xa0\x80"), "\\xED\\xA0\\x80");
    cr_assert_str_eq(safe("end\xe2\x82"), "end\\xE2\\x82");
}

Test(termsafe, a_full_buffer_cuts_at_a_whole_placeholder)
{
    char out[6];
    cr_assert_eq(termsafe(out, sizeof out, "abcd\x1b" "e"), 4);
    cr_assert_str_eq(out, "abcd");
    char small[4];
    termsafe(small, sizeof small, "\xe6\x97\xa5\xe6\x97\xa5");
    cr_assert_str_eq(small, "\xe6\x97\xa5");
}

Test(termsafe, nul_bytes_in_counted_text_are_shown)
{
    char out[32];
    termsafe_n(out, sizeof out, "a\0b", 3);
    cr_assert_str_eq(out, "a^@b");
}

Test(termsafe, error_messages_that_echo_input_are_safe)
{
    Error err;
    error_set(&err, "expected a number, found '%s'", "1\r\x1b[31mok");
    cr_assert_str_eq(err.msg, "expected a number, found '1^M^[[31mok'");
    error_prefix(&err, "file '%s'", "a\x9b.json");
    cr_assert_str_eq(err.msg, "file 'a\\x9B.json': expected a number, found '1^M^[[31mok'");
}

/* A bidi override or isolate reorders what a terminal that lays out bidirectional text shows
 * (a trial's error could read as another row); line and paragraph separators may break the
 * line. Shown, not sent; ordinary right-to-left letters are kept. */
Test(termsafe, bidi_controls_and_unicode_line_breaks_are_shown_not_sent)
{
    cr_assert_str_eq(safe("failed\xe2\x80\xae" "ko"), "failed<U+202E>ko");
    cr_assert_str_eq(safe("a\xe2\x81\xa6" "b\xe2\x81\xa9"), "a<U+2066>b<U+2069>");
    cr_assert_str_eq(safe("x\xe2\x80\x8fy\xd8\x9c"), "x<U+200F>y<U+061C>");
    cr_assert_str_eq(safe("1\xe2\x80\xa8" "2\xe2\x80\xa9"), "1<U+2028>2<U+2029>");
    cr_assert_str_eq(safe("\xd7\xa9\xd7\x9c\xd7\x95\xd7\x9d"), "\xd7\xa9\xd7\x9c\xd7\x95\xd7\x9d");
}

/* A name refused for one character says which, whole and readably: the host check showed
 * '?' for any byte past ASCII, the machine check the first byte of it ('\xC3'). */
Test(termsafe, one_character_is_named_whole_with_its_code_point)
{
    char out[48];
    cr_assert_eq(termsafe_char(out, sizeof out, ";x"), 1);
    cr_assert_str_eq(out, "';'");
    cr_assert_eq(termsafe_char(out, sizeof out, "\xc3\xa8x"), 2);
    cr_assert_str_eq(out, "'\xc3\xa8' (U+00E8)");
    cr_assert_eq(termsafe_char(out, sizeof out, "\xe8x"), 1, "a Latin-1 byte, not UTF-8");
    cr_assert_str_eq(out, "'\\xE8'");
    cr_assert_eq(termsafe_char(out, sizeof out, "\xc3"), 1, "a sequence cut short");
    cr_assert_str_eq(out, "'\\xC3'");
    cr_assert_eq(termsafe_char(out, sizeof out, "\x01"), 1);
    cr_assert_str_eq(out, "'^A'");
    cr_assert_eq(termsafe_char(out, sizeof out, "\xe2\x80\xae"), 3);
    cr_assert_str_eq(out, "'<U+202E>'");
    cr_assert_eq(termsafe_char(out, sizeof out, "\xf0\x9f\x98\x80"), 4);
    cr_assert_str_eq(out, "'\xf0\x9f\x98\x80' (U+1F600)");
    cr_assert_eq(termsafe_char(out, sizeof out, ""), 0);
}
