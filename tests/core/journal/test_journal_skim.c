/* The skim of a journal line (core/journal/journal_skim.c) vouches only for lines the whole
 * parse takes, with the same values: checked on a real journal's lines, on hand-made edge
 * cases and on 20,000 random damages of real lines. */
#include <criterion/criterion.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "core/journal/journal.h"
#include "core/journal/journal_skim.h"
#include "tests/support/fixtures.h"

static const char *const KEYS[] = {"created", "optimizer", "sim",    "cluster", "budget",
                                   "trial",   "status",    "time_s", "stopped", "reason"};
#define N_KEYS (sizeof KEYS / sizeof KEYS[0])

/* The skim's answer for one line; when it vouches, the whole parse must take the line and
 * give each key it kept the same value. Returns the skim's answer. */
static int check(const char *line, size_t len, const char *what)
{
    cJSON *mini = NULL, *whole = NULL;
    Error err;
    int skim = journal_skim_line(line, len, KEYS, N_KEYS, &mini);
    int parsed = journal_parse_line(line, len, &whole, &err) == 0;
    if (skim) {
        cr_assert(parsed, "%s: skimmed, but the parse refuses it: %s\n%.*s", what, err.msg,
                  (int)len, line);
        cr_assert_str_eq(cJSON_GetObjectItemCaseSensitive(mini, "event")->valuestring,
                         cJSON_GetObjectItemCaseSensitive(whole, "event")->valuestring);
        for (size_t k = 0; k < N_KEYS; k++) {
            const cJSON *a = cJSON_GetObjectItemCaseSensitive(mini, KEYS[k]);
            const cJSON *b = cJSON_GetObjectItemCaseSensitive(whole, KEYS[k]);
            cr_assert_eq(a == NULL, b == NULL, "%s: key %s", what, KEYS[k]);
            if (!a)
                continue;
            cr_assert_eq(a->type & 0xff, b->type & 0xff, "%s: key %s", what, KEYS[k]);
            if (cJSON_IsNumber(a))
                cr_assert(memcmp(&a->valuedouble, &b->valuedouble, sizeof(double)) == 0,
                          "%s: %s %.17g against %.17g", what, KEYS[k], a->valuedouble,
                          b->valuedouble);
            if (cJSON_IsString(a))
                cr_assert_str_eq(a->valuestring, b->valuestring, "%s: %s", what, KEYS[k]);
            if (cJSON_IsObject(a) || cJSON_IsArray(a)) { /* parsed alone from its characters */
                char *pa = cJSON_PrintUnformatted(a), *pb = cJSON_PrintUnformatted(b);
                cr_assert_str_eq(pa, pb, "%s: %s", what, KEYS[k]);
                free(pa);
                free(pb);
            }
        }
    }
    cJSON_Delete(mini);
    cJSON_Delete(whole);
    return skim;
}

static int check_str(const char *line)
{
    return check(line, strlen(line), line);
}

