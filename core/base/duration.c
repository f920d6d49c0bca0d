/* Spans of time in h/m/s for a person (duration.h). */
#include "core/base/duration.h"

#include <math.h>
#include <stdio.h>

const char *duration_text(char *buf, size_t size, double t_s)
{
    if (!size)
        return buf;
    if (!isfinite(t_s) || t_s < 0) {
        snprintf(buf, size, "-");
        return buf;
    }
    /* past any span a job or a lift takes: kept off the long arithmetic */
    double s_up = ceil(t_s);
    long s = s_up < 1e12 ? (long)s_up : 1000000000000L;
    if (s < 60) {
        snprintf(buf, size, "%lds", s);
    } else if (s < 3600) {
        snprintf(buf, size, "%ldm%02lds", s / 60, s % 60);
    } else {
        long m = (s + 59) / 60;
        if (m < 100 * 60) {
            snprintf(buf, size, "%ldh%02ldm", m / 60, m % 60);
        } else {
            long h = (m + 59) / 60;
            snprintf(buf, size, "%ldd%02ldh", h / 24, h % 24);
        }
    }
    return buf;
}
