/* The median of a sample, for the benchmarks' tables (medians over seeds, rounds, frames). */
#ifndef TUNEDECK_MEDIAN_H
#define TUNEDECK_MEDIAN_H

#include <stddef.h>

/* Sorts v in place; the mean of the middle two when n is even; NAN when n is 0. */
double median_sorting(double *v, size_t n);

#endif
