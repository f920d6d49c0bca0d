/* A span of time for a person to read ("45s", "4m10s", "1h05m", "3d04h"), written once so
 * that the console's ETAs and the live scheduler's retry times read alike. */
#ifndef TUNEDECK_DURATION_H
#define TUNEDECK_DURATION_H

#include <stddef.h>

/* t_s rounded up to whole seconds (a wait "in 0s" would be one still to come): seconds below
 * a minute, minutes and seconds below an hour, hours and minutes below 100 hours, then days
 * and hours; each larger unit rounded up before it is split (7170 s is "2h00m", never
 * "1h60m"). At most 6 characters up to 99 days. Negative or not finite: "-". Returns buf. */
const char *duration_text(char *buf, size_t size, double t_s);

#endif
