/* GSL random streams allocated without GSL's abort-on-failure handler. */
#include "core/base/rng.h"

#include <gsl/gsl_errno.h>

gsl_rng *rng_new(unsigned long seed)
{
    gsl_error_handler_t *old = gsl_set_error_handler_off();
    gsl_rng *r = gsl_rng_alloc(gsl_rng_mt19937);
    gsl_set_error_handler(old);
    if (r)
        gsl_rng_set(r, seed);
    return r;
}
