/* English number agreement in messages ("1 GPU", "2 GPUs"; "it is", "they are"), written
 * once so that every message counts the same way. */
#ifndef TUNEDECK_PLURAL_H
#define TUNEDECK_PLURAL_H

/* "" when n is 1, else "s": the tail of a regular noun after a count (also 0 and negatives,
 * "0 GPUs"). */
const char *plural_s(long long n);

/* `one` when n is 1, else `many`: an irregular word that agrees with a count. */
const char *plural_of(long long n, const char *one, const char *many);

#endif
