/* Finds the shared object behind cblas_dgemm with dladdr and asks OpenBLAS for its build. */
#include "core/base/blas_info.h"

#include <dlfcn.h>
#include <gsl/gsl_cblas.h>
#include <stdio.h>
#include <string.h>

/* OpenBLAS's own entry points (its cblas.h declares them; GSL's does not). */
extern char *openblas_get_config(void);
extern char *openblas_get_corename(void);

int blas_info(BlasInfo *out)
{
    memset(out, 0, sizeof *out);
    Dl_info info;
    void (*dgemm)(void) = (void (*)(void))cblas_dgemm;
    void *addr;
    memcpy(&addr, &dgemm, sizeof addr); /* function to object pointer without a cast warning */
    if (dladdr(addr, &info) && info.dli_fname)
        snprintf(out->library, sizeof out->library, "%s", info.dli_fname);
    const char *base = strrchr(out->library, '/');
    base = base ? base + 1 : out->library;
    out->is_openblas = strncmp(base, "libopenblas", 11) == 0;
    snprintf(out->config, sizeof out->config, "%s", openblas_get_config());
    snprintf(out->corename, sizeof out->corename, "%s", openblas_get_corename());
    return out->is_openblas ? 0 : -1;
}
