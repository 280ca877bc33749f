/* The device suite's checks: plain C (no cmocka, which GPU machines may lack). A failed
 * EXPECT counts in `failures`, prints the condition and the message, then EXPECT_NOTE(),
 * which a test defines before including this to add what it knows (tidal's last error). */
#ifndef TIDAL_TESTS_DEVICE_EXPECT_H
#define TIDAL_TESTS_DEVICE_EXPECT_H

#include <stdio.h>

#ifndef EXPECT_NOTE
#define EXPECT_NOTE() ((void)0)
#endif

static int failures = 0;

#define EXPECT(cond, ...)                                                                          \
    do {                                                                                           \
        if (!(cond)) {                                                                             \
            ++failures;                                                                            \
            fprintf(stderr, "FAIL %s:%d: %s: ", __FILE__, __LINE__, #cond);                         \
            fprintf(stderr, __VA_ARGS__);                                                          \
            EXPECT_NOTE();                                                                         \
            fprintf(stderr, "\n");                                                                 \
        }                                                                                          \
    } while (0)

#endif /* TIDAL_TESTS_DEVICE_EXPECT_H */
