/* Fuzzes srun --label's lines read back per task (remote/launch/srunlabel.c): each input
 * line, its first byte choosing the stream, pushed as srun would write it. A task's output is
 * data only: nothing here may crash or leak; a line with no label comes out as it went in, and
 * a joined line never passes its bound by more than one piece. */
#include "remote/launch/srunlabel.h"
#include "tests/fuzz/fuzz_common.h"

enum { BOUND = 8192 };

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    char *text = fuzz_cstring(data, size);
    SrunLines *l = srunlines_new(BOUND);
    if (!l)
        abort();
    char *save = NULL;
    for (char *line = strtok_r(text, "\n", &save); line; line = strtok_r(NULL, "\n", &save)) {
        int stream = line[0] & 1;
        long task;
        const char *out;
        if (srunlines_push(l, stream, line + 1, &task, &out) == 0)
            continue;
        if (task < 0 && strcmp(out, line + 1) != 0)
            abort(); /* srun's own line, untouched */
        if (strlen(out) > BOUND + SRUNLABEL_PIECE)
            abort();
    }
    srunlines_free(l);
    free(text);
    return 0;
}
