/* Strict decimal numbers: the grammar is checked here, strtol/strtod only convert it, since
 * on their own they take leading spaces, '+', hex, "inf" and "nan". */
#include "core/base/decimal.h"

#include <ctype.h>
#include <errno.h>
#include <math.h>
#include <stdlib.h>

static const char *skip_digits(const char *p)
{
    while (isdigit((unsigned char)*p))
        p++;
    return p;
}

int decimal_long(const char *text, long min, long max, long *out)
{
    const char *p = text + (*text == '-');
    if (!isdigit((unsigned char)*p) || *skip_digits(p))
        return -1;
    errno = 0;
    long v = strtol(text, NULL, 10);
    if (errno || v < min || v > max)
        return -1;
    *out = v;
    return 0;
}

int decimal_double(const char *text, double min, double max, double *out)
{
    const char *p = text + (*text == '-');
    const char *int_end = skip_digits(p);
    const char *q = int_end;
    if (*q == '.') {
        const char *frac_end = skip_digits(q + 1);
        if (int_end == p && frac_end == q + 1) /* "." alone */
            return -1;
        q = frac_end;
    } else if (int_end == p) {
        return -1;
    }
    if (*q == 'e' || *q == 'E') {
        const char *e = q + 1 + (q[1] == '+' || q[1] == '-');
        if (!isdigit((unsigned char)*e))
            return -1;
        q = skip_digits(e);
    }
    if (*q)
        return -1;
    errno = 0;
    double v = strtod(text, NULL);
    /* ERANGE on underflow gives a tiny or zero value the range check below judges. */
    if ((errno == ERANGE && fabs(v) > 1) || !isfinite(v) || v < min || v > max)
        return -1;
    *out = v;
    return 0;
}