Test(journal_skim, edge_cases_are_vouched_for_only_where_the_parse_takes_them)
{
    cr_assert(check_str("{\"event\":\"started\",\"trial\":3,\"wall_s\":1795791149}"));
    cr_assert(check_str("{\"event\":\"x\",\"time_s\":-0.5e-3,\"note\":\"a\\\"b\"} \r\t"));
    cr_assert(check_str("{ \"event\" : \"x\" , \"a\" : [ 1 , { } , [ ] , null , true ] }"));
    cr_assert(check_str("{\"event\":\"x\",\"budget\":1e999}")); /* inf, as cJSON reads it */
    cr_assert_not(check_str(" {\"event\":\"x\"}"));             /* a leading blank */
    cr_assert_not(check_str("{\"event\":\"x\"} x"));
    cr_assert_not(check_str("{\"event\":\"x\",\"event\":\"y\"}"));
    cr_assert_not(check_str("{\"event\":\"x\",\"a\":{\"b\":1,\"b\":2}}"));
    cr_assert_not(check_str("{\"event\":\"x\",\"a\":[{\"b\":1,\"b\":2}]}"));
    cr_assert_not(check_str("{\"event\":\"x\",\"r\":\"\\u00e9\"}"));
    cr_assert_not(check_str("{\"event\":\"x\",\"r\":\"\\ud800\"}"));
    cr_assert_not(check_str("{\"event\":\"x\",\"r\":\"a\x01\"}"));
    cr_assert_not(check_str("{\"event\":\"x\",\"trial\":01}"));
    cr_assert_not(check_str("{\"event\":\"x\",\"trial\":1.}"));
    cr_assert_not(check_str("{\"event\":\"x\",\"trial\":+1}"));
    cr_assert_not(check_str("{\"event\":\"x\",\"trial\":.5}"));
    cr_assert_not(check_str("{\"event\":\"x\",\"trial\":1,}"));
    cr_assert_not(check_str("{\"event\":3}"));
    cr_assert_not(check_str("{\"trial\":3}"));
    cr_assert_not(check_str("{\"ev\\nt\":\"x\",\"event\":\"x\"}")); /* an escaped key */
    /* asked for, an object, an array or an escaped string is parsed alone */
    cr_assert(check_str("{\"event\":\"x\",\"cluster\":{\"name\":\"c\",\"m\":[1,null]}}"));
    cr_assert(check_str("{\"event\":\"x\",\"cluster\":[{\"a\":\"b\\\"c\"},[]],\"trial\":2}"));
    cr_assert(check_str("{\"event\":\"x\",\"reason\":\"a\\tb\\\\\"}"));
    cr_assert_not(check_str("{\"event\":\"x\",\"cluster\":{\"r\":\"\\u00e9\"}}"));
    cr_assert_not(check_str("[1]"));
    cr_assert_not(check_str("{\"event\":\"x\",\"n\":tru}"));
    char nul[] = "{\"event\":\"x\",\"r\":\"a\0b\"}";
    cr_assert_not(check(nul, sizeof nul - 1, "a NUL byte"));
    char deep[400];
    size_t d = 0;
    d += (size_t)sprintf(deep, "{\"event\":\"x\",\"a\":");
    for (int i = 0; i < 100; i++)
        deep[d++] = '[';
    for (int i = 0; i < 100; i++)
        deep[d++] = ']';
    deep[d++] = '}';
    cr_assert_not(check(deep, d, "deep"));
}

static unsigned next(unsigned *s)
{
    *s ^= *s << 13;
    *s ^= *s >> 17;
    *s ^= *s << 5;
    return *s;
}

Test(journal_skim, real_lines_and_their_damages_are_skimmed_only_where_parsed_alike)
{
    char *text = fixture_read("journals/a-alexnet-resumed.jsonl");
    const char *line[64];
    size_t len[64], n = 0, skimmed = 0;
    for (char *p = text; *p && n < 64;) {
        char *nl = strchr(p, '\n');
        if (!nl)
            break;
        line[n] = p;
        len[n] = (size_t)(nl - p);
        skimmed += (size_t)check(p, len[n], "fixture line");
        n++;
        p = nl + 1;
    }
    /* every line is plain, the session line's cluster (an object) too */
    cr_assert_eq(skimmed, n, "%zu of %zu lines skimmed", skimmed, n);
    static const char B[] = "{}[]\",:0123456789.eE+-\\/ u\ta\x01\x80";
    char buf[8192];
    size_t vouched = 0;
    for (unsigned seed = 1; seed <= 20000; seed++) {
        unsigned r = seed * 2654435761u | 1;
        size_t i = next(&r) % n, l = len[i];
        if (l >= sizeof buf - 64)
            continue;
        memcpy(buf, line[i], l);
        int edits = 1 + (int)(next(&r) % 3);
        for (int e = 0; e < edits && l > 1; e++) {
            size_t at = next(&r) % l;
            switch (next(&r) % 3) {
            case 0: /* a byte changed */
                buf[at] = B[next(&r) % (sizeof B - 1)];
                break;
            case 1: /* a byte inserted */
                memmove(buf + at + 1, buf + at, l - at);
                buf[at] = B[next(&r) % (sizeof B - 1)];
                l++;
                break;
            default: /* a byte dropped */
                memmove(buf + at, buf + at + 1, l - at - 1);
                l--;
            }
        }
        char what[32];
        snprintf(what, sizeof what, "seed %u", seed);
        vouched += (size_t)check(buf, l, what);
    }
    /* both answers were given many times: the check saw the skim vouch and refuse */
    cr_assert_gt(vouched, 1000, "%zu", vouched);
    cr_assert_lt(vouched, 19000, "%zu", vouched);
    free(text);
}
