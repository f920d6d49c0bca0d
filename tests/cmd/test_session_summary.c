/* `tunedeck sessions`' summary of a journal read in one pass (journal_scan) against every
 * event parsed and held first (journal_load, as it was read before): the same fields and the
 * same state, word for word, for a real journal (tests/fixtures/journals) and thousands of
 * damaged copies of it. */
#include <criterion/criterion.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "bench/args/journalwhole.h"
#include "cmd/session_summary.h"
#include "remote/session/session.h"
#include "tests/support/fixtures.h"

static unsigned next(unsigned *s)
{
    *s ^= *s << 13;
    *s ^= *s >> 17;
    *s ^= *s << 5;
    return *s;
}

static void write_file(const char *path, const char *text, size_t len)
{
    int fd = open(path, O_WRONLY | O_CREAT | O_TRUNC, 0600);
    cr_assert_geq(fd, 0, "%s", path);
    cr_assert_eq(write(fd, text, len), (ssize_t)len);
    close(fd);
}

static void assert_same(const char *path, const char *what)
{
    SessionSummary whole, one;
    session_summary_read_by(path, "id", &whole, journalwhole_read);
    session_summary_read(path, "id", &one);
    cr_assert_str_eq(one.state, whole.state, "%s", what);
    cr_assert_str_eq(one.created, whole.created, "%s", what);
    cr_assert_str_eq(one.target, whole.target, "%s", what);
    cr_assert_str_eq(one.optimizer, whole.optimizer, "%s", what);
    cr_assert_eq(one.suggested, whole.suggested, "%s", what);
    cr_assert_eq(one.finished, whole.finished, "%s", what);
    cr_assert_eq(one.ok, whole.ok, "%s", what);
    cr_assert_eq(one.problems, whole.problems, "%s: %d against %d", what, one.problems,
                 whole.problems);
    cr_assert_eq(one.budget, whole.budget, "%s", what);
    cr_assert_eq(one.resume_budget, whole.resume_budget, "%s: %ld against %ld", what,
                 one.resume_budget, whole.resume_budget);
    cr_assert(one.best_s == whole.best_s, "%s", what);
    cr_assert_eq(one.first_problem_line, whole.first_problem_line, "%s: line %zu against %zu", what,
                 one.first_problem_line, whole.first_problem_line);
    cr_assert_str_eq(one.first_problem, whole.first_problem, "%s", what);
    cr_assert_eq(one.problems != 0, one.first_problem[0] != 0,
                 "%s: %d problems, the first named \"%s\"", what, one.problems, one.first_problem);
}

/* A line of the journal, as [start, end) of its text. */
typedef struct {
    size_t start, end;
} Span;

/* Thousands of damaged copies of text (lines lost, repeated, swapped, cut, a byte or a key
 * changed, a torn tail), each written to path and read alike both ways. */
