/* Which BLAS the program runs on: the GP's speed depends on it being OpenBLAS (DESIGN §2.1,
 * issue 2), so the build can prove it rather than trust the link line. */
#ifndef TUNEDECK_BLAS_INFO_H
#define TUNEDECK_BLAS_INFO_H

#include <stddef.h>

typedef struct {
    int is_openblas;   /* cblas_dgemm resolves into a libopenblas shared object */
    char library[256]; /* the shared object that holds cblas_dgemm */
    char config[256];  /* openblas_get_config(), e.g. "OpenBLAS 0.3.21 DYNAMIC_ARCH ..." */
    char corename[64]; /* openblas_get_corename(), e.g. "Haswell" */
} BlasInfo;

/* Fills `out`; returns 0 when the BLAS in use is OpenBLAS, -1 otherwise. */
int blas_info(BlasInfo *out);

#endif
