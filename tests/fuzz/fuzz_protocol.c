/* Fuzzes trial protocol v1 output lines (core/model/protocol.c) and what is built from them (the
 * accumulator in core/model/observation.c): each input is a trial's standard output, line by line,
 * against setting B. Lines are data only: nothing here may crash, leak or run anything. */
#include "core/base/linebuf.h"
#include "core/model/observation.h"
#include "tests/fuzz/fuzz_common.h"

static void handle(TrialAccumulator *acc, char *line)
{
    TrialEvent ev;
    Error err;
    if (protocol_parse_line(line, &ev, &err) == 0) {
        char *back = protocol_format(&ev);
        TrialEvent ev2;
        if (!back || protocol_parse_line(back, &ev2, &err) < 0 || ev2.kind != ev.kind)
            abort(); /* what we print, we must read */
        trial_event_clear(&ev2);
        free(back);
        trial_accumulator_add(acc, &ev, &err);
        trial_event_clear(&ev);
    } else if (!err.msg[0]) {
        abort(); /* a refusal must say why */
    }
    free(line);
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    const SimCluster *sim = fuzz_sim();
    Schedule *s = schedule_new(simcluster_cluster(sim), simcluster_job(sim));
    TrialAccumulator *acc = trial_accumulator_new(s);
    LineBuf lb;
    linebuf_init(&lb, 1 << 16);
    /* In two pieces, so that line reassembly across reads is exercised too. */
    size_t half = size / 2;
    char *line;
    int cut;
    linebuf_append(&lb, (const char *)data, half);
    while ((line = linebuf_pop(&lb, &cut)))
        handle(acc, line);
    linebuf_append(&lb, (const char *)data + half, size - half);
    while ((line = linebuf_pop(&lb, &cut)))
        handle(acc, line);
    if ((line = linebuf_finish(&lb, &cut)))
        handle(acc, line);
    observation_free(trial_accumulator_finish(acc));
    trial_accumulator_free(acc);
    linebuf_clear(&lb);
    schedule_free(s);
    return 0;
}
