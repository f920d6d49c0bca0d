/* Clipped, role-styled drawing on stdscr. */
#include "tui/draw.h"

#include <curses.h>
#include <langinfo.h>
#include <math.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>

#include "core/base/termsafe.h"
#include "core/base/utf8.h"

static int unicode, locale_utf8;

void draw_init(int force_ascii)
{
    const char *cs = nl_langinfo(CODESET);
    locale_utf8 = cs && (strcasecmp(cs, "UTF-8") == 0 || strcasecmp(cs, "utf8") == 0);
    unicode = !force_ascii && locale_utf8;
}

int draw_unicode(void)
{
    return unicode;
}

void draw_wchar(int y, int x, wchar_t c, Role role)
{
    cchar_t cc;
    wchar_t s[2] = {c, 0};
    setcchar(&cc, s, (attr_t)theme_attr(role), 0, NULL);
    mvadd_wch(y, x, &cc);
}

void draw_fill(Rect r, Role role)
{
    attrset((attr_t)theme_attr(role));
    for (int y = r.y; y < r.y + r.h; y++)
        mvhline(y, r.x, ' ', r.w);
    attrset(A_NORMAL);
}

void draw_fill_around(Rect r, int cols, int rows)
{
    /* rows 1 to rows-2 only: the tab bar and the status line stay */
    Rect m = {r.x - 1, r.y > 1 ? r.y - 1 : 1, r.w + 2, 0};
    int bottom = r.y + r.h < rows - 1 ? r.y + r.h + 1 : rows - 1;
    m.h = bottom - m.y;
    if (m.x < 0) {
        m.x = 0;
        m.w = cols;
    }
    if (m.x + m.w > cols)
        m.w = cols - m.x;
    draw_fill(m, ROLE_NORMAL);
}

Rect draw_box(Rect r, const char *title, int focused)
{
    if (r.w < 2 || r.h < 2)
        return (Rect){r.x, r.y, 0, 0};
    Role b = focused ? ROLE_TITLE : ROLE_BORDER;
    attrset((attr_t)theme_attr(b));
    if (unicode) {
        mvadd_wch(r.y, r.x, WACS_ULCORNER);
        mvadd_wch(r.y, r.x + r.w - 1, WACS_URCORNER);
        mvadd_wch(r.y + r.h - 1, r.x, WACS_LLCORNER);
        mvadd_wch(r.y + r.h - 1, r.x + r.w - 1, WACS_LRCORNER);
        mvhline_set(r.y, r.x + 1, WACS_HLINE, r.w - 2);
        mvhline_set(r.y + r.h - 1, r.x + 1, WACS_HLINE, r.w - 2);
        mvvline_set(r.y + 1, r.x, WACS_VLINE, r.h - 2);
        mvvline_set(r.y + 1, r.x + r.w - 1, WACS_VLINE, r.h - 2);
    } else {
        mvaddch(r.y, r.x, '+');
        mvaddch(r.y, r.x + r.w - 1, '+');
        mvaddch(r.y + r.h - 1, r.x, '+');
        mvaddch(r.y + r.h - 1, r.x + r.w - 1, '+');
        mvhline(r.y, r.x + 1, '-', r.w - 2);
        mvhline(r.y + r.h - 1, r.x + 1, '-', r.w - 2);
        mvvline(r.y + 1, r.x, '|', r.h - 2);
        mvvline(r.y + 1, r.x + r.w - 1, '|', r.h - 2);
    }
    attrset(A_NORMAL);
    if (title && r.w > 4) {
        char t[256];
        snprintf(t, sizeof t, " %s ", title);
        draw_text(r.y, r.x + 1, r.w - 2, ROLE_TITLE, t);
    }
    return (Rect){r.x + 1, r.y + 1, r.w - 2, r.h - 2};
}

/* The character at s (len > 0 bytes left) into *c, its columns into *cols; returns its
 * bytes. Columns as draw_text shows them, so that a width measured here is the one drawn:
 * a control in caret notation (^[, two columns) and a C1 or bidirectional control as
 * <U+XXXX> (eight), as termsafe writes them; an ill-formed stretch of UTF-8 as one '?' per
 * maximal subpart, as utf8.h reads it (where jsonprint writes one U+FFFD), in every locale;
 * and in a locale that is not UTF-8 (LANG=C, an 8-bit one) a whole UTF-8 character it cannot
 * show as one '?' (a name keeps its columns). */