static void damaged_copies_read_alike(const char *text, const char *path)
{
    size_t len = strlen(text);
    Span lines[256];
    size_t n = 0;
    for (size_t p = 0; p < len && n < 256;) {
        const char *nl = memchr(text + p, '\n', len - p);
        size_t e = nl ? (size_t)(nl - text) + 1 : len;
        lines[n++] = (Span){p, e};
        p = e;
    }
    char *out = malloc(2 * len + 4096);
    cr_assert_not_null(out);
    for (unsigned seed = 1; seed <= 1500; seed++) {
        unsigned r = seed * 2654435761u | 1;
        size_t o = 0;
        int damages = 1 + (int)(next(&r) % 4);
        for (size_t i = 0; i < n; i++) {
            const char *l = text + lines[i].start;
            size_t ll = lines[i].end - lines[i].start;
            unsigned d = damages > 0 && next(&r) % 8 == 0 ? next(&r) % 8 : 99;
            if (d != 99)
                damages--;
            switch (d) {
            case 0: /* the line lost */
                break;
            case 1: /* written twice */
                memcpy(out + o, l, ll);
                o += ll;
                memcpy(out + o, l, ll);
                o += ll;
                break;
            case 2: { /* a byte changed */
                memcpy(out + o, l, ll);
                size_t at = next(&r) % (ll > 1 ? ll - 1 : 1);
                static const char B[] = "{}[]\",:0a\\ -.e\x01\xff";
                out[o + at] = B[next(&r) % (sizeof B - 1)];
                o += ll;
                break;
            }
            case 3: /* cut short, its newline kept */
                if (ll > 2) {
                    size_t keep = next(&r) % (ll - 1);
                    memcpy(out + o, l, keep);
                    o += keep;
                    out[o++] = '\n';
                }
                break;
            case 4: /* a key twice */
                if (ll > 2) {
                    memcpy(out + o, "{\"event\":\"x\",", 13);
                    memcpy(out + o + 13, l + 1, ll - 1);
                    o += ll + 12;
                }
                break;
            case 5: /* swapped with the next */
                if (i + 1 < n) {
                    const char *l2 = text + lines[i + 1].start;
                    size_t ll2 = lines[i + 1].end - lines[i + 1].start;
                    memcpy(out + o, l2, ll2);
                    o += ll2;
                }
                memcpy(out + o, l, ll);
                o += ll;
                i++;
                break;
            case 6: /* a blank line and one that is no object */
                memcpy(out + o, "  \n[1,2]\n", 9);
                o += 9;
                memcpy(out + o, l, ll);
                o += ll;
                break;
            case 7: { /* a field's name changed: the field is missing */
                memcpy(out + o, l, ll);
                static const char *K[] = {"\"trial\"", "\"budget\"", "\"status\"",
                                          "\"time_s\"", "\"event\"", "\"optimizer\""};
                char *t = memmem(out + o, ll, K[next(&r) % 6], 5);
                if (t)
                    t[2] = 'X';
                o += ll;
                break;
            }
            default:
                memcpy(out + o, l, ll);
                o += ll;
            }
        }
        if (next(&r) % 6 == 0 && o > 3) /* a torn last line */
            o -= 1 + next(&r) % (o / 50 + 1);
        write_file(path, out, o);
        char what[64];
        snprintf(what, sizeof what, "seed %u", seed);
        assert_same(path, what);
    }
    free(out);
}

/* A journal of `text` in a scratch folder of its own, read alike both ways as written; its
 * summary in *s. */
typedef struct {
    char dir[32], path[256];
} JournalFile;

static void journal_write(JournalFile *j, const char *text, SessionSummary *s)
{
    snprintf(j->dir, sizeof j->dir, "/tmp/tunedeck-summary-XXXXXX");
    cr_assert_not_null(mkdtemp(j->dir));
    snprintf(j->path, sizeof j->path, "%s/s.jsonl", j->dir);
    write_file(j->path, text, strlen(text));
    assert_same(j->path, "the journal as written");
    session_summary_read(j->path, "id", s);
}

static void journal_remove(JournalFile *j)
{
    unlink(j->path);
    rmdir(j->dir);
}

Test(session_summary, one_pass_reads_every_journal_as_the_whole_parse_did)
{
    char *text = fixture_read("journals/a-alexnet-resumed.jsonl");
    JournalFile j;
    SessionSummary s;
    journal_write(&j, text, &s);
    cr_assert_str_eq(s.state, "ended");
    cr_assert_eq(s.finished, 10);
    cr_assert_eq(s.budget, 10);
    cr_assert_eq(s.problems, 0);
    damaged_copies_read_alike(text, j.path);
    free(text);
    journal_remove(&j);
}

/* The fixture has no override: its trials go on with two overrides queued (budget 11, then
 * 12) and a trial 11 that took the first and never started. The resume budget (13: the
 * unstarted override's trial raised for, the second's kept) reads the override queue's
 * lines, `override` and `interrupted` among the skimmed fields: the skim and the whole parse
 * must agree on it too, damaged or not. */
