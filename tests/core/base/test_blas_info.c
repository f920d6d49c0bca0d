#include <criterion/criterion.h>
#include <gsl/gsl_cblas.h>
#include <string.h>

#include "core/base/blas_info.h"

Test(blas, cblas_dgemm_resolves_into_openblas)
{
    BlasInfo b;
    int rc = blas_info(&b);
    cr_assert_eq(rc, 0, "cblas_dgemm comes from '%s', not libopenblas", b.library);
    cr_assert(strstr(b.library, "openblas"), "%s", b.library);
}

Test(blas, openblas_reports_its_build)
{
    BlasInfo b;
    blas_info(&b);
    cr_assert(strstr(b.config, "OpenBLAS"), "config '%s'", b.config);
    cr_assert(b.corename[0], "no core name");
}

Test(blas, dgemm_computes_a_product)
{
    double a[4] = {1, 2, 3, 4}, b[4] = {5, 6, 7, 8}, c[4] = {0};
    cblas_dgemm(CblasRowMajor, CblasNoTrans, CblasNoTrans, 2, 2, 2, 1.0, a, 2, b, 2, 0.0, c, 2);
    cr_assert(c[0] == 19 && c[1] == 22 && c[2] == 43 && c[3] == 50);
}
