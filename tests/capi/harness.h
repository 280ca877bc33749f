/*
 * What every black-box test of the C ABI needs beyond cmocka: a clean environment, contexts
 * built from TOML text with the test folders substituted in, and assertions on statuses and
 * messages that print tidal_last_error() when they fail.
 *
 * Include order in a test: harness.h first (it pulls cmocka.h in the order cmocka needs).
 */
#ifndef TIDAL_TESTS_CAPI_HARNESS_H
#define TIDAL_TESTS_CAPI_HARNESS_H

#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>

#include <cmocka.h>

#include "tidal/tidal.h"

/* Removes every TIDAL_* variable except TIDAL_TEST_* and TIDAL_LOG_LEVEL, so a developer's
 * own TIDAL_CONFIG or TIDAL_RUNTIME cannot change what a test sees. Call first in main(). */
void harness_isolate_environment(void);

/* The value of a TIDAL_TEST_* variable meson sets; fails the test when it is missing
 * (the test was started outside `meson test`). */
const char *harness_required_env(const char *name);

/* printf into a new heap string; the caller frees it. Never NULL (aborts on ENOMEM). */
char *harness_format(const char *format, ...)
#if defined(__GNUC__)
    __attribute__((format(printf, 1, 2)))
#endif
    ;

/* `path` as a TOML basic string, quotes included; the caller frees it. */
char *harness_toml_string(const char *path);

/* A context from TOML text; fails the test (showing tidal_last_error) when creation fails. */
tidal_context *harness_context(const char *toml);

/* The same with one printf-style substitution step, for configs that name test folders. */
tidal_context *harness_context_format(const char *format, ...)
#if defined(__GNUC__)
    __attribute__((format(printf, 1, 2)))
#endif
    ;

/* Context creation from TOML text must fail with `expected` and leave the context NULL; fails
 * the test (showing the text and the message) otherwise. Returns a copy of tidal_last_error(),
 * which the next tidal call would replace; the caller frees it. */
char *harness_context_fails(const char *toml, tidal_status expected);

/* A fresh private folder under $TMPDIR (or /tmp); the caller frees the string. */
char *harness_temp_dir(void);
/* Writes `contents` to dir/name; returns the new file's path (caller frees). */
char *harness_write_file(const char *dir, const char *name, const char *contents);
/* Removes a folder and the plain files and links directly inside it. */
void harness_remove_dir(const char *dir);

/* 1 when `text` contains `needle`; `ignore_case` compares ASCII letters without case. */
int harness_contains(const char *text, const char *needle, int ignore_case);
/* 1 when `text` contains `number` as a whole decimal number (not part of a longer one). */
int harness_contains_number(const char *text, long number);

/* tidal_alloc of `kind` with `hints` and the rest of the descriptor at its defaults. Fails the
 * test unless it returns TIDAL_OK and a pointer, so a test never goes on to use NULL. */
void *harness_alloc(tidal_context *ctx, tidal_kind kind, size_t size, uint32_t hints);

/* One tidal_check_run with the fields the simulated-device tests set (NULL for an operand or
 * stream they do not use). *result, when asked for, gets the kernel's result whatever the
 * status, so a test can look at both. */
tidal_status harness_check(tidal_context *ctx, tidal_check_kind kind, void *target, const void *source,
                           size_t size, uint64_t seed, void *stream, uint64_t *result);

/* tidal_declare of one range [p, p + size) for device 0 with `mode`. */
tidal_status harness_declare(tidal_context *ctx, void *stream, void *p, size_t size, uint32_t mode, uint32_t flags);

/* tidal_range_info.last_prefetch_location of [ptr, ptr + size); fails the test when the query fails. */
int32_t harness_prefetch_location(tidal_context *ctx, void *ptr, size_t size);

/* xorshift32: a thread's own pseudo-random stream, no shared state. */
unsigned harness_next_random(unsigned *state);

/* Fills `size` bytes with a pattern derived from `seed`; 1 when they still hold it. */
void harness_fill(void *ptr, size_t size, unsigned seed);
int harness_holds(const void *ptr, size_t size, unsigned seed);

/* `size` writable bytes that end where an inaccessible page begins: a test hands tidal an
 * array there and a claimed count larger than the array, and any read past it crashes. Free
 * with harness_free_fenced. */
void *harness_alloc_fenced(size_t size);
void harness_free_fenced(void *ptr, size_t size);

/* The default simulated context most tests use: one simulated H200. */
#define HARNESS_SIM_CONFIG "runtime = \"sim\"\n"

/* cmocka setup/teardown storing a HARNESS_SIM_CONFIG context in *state. */
int harness_setup_sim(void **state);
int harness_teardown_context(void **state);
/* A cmocka test entry whose *state is a fresh HARNESS_SIM_CONFIG context, destroyed after it. */
#define HARNESS_SIM_TEST(fn) cmocka_unit_test_setup_teardown(fn, harness_setup_sim, harness_teardown_context)

void harness_fail_status(const char *file, int line, const char *call, tidal_status got,
                         tidal_status expected, const char *last_error);
void harness_fail_contains(const char *file, int line, const char *what, const char *text,
                           const char *needle);

/* Asserts a call's status; on a mismatch prints both status names and tidal_last_error(). */
#define assert_status(call, expected)                                                          \
    do {                                                                                       \
        tidal_status harness_got_ = (call);                                                    \
        tidal_status harness_expected_ = (expected);                                           \
        if (harness_got_ != harness_expected_)                                                 \
            harness_fail_status(__FILE__, __LINE__, #call, harness_got_, harness_expected_,    \
                                tidal_last_error());                                           \
    } while (0)

#define assert_ok(call) assert_status((call), TIDAL_OK)

/* Asserts that a string contains a fragment (case-sensitive). */
#define assert_contains(text, needle)                                                          \
    do {                                                                                       \
        const char *harness_text_ = (text);                                                    \
        const char *harness_needle_ = (needle);                                                \
        if (!harness_contains(harness_text_, harness_needle_, 0))                              \
            harness_fail_contains(__FILE__, __LINE__, #text, harness_text_, harness_needle_);  \
    } while (0)

/* Asserts that tidal_last_error() contains a fragment. */
#define assert_last_error_contains(needle) assert_contains(tidal_last_error(), (needle))

#endif /* TIDAL_TESTS_CAPI_HARNESS_H */
