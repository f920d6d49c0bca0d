#ifndef TUNEDECK_TESTS_SUPPORT_TIMEOUT_H
#define TUNEDECK_TESTS_SUPPORT_TIMEOUT_H

/* The one time limit of every unit test or suite that sets one. Criterion 2.4.1's BoxFort
 * keeps the running tests' limits in a list sorted by deadline, and its insert
 * (timeout-posix.c, bxfi_push_timeout) links the new limit in without linking the rest of
 * the list behind it: under --jobs 2, a test with a shorter limit started while one with a
 * longer limit runs drops the longer one, so that test would never be stopped, and
 * LeakSanitizer reports the dropped request's 48 bytes when the runner ends. With one value
 * for all, each new deadline is the latest and goes at the list's tail. */
#define TEST_TIMEOUT_S 120

#endif
