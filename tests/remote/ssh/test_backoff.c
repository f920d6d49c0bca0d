#include <criterion/criterion.h>

#include "remote/ssh/backoff.h"

Test(backoff, doubles_until_the_cap)
{
    Backoff b = {500, 30000};
    /* u = 0.999999: the top of each jitter range, which is the capped exponential. */
    int64_t expect[] = {500, 1000, 2000, 4000, 8000, 16000, 30000, 30000, 30000};
    for (int a = 0; a < 9; a++) {
        int64_t d = backoff_delay_ms(&b, a, 0.999999);
        cr_assert(d <= expect[a] && d >= expect[a] - 1, "attempt %d: %lld", a, (long long)d);
    }
}

Test(backoff, jitter_stays_within_half_and_full)
{
    Backoff b = {1000, 60000};
    uint64_t rng = 42;
    for (int a = 0; a < 12; a++) {
        int64_t cap = 1000LL << (a < 6 ? a : 6);
        if (cap > 60000)
            cap = 60000;
        for (int k = 0; k < 200; k++) {
            int64_t d = backoff_delay_ms(&b, a, backoff_uniform(&rng));
            cr_assert(d >= cap / 2 && d <= cap, "attempt %d: %lld outside [%lld, %lld]", a,
                      (long long)d, (long long)cap / 2, (long long)cap);
        }
    }
}

Test(backoff, jitter_spreads_retries)
{
    Backoff b = {1000, 60000};
    uint64_t rng = 7;
    int64_t lo = 1 << 30, hi = 0;
    for (int k = 0; k < 500; k++) {
        int64_t d = backoff_delay_ms(&b, 3, backoff_uniform(&rng));
        lo = d < lo ? d : lo;
        hi = d > hi ? d : hi;
    }
    cr_assert(hi - lo > 3000, "500 retries all within %lld ms", (long long)(hi - lo));
}

Test(backoff, huge_attempt_does_not_overflow)
{
    Backoff b = {250, 10000};
    int64_t d = backoff_delay_ms(&b, 1000000, 0.5);
    cr_assert(d >= 5000 && d <= 10000);
}

Test(backoff, uniform_is_in_unit_interval)
{
    uint64_t s = 0;
    for (int i = 0; i < 10000; i++) {
        double u = backoff_uniform(&s);
        cr_assert(u >= 0 && u < 1);
    }
}