static size_t char_at(const char *s, size_t len, mbstate_t *st, wchar_t *c, int *cols)
{
    unsigned char b = (unsigned char)s[0];
    if (b < 0x20 || b == 0x7F) {
        *c = L'^';
        *cols = 2;
        return 1;
    }
    int cp = 0;
    size_t seq = b < 0x80 ? 1 : utf8_next(s, len, &cp);
    if (cp == UTF8_INVALID) {
        memset(st, 0, sizeof *st);
        *c = L'?';
        *cols = 1;
        return seq;
    }
    if (b >= 0x80 && (cp <= 0x9F || termsafe_reorders((unsigned)cp))) {
        *c = L'<';
        *cols = (int)strlen("<U+0000>");
        return seq;
    }
    /* A single-byte locale (C, ISO-8859-1) takes any byte as a character of its own: its
     * mbrtowc read "é" (C3 A9) as "Ã" and a stray byte, two columns where one '?' is
     * promised. */
    if (b >= 0x80 && MB_CUR_MAX == 1) {
        memset(st, 0, sizeof *st);
        *c = L'?';
        *cols = 1;
        return seq;
    }
    size_t n = mbrtowc(c, s, len, st);
    if (n == (size_t)-1 || n == (size_t)-2 || n == 0) {
        memset(st, 0, sizeof *st);
        *c = L'?';
        *cols = 1;
        return seq;
    }
    /* A multibyte locale other than UTF-8 (GB18030, Big5) reads the UTF-8 bytes as its own
     * characters of other lengths: "\xe3\x81\x82" as E3 81 and a stray 82. The text is
     * UTF-8, so a character is cut where UTF-8 cuts it, or draw_text (which escapes each unit
     * on its own: E3 81 as \xE3\x81) and draw_width disagree. */
    if (b >= 0x80 && n != seq) {
        memset(st, 0, sizeof *st);
        *c = L'?';
        *cols = 1;
        return seq;
    }
    int cw = wcwidth(*c);
    *cols = cw < 0 ? 1 : cw;
    return n;
}

/* in with each maximal subpart of an ill-formed UTF-8 stretch as one '?' (what char_at
 * counts), for termsafe, which would show each such byte as \xHH; cut at a whole
 * character to fit cap. */
static void ill_formed_as_question_marks(char *out, size_t cap, const char *in)
{
    size_t o = 0;
    for (size_t at = 0, len = strlen(in); at < len;) {
        int cp = 0;
        size_t n = (unsigned char)in[at] < 0x80 ? 1 : utf8_next(in + at, len - at, &cp);
        size_t put = cp == UTF8_INVALID ? 1 : n;
        if (o + put + 1 > cap)
            break;
        if (cp == UTF8_INVALID)
            out[o] = '?';
        else
            memcpy(out + o, in + at, n);
        o += put;
        at += n;
    }
    out[o] = 0;
}

int draw_text(int y, int x, int w, Role role, const char *text)
{
    if (w <= 0)
        return 0;
    /* Whatever the text holds (a trial's error, a host's message), it cannot move the
     * cursor or start an escape sequence: a \r would otherwise rewrite the row. */
    char whole[2048];
    ill_formed_as_question_marks(whole, sizeof whole, text);
    /* Count columns, not bytes; character by character, so that what the locale cannot
     * show (a UTF-8 name under LANG=C) is a '?' rather than the whole text lost. Each raw
     * character is escaped on its own and its escape's first wide character marked, so
     * that a cut never halves an escape (^[ or <U+0085>) into a bare ^ or <U. */
    wchar_t buf[512];
    int widths[512] = {0}; /* cppcheck cannot tell that only the first n are read */
    unsigned char starts[512] = {0};
    size_t n = 0, len = strlen(whole);
    mbstate_t raw_st = {0}, st = {0};
    for (size_t at = 0; at < len;) {
        wchar_t c;
        int cw;
        size_t unit = char_at(whole + at, len - at, &raw_st, &c, &cw);
        char safe[64];
        size_t sl = termsafe_n(safe, sizeof safe, whole + at, unit);
        if (n + sl > 511) /* bytes bound its wide characters: a unit is kept whole or not */
            break;
        for (size_t e = 0, first = n; e < sl; n++) {
            e += char_at(safe + e, sl - e, &st, &buf[n], &widths[n]);
            starts[n] = n == first;
        }
        at += unit;
    }
    buf[n] = 0;
    int cols = 0;
    size_t k = 0;
    while (k < n) {
        size_t end = k + 1;
        int unit_w = widths[k];
        while (end < n && !starts[end])
            unit_w += widths[end++];
        if (cols + unit_w > w)
            break;
        cols += unit_w;
        k = end;
    }
    /* Text cut short ends in an ellipsis, so that a cut name or note never reads as whole;
     * padding cut at a pane's edge is no loss. */
    size_t rest = k;
    while (rest < n && buf[rest] == L' ')
        rest++;
    if (rest < n && w >= 2) {
        while (k > 0 && cols + 1 > w)
            do
                cols -= widths[--k];
            while (k > 0 && !starts[k]);
        buf[k++] = unicode ? L'\x2026' : L'~';
        cols++;
    }
    attrset((attr_t)theme_attr(role));
    mvaddnwstr(y, x, buf, (int)k);
    attrset(A_NORMAL);
    return cols;
}

