/* A trial's shared secret from its schedule, and the wipe of its parsed copy (see
 * trial_secret.h). */
#include "tools/worker/trial_secret.h"

#include <string.h>

int trial_secret_take(const cJSON *root, const char *source, int may_make_one,
                      unsigned char secret[SECRET_BYTES], Error *err)
{
    const cJSON *j = cJSON_GetObjectItemCaseSensitive(root, "ps_secret");
    if (j && !cJSON_IsString(j)) {
        error_set(err, "%s: field 'ps_secret': expected a string of %d hex digits", source,
                  SECRET_HEX_CHARS);
        return error_mark(err, ERROR_INPUT);
    }
    if (j) {
        if (secret_from_hex(j->valuestring, secret, err) < 0) {
            error_prefix(err, "%s: field 'ps_secret'", source);
            return error_mark(err, ERROR_INPUT);
        }
        return 0;
    }
    if (may_make_one)
        return secret_random(secret, SECRET_BYTES, err);
    error_set(err,
              "%s: field 'ps_secret': expected the job's secret, which tunedeck adds to every "
              "trial's schedule: %d hex digits, the same for every machine of the trial, that "
              "its parameter servers ask every peer to prove (a schedule written by hand needs "
              "one, e.g. from: od -An -tx1 -N%d /dev/urandom | tr -d ' \\n')",
              source, SECRET_HEX_CHARS, SECRET_BYTES);
    return error_mark(err, ERROR_INPUT);
}

void trial_secret_wipe_json(cJSON *root)
{
    /* cJSON keeps a repeated key as a second item, which a look-up by name never finds */
    cJSON *item;
    cJSON_ArrayForEach(item, root)
    {
        if (item->string && strcmp(item->string, "ps_secret") == 0 && cJSON_IsString(item) &&
            item->valuestring)
            explicit_bzero(item->valuestring, strlen(item->valuestring));
    }
}
