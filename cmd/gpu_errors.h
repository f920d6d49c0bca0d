/* The note `tunedeck hosts` puts on the row of a host with no error of its own but GPUs in
 * error: "GPU 2: error (memory.used: expected a number or [N/A], found '[GPU is lost]')", one
 * per GPU in error, "; " between. */
#ifndef TUNEDECK_GPU_ERRORS_H
#define TUNEDECK_GPU_ERRORS_H

#include <cJSON.h>
#include <stddef.h>

/* The note for a host's `gpu_list` (as `hosts --json` gives it) into out (cap bytes), each
 * entry made harmless for a terminal (termsafe). Only whole entries: those that do not fit are
 * counted, "; and N more" (it was cut at cap wherever it landed, mid-word). Returns out. */
const char *gpu_errors_text(const cJSON *gpu_list, char *out, size_t cap);

#endif