const char *draw_fit_name(char *out, size_t cap, const char *name, int w)
{
    if (cap)
        out[0] = 0;
    if (w <= 0 || cap < 8)
        return out;
    size_t len = strlen(name);
    int total = draw_width(name);
    if (total <= w) {
        snprintf(out, cap, "%s", name);
        return out;
    }
    /* Columns, not bytes: a wide (CJK) character takes two, a combining mark none, and a
     * cut never falls inside a character nor between one and its marks. The tail gets the
     * larger half: names of one cluster differ at their end (node-0 ... node-15,
     * resnet110-0 ... resnet110-39). */
    int head_w = w < 3 ? w : (w - 1) / 2, used = 0;
    mbstate_t st = {0};
    size_t head = 0;
    while (head < len) {
        wchar_t c;
        int cw;
        size_t n = char_at(name + head, len - head, &st, &c, &cw);
        if (used + cw > head_w)
            break;
        used += cw;
        head += n;
    }
    if (w < 3) {
        snprintf(out, cap, "%.*s", (int)head, name);
        return out;
    }
    /* the tail: from the first character (not a mark) whose rest fits what the head left */
    int tail_w = w - 1 - used, before = used;
    size_t t = head;
    while (t < len) {
        wchar_t c;
        int cw;
        size_t n = char_at(name + t, len - t, &st, &c, &cw);
        if (total - before <= tail_w && cw > 0)
            break;
        before += cw;
        t += n;
    }
    snprintf(out, cap, "%.*s%s%s", (int)head, name, unicode ? "\xe2\x80\xa6" : "~", name + t);
    return out;
}

const char *draw_fit_cell(char *out, size_t cap, const char *name, int w)
{
    draw_fit_name(out, cap, name, w);
    size_t n = strlen(out);
    for (int cols = draw_width(out); cols < w && n + 1 < cap; cols++)
        out[n++] = ' ';
    if (cap)
        out[n] = 0;
    return out;
}

int draw_textf(int y, int x, int w, Role role, const char *fmt, ...)
{
    char buf[1024];
    va_list ap;
    va_start(ap, fmt);
    vsnprintf(buf, sizeof buf, fmt, ap);
    va_end(ap);
    return draw_text(y, x, w, role, buf);
}

const char *draw_tail_cols(const char *text, int w)
{
    int cols = draw_width(text);
    mbstate_t st = {0};
    for (size_t len = strlen(text); len && cols > (w > 0 ? w : 0);) {
        wchar_t c;
        int cw;
        size_t n = char_at(text, len, &st, &c, &cw);
        text += n;
        len -= n;
        cols -= cw;
    }
    while (*text) { /* never a combining mark without its character */
        wchar_t c;
        int cw;
        memset(&st, 0, sizeof st);
        size_t n = char_at(text, strlen(text), &st, &c, &cw);
        if (cw > 0)
            break;
        text += n;
    }
    return text;
}

const char *draw_fit_tail(const char *text, int w)
{
    const char *bar;
    while (draw_width(text) > w && (bar = strchr(text + 1, '|')))
        text = bar + 1; /* the space before the next field stays, as a margin */
    /* the last field (the state) alone too wide: the word without the margin before it, or
     * nothing; a fragment ("g" of "tuning" at 30 columns) reads as a word of its own */
    if (draw_width(text) > w && text[0] == ' ')
        text++;
    return draw_width(text) <= w ? text : text + strlen(text);
}

int draw_width(const char *text)
{
    mbstate_t st = {0};
    int cols = 0;
    for (size_t at = 0, len = strlen(text); at < len;) {
        wchar_t c;
        int cw;
        at += char_at(text + at, len - at, &st, &c, &cw);
        cols += cw;
    }
    return cols;
}

/* Where a line of at most w columns of text ends (text[len] is its end): after the last
 * space that fits, else at the last whole character that fits (never inside one, which
 * would leave the line undrawable). Counts columns, so a note in another script wraps where
 * the terminal does. */
