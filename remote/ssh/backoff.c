/* Capped exponential backoff with equal jitter (AWS Architecture Blog, "Exponential Backoff
 * And Jitter", 2015): the delay never drops below half the capped exponential. */
#include "remote/ssh/backoff.h"

int64_t backoff_delay_ms(const Backoff *b, int attempt, double u)
{
    int64_t d = b->base_ms > 0 ? b->base_ms : 1;
    for (int i = 0; i < attempt && d < b->max_ms; i++)
        d *= 2;
    if (d > b->max_ms)
        d = b->max_ms;
    if (u < 0)
        u = 0;
    if (u >= 1)
        u = 0.999999;
    return d / 2 + (int64_t)((double)(d - d / 2) * u);
}

double backoff_uniform(uint64_t *state)
{
    uint64_t x = *state ? *state : 0x9e3779b97f4a7c15ull;
    x ^= x << 13;
    x ^= x >> 7;
    x ^= x << 17;
    *state = x;
    return (double)(x >> 11) / 9007199254740992.0;
}
