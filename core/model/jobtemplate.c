/* Checking the job command template (jobtemplate.h). */
#include "core/model/jobtemplate.h"

#include <string.h>

static int known(const char *name, size_t n)
{
    static const char *const NAMES[] = {"gpus",        "hosts",    "resume",        "master_addr",
                                        "master_port", "nnodes",   "node_rank",     "gpus_per_host",
                                        "gpu_ids",     "hostfile", "hostfile_text", "host_slots"};
    for (size_t i = 0; i < sizeof NAMES / sizeof *NAMES; i++)
        if (strlen(NAMES[i]) == n && strncmp(NAMES[i], name, n) == 0)
            return 1;
    return 0;
}

/* Every {...} is a placeholder (as jobctl_command substitutes them); the shell's quoting is
 * followed as far as it matters here: '...' quotes everything, "..." everything but a
 * backslash escape, and a backslash outside quotes escapes one byte. */
int jobtemplate_check(const char *t, Error *err)
{
    char quote = 0;
    for (const char *p = t; *p; p++) {
        if (*p == '{') {
            const char *close = strchr(p, '}');
            if (!close)
                break; /* no placeholder: a lone '{' is the operator's text */
            size_t n = (size_t)(close - p - 1);
            /* Braces around what no placeholder is named like (awk's '{print $1}'): the
             * operator meant them literally, so say where they go instead. */
            int name_like = n > 0 && strspn(p + 1, "abcdefghijklmnopqrstuvwxyz0123456789_") >= n;
            if (!known(p + 1, n))
                return error_set(err,
                                 "unknown placeholder '{%.*s}': expected one of "
                                 JOBTEMPLATE_PLACEHOLDERS "%s",
                                 (int)n, p + 1,
                                 name_like ? "" : " (every {...} is a placeholder: put literal "
                                                  "braces in a script the command runs)");
            if (quote)
                return error_set(err,
                                 "placeholder '{%.*s}' inside %s quotes: tunedeck quotes every "
                                 "value itself, so write it outside quotes",
                                 (int)n, p + 1, quote == '"' ? "double" : "single");
            /* ${x} becomes $'value': bash reads that as $'...' quoting, where a backslash in
             * the value escapes the closing quote; sh reads a '$' and the value. */
            if (p > t && p[-1] == '$')
                return error_set(err,
                                 "placeholder '{%.*s}' after '$': tunedeck puts the quoted value "
                                 "there, and $'...' is quoting of its own in bash; write {%.*s} "
                                 "alone",
                                 (int)n, p + 1, (int)n, p + 1);
            p = close;
            continue;
        }
        if (quote == '\'') {
            if (*p == '\'')
                quote = 0;
            continue;
        }
        if (*p == '\\' && p[1]) {
            /* \{x} is still substituted, and the backslash then escapes the value's
             * opening quote: the value would reach the shell unquoted. */
            if (p[1] == '{' && strchr(p + 1, '}'))
                return error_set(err,
                                 "placeholder after a backslash ('\\{%.*s}'): the backslash "
                                 "would escape the quote tunedeck puts around the value; remove it",
                                 (int)(strchr(p + 1, '}') - p - 2), p + 2);
            p++;
            continue;
        }
        if (*p == '\'' || *p == '"')
            quote = quote == *p ? 0 : quote ? quote : *p;
    }
    return 0;
}