Test(session_summary, one_pass_reads_the_override_queue_as_the_whole_parse_did)
{
    char *fx = fixture_read("journals/a-alexnet-resumed.jsonl");
    const char *sug = strstr(fx, "{\"event\":\"suggested\",\"trial\":10,\"overridden\":false,");
    cr_assert_not_null(sug);
    const char *sched = strstr(sug, "\"schedule\":");
    const char *eol = strchr(sug, '\n');
    cr_assert(sched && eol && sched < eol && eol[-1] == '}');
    int slen = (int)(eol - 1 - sched); /* "schedule":{...}, without the line's brace */
    const char *rest = sug + strlen("{\"event\":\"suggested\",\"trial\":10,\"overridden\":false");
    size_t cap = strlen(fx) + 4 * (size_t)(eol - sug) + 1024;
    char *text = malloc(cap);
    cr_assert_not_null(text);
    snprintf(text, cap,
             "%s{\"event\":\"override_queued\",\"override\":1,\"wall_s\":1795791330,%.*s,"
             "\"budget\":11,\"raised\":1}\n"
             "{\"event\":\"override_queued\",\"override\":2,\"wall_s\":1795791331,%.*s,"
             "\"budget\":12,\"raised\":2}\n"
             "{\"event\":\"suggested\",\"trial\":11,\"overridden\":true,\"override\":1%.*s\n",
             fx, slen, sched, slen, sched, (int)(eol - rest), rest);
    JournalFile j;
    SessionSummary s;
    journal_write(&j, text, &s);
    cr_assert_str_eq(s.state, "interrupted (resumable)");
    cr_assert_eq(s.budget, 12);
    cr_assert_eq(s.resume_budget, 13, "%ld", s.resume_budget);
    cr_assert_eq(s.problems, 0);
    damaged_copies_read_alike(text, j.path);
    free(text);
    free(fx);
    journal_remove(&j);
}

/* A journal that cannot be read says so alike both ways, and has no resume budget (`sessions
 * --json` writes null, its column the journal's budget). */
Test(session_summary, an_unreadable_journal_is_said_alike)
{
    assert_same("/nonexistent/s.jsonl", "missing");
    SessionSummary s;
    session_summary_read("/nonexistent/s.jsonl", "x", &s);
    cr_assert(strncmp(s.state, "unreadable: ", 12) == 0, "%s", s.state);
    cr_assert_eq(s.resume_budget, 0, "%ld", s.resume_budget);
}

/* The cluster a resume reads the trials on is built from the session line, as the resume
 * builds it: a simulator that does not exist (an edited line) is a journal the resume refuses,
 * and `sessions` says so in the resume's words, where it said "interrupted (resumable)". */
Test(session_summary, a_journal_whose_cluster_cannot_be_built_is_not_resumable)
{
    char *text = fixture_read("journals/a-alexnet-resumed.jsonl");
    char *sim = strstr(text, "\"sim\":\"A:alexnet\"");
    cr_assert_not_null(sim);
    sim[7] = 'Q';
    char *ended = strstr(text, "{\"event\":\"ended\"");
    cr_assert_not_null(ended);
    *ended = 0; /* interrupted: a resume would go on */
    char dir[] = "/tmp/tunedeck-summary-XXXXXX";
    cr_assert_not_null(mkdtemp(dir));
    char path[256];
    snprintf(path, sizeof path, "%s/s.jsonl", dir);
    write_file(path, text, strlen(text));
    assert_same(path, "a simulator that does not exist");
    SessionSummary s;
    session_summary_read(path, "id", &s);
    Session *again = session_new(1, dir);
    SessionSpec rs = {.budget = 0};
    Error err;
    cr_assert_eq(session_resume(again, path, &rs, 0, &err), 0, "%s", err.msg);
    cr_assert_lt(session_open(again, &rs, &err), 0);
    session_free(again);
    char want[ERROR_MSG_MAX + 32];
    snprintf(want, sizeof want, "not resumable: %s", err.msg);
    cr_assert_str_eq(s.state, want);
    cr_assert(strstr(s.state, "session: field 'sim'"), "%s", s.state);
    cr_assert_eq(s.resume_budget, 0, "%ld", s.resume_budget);
    free(text);
    char cmd[300];
    snprintf(cmd, sizeof cmd, "rm -rf '%s'", dir);
    cr_assert_eq(system(cmd), 0);
}

/* The Slurm allocation's release is journaled at the session's close, after its `ended`
 * line: the session still reads ended (it read "interrupted (resumable)"). */
