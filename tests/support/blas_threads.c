/* One BLAS thread in every test process. Criterion starts each test in a fresh process of this
 * binary, and OpenBLAS starts its thread pool when it loads; the tests' matrices are far below
 * the size where OpenBLAS splits work, so the pool's threads only spin in sched_yield: about a
 * quarter of the unit run's CPU time. The runner sets the variable before it starts any test,
 * so each test process (and each program a test runs) reads it when OpenBLAS loads there. An
 * OPENBLAS_NUM_THREADS given from outside is kept. */
#include <stdlib.h>

__attribute__((constructor)) static void one_blas_thread(void)
{
    setenv("OPENBLAS_NUM_THREADS", "1", 0);
}
