/* A trial's shared secret (tools/worker/psauth.h) from its schedule's "ps_secret", which
 * tunedeck's launchers add to every trial's input, and the wipe of its parsed copy. */
#ifndef TUNEDECK_TRIAL_SECRET_H
#define TUNEDECK_TRIAL_SECRET_H

#include <cJSON.h>

#include "core/base/error.h"
#include "core/base/secret.h"

/* secret gets the schedule's "ps_secret". Without one, a process that plays every machine
 * itself (may_make_one) makes its own; one machine of a per-host trial cannot (its peers on
 * other hosts would never agree with it), so that is an ERROR_INPUT naming source. */
int trial_secret_take(const cJSON *root, const char *source, int may_make_one,
                      unsigned char secret[SECRET_BYTES], Error *err);

/* Wipes the text of the parsed "ps_secret" (a copy of the secret; every one, should the key
 * appear twice) before cJSON_Delete hands its memory back to the heap. root may be NULL. */
void trial_secret_wipe_json(cJSON *root);

#endif