Test(session_summary, the_allocation_released_after_ended_keeps_it_ended)
{
    char *text = fixture_read("journals/a-alexnet-resumed.jsonl");
    const char *more = "{\"event\":\"slurm_allocation_released\",\"job\":\"57\","
                       "\"result\":\"released\",\"wall_s\":1}\n";
    char *with = malloc(strlen(text) + strlen(more) + 1);
    cr_assert_not_null(with);
    strcpy(with, text);
    strcat(with, more);
    JournalFile j;
    SessionSummary s;
    journal_write(&j, with, &s);
    cr_assert_str_eq(s.state, "ended");
    assert_same(j.path, "the release after ended");
    free(with);
    free(text);
    journal_remove(&j);
}

/* Readers ignore events they do not know (docs/journal.md): one after `ended` (a later
 * tunedeck's) left a finished session read as "interrupted (resumable)". One the session ran
 * again with after it (`resumed`) is not ended. */
Test(session_summary, an_unknown_event_after_ended_keeps_it_ended)
{
    char *text = fixture_read("journals/a-alexnet-resumed.jsonl");
    const char *more[] = {"{\"event\":\"mystery\",\"x\":1}\n",
                          "{\"event\":\"resumed\",\"wall_s\":2,\"budget\":9}\n"};
    const char *want[] = {"ended", "interrupted (resumable)"};
    for (size_t i = 0; i < 2; i++) {
        char *with = malloc(strlen(text) + strlen(more[0]) + strlen(more[1]) + 1);
        cr_assert_not_null(with);
        strcpy(with, text);
        for (size_t k = 0; k <= i; k++)
            strcat(with, more[k]);
        JournalFile j;
        SessionSummary s;
        journal_write(&j, with, &s);
        cr_assert_str_eq(s.state, want[i], "%s after %s", s.state, more[i]);
        assert_same(j.path, "an unknown event after ended");
        free(with);
        journal_remove(&j);
    }
    free(text);
}

/* A finished line naming a machine the cluster does not have in "unreachable" is skipped by a
 * resume (its trial is then interrupted); `sessions` read it as finished when the skim passed
 * the field by, unread. */
Test(session_summary, a_finished_line_with_a_bad_unreachable_machine_is_read_as_a_resume_reads_it)
{
    char *text = fixture_read("journals/a-alexnet-resumed.jsonl");
    const char *cut = strstr(text, "\"event\":\"finished\",\"trial\":1,");
    cr_assert_not_null(cut);
    const char *end = strchr(cut, '\n');
    cr_assert_not_null(end);
    char *with = malloc(strlen(text) + 64);
    cr_assert_not_null(with);
    size_t head = (size_t)(end - 1 - text); /* before the line's closing brace */
    memcpy(with, text, head);
    strcpy(with + head, ",\"unreachable\":[\"ghost\"]");
    strcat(with, end - 1);
    JournalFile j;
    SessionSummary s;
    journal_write(&j, with, &s);
    free(with);
    journal_remove(&j);
    free(text);
}

/* Regression: `sessions` said only "has skipped lines", and the one way to learn which was a
 * resume, which writes to the journal. The first skipped line is named in the resume's words,
 * whichever reader skipped it: a suggested line with a field of the wrong type, before a
 * later line that is no JSON. */
Test(session_summary, the_first_skipped_line_is_named_with_why)
{
    char *fx = fixture_read("journals/a-alexnet-resumed.jsonl");
    char *sug = strstr(fx, "{\"event\":\"suggested\",\"trial\":2,");
    cr_assert_not_null(sug);
    char *was = strstr(sug, "\"overridden\":false");
    cr_assert_not_null(was);
    memcpy(was, "\"overridden\":\"nop\"", strlen("\"overridden\":false")); /* a string */
    size_t line = 1;
    for (const char *c = fx; c < sug; c++)
        line += *c == '\n';
    char *ended = strstr(fx, "{\"event\":\"ended\"");
    cr_assert_not_null(ended);
    memcpy(ended, "garbage", 7);
    JournalFile j;
    SessionSummary s;
    journal_write(&j, fx, &s);
    char want[512];
    snprintf(want, sizeof want, "%s:%zu: suggested: field 'overridden': expected ", j.path, line);
    cr_assert_eq(s.first_problem_line, line, "%zu", s.first_problem_line);
    cr_assert(strncmp(s.first_problem, want, strlen(want)) == 0, "%s", s.first_problem);
    free(fx);
    journal_remove(&j);
}