static size_t wrap_cut(const char *text, size_t len, int w)
{
    mbstate_t st = {0};
    size_t at = 0, space = 0, fits = 0, first = 1;
    int cols = 0;
    while (at < len) {
        wchar_t c;
        int cw;
        size_t n = char_at(text + at, len - at, &st, &c, &cw);
        if (at == 0)
            first = n;
        cols += cw;
        if (cols > w)
            break;
        if (c == L' ')
            space = at;
        at += n;
        fits = at;
    }
    if (at >= len)
        return len;
    if (text[at] == ' ')
        return at; /* the line ends just before a space */
    if (space)
        return space;
    return fits ? fits : first; /* a character wider than the line goes whole, and on */
}

/* The same walk for drawing and for counting (y < 0: count only). */
static int wrap(int y, int x, int w, int max_lines, Role role, const char *text)
{
    int lines = 0;
    size_t len = strlen(text);
    while (len && lines < max_lines && w > 0) {
        if (lines == max_lines - 1 && draw_width(text) > w) {
            /* The last line allowed takes the rest, cut with an ellipsis: words wrapped
             * away past it would be lost without a sign. */
            if (y >= 0)
                draw_text(y + lines, x, w, role, text);
            return lines + 1;
        }
        size_t cut = wrap_cut(text, len, w);
        if (y >= 0) {
            char line[512];
            snprintf(line, sizeof line, "%.*s", (int)(cut < sizeof line ? cut : sizeof line - 1),
                     text);
            draw_text(y + lines, x, w, role, line);
        }
        lines++;
        text += cut;
        len -= cut;
        while (*text == ' ') {
            text++;
            len--;
        }
    }
    return lines;
}

int draw_wrapped(int y, int x, int w, int max_lines, Role role, const char *text)
{
    return y < 0 ? 0 : wrap(y, x, w, max_lines, role, text);
}

int draw_wrapped_lines(int w, int max_lines, const char *text)
{
    return wrap(-1, 0, w, max_lines, ROLE_NORMAL, text);
}

int draw_note_lines(const char *note, int room, int w, int indent, int max_lines)
{
    if (!note[0] || draw_width(note) <= room)
        return 0;
    return draw_wrapped_lines(w - indent, max_lines, note);
}

int draw_note_below(int y, int x, int w, int indent, int lines, Role role, const char *note)
{
    if (lines <= 0 || indent < 2)
        return 0;
    draw_wchar(y, x + indent - 2, unicode ? L'\x21b3' : L'>', ROLE_DIM);
    return draw_wrapped(y, x + indent, w - indent, lines, role, note);
}

void draw_bar(int y, int x, int w, double frac, Role role)
{
    if (w <= 0)
        return;
    if (!isfinite(frac) || frac < 0)
        frac = 0;
    if (frac > 1)
        frac = 1;
    int eighths = (int)lround(frac * w * 8);
    static const wchar_t PART[8] = {L' ',      L'\x258f', L'\x258e', L'\x258d',
                                    L'\x258c', L'\x258b', L'\x258a', L'\x2589'};
    for (int i = 0; i < w; i++) {
        int e = eighths - i * 8;
        if (e >= 8)
            draw_wchar(y, x + i, unicode ? L'\x2588' : L'#', role);
        else if (e > 0)
            draw_wchar(y, x + i, unicode ? PART[e] : L'#', role);
        else
            draw_wchar(y, x + i, unicode ? L'\x00b7' : L'.', ROLE_DIM);
    }
}

void draw_range_bar(int y, int x, int w, double lo, double mean, double hi, Role mean_role,
                    Role spread_role)
{
    if (w <= 0)
        return;
    draw_bar(y, x, w, mean, mean_role);
    if (!isfinite(lo) || !isfinite(hi))
        return;
    int a = (int)lround(fmax(0, fmin(1, lo)) * w);
    int b = (int)lround(fmax(0, fmin(1, hi)) * w);
    int m = (int)lround(fmax(0, fmin(1, mean)) * w);
    /* The spread beyond the mean: a thin line to p90, and a tick at p10. */
    for (int i = m; i < b && i < w; i++)
        draw_wchar(y, x + i, unicode ? L'\x2500' : L'-', spread_role);
    if (b > 0 && b <= w)
        draw_wchar(y, x + b - 1, unicode ? L'\x2524' : L'|', spread_role);
    if (a >= 0 && a < w && a < m)
        draw_wchar(y, x + a, unicode ? L'\x2502' : L'|', spread_role);
}
