/* Trial protocol v1 output lines (DESIGN §5.1): iteration, done, error and progress events;
 * anything that is not a JSON object is log text. Fields are data only, never commands. */
#ifndef TUNEDECK_PROTOCOL_H
#define TUNEDECK_PROTOCOL_H

#include <stddef.h>

#include "core/base/error.h"

typedef struct cJSON cJSON;

typedef enum { EVENT_LOG, EVENT_ITERATION, EVENT_DONE, EVENT_ERROR, EVENT_PROGRESS } EventKind;

typedef struct {
    char id[32];
    int inputs;
    double time_s;
} DeviceMeasure;

typedef struct {
    char name[128];
    double compute_s;      /* < 0 when not reported */
    DeviceMeasure *devices;
    size_t n_devices;
} MachineMeasure;

typedef struct {
    EventKind kind;
    /* iteration */
    int iter;
    double time_s;         /* iteration: its time; done: the objective. < 0 when absent */
    double comm_s;         /* < 0 when absent */
    MachineMeasure *machines;
    size_t n_machines;
    /* progress */
    long step;
    double epoch, examples_per_s; /* < 0 when absent */
    double loss;                  /* any finite value; NAN when absent (check isnan) */
    /* error message, or the raw line for EVENT_LOG */
    char *text;
} TrialEvent;

/* A training iteration takes at least a microsecond: 0 or a subnormal is a broken clock
 * and would become the best time. The least `time_s` a line, or a journal's ok trial, has. */
#define PROTOCOL_TIME_MIN_S 1e-6

/* Parses one line (without its newline). A line that is not a JSON object becomes
 * EVENT_LOG with the text kept; a JSON object with a bad or unknown event, or with a key
 * twice in one object, is an error. */
int protocol_parse_line(const char *line, TrialEvent *ev, Error *err);
/* The same for a line of `len` bytes that may hold a NUL byte (which would end the C string
 * there, the rest dropped unseen): a line that starts as a JSON object and holds one is a
 * protocol error naming the byte's position ("event line: expected JSON text, found a NUL
 * byte at byte 17"); log text with one is read up to it. */
int protocol_parse_line_n(const char *line, size_t len, TrialEvent *ev, Error *err);
void trial_event_clear(TrialEvent *ev);

/* Serialises an event as one JSON line (no trailing newline); caller frees. */
char *protocol_format(const TrialEvent *ev);

#endif
