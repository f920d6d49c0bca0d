/* Seeded random streams (GSL's Mersenne Twister) that follow core/'s out-of-memory policy:
 * GSL's default error handler aborts when an allocation fails, so the allocation runs with
 * it switched off and a failure comes back as NULL. */
#ifndef TUNEDECK_RNG_H
#define TUNEDECK_RNG_H

#include <gsl/gsl_rng.h>

/* A gsl_rng_mt19937 seeded with `seed`; NULL when out of memory. Free with gsl_rng_free. */
gsl_rng *rng_new(unsigned long seed);

#endif
